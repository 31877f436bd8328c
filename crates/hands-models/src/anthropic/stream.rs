//! Messages API streaming: typed SSE events, and the accumulator that rebuilds the message.
//!
//! Spec: api-contracts A, "Streaming (SSE, `stream:true`)".

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::types::{ContentBlock, Message, MessagesStopReason, Usage};
use crate::error::StreamErrorKind;
use crate::verbatim;

/// One streamed event.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// The message with empty content and the input usage.
    MessageStart {
        /// The message so far.
        message: Box<Message>,
    },
    /// A block begins; text and input are empty, other blocks arrive whole.
    ContentBlockStart {
        /// The block's index in `content`.
        index: usize,
        /// The block as started, verbatim.
        content_block: Value,
    },
    /// A piece of a block.
    ContentBlockDelta {
        /// The block's index.
        index: usize,
        /// The piece.
        delta: Delta,
    },
    /// A block is complete.
    ContentBlockStop {
        /// The block's index.
        index: usize,
    },
    /// Top-level changes: the stop reason, cumulative usage.
    MessageDelta {
        /// `stop_reason`, `stop_sequence`, `stop_details`… verbatim.
        delta: Map<String, Value>,
        /// Cumulative usage counts, verbatim.
        usage: Map<String, Value>,
        /// Other fields of the event (`context_management`…), verbatim.
        extra: Map<String, Value>,
    },
    /// The message is complete.
    MessageStop,
    /// Keep-alive.
    Ping,
    /// An event type this crate does not know (ignored by the accumulator).
    Unknown {
        /// The event's `type`.
        event_type: String,
        /// The event's data.
        data: Value,
    },
}

/// A `content_block_delta` payload.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Delta {
    /// `text_delta`.
    Text(String),
    /// `input_json_delta`: a piece of the tool input's JSON text.
    InputJson(String),
    /// `thinking_delta`.
    Thinking(String),
    /// `signature_delta`: the thinking block's signature.
    Signature(String),
    /// `citations_delta`: one citation to append.
    Citation(Value),
    /// `compaction_delta`: the summary of a `compaction` block (and its opaque
    /// `encrypted_content`), as anthropic 2.10's `BetaCompactionContentBlockDelta`.
    Compaction(Value),
    /// Any other delta, verbatim (ignored by the accumulator).
    Unknown(Value),
}

/// Event `type` strings.
pub mod event_types {
    /// `message_start`.
    pub const MESSAGE_START: &str = "message_start";
    /// `content_block_start`.
    pub const CONTENT_BLOCK_START: &str = "content_block_start";
    /// `content_block_delta`.
    pub const CONTENT_BLOCK_DELTA: &str = "content_block_delta";
    /// `content_block_stop`.
    pub const CONTENT_BLOCK_STOP: &str = "content_block_stop";
    /// `message_delta`.
    pub const MESSAGE_DELTA: &str = "message_delta";
    /// `message_stop`.
    pub const MESSAGE_STOP: &str = "message_stop";
    /// `ping`.
    pub const PING: &str = "ping";
    /// `error`.
    pub const ERROR: &str = "error";
}

#[derive(Deserialize)]
struct StartWire {
    message: Message,
}

#[derive(Deserialize)]
struct BlockStartWire {
    index: usize,
    content_block: Value,
}

#[derive(Deserialize)]
struct BlockDeltaWire {
    index: usize,
    delta: Value,
}

#[derive(Deserialize)]
struct BlockStopWire {
    index: usize,
}

#[derive(Deserialize)]
struct ErrorWire {
    #[serde(default)]
    error: ErrorBody,
}

