//! The Responses side: each rule with a violating request and its valid twin, stored and
//! stateless conversations, safety checks, encrypted reasoning, and the SSE sequence.

mod common;

use common::*;
use hands_sim::policy::{computer_call, computer_call_with_checks, function_call, reasoning};
use hands_sim::{SimConfig, SimServer, Turn, messages as m};
use serde_json::{Value, json};

const GPT: &str = "gpt-5.5";

fn screenshot_output(call_id: &str) -> Value {
    json!({"type": "computer_call_output", "call_id": call_id,
        "output": {"type": "computer_screenshot",
            "image_url": format!("data:image/png;base64,{}", png_b64(1280, 800))}})
}

fn body(input: Value) -> Value {
    json!({"model": GPT, "tools": [{"type": "computer"}], "input": input})
}

fn call(call_id: &str) -> Value {
    json!({"type": "computer_call", "id": "cu_x", "call_id": call_id, "status": "completed",
        "actions": [{"type": "screenshot"}], "pending_safety_checks": []})
}

/// `bad` is refused with 400, exactly `message` and `param`; `good` is accepted.
async fn check(
    server: &SimServer,
    name: &str,
    bad: Value,
    good: Value,
    message: &str,
    param: Option<&str>,
) {
    let answer = openai(server, &bad).await;
    assert_eq!(answer.status, 400, "{name}: {}", answer.body);
    assert_eq!(
        answer.body["error"]["type"], "invalid_request_error",
        "{name}"
    );
    assert_eq!(answer.message(), message, "{name}");
    assert_eq!(answer.body["error"]["param"].as_str(), param, "{name}");
    let answer = openai(server, &good).await;
    assert_eq!(answer.status, 200, "{name} (valid twin): {}", answer.body);
}

#[tokio::test]
async fn authentication_and_required_fields() {
    let server = text_server();
    let answer = post(&server, "/v1/responses", &[], &body(json!("hi"))).await;
    assert_eq!(answer.status, 401);
    assert_eq!(answer.message(), m::OPENAI_KEY_REQUIRED);
    assert_eq!(answer.body["error"]["code"], Value::Null);
    let mut no_model = body(json!("hi"));
    no_model.as_object_mut().expect("object").remove("model");
    check(
        &server,
        "model",
        no_model,
        body(json!("hi")),
        &m::missing_parameter("model"),
        Some("model"),
    )
    .await;
    let mut typo = body(json!("hi"));
    typo["max_tokens"] = json!(1024);
    check(
        &server,
        "a field of the other API",
        typo,
        body(json!("hi")),
        &m::unknown_parameter("max_tokens"),
        Some("max_tokens"),
    )
    .await;
}

#[tokio::test]
async fn tool_declarations() {
    let server = text_server();
    let with = |tools: Value| json!({"model": GPT, "tools": tools, "input": "hi"});
    check(
        &server,
        "computer takes no other field",
        with(json!([{"type": "computer", "display_width": 1024}])),
        with(json!([{"type": "computer"}])),
        &m::unknown_parameter("tools[0].display_width"),
        Some("tools[0].display_width"),
    )
    .await;
    check(
        &server,
        "function needs parameters",
        with(json!([{"type": "function", "name": "browser_click"}])),
        with(json!([{"type": "function", "name": "browser_click", "parameters": {"type": "object"}}])),
        &m::missing_parameter("tools[0].parameters"),
        Some("tools[0].parameters"),
    )
    .await;
    check(
        &server,
        "function needs a name",
        with(json!([{"type": "function", "parameters": {"type": "object"}}])),
        with(json!([])),
        &m::missing_parameter("tools[0].name"),
        Some("tools[0].name"),
    )
    .await;
}

