//! Turns on the Messages side: what the server fills in, the SSE sequence, replayed thinking,
//! prompt-cache usage and policy errors.

mod common;

use common::*;
use hands_sim::policy::{self, text, thinking, tool_use, toolset_use};
use hands_sim::{SimConfig, SimServer, Turn, Verdict, messages as m};
use serde_json::{Value, json};

fn click_turn() -> Turn {
    Turn::Blocks(vec![
        thinking("The Save button is at the top."),
        text("Clicking Save."),
        toolset_use("computer", "left_click", json!({"coordinate": [640, 60]})),
        toolset_use("computer", "screenshot", json!({})),
    ])
}

#[tokio::test]
async fn server_fills_ids_signatures_stop_reason_and_usage() {
    let server = SimServer::start(SimConfig::scripted(vec![click_turn(), Turn::text("Done.")]))
        .expect("start");
    let first = with_tools(request(json!([user("Save the file")])), json!([toolset()]));
    let answer = anthropic(&server, &first).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let message = &answer.body;
    assert_eq!(message["type"], "message");
    assert_eq!(message["role"], "assistant");
    assert_eq!(message["model"], MODEL);
    assert!(
        message["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("msg_01"))
    );
    assert_eq!(message["stop_reason"], "tool_use");
    assert_eq!(message["stop_sequence"], Value::Null);
    let content = message["content"].as_array().expect("content");
    assert!(
        content[0]["signature"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    for block in &content[2..] {
        assert!(
            block["id"]
                .as_str()
                .is_some_and(|id| id.starts_with("toolu_01"))
        );
        assert_eq!(block["toolset_name"], "computer");
    }
    let usage = &message["usage"];
    // The toolset definition alone costs about 4,500 tokens.
    assert!(
        usage["input_tokens"].as_u64().is_some_and(|n| n > 4500),
        "{usage}"
    );
    assert!(usage["output_tokens"].as_u64().is_some_and(|n| n > 0));
    for field in ["cache_creation_input_tokens", "cache_read_input_tokens"] {
        assert_eq!(usage[field], 0, "{field}");
    }

    // Answer the batch; the thinking block is replayed unmodified.
    let ids: Vec<&str> = content[2..]
        .iter()
        .map(|b| b["id"].as_str().expect("id"))
        .collect();
    let mut messages = vec![
        user("Save the file"),
        json!({"role": "assistant", "content": content}),
    ];
    messages.push(json!({"role": "user", "content": [
        computer_result(ids[0], json!([{"type": "text", "text": "OK"}])),
        computer_result(ids[1], json!([png_image(1280, 800)])),
    ]}));
    let second = with_tools(request(json!(messages)), json!([toolset()]));
    let answer = anthropic(&server, &second).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["stop_reason"], "end_turn");
    assert_eq!(
        answer.body["content"],
        json!([{"type": "text", "text": "Done."}])
    );
    assert!(server.violations().is_empty());
    assert_eq!(server.counters().accepted, 2);
}

#[tokio::test]
async fn replayed_thinking_must_be_unmodified() {
    let server = SimServer::start(SimConfig::with_policy(|request: &Value| {
        let n_messages = request["messages"].as_array().map_or(0, Vec::len);
        if n_messages == 1 {
            click_turn()
        } else {
            Turn::text("Done.")
        }
    }))
    .expect("start");
    let mut first = with_tools(request(json!([user("Save")])), json!([toolset()]));
    first["thinking"] = json!({"type": "adaptive"});
    let answer = anthropic(&server, &first).await;
    let content = answer.body["content"].clone();
    let ids: Vec<String> = content.as_array().expect("content")[2..]
        .iter()
        .map(|b| b["id"].as_str().expect("id").to_owned())
        .collect();
    let results = json!({"role": "user", "content": [
        computer_result(&ids[0], json!("OK")),
        computer_result(&ids[1], json!([png_image(1280, 800)])),
    ]});
    let replay = |assistant_content: Value| {
        let mut body = with_tools(
            request(
                json!([user("Save"), {"role": "assistant", "content": assistant_content}, results]),
            ),
            json!([toolset()]),
        );
        body["thinking"] = json!({"type": "adaptive"});
        body
    };
    assert_eq!(
        anthropic(&server, &replay(content.clone())).await.status,
        200
    );

    let mut edited = content.clone();
    edited[0]["thinking"] = json!("The Save button is at the bottom.");
    let answer = anthropic(&server, &replay(edited)).await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.message(), m::invalid_thinking_signature(1, 0));

    let mut forged = content.clone();
    forged[0]["signature"] = json!("EqQBCkgIARABGAIiQL");
    assert_eq!(
        anthropic(&server, &replay(forged)).await.message(),
        m::invalid_thinking_signature(1, 0)
    );

    // Dropping the thinking block of the last assistant turn while thinking is on.
    let stripped = json!(content.as_array().expect("content")[1..].to_vec());
    let answer = anthropic(&server, &replay(stripped)).await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.message(), m::thinking_block_required(1, "text"));
}