#[derive(Deserialize, Default)]
struct ErrorBody {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

fn malformed(event_type: &str, err: impl std::fmt::Display) -> StreamErrorKind {
    StreamErrorKind::Malformed {
        event_type: event_type.to_owned(),
        reason: err.to_string(),
    }
}

/// Parses one SSE event (its `event:` name and `data:`). The `type` inside the data wins over
/// the SSE name. An `error` event is returned as [`StreamErrorKind::ErrorEvent`].
pub fn parse_event(sse_name: Option<&str>, data: &str) -> Result<StreamEvent, StreamErrorKind> {
    let name = sse_name.unwrap_or("message");
    let kind = verbatim::type_of(data)
        .map_err(|err| malformed(name, err))?
        .unwrap_or_else(|| name.to_owned());
    let kind = kind.as_str();
    let event = match kind {
        event_types::MESSAGE_START => {
            let wire: StartWire = serde_json::from_str(data).map_err(|e| malformed(kind, e))?;
            StreamEvent::MessageStart {
                message: Box::new(wire.message),
            }
        }
        event_types::CONTENT_BLOCK_START => {
            let wire: BlockStartWire =
                serde_json::from_str(data).map_err(|e| malformed(kind, e))?;
            if !wire.content_block.is_object() {
                return Err(malformed(kind, "content_block is not an object"));
            }
            StreamEvent::ContentBlockStart {
                index: wire.index,
                content_block: wire.content_block,
            }
        }
        event_types::CONTENT_BLOCK_DELTA => {
            let wire: BlockDeltaWire =
                serde_json::from_str(data).map_err(|e| malformed(kind, e))?;
            StreamEvent::ContentBlockDelta {
                index: wire.index,
                delta: parse_delta(wire.delta).map_err(|e| malformed(kind, e))?,
            }
        }
        event_types::CONTENT_BLOCK_STOP => {
            let wire: BlockStopWire = serde_json::from_str(data).map_err(|e| malformed(kind, e))?;
            StreamEvent::ContentBlockStop { index: wire.index }
        }
        event_types::MESSAGE_DELTA => {
            let mut all: Map<String, Value> =
                serde_json::from_str(data).map_err(|e| malformed(kind, e))?;
            all.remove("type");
            let take_map = |value: Option<Value>| match value {
                Some(Value::Object(map)) => Ok(map),
                None | Some(Value::Null) => Ok(Map::new()),
                Some(_) => Err(malformed(kind, "delta and usage must be objects")),
            };
            let delta = take_map(all.remove("delta"))?;
            let usage = take_map(all.remove("usage"))?;
            StreamEvent::MessageDelta {
                delta,
                usage,
                extra: all,
            }
        }
        event_types::MESSAGE_STOP => StreamEvent::MessageStop,
        event_types::PING => StreamEvent::Ping,
        event_types::ERROR => {
            let wire: ErrorWire = serde_json::from_str(data).map_err(|e| malformed(kind, e))?;
            return Err(StreamErrorKind::ErrorEvent {
                error_type: wire.error.kind,
                code: None,
                message: wire.error.message,
                raw: data.to_owned(),
            });
        }
        other => StreamEvent::Unknown {
            event_type: other.to_owned(),
            data: serde_json::from_str(data).map_err(|e| malformed(other, e))?,
        },
    };
    Ok(event)
}

fn parse_delta(delta: Value) -> Result<Delta, String> {
    let kind = delta.get("type").and_then(Value::as_str).unwrap_or("");
    let field = |name: &str| -> Result<String, String> {
        delta
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("{kind} has no string field {name:?}"))
    };
    Ok(match kind {
        "text_delta" => Delta::Text(field("text")?),
        "input_json_delta" => Delta::InputJson(field("partial_json")?),
        "thinking_delta" => Delta::Thinking(field("thinking")?),
        "signature_delta" => Delta::Signature(field("signature")?),
        "citations_delta" => Delta::Citation(
            delta
                .get("citation")
                .cloned()
                .ok_or("citations_delta has no citation")?,
        ),
        "compaction_delta" => Delta::Compaction(delta),
        _ => Delta::Unknown(delta),
    })
}

/// A block being assembled.
#[derive(Debug)]
struct OpenBlock {
    block: Map<String, Value>,
    partial_json: String,
}

/// Rebuilds the final [`Message`] from stream events, equal to what the non-streaming call
/// returns: text and thinking appended, the signature set, citations pushed, tool input parsed
/// from the concatenated `input_json_delta` pieces (toolset members send it whole), the
/// `message_delta` fields and cumulative usage applied. Unknown events and deltas are ignored.
#[derive(Debug, Default)]
pub struct MessageAccumulator {
    message: Option<Message>,
    open: BTreeMap<usize, OpenBlock>,
    done: BTreeMap<usize, ContentBlock>,
    stopped: bool,
}

