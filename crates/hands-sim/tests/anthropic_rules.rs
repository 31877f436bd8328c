//! Each rule of `POST /v1/messages`: a minimal request that breaks exactly that rule gets the
//! real error shape and message, and its valid twin passes.

mod common;

use common::*;
use hands_sim::{SimServer, messages as m};
use serde_json::{Value, json};

/// `bad` is refused with 400 and exactly `message`; `good` is accepted.
async fn check(server: &SimServer, name: &str, bad: Value, good: Value, message: &str) {
    check_beta(server, name, "", bad, good, message).await;
}

async fn check_beta(
    server: &SimServer,
    name: &str,
    beta: &str,
    bad: Value,
    good: Value,
    message: &str,
) {
    let answer = anthropic_beta(server, beta, &bad).await;
    assert_eq!(answer.status, 400, "{name}: {}", answer.body);
    assert_eq!(answer.body["type"], "error", "{name}");
    assert_eq!(
        answer.body["error"]["type"], "invalid_request_error",
        "{name}"
    );
    assert!(
        answer.body["request_id"]
            .as_str()
            .is_some_and(|id| id.starts_with("req_")),
        "{name}"
    );
    assert_eq!(answer.message(), message, "{name}");
    let answer = anthropic_beta(server, beta, &good).await;
    assert_eq!(answer.status, 200, "{name} (valid twin): {}", answer.body);
}

#[tokio::test]
async fn authentication_and_version_headers() {
    let server = text_server();
    let body = request(json!([user("hi")]));
    let answer = post(
        &server,
        "/v1/messages",
        &[("anthropic-version", "2023-06-01")],
        &body,
    )
    .await;
    assert_eq!(answer.status, 401);
    assert_eq!(answer.body["error"]["type"], "authentication_error");
    assert_eq!(answer.message(), m::ANTHROPIC_KEY_REQUIRED);
    let answer = post(&server, "/v1/messages", &[("x-api-key", "k")], &body).await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.message(), m::ANTHROPIC_VERSION_REQUIRED);
    assert_eq!(anthropic(&server, &body).await.status, 200);

    let strict = SimServer::start(hands_sim::SimConfig {
        anthropic: hands_sim::AnthropicConfig {
            api_key: Some("right".into()),
            ..Default::default()
        },
        ..hands_sim::SimConfig::with_policy(|_: &Value| hands_sim::Turn::text("ok"))
    })
    .expect("start");
    let answer = anthropic(&strict, &body).await;
    assert_eq!(
        (answer.status, answer.message()),
        (401, m::ANTHROPIC_KEY_INVALID)
    );
    let recorded = strict.last_request().expect("recorded");
    assert_eq!(recorded.header("x-api-key"), Some("[redacted]"));

    // anthropic 2.10 sends its key as `Authorization: Bearer`: taken as the key.
    let bearer = |key: &'static str| [("authorization", key), ("anthropic-version", "2023-06-01")];
    let answer = post(&strict, "/v1/messages", &bearer("Bearer right"), &body).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answer = post(&strict, "/v1/messages", &bearer("Bearer wrong"), &body).await;
    assert_eq!(
        (answer.status, answer.message()),
        (401, m::ANTHROPIC_BEARER_INVALID)
    );
    assert_eq!(answer.body["error"]["type"], "authentication_error");
    let recorded = strict.last_request().expect("recorded");
    assert_eq!(recorded.header("authorization"), Some("[redacted]"));
    // Neither header, an empty bearer or another scheme: no key.
    for header in ["Bearer ", "Basic cmlnaHQ=", "right"] {
        let answer = post(&strict, "/v1/messages", &bearer(header), &body).await;
        assert_eq!(
            (answer.status, answer.message()),
            (401, m::ANTHROPIC_KEY_REQUIRED),
            "{header}"
        );
    }
    // `x-api-key` is read first when both come.
    let answer = post(
        &strict,
        "/v1/messages",
        &[
            ("x-api-key", "wrong"),
            ("authorization", "Bearer right"),
            ("anthropic-version", "2023-06-01"),
        ],
        &body,
    )
    .await;
    assert_eq!(
        (answer.status, answer.message()),
        (401, m::ANTHROPIC_KEY_INVALID)
    );
}

