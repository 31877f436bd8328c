//! The `tool_result` answering one browser `tool_use`: a [`ToolResult`] (text and images, echoing
//! `"toolset_name": "browser"`) plus, on success only, exactly one `browser_state` block.
//!
//! The pairing is a type rule: [`BrowserResult::ok`] always carries a state block and
//! [`BrowserResult::error`] never does, so "at most one, never on an error" cannot be broken.
//! (`wire::ResultBlock` stays text and image only, the two kinds every other toolset may send.)
//!
//! Spec: api-contracts A, "Browser use", "`browser_state` block"; "tool_result rules".

use serde_json::{Value, json};

use super::state::BrowserStateBlock;
use crate::wire::{ResultBlock, ToolResult, ToolUse};

/// The answer to one browser block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserResult {
    result: ToolResult,
    state: Option<BrowserStateBlock>,
}

impl BrowserResult {
    /// A success: `content` (empty for `new_tab`, `switch_tab`, `list_tabs`, whose result is the
    /// block alone), then the state block.
    pub fn ok(
        tool_use: &ToolUse,
        content: Vec<ResultBlock>,
        state: BrowserStateBlock,
    ) -> BrowserResult {
        BrowserResult {
            result: ToolResult::ok(tool_use, content),
            state: Some(state),
        }
    }

    /// A failure with a text (on one line and bounded, [`crate::errtext::error_line`]), and no
    /// state block.
    pub fn error(tool_use: &ToolUse, text: impl Into<String>) -> BrowserResult {
        BrowserResult {
            result: ToolResult::error(tool_use, crate::errtext::error_line(&text.into())),
            state: None,
        }
    }

    /// The text and image part.
    pub fn result(&self) -> &ToolResult {
        &self.result
    }

    /// The state block (always on a success, never on an error).
    pub fn state(&self) -> Option<&BrowserStateBlock> {
        self.state.as_ref()
    }

    /// Whether this answers a failure.
    pub fn is_error(&self) -> bool {
        self.result.is_error
    }

    /// The text of the first text block, if any.
    pub fn text(&self) -> Option<&str> {
        self.result.text()
    }

    /// The `tool_use_id` answered.
    pub fn tool_use_id(&self) -> &str {
        &self.result.tool_use_id
    }

    /// The wire block: the [`ToolResult`]'s, with the state block last in `content`.
    pub fn to_json(&self) -> Value {
        let mut block = self.result.to_json();
        if let Some(state) = &self.state {
            match block.get_mut("content") {
                Some(Value::Array(content)) => content.push(state.to_json()),
                // A success's content is always an array; written defensively all the same.
                _ => block["content"] = json!([state.to_json()]),
            }
        }
        block
    }
}

/// The `user` message that answers a turn's browser blocks.
pub fn user_message(results: &[BrowserResult]) -> Value {
    json!({
        "role": "user",
        "content": results.iter().map(BrowserResult::to_json).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strings::BROWSER_NOT_EXECUTED;

    fn tool_use() -> ToolUse {
        ToolUse {
            id: "toolu_1".into(),
            name: "list_tabs".into(),
            toolset_name: Some("browser".into()),
            input: json!({}),
        }
    }

    #[test]
    fn state_goes_last_and_only_on_success() {
        let ok = BrowserResult::ok(&tool_use(), vec![], BrowserStateBlock::default());
        assert_eq!(
            ok.to_json(),
            json!({"type": "tool_result", "tool_use_id": "toolu_1", "toolset_name": "browser",
                   "content": [{"type": "browser_state", "tabs": []}]})
        );
        let clicked = BrowserResult::ok(
            &tool_use(),
            vec![ResultBlock::Text("Clicked.".into())],
            BrowserStateBlock::default(),
        );
        assert_eq!(clicked.to_json()["content"][0]["text"], "Clicked.");
        assert_eq!(clicked.to_json()["content"][1]["type"], "browser_state");
        let halted = BrowserResult::error(&tool_use(), BROWSER_NOT_EXECUTED);
        assert!(halted.state().is_none());
        assert_eq!(
            halted.to_json(),
            json!({"type": "tool_result", "tool_use_id": "toolu_1", "toolset_name": "browser",
                   "is_error": true, "content": "Not executed: an earlier action in this turn failed."})
        );
        assert_eq!(
            user_message(&[ok, halted])["content"]
                .as_array()
                .map(Vec::len),
            Some(2)
        );
    }
}
