//! `thread` (anthropic 2.10's server-held conversation): a `create` holds the conversation under
//! the answer's id, a `continue` sends only the new messages and is checked whole, and what the
//! server cannot continue is refused in the API's error shape.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use hands_sim::policy::{text, tool_use};
use hands_sim::{AnthropicConfig, Fault, SimConfig, SimServer, Turn, messages as m};
use serde_json::{Value, json};

const BETA: &str = "message-threads-2026-08-12";

fn create(messages: Value) -> Value {
    let mut body = with_tools(request(messages), json!([custom_tool("lookup")]));
    body["system"] = json!("Be brief.");
    body["thread"] = json!({"type": "create"});
    body
}

fn resume(previous: &Value, messages: Value) -> Value {
    let mut body = request(messages);
    body["thread"] = json!({"type": "continue", "previous_message_id": previous});
    body
}

fn result_for(answer: &Value, content: &str) -> Value {
    let id = answer["content"]
        .as_array()
        .and_then(|c| c.iter().find(|b| b["type"] == "tool_use"))
        .map(|b| b["id"].clone())
        .expect("a tool_use");
    json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content}]})
}

/// A server whose policy records every request it is asked to answer.
fn recording(turns: Vec<Turn>) -> (SimServer, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    let mut turns = turns.into_iter();
    let server = SimServer::start(SimConfig::with_policy(move |request: &Value| {
        kept.lock().expect("lock").push(request.clone());
        turns.next().unwrap_or_else(|| Turn::text("Done."))
    }))
    .expect("start");
    (server, seen)
}

fn lookup_turn() -> Turn {
    Turn::Blocks(vec![
        text("Looking."),
        tool_use("lookup", json!({"q": "x"})),
    ])
}

#[tokio::test]
async fn a_continue_sends_only_the_new_turn_and_is_answered_as_the_whole() {
    let (server, seen) = recording(vec![lookup_turn(), Turn::text("Found.")]);
    let first = anthropic_beta(&server, BETA, &create(json!([user("find x")]))).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let id = first.body["id"].clone();

    let next = anthropic_beta(
        &server,
        BETA,
        &resume(&id, json!([result_for(&first.body, "x is 7")])),
    )
    .await;
    assert_eq!(next.status, 200, "{}", next.body);
    assert_eq!(next.body["content"][0]["text"], "Found.");
    // The policy (the "model") saw the whole conversation with the thread's system and tools.
    let asked = seen.lock().expect("lock")[1].clone();
    assert_eq!(asked["messages"].as_array().map(Vec::len), Some(3));
    assert_eq!(asked["messages"][1]["role"], "assistant");
    assert_eq!(asked["messages"][1]["content"], first.body["content"]);
    assert_eq!(asked["system"], "Be brief.");
    assert_eq!(asked["tools"][0]["name"], "lookup");
    assert!(asked.get("thread").is_none());
    // The record keeps the wire body and the conversation it stood for.
    let recorded = server.last_request().expect("recorded");
    assert_eq!(recorded.body["messages"].as_array().map(Vec::len), Some(1));
    assert_eq!(recorded.thread_conversation.map(|c| c.len()), Some(3));

    // The chain goes on from the newest answer.
    let third = anthropic_beta(
        &server,
        BETA,
        &resume(&next.body["id"], json!([user("thanks")])),
    )
    .await;
    assert_eq!(third.status, 200, "{}", third.body);
    assert_eq!(
        seen.lock().expect("lock")[2]["messages"]
            .as_array()
            .map(Vec::len),
        Some(5)
    );
}

#[tokio::test]
async fn the_new_messages_are_checked_after_the_held_history() {
    let (server, _) = recording(vec![lookup_turn()]);
    let first = anthropic_beta(&server, BETA, &create(json!([user("find x")]))).await;
    // The held turn's tool_use must be answered first in the new messages.
    let answer = anthropic_beta(
        &server,
        BETA,
        &resume(&first.body["id"], json!([user("never mind")])),
    )
    .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    let id = first.body["content"][1]["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    assert_eq!(answer.message(), m::tool_use_without_result(1, &[id]));
    // A refused continue does not spend the answer: it can still be continued.
    let answer = anthropic_beta(
        &server,
        BETA,
        &resume(&first.body["id"], json!([result_for(&first.body, "7")])),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
}

#[tokio::test]
async fn what_cannot_be_continued_is_refused_with_its_error_code() {
    let server = text_server();
    let first = anthropic_beta(&server, BETA, &create(json!([user("hi")]))).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let id = first.body["id"].clone();

    // An id the server never held.
    let answer = anthropic_beta(
        &server,
        BETA,
        &resume(&json!("msg_nope"), json!([user("x")])),
    )
    .await;
    assert_eq!(answer.status, 404);
    assert_eq!(answer.body["error"]["type"], "not_found_error");
    assert_eq!(
        answer.body["error"]["details"]["error_code"],
        "thread_not_found"
    );
    assert_eq!(answer.message(), m::thread_not_found("msg_nope"));

    // `system` and `tools` are the thread's on a continue.
    for field in ["system", "tools"] {
        let mut body = resume(&id, json!([user("x")]));
        body[field] = if field == "system" {
            json!("Other.")
        } else {
            json!([])
        };
        let answer = anthropic_beta(&server, BETA, &body).await;
        assert_eq!(answer.status, 400);
        assert_eq!(answer.message(), m::thread_create_only_field(field));
    }
    // The model is part of the thread's fingerprint.
    let mut body = resume(&id, json!([user("x")]));
    body["model"] = json!("claude-other");
    let answer = anthropic_beta(&server, BETA, &body).await;
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.body["error"]["details"]["error_code"],
        "thread_fingerprint_mismatch"
    );

    // Each answer is continued once.
    let next = anthropic_beta(&server, BETA, &resume(&id, json!([user("again")]))).await;
    assert_eq!(next.status, 200, "{}", next.body);
    let answer = anthropic_beta(&server, BETA, &resume(&id, json!([user("again")]))).await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.body["error"]["type"], "invalid_request_error");
    assert_eq!(
        answer.body["error"]["details"]["error_code"],
        "thread_already_continued"
    );
    assert_eq!(
        answer.message(),
        m::thread_already_continued(id.as_str().expect("an id"))
    );
}

