//! Responses API streaming: typed SSE events, and the accumulator that hands out completed
//! output items in order and returns the final response.
//!
//! Spec: api-contracts B, "Streaming SSE"; openai-browser-desktop-drivers,
//! "Transmitir y reanudar una ejecución" (eager execution of completed items, in order).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::types::{Item, Response};
use crate::error::StreamErrorKind;
use crate::verbatim;

/// One streamed event, with its `sequence_number`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseEvent {
    /// The event's `sequence_number`.
    pub sequence_number: Option<u64>,
    /// What happened.
    pub kind: ResponseEventKind,
}

/// The events this crate types; the rest are [`ResponseEventKind::Other`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResponseEventKind {
    /// `response.created`.
    Created(Box<Response>),
    /// `response.in_progress`.
    InProgress(Box<Response>),
    /// `response.output_item.added`: an item begins (a computer call arrives whole here).
    OutputItemAdded {
        /// Index in `output`.
        output_index: usize,
        /// The item as added.
        item: Item,
    },
    /// `response.output_item.done`: an item is complete and may be executed.
    OutputItemDone {
        /// Index in `output`.
        output_index: usize,
        /// The complete item.
        item: Item,
    },
    /// `response.content_part.added`.
    ContentPartAdded {
        /// The message item.
        item_id: String,
        /// Index in `output`.
        output_index: usize,
        /// Index in the item's content.
        content_index: usize,
        /// The part, verbatim.
        part: Value,
    },
    /// `response.content_part.done`.
    ContentPartDone {
        /// The message item.
        item_id: String,
        /// Index in `output`.
        output_index: usize,
        /// Index in the item's content.
        content_index: usize,
        /// The part, verbatim.
        part: Value,
    },
    /// `response.output_text.delta`.
    OutputTextDelta {
        /// The message item.
        item_id: String,
        /// Index in `output`.
        output_index: usize,
        /// Index in the item's content.
        content_index: usize,
        /// The new text.
        delta: String,
    },
    /// `response.output_text.done`.
    OutputTextDone {
        /// The message item.
        item_id: String,
        /// Index in `output`.
        output_index: usize,
        /// Index in the item's content.
        content_index: usize,
        /// The whole text.
        text: String,
    },
    /// `response.function_call_arguments.delta`: never execute on these.
    FunctionCallArgumentsDelta {
        /// The function call item.
        item_id: String,
        /// Index in `output`.
        output_index: usize,
        /// A piece of the arguments text.
        delta: String,
    },
    /// `response.function_call_arguments.done`.
    FunctionCallArgumentsDone {
        /// The function call item.
        item_id: String,
        /// Index in `output`.
        output_index: usize,
        /// The function's name, when sent.
        name: Option<String>,
        /// The whole arguments text.
        arguments: String,
    },
    /// `response.reasoning_summary_text.delta`.
    ReasoningSummaryTextDelta {
        /// The reasoning item.
        item_id: String,
        /// Index in `output`.
        output_index: usize,
        /// Index in the summary.
        summary_index: usize,
        /// The new text.
        delta: String,
    },
    /// `response.completed`: the final response.
    Completed(Box<Response>),
    /// `response.failed`: the final response, with `error`.
    Failed(Box<Response>),
    /// `response.incomplete`: the final response, with `incomplete_details`.
    Incomplete(Box<Response>),
    /// Any other event, verbatim (ignored by the accumulator).
    Other {
        /// The event's `type`.
        event_type: String,
        /// The event's data.
        data: Value,
    },
}