#[tokio::test]
async fn required_fields_and_roles() {
    let server = text_server();
    let good = request(json!([user("hi")]));
    for field in ["model", "max_tokens", "messages"] {
        let mut bad = good.clone();
        bad.as_object_mut().expect("object").remove(field);
        check(&server, field, bad, good.clone(), &m::field_required(field)).await;
    }
    let mut typo = good.clone();
    typo["max_output_tokens"] = json!(1024);
    check(
        &server,
        "a field of the other API",
        typo,
        good.clone(),
        &m::extra_input("max_output_tokens"),
    )
    .await;
    check(
        &server,
        "first message",
        request(json!([{"role": "assistant", "content": "hi"}, user("hi")])),
        good.clone(),
        m::FIRST_MESSAGE_USER,
    )
    .await;
    check(
        &server,
        "alternation",
        request(json!([user("a"), user("b")])),
        request(json!([user("a"), {"role": "assistant", "content": "x"}, user("b")])),
        &m::roles_must_alternate("user"),
    )
    .await;
    check(
        &server,
        "prefill",
        request(json!([user("a"), {"role": "assistant", "content": "The answer is"}])),
        good.clone(),
        m::PREFILL_UNSUPPORTED,
    )
    .await;
    check(
        &server,
        "empty message",
        request(json!([{"role": "user", "content": []}])),
        good,
        &m::empty_message(0),
    )
    .await;
}

fn custom_use(id: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "lookup", "input": {}})
}

fn custom_result(id: &str) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "content": "found"})
}

#[tokio::test]
async fn every_tool_use_is_answered_in_the_next_message() {
    let server = text_server();
    let tools = json!([custom_tool("lookup")]);
    let batch = json!({"role": "assistant", "content": [custom_use("toolu_a"), custom_use("toolu_b"), custom_use("toolu_c")]});
    check(
        &server,
        "unanswered tool_use",
        with_tools(
            request(json!([user("go"), {"role": "assistant", "content": [custom_use("toolu_a")]}, user("next")])),
            tools.clone(),
        ),
        with_tools(
            request(json!([user("go"), {"role": "assistant", "content": [custom_use("toolu_a")]},
                {"role": "user", "content": [custom_result("toolu_a")]}])),
            tools.clone(),
        ),
        &m::tool_use_without_result(1, &["toolu_a".into()]),
    )
    .await;
    check(
        &server,
        "batch answered only in part",
        with_tools(
            request(json!([user("go"), batch,
                {"role": "user", "content": [custom_result("toolu_a"), custom_result("toolu_b")]}])),
            tools.clone(),
        ),
        with_tools(
            request(json!([user("go"), batch,
                {"role": "user", "content": [custom_result("toolu_a"), custom_result("toolu_b"), custom_result("toolu_c")]}])),
            tools.clone(),
        ),
        &m::tool_use_without_result(1, &["toolu_c".into()]),
    )
    .await;
    check(
        &server,
        "tool_result without tool_use",
        with_tools(
            request(json!([{"role": "user", "content": [custom_result("toolu_x")]}])),
            tools.clone(),
        ),
        with_tools(request(json!([user("hi")])), tools.clone()),
        &m::unexpected_tool_result(0, 0, "toolu_x"),
    )
    .await;
    check(
        &server,
        "answer two messages late",
        with_tools(
            request(
                json!([user("go"), {"role": "assistant", "content": [custom_use("toolu_a")]},
                {"role": "user", "content": [custom_result("toolu_a")]},
                {"role": "assistant", "content": "done"},
                {"role": "user", "content": [custom_result("toolu_a")]}]),
            ),
            tools.clone(),
        ),
        with_tools(
            request(
                json!([user("go"), {"role": "assistant", "content": [custom_use("toolu_a")]},
                {"role": "user", "content": [custom_result("toolu_a")]},
                {"role": "assistant", "content": "done"}, user("thanks")]),
            ),
            tools,
        ),
        &m::unexpected_tool_result(4, 0, "toolu_a"),
    )
    .await;
    let note = json!({"type": "text", "text": "Here are the results."});
    check(
        &server,
        "results after a text block",
        with_tools(
            request(json!([user("go"), batch,
                {"role": "user", "content": [note, custom_result("toolu_a"), custom_result("toolu_b"), custom_result("toolu_c")]}])),
            json!([custom_tool("lookup")]),
        ),
        with_tools(
            request(json!([user("go"), batch,
                {"role": "user", "content": [custom_result("toolu_a"), custom_result("toolu_b"), custom_result("toolu_c"), note]}])),
            json!([custom_tool("lookup")]),
        ),
        &m::tool_results_not_first(2, 3),
    )
    .await;
}

