//! The SSE events of one Response: `response.created`, `response.in_progress`, per item
//! `output_item.added` / content or argument deltas / `output_item.done`, then
//! `response.completed`, each numbered by `sequence_number` (api-contracts B, "Streaming SSE").

use serde_json::{Value, json};

use crate::config::StreamConfig;
use crate::sse::{Event, split_chars};

struct Events {
    out: Vec<Event>,
}

impl Events {
    fn push(&mut self, name: &str, mut data: Value) {
        data["type"] = json!(name);
        data["sequence_number"] = json!(self.out.len());
        self.out.push(Event::new(name, data));
    }
}

/// The events whose sum is `response`.
pub(crate) fn events(response: &Value, config: &StreamConfig) -> Vec<Event> {
    let mut ev = Events { out: Vec::new() };
    let mut pending = response.clone();
    pending["status"] = json!("in_progress");
    pending["output"] = json!([]);
    pending["usage"] = Value::Null;
    ev.push("response.created", json!({"response": pending}));
    ev.push("response.in_progress", json!({"response": pending}));

    let empty = Vec::new();
    let items = response
        .get("output")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    for (output_index, item) in items.iter().enumerate() {
        let item_id = item.get("id").cloned().unwrap_or(Value::Null);
        let mut added = item.clone();
        match item.get("type").and_then(Value::as_str).unwrap_or("") {
            "message" => {
                added["status"] = json!("in_progress");
                added["content"] = json!([]);
                ev.push(
                    "response.output_item.added",
                    json!({"output_index": output_index, "item": added}),
                );
                let parts = item
                    .get("content")
                    .and_then(Value::as_array)
                    .unwrap_or(&empty);
                for (content_index, part) in parts.iter().enumerate() {
                    let text = part.get("text").and_then(Value::as_str).unwrap_or("");
                    let at = json!({"item_id": item_id, "output_index": output_index,
                        "content_index": content_index});
                    let with = |extra: Value| {
                        let mut data = at.clone();
                        if let (Some(data), Some(extra)) = (data.as_object_mut(), extra.as_object())
                        {
                            data.extend(extra.clone());
                        }
                        data
                    };
                    let mut empty_part = part.clone();
                    empty_part["text"] = json!("");
                    ev.push(
                        "response.content_part.added",
                        with(json!({"part": empty_part})),
                    );
                    for piece in split_chars(text, config.text_chunk_chars) {
                        ev.push(
                            "response.output_text.delta",
                            with(json!({"delta": piece, "logprobs": []})),
                        );
                    }
                    ev.push(
                        "response.output_text.done",
                        with(json!({"text": text, "logprobs": []})),
                    );
                    ev.push("response.content_part.done", with(json!({"part": part})));
                }
            }
            "function_call" => {
                added["status"] = json!("in_progress");
                added["arguments"] = json!("");
                ev.push(
                    "response.output_item.added",
                    json!({"output_index": output_index, "item": added}),
                );
                let arguments = item.get("arguments").and_then(Value::as_str).unwrap_or("");
                for piece in split_chars(arguments, config.json_chunk_bytes) {
                    ev.push(
                        "response.function_call_arguments.delta",
                        json!({"item_id": item_id, "output_index": output_index, "delta": piece}),
                    );
                }
                ev.push(
                    "response.function_call_arguments.done",
                    json!({"item_id": item_id, "output_index": output_index,
                        "name": item.get("name"), "arguments": arguments}),
                );
            }
            "reasoning" => {
                added["summary"] = json!([]);
                ev.push(
                    "response.output_item.added",
                    json!({"output_index": output_index, "item": added}),
                );
                let parts = item
                    .get("summary")
                    .and_then(Value::as_array)
                    .unwrap_or(&empty);
                for (summary_index, part) in parts.iter().enumerate() {
                    let text = part.get("text").and_then(Value::as_str).unwrap_or("");
                    let at = |extra: (&str, Value)| {
                        let mut data = json!({"item_id": item_id, "output_index": output_index,
                            "summary_index": summary_index});
                        data[extra.0] = extra.1;
                        data
                    };
                    ev.push(
                        "response.reasoning_summary_part.added",
                        at(("part", json!({"type": "summary_text", "text": ""}))),
                    );
                    for piece in split_chars(text, config.text_chunk_chars) {
                        ev.push(
                            "response.reasoning_summary_text.delta",
                            at(("delta", json!(piece))),
                        );
                    }
                    ev.push(
                        "response.reasoning_summary_text.done",
                        at(("text", json!(text))),
                    );
                    ev.push(
                        "response.reasoning_summary_part.done",
                        at(("part", part.clone())),
                    );
                }
            }
            _ => {
                // computer_call and anything else arrive whole (api-contracts B: no
                // computer-specific delta events).
                ev.push(
                    "response.output_item.added",
                    json!({"output_index": output_index, "item": added}),
                );
            }
        }
        ev.push(
            "response.output_item.done",
            json!({"output_index": output_index, "item": item}),
        );
    }
    let terminal = if response.get("status").and_then(Value::as_str) == Some("incomplete") {
        "response.incomplete"
    } else {
        "response.completed"
    };
    ev.push(terminal, json!({"response": response}));
    ev.out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_of_a_message_and_a_computer_call() {
        let response = json!({"id": "resp_1", "object": "response", "status": "completed",
            "output": [
                {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "hi", "annotations": []}]},
                {"type": "computer_call", "id": "cu_1", "call_id": "call_1", "status": "completed",
                    "actions": [{"type": "screenshot"}], "pending_safety_checks": []}],
            "usage": {"input_tokens": 1}});
        let events = events(&response, &StreamConfig::default());
        let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.output_item.done",
                "response.completed"
            ]
        );
        for (idx, event) in events.iter().enumerate() {
            assert_eq!(event.data["sequence_number"], json!(idx));
            assert_eq!(event.data["type"], json!(event.name));
        }
        assert_eq!(events[8].data["item"], response["output"][1]);
    }
}