/// Event `type` strings.
pub mod event_types {
    /// `response.created`.
    pub const CREATED: &str = "response.created";
    /// `response.in_progress`.
    pub const IN_PROGRESS: &str = "response.in_progress";
    /// `response.output_item.added`.
    pub const OUTPUT_ITEM_ADDED: &str = "response.output_item.added";
    /// `response.output_item.done`.
    pub const OUTPUT_ITEM_DONE: &str = "response.output_item.done";
    /// `response.content_part.added`.
    pub const CONTENT_PART_ADDED: &str = "response.content_part.added";
    /// `response.content_part.done`.
    pub const CONTENT_PART_DONE: &str = "response.content_part.done";
    /// `response.output_text.delta`.
    pub const OUTPUT_TEXT_DELTA: &str = "response.output_text.delta";
    /// `response.output_text.done`.
    pub const OUTPUT_TEXT_DONE: &str = "response.output_text.done";
    /// `response.function_call_arguments.delta`.
    pub const FUNCTION_CALL_ARGUMENTS_DELTA: &str = "response.function_call_arguments.delta";
    /// `response.function_call_arguments.done`.
    pub const FUNCTION_CALL_ARGUMENTS_DONE: &str = "response.function_call_arguments.done";
    /// `response.reasoning_summary_text.delta`.
    pub const REASONING_SUMMARY_TEXT_DELTA: &str = "response.reasoning_summary_text.delta";
    /// `response.completed`.
    pub const COMPLETED: &str = "response.completed";
    /// `response.failed`.
    pub const FAILED: &str = "response.failed";
    /// `response.incomplete`.
    pub const INCOMPLETE: &str = "response.incomplete";
    /// `error`.
    pub const ERROR: &str = "error";
}

#[derive(Deserialize)]
struct ResponseWire {
    response: Response,
}

#[derive(Deserialize)]
struct ItemWire {
    output_index: usize,
    item: Item,
}

#[derive(Deserialize)]
struct PartWire {
    #[serde(default)]
    item_id: String,
    output_index: usize,
    #[serde(default)]
    content_index: usize,
    #[serde(default)]
    part: Value,
}

#[derive(Deserialize)]
struct TextWire {
    #[serde(default)]
    item_id: String,
    output_index: usize,
    #[serde(default)]
    content_index: usize,
    #[serde(default)]
    delta: String,
    #[serde(default)]
    text: String,
}

#[derive(Deserialize)]
struct ArgumentsWire {
    #[serde(default)]
    item_id: String,
    output_index: usize,
    #[serde(default)]
    delta: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: String,
}

#[derive(Deserialize)]
struct SummaryWire {
    #[serde(default)]
    item_id: String,
    output_index: usize,
    #[serde(default)]
    summary_index: usize,
    delta: String,
}

#[derive(Deserialize)]
struct SequenceWire {
    #[serde(default)]
    sequence_number: Option<u64>,
}

#[derive(Deserialize, Default)]
struct ErrorWire {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    message: Option<String>,
    /// Newer servers nest the error: `{"type":"error","error":{"type","code","message"}}`.
    #[serde(default)]
    error: Option<NestedError>,
}

