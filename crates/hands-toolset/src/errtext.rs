//! Pieces of argument-error messages shared by every toolset's parser, so a model sees the
//! same wording whichever toolset it called.

use serde_json::Value;

/// How much of an offending value an error quotes.
pub(crate) const SHOWN_CHARS: usize = 60;

/// A short rendering of a JSON value for an error message: at most `max_chars` characters,
/// with `…` when cut.
pub(crate) fn show(value: &Value, max_chars: usize) -> String {
    let text = value.to_string();
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
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

    #[test]
    fn show_cuts_long_values_on_a_character_boundary() {
        assert_eq!(show(&json!(12), SHOWN_CHARS), "12");
        let long = json!("é".repeat(100));
        let shown = show(&long, SHOWN_CHARS);
        assert_eq!(shown.chars().count(), SHOWN_CHARS + 1);
        assert!(shown.starts_with("\"éé") && shown.ends_with('…'));
        // Exactly the limit is not cut.
        let exact = json!("a".repeat(SHOWN_CHARS - 2));
        assert_eq!(show(&exact, SHOWN_CHARS), exact.to_string());
    }

    #[test]
    fn allowed_list_names_each_field_or_says_none() {
        assert_eq!(allowed_list(&["x", "y"]), "`x`, `y`");
        assert_eq!(allowed_list(&[]), "no fields (send {})");
    }
}