impl MessageAccumulator {
    /// An empty accumulator.
    pub fn new() -> MessageAccumulator {
        MessageAccumulator::default()
    }

    /// Applies one event. Returns the index of a block this event completed, if any.
    pub fn apply(&mut self, event: &StreamEvent) -> Result<Option<usize>, StreamErrorKind> {
        let protocol = |what: String| Err(StreamErrorKind::Protocol(what));
        if self.stopped {
            return match event {
                StreamEvent::Ping | StreamEvent::Unknown { .. } => Ok(None),
                _ => protocol("event after message_stop".into()),
            };
        }
        match event {
            StreamEvent::MessageStart { message } => {
                if self.message.is_some() {
                    return protocol("a second message_start".into());
                }
                let mut message = Message::clone(message);
                for (idx, block) in std::mem::take(&mut message.content).into_iter().enumerate() {
                    self.done.insert(idx, block);
                }
                self.message = Some(message);
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                self.require_start("content_block_start")?;
                if self.open.contains_key(index) || self.done.contains_key(index) {
                    return protocol(format!("content block {index} started twice"));
                }
                let Value::Object(block) = content_block else {
                    return protocol(format!("content block {index} is not an object"));
                };
                self.open.insert(
                    *index,
                    OpenBlock {
                        block: block.clone(),
                        partial_json: String::new(),
                    },
                );
            }
            StreamEvent::ContentBlockDelta { index, delta } => {
                self.require_start("content_block_delta")?;
                let Some(open) = self.open.get_mut(index) else {
                    return protocol(format!(
                        "delta for content block {index}, which is not open"
                    ));
                };
                apply_delta(open, delta);
            }
            StreamEvent::ContentBlockStop { index } => {
                self.require_start("content_block_stop")?;
                let Some(open) = self.open.remove(index) else {
                    return protocol(format!("stop for content block {index}, which is not open"));
                };
                let block = close_block(*index, open)?;
                self.done.insert(*index, block);
                return Ok(Some(*index));
            }
            StreamEvent::MessageDelta {
                delta,
                usage,
                extra,
            } => {
                self.require_start("message_delta")?;
                let Some(message) = self.message.as_mut() else {
                    return Ok(None);
                };
                for (key, value) in delta {
                    match key.as_str() {
                        "stop_reason" => {
                            message.stop_reason = value.as_str().map(MessagesStopReason::parse);
                        }
                        "stop_sequence" => {
                            message.stop_sequence = value.as_str().map(str::to_owned);
                        }
                        _ => {
                            message.extra.insert(key.clone(), value.clone());
                        }
                    }
                }
                for (key, value) in extra {
                    message.extra.insert(key.clone(), value.clone());
                }
                merge_usage(&mut message.usage, usage)?;
            }
            StreamEvent::MessageStop => {
                self.require_start("message_stop")?;
                if let Some(index) = self.open.keys().next() {
                    return protocol(format!("message_stop while content block {index} is open"));
                }
                self.stopped = true;
            }
            StreamEvent::Ping | StreamEvent::Unknown { .. } => {}
        }
        Ok(None)
    }

    fn require_start(&self, what: &str) -> Result<(), StreamErrorKind> {
        if self.message.is_none() {
            return Err(StreamErrorKind::Protocol(format!(
                "{what} before message_start"
            )));
        }
        Ok(())
    }

    /// A block completed so far.
    pub fn completed_block(&self, index: usize) -> Option<&ContentBlock> {
        self.done.get(&index)
    }

    /// Whether `message_stop` arrived.
    pub fn is_complete(&self) -> bool {
        self.stopped
    }

    /// The final message; an error unless `message_stop` arrived.
    pub fn finish(self) -> Result<Message, StreamErrorKind> {
        if !self.stopped {
            return Err(StreamErrorKind::Ended);
        }
        let Some(mut message) = self.message else {
            return Err(StreamErrorKind::Ended);
        };
        let n_blocks = self.done.len();
        if let Some((last, _)) = self.done.last_key_value()
            && *last + 1 != n_blocks
        {
            return Err(StreamErrorKind::Protocol(format!(
                "content block indexes have a gap ({n_blocks} blocks, last index {last})"
            )));
        }
        message.content = self.done.into_values().collect();
        Ok(message)
    }
}

