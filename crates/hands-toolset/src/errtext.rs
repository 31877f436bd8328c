//! Every error text a model reads, in one place: model-supplied names echoed on one line and cut
//! short, values quoted in a bounded, escaped form, and each error text held to one line (for
//! toolset errors) and to [`MAX_ERROR_CHARS`], so no toolset answers in a shape the API or the
//! model cannot take. Every toolset builds its error texts through these functions.
//!
//! The rules follow the Anthropic SDK's `_sanitize.py` (`one_line`, `quoted_name`,
//! `error_text`): line breaks, control and bidi characters fold to a space; a name is cut to
//! [`MAX_NAME_CHARS`]; an error text to [`MAX_ERROR_CHARS`]. hands marks a cut with `…` where the
//! SDK cuts silently, and never sends an empty error text (the API rejects an `is_error` result
//! with empty content).

use serde_json::Value;

/// Most characters of a model-supplied name (a member, field or tool name) echoed in a text.
///
/// The Anthropic SDK's `LOG_MAX` (`quoted_name`).
pub const MAX_NAME_CHARS: usize = 200;

/// Most characters of any error text a result carries.
///
/// The Anthropic SDK's `FIELD_MAX`: "the most of an exception's text an `is_error` result
/// includes".
pub const MAX_ERROR_CHARS: usize = 4096;

/// The error text sent when a failure came with none: an `is_error` result may not be empty.
///
/// The Anthropic SDK's placeholder (`toolset_result_block`).
pub const EMPTY_ERROR: &str = "The tool call failed with an empty error message.";

/// How much of an offending value an error quotes.
pub const SHOWN_CHARS: usize = 60;

/// Whether a character would break or reorder the one line it is written on: C0 and C1
/// controls, DEL, the line and paragraph separators, and the bidi marks, embeddings, overrides
/// and isolates.
///
/// The Anthropic SDK's `LINE_UNSAFE`.
pub fn is_line_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{2028}'
        | '\u{2029}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// `text` on one line: every run of line-unsafe characters ([`is_line_unsafe`]) becomes one
/// space, and the ends are trimmed.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_run = false;
    for c in text.chars() {
        if is_line_unsafe(c) {
            if !in_run {
                out.push(' ');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out.trim().to_owned()
}

/// The first `max` characters of `text`, the last of them `…` when it was cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some(_) => {
            let keep = max.saturating_sub(1);
            let end = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
            format!("{}…", &text[..end])
        }
    }
}

/// A model-supplied name as it is echoed inside backticks: one line, backticks turned into `'`
/// (so it cannot close the quote and pose as the text around it), runs of spaces as one, at
/// most [`MAX_NAME_CHARS`] characters.
pub fn name(text: &str) -> String {
    let line = one_line(&text.replace('`', "'"));
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if !(c == ' ' && out.ends_with(' ')) {
            out.push(c);
        }
    }
    cut(&out, MAX_NAME_CHARS)
}

/// An error text as a result carries it: at most [`MAX_ERROR_CHARS`] characters (`…` marks a
/// cut), and never empty. Line breaks are kept (a shell's error output is several lines); a
/// toolset's own error goes through [`error_line`] instead.
pub fn error_text(text: &str) -> String {
    if text.trim().is_empty() {
        return EMPTY_ERROR.to_owned();
    }
    cut(text, MAX_ERROR_CHARS)
}

/// A toolset's error text: on one line ([`one_line`]), every quoted part (`"…"` or `` `…` ``)
/// cut to [`MAX_NAME_CHARS`], then bounded as [`error_text`]. Names echoed from the model are
/// quoted in every error of the toolsets and of `hands-core` (`{:?}` or backticks), so none
/// is longer than [`MAX_NAME_CHARS`] however it reached the text.
pub fn error_line(text: &str) -> String {
    error_text(&cap_quoted(&one_line(text), MAX_NAME_CHARS))
}

/// `text` with the inside of each closed `"…"` (with `\"` escapes, as `{:?}` and JSON write
/// it) or `` `…` `` part cut to `max` characters. An unclosed quote leaves the rest as it is.
fn cap_quoted(text: &str, max: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let quote = chars[i];
        if quote != '"' && quote != '`' {
            out.push(quote);
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < chars.len() && chars[j] != quote {
            j += if quote == '"' && chars[j] == '\\' {
                2
            } else {
                1
            };
        }
        if j >= chars.len() {
            // No closing quote after this one: nothing later can be a quoted part either.
            out.extend(&chars[i..]);
            break;
        }
        let inner: String = chars[i + 1..j].iter().collect();
        out.push(quote);
        out.push_str(&cut(&inner, max));
        out.push(quote);
        i = j + 1;
    }
    out
}

/// A short rendering of a JSON value for an error message: at most `max_chars` characters,
/// with `…` when cut (inside the closing quote when a string was cut), and every line-unsafe
/// character escaped (`\u202e`), including those JSON leaves as they are.
pub fn show(value: &Value, max_chars: usize) -> String {
    let text = json_line(value);
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => {
            let close = if value.is_string() { "\"" } else { "" };
            format!("{}…{close}", &text[..end])
        }
        None => text,
    }
}

/// A JSON value as one line of JSON text with every line-unsafe character escaped (`\u202e`),
/// including those JSON allows raw (DEL, C1, the separators and bidi marks): the same value to
/// a parser, and nothing in it can break or reorder the line a model reads.
pub fn json_line(value: &Value) -> String {
    let mut text = String::new();
    for c in value.to_string().chars() {
        if is_line_unsafe(c) {
            text.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            text.push(c);
        }
    }
    text
}

