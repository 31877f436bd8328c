//! `thread`: the conversation the server holds between requests, so a client sends only each
//! turn's new messages (anthropic 2.10's `BetaMessageThreadParam`, sent with the beta
//! `message-threads-2026-08-12`).
//!
//! `{"type": "create"}` holds the request's conversation and its answer under the answer's
//! `id`; `{"type": "continue", "previous_message_id"}` puts the held conversation in front of
//! the request's messages, and the request is then checked whole, as if it had been sent whole.
//! The rules, from the SDK's types and its thread state machine
//! (`anthropic/lib/threads/_thread_state.py`, `anthropic/types/thread_*_error.py`):
//! - an unknown or expired id is a 404 `not_found_error` with `details.error_code`
//!   `thread_not_found`; each answer is continued at most once (`thread_already_continued`,
//!   400); the answer's `model` must stay the thread's (`thread_fingerprint_mismatch`, 400);
//! - a `continue` takes `system` and `tools` from the thread and refuses them in the request;
//! - `thinking`, `context_management` and the top-level `cache_control` are fields threads do
//!   not support (`thread_unsupported_request`, 400, naming them in `details.unsupported`);
//! - the held history keeps no `cache_control` marks: each was set for the request that first
//!   sent it (the SDK drops them when it replays a history);
//! - an answer cut short by a fault is not held (the server holds a whole reply or none).
//!
//! How long a thread is held is not published; [`crate::AnthropicConfig::thread_ttl`] models it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::error::ApiError;
use crate::messages as m;

/// The beta header a request with `thread` carries.
pub(crate) const THREADS_BETA: &str = "message-threads-2026-08-12";

/// Request fields a `continue` takes from the thread (the SDK's `CREATE_ONLY_FIELDS`).
const CREATE_ONLY_FIELDS: [&str; 2] = ["system", "tools"];

/// One answer of a thread and what led to it.
#[derive(Debug)]
pub(crate) struct Held {
    /// The answer this one continued, if any.
    parent: Option<Arc<Held>>,
    /// The messages the request added, then the answer as an assistant message.
    messages: Vec<Value>,
    /// The thread's model.
    model: String,
    /// The thread's `system` and `tools`, as the creating request sent them.
    system: Option<Value>,
    tools: Option<Value>,
    /// When it was held.
    at: Instant,
}

impl Held {
    /// The whole conversation up to and including this answer.
    fn conversation(&self) -> Vec<Value> {
        let mut chain: Vec<&Held> = vec![self];
        while let Some(parent) = chain.last().and_then(|h| h.parent.as_deref()) {
            chain.push(parent);
        }
        chain
            .iter()
            .rev()
            .flat_map(|h| h.messages.iter().cloned())
            .collect()
    }
}

/// The threads the server holds, by answer id.
#[derive(Debug, Default)]
pub(crate) struct Threads {
    held: HashMap<String, Arc<Held>>,
    /// Answers already continued.
    continued: HashSet<String>,
}

/// A request with `thread`, read and expanded: the body to check (the whole conversation, the
/// thread's `system` and `tools`, no `thread`), and what to hold once it is answered.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) body: Value,
    /// The whole conversation of a `continue` (the held history, then the new messages).
    pub(crate) conversation: Option<Vec<Value>>,
    pending: Pending,
}

#[derive(Debug)]
struct Pending {
    parent: Option<Arc<Held>>,
    previous: Option<String>,
    new_messages: Vec<Value>,
    model: String,
    system: Option<Value>,
    tools: Option<Value>,
}

fn not_found(id: &str) -> ApiError {
    ApiError::new(404, "not_found_error", m::thread_not_found(id)).code("thread_not_found")
}

