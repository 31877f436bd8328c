//! The Anthropic Messages blocks this crate reads (`tool_use`) and writes (`tool_result`).
//!
//! Serde lives here, at the boundary; the validated actions behind it are not `Serialize`.

use hands_core::image::EncodedImage;

use crate::errtext;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A `tool_use` block from an assistant message.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct ToolUse {
    /// `toolu_…`, answered by a result with the same `tool_use_id`.
    pub id: String,
    /// The member name (toolset) or tool name (legacy, custom tools).
    pub name: String,
    /// Set only on toolset members: `"computer"` for this toolset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolset_name: Option<String>,
    /// The member's parameters, unvalidated.
    #[serde(default)]
    pub input: Value,
}

impl ToolUse {
    /// Reads the `tool_use` blocks of an assistant message, given as the message object or its
    /// `content` array; other blocks (text, thinking) are skipped.
    pub fn from_message(message: &Value) -> Result<Vec<ToolUse>, WireError> {
        let content = match message {
            Value::Array(_) => message,
            Value::Object(map) => map.get("content").ok_or(WireError::NoContent)?,
            _ => return Err(WireError::NoContent),
        };
        let Value::Array(blocks) = content else {
            return Err(WireError::NoContent);
        };
        blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.get("type").and_then(Value::as_str) == Some("tool_use"))
            .map(|(index, b)| {
                serde_json::from_value(b.clone()).map_err(|e| WireError::BadToolUse {
                    index,
                    why: e.to_string(),
                })
            })
            .collect()
    }
}

/// Why a message could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// Neither a message with `content` nor a content array.
    #[error("expected an assistant message object with a `content` array, or the array itself")]
    NoContent,
    /// A `tool_use` block lacks `id` or `name`.
    #[error("content block {index} is a tool_use block but {why}")]
    BadToolUse {
        /// Index in `content`.
        index: usize,
        /// The parse error.
        why: String,
    },
}

/// One content block of a result: only text and images are allowed for toolset members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultBlock {
    /// `{"type":"text","text":…}`.
    Text(String),
    /// `{"type":"image","source":{"type":"base64",…}}`.
    Image(EncodedImage),
}

impl ResultBlock {
    fn to_json(&self) -> Value {
        match self {
            ResultBlock::Text(text) => json!({"type": "text", "text": text}),
            ResultBlock::Image(image) => json!({
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": image.media_type.mime(),
                    "data": image.base64,
                }
            }),
        }
    }
}

/// A `tool_result` block answering one `tool_use`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The `id` of the answered `tool_use`.
    pub tool_use_id: String,
    /// Echoed `toolset_name`; `None` for legacy and custom tools.
    pub toolset_name: Option<String>,
    /// Whether this answers a failure.
    pub is_error: bool,
    /// The blocks. A lone text block of an error is written as a plain string, as the spec's
    /// error examples show.
    pub content: Vec<ResultBlock>,
}

impl ToolResult {
    /// A successful result.
    pub fn ok(tool_use: &ToolUse, content: Vec<ResultBlock>) -> ToolResult {
        ToolResult {
            tool_use_id: tool_use.id.clone(),
            toolset_name: tool_use.toolset_name.clone(),
            is_error: false,
            content,
        }
    }

    /// A failure with a text, bounded and never empty ([`errtext::error_text`]).
    pub fn error(tool_use: &ToolUse, text: impl Into<String>) -> ToolResult {
        ToolResult {
            tool_use_id: tool_use.id.clone(),
            toolset_name: tool_use.toolset_name.clone(),
            is_error: true,
            content: vec![ResultBlock::Text(errtext::error_text(&text.into()))],
        }
    }

    /// The text of the first text block, if any.
    pub fn text(&self) -> Option<&str> {
        self.content.iter().find_map(|b| match b {
            ResultBlock::Text(t) => Some(t.as_str()),
            ResultBlock::Image(_) => None,
        })
    }

    /// The images.
    pub fn images(&self) -> impl Iterator<Item = &EncodedImage> {
        self.content.iter().filter_map(|b| match b {
            ResultBlock::Image(i) => Some(i),
            ResultBlock::Text(_) => None,
        })
    }