#[derive(Deserialize, Default)]
struct NestedError {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    code: Option<String>,
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
/// the SSE name. An `error` event is returned as [`StreamErrorKind::ErrorEvent`]; `None` is
/// the `[DONE]` marker some compatible servers send after the final event.
pub fn parse_event(
    sse_name: Option<&str>,
    data: &str,
) -> Result<Option<ResponseEvent>, StreamErrorKind> {
    if data.trim() == "[DONE]" {
        return Ok(None);
    }
    let name = sse_name.unwrap_or("message");
    let kind = verbatim::type_of(data)
        .map_err(|err| malformed(name, err))?
        .unwrap_or_else(|| name.to_owned());
    let kind = kind.as_str();
    macro_rules! wire {
        ($ty:ty) => {
            serde_json::from_str::<$ty>(data).map_err(|err| malformed(kind, err))?
        };
    }
    use event_types as t;
    let event_kind = match kind {
        t::CREATED => ResponseEventKind::Created(Box::new(wire!(ResponseWire).response)),
        t::IN_PROGRESS => ResponseEventKind::InProgress(Box::new(wire!(ResponseWire).response)),
        t::COMPLETED => ResponseEventKind::Completed(Box::new(wire!(ResponseWire).response)),
        t::FAILED => ResponseEventKind::Failed(Box::new(wire!(ResponseWire).response)),
        t::INCOMPLETE => ResponseEventKind::Incomplete(Box::new(wire!(ResponseWire).response)),
        t::OUTPUT_ITEM_ADDED => {
            let w = wire!(ItemWire);
            ResponseEventKind::OutputItemAdded {
                output_index: w.output_index,
                item: w.item,
            }
        }
        t::OUTPUT_ITEM_DONE => {
            let w = wire!(ItemWire);
            ResponseEventKind::OutputItemDone {
                output_index: w.output_index,
                item: w.item,
            }
        }
        t::CONTENT_PART_ADDED | t::CONTENT_PART_DONE => {
            let w = wire!(PartWire);
            let (item_id, output_index, content_index, part) =
                (w.item_id, w.output_index, w.content_index, w.part);
            if kind == t::CONTENT_PART_ADDED {
                ResponseEventKind::ContentPartAdded {
                    item_id,
                    output_index,
                    content_index,
                    part,
                }
            } else {
                ResponseEventKind::ContentPartDone {
                    item_id,
                    output_index,
                    content_index,
                    part,
                }
            }
        }
        t::OUTPUT_TEXT_DELTA => {
            let w = wire!(TextWire);
            ResponseEventKind::OutputTextDelta {
                item_id: w.item_id,
                output_index: w.output_index,
                content_index: w.content_index,
                delta: w.delta,
            }
        }
        t::OUTPUT_TEXT_DONE => {
            let w = wire!(TextWire);
            ResponseEventKind::OutputTextDone {
                item_id: w.item_id,
                output_index: w.output_index,
                content_index: w.content_index,
                text: w.text,
            }
        }
        t::FUNCTION_CALL_ARGUMENTS_DELTA => {
            let w = wire!(ArgumentsWire);
            ResponseEventKind::FunctionCallArgumentsDelta {
                item_id: w.item_id,
                output_index: w.output_index,
                delta: w.delta,
            }
        }
        t::FUNCTION_CALL_ARGUMENTS_DONE => {
            let w = wire!(ArgumentsWire);
            ResponseEventKind::FunctionCallArgumentsDone {
                item_id: w.item_id,
                output_index: w.output_index,
                name: w.name,
                arguments: w.arguments,
            }
        }
        t::REASONING_SUMMARY_TEXT_DELTA => {
            let w = wire!(SummaryWire);
            ResponseEventKind::ReasoningSummaryTextDelta {
                item_id: w.item_id,
                output_index: w.output_index,
                summary_index: w.summary_index,
                delta: w.delta,
            }
        }
        t::ERROR => {
            let w = wire!(ErrorWire);
            let nested = w.error.unwrap_or_default();
            return Err(StreamErrorKind::ErrorEvent {
                error_type: nested.kind,
                code: w.code.or(nested.code),
                message: w.message.or(nested.message),
                raw: data.to_owned(),
            });
        }
        other => ResponseEventKind::Other {
            event_type: other.to_owned(),
            data: wire!(Value),
        },
    };
    Ok(Some(ResponseEvent {
        sequence_number: wire!(SequenceWire).sequence_number,
        kind: event_kind,
    }))
}

/// Collects a Responses stream: completed items as they finish, the final response at the end.
///
/// [`ResponseAccumulator::take_ready`] hands out completed items in output order, stopping at
/// the first index not yet done, so a runner can execute them eagerly without reordering (spec:
/// "Con eager, puede ejecutar por anticipado los elementos de salida completados, respetando su
/// orden"). If the final response later holds a different item at a delivered index, or drops
/// it, [`ResponseAccumulator::finish`] fails with [`StreamErrorKind::ItemChanged`]: the runner
/// stops and keeps its record of what it executed.
#[derive(Debug, Default)]
pub struct ResponseAccumulator {
    latest: Option<Response>,
    done: BTreeMap<usize, Item>,
    n_taken: usize,
    terminal: Option<Response>,
}

impl ResponseAccumulator {
    /// An empty accumulator.
    pub fn new() -> ResponseAccumulator {
        ResponseAccumulator::default()
    }