fn append_str(block: &mut Map<String, Value>, key: &str, piece: &str) {
    match block.get_mut(key) {
        Some(Value::String(text)) => text.push_str(piece),
        _ => {
            block.insert(key.to_owned(), Value::String(piece.to_owned()));
        }
    }
}

fn apply_delta(open: &mut OpenBlock, delta: &Delta) {
    match delta {
        Delta::Text(text) => append_str(&mut open.block, "text", text),
        Delta::Thinking(thinking) => append_str(&mut open.block, "thinking", thinking),
        Delta::Signature(signature) => {
            open.block
                .insert("signature".into(), Value::String(signature.clone()));
        }
        Delta::InputJson(piece) => open.partial_json.push_str(piece),
        Delta::Citation(citation) => match open.block.get_mut("citations") {
            Some(Value::Array(citations)) => citations.push(citation.clone()),
            _ => {
                open.block
                    .insert("citations".into(), Value::Array(vec![citation.clone()]));
            }
        },
        Delta::Compaction(delta) => {
            if let Some(piece) = delta.get("content").and_then(Value::as_str) {
                append_str(&mut open.block, "content", piece);
            }
            if let Some(blob) = delta.get("encrypted_content").filter(|v| !v.is_null()) {
                open.block.insert("encrypted_content".into(), blob.clone());
            }
        }
        Delta::Unknown(_) => {}
    }
}

fn close_block(index: usize, mut open: OpenBlock) -> Result<ContentBlock, StreamErrorKind> {
    if !open.partial_json.is_empty() {
        let input: Value = serde_json::from_str(&open.partial_json).map_err(|err| {
            StreamErrorKind::Protocol(format!(
                "content block {index}: the streamed input is not valid JSON ({err})"
            ))
        })?;
        open.block.insert("input".into(), input);
    }
    ContentBlock::from_value(&Value::Object(open.block)).map_err(|err| {
        StreamErrorKind::Protocol(format!("content block {index} is malformed: {err}"))
    })
}