#[tokio::test]
async fn stateless_calls_and_outputs_pair_up() {
    let server = text_server();
    check(
        &server,
        "unanswered computer_call",
        body(json!([user("go"), call("call_1")])),
        body(json!([
            user("go"),
            call("call_1"),
            screenshot_output("call_1")
        ])),
        &m::no_computer_output("call_1"),
        Some("input"),
    )
    .await;
    check(
        &server,
        "output without its call",
        body(json!([user("go"), screenshot_output("call_9")])),
        body(json!([user("go")])),
        &m::no_computer_call("call_9"),
        Some("input"),
    )
    .await;
    let function = json!({"type": "function_call", "id": "fc_1", "call_id": "call_f", "name": "read_page", "arguments": "{}"});
    let function_output =
        json!({"type": "function_call_output", "call_id": "call_f", "output": "page text"});
    check(
        &server,
        "unanswered function_call",
        body(json!([user("go"), function])),
        body(json!([user("go"), function, function_output])),
        &m::no_function_output("call_f"),
        Some("input"),
    )
    .await;
    check(
        &server,
        "function output without its call",
        body(json!([user("go"), function_output])),
        body(json!([user("go")])),
        &m::no_function_call("call_f"),
        Some("input"),
    )
    .await;
}

#[tokio::test]
async fn screenshots_are_usable_images() {
    let server = text_server();
    let with_output = |output: Value| {
        body(json!([user("go"), call("call_1"),
            {"type": "computer_call_output", "call_id": "call_1", "output": output}]))
    };
    let good = with_output(json!({"type": "computer_screenshot",
        "image_url": format!("data:image/png;base64,{}", png_b64(1280, 800))}));
    check(
        &server,
        "output type",
        with_output(json!({"type": "input_image", "image_url": "data:image/png;base64,"})),
        good.clone(),
        &m::invalid_value("input_image", "'computer_screenshot'"),
        Some("input[2].output.type"),
    )
    .await;
    check(
        &server,
        "empty image_url",
        with_output(json!({"type": "computer_screenshot", "image_url": ""})),
        with_output(json!({"type": "computer_screenshot", "file_id": "file_1"})),
        &m::missing_parameter("input[2].output.image_url"),
        Some("input[2].output.image_url"),
    )
    .await;
    let answer = openai(
        &server,
        &with_output(json!({"type": "computer_screenshot",
            "image_url": format!("data:image/jpeg;base64,{}", png_b64(10, 10))})),
    )
    .await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.body["error"]["code"], "invalid_image_url");
    assert_eq!(answer.body["error"]["param"], "input[2].output.image_url");
}

#[tokio::test]
async fn function_output_images_name_a_known_detail() {
    let server = text_server();
    let with_detail = |detail: Value| {
        body(json!([user("go"),
            {"type": "function_call", "id": "fc_1", "call_id": "call_f", "name": "browser_screenshot",
             "arguments": "{\"tab_id\": null}"},
            {"type": "function_call_output", "call_id": "call_f", "output": [
                {"type": "input_text", "text": "{\"ok\":true}"},
                {"type": "input_image", "image_url": format!("data:image/png;base64,{}", png_b64(8, 8)),
                 "detail": detail}]}]))
    };
    check(
        &server,
        "unknown detail",
        with_detail(json!("ultra")),
        with_detail(json!("original")),
        &m::invalid_value("ultra", "'low', 'high', 'auto', and 'original'"),
        Some("input[2].output[1].detail"),
    )
    .await;
    for fine in [json!("auto"), json!("low"), json!("high"), Value::Null] {
        let answer = openai(&server, &with_detail(fine.clone())).await;
        assert_eq!(answer.status, 200, "{fine}: {}", answer.body);
    }
}

