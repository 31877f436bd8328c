//! The context of long runs, on a real Xvfb desktop against the simulated APIs (which reject a
//! broken pairing and bill by prefix caching): the last three screenshots are in every request,
//! every call keeps its answer, old screenshots leave in batches, an unchanged screen is sent as
//! text, a budget holds, and the API's own context management is asked for and replayed.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::sync::{Arc, Mutex};

use hands_core::geometry::Size;
use hands_core::{CancellationToken, Desktop};
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_models::openai::{OpenAiClient, OpenAiConfig, Truncation};
use hands_runner::context::{
    ClientContext, ContextBudget, ContextConfig, ContextManagement, NativeContext,
    UNCHANGED_SCREENSHOT,
};
use hands_runner::{
    AnthropicSettings, OpenAiSettings, RunConfig, RunError, RunStatus, Runner, StopReason, Toolbox,
};
use hands_sim::policy::{computer_call, toolset_use};
use hands_sim::{SimConfig, SimServer, Turn};
use hands_testkit::InputRecorder;
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_toolset::computer_call::{ComputerCallConfig, ComputerCallExecutor};
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::{Value, json};

fn desktop() -> X11Desktop {
    X11Desktop::spawn(&XvfbConfig::new(Size::new(1280, 800).unwrap())).unwrap()
}

fn claude(sim: &SimServer, desktop: X11Desktop, context: ContextConfig, max_steps: u32) -> Runner {
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = sim.base_url();
    let boxed: Box<dyn Desktop> = Box::new(desktop);
    let mut settings = AnthropicSettings::new("claude-opus-5-5");
    settings.context = context;
    Runner::anthropic(
        AnthropicClient::new(config).unwrap(),
        settings,
        Some(ComputerToolset::new(boxed, ComputerConfig::default()).unwrap()),
        Toolbox::default(),
        RunConfig { max_steps },
    )
}

fn openai(
    sim: &SimServer,
    desktop: X11Desktop,
    settings: OpenAiSettings,
    max_steps: u32,
) -> Runner {
    let mut config = OpenAiConfig::new("sk-test");
    config.base_url = sim.openai_base_url();
    let boxed: Box<dyn Desktop> = Box::new(desktop);
    Runner::openai(
        OpenAiClient::new(config).unwrap(),
        settings,
        Some(ComputerCallExecutor::new(
            boxed,
            ComputerCallConfig::default(),
        )),
        Toolbox::default(),
        RunConfig { max_steps },
    )
}

/// `n` turns of one screenshot each, then a text.
fn screenshots(n: usize) -> Vec<Turn> {
    let mut turns: Vec<Turn> = (0..n)
        .map(|_| Turn::Blocks(vec![toolset_use("computer", "screenshot", json!({}))]))
        .collect();
    turns.push(Turn::text("Seen."));
    turns
}

/// Every image is sent (so each result has one and the test can tell them apart by place).
fn every_image(management: ContextManagement) -> ContextConfig {
    ContextConfig {
        management,
        unchanged_screenshots: false,
        ..ContextConfig::default()
    }
}

fn count_images(value: &Value) -> usize {
    match value {
        Value::Object(o) if o.get("type") == Some(&json!("image")) => 1,
        Value::Object(o) => o.values().map(count_images).sum(),
        Value::Array(items) => items.iter().map(count_images).sum(),
        _ => 0,
    }
}

/// The `tool_result` blocks of a Messages request, oldest first.
fn tool_results(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .cloned()
        .collect()
}

