//! The SSE events of one Message: `message_start`, per block `content_block_start` / deltas /
//! `content_block_stop`, `message_delta`, `message_stop`, with `ping`s between
//! (api-contracts A, "Streaming").

use serde_json::{Value, json};

use crate::config::StreamConfig;
use crate::sse::{Event, split_chars};

struct Events<'a> {
    out: Vec<Event>,
    config: &'a StreamConfig,
    since_ping: usize,
}

impl Events<'_> {
    fn push(&mut self, name: &str, data: Value) {
        self.out.push(Event::new(name, data));
        self.since_ping += 1;
        if self.config.ping_every > 0 && self.since_ping >= self.config.ping_every {
            self.ping();
        }
    }

    fn ping(&mut self) {
        self.out.push(Event::new("ping", json!({"type": "ping"})));
        self.since_ping = 0;
    }
}

/// The events whose sum is `message`.
pub(crate) fn events(message: &Value, config: &StreamConfig) -> Vec<Event> {
    let mut ev = Events {
        out: Vec::new(),
        config,
        since_ping: 0,
    };
    let usage = message.get("usage").cloned().unwrap_or(json!({}));
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["stop_sequence"] = Value::Null;
    if let Some(start) = start.as_object_mut() {
        start.remove("container");
    }
    start["usage"]["output_tokens"] = json!(1);
    ev.push(
        "message_start",
        json!({"type": "message_start", "message": start}),
    );
    ev.ping();

    let empty = Vec::new();
    let blocks = message
        .get("content")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    for (index, block) in blocks.iter().enumerate() {
        let block_type = block.get("type").and_then(Value::as_str).unwrap_or("");
        let delta =
            |delta: Value| json!({"type": "content_block_delta", "index": index, "delta": delta});
        match block_type {
            "text" => {
                ev.push(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": index,
                        "content_block": {"type": "text", "text": ""}}),
                );
                let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                for piece in split_chars(text, config.text_chunk_chars) {
                    ev.push(
                        "content_block_delta",
                        delta(json!({"type": "text_delta", "text": piece})),
                    );
                }
            }
            // Server-run uses stream their input as a client tool's does.
            "tool_use" | "mcp_tool_use" | "server_tool_use" => {
                let mut start_block = block.clone();
                start_block["input"] = json!({});
                ev.push(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": index,
                        "content_block": start_block}),
                );
                let input = block.get("input").cloned().unwrap_or(json!({})).to_string();
                if block.get("toolset_name").is_some() {
                    // Toolset members: the whole input in one delta (api-contracts A).
                    ev.push(
                        "content_block_delta",
                        delta(json!({"type": "input_json_delta", "partial_json": input})),
                    );
                } else {
                    ev.push(
                        "content_block_delta",
                        delta(json!({"type": "input_json_delta", "partial_json": ""})),
                    );
                    for piece in split_chars(&input, config.json_chunk_bytes) {
                        ev.push(
                            "content_block_delta",
                            delta(json!({"type": "input_json_delta", "partial_json": piece})),
                        );
                    }
                }
            }
            "thinking" => {
                ev.push(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": index,
                        "content_block": {"type": "thinking", "thinking": ""}}),
                );
                let text = block.get("thinking").and_then(Value::as_str).unwrap_or("");
                for piece in split_chars(text, config.text_chunk_chars) {
                    ev.push(
                        "content_block_delta",
                        delta(json!({"type": "thinking_delta", "thinking": piece})),
                    );
                }
                let signature = block.get("signature").cloned().unwrap_or(json!(""));
                ev.push(
                    "content_block_delta",
                    delta(json!({"type": "signature_delta", "signature": signature})),
                );
            }
            "compaction" => {
                // The summary arrives in a `compaction_delta` (anthropic 2.10's
                // `BetaCompactionContentBlockDelta`); the signature with the start.
                let mut start = block.clone();
                start["content"] = Value::Null;
                ev.push(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": index, "content_block": start}),
                );
                ev.push(
                    "content_block_delta",
                    delta(json!({"type": "compaction_delta", "content": block.get("content")})),
                );
            }
            _ => {
                // redacted_thinking and anything else arrive whole in the start event.
                ev.push(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": index,
                        "content_block": block}),
                );
            }
        }
        ev.push(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        );
    }
    let mut delta = json!({"type": "message_delta",
    "delta": {"stop_reason": message.get("stop_reason"), "stop_sequence": null,
        "container": message.get("container")},
    "usage": {
        "input_tokens": usage.get("input_tokens"),
        "cache_creation_input_tokens": usage.get("cache_creation_input_tokens"),
        "cache_read_input_tokens": usage.get("cache_read_input_tokens"),
        "output_tokens": usage.get("output_tokens"),
    }});
    if let Some(context) = message.get("context_management") {
        delta["context_management"] = context.clone();
    }
    ev.push("message_delta", delta);
    ev.out
        .push(Event::new("message_stop", json!({"type": "message_stop"})));
    ev.out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_of_a_text_and_a_toolset_call() {
        let message = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [
                {"type": "text", "text": "abcdef"},
                {"type": "tool_use", "id": "toolu_1", "name": "left_click", "toolset_name": "computer",
                    "input": {"coordinate": [1, 2]}}],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 5, "output_tokens": 9}});
        let config = StreamConfig {
            text_chunk_chars: 3,
            json_chunk_bytes: 4,
            ping_every: 0,
        };
        let names: Vec<String> = events(&message, &config)
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(
            names,
            [
                "message_start",
                "ping",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
    }
}