#[tokio::test]
async fn previous_response_id_needs_a_stored_response() {
    let server = SimServer::start(SimConfig::with_policy(|request: &Value| {
        if request.get("previous_response_id").is_some() {
            Turn::text("Done.")
        } else {
            Turn::Items(vec![computer_call(vec![json!({"type": "screenshot"})])])
        }
    }))
    .expect("start");
    let answer = openai(&server, &body(json!("Take a screenshot"))).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let response = answer.body;
    assert_eq!(response["object"], "response");
    assert_eq!(response["status"], "completed");
    assert!(
        response["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("resp_"))
    );
    let item = &response["output"][0];
    assert!(
        item["call_id"]
            .as_str()
            .is_some_and(|id| id.starts_with("call_"))
    );
    assert!(item["id"].as_str().is_some_and(|id| id.starts_with("cu_")));
    let usage = &response["usage"];
    assert_eq!(
        usage["total_tokens"],
        json!(
            usage["input_tokens"].as_u64().expect("n")
                + usage["output_tokens"].as_u64().expect("n")
        )
    );
    assert!(usage["input_tokens_details"]["cached_tokens"].is_u64());
    assert!(usage["output_tokens_details"]["reasoning_tokens"].is_u64());

    let call_id = item["call_id"].as_str().expect("call_id");
    let chained = |input: Value| {
        let mut body = body(input);
        body["previous_response_id"] = response["id"].clone();
        body
    };
    check(
        &server,
        "call of the stored response left unanswered",
        chained(json!([user("and then?")])),
        chained(json!([screenshot_output(call_id)])),
        &m::no_computer_output(call_id),
        Some("input"),
    )
    .await;
    let mut unknown = chained(json!([screenshot_output(call_id)]));
    unknown["previous_response_id"] = json!("resp_nope");
    let answer = openai(&server, &unknown).await;
    assert_eq!(
        answer.message(),
        m::previous_response_not_found("resp_nope")
    );
    assert_eq!(answer.body["error"]["param"], "previous_response_id");
    assert_eq!(answer.body["error"]["code"], "previous_response_not_found");
    let mut both = chained(json!([screenshot_output(call_id)]));
    both["conversation"] = json!("conv_1");
    assert_eq!(
        openai(&server, &both).await.message(),
        m::PREVIOUS_AND_CONVERSATION
    );

    // A response made with store:false cannot be chained to.
    let mut unstored = body(json!("Take a screenshot"));
    unstored["store"] = json!(false);
    let answer = openai(&server, &unstored).await;
    let id = answer.body["id"].as_str().expect("id").to_owned();
    let call_id = answer.body["output"][0]["call_id"]
        .as_str()
        .expect("call_id")
        .to_owned();
    let mut next = body(json!([screenshot_output(&call_id)]));
    next["previous_response_id"] = json!(id);
    assert_eq!(
        openai(&server, &next).await.message(),
        m::previous_response_not_found(&id)
    );
}

#[tokio::test]
async fn safety_checks_are_acknowledged_exactly() {
    let server = SimServer::start(SimConfig::scripted(vec![Turn::Items(vec![
        computer_call_with_checks(
            vec![json!({"type": "click", "button": "left", "x": 10, "y": 20})],
            vec![json!({"code": "malicious_instructions", "message": "The page asks for a password."})],
        ),
    ])]))
    .expect("start");
    server.set_policy(|_: &Value| Turn::text("Done."));
    let response = openai(&server, &body(json!("Log in"))).await.body;
    let item = &response["output"][0];
    let call_id = item["call_id"].as_str().expect("call_id");
    let check_id = item["pending_safety_checks"][0]["id"]
        .as_str()
        .expect("check id");
    assert!(check_id.starts_with("cu_sc_"));
    let answer_with = |acks: Value| {
        let mut output = screenshot_output(call_id);
        output["acknowledged_safety_checks"] = acks;
        let mut body = body(json!([output]));
        body["previous_response_id"] = response["id"].clone();
        body
    };
    let param = "input[0].acknowledged_safety_checks";
    check(
        &server,
        "pending check not acknowledged",
        answer_with(json!([])),
        answer_with(json!([{"id": check_id, "code": "malicious_instructions"}])),
        &m::safety_checks_unacknowledged(call_id, &[check_id.to_owned()]),
        Some(param),
    )
    .await;
    let answer = openai(
        &server,
        &answer_with(json!([{"id": check_id}, {"id": "cu_sc_invented"}])),
    )
    .await;
    assert_eq!(
        answer.message(),
        m::safety_check_not_issued("cu_sc_invented", call_id)
    );
}

#[tokio::test]
async fn stateless_reasoning_replays_encrypted_content_unchanged() {
    let server = SimServer::start(SimConfig::with_policy(|request: &Value| {
        if request["input"].is_string() {
            Turn::Items(vec![
                reasoning("Open the form first."),
                computer_call(vec![json!({"type": "screenshot"})]),
            ])
        } else {
            Turn::text("Done.")
        }
    }))
    .expect("start");
    let mut first = body(json!("Fill the form"));
    first["store"] = json!(false);
    first["include"] = json!(["reasoning.encrypted_content"]);
    let response = openai(&server, &first).await.body;
    let output = response["output"].as_array().expect("output").clone();
    let blob = output[0]["encrypted_content"]
        .as_str()
        .expect("encrypted")
        .to_owned();
    assert!(blob.starts_with("gAAAA"));
    let call_id = output[1]["call_id"].as_str().expect("call_id").to_owned();
    let replay = |reasoning_item: Value| {
        let mut body = body(json!([
            user("Fill the form"),
            reasoning_item,
            output[1],
            screenshot_output(&call_id)
        ]));
        body["store"] = json!(false);
        body
    };
    let mut tampered = output[0].clone();
    let mut bytes = blob.clone().into_bytes();
    let last = bytes.len() - 2;
    bytes[last] = if bytes[last] == b'A' { b'B' } else { b'A' };
    tampered["encrypted_content"] = json!(String::from_utf8(bytes).expect("ascii"));
    let answer = openai(&server, &replay(tampered.clone())).await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.body["error"]["code"], "invalid_encrypted_content");
    assert_eq!(
        answer.message(),
        m::encrypted_content_unverified(tampered["encrypted_content"].as_str().expect("s"))
    );
    let mut bare = output[0].clone();
    bare.as_object_mut()
        .expect("object")
        .remove("encrypted_content");
    let rs_id = bare["id"].as_str().expect("id").to_owned();
    assert_eq!(
        openai(&server, &replay(bare)).await.message(),
        m::item_not_persisted(&rs_id)
    );
    let answer = openai(&server, &replay(output[0].clone())).await;
    assert_eq!(answer.status, 200, "{}", answer.body);

    // The reasoning item without the computer call it preceded.
    let mut alone = body(json!([user("Fill the form"), output[0]]));
    alone["store"] = json!(false);
    let answer = openai(&server, &alone).await;
    assert_eq!(answer.message(), m::reasoning_without_follower(&rs_id));
    assert_eq!(answer.body["error"]["param"], "input");
}