#[tokio::test]
async fn toolset_results_echo_toolset_name_and_hold_only_text_and_images() {
    let server = text_server();
    let tools = json!([toolset(), custom_tool("lookup")]);
    let conversation = |result: Value| {
        let mut messages = vec![user("go")];
        messages.extend(computer_exchange("toolu_1", "left_click", result));
        with_tools(request(json!(messages)), tools.clone())
    };
    let ok = computer_result("toolu_1", json!([{"type": "text", "text": "OK"}]));
    check(
        &server,
        "missing toolset_name",
        conversation(json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "OK"})),
        conversation(ok.clone()),
        &m::toolset_name_missing(2, 0, "toolu_1", "computer"),
    )
    .await;
    check(
        &server,
        "other toolset_name",
        conversation(json!({"type": "tool_result", "tool_use_id": "toolu_1", "toolset_name": "browser", "content": "OK"})),
        conversation(ok.clone()),
        &m::toolset_name_mismatch(2, 0, "toolu_1", "browser", Some("computer")),
    )
    .await;
    check(
        &server,
        "document in a toolset result",
        conversation(computer_result(
            "toolu_1",
            json!([{"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}}]),
        )),
        conversation(computer_result(
            "toolu_1",
            json!([{"type": "text", "text": "OK"}, png_image(1280, 800)]),
        )),
        &m::toolset_result_content("messages.2.content.0.tool_result.content.0", "document"),
    )
    .await;
    // A custom tool's result must not claim a toolset.
    let custom = |result: Value| {
        with_tools(
            request(
                json!([user("go"), {"role": "assistant", "content": [custom_use("toolu_c")]},
                {"role": "user", "content": [result]}]),
            ),
            tools.clone(),
        )
    };
    check(
        &server,
        "toolset_name on a custom result",
        custom(json!({"type": "tool_result", "tool_use_id": "toolu_c", "toolset_name": "computer", "content": "x"})),
        custom(custom_result("toolu_c")),
        &m::toolset_name_mismatch(2, 0, "toolu_c", "computer", None),
    )
    .await;
}

/// An `is_error` result holds text only, and some: an image there (a batch's closing
/// screenshot put on its failed block) is the real API's 400, as is an empty error or an empty
/// text block.
#[tokio::test]
async fn error_results_hold_only_non_empty_text() {
    let server = text_server();
    let conversation = |result: Value| {
        let mut messages = vec![user("go")];
        messages.extend(computer_exchange("toolu_1", "left_click", result));
        with_tools(request(json!(messages)), json!([toolset()]))
    };
    let failed = |content: Value| {
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "toolset_name": "computer",
               "is_error": true, "content": content})
    };
    check(
        &server,
        "image on an error",
        conversation(failed(json!([
            {"type": "text", "text": "Error: the key is unknown"},
            png_image(1280, 800)
        ]))),
        conversation(failed(
            json!([{"type": "text", "text": "Error: the key is unknown"}]),
        )),
        &m::error_result_not_text("messages.2.content.0"),
    )
    .await;
    check(
        &server,
        "empty error",
        conversation(failed(json!([]))),
        conversation(failed(json!("Error: no"))),
        &m::error_result_empty("messages.2.content.0"),
    )
    .await;
    check(
        &server,
        "empty error string",
        conversation(failed(json!(""))),
        conversation(failed(json!("Error: no"))),
        &m::error_result_empty("messages.2.content.0"),
    )
    .await;
    check(
        &server,
        "empty text in a result",
        conversation(computer_result(
            "toolu_1",
            json!([{"type": "text", "text": ""}]),
        )),
        conversation(computer_result(
            "toolu_1",
            json!([{"type": "text", "text": "OK"}]),
        )),
        m::TEXT_NON_EMPTY,
    )
    .await;
    // The same image on a successful result is fine.
    let answer = anthropic(
        &server,
        &conversation(computer_result(
            "toolu_1",
            json!([{"type": "text", "text": "OK"}, png_image(1280, 800)]),
        )),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    check(
        &server,
        "empty image data",
        screenshot_request(image("image/png", "")),
        screenshot_request(png_image(64, 64)),
        &m::image_empty("messages.2.content.0.tool_result.content.0.image"),
    )
    .await;
}

/// hands' own answer contract, which the simulator checks beside the API's rules: toolset error
/// texts on one line, without control or bidi characters, at most 4,096 characters; no
/// screenshot while the `screenshot` member is disabled (a zoom still answers with an image).
#[tokio::test]
async fn hands_answer_contract() {
    let server = text_server();
    let conversation = |member: &str, result: Value, tools: Value| {
        let mut messages = vec![user("go")];
        messages.extend(computer_exchange("toolu_1", member, result));
        with_tools(request(json!(messages)), tools)
    };
    let failed = |text: &str| {
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "toolset_name": "computer",
               "is_error": true, "content": text})
    };
    let path = "messages.2.content.0";
    for (name, bad) in [
        ("newline", "Error: unknown member `a\nb`".to_owned()),
        ("bidi", "Error: unknown member `a\u{202e}b`".to_owned()),
        ("long", format!("Error: {}", "x".repeat(4096))),
    ] {
        let answer = anthropic(
            &server,
            &conversation("left_click", failed(&bad), json!([toolset()])),
        )
        .await;
        assert_eq!(answer.status, 400, "{name}: {}", answer.body);
        assert!(
            answer
                .message()
                .starts_with(&format!("hands-sim contract: {path}: ")),
            "{name}: {}",
            answer.message()
        );
    }
    let fine = format!("Error: {}", "x".repeat(4089));
    let answer = anthropic(
        &server,
        &conversation("left_click", failed(&fine), json!([toolset()])),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);

    let no_shots = json!([{"type": "computer_toolset_20260801", "configs": {"screenshot": {"enabled": false}}}]);
    let with_image = computer_result(
        "toolu_1",
        json!([{"type": "text", "text": "OK"}, png_image(64, 64)]),
    );
    let answer = anthropic(
        &server,
        &conversation("left_click", with_image.clone(), no_shots.clone()),
    )
    .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(
        answer.message(),
        m::hands_contract(
            "messages.2.content.0.tool_result.content.1",
            "an image in a computer toolset result while its `screenshot` member is disabled"
        )
    );
    let zoomed = computer_result("toolu_1", json!([png_image(64, 64)]));
    assert_eq!(
        anthropic(&server, &conversation("zoom", zoomed, no_shots))
            .await
            .status,
        200
    );
    assert_eq!(
        anthropic(
            &server,
            &conversation("left_click", with_image.clone(), json!([toolset()]))
        )
        .await
        .status,
        200
    );

    // Off, the same request passes: these are hands' rules, not the API's.
    let mut config = hands_sim::SimConfig::scripted(vec![hands_sim::Turn::text("ok")]);
    config.anthropic.hands_contract = false;
    let lenient = SimServer::start(config).unwrap();
    let answer = anthropic(
        &lenient,
        &conversation("left_click", failed("a\nb"), json!([toolset()])),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
}