    /// Applies one event.
    pub fn apply(&mut self, event: &ResponseEvent) -> Result<(), StreamErrorKind> {
        if self.terminal.is_some() {
            return Err(StreamErrorKind::Protocol(
                "event after the final response event".into(),
            ));
        }
        match &event.kind {
            ResponseEventKind::Created(response) | ResponseEventKind::InProgress(response) => {
                self.latest = Some(Response::clone(response));
            }
            ResponseEventKind::OutputItemDone { output_index, item } => {
                if let Some(previous) = self.done.get(output_index)
                    && !same_item(previous, item)
                {
                    return Err(StreamErrorKind::ItemChanged {
                        output_index: *output_index,
                    });
                }
                self.done.insert(*output_index, item.clone());
            }
            ResponseEventKind::Completed(response)
            | ResponseEventKind::Failed(response)
            | ResponseEventKind::Incomplete(response) => {
                self.terminal = Some(Response::clone(response));
            }
            _ => {}
        }
        Ok(())
    }

    /// Completed items not yet taken, in output order from the next expected index, up to the
    /// first index that is not done yet.
    pub fn take_ready(&mut self) -> Vec<(usize, Item)> {
        let mut ready = Vec::new();
        while let Some(item) = self.done.get(&self.n_taken) {
            ready.push((self.n_taken, item.clone()));
            self.n_taken += 1;
        }
        ready
    }

    /// How many items [`ResponseAccumulator::take_ready`] has handed out.
    pub fn n_taken(&self) -> usize {
        self.n_taken
    }

    /// The response from `response.created` / `response.in_progress`, before the end.
    pub fn latest(&self) -> Option<&Response> {
        self.terminal.as_ref().or(self.latest.as_ref())
    }

    /// Whether the final event arrived.
    pub fn is_complete(&self) -> bool {
        self.terminal.is_some()
    }