#[tokio::test]
async fn chained_requests_do_not_replay_the_previous_output() {
    let server = SimServer::start(SimConfig::with_policy(|request: &Value| {
        if request.get("previous_response_id").is_some() {
            Turn::text("Done.")
        } else {
            Turn::Items(vec![computer_call(vec![json!({"type": "screenshot"})])])
        }
    }))
    .expect("start");
    let response = openai(&server, &body(json!("look"))).await.body;
    let item = response["output"][0].clone();
    let call_id = item["call_id"].as_str().expect("call_id");
    let chained = |input: Value| {
        let mut body = body(input);
        body["previous_response_id"] = response["id"].clone();
        body
    };
    let item_id = item["id"].as_str().expect("id").to_owned();
    check(
        &server,
        "previous output replayed while chained",
        chained(json!([item, screenshot_output(call_id)])),
        chained(json!([screenshot_output(call_id)])),
        &m::duplicate_item(&item_id),
        Some("input"),
    )
    .await;
}

#[tokio::test]
async fn stream_sequence_numbers_and_whole_computer_calls() {
    let server = SimServer::start(SimConfig::scripted(vec![Turn::Items(vec![
        hands_sim::policy::message("Looking."),
        function_call("read_page", json!({"tab": "t1", "max_chars": 4000})),
        computer_call(vec![json!({"type": "screenshot"})]),
    ])]))
    .expect("start");
    let body = json!({"model": GPT, "stream": true, "input": "go", "tools": [{"type": "computer"},
        {"type": "function", "name": "read_page", "parameters": {"type": "object"}}]});
    let (events, clean) = sse(
        &server,
        "/v1/responses",
        &[("authorization", "Bearer sk")],
        &body,
    )
    .await;
    assert!(clean);
    for (idx, event) in events.iter().enumerate() {
        assert_eq!(event.data["sequence_number"], json!(idx), "{}", event.name);
        assert_eq!(event.data["type"], json!(event.name));
    }
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        &names[..3],
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added"
        ]
    );
    assert_eq!(names.last(), Some(&"response.completed"));
    let arguments: String = events
        .iter()
        .filter(|e| e.name == "response.function_call_arguments.delta")
        .map(|e| e.data["delta"].as_str().expect("delta"))
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&arguments).expect("json"),
        json!({"tab": "t1", "max_chars": 4000})
    );
    let completed = &events[events.len() - 1].data["response"];
    let computer_added = events
        .iter()
        .find(|e| {
            e.name == "response.output_item.added" && e.data["item"]["type"] == "computer_call"
        })
        .expect("computer call added");
    assert_eq!(computer_added.data["item"], completed["output"][2]);
    let text: String = events
        .iter()
        .filter(|e| e.name == "response.output_text.delta")
        .map(|e| e.data["delta"].as_str().expect("delta"))
        .collect();
    assert_eq!(text, "Looking.");
}

