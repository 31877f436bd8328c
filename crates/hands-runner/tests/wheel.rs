//! A person's wheel between turns, against the simulated APIs: the runner asks at each turn's
//! end, waits while the wheel is held, and the note it returns follows the turn's answers in the
//! next request (Claude: a text block after the tool results; OpenAI: a user message after the
//! call outputs), saved in a checkpoint and told to `on_event`; a wheel nobody takes changes
//! nothing; a run cancelled while the wheel is held stops without sending the note.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_models::openai::{OpenAiClient, OpenAiConfig};
use hands_runner::functions::{Function, Functions};
use hands_runner::ledger::MemoryLedger;
use hands_runner::wheel::Wheel;
use hands_runner::{
    AnthropicSettings, OpenAiSettings, RunConfig, RunEvent, RunStatus, Runner, StopReason, Toolbox,
};
use hands_sim::policy::{function_call, tool_use};
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};

const NOTE: &str = "A person took over the browser for 3 s while the run waited.";

/// Hands out the note at the `at`-th turn end (from 1); counts how often it was asked. With
/// `hold`, it waits there until the run is cancelled, as a person who never gives back.
struct Scripted {
    at: usize,
    asked: AtomicUsize,
    hold: bool,
}

#[async_trait]
impl Wheel for Scripted {
    async fn between_turns(&self, cancel: &CancellationToken) -> Option<String> {
        let n = self.asked.fetch_add(1, Ordering::SeqCst) + 1;
        if n != self.at {
            return None;
        }
        if self.hold {
            cancel.cancelled().await;
        }
        Some(NOTE.to_owned())
    }
}

fn wheel(at: usize, hold: bool) -> Box<Scripted> {
    Box::new(Scripted {
        at,
        asked: AtomicUsize::new(0),
        hold,
    })
}

fn functions() -> Functions {
    let mut functions = Functions::new();
    functions
        .add(Function::typed("look", "Looks.", |_: Value| async {
            Ok::<_, String>("looked")
        }))
        .unwrap();
    functions
}

fn claude(sim: &SimServer) -> Runner {
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = sim.base_url();
    Runner::anthropic(
        AnthropicClient::new(config).unwrap(),
        AnthropicSettings::new("claude-opus-5"),
        None,
        Toolbox {
            functions: functions(),
            ..Toolbox::default()
        },
        RunConfig::default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_note_follows_the_tool_results_and_is_saved() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![tool_use("look", json!({}))]),
        Turn::Blocks(vec![tool_use("look", json!({}))]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let mut runner = claude(&sim);
    // Asked before the first request (nothing to hand yet), then after turn 1: taken there.
    runner.set_wheel(wheel(2, false));
    let ledger = MemoryLedger::new("run-wheel");
    runner.set_ledger(Box::new(ledger.clone()));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let events = Arc::clone(&seen);
    runner.set_on_event(Box::new(move |event| {
        if let RunEvent::UserText { text } = event {
            events.lock().unwrap().push(text);
        }
    }));
    let outcome = runner
        .run("Look twice.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    let requests = sim.requests();
    assert_eq!(requests.len(), 3);
    let last = |n: usize| {
        requests[n].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"]
            .clone()
    };
    assert_eq!(last(1)[0]["type"], "tool_result");
    assert_eq!(last(1)[1], json!({"type": "text", "text": NOTE}));
    assert_eq!(requests[2].body.to_string().matches(NOTE).count(), 1);
    assert_eq!(
        last(2).as_array().unwrap().len(),
        1,
        "the second turn ends without a note"
    );
    assert!(
        ledger
            .checkpoints()
            .iter()
            .any(|c| c.conversation.to_string().contains(NOTE))
    );
    assert_eq!(*seen.lock().unwrap(), vec![NOTE.to_owned()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_openai_the_note_is_a_user_message_after_the_outputs() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![function_call("look", json!({}))]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let mut config = OpenAiConfig::new("sk-test");
    config.base_url = sim.openai_base_url();
    let mut runner = Runner::openai(
        OpenAiClient::new(config).unwrap(),
        OpenAiSettings::new("gpt-5.5"),
        None,
        Toolbox {
            functions: functions(),
            ..Toolbox::default()
        },
        RunConfig::default(),
    );
    runner.set_wheel(wheel(2, false));
    let outcome = runner
        .run("Look.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    let input = sim.requests()[1].body["input"].as_array().unwrap().clone();
    let n = input.len();
    assert_eq!(input[n - 2]["type"], "function_call_output");
    assert_eq!(input[n - 1]["role"], "user");
    assert!(input[n - 1].to_string().contains(NOTE), "{}", input[n - 1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_cancelled_while_the_wheel_is_held_stops_without_the_note() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![tool_use("look", json!({}))]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let mut runner = claude(&sim);
    runner.set_wheel(wheel(2, true));
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    let run = tokio::spawn(async move { runner.run("Look.", &cancel).await });
    while sim.requests().is_empty() {
        tokio::task::yield_now().await;
    }
    stopper.cancel();
    let outcome = run.await.unwrap().unwrap();
    assert_eq!(outcome.status, RunStatus::Stopped(StopReason::Cancelled));
    assert_eq!(sim.requests().len(), 1, "nothing sent after the hold");
}