/// A `browser_state` block as the API takes it.
#[tokio::test]
async fn browser_state_blocks_have_the_api_shape() {
    let server = text_server();
    let tab = |id: &str, active: bool| json!({"tab_id": id, "title": "T", "url": "https://a.test", "active": active});
    let conversation = |member: &str, state: Value| {
        with_tools(
            request(json!([user("go"),
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_b", "name": member,
                    "toolset_name": "browser", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_b",
                    "toolset_name": "browser", "content": [{"type": "text", "text": "Done."}, state]}]}])),
            json!([{"type": "browser_toolset_20260801"}]),
        )
    };
    let state = |tabs: Value, changes: Option<Value>| {
        let mut block = json!({"type": "browser_state", "tabs": tabs});
        if let Some(changes) = changes {
            block["state_changes"] = changes;
        }
        block
    };
    let path = "messages.2.content.0.tool_result.content.1";
    let good = state(json!([tab("t1", true), tab("t2", false)]), None);
    let cases = [
        (
            "two active",
            state(json!([tab("t1", true), tab("t2", true)]), None),
            m::browser_state_invalid(
                path,
                "exactly one tab must be active when any tab is listed",
            ),
        ),
        (
            "empty changes",
            state(json!([tab("t1", true)]), Some(json!([]))),
            m::browser_state_invalid(
                path,
                "`state_changes` must be left out when there is nothing to report",
            ),
        ),
        (
            "unknown change",
            state(
                json!([tab("t1", true)]),
                Some(json!([{"type": "navigation", "tab_id": "t1"}])),
            ),
            m::browser_state_invalid(path, "unknown state change type 'navigation'"),
        ),
        (
            "opened tab not listed",
            state(
                json!([tab("t1", true)]),
                Some(json!([{"type": "tab_opened", "tab_id": "t9"}])),
            ),
            m::browser_state_invalid(path, "a `tab_opened` change must name a tab of `tabs`"),
        ),
        (
            "long url",
            state(
                json!([{"tab_id": "t1", "title": "T", "url": format!("https://a.test/{}", "p".repeat(4096)), "active": true}]),
                None,
            ),
            m::browser_state_field_too_long(&format!("{path}.tabs.0.url")),
        ),
        (
            "long title",
            state(
                json!([{"tab_id": "t1", "title": "t".repeat(4097), "url": "https://a.test", "active": true}]),
                None,
            ),
            m::browser_state_field_too_long(&format!("{path}.tabs.0.title")),
        ),
        (
            "missing url",
            state(
                json!([{"tab_id": "t1", "title": "T", "active": true}]),
                None,
            ),
            m::field_required(&format!("{path}.tabs.0.url")),
        ),
    ];
    for (name, bad, message) in cases {
        check(
            &server,
            name,
            conversation("left_click", bad),
            conversation("left_click", good.clone()),
            &message,
        )
        .await;
    }
    let opened = state(
        json!([tab("t1", false), tab("t2", true)]),
        Some(json!([{"type": "tab_opened", "tab_id": "t2"}])),
    );
    check(
        &server,
        "new_tab without tab_opened",
        conversation(
            "new_tab",
            state(json!([tab("t1", false), tab("t2", true)]), None),
        ),
        conversation("new_tab", opened),
        &m::browser_state_invalid(
            path,
            "after `new_tab` the opened tab must be the only active tab, reported `tab_opened`",
        ),
    )
    .await;
    let edge = state(
        json!([{"tab_id": "t1", "title": "t".repeat(4096), "url": "https://a.test", "active": true}]),
        None,
    );
    assert_eq!(
        anthropic(&server, &conversation("left_click", edge))
            .await
            .status,
        200
    );
    assert_eq!(
        anthropic(&server, &conversation("list_tabs", state(json!([]), None)))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn browser_results_carry_at_most_one_browser_state() {
    let server = text_server();
    let state = json!({"type": "browser_state", "tabs": [{"tab_id": "t1", "title": "x", "url": "https://a", "active": true}]});
    let conversation = |content: Value, is_error: bool| {
        with_tools(
            request(json!([user("go"),
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_b", "name": "navigate",
                    "toolset_name": "browser", "input": {"url": "https://a"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_b",
                    "toolset_name": "browser", "is_error": is_error, "content": content}]}])),
            json!([{"type": "browser_toolset_20260801"}]),
        )
    };
    let answer = anthropic(&server, &conversation(json!([state, state]), false)).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    let answer = anthropic(&server, &conversation(json!([state]), true)).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    let answer = anthropic(
        &server,
        &conversation(
            json!([{"type": "text", "text": "Navigated."}, state]),
            false,
        ),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
}