#[tokio::test]
async fn stream_sequence_adds_up_to_the_message() {
    let server = SimServer::start(SimConfig::scripted(vec![click_turn()])).expect("start");
    let mut body = with_tools(
        request(json!([user("Save")])),
        json!([toolset(), custom_tool("lookup")]),
    );
    body["stream"] = json!(true);
    let (events, clean) = sse(&server, "/v1/messages", &ANTHROPIC_HEADERS, &body).await;
    assert!(clean);
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names[0], "message_start");
    assert_eq!(names[1], "ping");
    assert_eq!(names[names.len() - 2], "message_delta");
    assert_eq!(names[names.len() - 1], "message_stop");
    for event in &events {
        assert_eq!(event.data["type"], json!(event.name));
    }
    let start = &events[0].data["message"];
    assert_eq!(start["content"], json!([]));
    assert_eq!(start["stop_reason"], Value::Null);

    // Rebuild the content from the events, as a client does.
    let mut blocks: Vec<Value> = Vec::new();
    let mut partial_json: Vec<String> = Vec::new();
    for event in &events {
        let data = &event.data;
        match event.name.as_str() {
            "content_block_start" => {
                blocks.push(data["content_block"].clone());
                partial_json.push(String::new());
            }
            "content_block_delta" => {
                let idx = data["index"].as_u64().expect("index") as usize;
                let delta = &data["delta"];
                match delta["type"].as_str().expect("delta type") {
                    "text_delta" => {
                        let text = format!(
                            "{}{}",
                            blocks[idx]["text"].as_str().expect("text"),
                            delta["text"].as_str().expect("text")
                        );
                        blocks[idx]["text"] = json!(text);
                    }
                    "thinking_delta" => {
                        let text = format!(
                            "{}{}",
                            blocks[idx]["thinking"].as_str().expect("thinking"),
                            delta["thinking"].as_str().expect("thinking")
                        );
                        blocks[idx]["thinking"] = json!(text);
                    }
                    "signature_delta" => blocks[idx]["signature"] = delta["signature"].clone(),
                    "input_json_delta" => {
                        partial_json[idx].push_str(delta["partial_json"].as_str().expect("json"))
                    }
                    other => panic!("unexpected delta {other}"),
                }
            }
            "content_block_stop" => {
                let idx = data["index"].as_u64().expect("index") as usize;
                if blocks[idx]["type"] == "tool_use" {
                    blocks[idx]["input"] =
                        serde_json::from_str(&partial_json[idx]).expect("input is complete JSON");
                }
            }
            _ => {}
        }
    }
    let recorded = server.last_request().expect("recorded");
    let message = recorded.response.expect("response");
    assert_eq!(json!(blocks), message["content"]);
    // Toolset members: the whole input in one input_json_delta.
    let tool_deltas = events
        .iter()
        .filter(|e| e.data["delta"]["type"] == "input_json_delta")
        .count();
    assert_eq!(tool_deltas, 2);
    let delta = &events[events.len() - 2].data;
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(
        delta["usage"]["output_tokens"],
        message["usage"]["output_tokens"]
    );
    assert_eq!(
        delta["usage"]["input_tokens"],
        message["usage"]["input_tokens"]
    );
    assert_eq!(recorded.verdict, Verdict::Accepted { stream: true });
}

#[tokio::test]
async fn custom_tool_input_streams_in_pieces() {
    let server = SimServer::start(SimConfig::scripted(vec![Turn::Blocks(vec![
        policy::tool_use("lookup", json!({"query": "a fairly long query string"})),
    ])]))
    .expect("start");
    let mut body = with_tools(request(json!([user("go")])), json!([custom_tool("lookup")]));
    body["stream"] = json!(true);
    let (events, _) = sse(&server, "/v1/messages", &ANTHROPIC_HEADERS, &body).await;
    let pieces: Vec<&str> = events
        .iter()
        .filter(|e| e.data["delta"]["type"] == "input_json_delta")
        .map(|e| e.data["delta"]["partial_json"].as_str().expect("json"))
        .collect();
    assert!(pieces.len() > 2, "{pieces:?}");
    assert_eq!(pieces[0], "");
    let input: Value = serde_json::from_str(&pieces.concat()).expect("json");
    assert_eq!(input, json!({"query": "a fairly long query string"}));
}

