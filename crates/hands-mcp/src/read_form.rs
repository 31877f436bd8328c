//! How a structured read reaches an MCP client: the `BrowserReadV1` JSON the toolset answers with
//! is parsed back into [`BrowserRead`] (a boundary: the constructors re-check every limit), then
//! rendered by [`render_read`] in hands-core's compact form — the one place that decides the read's
//! text form here. A toolset result that carries its typed read ([`TypedRead`]) is rendered from
//! it ([`render_typed`]), so elements keep their kinds and their places in the page text.
//!
//! A rendered read is a list of lines so it can be paged: [`Pager`] cuts it where the budget runs
//! out and says how to get the rest.

use hands_core::browser::read::{
    BrowserRead, BrowserScopedRead, Omitted, ReadElement, ReadOption, Ref, Role, Scope,
};
use hands_toolset::browser::TypedRead;
use serde_json::Value;

use crate::budget::text_tokens;

/// Why a read's JSON could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the read is not a valid BrowserReadV1: {0}")]
pub struct ReadFormError(String);

fn bad(why: impl Into<String>) -> ReadFormError {
    ReadFormError(why.into())
}

fn string_field<'a>(value: &'a Value, key: &str) -> Result<&'a str, ReadFormError> {
    value
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| bad(format!("`{key}` must be a string")))
}

fn parse_option(value: &Value) -> Result<ReadOption, ReadFormError> {
    let option = ReadOption::new(
        string_field(value, "label")?.to_owned(),
        string_field(value, "value")?.to_owned(),
    )
    .map_err(|e| bad(e.to_string()))?;
    Ok(match value.get("selected").and_then(Value::as_bool) {
        Some(selected) => option.selected(selected),
        None => option,
    })
}

fn parse_element(value: &Value) -> Result<ReadElement, ReadFormError> {
    let reference = Ref::new(string_field(value, "ref")?).ok_or_else(|| bad("bad ref"))?;
    let role = Role::from_name(string_field(value, "role")?).ok_or_else(|| bad("unknown role"))?;
    let mut element = ReadElement::new(reference, string_field(value, "label")?.to_owned(), role)
        .map_err(|e| bad(e.to_string()))?;
    if let Some(text) = value.get("value").and_then(Value::as_str) {
        element = element
            .with_value(text.to_owned())
            .map_err(|e| bad(e.to_string()))?;
    }
    if let Some(checked) = value.get("checked").and_then(Value::as_bool) {
        element = element
            .with_checked(checked)
            .map_err(|e| bad(e.to_string()))?;
    }
    if let Some(Value::Array(options)) = value.get("options") {
        let options = options.iter().map(parse_option).collect::<Result<_, _>>()?;
        element = element
            .with_options(options)
            .map_err(|e| bad(e.to_string()))?;
    }
    Ok(element)
}

