//! End-to-end runs: the real runner, the real model clients over HTTP, the simulated API (which
//! rejects what the real APIs reject), and a real Xvfb desktop whose X client records what it
//! received.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use hands_core::geometry::Size;
use hands_core::{CancellationToken, Desktop};
use hands_models::RetryPolicy;
use hands_models::anthropic::{AnthropicClient, AnthropicConfig, ToolChoice};
use hands_models::openai::{OpenAiClient, OpenAiConfig, ToolChoice as OpenAiToolChoice};
use hands_runner::approval::{
    ApproveAll, Approver, Decision, DenyAll, Effect, EffectKind, SafetyChecksContext,
};
use hands_runner::diagnostics::{Record, Stage};
use hands_runner::{
    AnthropicSettings, OpenAiSettings, RunConfig, RunError, RunStatus, Runner, StopReason, Toolbox,
};
use hands_sim::policy::{computer_call, computer_call_with_checks, message, toolset_use};
use hands_sim::{Fault, SimConfig, SimServer, Turn, Verdict};
use hands_testkit::{EventKind, InputRecorder};
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_toolset::computer_call::{ComputerCallConfig, ComputerCallExecutor};
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::{Value, json};

/// A fresh 1280x800 desktop with a recorder covering it.
fn desk() -> (X11Desktop, InputRecorder) {
    let desktop = X11Desktop::spawn(&XvfbConfig::new(Size::new(1280, 800).unwrap())).unwrap();
    let recorder = InputRecorder::start(desktop.display()).unwrap();
    (desktop, recorder)
}

fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_retry_after: Duration::from_millis(50),
    }
}

fn anthropic_runner(
    sim: &SimServer,
    desktop: X11Desktop,
    settings: AnthropicSettings,
    config: RunConfig,
) -> Runner {
    let mut client_config = AnthropicConfig::new("sk-test");
    client_config.base_url = sim.base_url();
    let client = AnthropicClient::new(client_config)
        .unwrap()
        .with_retry_policy(fast_retries());
    let boxed: Box<dyn Desktop> = Box::new(desktop);
    let computer = ComputerToolset::new(
        boxed,
        ComputerConfig {
            append_screenshot: false,
            ..ComputerConfig::default()
        },
    )
    .unwrap();
    Runner::anthropic(client, settings, Some(computer), Toolbox::default(), config)
}

fn openai_runner(sim: &SimServer, desktop: X11Desktop, settings: OpenAiSettings) -> Runner {
    let mut client_config = OpenAiConfig::new("sk-test");
    client_config.base_url = sim.openai_base_url();
    let client = OpenAiClient::new(client_config)
        .unwrap()
        .with_retry_policy(fast_retries());
    let boxed: Box<dyn Desktop> = Box::new(desktop);
    let executor = ComputerCallExecutor::new(boxed, ComputerCallConfig::default());
    Runner::openai(
        client,
        settings,
        Some(executor),
        Toolbox::default(),
        RunConfig::default(),
    )
}

fn presses(recorder: &InputRecorder, button: u8) -> Vec<(i32, i32)> {
    recorder
        .sync()
        .unwrap()
        .iter()
        .filter(|e| e.is_button_press(button))
        .map(|e| e.position())
        .collect()
}

fn c(member: &str, input: Value) -> Value {
    toolset_use("computer", member, input)
}