#[tokio::test]
async fn cache_breakpoint_prefix_is_read_on_the_next_request() {
    let server =
        SimServer::start(SimConfig::with_policy(|_: &Value| Turn::text("ok"))).expect("start");
    let mut tool = toolset();
    tool["cache_control"] = json!({"type": "ephemeral"});
    let first = with_tools(request(json!([user("one")])), json!([tool]));
    let usage = anthropic(&server, &first).await.body["usage"].clone();
    let written = usage["cache_creation_input_tokens"]
        .as_u64()
        .expect("tokens");
    assert!(written > 4000, "{usage}");
    assert_eq!(usage["cache_read_input_tokens"], 0);
    assert_eq!(
        usage["cache_creation"]["ephemeral_5m_input_tokens"],
        written
    );

    let second = with_tools(
        request(json!([user("one"), {"role": "assistant", "content": "ok"}, user("two")])),
        json!([tool]),
    );
    let usage = anthropic(&server, &second).await.body["usage"].clone();
    assert_eq!(usage["cache_read_input_tokens"], written);
    assert_eq!(usage["cache_creation_input_tokens"], 0);

    // A changed tool list is a new prefix.
    let mut changed = second.clone();
    changed["tools"][0]["configs"] = json!({"zoom": {"enabled": false}});
    let usage = anthropic(&server, &changed).await.body["usage"].clone();
    assert_eq!(usage["cache_read_input_tokens"], 0);
}

#[tokio::test]
async fn policy_errors_are_reported_not_hidden() {
    let server = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![policy::message("wrong protocol")]),
        Turn::Blocks(vec![toolset_use(
            "computer",
            "zoom",
            json!({"region": [0, 0, 10, 10]}),
        )]),
        Turn::Blocks(vec![
            toolset_use("computer", "screenshot", json!({})),
            toolset_use("computer", "screenshot", json!({})),
        ]),
    ]))
    .expect("start");
    let no_zoom = with_tools(
        request(json!([user("go")])),
        json!([{"type": "computer_toolset_20260801", "configs": {"zoom": {"enabled": false}}}]),
    );
    let answer = anthropic(&server, &no_zoom).await;
    assert_eq!(answer.status, 400);
    assert!(
        answer
            .message()
            .starts_with("hands-sim: the policy answered an Anthropic request")
    );
    let answer = anthropic(&server, &no_zoom).await;
    assert!(
        answer
            .message()
            .contains("member `zoom` of toolset `computer`"),
        "{}",
        answer.message()
    );
    let mut single = no_zoom.clone();
    single["tool_choice"] = json!({"type": "auto", "disable_parallel_tool_use": true});
    let answer = anthropic(&server, &single).await;
    assert!(
        answer.message().contains("disable_parallel_tool_use"),
        "{}",
        answer.message()
    );
    let answer = anthropic(&server, &no_zoom).await;
    assert!(
        answer.message().contains("no turn left"),
        "{}",
        answer.message()
    );
    let counters = server.counters();
    assert_eq!(counters.policy_failures, 4);
    assert_eq!(counters.violations, 0);
    assert!(matches!(
        server.requests()[0].verdict,
        Verdict::PolicyFailed(_)
    ));
}

#[tokio::test]
async fn a_panicking_policy_is_reported_and_the_server_lives_on() {
    let server = SimServer::start(SimConfig::with_policy(|request: &Value| {
        if request["messages"][0]["content"] == "boom" {
            panic!("policy bug");
        }
        Turn::text("fine")
    }))
    .expect("start");
    let answer = anthropic(&server, &request(json!([user("boom")]))).await;
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.message(),
        "hands-sim: the policy panicked: policy bug"
    );
    assert_eq!(
        anthropic(&server, &request(json!([user("calm")])))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn a_policy_can_stop_a_turn_for_another_reason() {
    let server = SimServer::start(SimConfig::scripted(vec![Turn::stopped(
        Turn::text("The answer is"),
        "max_tokens",
    )]))
    .expect("start");
    let answer = anthropic(&server, &request(json!([user("hi")]))).await;
    assert_eq!(answer.body["stop_reason"], "max_tokens");
    assert_eq!(answer.body["content"][0]["text"], "The answer is");
}

#[tokio::test]
async fn a_paused_turn_is_sent_back_last_and_continued() {
    // A paused server-tool turn with a client call in it: the call is not answered; the turn
    // goes back last and unchanged, and its continuation follows it as an assistant message.
    let paused = Turn::stopped(
        Turn::Blocks(vec![
            text("Searching…"),
            tool_use("lookup", json!({"q": "x"})),
        ]),
        "pause_turn",
    );
    let server = SimServer::start(SimConfig::scripted(vec![
        paused,
        Turn::text("Found it."),
        Turn::text("Next."),
    ]))
    .expect("start");
    let body = with_tools(
        request(json!([user("find x")])),
        json!([custom_tool("lookup")]),
    );
    let answer = anthropic(&server, &body).await;
    assert_eq!(answer.body["stop_reason"], "pause_turn");
    let turn = json!({"role": "assistant", "content": answer.body["content"].clone()});

    // Anything after the paused turn but its continuation is refused.
    let mut answered = body.clone();
    let id = answer.body["content"][1]["id"].clone();
    answered["messages"] = json!([user("find x"), turn,
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "ran"}]}]);
    let refused = anthropic(&server, &answered).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.message(), m::paused_turn_not_last(1));

    // A changed paused turn is a prefill.
    let mut changed = body.clone();
    let mut edited = turn.clone();
    edited["content"][0]["text"] = json!("Searching (edited)…");
    changed["messages"] = json!([user("find x"), edited]);
    let refused = anthropic(&server, &changed).await;
    assert_eq!(refused.message(), m::PREFILL_UNSUPPORTED);

    // Sent back last and unchanged, it is continued.
    let mut resumed = body.clone();
    resumed["messages"] = json!([user("find x"), turn.clone()]);
    let answer = anthropic(&server, &resumed).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["content"][0]["text"], "Found it.");
    // The continuation follows it as an assistant message of its own.
    let mut next = body;
    next["messages"] = json!([user("find x"), turn,
        {"role": "assistant", "content": answer.body["content"].clone()}, user("and then?")]);
    let answer = anthropic(&server, &next).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
}