#[tokio::test]
async fn image_rules() {
    let server = text_server();
    let with_image = |image: Value| {
        request(json!([{"role": "user", "content": [image, {"type": "text", "text": "?"}]}]))
    };
    check(
        &server,
        "media type mismatch",
        with_image(image("image/jpeg", &png_b64(10, 10))),
        with_image(image("image/jpeg", &jpeg_b64(10, 10))),
        &m::image_media_type_mismatch("messages.0.content.0.image", "image/jpeg"),
    )
    .await;
    check(
        &server,
        "media type outside the four",
        with_image(image("image/bmp", &png_b64(10, 10))),
        with_image(png_image(10, 10)),
        &m::image_media_type_invalid("messages.0.content.0.image"),
    )
    .await;
    let big = "A".repeat(m::MAX_IMAGE_BASE64_BYTES + 4);
    check(
        &server,
        "over 5 MB",
        with_image(image("image/png", &big)),
        with_image(png_image(10, 10)),
        &m::image_too_large("messages.0.content.0.image", big.len()),
    )
    .await;
    check(
        &server,
        "side over 8000",
        with_image(png_image(8001, 10)),
        with_image(png_image(8000, 10)),
        &m::image_side_too_large("messages.0.content.0.image"),
    )
    .await;
    let many = |n: usize, wide: u32| {
        let mut content: Vec<Value> = (0..n - 1).map(|_| png_image(100, 100)).collect();
        content.push(png_image(wide, 100));
        request(json!([{"role": "user", "content": content}]))
    };
    check(
        &server,
        "more than 20 images, one over 2000",
        many(21, 2001),
        many(20, 2001),
        &m::image_side_too_large_many("messages.0.content.20.image"),
    )
    .await;
    let answer = anthropic(&server, &many(21, 2000)).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    check(
        &server,
        "more than 100 images",
        many(101, 10),
        many(100, 10),
        &m::too_many_images(101, 100),
    )
    .await;
}

#[tokio::test]
async fn computer_toolset_images_fit_the_model_tier() {
    let server = text_server();
    let path = "messages.2.content.0.tool_result.content.0.image";
    // Long edge over 2576.
    check(
        &server,
        "long edge",
        screenshot_request(png_image(2600, 1000)),
        screenshot_request(png_image(2576, 1000)),
        &m::image_over_tier(path, 2600, 1000, &hands_sim::ImageTier::HIGH_RES.describe()),
    )
    .await;
    // Within the long edge but over 4784 visual tokens: 92 x 58 = 5336.
    let answer = anthropic(&server, &screenshot_request(png_image(2576, 1600))).await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert!(answer.message().starts_with(path), "{}", answer.message());
    // The same image in a custom tool's result is not the toolset's: only the 8000 px limit.
    let custom = with_tools(
        request(json!([user("go"),
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_c", "name": "lookup", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_c",
                "content": [png_image(2600, 1600)]}]}])),
        json!([custom_tool("lookup")]),
    );
    assert_eq!(anthropic(&server, &custom).await.status, 200);

    // The standard tier is configurable.
    let standard = SimServer::start(hands_sim::SimConfig {
        anthropic: hands_sim::AnthropicConfig {
            image_tier: hands_sim::ImageTier::STANDARD,
            ..Default::default()
        },
        ..hands_sim::SimConfig::with_policy(|_: &Value| hands_sim::Turn::text("ok"))
    })
    .expect("start");
    assert_eq!(
        anthropic(&standard, &screenshot_request(png_image(1600, 800)))
            .await
            .status,
        400
    );
    assert_eq!(
        anthropic(&standard, &screenshot_request(png_image(1280, 800)))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn at_most_four_cache_breakpoints() {
    let server = text_server();
    let mark = json!({"type": "ephemeral"});
    let body = |n_marked: usize| {
        let mut tool = toolset();
        tool["cache_control"] = mark.clone();
        let system =
            json!([{"type": "text", "text": "You operate a desktop.", "cache_control": mark}]);
        let mut content: Vec<Value> = (0..3)
            .map(|i| json!({"type": "text", "text": format!("part {i}")}))
            .collect();
        for block in content.iter_mut().take(n_marked.saturating_sub(2)) {
            block["cache_control"] = mark.clone();
        }
        let mut body = with_tools(
            request(json!([{"role": "user", "content": content}])),
            json!([tool]),
        );
        body["system"] = system;
        body
    };
    check(
        &server,
        "five breakpoints",
        body(5),
        body(4),
        &m::too_many_cache_breakpoints(5),
    )
    .await;
    let mut bad_type = body(1);
    bad_type["tools"][0]["cache_control"] = json!({"type": "persistent"});
    let answer = anthropic(&server, &bad_type).await;
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.message(),
        "tools.0.cache_control.type: Input should be 'ephemeral'"
    );
}