#[tokio::test]
async fn the_thread_field_has_its_shape_and_its_beta() {
    let server = text_server();
    let body = create(json!([user("hi")]));
    // Without the beta, `thread` is an unknown field.
    let answer = anthropic(&server, &body).await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.message(), m::extra_input("thread"));
    for (thread, message) in [
        (json!("create"), m::THREAD_NOT_AN_OBJECT.to_owned()),
        (json!({"type": "fork"}), m::THREAD_TYPE.to_owned()),
        (json!({}), m::field_required("thread.type")),
        (
            json!({"type": "continue"}),
            m::field_required("thread.previous_message_id"),
        ),
        (
            json!({"type": "create", "previous_message_id": "msg_1"}),
            m::extra_input("thread.previous_message_id"),
        ),
    ] {
        let mut bad = body.clone();
        bad["thread"] = thread.clone();
        let answer = anthropic_beta(&server, BETA, &bad).await;
        assert_eq!(
            (answer.status, answer.message()),
            (400, message.as_str()),
            "{thread}"
        );
    }
    // A null thread is no thread.
    let mut plain = body.clone();
    plain["thread"] = Value::Null;
    assert_eq!(anthropic(&server, &plain).await.status, 200);
    // Fields threads do not support are named in `details.unsupported`.
    let mut unsupported = body.clone();
    unsupported["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
    unsupported["cache_control"] = json!({"type": "ephemeral"});
    unsupported["max_tokens"] = json!(4096);
    let answer = anthropic_beta(&server, BETA, &unsupported).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(
        answer.body["error"]["details"],
        json!({"error_code": "thread_unsupported_request", "unsupported": ["thinking", "cache_control"]})
    );
    let mut disabled = body;
    disabled["thinking"] = json!({"type": "disabled"});
    assert_eq!(anthropic_beta(&server, BETA, &disabled).await.status, 200);
}

#[tokio::test]
async fn an_expired_thread_is_not_found() {
    let server = SimServer::start(SimConfig {
        anthropic: AnthropicConfig {
            thread_ttl: std::time::Duration::ZERO,
            ..Default::default()
        },
        ..SimConfig::with_policy(|_: &Value| Turn::text("ok"))
    })
    .expect("start");
    let first = anthropic_beta(&server, BETA, &create(json!([user("hi")]))).await;
    let answer = anthropic_beta(
        &server,
        BETA,
        &resume(&first.body["id"], json!([user("x")])),
    )
    .await;
    assert_eq!(answer.status, 404);
    assert_eq!(
        answer.body["error"]["details"]["error_code"],
        "thread_not_found"
    );
}

#[tokio::test]
async fn a_paused_turn_resumes_from_an_empty_continue() {
    let paused = Turn::stopped(Turn::text("Still searching…"), "pause_turn");
    let (server, seen) = recording(vec![paused, Turn::text("Found it.")]);
    let first = anthropic_beta(&server, BETA, &create(json!([user("find x")]))).await;
    assert_eq!(first.body["stop_reason"], "pause_turn");
    let answer = anthropic_beta(&server, BETA, &resume(&first.body["id"], json!([]))).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["content"][0]["text"], "Found it.");
    assert_eq!(
        seen.lock().expect("lock")[1]["messages"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
}

#[tokio::test]
async fn an_answer_cut_short_by_a_fault_is_not_held() {
    let server = text_server();
    server.inject(Fault::StreamError { after_events: 2 });
    let mut body = create(json!([user("hi")]));
    body["stream"] = json!(true);
    let headers = [
        ("x-api-key", "k"),
        ("anthropic-version", "2023-06-01"),
        ("anthropic-beta", BETA),
    ];
    let (events, _) = sse(&server, "/v1/messages", &headers, &body).await;
    let id = events[0].data["message"]["id"].clone();
    assert!(id.is_string(), "{events:?}");
    let answer = anthropic_beta(&server, BETA, &resume(&id, json!([user("x")]))).await;
    assert_eq!(answer.status, 404, "{}", answer.body);
}