/// Reads `thread` from a request. `Ok(None)`: the request has none and is checked as it is.
pub(crate) fn prepare(
    body: &Value,
    betas: &[String],
    threads: &mut Threads,
    ttl: Duration,
    now: Instant,
) -> Result<Option<Prepared>, ApiError> {
    let Some(obj) = body.as_object() else {
        return Ok(None);
    };
    let Some(thread) = obj.get("thread").filter(|t| !t.is_null()) else {
        return Ok(None);
    };
    if !betas.iter().any(|b| b == THREADS_BETA) {
        // Without its beta the field is unknown, as any beta field is.
        return Err(ApiError::invalid(m::extra_input("thread")));
    }
    let previous = read_param(thread)?;
    let unsupported: Vec<&str> = [
        ("thinking", obj.get("thinking").is_some_and(thinking_on)),
        (
            "context_management",
            obj.get("context_management").is_some_and(|v| !v.is_null()),
        ),
        (
            "cache_control",
            obj.get("cache_control").is_some_and(|v| !v.is_null()),
        ),
    ]
    .into_iter()
    .filter_map(|(name, present)| present.then_some(name))
    .collect();
    if !unsupported.is_empty() {
        return Err(
            ApiError::invalid(m::thread_unsupported_request(&unsupported))
                .code("thread_unsupported_request")
                .detail("unsupported", json!(unsupported)),
        );
    }
    let model = obj
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let new_messages: Vec<Value> = match obj.get("messages") {
        Some(Value::Array(messages)) => messages.clone(),
        // Left for the request's own check to refuse.
        _ => Vec::new(),
    };
    let mut expanded: Map<String, Value> = obj.clone();
    expanded.remove("thread");

    let Some(previous) = previous else {
        return Ok(Some(Prepared {
            body: Value::Object(expanded),
            conversation: None,
            pending: Pending {
                parent: None,
                previous: None,
                new_messages,
                model,
                system: obj.get("system").cloned(),
                tools: obj.get("tools").cloned(),
            },
        }));
    };
    threads.held.retain(|_, h| now.duration_since(h.at) < ttl);
    let parent = threads
        .held
        .get(&previous)
        .cloned()
        .ok_or_else(|| not_found(&previous))?;
    if threads.continued.contains(&previous) {
        return Err(ApiError::invalid(m::thread_already_continued(&previous))
            .code("thread_already_continued"));
    }
    if let Some(field) = CREATE_ONLY_FIELDS
        .iter()
        .find(|f| obj.get(**f).is_some_and(|v| !v.is_null()))
    {
        return Err(ApiError::invalid(m::thread_create_only_field(field)));
    }
    if model != parent.model {
        return Err(
            ApiError::invalid(m::thread_fingerprint_mismatch(&["model"]))
                .code("thread_fingerprint_mismatch"),
        );
    }
    let mut conversation = parent.conversation();
    conversation.extend(new_messages.iter().cloned());
    expanded.insert("messages".into(), Value::Array(conversation.clone()));
    for (field, value) in [("system", &parent.system), ("tools", &parent.tools)] {
        if let Some(value) = value {
            expanded.insert(field.into(), value.clone());
        }
    }
    Ok(Some(Prepared {
        body: Value::Object(expanded),
        conversation: Some(conversation),
        pending: Pending {
            system: parent.system.clone(),
            tools: parent.tools.clone(),
            model,
            new_messages,
            previous: Some(previous),
            parent: Some(parent),
        },
    }))
}

/// Holds an answered request's conversation under the answer's id, and marks the answer it
/// continued as continued.
pub(crate) fn hold(threads: &mut Threads, prepared: Prepared, answer: &Value, now: Instant) {
    let Some(id) = answer.get("id").and_then(Value::as_str) else {
        return;
    };
    let pending = prepared.pending;
    let mut messages: Vec<Value> = pending.new_messages;
    messages.push(json!({"role": "assistant", "content": answer["content"].clone()}));
    for message in &mut messages {
        strip_cache_control(message);
    }
    if let Some(previous) = pending.previous {
        threads.continued.insert(previous);
    }
    threads.held.insert(
        id.to_owned(),
        Arc::new(Held {
            parent: pending.parent,
            messages,
            model: pending.model,
            system: pending.system,
            tools: pending.tools,
            at: now,
        }),
    );
}

