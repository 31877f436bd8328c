//! The Anthropic Messages blocks this crate reads (`tool_use`) and writes (`tool_result`).
//!
//! Serde lives here, at the boundary; the validated actions behind it are not `Serialize`.

use hands_core::image::EncodedImage;

use crate::errtext;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
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
        content_of(message)?
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

/// The content blocks of an assistant message given as the message object or its `content`.
fn content_of(message: &Value) -> Result<&Vec<Value>, WireError> {
    let content = match message {
        Value::Array(_) => message,
        Value::Object(map) => map.get("content").ok_or(WireError::NoContent)?,
        _ => return Err(WireError::NoContent),
    };
    match content {
        Value::Array(blocks) => Ok(blocks),
        _ => Err(WireError::NoContent),
    }
}

/// One `tool_use` block of a turn, as a toolset answers it: readable, or not — a `toolset_name`
/// or `name` that is not a string, an `input` with a number out of range (`1e999`) or nested
/// too deep — in which case its answer says why and nothing else of the turn is lost.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnBlock {
    /// A block whose fields all read.
    Use(ToolUse),
    /// A block that cannot run: `tool_use` has its `id` (and `name` / `toolset_name` where
    /// those were strings; `input` is null), `why` says what was wrong.
    Unreadable {
        /// What is known of the block, to answer it.
        tool_use: ToolUse,
        /// What was wrong, for its error answer.
        why: String,
    },
}

impl TurnBlock {
    /// The block as far as it was read.
    pub fn tool_use(&self) -> &ToolUse {
        match self {
            TurnBlock::Use(tool_use) | TurnBlock::Unreadable { tool_use, .. } => tool_use,
        }
    }
}

/// The `content` of a turn given as JSON text, each block kept unparsed.
#[derive(serde::Deserialize)]
struct RawMessage<'a> {
    #[serde(borrow)]
    content: Option<&'a RawValue>,
}

impl ToolUse {
    /// Reads the `tool_use` blocks of an assistant message given as JSON text (the message
    /// object or its `content` array), one block at a time: a block that does not read is a
    /// [`TurnBlock::Unreadable`] and the others are unaffected, even when the text holds a
    /// number no JSON value can (`1e999`) or nesting deeper than a parser goes. Only a text
    /// that is no JSON at all, or a `tool_use` without a string `id` (which no answer could
    /// name), fails the whole turn.
    pub fn blocks_from_text(text: &str) -> Result<Vec<TurnBlock>, WireError> {
        let not_json = |e: serde_json::Error| WireError::NotJson(e.to_string());
        let raw: &RawValue = serde_json::from_str(text).map_err(not_json)?;
        let content = if raw.get().trim_start().starts_with('{') {
            let message: RawMessage<'_> = serde_json::from_str(raw.get()).map_err(not_json)?;
            message.content.ok_or(WireError::NoContent)?
        } else {
            raw
        };
        let blocks: Vec<&RawValue> =
            serde_json::from_str(content.get()).map_err(|_| WireError::NoContent)?;
        let mut out = Vec::new();
        for (index, block) in blocks.into_iter().enumerate() {
            let Ok(fields) =
                serde_json::from_str::<std::collections::BTreeMap<String, &RawValue>>(block.get())
            else {
                continue; // not an object: not a tool_use block
            };
            let field = |name: &str| fields.get(name).map(|raw| raw.get());
            if field("type")
                .and_then(|t| serde_json::from_str::<String>(t).ok())
                .as_deref()
                != Some("tool_use")
            {
                continue;
            }
            let read = |name: &str| -> Result<Option<Value>, String> {
                match field(name) {
                    None => Ok(None),
                    Some(raw) => serde_json::from_str::<Value>(raw)
                        .map(Some)
                        .map_err(|e| format!("its `{name}` could not be read ({e})")),
                }
            };
            out.push(TurnBlock::read(
                index,
                read("id"),
                read("name"),
                read("toolset_name"),
                read("input"),
            )?);
        }
        Ok(out)
    }

    /// [`ToolUse::blocks_from_text`] for a message already parsed: a block whose `name` or
    /// `toolset_name` is not a string is a [`TurnBlock::Unreadable`], not a failed turn.
    pub fn blocks_of(message: &Value) -> Result<Vec<TurnBlock>, WireError> {
        content_of(message)?
            .iter()
            .enumerate()
            .filter(|(_, b)| b.get("type").and_then(Value::as_str) == Some("tool_use"))
            .map(|(index, b)| {
                let field = |name: &str| Ok(b.get(name).cloned());
                TurnBlock::read(
                    index,
                    field("id"),
                    field("name"),
                    field("toolset_name"),
                    field("input"),
                )
            })
            .collect()
    }
}

impl TurnBlock {
    /// One block from its fields as read (`Err`: the field's text did not parse).
    fn read(
        index: usize,
        id: Result<Option<Value>, String>,
        name: Result<Option<Value>, String>,
        toolset_name: Result<Option<Value>, String>,
        input: Result<Option<Value>, String>,
    ) -> Result<TurnBlock, WireError> {
        let Ok(Some(Value::String(id))) = id else {
            return Err(WireError::BadToolUse {
                index,
                why: "has no string `id`, so no answer could name it".to_owned(),
            });
        };
        let mut problems = Vec::new();
        let name = match name {
            Ok(Some(Value::String(name))) => name,
            Ok(None) => {
                problems.push("it has no `name`".to_owned());
                String::new()
            }
            Ok(Some(_)) => {
                problems.push("its `name` is not a string".to_owned());
                String::new()
            }
            Err(why) => {
                problems.push(why);
                String::new()
            }
        };
        let toolset_name = match toolset_name {
            Ok(None | Some(Value::Null)) => None,
            Ok(Some(Value::String(ts))) => Some(ts),
            Ok(Some(_)) => {
                problems.push("its `toolset_name` is not a string".to_owned());
                None
            }
            Err(why) => {
                problems.push(why);
                None
            }
        };
        let input = match input {
            Ok(input) => input.unwrap_or(Value::Null),
            Err(why) => {
                problems.push(why);
                Value::Null
            }
        };
        let tool_use = ToolUse {
            id,
            name,
            toolset_name,
            input,
        };
        if problems.is_empty() {
            Ok(TurnBlock::Use(tool_use))
        } else {
            let why = format!("this tool_use block cannot run: {}", problems.join("; "));
            Ok(TurnBlock::Unreadable {
                tool_use: ToolUse {
                    input: Value::Null,
                    ..tool_use
                },
                why,
            })
        }
    }
}

