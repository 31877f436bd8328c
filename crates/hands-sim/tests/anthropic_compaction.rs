//! Anthropic compaction: a `compact_20260112` edit over its trigger opens the answer with a
//! signed `compaction` block (alone, with `stop_reason: "compaction"`, under
//! `pause_after_compaction`); the `compaction` parameter answers with the block alone; a replayed
//! block must be unchanged, and the server drops what it summarizes.

mod common;

use common::*;
use hands_sim::{SimConfig, SimServer, Turn, messages as m};
use serde_json::{Value, json};

const COMPACT_BETA: &str = "compact-2026-01-12";
const REQUEST_BETA: &str = "compact-2026-09-04";

/// A user message of about `tokens` tokens (the stand-in counts four bytes a token).
fn long_user(tokens: usize) -> Value {
    user(&"word ".repeat(tokens * 4 / 5))
}

fn with_edit(messages: Value, pause: bool) -> Value {
    let mut body = request(messages);
    body["context_management"] = json!({"edits": [{"type": "compact_20260112",
        "trigger": {"type": "input_tokens", "value": 50_000}, "pause_after_compaction": pause}]});
    body
}

/// A beta header, a change to a good compaction request, and the error the change earns.
type Refusal = (&'static str, fn(&mut Value), String);

fn scripted(turns: Vec<Turn>) -> SimServer {
    SimServer::start(SimConfig::scripted(turns)).expect("start")
}

fn assistant(content: &Value) -> Value {
    json!({"role": "assistant", "content": content})
}

#[tokio::test]
async fn an_edit_over_its_trigger_opens_the_answer_with_a_signed_summary() {
    let server = scripted(vec![Turn::text("Short."), Turn::text("Long.")]);
    // Under the trigger: no compaction.
    let short = anthropic_beta(
        &server,
        COMPACT_BETA,
        &with_edit(json!([user("hi")]), false),
    )
    .await;
    assert_eq!(short.status, 200, "{}", short.body);
    assert_eq!(short.body["content"][0]["type"], "text");
    // Over it: the summary first, then the model's turn.
    let body = with_edit(json!([long_user(60_000)]), false);
    let long = anthropic_beta(&server, COMPACT_BETA, &body).await;
    assert_eq!(long.status, 200, "{}", long.body);
    let block = &long.body["content"][0];
    assert_eq!(block["type"], "compaction");
    assert_eq!(block["content"], m::compaction_summary(1, None));
    assert!(block["signature"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(long.body["content"][1]["text"], "Long.");
    assert_eq!(long.body["stop_reason"], "end_turn");
    // Without its beta, the edit is refused.
    let refused = anthropic_beta(
        &server,
        m::CONTEXT_MANAGEMENT_BETA,
        &with_edit(json!([user("hi")]), false),
    )
    .await;
    assert_eq!(refused.status, 400);
    assert_eq!(refused.message(), m::compact_edit_needs_beta(0));
}

#[tokio::test]
async fn a_paused_compaction_keeps_the_models_turn_and_later_requests_are_billed_from_it() {
    let server = scripted(vec![Turn::text("Went on."), Turn::text("Later.")]);
    let first_messages = json!([long_user(60_000)]);
    let paused = anthropic_beta(
        &server,
        COMPACT_BETA,
        &with_edit(first_messages.clone(), true),
    )
    .await;
    assert_eq!(paused.status, 200, "{}", paused.body);
    assert_eq!(paused.body["stop_reason"], "compaction");
    assert_eq!(paused.body["content"].as_array().map(Vec::len), Some(1));
    let compaction = assistant(&paused.body["content"]);

    // Sent back last, the compaction is continued: the script's turn was kept for this request.
    let mut whole = first_messages.as_array().cloned().unwrap_or_default();
    whole.push(compaction.clone());
    let went_on = anthropic_beta(&server, COMPACT_BETA, &with_edit(json!(whole), true)).await;
    assert_eq!(went_on.status, 200, "{}", went_on.body);
    assert_eq!(went_on.body["content"][0]["text"], "Went on.");
    // The server dropped what the summary replaced: the prompt is the summary and nothing else.
    assert!(
        went_on.body["usage"]["input_tokens"]
            .as_u64()
            .unwrap_or(u64::MAX)
            < 1_000,
        "{}",
        went_on.body["usage"]
    );

    // The client may drop it too: the conversation then opens with the compaction.
    let dropped = json!([
        compaction,
        assistant(&went_on.body["content"]),
        user("and then?")
    ]);
    let later = anthropic_beta(&server, COMPACT_BETA, &with_edit(dropped, true)).await;
    assert_eq!(later.status, 200, "{}", later.body);
    assert_eq!(later.body["content"][0]["text"], "Later.");
}

#[tokio::test]
async fn a_changed_or_misplaced_summary_is_refused() {
    let server = scripted(vec![]);
    let paused = anthropic_beta(
        &server,
        COMPACT_BETA,
        &with_edit(json!([long_user(60_000)]), true),
    )
    .await;
    let mut changed = paused.body["content"].clone();
    changed[0]["content"] = json!("A summary the client wrote.");
    let answer = anthropic_beta(
        &server,
        COMPACT_BETA,
        &with_edit(json!([assistant(&changed)]), true),
    )
    .await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.message(), m::invalid_compaction_signature(0, 0));

    // In a user message it is not a block the API takes.
    let misplaced = json!([{"role": "user", "content": paused.body["content"]}]);
    let answer = anthropic_beta(&server, COMPACT_BETA, &with_edit(misplaced, true)).await;
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.message(),
        "messages.0.content.0: `compaction` blocks are not allowed in `user` messages"
    );
    // A conversation that opens with the assistant needs a compaction first.
    let answer = anthropic_beta(
        &server,
        COMPACT_BETA,
        &request(json!([
            assistant(&json!([{"type": "text", "text": "hi"}])),
            user("x")
        ])),
    )
    .await;
    assert_eq!(answer.message(), m::FIRST_MESSAGE_USER);
}

#[tokio::test]
async fn the_compaction_parameter_answers_with_the_summary_alone() {
    let server = scripted(vec![Turn::text("After.")]);
    let mut body = request(json!([
        user("a"),
        assistant(&json!([{"type": "text", "text": "b"}])),
        user("c")
    ]));
    body["compaction"] = json!({"type": "summarize", "instructions": "Keep names."});
    let compacted = anthropic_beta(&server, REQUEST_BETA, &body).await;
    assert_eq!(compacted.status, 200, "{}", compacted.body);
    assert_eq!(compacted.body["stop_reason"], "compaction");
    assert_eq!(
        compacted.body["content"],
        json!([{"type": "compaction", "content": m::compaction_summary(3, Some("Keep names.")),
            "signature": compacted.body["content"][0]["signature"]}])
    );
    // The next request sends it first, in place of what it summarizes, and the model answers.
    let next = request(json!([
        assistant(&compacted.body["content"]),
        user("go on")
    ]));
    let after = anthropic_beta(&server, REQUEST_BETA, &next).await;
    assert_eq!(after.status, 200, "{}", after.body);
    assert_eq!(after.body["content"][0]["text"], "After.");

    // What the API refuses with it.
    let refusals: [Refusal; 5] = [
        ("", |_| {}, m::compaction_needs_beta()),
        (
            REQUEST_BETA,
            |b| b["context_management"] = json!({"edits": []}),
            m::COMPACTION_WITH_CONTEXT_MANAGEMENT.to_owned(),
        ),
        (
            REQUEST_BETA,
            |b| b["stop_sequences"] = json!(["END"]),
            m::compaction_with_reply_field("stop_sequences"),
        ),
        (
            REQUEST_BETA,
            |b| {
                b["tools"] = json!([custom_tool("lookup")]);
                b["tool_choice"] = json!({"type": "any"});
            },
            m::compaction_with_reply_field("tool_choice: any"),
        ),
        (
            REQUEST_BETA,
            |b| b["compaction"] = json!({"type": "truncate"}),
            "compaction: Input tag 'truncate' found using 'type' does not match any of the expected tags: 'summarize'".to_owned(),
        ),
    ];
    for (beta, edit, why) in refusals {
        let mut bad = body.clone();
        edit(&mut bad);
        let answer = if beta.is_empty() {
            anthropic(&server, &bad).await
        } else {
            anthropic_beta(
                &server,
                &format!("{beta},{}", m::CONTEXT_MANAGEMENT_BETA),
                &bad,
            )
            .await
        };
        assert_eq!(answer.status, 400, "{bad}");
        assert_eq!(answer.message(), why);
    }
}

#[tokio::test]
async fn a_streamed_compaction_arrives_in_a_compaction_delta() {
    let server = scripted(vec![]);
    let mut body = with_edit(json!([long_user(60_000)]), true);
    body["stream"] = json!(true);
    let headers = [
        ANTHROPIC_HEADERS[0],
        ANTHROPIC_HEADERS[1],
        ("anthropic-beta", COMPACT_BETA),
    ];
    let (events, clean) = sse(&server, "/v1/messages", &headers, &body).await;
    assert!(clean);
    let start = events
        .iter()
        .find(|e| e.name == "content_block_start")
        .expect("a block");
    assert_eq!(start.data["content_block"]["type"], "compaction");
    assert!(start.data["content_block"]["signature"].is_string());
    let delta = events
        .iter()
        .find(|e| e.name == "content_block_delta")
        .expect("a delta");
    assert_eq!(delta.data["delta"]["type"], "compaction_delta");
    assert_eq!(
        delta.data["delta"]["content"],
        m::compaction_summary(1, None)
    );
    let stop = events
        .iter()
        .find(|e| e.name == "message_delta")
        .expect("the end");
    assert_eq!(stop.data["delta"]["stop_reason"], "compaction");
}

#[tokio::test]
async fn a_conversation_that_ends_mid_turn_or_asks_a_format_is_not_compacted() {
    let server = scripted(vec![Turn::stopped(
        Turn::Blocks(vec![hands_sim::policy::text("Still searching.")]),
        "pause_turn",
    )]);
    let paused = anthropic(&server, &request(json!([user("search")]))).await;
    assert_eq!(paused.body["stop_reason"], "pause_turn");
    let mut body = request(json!([user("search"), assistant(&paused.body["content"])]));
    body["compaction"] = json!({"type": "summarize"});
    let answer = anthropic_beta(&server, REQUEST_BETA, &body).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(answer.message(), m::COMPACTION_MID_TURN);

    let mut body = request(json!([user("a")]));
    body["compaction"] = json!({"type": "summarize"});
    body["output_config"] = json!({"format": {"type": "json_schema", "schema": {}}});
    let answer = anthropic_beta(&server, REQUEST_BETA, &body).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(
        answer.message(),
        m::compaction_with_reply_field("output_config.format")
    );
}