#[tokio::test]
async fn toolset_entry_rejects_legacy_fields() {
    let server = text_server();
    let good = with_tools(request(json!([user("hi")])), json!([toolset()]));
    for field in hands_sim::toolsets::TOOLSET_REJECTED_FIELDS {
        let mut entry = toolset();
        entry[field] = json!(if field == "name" {
            json!("computer")
        } else {
            json!(true)
        });
        check(
            &server,
            field,
            with_tools(request(json!([user("hi")])), json!([entry])),
            good.clone(),
            &m::extra_input(&format!("tools.0.computer_toolset_20260801.{field}")),
        )
        .await;
    }
}

#[tokio::test]
async fn toolset_configs_and_callers() {
    let server = text_server();
    let entry = |extra: Value| {
        let mut entry = toolset();
        for (k, v) in extra.as_object().expect("object") {
            entry[k] = v.clone();
        }
        with_tools(request(json!([user("hi")])), json!([entry]))
    };
    let path = "tools.0.computer_toolset_20260801";
    check(
        &server,
        "unknown member",
        entry(json!({"configs": {"teleport": {"enabled": true}}})),
        entry(json!({"configs": {"zoom": {"enabled": false}}})),
        &m::toolset_unknown_member(
            &format!("{path}.configs"),
            "teleport",
            "computer_toolset_20260801",
        ),
    )
    .await;
    let all_off: serde_json::Map<String, Value> = hands_sim::toolsets::COMPUTER_MEMBERS
        .iter()
        .map(|member| ((*member).to_owned(), json!({"enabled": false})))
        .collect();
    let mut one_on = all_off.clone();
    one_on.insert("screenshot".into(), json!({"enabled": true}));
    check(
        &server,
        "every member disabled",
        entry(json!({"configs": all_off})),
        entry(json!({"configs": one_on})),
        &m::toolset_all_disabled(&format!("{path}.configs")),
    )
    .await;
    let all_deferred: serde_json::Map<String, Value> = hands_sim::toolsets::COMPUTER_MEMBERS
        .iter()
        .map(|member| ((*member).to_owned(), json!({"defer_loading": true})))
        .collect();
    check(
        &server,
        "mixed defer_loading",
        entry(json!({"configs": {"zoom": {"defer_loading": true}}})),
        entry(json!({"configs": all_deferred})),
        &m::toolset_mixed_defer(&format!("{path}.configs")),
    )
    .await;
    check(
        &server,
        "allowed_callers",
        entry(json!({"allowed_callers": ["direct", "programmatic"]})),
        entry(json!({"allowed_callers": ["direct"]})),
        &m::toolset_allowed_callers(&format!("{path}.allowed_callers")),
    )
    .await;
}

#[tokio::test]
async fn one_computer_tool_per_request() {
    let server = text_server();
    let legacy = json!({"type": "computer_20251124", "name": "computer",
        "display_width_px": 1024, "display_height_px": 768});
    let good = with_tools(
        request(json!([user("hi")])),
        json!([toolset(), custom_tool("lookup")]),
    );
    check(
        &server,
        "two toolsets",
        with_tools(request(json!([user("hi")])), json!([toolset(), toolset()])),
        good.clone(),
        &m::computer_tool_conflict(0, 1),
    )
    .await;
    check(
        &server,
        "toolset and a tool named computer",
        with_tools(
            request(json!([user("hi")])),
            json!([custom_tool("computer"), toolset()]),
        ),
        good.clone(),
        &m::computer_tool_conflict(0, 1),
    )
    .await;
    check_beta(
        &server,
        "toolset and computer_20251124",
        "computer-use-2025-11-24",
        with_tools(request(json!([user("hi")])), json!([toolset(), legacy])),
        with_tools(request(json!([user("hi")])), json!([legacy])),
        &m::computer_tool_conflict(0, 1),
    )
    .await;
    // The browser toolset may sit beside the computer toolset.
    let both = with_tools(
        request(json!([user("hi")])),
        json!([toolset(), {"type": "browser_toolset_20260801"}]),
    );
    assert_eq!(anthropic(&server, &both).await.status, 200);
}

