//! The editor's pure text work: lines as `cat -n` counts them, numbered listings, and the
//! `str_replace` and `insert` edits with their snippets.

use crate::strings;

/// A text cut into lines the way `cat -n` numbers them: a final newline ends the last line,
/// it does not start an empty one (`"a\nb\n"` has 2 lines, `""` has none).
///
/// Ours: the reference splits on `"\n"` and so counts a phantom empty line after a final
/// newline, which shows up in `view`, in `view_range` bounds and in `insert`.
#[derive(Debug)]
pub(crate) struct Lines<'a> {
    text: &'a str,
    /// Byte offset of each line's first character.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut starts = Vec::new();
        if !text.is_empty() {
            starts.push(0);
            starts.extend(
                text.match_indices('\n')
                    .map(|(i, _)| i + 1)
                    .filter(|start| *start < text.len()),
            );
        }
        Self { text, starts }
    }

    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// Where line `idx` (0-based) starts; the text's length for `idx == len()`.
    pub(crate) fn offset(&self, idx: usize) -> usize {
        self.starts.get(idx).copied().unwrap_or(self.text.len())
    }

    /// Lines `first..end` (0-based, end exclusive), each without its newline.
    pub(crate) fn slice(&self, first: usize, end: usize) -> Vec<&'a str> {
        (first..end.min(self.len()))
            .map(|idx| {
                let line = &self.text[self.offset(idx)..self.offset(idx + 1)];
                line.strip_suffix('\n').unwrap_or(line)
            })
            .collect()
    }
}

/// `header` + each line as `cat -n` prints it (`{n:>6}\t{line}`) + a final newline.
/// Reference (`_make_output`), without its tab expansion: the model must see the file's real
/// characters, or the `old_str` it copies from a view will not match.
pub(crate) fn cat_n(lines: &[&str], descriptor: &str, first_line_no: usize) -> String {
    let mut out = strings::cat_n_header(descriptor);
    let numbered: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| format!("{:6}\t{line}", i + first_line_no))
        .collect();
    out.push_str(&numbered.join("\n"));
    out.push('\n');
    out
}

/// The first `limit` characters of `text` and whether anything was cut.
pub(crate) fn truncate_chars(text: &str, limit: usize) -> (&str, bool) {
    match text.char_indices().nth(limit) {
        Some((end, _)) => (&text[..end], true),
        None => (text, false),
    }
}

/// Why `old_str` cannot be replaced.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ReplaceRefusal {
    Empty,
    NoMatch,
    /// The 1-based lines where occurrences start.
    Several(Vec<usize>),
}

/// A `str_replace` done in memory: the new text and the answer's snippet.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Edit {
    pub(crate) text: String,
    /// The snippet's lines and the number of its first line.
    pub(crate) snippet: (Vec<String>, usize),
}

/// Replaces the one occurrence of `old` in `content` with `new`.
///
/// Occurrences are counted overlapping (`"aa"` occurs twice in `"aaa"`): the reference counts
/// them Python's way, without overlaps, and would then replace an ambiguous one.
pub(crate) fn replace_once(content: &str, old: &str, new: &str) -> Result<Edit, ReplaceRefusal> {
    let Some(first_char) = old.chars().next() else {
        return Err(ReplaceRefusal::Empty);
    };
    let mut starts = Vec::new();
    let mut from = 0;
    while let Some(i) = content[from..].find(old) {
        starts.push(from + i);
        from += i + first_char.len_utf8();
    }
    let at = match starts.as_slice() {
        [] => return Err(ReplaceRefusal::NoMatch),
        [at] => *at,
        several => {
            let mut lines: Vec<usize> = several
                .iter()
                .map(|at| line_index(content, *at) + 1)
                .collect();
            lines.dedup();
            return Err(ReplaceRefusal::Several(lines));
        }
    };
    let mut text = String::with_capacity(content.len() - old.len() + new.len());
    text.push_str(&content[..at]);
    text.push_str(new);
    text.push_str(&content[at + old.len()..]);
    // Reference: from 4 lines before the edit to 4 lines after its last new line.
    let edit_line = line_index(content, at);
    let first = edit_line.saturating_sub(strings::SNIPPET_LINES);
    let end = edit_line + strings::SNIPPET_LINES + new.matches('\n').count() + 1;
    let snippet = owned(Lines::new(&text).slice(first, end));
    Ok(Edit {
        text,
        snippet: (snippet, first + 1),
    })
}

/// Inserts `insert` after line `after` (0 = at the top) of `content`; `after` must be within
/// `0..=Lines::new(content).len()`.
///
/// The text goes in as whole lines: when it lacks a final newline one is added, so the line
/// that follows stays on its own line, and a file that ended with a newline still does. Ours:
/// the reference splits both texts on `"\n"`, so an `insert_text` ending in a newline (as models
/// send it) adds a stray empty line.
pub(crate) fn insert_after(content: &str, after: usize, insert: &str) -> Edit {
    let lines = Lines::new(content);
    let n_before = lines.len();
    let (head, rest) = content.split_at(lines.offset(after));
    let mut text = String::with_capacity(content.len() + insert.len() + 2);
    text.push_str(head);
    if !head.is_empty() && !head.ends_with('\n') {
        // Inserting after the last line of a file without a final newline.
        text.push('\n');
    }
    text.push_str(insert);
    if !insert.ends_with('\n') && (!rest.is_empty() || content.ends_with('\n')) {
        text.push('\n');
    }
    text.push_str(rest);
    let new_lines = Lines::new(&text);
    let n_inserted = new_lines.len().saturating_sub(n_before);
    let first = after.saturating_sub(strings::SNIPPET_LINES);
    let end = after + n_inserted + strings::SNIPPET_LINES;
    let snippet = owned(new_lines.slice(first, end));
    Edit {
        text,
        snippet: (snippet, first + 1),
    }
}