#[tokio::test]
async fn policy_must_call_only_declared_tools() {
    let server = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![computer_call(vec![json!({"type": "screenshot"})])]),
        Turn::Blocks(vec![hands_sim::policy::text("wrong protocol")]),
    ]))
    .expect("start");
    let answer = openai(&server, &json!({"model": GPT, "input": "go"})).await;
    assert_eq!(answer.status, 400);
    assert!(
        answer.message().contains("declares no computer tool"),
        "{}",
        answer.message()
    );
    let answer = openai(&server, &body(json!("go"))).await;
    assert!(
        answer.message().contains("Anthropic content blocks"),
        "{}",
        answer.message()
    );
    assert_eq!(server.counters().policy_failures, 2);
}

#[tokio::test]
async fn an_incomplete_response_ends_with_response_incomplete() {
    let server = SimServer::start(SimConfig::scripted(vec![
        Turn::stopped(Turn::text("The answer is"), "max_output_tokens"),
        Turn::stopped(Turn::text("The answer is"), "max_output_tokens"),
    ]))
    .expect("start");
    let answer = openai(&server, &json!({"model": GPT, "input": "hi"})).await;
    assert_eq!(answer.body["status"], "incomplete");
    assert_eq!(
        answer.body["incomplete_details"],
        json!({"reason": "max_output_tokens"})
    );
    let stream = json!({"model": GPT, "input": "hi", "stream": true});
    let (events, _) = sse(
        &server,
        "/v1/responses",
        &[("authorization", "Bearer sk")],
        &stream,
    )
    .await;
    assert_eq!(
        events.last().map(|e| e.name.as_str()),
        Some("response.incomplete")
    );
}

#[tokio::test]
async fn a_call_that_did_not_complete_keeps_its_status_and_takes_no_output() {
    use hands_sim::policy::with_status;
    let server = SimServer::start(SimConfig::scripted(vec![
        Turn::stopped(
            Turn::Items(vec![
                function_call("f", json!({"x": 1})),
                with_status(function_call("f", json!({"x": 2})), "incomplete"),
            ]),
            "max_output_tokens",
        ),
        Turn::text("ok"),
        Turn::text("ok"),
        Turn::Items(vec![with_status(
            function_call("f", json!({})),
            "in_progress",
        )]),
    ]))
    .expect("start");
    let tools = json!([{"type": "function", "name": "f", "parameters": {"type": "object"}}]);
    let answer = openai(
        &server,
        &json!({"model": GPT, "tools": tools, "input": "go"}),
    )
    .await;
    assert_eq!(answer.body["status"], "incomplete");
    let output = answer.body["output"].as_array().unwrap().clone();
    assert_eq!(output[0]["status"], "completed");
    assert_eq!(output[1]["status"], "incomplete");
    let id = answer.body["id"].as_str().unwrap().to_owned();
    let (done, cut) = (output[0]["call_id"].clone(), output[1]["call_id"].clone());
    let answer_to = |call_id: &Value| json!({"type": "function_call_output", "call_id": call_id, "output": "done"});
    // The cut call takes no output; the completed one still needs its own.
    let bad = json!({"model": GPT, "tools": tools, "previous_response_id": id,
        "input": [answer_to(&done), answer_to(&cut)]});
    let refused = openai(&server, &bad).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(
        refused.message(),
        m::output_for_unfinished_call(cut.as_str().unwrap(), "incomplete")
    );
    let good = json!({"model": GPT, "tools": tools, "previous_response_id": id,
        "input": [answer_to(&done)]});
    assert_eq!(openai(&server, &good).await.status, 200);
    // Replayed statelessly, the unfinished status travels with the item.
    let stateless = json!({"model": GPT, "tools": tools, "store": false,
        "input": [{"role": "user", "content": "go"}, output[0], answer_to(&done), output[1]]});
    assert_eq!(openai(&server, &stateless).await.status, 200);
    // Streamed, the item's last event carries its status.
    let streamed = json!({"model": GPT, "tools": tools, "input": "again", "stream": true});
    let (events, _) = sse(
        &server,
        "/v1/responses",
        &[("authorization", "Bearer sk")],
        &streamed,
    )
    .await;
    let done_item = events
        .iter()
        .find(|e| e.name == "response.output_item.done")
        .unwrap();
    assert_eq!(done_item.data["item"]["status"], "in_progress");
}