    /// The final response (whatever its status: a `failed` response is returned, not an
    /// error). Fails if the final event never arrived, or if a delivered item changed.
    pub fn finish(self) -> Result<Response, StreamErrorKind> {
        let Some(mut response) = self.terminal else {
            return Err(StreamErrorKind::Ended);
        };
        if response.output.is_empty() && !self.done.is_empty() {
            // Some servers leave `output` out of the final event; the done items are it.
            let n_done = self.done.len();
            if self.done.keys().copied().eq(0..n_done) {
                response.output = self.done.into_values().collect();
            }
            return Ok(response);
        }
        for (output_index, item) in &self.done {
            match response.output.get(*output_index) {
                Some(final_item) if same_item(final_item, item) => {}
                _ => {
                    return Err(StreamErrorKind::ItemChanged {
                        output_index: *output_index,
                    });
                }
            }
        }
        Ok(response)
    }
}

/// Same JSON value (key order and spacing aside).
fn same_item(a: &Item, b: &Item) -> bool {
    a.raw_json() == b.raw_json() || a.to_value() == b.to_value()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(data: Value) -> ResponseEvent {
        parse_event(None, &data.to_string()).unwrap().unwrap()
    }

    fn item_done(idx: usize, call_id: &str) -> ResponseEvent {
        event(
            json!({"type":"response.output_item.done","sequence_number":idx + 2,"output_index":idx,
            "item":{"type":"function_call","id":format!("fc_{idx}"),"call_id":call_id,"name":"f","arguments":"{}","status":"completed"}}),
        )
    }

    fn terminal(kind: &str, output: Value) -> ResponseEvent {
        event(
            json!({"type":kind,"sequence_number":99,"response":{"id":"resp_1","object":"response",
            "status":"completed","output":output,"error":null,"incomplete_details":null,"usage":null}}),
        )
    }

    #[test]
    fn items_are_released_in_order_only() {
        let mut acc = ResponseAccumulator::new();
        acc.apply(&item_done(1, "b")).unwrap();
        assert!(acc.take_ready().is_empty(), "index 0 is not done yet");
        acc.apply(&item_done(0, "a")).unwrap();
        let ready: Vec<usize> = acc.take_ready().into_iter().map(|(i, _)| i).collect();
        assert_eq!(ready, [0, 1]);
        assert!(acc.take_ready().is_empty());
        acc.apply(&item_done(3, "d")).unwrap();
        assert!(acc.take_ready().is_empty(), "gap at 2");
    }

    #[test]
    fn changed_or_dropped_item_is_an_error() {
        let done = item_done(0, "a");
        let ResponseEventKind::OutputItemDone { item, .. } = &done.kind else {
            unreachable!()
        };
        let same = item.to_value();
        let mut acc = ResponseAccumulator::new();
        acc.apply(&done).unwrap();
        acc.apply(&terminal("response.completed", json!([same])))
            .unwrap();
        assert_eq!(acc.finish().unwrap().output.len(), 1);

        let mut changed = same.clone();
        changed["arguments"] = json!("{\"x\":1}");
        let mut acc = ResponseAccumulator::new();
        acc.apply(&done).unwrap();
        acc.apply(&terminal("response.completed", json!([changed])))
            .unwrap();
        assert!(matches!(
            acc.finish(),
            Err(StreamErrorKind::ItemChanged { output_index: 0 })
        ));

        let mut acc = ResponseAccumulator::new();
        acc.apply(&done).unwrap();
        acc.apply(&item_done(1, "b")).unwrap();
        acc.apply(&terminal("response.completed", json!([same])))
            .unwrap();
        assert!(matches!(
            acc.finish(),
            Err(StreamErrorKind::ItemChanged { output_index: 1 })
        ));
    }

    #[test]
    fn final_output_left_out_is_rebuilt_from_done_items() {
        let mut acc = ResponseAccumulator::new();
        acc.apply(&item_done(0, "a")).unwrap();
        acc.apply(&terminal("response.completed", json!([])))
            .unwrap();
        assert_eq!(acc.finish().unwrap().output.len(), 1);
    }

    #[test]
    fn no_terminal_event_is_ended() {
        let mut acc = ResponseAccumulator::new();
        acc.apply(&item_done(0, "a")).unwrap();
        assert!(matches!(acc.finish(), Err(StreamErrorKind::Ended)));
    }

    #[test]
    fn error_events_flat_and_nested() {
        let cases = [
            (
                r#"{"type":"error","code":"server_error","message":"boom","param":null,"sequence_number":4}"#,
                None,
                Some("server_error"),
            ),
            (
                r#"{"type":"error","error":{"type":"invalid_request_error","code":"bad","message":"boom"}}"#,
                Some("invalid_request_error"),
                Some("bad"),
            ),
        ];
        for (data, error_type_expect, code_expect) in cases {
            match parse_event(Some("error"), data) {
                Err(StreamErrorKind::ErrorEvent {
                    error_type,
                    code,
                    message,
                    raw,
                }) => {
                    assert_eq!(error_type.as_deref(), error_type_expect);
                    assert_eq!(code.as_deref(), code_expect);
                    assert_eq!(message.as_deref(), Some("boom"));
                    assert_eq!(raw, data);
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn unknown_events_and_done_marker() {
        let ev = event(json!({"type":"response.reasoning_summary_part.added","sequence_number":3}));
        assert_eq!(ev.sequence_number, Some(3));
        assert!(
            matches!(ev.kind, ResponseEventKind::Other { ref event_type, .. } if event_type == "response.reasoning_summary_part.added")
        );
        assert!(matches!(parse_event(None, "[DONE]"), Ok(None)));
    }
}