/// The 0-based line holding byte `at`.
fn line_index(content: &str, at: usize) -> usize {
    content[..at].matches('\n').count()
}

fn owned(lines: Vec<&str>) -> Vec<String> {
    lines.into_iter().map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_as_cat_n_counts_them() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("\n", &[""]),
            ("a", &["a"]),
            ("a\n", &["a"]),
            ("a\nb", &["a", "b"]),
            ("a\nb\n", &["a", "b"]),
            ("a\n\nb\n\n", &["a", "", "b", ""]),
            ("é\r\nx", &["é\r", "x"]),
        ];
        for (text, want) in cases {
            let lines = Lines::new(text);
            assert_eq!(lines.len(), want.len(), "{text:?}");
            assert_eq!(lines.slice(0, usize::MAX), *want, "{text:?}");
        }
    }

    #[test]
    fn numbered_listing() {
        assert_eq!(
            cat_n(&["fn main() {", "\tx();", "}"], "/a.rs", 9),
            "Here's the result of running `cat -n` on /a.rs:\n     9\tfn main() {\n    10\t\tx();\n    11\t}\n"
        );
        assert_eq!(
            cat_n(&[], "/empty", 1),
            "Here's the result of running `cat -n` on /empty:\n\n"
        );
    }

    #[test]
    fn truncation_on_char_boundary() {
        assert_eq!(truncate_chars("héllo", 2), ("hé", true));
        assert_eq!(truncate_chars("héllo", 5), ("héllo", false));
        assert_eq!(truncate_chars("", 0), ("", false));
    }

    #[test]
    fn replace_refusals() {
        let cases: &[(&str, &str, ReplaceRefusal)] = &[
            ("abc", "", ReplaceRefusal::Empty),
            ("abc", "x", ReplaceRefusal::NoMatch),
            (
                "x = 1\ny = 2\nx = 1\n",
                "x = 1",
                ReplaceRefusal::Several(vec![1, 3]),
            ),
            ("aaa", "aa", ReplaceRefusal::Several(vec![1])),
            ("a b a\n", "a", ReplaceRefusal::Several(vec![1])),
            (
                "f()\n{\n}\nf()\n{\n",
                "f()\n{",
                ReplaceRefusal::Several(vec![1, 4]),
            ),
        ];
        for (content, old, want) in cases {
            assert_eq!(
                replace_once(content, old, "new").unwrap_err(),
                *want,
                "{old:?}"
            );
        }
    }

    #[test]
    fn replace_and_snippet() {
        let content: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let edit = replace_once(&content, "line 10\n", "ten\nTEN\n").unwrap();
        assert!(edit.text.contains("line 9\nten\nTEN\nline 11\n"));
        assert_eq!(edit.text.matches('\n').count(), 21);
        // As the reference: from 4 lines before the edit to 4 + (newlines in new_str) lines
        // after its first line, inclusive: "line 6" ..= "line 15" around the 2 new lines.
        let (snippet, first) = edit.snippet;
        assert_eq!(first, 6);
        assert_eq!(snippet.first().map(String::as_str), Some("line 6"));
        assert_eq!(snippet.last().map(String::as_str), Some("line 15"));
        assert_eq!(snippet.len(), 11);
    }

    #[test]
    fn replace_at_top_and_with_nothing() {
        let edit = replace_once("a\nb\n", "a\n", "").unwrap();
        assert_eq!(edit.text, "b\n");
        assert_eq!(edit.snippet, (vec!["b".to_owned()], 1));
    }

    #[test]
    fn insert_positions() {
        // (content, after, insert) -> new content
        let cases = [
            ("a\nb\n", 0, "X", "X\na\nb\n"),
            ("a\nb\n", 1, "X", "a\nX\nb\n"),
            ("a\nb\n", 2, "X", "a\nb\nX\n"),
            ("a\nb\n", 2, "X\n", "a\nb\nX\n"),
            ("a\nb\n", 1, "X\nY\n", "a\nX\nY\nb\n"),
            ("a\nb", 2, "X", "a\nb\nX"),
            ("a\nb", 1, "X", "a\nX\nb"),
            ("", 0, "X", "X"),
            ("", 0, "X\n", "X\n"),
            ("a\n", 0, "", "\na\n"),
        ];
        for (content, after, insert, want) in cases {
            assert_eq!(
                insert_after(content, after, insert).text,
                want,
                "{content:?} after {after} insert {insert:?}"
            );
        }
    }

    #[test]
    fn insert_snippet() {
        let content: String = (1..=10).map(|i| format!("{i}\n")).collect();
        let edit = insert_after(&content, 6, "new\n");
        let (snippet, first) = edit.snippet;
        assert_eq!(first, 3);
        let want: Vec<String> = ["3", "4", "5", "6", "new", "7", "8", "9", "10"]
            .map(String::from)
            .to_vec();
        assert_eq!(snippet, want);
    }
}