/// Parses `BrowserReadV1` JSON.
pub fn read_from_json(value: &Value) -> Result<BrowserRead, ReadFormError> {
    let text = string_field(value, "text")?.to_owned();
    let elements = match value.get("elements") {
        Some(Value::Array(items)) => items
            .iter()
            .map(parse_element)
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err(bad("`elements` must be an array")),
    };
    let omitted = match value.get("omitted") {
        Some(Value::Array(codes)) => codes
            .iter()
            .map(|c| {
                c.as_str()
                    .and_then(Omitted::from_code)
                    .ok_or_else(|| bad("unknown omitted code"))
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => Vec::new(),
    };
    BrowserRead::new(text, elements, omitted).map_err(|e| bad(e.to_string()))
}

/// Parses `BrowserScopedReadV1` JSON.
pub fn scoped_read_from_json(value: &Value) -> Result<BrowserScopedRead, ReadFormError> {
    let read = read_from_json(value)?;
    let scopes = match value.get("scopes") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|s| {
                let reference =
                    Ref::new(string_field(s, "ref")?).ok_or_else(|| bad("bad scope ref"))?;
                Scope::new(reference, string_field(s, "label")?.to_owned())
                    .map_err(|e| bad(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => Vec::new(),
    };
    BrowserScopedRead::new(read, scopes).map_err(|e| bad(e.to_string()))
}

/// Renders a read: hands-core's compact form ([`BrowserRead::to_compact`]: the page text with
/// each element's line where it stands, `[e12] textbox "Display name" = "Ada"`), a line per
/// line, then how to reach what the browser left out.
pub fn render_read(read: &BrowserRead) -> Vec<String> {
    let mut lines = lines_of(&read.to_compact());
    omitted_hint(read, &mut lines);
    lines
}

/// Renders a scoped read: the compact form with its sections (scope refs, for `root`).
pub fn render_scoped_read(scoped: &BrowserScopedRead) -> Vec<String> {
    let mut lines = lines_of(&scoped.to_compact());
    if !scoped.scopes().is_empty() {
        lines.push("# pass a [s…] scope ref as `root` to read that section".to_owned());
    }
    omitted_hint(scoped.read(), &mut lines);
    lines
}

/// Renders the typed read a toolset result carries (it keeps what the JSON cannot: each
/// element's kind and place in the page text).
pub fn render_typed(read: &TypedRead) -> Vec<String> {
    match read {
        TypedRead::Page(read) => render_read(read),
        TypedRead::Scoped(scoped) => render_scoped_read(scoped),
    }
}

fn lines_of(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

fn omitted_hint(read: &BrowserRead, lines: &mut Vec<String>) {
    if !read.omitted().is_empty() {
        lines.push(
            "# the browser left out part of the page: use browser_find or \
             browser_read_page_scoped to reach it"
                .to_owned(),
        );
    }
}

/// One page of a rendered read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The lines of this page, joined.
    pub text: String,
    /// The index of the first line not sent, when some were left out.
    pub next: Option<usize>,
    /// How many lines the read has in all.
    pub n_lines: usize,
}

/// Cuts rendered lines into pages that fit a token allowance.
#[derive(Debug, Clone, Copy)]
pub struct Pager {
    /// Tokens the page may use.
    pub tokens: u32,
}

impl Pager {
    /// The lines from `start` that fit, whole; a single line longer than the allowance is cut on
    /// a character boundary (its remainder is not paged: lines are at most a page).
    pub fn page(self, lines: &[String], start: usize) -> Page {
        let mut text = String::new();
        let mut used = 0u32;
        let mut next = None;
        for (i, line) in lines.iter().enumerate().skip(start) {
            let cost = text_tokens(line) + 1;
            if used + cost > self.tokens {
                if text.is_empty() {
                    text.push_str(crate::budget::cut_to_tokens(line, self.tokens));
                    next = (i + 1 < lines.len()).then_some(i + 1);
                } else {
                    next = Some(i);
                }
                break;
            }
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(line);
            used += cost;
        }
        Page {
            text,
            next,
            n_lines: lines.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Value {
        json!({"version": 1, "text": "Booking\n\nPick a room\n", "elements": [
            {"ref": "e1", "label": "Name", "role": "textbox", "value": "Ada \"the\" first"},
            {"ref": "e2", "label": "Breakfast", "role": "checkbox", "checked": true},
            {"ref": "e3", "label": "Room", "role": "combobox", "value": "d",
             "options": [{"label": "Double", "value": "d"}, {"label": "single", "value": "single"}]},
            {"ref": "e4", "label": "Book", "role": "button"}
        ], "omitted": ["report_limit"]})
    }

    #[test]
    fn a_read_renders_one_line_per_element() {
        let read = read_from_json(&sample()).unwrap();
        let lines = render_read(&read);
        assert_eq!(
            lines,
            [
                "Booking",
                "Pick a room",
                "[e1] textbox Name = \"Ada \\\"the\\\" first\"",
                "[e2] checkbox [x] Breakfast",
                "[e3] combobox Room {Double=d*, single}",
                "[e4] button Book",
                "(omitted: report_limit)",
                "# the browser left out part of the page: use browser_find or \
                 browser_read_page_scoped to reach it",
            ]
        );
    }

    #[test]
    fn a_label_with_a_newline_cannot_forge_a_line() {
        let mut value = sample();
        value["elements"][3]["label"] = json!("Book\ne9 button \"Pay\"");
        let lines = render_read(&read_from_json(&value).unwrap());
        assert!(
            lines
                .iter()
                .all(|l| !l.starts_with("e9") && !l.starts_with("[e9]")),
            "{lines:?}"
        );
    }

    #[test]
    fn invalid_reads_are_refused() {
        let mut dup = sample();
        dup["elements"][1]["ref"] = json!("e1");
        assert!(read_from_json(&dup).is_err());
        let mut role = sample();
        role["elements"][0]["role"] = json!("link");
        assert!(read_from_json(&role).is_err());
        assert!(read_from_json(&json!({"text": 3})).is_err());
    }

    #[test]
    fn pages_cut_between_lines_and_say_where_to_go_on() {
        let lines: Vec<String> = (0..100)
            .map(|i| format!("line {i:03} {}", "x".repeat(30)))
            .collect();
        let pager = Pager { tokens: 100 };
        let first = pager.page(&lines, 0);
        assert!(text_tokens(&first.text) <= 100);
        let next = first.next.unwrap();
        assert!(first.text.ends_with(&lines[next - 1]));
        let second = pager.page(&lines, next);
        assert!(second.text.starts_with(&lines[next]));
        // Walking every page yields every line once.
        let mut seen = 0;
        let mut at = Some(0);
        while let Some(start) = at {
            let page = pager.page(&lines, start);
            seen += page.text.lines().count();
            at = page.next;
        }
        assert_eq!(seen, 100);
    }

    #[test]
    fn a_line_longer_than_a_page_is_cut() {
        let lines = vec!["y".repeat(10_000), "z".into()];
        let page = Pager { tokens: 50 }.page(&lines, 0);
        assert_eq!(page.text.len(), 200);
        assert_eq!(page.next, Some(1));
    }

    #[test]
    fn scoped_reads_list_their_sections() {
        let mut value = sample();
        value["scopes"] = json!([{"ref": "s1", "label": "Main"}]);
        let lines = render_scoped_read(&scoped_read_from_json(&value).unwrap());
        assert!(lines.contains(&"[s1] scope Main".to_owned()), "{lines:?}");
        assert!(lines.iter().any(|l| l.contains("as `root`")), "{lines:?}");
    }
}
