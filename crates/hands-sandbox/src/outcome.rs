//! What a tool call answers: the text of its `tool_result` and whether it is an error.

/// The result of one `tool_use` call of the bash or text editor tool, ready to become a
/// `tool_result` block (`{"type": "tool_result", "tool_use_id": …, "content": text,
/// "is_error": is_error}`).
///
/// A tool failure (a bad input, a missing file, a timed-out command) is an outcome with
/// `is_error: true` the model reads; it never fails the caller's loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    /// Whether the call failed.
    pub is_error: bool,
    /// What the model reads.
    pub text: String,
}

impl ToolOutcome {
    /// A successful call answering `text`.
    pub fn ok(text: impl Into<String>) -> Self {
        Self {
            is_error: false,
            text: text.into(),
        }
    }

    /// A failed call answering `text`.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            is_error: true,
            text: text.into(),
        }
    }
}