/// Every `tool_use` is answered in the next message by exactly one `tool_result`.
fn assert_paired(body: &Value) {
    let messages = body["messages"].as_array().unwrap();
    let ids = |m: &Value, ty: &str, key: &str| -> Vec<String> {
        m["content"]
            .as_array()
            .map(|blocks| {
                blocks
                    .iter()
                    .filter(|b| b["type"] == ty)
                    .map(|b| b[key].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    for (i, m) in messages.iter().enumerate() {
        if m["role"] == "assistant"
            && let Some(next) = messages.get(i + 1)
        {
            assert_eq!(
                ids(m, "tool_use", "id"),
                ids(next, "tool_result", "tool_use_id")
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thirty_step_claude_run_keeps_the_last_three_screenshots_and_every_pairing() {
    let sim = SimServer::start(SimConfig::scripted(screenshots(30))).unwrap();
    let runner = claude(
        &sim,
        desktop(),
        every_image(ContextManagement::Client(ClientContext::default())),
        32,
    );
    let outcome = runner
        .run("Watch.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let requests = sim.requests();
    assert_eq!(requests.len(), 31);
    let mut most = 0;
    for (k, request) in requests.iter().enumerate() {
        assert_paired(&request.body);
        let results = tool_results(&request.body);
        assert_eq!(
            results.len(),
            k,
            "request {k}: every earlier call is still answered"
        );
        // The last three screenshots are always there.
        for result in &results[results.len().saturating_sub(3)..] {
            assert_eq!(count_images(result), 1, "request {k}");
        }
        let images = count_images(&request.body);
        assert!(images <= 3 + 8, "request {k}: {images} images");
        most = most.max(images);
    }
    assert_eq!(most, 11, "old screenshots leave only in batches of nine");
    // The prefix breaks only at the drops (12, 21 and 30 screenshots): every other
    // request reads all the previous one wrote.
    let usage = |k: usize| {
        let usage = &requests[k].response.as_ref().unwrap()["usage"];
        (
            usage["cache_read_input_tokens"].as_u64().unwrap(),
            usage["cache_creation_input_tokens"].as_u64().unwrap(),
        )
    };
    let breaks: Vec<usize> = (2..requests.len())
        .filter(|&k| {
            let (read, _) = usage(k);
            let (read_before, written_before) = usage(k - 1);
            read < read_before + written_before
        })
        .collect();
    assert_eq!(breaks, vec![12, 21, 30]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_twenty_two_step_openai_run_drops_old_screenshots_with_their_calls() {
    let mut turns: Vec<Turn> = (0..22)
        .map(|_| Turn::Items(vec![computer_call(vec![json!({"type": "screenshot"})])]))
        .collect();
    turns.push(Turn::text("Seen."));
    let sim = SimServer::start(SimConfig::scripted(turns)).unwrap();
    let mut settings = OpenAiSettings::new("computer-use-2");
    settings.store = false;
    let runner = openai(&sim, desktop(), settings, 24);
    let outcome = runner
        .run("Watch.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    for (k, request) in sim.requests().iter().enumerate() {
        let input = request.body["input"].as_array().unwrap();
        assert!(request.body.get("previous_response_id").is_none());
        let outputs: Vec<&Value> = input
            .iter()
            .filter(|i| i["type"] == "computer_call_output")
            .collect();
        let calls = input
            .iter()
            .filter(|i| i["type"] == "computer_call")
            .count();
        assert_eq!(
            outputs.len(),
            calls,
            "request {k}: each call with its output"
        );
        assert_eq!(
            outputs.len(),
            k.min(3 + (k.saturating_sub(3)) % 9),
            "request {k}"
        );
        if k > 12 {
            let receipt = input
                .iter()
                .any(|i| i["role"] == "user" && i["content"].to_string().contains("Omitted"));
            assert!(receipt, "request {k} names the calls it left out");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_screen_is_sent_as_text_and_a_changed_one_as_an_image() {
    let desktop = desktop();
    let display = desktop.display().to_owned();
    let window: Arc<Mutex<Option<InputRecorder>>> = Arc::default();
    let shown = Arc::clone(&window);
    let n = Arc::new(Mutex::new(0usize));
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        let mut n = n.lock().unwrap();
        *n += 1;
        let block = match *n {
            1 | 2 => toolset_use("computer", "screenshot", json!({})),
            3 => {
                // A window appears: the screen changes.
                *shown.lock().unwrap() = Some(InputRecorder::start(&display).unwrap());
                toolset_use("computer", "screenshot", json!({}))
            }
            4 => toolset_use("computer", "mouse_move", json!({"coordinate": [10, 10]})),
            _ => return Turn::text("Seen."),
        };
        Turn::Blocks(vec![block])
    }))
    .unwrap();
    let runner = claude(&sim, desktop, ContextConfig::default(), 10);
    let outcome = runner
        .run("Watch.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let requests = sim.requests();
    let last_result = |k: usize| tool_results(&requests[k].body).last().cloned().unwrap();
    assert_eq!(count_images(&last_result(1)), 1, "the first screenshot");
    assert_eq!(
        last_result(2)["content"][0]["text"],
        UNCHANGED_SCREENSHOT,
        "the same screen"
    );
    assert_eq!(count_images(&last_result(3)), 1, "a window appeared");
    // mouse_move answers, then its closing screenshot is the same screen.
    assert_eq!(last_result(4)["content"][1]["text"], UNCHANGED_SCREENSHOT);
    drop(window);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_caps_every_request_and_stops_a_run_it_cannot_hold() {
    let budget = |bytes, images| {
        every_image(ContextManagement::Client(ClientContext {
            budget: Some(ContextBudget {
                max_input_bytes: bytes,
                max_input_images: images,
            }),
            ..ClientContext::default()
        }))
    };
    let sim = SimServer::start(SimConfig::scripted(screenshots(15))).unwrap();
    let runner = claude(&sim, desktop(), budget(50_000_000, 5), 17);
    let outcome = runner
        .run("Watch.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    for request in sim.requests() {
        assert!(count_images(&request.body) <= 5);
        assert_paired(&request.body);
    }

    // A budget the current observation alone overflows: the run stops before sending it.
    let sim = SimServer::start(SimConfig::scripted(screenshots(3))).unwrap();
    let runner = claude(&sim, desktop(), budget(2_000, 5), 5);
    let outcome = runner
        .run("Watch.", &CancellationToken::new())
        .await
        .unwrap();
    assert!(
        matches!(
            outcome.status,
            RunStatus::Stopped(StopReason::ContextBudgetExceeded { .. })
        ),
        "{outcome:?}"
    );
    assert_eq!(sim.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_native_clearing_is_asked_for_and_applied_by_the_api() {
    let sim = SimServer::start(SimConfig::scripted(screenshots(8))).unwrap();
    let native = NativeContext {
        trigger_input_tokens: 9_000,
        keep_tool_uses: 2,
        clear_at_least_tokens: None,
        ..NativeContext::default()
    };
    let runner = claude(
        &sim,
        desktop(),
        every_image(ContextManagement::Native(native)),
        10,
    );
    let outcome = runner
        .run("Watch.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let requests = sim.requests();
    for request in &requests {
        assert!(
            request
                .header("anthropic-beta")
                .is_some_and(|b| b.contains("context-management-2025-06-27"))
        );
        assert_eq!(
            request.body["context_management"]["edits"][0]["type"],
            "clear_tool_uses_20250919"
        );
        // hands sends the history whole: the API clears.
        assert_eq!(
            count_images(&request.body),
            tool_results(&request.body).len()
        );
    }
    let cleared: Vec<u64> = requests
        .iter()
        .filter_map(|r| {
            r.response.as_ref()?["context_management"]["applied_edits"][0]["cleared_tool_uses"]
                .as_u64()
        })
        .collect();
    assert!(
        !cleared.is_empty() && cleared.iter().all(|n| *n > 0),
        "{cleared:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_compaction_is_asked_for_and_its_item_replayed_unchanged() {
    let mut turns: Vec<Turn> = (0..6)
        .map(|_| Turn::Items(vec![computer_call(vec![json!({"type": "screenshot"})])]))
        .collect();
    turns.push(Turn::text("Seen."));
    let sim = SimServer::start(SimConfig::scripted(turns)).unwrap();
    let mut settings = OpenAiSettings::new("computer-use-2");
    settings.store = false;
    settings.context = ContextConfig::native(NativeContext {
        trigger_input_tokens: 3_000,
        ..NativeContext::default()
    });
    let runner = openai(&sim, desktop(), settings, 8);
    let outcome = runner
        .run("Watch.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let requests = sim.requests();
    let compacted = requests
        .iter()
        .position(|r| {
            r.response
                .as_ref()
                .is_some_and(|resp| resp["output"][0]["type"] == "compaction")
        })
        .expect("a response compacted");
    let item = requests[compacted].response.as_ref().unwrap()["output"][0].clone();
    let next = &requests[compacted + 1].body;
    assert_eq!(next["context_management"][0]["type"], "compaction");
    assert!(
        next["input"].as_array().unwrap().contains(&item),
        "the compaction item goes back unchanged"
    );
}

#[tokio::test]
async fn a_budget_with_server_truncation_is_refused_before_any_request() {
    let sim = SimServer::start(SimConfig::scripted(screenshots(1))).unwrap();
    let mut settings = OpenAiSettings::new("computer-use-2");
    settings.truncation = Some(Truncation::Auto);
    settings.context = ContextConfig {
        management: ContextManagement::Client(ClientContext {
            budget: Some(ContextBudget {
                max_input_bytes: 1_000_000,
                max_input_images: 10,
            }),
            ..ClientContext::default()
        }),
        ..ContextConfig::default()
    };
    let mut config = OpenAiConfig::new("sk-test");
    config.base_url = sim.openai_base_url();
    let runner = Runner::openai(
        OpenAiClient::new(config).unwrap(),
        settings,
        None,
        Toolbox::default(),
        RunConfig::default(),
    );
    let refused = runner.run("Go.", &CancellationToken::new()).await;
    assert!(matches!(refused, Err(RunError::Config(_))), "{refused:?}");
    assert!(sim.requests().is_empty());
}