/// The fields a member takes, as an error lists them: `` `x`, `y` `` or `no fields (send {})`.
pub(crate) fn allowed_list(allowed: &[&str]) -> String {
    if allowed.is_empty() {
        "no fields (send {})".to_owned()
    } else {
        allowed
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every line-unsafe character the SDK folds, and a few it keeps.
    const UNSAFE: &[char] = &[
        '\n', '\r', '\t', '\0', '\u{1b}', '\u{7f}', '\u{85}', '\u{9f}', '\u{61c}', '\u{200e}',
        '\u{200f}', '\u{2028}', '\u{2029}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}',
    ];

    #[test]
    fn line_unsafe_characters_are_the_sdks() {
        for c in UNSAFE {
            assert!(is_line_unsafe(*c), "{c:?}");
        }
        for c in ['a', ' ', 'é', '日', '\u{200b}', '\u{a0}', '…', '`'] {
            assert!(!is_line_unsafe(c), "{c:?}");
        }
    }

    #[test]
    fn one_line_folds_runs_and_trims() {
        assert_eq!(one_line("\n a\r\n\u{202e}b \t"), "a b");
        assert_eq!(one_line("plain"), "plain");
        assert_eq!(one_line("\u{2066}\u{2069}"), "");
    }

    #[test]
    fn names_are_one_line_unquotable_and_short() {
        let hostile = format!("evil`\n\u{202e}name{}", "x".repeat(5000));
        let shown = name(&hostile);
        assert_eq!(shown.chars().count(), MAX_NAME_CHARS);
        assert!(shown.starts_with("evil' name"));
        assert!(shown.ends_with('…'));
        assert!(!shown.chars().any(is_line_unsafe));
        assert!(!shown.contains('`'));
        assert_eq!(name("a    b"), "a b");
        // Exactly the limit is not cut.
        let exact = "n".repeat(MAX_NAME_CHARS);
        assert_eq!(name(&exact), exact);
    }

    #[test]
    fn error_texts_are_bounded_and_never_empty() {
        assert_eq!(error_text(""), EMPTY_ERROR);
        assert_eq!(error_text(" \n"), EMPTY_ERROR);
        let long = "e".repeat(10_000);
        let bounded = error_text(&long);
        assert_eq!(bounded.chars().count(), MAX_ERROR_CHARS);
        assert!(bounded.ends_with('…'));
        // Multi-line output (a shell's) keeps its lines.
        assert_eq!(error_text("a\nb"), "a\nb");
        let exact = "é".repeat(MAX_ERROR_CHARS);
        assert_eq!(error_text(&exact), exact);
    }

    #[test]
    fn error_lines_cap_every_quoted_name() {
        let long = "k".repeat(5000);
        // As hands-core's `{:?}` and the toolsets' backticks write a name.
        let text = format!("unknown key name {long:?}: use `{long}`\nor \"ok\"");
        let line = error_line(&text);
        assert!(!line.chars().any(is_line_unsafe), "{line}");
        assert!(line.chars().count() < 2 * MAX_NAME_CHARS + 60, "{line}");
        assert!(line.ends_with("or \"ok\""), "{line}");
        let quoted: Vec<&str> = line.split(['"', '`']).collect();
        assert_eq!(quoted[1].chars().count(), MAX_NAME_CHARS);
        // Escaped quotes inside a `{:?}` name do not end it early.
        let escaped = format!("{:?}", format!("a\"{}", "b".repeat(400)));
        let line = error_line(&format!("bad {escaped} here"));
        assert!(line.ends_with("…\" here"), "{line}");
        // An unclosed quote leaves the rest alone, and the whole stays bounded.
        let open = format!("\"{}", "z".repeat(9000));
        assert_eq!(error_line(&open).chars().count(), MAX_ERROR_CHARS);
        assert_eq!(error_line(""), EMPTY_ERROR);
    }

    #[test]
    fn show_cuts_long_values_on_a_character_boundary() {
        assert_eq!(show(&json!(12), SHOWN_CHARS), "12");
        let long = json!("é".repeat(100));
        let shown = show(&long, SHOWN_CHARS);
        assert_eq!(shown.chars().count(), SHOWN_CHARS + 2);
        assert!(shown.starts_with("\"éé") && shown.ends_with("…\""));
        // Exactly the limit is not cut.
        let exact = json!("a".repeat(SHOWN_CHARS - 2));
        assert_eq!(show(&exact, SHOWN_CHARS), exact.to_string());
        // What JSON leaves raw is escaped too.
        assert_eq!(
            show(&json!("a\u{202e}b\u{85}\n"), SHOWN_CHARS),
            "\"a\\u202eb\\u0085\\n\""
        );
    }

    #[test]
    fn json_lines_parse_back_to_the_same_value() {
        let value = json!({"title": "a\u{202e}b\u{7f}\u{2028}c\n", "n": 1});
        let line = json_line(&value);
        assert!(!line.chars().any(is_line_unsafe), "{line}");
        assert!(line.contains("\\u202e") && line.contains("\\u007f"));
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap(), value);
    }

    #[test]
    fn allowed_list_names_each_field_or_says_none() {
        assert_eq!(allowed_list(&["x", "y"]), "`x`, `y`");
        assert_eq!(allowed_list(&[]), "no fields (send {})");
    }
}
