//! Per-turn and streaming control against the simulated APIs: a run iterated turn by turn
//! (supplied outputs, appended text, closing), events as independent copies, the early
//! execution policy and `before_early_call`, independent functions run concurrently, and the
//! attempted and completed call ids of an interrupted run. Each test proves what ran by what
//! the functions counted and what the next request carried.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hands_core::CancellationToken;
use hands_core::geometry::Size;
use hands_core::image::{EncodedImage, MediaType};
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_models::openai::{OpenAiClient, OpenAiConfig};
use hands_runner::control::{EarlyCall, TurnCall};
use hands_runner::functions::{Function, Functions, OutputPart, ToolOutput};
use hands_runner::{
    AnthropicSettings, EarlyDecision, EarlyExecution, OpenAiSettings, RunConfig, RunError,
    RunEvent, RunStatus, Runner, StopReason, Toolbox, TurnError,
};
use hands_sim::policy::{function_call, message, text, tool_use};
use hands_sim::{SimConfig, SimServer, Turn};
use serde::Deserialize;
use serde_json::{Value, json};

fn anthropic_client(sim: &SimServer) -> AnthropicClient {
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = sim.base_url();
    AnthropicClient::new(config).unwrap()
}

fn openai_client(sim: &SimServer) -> OpenAiClient {
    let mut config = OpenAiConfig::new("sk-test");
    config.base_url = sim.openai_base_url();
    OpenAiClient::new(config).unwrap()
}

/// Runs of each function, by name.
#[derive(Clone, Default)]
struct Counts(Arc<Mutex<Vec<String>>>);

impl Counts {
    fn of(&self, name: &str) -> usize {
        self.0.lock().unwrap().iter().filter(|n| *n == name).count()
    }
}

/// A function that counts its runs and answers `"<name> done"`.
fn counted(name: &str, counts: &Counts) -> Function {
    let counts = counts.clone();
    let owned = name.to_owned();
    Function::typed(name, "Counts.", move |_: Value| {
        let counts = counts.clone();
        let name = owned.clone();
        async move {
            counts.0.lock().unwrap().push(name.clone());
            Ok::<_, String>(format!("{name} done"))
        }
    })
}

fn functions(list: Vec<Function>) -> Functions {
    let mut functions = Functions::new();
    for f in list {
        functions.add(f).unwrap();
    }
    functions
}

fn openai_runner(sim: &SimServer, settings: OpenAiSettings, fs: Functions, steps: u32) -> Runner {
    Runner::openai(
        openai_client(sim),
        settings,
        None,
        Toolbox {
            functions: fs,
            ..Toolbox::default()
        },
        RunConfig { max_steps: steps },
    )
}

fn eager_settings(policy: Option<EarlyExecution>) -> OpenAiSettings {
    let mut settings = OpenAiSettings::new("gpt-5.5");
    settings.stream = true;
    settings.eager = true;
    settings.early_execution = policy;
    settings
}

/// The `input` of OpenAI request `n`.
fn input_of(sim: &SimServer, n: usize) -> Vec<Value> {
    sim.requests()[n].body["input"].as_array().unwrap().clone()
}

/// The `function_call_output` answering `call_id` in OpenAI request `n`.
fn output_in(sim: &SimServer, n: usize, call_id: &str) -> Value {
    input_of(sim, n)
        .into_iter()
        .find(|i| i["type"] == "function_call_output" && i["call_id"] == call_id)
        .unwrap_or_else(|| panic!("no output for {call_id} in request {n}"))["output"]
        .clone()
}

fn ids(calls: &[TurnCall]) -> Vec<String> {
    calls.iter().map(|c| c.call_id.clone()).collect()
}

fn tried(calls: &[TurnCall]) -> Vec<bool> {
    calls.iter().map(|c| c.tried).collect()
}