#[tokio::test]
async fn legacy_computer_tools_need_their_beta_and_an_older_model() {
    let server = text_server();
    for (tool_type, beta) in hands_sim::toolsets::LEGACY_COMPUTER_TYPES {
        let body = with_tools(
            request(json!([user("hi")])),
            json!([{"type": tool_type, "name": "computer", "display_width_px": 1024, "display_height_px": 768}]),
        );
        let answer = anthropic(&server, &body).await;
        assert_eq!(answer.status, 400, "{tool_type}");
        assert_eq!(answer.message(), m::unknown_tool_type(0, tool_type));
        assert_eq!(
            anthropic_beta(&server, beta, &body).await.status,
            200,
            "{tool_type}"
        );
        let mut opus = body.clone();
        opus["model"] = json!("claude-opus-5-5");
        let answer = anthropic_beta(&server, beta, &opus).await;
        assert_eq!(answer.status, 400);
        assert_eq!(
            answer.message(),
            format!("'claude-opus-5-5' does not support tool types: {tool_type}.")
        );
    }
    // computer_20250124 has no zoom.
    let zoom = with_tools(
        request(json!([user("hi")])),
        json!([{"type": "computer_20250124", "name": "computer", "display_width_px": 1024,
            "display_height_px": 768, "enable_zoom": true}]),
    );
    let answer = anthropic_beta(&server, "computer-use-2025-01-24", &zoom).await;
    assert_eq!(
        answer.message(),
        m::extra_input("tools.0.computer_20250124.enable_zoom")
    );
}

#[tokio::test]
async fn tool_choice_cannot_force_a_toolset_member() {
    let server = text_server();
    let body = |name: &str| {
        let mut body = with_tools(
            request(json!([user("hi")])),
            json!([toolset(), custom_tool("lookup")]),
        );
        body["tool_choice"] = json!({"type": "tool", "name": name});
        body
    };
    let policy_server = SimServer::start(hands_sim::SimConfig::with_policy(|_: &Value| {
        hands_sim::Turn::Blocks(vec![hands_sim::policy::tool_use("lookup", json!({}))])
    }))
    .expect("start");
    for name in ["left_click", "computer"] {
        let answer = anthropic(&server, &body(name)).await;
        assert_eq!(answer.status, 400);
        assert_eq!(answer.message(), m::tool_choice_names_toolset(name));
    }
    assert_eq!(anthropic(&policy_server, &body("lookup")).await.status, 200);
    let answer = anthropic(&server, &body("nothing")).await;
    assert_eq!(answer.message(), m::tool_choice_unknown("nothing"));
}

#[tokio::test]
async fn fine_grained_streaming_beta_is_refused_beside_a_toolset() {
    let server = text_server();
    check_beta(
        &server,
        "fine-grained",
        "fine-grained-tool-streaming-2025-05-14",
        with_tools(request(json!([user("hi")])), json!([toolset()])),
        with_tools(request(json!([user("hi")])), json!([custom_tool("lookup")])),
        &m::fine_grained_with_toolset(),
    )
    .await;
}