#[tokio::test]
async fn a_turn_cut_at_max_tokens_can_hold_a_tool_use() {
    let server = SimServer::start(SimConfig::scripted(vec![Turn::stopped(
        Turn::Blocks(vec![tool_use("lookup", json!({"q": "x"}))]),
        "max_tokens",
    )]))
    .expect("start");
    let body = with_tools(request(json!([user("hi")])), json!([custom_tool("lookup")]));
    let answer = anthropic(&server, &body).await;
    assert_eq!(answer.body["stop_reason"], "max_tokens");
    assert_eq!(answer.body["content"][0]["type"], "tool_use");
}

/// A conversation of `turns` screenshots answered with 1280x800 images, breakpoints after the
/// tools and on the last result.
fn screenshot_conversation(turns: usize) -> Vec<Value> {
    let mut messages = vec![user("watch the screen")];
    for i in 0..turns {
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use",
            "id": format!("toolu_{i}"), "name": "screenshot", "toolset_name": "computer", "input": {}}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": format!("toolu_{i}"), "toolset_name": "computer",
            "content": [png_image(1280, 800)]}]}));
    }
    messages
}

#[tokio::test]
async fn server_clearing_reports_its_edits_and_breaks_the_cached_prefix() {
    let server =
        SimServer::start(SimConfig::with_policy(|_: &Value| Turn::text("ok"))).expect("start");
    let mut tool = toolset();
    tool["cache_control"] = json!({"type": "ephemeral"});
    let edits = json!({"edits": [{"type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": 15000},
        "keep": {"type": "tool_uses", "value": 3}}]});
    let body = |turns: usize| {
        let mut messages = screenshot_conversation(turns);
        let last = messages.len() - 1;
        messages[last]["content"][0]["cache_control"] = json!({"type": "ephemeral"});
        let mut body = with_tools(request(Value::Array(messages)), json!([tool.clone()]));
        body["context_management"] = edits.clone();
        body
    };
    // Under the trigger: nothing cleared, the prefix cached.
    let small = anthropic_beta(&server, m::CONTEXT_MANAGEMENT_BETA, &body(5)).await;
    assert_eq!(small.status, 200, "{}", small.body);
    assert_eq!(small.body["context_management"]["applied_edits"], json!([]));
    // Over it: all but the last three results cleared, and the cache reads only the tools.
    let big = anthropic_beta(&server, m::CONTEXT_MANAGEMENT_BETA, &body(12)).await;
    let applied = &big.body["context_management"]["applied_edits"][0];
    assert_eq!(applied["type"], "clear_tool_uses_20250919");
    assert_eq!(applied["cleared_tool_uses"], 9);
    assert!(applied["cleared_input_tokens"].as_u64().unwrap_or(0) > 9 * 1300);
    let usage = &big.body["usage"];
    let total = usage["input_tokens"].as_u64().unwrap_or(0)
        + usage["cache_read_input_tokens"].as_u64().unwrap_or(0)
        + usage["cache_creation_input_tokens"].as_u64().unwrap_or(0);
    assert!(total < 15000, "cleared results are not billed: {usage}");
    assert!(
        usage["cache_read_input_tokens"].as_u64().unwrap_or(0) < 5000,
        "{usage}"
    );
}