/// `{"type": "create"}` is `None`; `{"type": "continue", "previous_message_id"}` its id.
fn read_param(thread: &Value) -> Result<Option<String>, ApiError> {
    let Some(obj) = thread.as_object() else {
        return Err(ApiError::invalid(m::THREAD_NOT_AN_OBJECT));
    };
    let (previous, allowed): (Option<String>, &[&str]) =
        match obj.get("type").and_then(Value::as_str) {
            Some("create") => (None, &["type"]),
            Some("continue") => {
                let id = match obj.get("previous_message_id") {
                    None | Some(Value::Null) => {
                        return Err(ApiError::invalid(m::field_required(
                            "thread.previous_message_id",
                        )));
                    }
                    Some(Value::String(id)) => id.clone(),
                    Some(_) => {
                        return Err(ApiError::invalid(
                            "thread.previous_message_id: Input should be a valid string",
                        ));
                    }
                };
                (Some(id), &["type", "previous_message_id"])
            }
            None if !obj.contains_key("type") => {
                return Err(ApiError::invalid(m::field_required("thread.type")));
            }
            _ => return Err(ApiError::invalid(m::THREAD_TYPE)),
        };
    if let Some(key) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(ApiError::invalid(m::extra_input(&format!("thread.{key}"))));
    }
    Ok(previous)
}

/// Whether a `thinking` field turns thinking on (`{"type": "disabled"}` does not).
fn thinking_on(thinking: &Value) -> bool {
    !thinking.is_null() && thinking.get("type").and_then(Value::as_str) != Some("disabled")
}

/// Removes every `cache_control` mark of a message's blocks (nested tool results included).
fn strip_cache_control(value: &mut Value) {
    match value {
        Value::Object(obj) => {
            obj.remove("cache_control");
            for inner in obj.values_mut() {
                strip_cache_control(inner);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_cache_control),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(body: Value, threads: &mut Threads, now: Instant) -> Prepared {
        prepare(
            &body,
            &[THREADS_BETA.to_owned()],
            threads,
            Duration::from_secs(60),
            now,
        )
        .unwrap()
        .unwrap()
    }

    #[test]
    fn a_continue_puts_the_held_history_first_without_its_cache_marks() {
        let mut threads = Threads::default();
        let now = Instant::now();
        let first = create(
            json!({"model": "m", "system": "be brief", "tools": [], "thread": {"type": "create"},
                   "messages": [{"role": "user", "content": [{"type": "text", "text": "hi",
                                 "cache_control": {"type": "ephemeral"}}]}]}),
            &mut threads,
            now,
        );
        assert!(first.body.get("thread").is_none());
        hold(
            &mut threads,
            first,
            &json!({"id": "msg_1", "content": [{"type": "text", "text": "hello"}]}),
            now,
        );
        let next = create(
            json!({"model": "m", "thread": {"type": "continue", "previous_message_id": "msg_1"},
                   "messages": [{"role": "user", "content": "again"}]}),
            &mut threads,
            now,
        );
        assert_eq!(
            next.body["messages"],
            json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]},
                   {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
                   {"role": "user", "content": "again"}])
        );
        assert_eq!(next.body["system"], "be brief");
        assert_eq!(next.body["tools"], json!([]));
        hold(
            &mut threads,
            next,
            &json!({"id": "msg_2", "content": [{"type": "text", "text": "ok"}]}),
            now,
        );
        let third = create(
            json!({"model": "m", "thread": {"type": "continue", "previous_message_id": "msg_2"},
                   "messages": []}),
            &mut threads,
            now,
        );
        assert_eq!(third.conversation.map(|c| c.len()), Some(4));
    }
}
