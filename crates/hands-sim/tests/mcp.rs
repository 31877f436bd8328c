//! Remote MCP and server tools, the API's side: the simulator connects to a real MCP server
//! (the rmcp fixture) as the APIs' servers do, lists it, asks for approval or calls it per the
//! declaration, and refuses what the APIs refuse. Effects are counted on the MCP server.

mod common;

use common::*;
use hands_sim::mcp_fixture::{ADD_NOTE, FAIL, LIST_NOTES};
use hands_sim::policy::{
    code_interpreter_call, image_generation_call, mcp_use, message, server_tool_result,
    server_tool_use,
};
use hands_sim::{Fault, McpFixture, SimConfig, SimServer, Turn};
use serde_json::{Value, json};

const GPT: &str = "gpt-5.5";

fn mcp_tool(fixture: &McpFixture, extra: Value) -> Value {
    let mut tool = json!({"type": "mcp", "server_label": "notes", "server_url": fixture.url()});
    if let (Some(tool), Some(extra)) = (tool.as_object_mut(), extra.as_object()) {
        tool.extend(extra.clone());
    }
    tool
}

fn request(tools: Value, input: Value) -> Value {
    json!({"model": GPT, "tools": tools, "input": input})
}

fn types(answer: &Answer) -> Vec<String> {
    answer.body["output"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn item<'a>(answer: &'a Answer, kind: &str) -> &'a Value {
    answer.body["output"]
        .as_array()
        .and_then(|o| o.iter().find(|i| i["type"] == kind))
        .unwrap_or_else(|| panic!("no {kind} in {}", answer.body))
}

fn scripted(turns: Vec<Turn>) -> SimServer {
    SimServer::start(SimConfig::scripted(turns)).expect("start")
}