/// A 1×1 PNG.
fn pixel() -> EncodedImage {
    EncodedImage {
        size: Size::new(1, 1).unwrap(),
        media_type: MediaType::Png,
        base64: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==".to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn iterate_shows_each_turn_before_its_calls_run() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![
            function_call("f", json!({})),
            function_call("g", json!({})),
        ]),
        Turn::text("Both done."),
    ]))
    .unwrap();
    let counts = Counts::default();
    let runner = openai_runner(
        &sim,
        OpenAiSettings::new("gpt-5.5"),
        functions(vec![counted("f", &counts), counted("g", &counts)]),
        20,
    );
    let cancel = CancellationToken::new();
    let mut turns = runner.iterate("Do both.", &cancel);
    let first = turns.next_turn().await.unwrap();
    assert_eq!((first.step, first.final_turn), (1, false));
    assert_eq!(tried(&first.calls), vec![false, false]);
    assert_eq!(first.response["output"].as_array().unwrap().len(), 2);
    // Paused: nothing of the turn ran, and no second request went out.
    assert_eq!((counts.of("f"), counts.of("g")), (0, 0));
    assert_eq!(sim.requests().len(), 1);
    let second = turns.next_turn().await.unwrap();
    assert_eq!((counts.of("f"), counts.of("g")), (1, 1));
    assert!(second.final_turn);
    assert_eq!(second.attempted_call_ids, ids(&first.calls));
    assert_eq!(second.completed_call_ids, ids(&first.calls));
    assert!(turns.next_turn().await.is_none());
    let outcome = turns.finish().await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!(outcome.final_text, "Both done.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appended_text_follows_the_turns_outputs_and_keeps_the_step_limit() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![function_call("f", json!({}))]),
        Turn::Items(vec![function_call("f", json!({}))]),
        Turn::text("Never reached."),
    ]))
    .unwrap();
    let counts = Counts::default();
    let runner = openai_runner(
        &sim,
        OpenAiSettings::new("gpt-5.5"),
        functions(vec![counted("f", &counts)]),
        2,
    );
    let cancel = CancellationToken::new();
    let mut turns = runner.iterate("Check the date.", &cancel);
    let first = turns.next_turn().await.unwrap();
    assert_eq!(first.append_user_text("  \n"), Err(TurnError::EmptyText));
    first.append_user_text("Check the 12th instead.").unwrap();
    let second = turns.next_turn().await.unwrap();
    // Moved on: the first turn takes nothing more.
    assert_eq!(
        first.append_user_text("Too late."),
        Err(TurnError::NotPaused)
    );
    // The last allowed request: its calls never run, nothing can follow it.
    assert!(second.final_turn);
    assert_eq!(second.append_user_text("More."), Err(TurnError::Final));
    assert!(turns.next_turn().await.is_none());
    let outcome = turns.finish().await.unwrap();
    assert_eq!(outcome.status, RunStatus::StepLimit);
    assert_eq!(outcome.steps, 2);
    assert_eq!(counts.of("f"), 1);
    let input = input_of(&sim, 1);
    let kinds: Vec<&str> = input
        .iter()
        .map(|i| {
            i["type"]
                .as_str()
                .unwrap_or(i["role"].as_str().unwrap_or(""))
        })
        .collect();
    assert_eq!(kinds.last(), Some(&"message"), "{input:?}");
    assert_eq!(input.last().unwrap()["role"], "user");
    assert_eq!(
        input.last().unwrap()["content"][0]["text"],
        json!("Check the 12th instead.")
    );
    let output_at = kinds
        .iter()
        .position(|k| *k == "function_call_output")
        .unwrap();
    assert!(output_at < kinds.len() - 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn supplied_outputs_answer_suppliable_functions_without_running_them() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![
            function_call("lookup", json!({})),
            function_call("f", json!({})),
        ]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let counts = Counts::default();
    let runner = openai_runner(
        &sim,
        OpenAiSettings::new("gpt-5.5"),
        functions(vec![
            counted("lookup", &counts).suppliable(),
            counted("f", &counts),
        ]),
        20,
    );
    let cancel = CancellationToken::new();
    let mut turns = runner.iterate("Look it up.", &cancel);
    let turn = turns.next_turn().await.unwrap();
    let (lookup, f) = (turn.calls[0].call_id.clone(), turn.calls[1].call_id.clone());
    assert!(turn.calls[0].suppliable && !turn.calls[1].suppliable);
    // Not suppliable: refused whole, nothing kept.
    assert_eq!(
        turn.supply_outputs([(f.clone(), ToolOutput::from("fake"))]),
        Err(TurnError::NotSuppliable { call_id: f.clone() })
    );
    assert!(matches!(
        turn.supply_outputs([("call_unknown", ToolOutput::from("x"))]),
        Err(TurnError::NotSuppliable { .. })
    ));
    assert_eq!(
        turn.supply_outputs([
            (lookup.clone(), ToolOutput::from("a")),
            (lookup.clone(), ToolOutput::from("b"))
        ]),
        Err(TurnError::DuplicateOutput {
            call_id: lookup.clone()
        })
    );
    assert!(matches!(
        turn.supply_outputs([(lookup.clone(), ToolOutput::Parts(vec![]))]),
        Err(TurnError::InvalidOutput { .. })
    ));
    // A later supply replaces the earlier one.
    turn.supply_outputs([(lookup.clone(), ToolOutput::from("first"))])
        .unwrap();
    turn.supply_outputs([(lookup.clone(), ToolOutput::from("Booking R1: 2 nights."))])
        .unwrap();
    let outcome = turns.finish().await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!((counts.of("lookup"), counts.of("f")), (0, 1));
    assert_eq!(output_in(&sim, 1, &lookup), json!("Booking R1: 2 nights."));
    assert_eq!(output_in(&sim, 1, &f), json!("f done"));
    // Supplied: completed, never attempted (nothing ran).
    assert_eq!(outcome.executed_call_ids, vec![f.clone()]);
    assert_eq!(outcome.completed_call_ids, vec![lookup, f]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_turn_takes_supplied_outputs_and_appended_text() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![
            tool_use("lookup", json!({})),
            tool_use("f", json!({})),
        ]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let counts = Counts::default();
    let runner = Runner::anthropic(
        anthropic_client(&sim),
        AnthropicSettings::new("claude-opus-5"),
        None,
        Toolbox {
            functions: functions(vec![
                counted("lookup", &counts).suppliable(),
                counted("f", &counts),
            ]),
            ..Toolbox::default()
        },
        RunConfig::default(),
    );
    let cancel = CancellationToken::new();
    let mut turns = runner.iterate("Look it up.", &cancel);
    let turn = turns.next_turn().await.unwrap();
    let lookup = turn.calls[0].call_id.clone();
    assert!(matches!(
        turn.supply_outputs([(turn.calls[1].call_id.clone(), ToolOutput::from("x"))]),
        Err(TurnError::NotSuppliable { .. })
    ));
    turn.supply_outputs([(
        lookup.clone(),
        ToolOutput::Parts(vec![
            OutputPart::Text("The booking page:".into()),
            OutputPart::Image(pixel()),
        ]),
    )])
    .unwrap();
    turn.append_user_text("Prefer the 12th.").unwrap();
    let outcome = turns.finish().await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!((counts.of("lookup"), counts.of("f")), (0, 1));
    let messages = sim.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let content = messages.last().unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(content[0]["type"], "tool_result");
    assert_eq!(content[0]["tool_use_id"], json!(lookup));
    assert_eq!(content[0]["content"][0]["text"], "The booking page:");
    assert_eq!(content[0]["content"][1]["type"], "image");
    assert_eq!(content[1]["type"], "tool_result");
    assert_eq!(
        content[2],
        json!({"type": "text", "text": "Prefer the 12th."})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_iteration_runs_no_deferred_call() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![function_call("f", json!({}))]),
        Turn::text("Never reached."),
    ]))
    .unwrap();
    let counts = Counts::default();
    let runner = openai_runner(
        &sim,
        OpenAiSettings::new("gpt-5.5"),
        functions(vec![counted("f", &counts)]),
        20,
    );
    let cancel = CancellationToken::new();
    let mut turns = runner.iterate("Go.", &cancel);
    let turn = turns.next_turn().await.unwrap();
    turn.append_user_text("Never sent.").unwrap();
    let outcome = turns.close().await.unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::Stopped(StopReason::IterationClosed)
    );
    assert_eq!(counts.of("f"), 0);
    assert!(outcome.executed_call_ids.is_empty());
    assert_eq!(sim.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_are_copies_a_callback_cannot_change_the_run() {
    for stream in [false, true] {
        let sim = SimServer::start(SimConfig::scripted(vec![
            Turn::Items(vec![function_call("f", json!({}))]),
            Turn::text("Done."),
        ]))
        .unwrap();
        let counts = Counts::default();
        let mut settings = OpenAiSettings::new("gpt-5.5");
        settings.stream = stream;
        let mut runner = openai_runner(&sim, settings, functions(vec![counted("f", &counts)]), 20);
        let seen: Arc<Mutex<Vec<RunEvent>>> = Arc::default();
        let kept = Arc::clone(&seen);
        runner.set_on_event(Box::new(move |mut event| {
            // The callback owns its copy: scribbling on it must change nothing sent.
            if let RunEvent::CallFinished { output, .. } = &mut event {
                output["output"] = json!("tampered");
            }
            if let RunEvent::TurnCompleted { response, .. } = &mut event {
                response["output"] = json!([]);
            }
            kept.lock().unwrap().push(event);
        }));
        let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
        assert_eq!(outcome.status, RunStatus::Finished, "stream {stream}");
        let call_id = outcome.executed_call_ids[0].clone();
        assert_eq!(output_in(&sim, 1, &call_id), json!("f done"));
        let events = seen.lock().unwrap().clone();
        let names: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                RunEvent::RequestStarted { .. } => Some("request"),
                RunEvent::TurnCompleted { .. } => Some("turn"),
                RunEvent::CallStarted { .. } => Some("call"),
                RunEvent::CallFinished { .. } => Some("output"),
                RunEvent::Ended { .. } => Some("end"),
                _ => None,
            })
            .collect();
        assert_eq!(
            names,
            [
                "request", "turn", "call", "output", "request", "turn", "end"
            ],
            "stream {stream}"
        );
        let n_stream = events
            .iter()
            .filter(|e| matches!(e, RunEvent::OpenAiStream(_)))
            .count();
        assert_eq!(n_stream > 0, stream, "stream {stream}");
        assert!(matches!(
            events.last(),
            Some(RunEvent::Ended {
                status: RunStatus::Finished
            })
        ));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_early_policy_defers_every_call() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![
            function_call("f", json!({})),
            function_call("g", json!({})),
        ]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let counts = Counts::default();
    let runner = openai_runner(
        &sim,
        eager_settings(Some(EarlyExecution::default())),
        functions(vec![counted("f", &counts), counted("g", &counts)]),
        20,
    );
    let cancel = CancellationToken::new();
    let mut turns = runner.iterate("Go.", &cancel);
    let turn = turns.next_turn().await.unwrap();
    assert_eq!(tried(&turn.calls), vec![false, false]);
    assert_eq!(counts.0.lock().unwrap().len(), 0);
    let outcome = turns.finish().await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!(*counts.0.lock().unwrap(), vec!["f", "g"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_deferred_call_defers_every_call_after_it() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![
            function_call("f", json!({})),
            function_call("g", json!({})),
            function_call("f", json!({})),
        ]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let counts = Counts::default();
    let runner = openai_runner(
        &sim,
        eager_settings(Some(EarlyExecution {
            functions: vec!["f".into()],
            computer: false,
        })),
        functions(vec![counted("f", &counts), counted("g", &counts)]),
        20,
    );
    let cancel = CancellationToken::new();
    let mut turns = runner.iterate("Go.", &cancel);
    let turn = turns.next_turn().await.unwrap();
    // `f` ran while streaming; `g` is outside the policy, and the later `f` waits behind it.
    assert_eq!(tried(&turn.calls), vec![true, false, false]);
    assert_eq!(*counts.0.lock().unwrap(), vec!["f"]);
    assert_eq!(turn.attempted_call_ids, vec![turn.calls[0].call_id.clone()]);
    let outcome = turns.finish().await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!(*counts.0.lock().unwrap(), vec!["f", "g", "f"]);
    assert_eq!(outcome.executed_call_ids, ids(&turn.calls));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_early_call_may_defer_but_never_promote() {
    // No policy: the hook sees every call, and defers `g` (and what follows).
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![
            function_call("f", json!({})),
            function_call("g", json!({})),
            function_call("f", json!({})),
        ]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let counts = Counts::default();
    let mut runner = openai_runner(
        &sim,
        eager_settings(None),
        functions(vec![counted("f", &counts), counted("g", &counts)]),
        20,
    );
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let asked_in = Arc::clone(&asked);
    runner.set_before_early_call(Box::new(move |call: &EarlyCall| {
        asked_in.lock().unwrap().push(call.name.clone());
        if call.name == "g" {
            EarlyDecision::Defer
        } else {
            EarlyDecision::Execute
        }
    }));
    let cancel = CancellationToken::new();
    let mut turns = runner.iterate("Go.", &cancel);
    let turn = turns.next_turn().await.unwrap();
    assert_eq!(tried(&turn.calls), vec![true, false, false]);
    assert_eq!(*asked.lock().unwrap(), vec!["f", "g"]);
    assert_eq!(turns.finish().await.unwrap().status, RunStatus::Finished);

    // An empty policy: the hook is never asked, and cannot run anything early.
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![function_call("f", json!({}))]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let counts = Counts::default();
    let mut runner = openai_runner(
        &sim,
        eager_settings(Some(EarlyExecution::default())),
        functions(vec![counted("f", &counts)]),
        20,
    );
    let asked: Arc<AtomicUsize> = Arc::default();
    let asked_in = Arc::clone(&asked);
    runner.set_before_early_call(Box::new(move |_: &EarlyCall| {
        asked_in.fetch_add(1, Ordering::SeqCst);
        EarlyDecision::Execute
    }));
    let mut turns = runner.iterate("Go.", &cancel);
    let turn = turns.next_turn().await.unwrap();
    assert_eq!(tried(&turn.calls), vec![false]);
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    assert_eq!(turns.finish().await.unwrap().status, RunStatus::Finished);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_early_policy_naming_an_undeclared_function_is_refused() {
    let sim = SimServer::start(SimConfig::scripted(vec![Turn::text("Done.")])).unwrap();
    let counts = Counts::default();
    for (policy, why) in [
        (
            EarlyExecution {
                functions: vec!["nope".into()],
                computer: false,
            },
            "early_execution names `nope`",
        ),
        (
            EarlyExecution {
                functions: vec!["f".into(), "f".into()],
                computer: false,
            },
            "early_execution names `f`",
        ),
        (
            EarlyExecution {
                functions: vec![],
                computer: true,
            },
            hands_runner::control::EARLY_COMPUTER_WITHOUT_COMPUTER,
        ),
    ] {
        let runner = openai_runner(
            &sim,
            eager_settings(Some(policy)),
            functions(vec![counted("f", &counts)]),
            20,
        );
        let err = runner
            .run("Go.", &CancellationToken::new())
            .await
            .unwrap_err();
        let RunError::Config(text) = err else {
            panic!("{err:?}")
        };
        assert!(text.starts_with(why), "{text}");
    }
    let mut settings = eager_settings(None);
    settings.max_concurrent_calls = 0;
    let runner = openai_runner(&sim, settings, functions(vec![]), 20);
    assert_eq!(
        runner.run("Go.", &CancellationToken::new()).await,
        Err(RunError::Config(
            hands_runner::control::ZERO_CONCURRENT_CALLS.into()
        ))
    );
    assert!(sim.requests().is_empty());
}

/// How many calls run at once, and the most that ever did.
#[derive(Default)]
struct Overlap {
    running: AtomicUsize,
    peak: AtomicUsize,
}

/// An independent function that stays running a while, counting the calls running with it.
fn overlapping(name: &str, overlap: &Arc<Overlap>) -> Function {
    slow(name, overlap).independent()
}

/// A function that stays running a while, counting the calls running with it.
fn slow(name: &str, overlap: &Arc<Overlap>) -> Function {
    let overlap = Arc::clone(overlap);
    Function::typed(name, "Takes a while.", move |_: Value| {
        let overlap = Arc::clone(&overlap);
        async move {
            let now = overlap.running.fetch_add(1, Ordering::SeqCst) + 1;
            overlap.peak.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(300)).await;
            overlap.running.fetch_sub(1, Ordering::SeqCst);
            Ok::<_, String>("done".to_owned())
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn independent_functions_run_concurrently_up_to_the_limit() {
    for limit in [1, 2, 3] {
        let sim = SimServer::start(SimConfig::scripted(vec![
            Turn::Items(vec![
                function_call("a", json!({})),
                function_call("b", json!({})),
                function_call("c", json!({})),
            ]),
            Turn::text("Done."),
        ]))
        .unwrap();
        let overlap = Arc::new(Overlap::default());
        let mut settings = eager_settings(None);
        settings.max_concurrent_calls = limit;
        let runner = openai_runner(
            &sim,
            settings,
            functions(["a", "b", "c"].map(|n| overlapping(n, &overlap)).into()),
            20,
        );
        let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
        assert_eq!(outcome.status, RunStatus::Finished, "limit {limit}");
        assert_eq!(overlap.peak.load(Ordering::SeqCst), limit, "limit {limit}");
        // Outputs keep the calls' order whatever order they finished in.
        assert_eq!(outcome.completed_call_ids, outcome.executed_call_ids);
        for id in &outcome.executed_call_ids {
            assert_eq!(output_in(&sim, 1, id), json!("done"));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn independent_functions_run_in_order_when_a_ledger_is_kept_or_not_eager() {
    for ledger in [false, true] {
        let sim = SimServer::start(SimConfig::scripted(vec![
            Turn::Items(vec![
                function_call("a", json!({})),
                function_call("b", json!({})),
            ]),
            Turn::text("Done."),
        ]))
        .unwrap();
        let overlap = Arc::new(Overlap::default());
        // With a ledger: eager, but sequential. Without: not eager, so sequential too.
        let settings = if ledger {
            eager_settings(None)
        } else {
            OpenAiSettings::new("gpt-5.5")
        };
        let mut runner = openai_runner(
            &sim,
            settings,
            functions(["a", "b"].map(|n| overlapping(n, &overlap)).into()),
            20,
        );
        if ledger {
            runner.set_ledger(Box::new(hands_runner::ledger::MemoryLedger::new("run-1")));
        }
        let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
        assert_eq!(outcome.status, RunStatus::Finished, "ledger {ledger}");
        assert_eq!(overlap.peak.load(Ordering::SeqCst), 1, "ledger {ledger}");
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[allow(dead_code, reason = "only the schema is read")]
struct Booking {
    reference: String,
    nights: Option<u32>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_run_reports_attempted_and_completed_calls() {
    // `f` completes, `boom` fails: both attempted, only `f` completed; `g` never starts.
    let counts = Counts::default();
    for stream in [false, true] {
        let sim = SimServer::start(SimConfig::scripted(vec![Turn::Items(vec![
            function_call("f", json!({})),
            function_call("boom", json!({})),
            function_call("g", json!({})),
        ])]))
        .unwrap();
        let settings = if stream {
            eager_settings(None)
        } else {
            OpenAiSettings::new("gpt-5.5")
        };
        let runner = openai_runner(
            &sim,
            settings,
            functions(vec![
                counted("f", &counts),
                counted("g", &counts),
                // Declared fatal: its failure stops the run (by default it is answered).
                Function::typed("boom", "Fails.", |_: Value| async move {
                    Err::<String, _>("the printer is on fire".to_owned())
                })
                .fatal(),
            ]),
            20,
        );
        let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
        assert!(
            matches!(&outcome.status, RunStatus::Stopped(StopReason::FunctionFailed { name, .. }) if name == "boom"),
            "{outcome:?}"
        );
        assert_eq!(outcome.executed_call_ids.len(), 2, "stream {stream}");
        assert_eq!(
            outcome.completed_call_ids,
            outcome.executed_call_ids[..1].to_vec(),
            "stream {stream}"
        );
    }
    assert_eq!(counts.of("g"), 0);

    // Cancelled inside a function: attempted, not completed.
    let sim = SimServer::start(SimConfig::scripted(vec![Turn::Items(vec![
        function_call("f", json!({})),
        function_call("stop", json!({})),
    ])]))
    .unwrap();
    let cancel = CancellationToken::new();
    let in_fn = cancel.clone();
    let counts = Counts::default();
    let runner = openai_runner(
        &sim,
        eager_settings(None),
        functions(vec![
            counted("f", &counts),
            Function::typed("stop", "Cancels the run.", move |_: Value| {
                let cancel = in_fn.clone();
                async move {
                    cancel.cancel();
                    Err::<String, _>("cancelled".to_owned())
                }
            }),
        ]),
        20,
    );
    let outcome = runner.run("Go.", &cancel).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Stopped(StopReason::Cancelled));
    assert_eq!(outcome.executed_call_ids.len(), 2);
    assert_eq!(outcome.completed_call_ids, outcome.executed_call_ids[..1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strict_function_is_declared_strict_and_its_image_output_is_sent_as_input_image() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![function_call(
            "snap",
            json!({"reference": "R1", "nights": null}),
        )]),
        Turn::Items(vec![message("Seen.")]),
    ]))
    .unwrap();
    let snap = Function::typed_output("snap", "Shows a booking.", |b: Booking| async move {
        Ok(ToolOutput::Parts(vec![
            OutputPart::Text(format!("{} for {:?} nights", b.reference, b.nights)),
            OutputPart::Image(pixel()),
        ]))
    })
    .strict()
    .unwrap();
    assert!(snap.is_strict());
    let runner = openai_runner(
        &sim,
        OpenAiSettings::new("gpt-5.5"),
        functions(vec![snap]),
        20,
    );
    let outcome = runner
        .run("Show R1.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    let tool = &sim.requests()[0].body["tools"][0];
    assert_eq!(tool["strict"], json!(true));
    assert_eq!(tool["parameters"]["additionalProperties"], json!(false));
    assert_eq!(
        tool["parameters"]["required"],
        json!(["nights", "reference"])
    );
    let output = output_in(&sim, 1, &outcome.executed_call_ids[0]);
    assert_eq!(
        output[0],
        json!({"type": "input_text", "text": "R1 for None nights"})
    );
    assert_eq!(output[1]["type"], "input_image");
    assert_eq!(
        output[1]["image_url"],
        json!(format!("data:image/png;base64,{}", pixel().base64))
    );
    // A type strict mode cannot express is refused before any run.
    #[derive(Deserialize, schemars::JsonSchema)]
    #[allow(dead_code, reason = "only the schema is read")]
    struct Loose {
        #[serde(default)]
        nights: u32,
    }
    let err = Function::typed("loose", "", |_: Loose| async { Ok::<_, String>("") })
        .strict()
        .unwrap_err();
    assert_eq!(err.path, "/properties/nights");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_functions_answer_with_images_in_the_tool_result() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![
            text("Looking."),
            tool_use("snap", json!({"reference": "R1", "nights": null})),
        ]),
        Turn::text("Seen."),
    ]))
    .unwrap();
    let snap = Function::typed_output("snap", "Shows.", |_: Booking| async move {
        Ok(ToolOutput::Parts(vec![OutputPart::Image(pixel())]))
    })
    .strict()
    .unwrap();
    let runner = Runner::anthropic(
        anthropic_client(&sim),
        AnthropicSettings::new("claude-opus-5"),
        None,
        Toolbox {
            functions: functions(vec![snap]),
            ..Toolbox::default()
        },
        RunConfig::default(),
    );
    let outcome = runner
        .run("Show.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    // Declared strict, with the closed schema.
    let tool = &sim.requests()[0].body["tools"][0];
    assert_eq!(tool["strict"], json!(true), "{tool}");
    assert_eq!(tool["input_schema"]["additionalProperties"], json!(false));
    let messages = sim.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let result = &messages.last().unwrap()["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["content"][0]["type"], "image");
    assert_eq!(
        result["content"][0]["source"]["data"],
        json!(pixel().base64)
    );
}

fn claude_runner(sim: &SimServer, settings: AnthropicSettings, fs: Functions) -> Runner {
    Runner::anthropic(
        anthropic_client(sim),
        settings,
        None,
        Toolbox {
            functions: fs,
            ..Toolbox::default()
        },
        RunConfig::default(),
    )
}

fn claude_eager(policy: Option<EarlyExecution>) -> AnthropicSettings {
    let mut settings = AnthropicSettings::new("claude-opus-5");
    settings.stream = true;
    settings.eager = true;
    settings.early_execution = policy;
    settings
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_runs_each_complete_tool_use_while_the_message_streams() {
    for (eager, policy, expect) in [
        (false, None, vec![false, false, false]),
        (true, None, vec![true, true, true]),
        (
            true,
            Some(EarlyExecution {
                functions: vec!["f".into()],
                computer: false,
            }),
            vec![true, false, false],
        ),
        (
            true,
            Some(EarlyExecution::default()),
            vec![false, false, false],
        ),
    ] {
        let sim = SimServer::start(SimConfig::scripted(vec![
            Turn::Blocks(vec![
                text("Working."),
                tool_use("f", json!({})),
                tool_use("g", json!({})),
                tool_use("f", json!({})),
            ]),
            Turn::text("Done."),
        ]))
        .unwrap();
        let counts = Counts::default();
        let mut settings = claude_eager(policy.clone());
        settings.eager = eager;
        let runner = claude_runner(
            &sim,
            settings,
            functions(vec![counted("f", &counts), counted("g", &counts)]),
        );
        let cancel = CancellationToken::new();
        let mut turns = runner.iterate("Go.", &cancel);
        let turn = turns.next_turn().await.unwrap();
        assert_eq!(tried(&turn.calls), expect, "eager {eager} {policy:?}");
        let n_early = expect.iter().filter(|t| **t).count();
        assert_eq!(counts.0.lock().unwrap().len(), n_early);
        let outcome = turns.finish().await.unwrap();
        assert_eq!(outcome.status, RunStatus::Finished);
        // In order, each once.
        assert_eq!(*counts.0.lock().unwrap(), vec!["f", "g", "f"]);
        assert_eq!(outcome.executed_call_ids, ids(&turn.calls));
        let messages = sim.requests()[1].body["messages"]
            .as_array()
            .unwrap()
            .clone();
        let results = messages.last().unwrap()["content"]
            .as_array()
            .unwrap()
            .clone();
        let texts: Vec<&str> = results
            .iter()
            .map(|r| r["content"][0]["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts, ["f done", "g done", "f done"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_call_run_early_is_answered_with_its_result_when_the_turn_stops_otherwise() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::stopped(Turn::Blocks(vec![tool_use("f", json!({}))]), "max_tokens"),
        Turn::text("Noted."),
    ]))
    .unwrap();
    let counts = Counts::default();
    let runner = claude_runner(
        &sim,
        claude_eager(None),
        functions(vec![counted("f", &counts)]),
    );
    let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
    assert!(matches!(
        outcome.status,
        RunStatus::Stopped(StopReason::ModelStopped(_))
    ));
    // It ran before the message said how it ended: reported, and answered with its result.
    assert_eq!(counts.of("f"), 1);
    assert_eq!(outcome.completed_call_ids, outcome.executed_call_ids);
    let later = runner
        .run("Go on.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(later.status, RunStatus::Finished);
    let messages = sim.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let answer = &messages[2]["content"][0];
    assert_eq!(answer["type"], "tool_result");
    assert_eq!(answer["content"][0]["text"], "f done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_fails_after_eager_calls_reports_them_attempted_and_completed() {
    // Cut the stream after every possible event: whatever ran before the cut is reported,
    // and an independent call already started is waited for, never dropped half-way.
    for independent in [false, true] {
        let mut cut_after_a_call = false;
        for after_events in 1..24 {
            let sim = SimServer::start(SimConfig::scripted(vec![Turn::Items(vec![
                function_call("a", json!({})),
                function_call("b", json!({})),
                message("Both."),
            ])]))
            .unwrap();
            sim.inject(hands_sim::Fault::StreamError { after_events });
            let overlap = Arc::new(Overlap::default());
            let make = |name: &str| {
                if independent {
                    overlapping(name, &overlap)
                } else {
                    slow(name, &overlap)
                }
            };
            let runner = openai_runner(
                &sim,
                eager_settings(None),
                functions(vec![make("a"), make("b")]),
                20,
            );
            let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
            let RunStatus::Stopped(StopReason::Api(_)) = &outcome.status else {
                continue;
            };
            assert_eq!(
                outcome.completed_call_ids, outcome.executed_call_ids,
                "independent {independent}, cut after {after_events}"
            );
            cut_after_a_call |= !outcome.executed_call_ids.is_empty();
        }
        assert!(cut_after_a_call, "independent {independent}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_paused_turn_stops_the_run_before_its_calls() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![function_call("f", json!({}))]),
        Turn::text("Never reached."),
    ]))
    .unwrap();
    let counts = Counts::default();
    let runner = openai_runner(
        &sim,
        OpenAiSettings::new("gpt-5.5"),
        functions(vec![counted("f", &counts)]),
        20,
    );
    let cancel = CancellationToken::new();
    let mut turns = runner.iterate("Go.", &cancel);
    let turn = turns.next_turn().await.unwrap();
    cancel.cancel();
    assert!(turns.next_turn().await.is_none());
    let outcome = turns.finish().await.unwrap();
    assert_eq!(outcome.status, RunStatus::Stopped(StopReason::Cancelled));
    assert_eq!(counts.of("f"), 0);
    assert_eq!(
        turn.supply_outputs(Vec::<(String, ToolOutput)>::new()),
        Err(TurnError::NotPaused)
    );
    // A second iteration while the first is paused is refused as busy.
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![function_call("f", json!({}))]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let runner = openai_runner(
        &sim,
        OpenAiSettings::new("gpt-5.5"),
        functions(vec![counted("f", &counts)]),
        20,
    );
    let cancel = CancellationToken::new();
    let mut turns = runner.iterate("Go.", &cancel);
    let _paused = turns.next_turn().await.unwrap();
    assert_eq!(runner.run("Other.", &cancel).await, Err(RunError::Busy));
    assert_eq!(turns.finish().await.unwrap().status, RunStatus::Finished);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_calls_not_yet_tried_take_supplied_outputs() {
    // (eager, policy, ledger): a call run while streaming is tried, so it cannot be supplied;
    // one the policy deferred can, with a ledger kept or not.
    for (eager, policy, ledger, suppliable) in [
        (true, None, false, false),
        (true, Some(EarlyExecution::default()), false, true),
        (true, Some(EarlyExecution::default()), true, true),
        (false, None, true, true),
    ] {
        let sim = SimServer::start(SimConfig::scripted(vec![
            Turn::Items(vec![function_call("lookup", json!({}))]),
            Turn::text("Done."),
        ]))
        .unwrap();
        let counts = Counts::default();
        let mut settings = eager_settings(policy.clone());
        settings.eager = eager;
        settings.stream = eager;
        let mut runner = openai_runner(
            &sim,
            settings,
            functions(vec![counted("lookup", &counts).suppliable()]),
            20,
        );
        if ledger {
            runner.set_ledger(Box::new(hands_runner::ledger::MemoryLedger::new("run-1")));
        }
        let cancel = CancellationToken::new();
        let mut turns = runner.iterate("Look it up.", &cancel);
        let turn = turns.next_turn().await.unwrap();
        let call_id = turn.calls[0].call_id.clone();
        let case = format!("eager {eager} policy {policy:?} ledger {ledger}");
        assert_eq!(turn.calls[0].suppliable, suppliable, "{case}");
        let supplied = turn.supply_outputs([(call_id.clone(), ToolOutput::from("R1"))]);
        assert_eq!(supplied.is_ok(), suppliable, "{case}");
        let outcome = turns.finish().await.unwrap();
        assert_eq!(outcome.status, RunStatus::Finished, "{case}");
        assert_eq!(counts.of("lookup"), usize::from(!suppliable), "{case}");
        let expect = if suppliable { "R1" } else { "lookup done" };
        assert_eq!(output_in(&sim, 1, &call_id), json!(expect), "{case}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_independent_functions_run_concurrently_up_to_the_limit() {
    for limit in [1, 2, 3] {
        let sim = SimServer::start(SimConfig::scripted(vec![
            Turn::Blocks(vec![
                tool_use("a", json!({})),
                tool_use("b", json!({})),
                tool_use("c", json!({})),
            ]),
            Turn::text("Done."),
        ]))
        .unwrap();
        let overlap = Arc::new(Overlap::default());
        let mut settings = claude_eager(None);
        settings.max_concurrent_calls = limit;
        let runner = claude_runner(
            &sim,
            settings,
            functions(["a", "b", "c"].map(|n| overlapping(n, &overlap)).into()),
        );
        let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
        assert_eq!(outcome.status, RunStatus::Finished, "limit {limit}");
        assert_eq!(overlap.peak.load(Ordering::SeqCst), limit, "limit {limit}");
        assert_eq!(outcome.completed_call_ids, outcome.executed_call_ids);
        // One result per call, in the calls' order, each the function's own output.
        let messages = sim.requests()[1].body["messages"]
            .as_array()
            .unwrap()
            .clone();
        let results: Vec<Value> = messages.last().unwrap()["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .cloned()
            .collect();
        assert_eq!(results.len(), 3, "limit {limit}");
        for (result, id) in results.iter().zip(&outcome.executed_call_ids) {
            assert_eq!(result["tool_use_id"], json!(id));
            assert_ne!(result["is_error"], json!(true), "{result}");
            assert!(result.to_string().contains("done"), "{result}");
        }
        assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    }
}

/// Regression (issue 19): `Runner::append_user_text` took text between runs and during a final
/// turn, and it landed in a later run. Now it is taken only while a turn's calls run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runner_text_is_taken_only_while_a_turn_is_open() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![function_call("f", json!({}))]),
        Turn::Items(vec![function_call("f", json!({}))]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let counts = Counts::default();
    let mut runner = openai_runner(
        &sim,
        OpenAiSettings::new("gpt-5.5"),
        functions(vec![counted("f", &counts)]),
        5,
    );
    let me: Arc<std::sync::OnceLock<std::sync::Weak<Runner>>> = Arc::default();
    // What each turn's `append_user_text` answered, by step.
    type Answers = Arc<Mutex<Vec<(u32, Result<(), TurnError>)>>>;
    let answers: Answers = Arc::default();
    {
        let (me, answers) = (Arc::clone(&me), Arc::clone(&answers));
        runner.set_on_event(Box::new(move |event| {
            if let RunEvent::TurnCompleted { step, .. } = event {
                let runner = me.get().and_then(std::sync::Weak::upgrade).unwrap();
                let answer = runner.append_user_text(format!("Note {step}."));
                answers.lock().unwrap().push((step, answer));
            }
        }));
    }
    let runner = Arc::new(runner);
    me.set(Arc::downgrade(&runner)).unwrap();
    assert_eq!(
        runner.append_user_text("Before the run."),
        Err(TurnError::NoOpenTurn)
    );
    assert_eq!(runner.append_user_text("   "), Err(TurnError::EmptyText));
    let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!(
        *answers.lock().unwrap(),
        [(1, Ok(())), (2, Ok(())), (3, Err(TurnError::NoOpenTurn))]
    );
    assert_eq!(
        runner.append_user_text("After the run."),
        Err(TurnError::NoOpenTurn)
    );
    // Each note follows its turn's output, in the next request.
    for (request, note) in [(1, "Note 1."), (2, "Note 2.")] {
        let input = input_of(&sim, request);
        let last = input.last().unwrap();
        assert_eq!(last["role"], "user", "{input:?}");
        assert_eq!(last["content"][0]["text"], json!(note));
    }
}