    /// The wire form. An `is_error` result is written with its text alone: the Messages API
    /// accepts only text there ("all content must be type 'text' if 'is_error' is true") and
    /// no empty content, so an image put on one by mistake is dropped (with a warning) rather
    /// than ending the run with a 400, and an empty one says so.
    pub fn to_json(&self) -> Value {
        let mut block = json!({
            "type": "tool_result",
            "tool_use_id": self.tool_use_id,
        });
        if let Some(name) = &self.toolset_name {
            block["toolset_name"] = json!(name);
        }
        if self.is_error {
            block["is_error"] = json!(true);
            let texts: Vec<&str> = self
                .content
                .iter()
                .filter_map(|b| match b {
                    ResultBlock::Text(t) if !t.is_empty() => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            if texts.len() != self.content.len() {
                tracing::warn!(id = %self.tool_use_id, "an error result held more than text: sent its text alone");
            }
            block["content"] = match texts.as_slice() {
                [] => json!(errtext::EMPTY_ERROR),
                [text] => json!(text),
                more => Value::Array(
                    more.iter()
                        .map(|t| json!({"type": "text", "text": t}))
                        .collect(),
                ),
            };
            return block;
        }
        block["content"] = Value::Array(self.content.iter().map(ResultBlock::to_json).collect());
        block
    }
}

/// The `user` message that answers a turn.
pub fn user_message(results: &[ToolResult]) -> Value {
    json!({
        "role": "user",
        "content": results.iter().map(ToolResult::to_json).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_message_or_content_array() {
        let msg = json!({"role": "assistant", "content": [
            {"type": "text", "text": "hi"},
            {"type": "tool_use", "id": "toolu_1", "name": "left_click", "toolset_name": "computer",
             "input": {"coordinate": [1, 2]}},
        ]});
        let uses = ToolUse::from_message(&msg).unwrap();
        assert_eq!(uses.len(), 1);
        assert_eq!(uses[0].toolset_name.as_deref(), Some("computer"));
        assert_eq!(ToolUse::from_message(&msg["content"]).unwrap(), uses);
        assert_eq!(
            ToolUse::from_message(&json!("nope")).unwrap_err(),
            WireError::NoContent
        );
    }

    #[test]
    fn error_result_is_a_plain_string() {
        let tu = ToolUse {
            id: "toolu_9".into(),
            name: "screenshot".into(),
            toolset_name: Some("computer".into()),
            input: json!({}),
        };
        assert_eq!(
            ToolResult::error(&tu, crate::strings::NOT_EXECUTED).to_json(),
            json!({"type": "tool_result", "tool_use_id": "toolu_9", "toolset_name": "computer",
                   "is_error": true, "content": "Not executed: an earlier computer action in this turn failed."})
        );
        assert_eq!(
            ToolResult::ok(&tu, vec![ResultBlock::Text("OK".into())]).to_json(),
            json!({"type": "tool_result", "tool_use_id": "toolu_9", "toolset_name": "computer",
                   "content": [{"type": "text", "text": "OK"}]})
        );
    }

    #[test]
    fn an_error_result_is_sent_as_text_alone_and_never_empty() {
        let tu = ToolUse {
            id: "toolu_8".into(),
            name: "left_click".into(),
            toolset_name: Some("computer".into()),
            input: json!({}),
        };
        let image = EncodedImage {
            size: hands_core::geometry::Size::new(1, 1).unwrap(),
            media_type: hands_core::image::MediaType::Png,
            base64: "iVBORw0KGgo=".into(),
        };
        let mut failed = ToolResult::error(&tu, "Error: no");
        failed.content.push(ResultBlock::Image(image.clone()));
        assert_eq!(failed.to_json()["content"], json!("Error: no"));
        failed.content.push(ResultBlock::Text("more".into()));
        assert_eq!(
            failed.to_json()["content"],
            json!([{"type": "text", "text": "Error: no"}, {"type": "text", "text": "more"}])
        );
        let mut empty = ToolResult::error(&tu, "");
        assert_eq!(empty.to_json()["content"], json!(errtext::EMPTY_ERROR));
        empty.content = vec![ResultBlock::Image(image)];
        assert_eq!(empty.to_json()["content"], json!(errtext::EMPTY_ERROR));
        let long = ToolResult::error(&tu, "x".repeat(9000));
        assert_eq!(
            long.text().map(|t| t.chars().count()),
            Some(errtext::MAX_ERROR_CHARS)
        );
    }
}