#[tokio::test]
async fn thinking_settings() {
    let server = text_server();
    let mut forced = with_tools(request(json!([user("hi")])), json!([custom_tool("lookup")]));
    forced["thinking"] = json!({"type": "adaptive"});
    forced["tool_choice"] = json!({"type": "any"});
    let answer = anthropic(&server, &forced).await;
    assert_eq!(answer.message(), m::THINKING_FORCED_TOOL);
    let mut budget = request(json!([user("hi")]));
    budget["thinking"] = json!({"type": "enabled", "budget_tokens": 512});
    let answer = anthropic(&server, &budget).await;
    assert_eq!(
        answer.message(),
        "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    );
    budget["thinking"]["budget_tokens"] = json!(1024);
    budget["max_tokens"] = json!(2048);
    assert_eq!(anthropic(&server, &budget).await.status, 200);
}

#[tokio::test]
async fn smaller_tool_and_field_rules() {
    let server = text_server();
    let hi = || request(json!([user("hi")]));
    check(
        &server,
        "duplicate tool names",
        with_tools(hi(), json!([custom_tool("lookup"), custom_tool("lookup")])),
        with_tools(hi(), json!([custom_tool("lookup"), custom_tool("fetch")])),
        m::TOOL_NAMES_UNIQUE,
    )
    .await;
    check_beta(
        &server,
        "legacy tool without its display size",
        "computer-use-2025-11-24",
        with_tools(
            hi(),
            json!([{"type": "computer_20251124", "name": "computer", "display_width_px": 1024}]),
        ),
        with_tools(
            hi(),
            json!([{"type": "computer_20251124", "name": "computer", "display_width_px": 1024,
                "display_height_px": 768, "enable_zoom": true}]),
        ),
        &m::field_required("tools.0.computer_20251124.display_height_px"),
    )
    .await;
    check(
        &server,
        "second browser toolset",
        with_tools(
            hi(),
            json!([{"type": "browser_toolset_20260801"}, {"type": "browser_toolset_20260801"}]),
        ),
        with_tools(
            hi(),
            json!([{"type": "browser_toolset_20260801",
            "configs": {"javascript_exec": {"enabled": true}}}]),
        ),
        &m::browser_toolset_conflict(0, 1),
    )
    .await;
    check(
        &server,
        "browser member of the computer toolset",
        with_tools(
            hi(),
            json!([{"type": "computer_toolset_20260801",
            "configs": {"navigate": {"enabled": true}}}]),
        ),
        with_tools(
            hi(),
            json!([{"type": "browser_toolset_20260801",
            "configs": {"navigate": {"enabled": true}}}]),
        ),
        &m::toolset_unknown_member(
            "tools.0.computer_toolset_20260801.configs",
            "navigate",
            "computer_toolset_20260801",
        ),
    )
    .await;
    let mut budget = hi();
    budget["thinking"] = json!({"type": "enabled", "budget_tokens": 2048});
    let mut enough = budget.clone();
    budget["max_tokens"] = json!(2048);
    enough["max_tokens"] = json!(4096);
    let answer = anthropic(&server, &budget).await;
    assert_eq!(answer.status, 400);
    assert!(
        answer
            .message()
            .starts_with("`max_tokens` must be greater than `thinking.budget_tokens`")
    );
    assert_eq!(anthropic(&server, &enough).await.status, 200);
    let with_image = |data: &str| {
        request(
            json!([{"role": "user", "content": [image("image/png", data), {"type": "text", "text": "?"}]}]),
        )
    };
    check(
        &server,
        "undecodable image",
        with_image("not base64!"),
        with_image(&png_b64(4, 4)),
        &m::image_unreadable("messages.0.content.0.image"),
    )
    .await;
    check(
        &server,
        "empty text block",
        request(json!([{"role": "user", "content": [{"type": "text", "text": ""}]}])),
        request(json!([{"role": "user", "content": [{"type": "text", "text": "x"}]}])),
        m::TEXT_NON_EMPTY,
    )
    .await;
}

#[tokio::test]
async fn context_management_needs_its_beta_and_valid_edits() {
    let server = text_server();
    let edit = json!({"type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": 30000},
        "keep": {"type": "tool_uses", "value": 3},
        "clear_at_least": {"type": "input_tokens", "value": 5000}});
    let mut good = request(json!([user("hi")]));
    good["context_management"] = json!({"edits": [edit]});
    let answer = anthropic(&server, &good).await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.message(), m::context_management_needs_beta());
    let mut bad = good.clone();
    bad["context_management"]["edits"][0]["type"] = json!("clear_screenshots");
    check_beta(
        &server,
        "unknown edit",
        m::CONTEXT_MANAGEMENT_BETA,
        bad,
        good.clone(),
        &m::unknown_context_edit(0, "clear_screenshots"),
    )
    .await;
    let mut bad = good.clone();
    bad["context_management"]["edits"][0]["keep"] = json!({"type": "tool_uses"});
    check_beta(
        &server,
        "keep without value",
        m::CONTEXT_MANAGEMENT_BETA,
        bad,
        good.clone(),
        &m::field_required("context_management.edits.0.keep.value"),
    )
    .await;
    // Without edits to apply, the answer still says none was applied.
    let answer = anthropic_beta(&server, m::CONTEXT_MANAGEMENT_BETA, &good).await;
    assert_eq!(
        answer.body["context_management"],
        json!({"applied_edits": []})
    );
}

#[tokio::test]
async fn effort_takes_only_the_known_levels() {
    let server = text_server();
    let mut good = request(json!([user("hi")]));
    good["output_config"] = json!({"effort": "high"});
    let mut bad = good.clone();
    bad["output_config"]["effort"] = json!("extreme");
    let answer = anthropic(&server, &bad).await;
    assert_eq!(answer.status, 400);
    assert!(
        answer.message().starts_with("output_config.effort"),
        "{}",
        answer.body
    );
    assert_eq!(anthropic(&server, &good).await.status, 200);
}