#[tokio::test]
async fn an_mcp_approval_request_is_emitted_and_only_an_mcp_run_may_answer_it() {
    use hands_sim::policy::mcp_approval_request;
    let server = SimServer::start(SimConfig::scripted(vec![Turn::Items(vec![
        mcp_approval_request("tickets", "delete_ticket", json!({"id": 7})),
    ])]))
    .expect("start");
    let answer = openai(&server, &json!({"model": GPT, "input": "go"})).await;
    let item = answer.body["output"][0].clone();
    assert_eq!(item["type"], "mcp_approval_request");
    let request_id = item["id"].as_str().unwrap().to_owned();
    assert!(request_id.starts_with("mcpr_"), "{request_id}");
    let approval = json!({"type": "mcp_approval_response",
        "approval_request_id": request_id, "approve": true});
    let refused = openai(
        &server,
        &json!({"model": GPT, "previous_response_id": answer.body["id"], "input": [approval]}),
    )
    .await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.message(), m::mcp_approval_unexpected(&request_id));
}

#[tokio::test]
async fn context_management_compacts_over_its_threshold_and_the_item_replays_unchanged() {
    let server = text_server();
    let mut bad = body(json!("hi"));
    bad["context_management"] = json!([{"type": "summarize"}]);
    let mut good = body(json!("hi"));
    good["context_management"] = json!([{"type": "compaction", "compact_threshold": 2000}]);
    check(
        &server,
        "unknown context management",
        bad,
        good.clone(),
        &m::unknown_context_management(0, "summarize"),
        Some("context_management[0].type"),
    )
    .await;
    let mut bad_truncation = body(json!("hi"));
    bad_truncation["truncation"] = json!("sometimes");
    assert_eq!(openai(&server, &bad_truncation).await.status, 400);

    // Under the threshold: no compaction.
    let answer = openai(&server, &good).await;
    assert_ne!(answer.body["output"][0]["type"], "compaction");
    // Over it: the output opens with a compaction item.
    let long = |input: Value| {
        let mut body = body(input);
        body["store"] = json!(false);
        body["context_management"] = json!([{"type": "compaction", "compact_threshold": 2000}]);
        body
    };
    let history = json!([user(&"the long story ".repeat(1000))]);
    let answer = openai(&server, &long(history.clone())).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let compaction = answer.body["output"][0].clone();
    assert_eq!(compaction["type"], "compaction");
    let before = answer.body["usage"]["input_tokens"]
        .as_u64()
        .expect("tokens");
    // Replayed unchanged, it stands for what came before it: fewer input tokens.
    let mut replay = history.as_array().expect("list").clone();
    replay.push(compaction.clone());
    replay.push(user("go on"));
    let answer = openai(&server, &long(Value::Array(replay.clone()))).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let after = answer.body["usage"]["input_tokens"]
        .as_u64()
        .expect("tokens");
    assert!(after < before / 2, "{before} -> {after}");
    // Changed, it is refused.
    let mut tampered = compaction;
    tampered["encrypted_content"] = json!("gAAAAforged");
    replay[1] = tampered;
    let answer = openai(&server, &long(Value::Array(replay))).await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.message(), m::compaction_unverified(1));
}