/// Why a message could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The text is not JSON.
    #[error("the turn is not JSON: {0}")]
    NotJson(String),
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

    /// A failure with a text, bounded and never empty ([`errtext::error_text`]); for a toolset
    /// member, also on one line ([`errtext::error_line`]), whoever wrote it (a toolset, or the
    /// runner answering a block it stopped at). A plain tool's text keeps its lines (a shell's
    /// error output).
    pub fn error(tool_use: &ToolUse, text: impl Into<String>) -> ToolResult {
        let text = text.into();
        let text = if tool_use.toolset_name.is_some() {
            errtext::error_line(&text)
        } else {
            errtext::error_text(&text)
        };
        ToolResult {
            tool_use_id: tool_use.id.clone(),
            toolset_name: tool_use.toolset_name.clone(),
            is_error: true,
            content: vec![ResultBlock::Text(text)],
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
    fn every_block_of_a_turn_reads_on_its_own() {
        let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
        let text = format!(
            r#"{{"role": "assistant", "content": [
                {{"type": "text", "text": "hi"}},
                {{"type": "tool_use", "id": "a", "name": "left_click", "toolset_name": "computer",
                  "input": {{"coordinate": [1, 2]}}}},
                {{"type": "tool_use", "id": "b", "name": "left_click", "toolset_name": 7,
                  "input": {{}}}},
                {{"type": "tool_use", "id": "c", "name": "scroll", "toolset_name": "computer",
                  "input": {{"scroll_amount": 1e999}}}},
                {{"type": "tool_use", "id": "d", "name": "type", "toolset_name": "computer",
                  "input": {{"text": {deep}}}}},
                {{"type": "tool_use", "id": "e", "name": ["x"], "input": {{}}}},
                "not a block",
                {{"type": "tool_use", "id": "f", "name": "wait", "toolset_name": "computer",
                  "input": {{"duration": 1}}}}
            ]}}"#
        );
        let blocks = ToolUse::blocks_from_text(&text).unwrap();
        let ids: Vec<&str> = blocks.iter().map(|b| b.tool_use().id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c", "d", "e", "f"]);
        assert!(
            matches!(&blocks[0], TurnBlock::Use(u) if u.input == json!({"coordinate": [1, 2]}))
        );
        assert!(matches!(&blocks[5], TurnBlock::Use(_)));
        let why = |i: usize| match &blocks[i] {
            TurnBlock::Unreadable { why, .. } => why.clone(),
            TurnBlock::Use(u) => panic!("{u:?} read"),
        };
        assert!(
            why(1).contains("`toolset_name` is not a string"),
            "{}",
            why(1)
        );
        assert!(why(2).contains("number out of range"), "{}", why(2));
        assert!(why(3).contains("recursion limit"), "{}", why(3));
        assert!(why(4).contains("`name` is not a string"), "{}", why(4));
        // What was readable is kept, to answer the block (its toolset included).
        assert_eq!(
            blocks[2].tool_use().toolset_name.as_deref(),
            Some("computer")
        );
        assert_eq!(blocks[2].tool_use().name, "scroll");
        // The same from a parsed message, where only the field types can be wrong.
        let parsed: Value =
            serde_json::from_str(&text.replace("1e999", "1").replace(&deep, "1")).unwrap();
        let blocks = ToolUse::blocks_of(&parsed).unwrap();
        assert_eq!(blocks.len(), 6);
        assert!(matches!(blocks[1], TurnBlock::Unreadable { .. }));
        assert!(matches!(blocks[2], TurnBlock::Use(_)));
        // A block without a string id cannot be answered: the turn is refused, and says why.
        let err = ToolUse::blocks_from_text(r#"[{"type": "tool_use", "id": 5, "name": "x"}]"#)
            .unwrap_err();
        assert!(
            matches!(err, WireError::BadToolUse { index: 0, .. }),
            "{err}"
        );
        assert!(matches!(
            ToolUse::blocks_from_text("{\"role\": \"assistant\"}"),
            Err(WireError::NoContent)
        ));
        assert!(matches!(
            ToolUse::blocks_from_text("nope"),
            Err(WireError::NotJson(_))
        ));
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
        // A toolset member's error is one line; a plain tool's keeps its lines.
        assert_eq!(
            ToolResult::error(&tu, "Error: a\n\u{202e}b").text(),
            Some("Error: a b")
        );
        let plain = ToolUse {
            toolset_name: None,
            ..tu.clone()
        };
        assert_eq!(
            ToolResult::error(&plain, "line 1\nline 2").text(),
            Some("line 1\nline 2")
        );
        let long = ToolResult::error(&tu, "x".repeat(9000));
        assert_eq!(
            long.text().map(|t| t.chars().count()),
            Some(errtext::MAX_ERROR_CHARS)
        );
    }
}