#[tokio::test]
async fn openai_lists_once_and_calls_a_tool_that_needs_no_approval() {
    let fixture = McpFixture::start().expect("fixture");
    let sim = scripted(vec![
        Turn::Items(vec![mcp_use("notes", ADD_NOTE, json!({"text": "hi"}))]),
        Turn::text("Saved."),
    ]);
    let tools = json!([mcp_tool(&fixture, json!({"require_approval": "never"}))]);
    let first = openai(&sim, &request(tools.clone(), json!("Save hi."))).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(types(&first), ["mcp_list_tools", "mcp_call"]);
    let listed: Vec<&str> = item(&first, "mcp_list_tools")["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(listed, [ADD_NOTE, LIST_NOTES, FAIL]);
    let call = item(&first, "mcp_call");
    assert_eq!(call["output"], "Saved note 1.");
    assert_eq!(call["status"], "completed");
    assert_eq!(call["approval_request_id"], Value::Null);
    assert_eq!(fixture.notes(), ["hi"]);
    // Chained: the listing is in the conversation, so the server is not listed again.
    let id = first.body["id"].as_str().expect("id");
    let second = openai(
        &sim,
        &json!({"model": GPT, "tools": tools, "previous_response_id": id,
            "input": [{"role": "user", "content": "Thanks."}]}),
    )
    .await;
    assert_eq!(types(&second), ["message"]);
    assert!(sim.violations().is_empty());
}

#[tokio::test]
async fn openai_asks_and_calls_only_after_an_approval_bound_to_the_request() {
    let fixture = McpFixture::start().expect("fixture");
    let sim = scripted(vec![
        Turn::Items(vec![mcp_use("notes", ADD_NOTE, json!({"text": "hi"}))]),
        Turn::text("Saved."),
        Turn::Items(vec![mcp_use("notes", ADD_NOTE, json!({"text": "no"}))]),
        Turn::text("Not saved."),
    ]);
    let tools = json!([mcp_tool(&fixture, json!({}))]);
    let first = openai(&sim, &request(tools.clone(), json!("Save hi."))).await;
    assert_eq!(types(&first), ["mcp_list_tools", "mcp_approval_request"]);
    assert!(fixture.calls().is_empty(), "nothing runs before approval");
    let request_item = item(&first, "mcp_approval_request").clone();
    let request_id = request_item["id"].as_str().expect("id").to_owned();
    assert_eq!(request_item["arguments"], r#"{"text":"hi"}"#);
    let approve = |approve: bool, id: &str| json!({"type": "mcp_approval_response", "approval_request_id": id, "approve": approve});
    let chained = |previous: &Answer, input: Value| {
        json!({"model": GPT, "tools": tools, "previous_response_id": previous.body["id"],
            "input": input})
    };
    let second = openai(&sim, &chained(&first, json!([approve(true, &request_id)]))).await;
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(types(&second), ["mcp_call", "message"]);
    assert_eq!(
        item(&second, "mcp_call")["approval_request_id"],
        json!(request_id)
    );
    assert_eq!(fixture.notes(), ["hi"]);
    // A denied request is never called.
    let third = openai(
        &sim,
        &chained(&second, json!([{"role": "user", "content": "And no."}])),
    )
    .await;
    let denied_id = item(&third, "mcp_approval_request")["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let fourth = openai(&sim, &chained(&third, json!([approve(false, &denied_id)]))).await;
    assert_eq!(types(&fourth), ["message"]);
    assert_eq!(fixture.notes(), ["hi"]);
    // An approval for nothing asked, and a second answer, are refused.
    let bogus = openai(
        &sim,
        &chained(&fourth, json!([approve(true, "mcpr_forged")])),
    )
    .await;
    assert_eq!(bogus.status, 400);
    assert!(bogus.message().contains("mcpr_forged"), "{}", bogus.body);
    let stateless = json!({"model": GPT, "tools": tools, "store": false, "input": [
        {"role": "user", "content": "Save hi."}, request_item,
        approve(true, &request_id), approve(true, &request_id)]});
    let twice = openai(&sim, &stateless).await;
    assert_eq!(twice.status, 400);
    assert!(
        twice.message().contains("already answered"),
        "{}",
        twice.body
    );
    assert_eq!(fixture.calls_of(ADD_NOTE), 1);
}

#[tokio::test]
async fn openai_approval_filters_and_allowed_tools() {
    let fixture = McpFixture::start().expect("fixture");
    let cases = [
        // An empty filter covers every tool.
        (json!({"require_approval": {"never": {}}}), "mcp_call"),
        (
            json!({"require_approval": {"always": {}}}),
            "mcp_approval_request",
        ),
        (
            json!({"require_approval": {"never": {"tool_names": [LIST_NOTES]}}}),
            "mcp_approval_request",
        ),
        (
            json!({"require_approval": {"never": {"tool_names": [ADD_NOTE]}}}),
            "mcp_call",
        ),
    ];
    for (extra, want) in cases {
        let sim = scripted(vec![Turn::Items(vec![mcp_use(
            "notes",
            ADD_NOTE,
            json!({"text": "x"}),
        )])]);
        let answer = openai(
            &sim,
            &request(json!([mcp_tool(&fixture, extra.clone())]), json!("Go.")),
        )
        .await;
        assert_eq!(types(&answer)[1], want, "{extra}");
    }
    // allowed_tools hides the others from the listing, and from the model.
    let sim = scripted(vec![
        Turn::text("ok"),
        Turn::Items(vec![mcp_use("notes", ADD_NOTE, json!({"text": "x"}))]),
    ]);
    let tools = json!([mcp_tool(&fixture, json!({"allowed_tools": [LIST_NOTES]}))]);
    let listed = openai(&sim, &request(tools.clone(), json!("Go."))).await;
    assert_eq!(
        item(&listed, "mcp_list_tools")["tools"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let hidden = openai(&sim, &request(tools, json!("Go."))).await;
    assert_eq!(hidden.status, 400);
    assert!(
        hidden.message().starts_with("hands-sim:"),
        "{}",
        hidden.body
    );
}

#[tokio::test]
async fn openai_mcp_declarations_are_checked() {
    let sim = scripted(Vec::new());
    let cases = [
        json!([{"type": "mcp", "server_url": "http://127.0.0.1:9/mcp"}]),
        json!([{"type": "mcp", "server_label": "a"}]),
        json!([{"type": "mcp", "server_label": "a", "server_url": "http://127.0.0.1:9/mcp",
            "require_approval": "sometimes"}]),
        json!([{"type": "mcp", "server_label": "a", "server_url": "http://127.0.0.1:9/mcp",
            "require_approval": {"never": {"tool_names": "all"}}}]),
        json!([{"type": "mcp", "server_label": "a", "server_url": "http://127.0.0.1:9/mcp",
            "secret": "x"}]),
        json!([{"type": "mcp", "server_label": "a", "server_url": "http://127.0.0.1:9/mcp"},
            {"type": "mcp", "server_label": "a", "server_url": "http://127.0.0.1:8/mcp"}]),
        json!([{"type": "file_search"}]),
        json!([{"type": "code_interpreter"}]),
        json!([{"type": "code_interpreter", "container": "cntr_never_made"}]),
    ];
    for tools in cases {
        let answer = openai(&sim, &request(tools.clone(), json!("Go."))).await;
        assert_eq!(answer.status, 400, "{tools}: {}", answer.body);
    }
    // A server that cannot be listed fails the request (424).
    let sim = scripted(vec![Turn::text("ok")]);
    let answer = openai(
        &sim,
        &request(
            json!([{"type": "mcp", "server_label": "gone", "server_url": "http://127.0.0.1:9/mcp"}]),
            json!("Go."),
        ),
    )
    .await;
    assert_eq!(answer.status, 424, "{}", answer.body);
}

#[tokio::test]
async fn openai_passes_the_token_and_a_failure_is_a_failed_call() {
    let fixture = McpFixture::with_token("tok-123").expect("fixture");
    let sim = scripted(vec![Turn::Items(vec![
        mcp_use("notes", FAIL, json!({})),
        mcp_use("notes", ADD_NOTE, json!({"text": "t"})),
    ])]);
    let tools = json!([mcp_tool(
        &fixture,
        json!({"require_approval": "never", "authorization": "tok-123"})
    )]);
    let answer = openai(&sim, &request(tools, json!("Go."))).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let calls: Vec<&Value> = answer.body["output"]
        .as_array()
        .expect("output")
        .iter()
        .filter(|i| i["type"] == "mcp_call")
        .collect();
    assert_eq!(calls[0]["status"], "failed");
    assert_eq!(calls[0]["error"]["type"], "mcp_tool_execution_error");
    assert_eq!(calls[1]["status"], "completed");
    assert!(
        fixture
            .calls()
            .iter()
            .all(|c| c.bearer.as_deref() == Some("tok-123"))
    );
    // Without the token the server cannot be listed.
    let sim = scripted(vec![Turn::text("ok")]);
    let answer = openai(
        &sim,
        &request(json!([mcp_tool(&fixture, json!({}))]), json!("Go.")),
    )
    .await;
    assert_eq!(answer.status, 424, "{}", answer.body);
}

#[tokio::test]
async fn a_failure_after_the_tools_ran_repeats_them_when_retried() {
    let fixture = McpFixture::start().expect("fixture");
    let sim = scripted(vec![Turn::Items(vec![mcp_use(
        "notes",
        ADD_NOTE,
        json!({"text": "once"}),
    )])]);
    sim.inject(Fault::ServerErrorAfterTools);
    let body = request(
        json!([mcp_tool(&fixture, json!({"require_approval": "never"}))]),
        json!("Go."),
    );
    let failed = openai(&sim, &body).await;
    assert_eq!(failed.status, 500);
    assert_eq!(fixture.notes(), ["once"], "the tool ran before the failure");
    let retried = openai(&sim, &body).await;
    assert_eq!(retried.status, 200);
    assert_eq!(fixture.notes(), ["once", "once"], "a retry runs it again");
}

#[tokio::test]
async fn openai_server_items_come_back_unchanged_and_image_generation_needs_storage() {
    let fixture = McpFixture::start().expect("fixture");
    let sim = scripted(vec![
        Turn::Items(vec![
            mcp_use("notes", ADD_NOTE, json!({"text": "hi"})),
            code_interpreter_call("print(1)", "1"),
            message("Done."),
        ]),
        Turn::text("ok"),
        Turn::Items(vec![image_generation_call("a cat"), message("Here.")]),
        Turn::text("ok"),
    ]);
    let tools = json!([mcp_tool(&fixture, json!({"require_approval": "never"})),
        {"type": "code_interpreter", "container": {"type": "auto"}},
        {"type": "image_generation"}]);
    let body = |input: Value| json!({"model": GPT, "tools": tools, "store": false, "input": input});
    let first = openai(&sim, &body(json!("Go."))).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let container = item(&first, "code_interpreter_call")["container_id"]
        .as_str()
        .expect("container id")
        .to_owned();
    assert!(container.starts_with("cntr_"));
    let mut replay: Vec<Value> = vec![json!({"role": "user", "content": "Go."})];
    replay.extend(first.body["output"].as_array().expect("output").clone());
    replay.push(json!({"role": "user", "content": "Again."}));
    let kept = openai(&sim, &body(json!(replay.clone()))).await;
    assert_eq!(kept.status, 200, "{}", kept.body);
    // A changed output is not what the server returned.
    for item in &mut replay {
        if item["type"] == "mcp_call" {
            item["output"] = json!("Saved note 99.");
        }
    }
    let changed = openai(&sim, &body(json!(replay))).await;
    assert_eq!(changed.status, 400);
    assert!(
        changed.message().starts_with("hands-sim contract:"),
        "{}",
        changed.body
    );
    // An image generation call sent back without storage is not found.
    let image = openai(&sim, &body(json!("Draw."))).await;
    assert_eq!(
        types(&image),
        ["mcp_list_tools", "image_generation_call", "message"]
    );
    let mut replay = vec![json!({"role": "user", "content": "Draw."})];
    replay.extend(image.body["output"].as_array().expect("output").clone());
    let unstored = openai(&sim, &body(json!(replay))).await;
    assert_eq!(unstored.status, 400);
    assert!(
        unstored.message().contains("not persisted"),
        "{}",
        unstored.body
    );
}

fn claude_request(fixture: &McpFixture, toolset: Value) -> Value {
    json!({"model": MODEL, "max_tokens": 1024,
        "messages": [{"role": "user", "content": "Save hi."}],
        "mcp_servers": [{"type": "url", "url": fixture.url(), "name": "notes"}],
        "tools": [toolset]})
}

const BETA: &str = "mcp-client-2025-11-20";

#[tokio::test]
async fn claude_connector_rules() {
    let fixture = McpFixture::start().expect("fixture");
    let sim = scripted(vec![Turn::text("ok")]);
    let toolset = json!({"type": "mcp_toolset", "mcp_server_name": "notes"});
    let good = claude_request(&fixture, toolset.clone());
    let no_beta = anthropic(&sim, &good).await;
    assert_eq!(no_beta.status, 400, "{}", no_beta.body);
    let mut orphan = good.clone();
    orphan["tools"] = json!([]);
    let mut twice = good.clone();
    twice["tools"] = json!([toolset.clone(), toolset.clone()]);
    let mut unknown = good.clone();
    unknown["tools"] = json!([{"type": "mcp_toolset", "mcp_server_name": "other"}, toolset]);
    let mut plain_http = good.clone();
    plain_http["mcp_servers"][0]["url"] = json!("http://mcp.example.com/mcp");
    let mut old_field = good.clone();
    old_field["mcp_servers"][0]["tool_configuration"] = json!({"enabled": true});
    for (name, bad) in [
        ("orphan server", orphan),
        ("two toolsets", twice),
        ("unknown server", unknown),
        ("plain http", plain_http),
        ("old field", old_field),
    ] {
        let answer = anthropic_beta(&sim, BETA, &bad).await;
        assert_eq!(answer.status, 400, "{name}: {}", answer.body);
    }
    let answer = anthropic_beta(&sim, BETA, &good).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
}

#[tokio::test]
async fn claude_calls_the_tool_and_checks_the_replay() {
    let fixture = McpFixture::start().expect("fixture");
    let sim = scripted(vec![
        Turn::Blocks(vec![
            mcp_use("notes", ADD_NOTE, json!({"text": "hi"})),
            json!({"type": "text", "text": "Saved."}),
        ]),
        Turn::text("ok"),
        Turn::Blocks(vec![mcp_use("notes", ADD_NOTE, json!({"text": "no"}))]),
    ]);
    let toolset = json!({"type": "mcp_toolset", "mcp_server_name": "notes"});
    let body = claude_request(&fixture, toolset);
    let first = anthropic_beta(&sim, BETA, &body).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let content = first.body["content"].as_array().expect("content").clone();
    assert_eq!(content[0]["type"], "mcp_tool_use");
    assert_eq!(content[0]["server_name"], "notes");
    assert_eq!(content[1]["type"], "mcp_tool_result");
    assert_eq!(content[1]["tool_use_id"], content[0]["id"]);
    assert_eq!(content[1]["content"][0]["text"], "Saved note 1.");
    assert_eq!(first.body["stop_reason"], "end_turn");
    assert_eq!(fixture.notes(), ["hi"]);
    let follow = |assistant: Vec<Value>| {
        let mut next = body.clone();
        next["messages"] = json!([{"role": "user", "content": "Save hi."},
            {"role": "assistant", "content": assistant},
            {"role": "user", "content": "Thanks."}]);
        next
    };
    let kept = anthropic_beta(&sim, BETA, &follow(content.clone())).await;
    assert_eq!(kept.status, 200, "{}", kept.body);
    let mut changed = content.clone();
    changed[1]["content"][0]["text"] = json!("Saved note 2.");
    let answer = anthropic_beta(&sim, BETA, &follow(changed)).await;
    assert!(
        answer.message().starts_with("hands-sim contract:"),
        "{}",
        answer.body
    );
    let answer = anthropic_beta(
        &sim,
        BETA,
        &follow(vec![content[0].clone(), content[2].clone()]),
    )
    .await;
    assert_eq!(answer.status, 400);
    assert!(answer.message().contains("mcp_tool_use"), "{}", answer.body);
    // A disabled tool cannot be called.
    let disabled = json!({"type": "mcp_toolset", "mcp_server_name": "notes",
        "default_config": {"enabled": false}, "configs": {"list_notes": {"enabled": true}}});
    let answer = anthropic_beta(&sim, BETA, &claude_request(&fixture, disabled)).await;
    assert_eq!(answer.status, 400);
    assert!(
        answer.message().starts_with("hands-sim:"),
        "{}",
        answer.body
    );
    assert_eq!(fixture.calls_of(ADD_NOTE), 1);
}

#[tokio::test]
async fn claude_code_execution_gets_a_container_that_later_requests_name() {
    let sim = scripted(vec![
        Turn::Blocks(vec![
            server_tool_use("code_execution", json!({"code": "print(1)"})),
            server_tool_result(
                "code_execution_tool_result",
                json!({"type": "code_execution_result", "stdout": "1", "stderr": "",
                    "return_code": 0, "content": []}),
            ),
            json!({"type": "text", "text": "1"}),
        ]),
        Turn::text("ok"),
        Turn::text("ok"),
    ]);
    let tools = json!([{"type": "code_execution_20250825", "name": "code_execution"}]);
    let body = json!({"model": MODEL, "max_tokens": 1024, "tools": tools,
        "messages": [{"role": "user", "content": "Run."}]});
    let first = anthropic(&sim, &body).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let container = first.body["container"]["id"].as_str().expect("container");
    let content = first.body["content"].clone();
    assert_eq!(content[1]["tool_use_id"], content[0]["id"]);
    let mut next = body.clone();
    next["messages"] = json!([{"role": "user", "content": "Run."},
        {"role": "assistant", "content": content}, {"role": "user", "content": "Again."}]);
    next["container"] = json!(container);
    assert_eq!(anthropic(&sim, &next).await.status, 200);
    next["container"] = json!("container_gone");
    let gone = anthropic(&sim, &next).await;
    assert_eq!(gone.status, 400);
    assert!(gone.message().contains("container_gone"), "{}", gone.body);
}