/// Applies cumulative usage counts: every non-null field replaces the current one.
fn merge_usage(usage: &mut Usage, delta: &Map<String, Value>) -> Result<(), StreamErrorKind> {
    if delta.is_empty() {
        return Ok(());
    }
    let bad = |err: serde_json::Error| StreamErrorKind::Malformed {
        event_type: event_types::MESSAGE_DELTA.into(),
        reason: format!("usage: {err}"),
    };
    let Value::Object(mut current) = serde_json::to_value(&*usage).map_err(bad)? else {
        return Ok(());
    };
    for (key, value) in delta {
        if !value.is_null() {
            current.insert(key.clone(), value.clone());
        }
    }
    *usage = serde_json::from_value(Value::Object(current)).map_err(bad)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(data: Value) -> StreamEvent {
        parse_event(None, &data.to_string()).unwrap()
    }

    #[test]
    fn deltas_parse_by_type() {
        let cases = [
            (
                json!({"type":"text_delta","text":"Hi"}),
                Delta::Text("Hi".into()),
            ),
            (
                json!({"type":"input_json_delta","partial_json":"{\"a\""}),
                Delta::InputJson("{\"a\"".into()),
            ),
            (
                json!({"type":"thinking_delta","thinking":"hm"}),
                Delta::Thinking("hm".into()),
            ),
            (
                json!({"type":"signature_delta","signature":"EqQB"}),
                Delta::Signature("EqQB".into()),
            ),
            (
                json!({"type":"citations_delta","citation":{"type":"char_location"}}),
                Delta::Citation(json!({"type":"char_location"})),
            ),
            (
                json!({"type":"compaction_delta","content":"Sum"}),
                Delta::Compaction(json!({"type":"compaction_delta","content":"Sum"})),
            ),
            (
                json!({"type":"new_delta","x":1}),
                Delta::Unknown(json!({"type":"new_delta","x":1})),
            ),
        ];
        for (wire, expect) in cases {
            assert_eq!(parse_delta(wire).unwrap(), expect);
        }
        assert!(parse_delta(json!({"type":"text_delta"})).is_err());
    }

    #[test]
    fn error_event_is_typed() {
        let data = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        match parse_event(Some("error"), data) {
            Err(StreamErrorKind::ErrorEvent {
                error_type,
                message,
                raw,
                ..
            }) => {
                assert_eq!(error_type.as_deref(), Some("overloaded_error"));
                assert_eq!(message.as_deref(), Some("Overloaded"));
                assert_eq!(raw, data);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn unknown_event_is_kept_not_fatal() {
        assert_eq!(
            event(json!({"type":"message_annotation","x":1})),
            StreamEvent::Unknown {
                event_type: "message_annotation".into(),
                data: json!({"type":"message_annotation","x":1}),
            }
        );
    }

    fn start() -> StreamEvent {
        event(
            json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",
            "model":"m","content":[],"stop_reason":null,"stop_sequence":null,
            "usage":{"input_tokens":10,"output_tokens":1}}}),
        )
    }

    #[test]
    fn protocol_violations_are_errors() {
        let cases: Vec<(Vec<StreamEvent>, &str)> = vec![
            (
                vec![event(json!({"type":"content_block_stop","index":0}))],
                "before message_start",
            ),
            (
                vec![
                    start(),
                    event(
                        json!({"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}),
                    ),
                ],
                "not open",
            ),
            (
                vec![
                    start(),
                    event(
                        json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}),
                    ),
                    event(
                        json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}),
                    ),
                    event(json!({"type":"content_block_stop","index":0})),
                ],
                "not valid JSON",
            ),
            (
                vec![
                    start(),
                    event(
                        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
                    ),
                    event(json!({"type":"message_stop"})),
                ],
                "is open",
            ),
        ];
        for (events, expect) in cases {
            let mut acc = MessageAccumulator::new();
            let err = events
                .iter()
                .map(|e| acc.apply(e))
                .find_map(Result::err)
                .unwrap();
            assert!(err.to_string().contains(expect), "{err} lacks {expect}");
        }
    }

    #[test]
    fn text_with_citations_and_stop_fields_accumulate() {
        let events = [
            start(),
            event(
                json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
            ),
            event(
                json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The check-in "}}),
            ),
            event(
                json!({"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"3 pm","document_index":0,"start_char_index":0,"end_char_index":4}}}),
            ),
            event(
                json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"is at 3 pm."}}),
            ),
            event(json!({"type":"content_block_stop","index":0})),
            event(
                json!({"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null,"stop_details":{"type":"refusal","category":"cyber"}},"usage":{"output_tokens":9}}),
            ),
            event(json!({"type":"message_stop"})),
        ];
        let mut acc = MessageAccumulator::new();
        let completed: Vec<Option<usize>> = events.iter().map(|e| acc.apply(e).unwrap()).collect();
        assert_eq!(completed[5], Some(0));
        let message = acc.finish().unwrap();
        assert_eq!(
            message.content[0].to_value(),
            json!({"type":"text","text":"The check-in is at 3 pm.","citations":[{"type":"char_location",
                "cited_text":"3 pm","document_index":0,"start_char_index":0,"end_char_index":4}]})
        );
        assert_eq!(message.stop_reason, Some(MessagesStopReason::Refusal));
        assert_eq!(
            message.stop_details(),
            Some(&json!({"type":"refusal","category":"cyber"}))
        );
        assert_eq!(message.usage.output_tokens, 9);
    }

    #[test]
    fn finish_before_stop_is_ended() {
        let mut acc = MessageAccumulator::new();
        acc.apply(&start()).unwrap();
        assert!(matches!(acc.finish(), Err(StreamErrorKind::Ended)));
    }

    #[test]
    fn usage_is_cumulative_and_nulls_are_ignored() {
        let mut usage = Usage {
            input_tokens: 10,
            output_tokens: 1,
            cache_read_input_tokens: Some(5),
            ..Usage::default()
        };
        let delta = json!({"output_tokens":42,"input_tokens":null,"server_tool_use":{"web_search_requests":1}});
        merge_usage(&mut usage, delta.as_object().unwrap()).unwrap();
        assert_eq!(usage.input_tokens, 10);
        assert_eq!(usage.output_tokens, 42);
        assert_eq!(usage.cache_read_input_tokens, Some(5));
        assert_eq!(
            usage.extra["server_tool_use"],
            json!({"web_search_requests":1})
        );
    }
}