/// A policy answering turn `n` with `turns[n]`, then text.
fn scripted(turns: Vec<Vec<Value>>) -> impl FnMut(&Value) -> Turn + Send {
    let mut n = 0;
    move |_| {
        let turn = turns
            .get(n)
            .cloned()
            .map(Turn::Blocks)
            .unwrap_or_else(|| Turn::text("Done."));
        n += 1;
        turn
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_multi_step_task_lands_on_the_desktop() {
    let (desktop, recorder) = desk();
    let sim = SimServer::start(SimConfig::with_policy(scripted(vec![
        vec![c("screenshot", json!({}))],
        vec![
            c("left_click", json!({"coordinate": [100, 120]})),
            c("type", json!({"text": "héllo\n"})),
        ],
        vec![
            c("key", json!({"text": "ctrl+a"})),
            c("screenshot", json!({})),
        ],
    ])))
    .unwrap();
    let runner = anthropic_runner(
        &sim,
        desktop,
        AnthropicSettings::new("claude-opus-5"),
        RunConfig::default(),
    );
    let outcome = runner
        .run("Write hello.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(outcome.steps, 4);
    assert_eq!(outcome.final_text, "Done.");
    assert_eq!(outcome.usage.n_requests, 4);
    assert!(!outcome.usage.incomplete);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    assert_eq!(presses(&recorder, 1), vec![(100, 120)]);
    assert!(recorder.typed_text().starts_with("héllo\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_and_overload_are_retried_without_repeating_an_action() {
    let (desktop, recorder) = desk();
    let sim = SimServer::start(SimConfig::with_policy(scripted(vec![
        vec![c("left_click", json!({"coordinate": [10, 10]}))],
        vec![c("left_click", json!({"coordinate": [20, 20]}))],
    ])))
    .unwrap();
    let handle = sim.handle();
    let mut runner = anthropic_runner(
        &sim,
        desktop,
        AnthropicSettings::new("claude-opus-5"),
        RunConfig::default(),
    );
    // After each action, the next request meets a 429 and then a 529 before it succeeds.
    runner.set_observer(Box::new(move |record: &Record| {
        if record.stage == Stage::Action {
            handle.inject(Fault::rate_limited_ms(5));
            handle.inject(Fault::Overloaded);
        }
    }));
    let outcome = runner
        .run("Click twice.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(outcome.steps, 3, "a retried request is one step");
    assert_eq!(
        presses(&recorder, 1),
        vec![(10, 10), (20, 20)],
        "no click repeated"
    );
    let faulted = sim
        .requests()
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Faulted { .. }))
        .count();
    assert_eq!(faulted, 4);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    // One idempotency key per logical request, the same on each of its retries.
    let keys: Vec<String> = sim
        .requests()
        .iter()
        .map(|r| {
            r.headers
                .iter()
                .find(|(name, _)| name == hands_models::http::IDEMPOTENCY_KEY)
                .map(|(_, value)| value.clone())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(keys.len(), 7, "{keys:?}");
    assert!(keys.iter().all(|k| k.starts_with("hands-")), "{keys:?}");
    assert!(keys[1..4].iter().all(|k| *k == keys[1]), "{keys:?}");
    assert!(keys[4..7].iter().all(|k| *k == keys[4]), "{keys:?}");
    let logical = std::collections::BTreeSet::from([&keys[0], &keys[1], &keys[4]]);
    assert_eq!(logical.len(), 3, "{keys:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_allowed_request_starts_nothing_and_its_text_is_a_finish() {
    let (desktop, recorder) = desk();
    // A model that always wants one more click, unless tools are off.
    let sim = SimServer::start(SimConfig::with_policy(|request: &Value| {
        if request["tool_choice"]["type"] == "none" {
            return Turn::text("I ran out of steps: the clicks so far are done.");
        }
        Turn::Blocks(vec![c("left_click", json!({"coordinate": [30, 30]}))])
    }))
    .unwrap();
    let runner = anthropic_runner(
        &sim,
        desktop,
        AnthropicSettings::new("claude-opus-5"),
        RunConfig { max_steps: 3 },
    );
    let outcome = runner
        .run("Click forever.", &CancellationToken::new())
        .await
        .unwrap();
    // A text answer on the last allowed request is a finish, as the SDKs' runners end.
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!(outcome.steps, 3);
    assert!(outcome.final_text.starts_with("I ran out of steps"));
    assert_eq!(
        presses(&recorder, 1).len(),
        2,
        "the third answer's click never ran"
    );
    let requests = sim.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2].body["tool_choice"], json!({"type": "none"}));
    assert!(requests[1].body.get("tool_choice").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_block_mid_batch_keeps_every_pair_and_runs_nothing_after_it() {
    let (desktop, recorder) = desk();
    let sim = SimServer::start(SimConfig::with_policy(scripted(vec![vec![
        c("left_click", json!({"coordinate": [40, 40]})),
        c("left_click", json!({"coordinate": [5000, 40]})),
        c("type", json!({"text": "never"})),
    ]])))
    .unwrap();
    let runner = anthropic_runner(
        &sim,
        desktop,
        AnthropicSettings::new("claude-opus-5"),
        RunConfig::default(),
    );
    let outcome = runner
        .run("Click.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let answer = &sim.requests()[1].body["messages"];
    let results = answer.as_array().unwrap().last().unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(results.len(), 3);
    assert!(results[0].get("is_error").is_none());
    assert_eq!(results[1]["is_error"], json!(true));
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .contains("outside the screenshot")
    );
    assert_eq!(
        results[2]["content"],
        json!("Not executed: an earlier computer action in this turn failed.")
    );
    assert!(
        results
            .iter()
            .all(|r| r["toolset_name"] == json!("computer"))
    );
    assert_eq!(presses(&recorder, 1), vec![(40, 40)]);
    assert_eq!(recorder.typed_text(), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forced_local_tool_choice_is_refused_before_any_request() {
    let (desktop, _recorder) = desk();
    let sim = SimServer::start(SimConfig::scripted(vec![])).unwrap();
    let mut settings = AnthropicSettings::new("claude-opus-5");
    settings.tool_choice = Some(ToolChoice::Any {
        disable_parallel_tool_use: None,
    });
    let runner = anthropic_runner(&sim, desktop, settings, RunConfig::default());
    let err = runner
        .run("Anything.", &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, RunError::ForcedLocalToolChoice(_)), "{err}");

    let (desktop, _recorder2) = desk();
    let mut settings = OpenAiSettings::new("computer-use-2");
    settings.tool_choice = Some(OpenAiToolChoice::Required);
    let runner = openai_runner(&sim, desktop, settings);
    assert!(matches!(
        runner.run("Anything.", &CancellationToken::new()).await,
        Err(RunError::ForcedLocalToolChoice(_))
    ));
    assert_eq!(sim.requests().len(), 0);
}

/// Denies every action, counting how often it was asked.
struct CountingDeny(Arc<AtomicUsize>);

#[async_trait]
impl Approver for CountingDeny {
    async fn approve_safety_checks(
        &mut self,
        _: SafetyChecksContext,
        _: &CancellationToken,
    ) -> Decision {
        Decision::Deny
    }
    fn reviews(&self, kind: EffectKind) -> bool {
        kind == EffectKind::Computer
    }
    async fn approve(&mut self, _: Effect, _: &CancellationToken) -> Decision {
        self.0.fetch_add(1, Ordering::SeqCst);
        Decision::Deny
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_claude_action_is_answered_and_nothing_reaches_the_desktop() {
    let (desktop, recorder) = desk();
    let sim = SimServer::start(SimConfig::with_policy(scripted(vec![vec![
        c("left_click", json!({"coordinate": [50, 50]})),
        c("type", json!({"text": "no"})),
    ]])))
    .unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let mut runner = anthropic_runner(
        &sim,
        desktop,
        AnthropicSettings::new("claude-opus-5"),
        RunConfig::default(),
    );
    runner.set_approver(Box::new(CountingDeny(Arc::clone(&asked))));
    let outcome = runner
        .run("Click.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "asked before the first block only"
    );
    assert!(presses(&recorder, 1).is_empty());
    assert_eq!(recorder.typed_text(), "");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let answer = sim.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .clone();
    assert_eq!(answer[0]["is_error"], json!(true));
    assert_eq!(
        answer[0]["content"],
        json!(hands_runner::approval::refused_text("left_click"))
    );
    assert_eq!(
        answer[1]["content"],
        json!(hands_toolset::strings::NOT_EXECUTED)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_computer_calls_run_in_order_with_a_final_screenshot() {
    let (desktop, recorder) = desk();
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        Turn::Items(match n {
            1 => vec![computer_call(vec![json!({"type": "screenshot"})])],
            2 => vec![computer_call(vec![
                json!({"type": "click", "button": "left", "x": 200, "y": 150}),
                json!({"type": "type", "text": "ok"}),
                json!({"type": "keypress", "keys": ["CTRL", "A"]}),
                json!({"type": "scroll", "x": 10, "y": 10, "scroll_x": 0, "scroll_y": 300}),
            ])],
            _ => vec![message("Finished.")],
        })
    }))
    .unwrap();
    let runner = openai_runner(&sim, desktop, OpenAiSettings::new("computer-use-2"));
    let outcome = runner
        .run("Type ok.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(outcome.final_text, "Finished.");
    assert_eq!(outcome.steps, 3);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    assert_eq!(presses(&recorder, 1), vec![(200, 150)]);
    assert_eq!(
        presses(&recorder, 5).len(),
        3,
        "300 px is three wheel notches down"
    );
    let events = recorder.sync().unwrap();
    assert!(
        events
            .iter()
            .any(|e| e.kind == EventKind::KeyPress && e.ch == Some('a'))
    );
    assert!(recorder.typed_text().starts_with("ok"));
    // hands projects the history, so the input goes whole (never chained by id, which would
    // leave the screenshots on the server beyond any pruning), the output after its call.
    let requests = sim.requests();
    assert!(requests[1].body.get("previous_response_id").is_none());
    let input = requests[1].body["input"].as_array().unwrap();
    assert_eq!(input[1]["type"], json!("computer_call"));
    assert_eq!(input.last().unwrap()["type"], json!("computer_call_output"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_safety_checks_stop_the_run_before_any_action() {
    let (desktop, recorder) = desk();
    let turn = || {
        Turn::Items(vec![computer_call_with_checks(
            vec![json!({"type": "click", "button": "left", "x": 60, "y": 60})],
            vec![
                json!({"code": "malicious_instructions", "message": "The page asks you to do X."}),
            ],
        )])
    };
    let sim = SimServer::start(SimConfig::scripted(vec![turn(), Turn::text("done")])).unwrap();
    let mut runner = openai_runner(&sim, desktop, OpenAiSettings::new("computer-use-2"));
    runner.set_approver(Box::new(DenyAll));
    let outcome = runner
        .run("Click.", &CancellationToken::new())
        .await
        .unwrap();
    assert!(
        matches!(
            outcome.status,
            RunStatus::Stopped(StopReason::SafetyChecksDenied { .. })
        ),
        "{outcome:?}"
    );
    assert!(presses(&recorder, 1).is_empty());

    // Approved, the same call runs and its checks are acknowledged (the sim rejects otherwise).
    let (desktop, recorder) = desk();
    let sim = SimServer::start(SimConfig::scripted(vec![turn(), Turn::text("done")])).unwrap();
    let mut runner = openai_runner(&sim, desktop, OpenAiSettings::new("computer-use-2"));
    runner.set_approver(Box::new(ApproveAll));
    let outcome = runner
        .run("Click.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(presses(&recorder, 1), vec![(60, 60)]);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let input = sim.requests()[1].body["input"].clone();
    let output = input
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "computer_call_output")
        .unwrap()
        .clone();
    let ack = &output["acknowledged_safety_checks"];
    assert_eq!(ack.as_array().map(Vec::len), Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_concurrent_run_is_refused() {
    let (desktop, _recorder) = desk();
    let sim = SimServer::start(SimConfig::with_policy(scripted(vec![vec![c(
        "wait",
        json!({"duration": 1}),
    )]])))
    .unwrap();
    let runner = Arc::new(anthropic_runner(
        &sim,
        desktop,
        AnthropicSettings::new("claude-opus-5"),
        RunConfig::default(),
    ));
    let cancel = CancellationToken::new();
    let first = {
        let runner = Arc::clone(&runner);
        let cancel = cancel.clone();
        tokio::spawn(async move { runner.run("Wait.", &cancel).await })
    };
    // Let the first run reach its one-second wait.
    while sim.requests().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(runner.run("Again.", &cancel).await, Err(RunError::Busy));
    let outcome = first.await.unwrap().unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_stops_between_actions() {
    let (desktop, recorder) = desk();
    let sim = SimServer::start(SimConfig::with_policy(scripted(vec![vec![
        c("left_click", json!({"coordinate": [70, 70]})),
        c("left_click", json!({"coordinate": [80, 80]})),
        c("left_click", json!({"coordinate": [90, 90]})),
    ]])))
    .unwrap();
    let cancel = CancellationToken::new();
    let mut runner = anthropic_runner(
        &sim,
        desktop,
        AnthropicSettings::new("claude-opus-5"),
        RunConfig::default(),
    );
    let on_action = cancel.clone();
    runner.set_observer(Box::new(move |record: &Record| {
        if record.stage == Stage::Action {
            on_action.cancel();
        }
    }));
    let outcome = runner.run("Click thrice.", &cancel).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Stopped(StopReason::Cancelled));
    assert_eq!(presses(&recorder, 1), vec![(70, 70)]);
    assert_eq!(outcome.executed_call_ids.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_stateless_mode_replays_every_item_with_reasoning_unchanged() {
    let (desktop, recorder) = desk();
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        Turn::Items(match n {
            1 => vec![
                hands_sim::policy::reasoning("I should click the target."),
                computer_call(vec![
                    json!({"type": "click", "button": "left", "x": 33, "y": 44}),
                ]),
            ],
            _ => vec![message("Clicked.")],
        })
    }))
    .unwrap();
    let mut settings = OpenAiSettings::new("computer-use-2");
    settings.store = false;
    let runner = openai_runner(&sim, desktop, settings);
    let outcome = runner
        .run("Click.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let second = &sim.requests()[1].body;
    assert!(second.get("previous_response_id").is_none());
    assert_eq!(second["store"], json!(false));
    assert_eq!(second["include"], json!(["reasoning.encrypted_content"]));
    let kinds: Vec<&str> = second["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("message"))
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "computer_call",
            "computer_call_output"
        ]
    );
    assert_eq!(presses(&recorder, 1), vec![(33, 44)]);
}

/// Two computer calls in one streamed response; the stream drops after the first one is
/// complete (created, in_progress, added, done = 4 events).
fn two_calls_then_a_drop(sim: &SimServer) {
    sim.inject(Fault::DropConnection { after_events: 4 });
}

fn two_calls() -> impl FnMut(&Value) -> Turn + Send {
    let mut n = 0;
    move |_: &Value| {
        n += 1;
        Turn::Items(match n {
            1 => vec![
                computer_call(vec![
                    json!({"type": "click", "button": "left", "x": 11, "y": 12}),
                ]),
                computer_call(vec![
                    json!({"type": "click", "button": "left", "x": 21, "y": 22}),
                ]),
            ],
            _ => vec![message("Done.")],
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eager_streaming_executes_completed_calls_before_the_response_ends() {
    // A dropped stream: eagerly, the first call already ran (and stays recorded); the second,
    // never complete, did not.
    let (desktop, recorder) = desk();
    let sim = SimServer::start(SimConfig::with_policy(two_calls())).unwrap();
    two_calls_then_a_drop(&sim);
    let mut settings = OpenAiSettings::new("computer-use-2");
    settings.stream = true;
    settings.eager = true;
    let mut config = OpenAiConfig::new("sk-test");
    config.base_url = sim.openai_base_url();
    let client = OpenAiClient::new(config)
        .unwrap()
        .with_retry_policy(RetryPolicy::disabled());
    let boxed: Box<dyn Desktop> = Box::new(desktop);
    let runner = Runner::openai(
        client,
        settings,
        Some(ComputerCallExecutor::new(
            boxed,
            ComputerCallConfig::default(),
        )),
        Toolbox::default(),
        RunConfig::default(),
    );
    let outcome = runner
        .run("Click twice.", &CancellationToken::new())
        .await
        .unwrap();
    assert!(
        matches!(outcome.status, RunStatus::Stopped(StopReason::Api(_))),
        "{outcome:?}"
    );
    assert_eq!(presses(&recorder, 1), vec![(11, 12)]);
    assert_eq!(outcome.executed_call_ids.len(), 1);

    // Without eager, the same dropped stream runs nothing.
    let (desktop, recorder) = desk();
    let sim = SimServer::start(SimConfig::with_policy(two_calls())).unwrap();
    two_calls_then_a_drop(&sim);
    let mut settings = OpenAiSettings::new("computer-use-2");
    settings.stream = true;
    let mut config = OpenAiConfig::new("sk-test");
    config.base_url = sim.openai_base_url();
    let client = OpenAiClient::new(config)
        .unwrap()
        .with_retry_policy(RetryPolicy::disabled());
    let boxed: Box<dyn Desktop> = Box::new(desktop);
    let runner = Runner::openai(
        client,
        settings,
        Some(ComputerCallExecutor::new(
            boxed,
            ComputerCallConfig::default(),
        )),
        Toolbox::default(),
        RunConfig::default(),
    );
    let outcome = runner
        .run("Click twice.", &CancellationToken::new())
        .await
        .unwrap();
    assert!(
        matches!(outcome.status, RunStatus::Stopped(StopReason::Api(_))),
        "{outcome:?}"
    );
    assert!(presses(&recorder, 1).is_empty());

    // A whole eager stream answers like a plain one.
    let (desktop, recorder) = desk();
    let sim = SimServer::start(SimConfig::with_policy(two_calls())).unwrap();
    let mut settings = OpenAiSettings::new("computer-use-2");
    settings.stream = true;
    settings.eager = true;
    let runner = openai_runner(&sim, desktop, settings);
    let outcome = runner
        .run("Click twice.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(presses(&recorder, 1), vec![(11, 12), (21, 22)]);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}
