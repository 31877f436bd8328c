//! Claude requests on message threads (issue 19, "threads and compaction"), against the
//! stand-in, which holds conversations under `thread` and checks each continued request as the
//! whole conversation it stands for: only new messages travel, a lost thread is re-created with
//! the whole conversation, and what threads refuse (thinking) goes whole. The 100-step test
//! prints the bytes uploaded per step with threads on and off.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::time::Duration;

use hands_core::CancellationToken;
use hands_models::anthropic::{AnthropicClient, AnthropicConfig, ThinkingConfig};
use hands_runner::anthropic::Threads;
use hands_runner::functions::{Function, Functions};
use hands_runner::{AnthropicSettings, RunConfig, RunStatus, Runner, Toolbox};
use hands_sim::policy::{text, tool_use};
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};

/// A model that looks something up `n_calls` times, then answers.
fn look_up(n_calls: usize) -> impl FnMut(&Value) -> Turn + Send {
    let mut n = 0;
    move |_| {
        n += 1;
        if n > n_calls {
            Turn::text("All looked up.")
        } else {
            Turn::Blocks(vec![
                text(&format!("Looking up item {n}.")),
                tool_use("look_up", json!({"item": n})),
            ])
        }
    }
}

fn runner(sim: &SimServer, threads: Threads, thinking: Option<ThinkingConfig>) -> Runner {
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = sim.base_url();
    let mut settings = AnthropicSettings::new("claude-opus-5");
    settings.threads = threads;
    settings.thinking = thinking;
    settings.system = Some("You look things up. ".repeat(40));
    let mut functions = Functions::new();
    functions
        .add(Function::typed(
            "look_up",
            "Looks an item up.",
            |args: Value| async move {
                Ok::<_, String>(format!("item {}: {}", args["item"], "x".repeat(400)))
            },
        ))
        .unwrap();
    Runner::anthropic(
        AnthropicClient::new(config).unwrap(),
        settings,
        None,
        Toolbox {
            functions,
            ..Toolbox::default()
        },
        RunConfig { max_steps: 200 },
    )
}

/// The bytes of each request's body as sent.
fn uploaded(sim: &SimServer) -> Vec<usize> {
    sim.requests()
        .iter()
        .map(|r| r.body.to_string().len())
        .collect()
}

fn thread_kinds(sim: &SimServer) -> Vec<String> {
    sim.requests()
        .iter()
        .map(|r| {
            r.body["thread"]["type"]
                .as_str()
                .unwrap_or("none")
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn a_hundred_steps_on_a_thread_send_only_new_messages() {
    let mut sent = Vec::new();
    for threads in [Threads::Off, Threads::On] {
        let sim = SimServer::start(SimConfig::with_policy(look_up(99))).unwrap();
        let outcome = runner(&sim, threads, None)
            .run("Look up 99 items.", &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
        assert_eq!(outcome.steps, 100);
        assert!(sim.violations().is_empty(), "{:?}", sim.violations());
        let kinds = thread_kinds(&sim);
        match threads {
            Threads::Off => assert!(kinds.iter().all(|k| k == "none"), "{kinds:?}"),
            Threads::On => {
                assert_eq!(kinds[0], "create");
                assert!(kinds[1..].iter().all(|k| k == "continue"), "{kinds:?}");
                // A continued request carries one new message: the answers of the last turn.
                for request in &sim.requests()[1..] {
                    assert_eq!(request.body["messages"].as_array().unwrap().len(), 1);
                    assert!(request.body.get("system").is_none());
                    assert!(request.body.get("tools").is_none());
                }
            }
        }
        sent.push(uploaded(&sim));
    }
    let total = |bytes: &[usize]| bytes.iter().sum::<usize>();
    let (off, on) = (&sent[0], &sent[1]);
    eprintln!(
        "bytes uploaded over 100 steps: threads off {} ({} per step, last {}), threads on {} ({} per step, last {}); {:.1}x less",
        total(off),
        total(off) / off.len(),
        off[99],
        total(on),
        total(on) / on.len(),
        on[99],
        total(off) as f64 / total(on) as f64
    );
    assert!(total(on) * 10 < total(off), "off {off:?}\non {on:?}");
    // With threads the size of a request does not grow with the conversation.
    assert!(on[99] < on[1] * 2, "{on:?}");
}

#[tokio::test]
async fn a_thread_the_api_lost_is_created_again_with_the_whole_conversation() {
    let mut config = SimConfig::with_policy(look_up(3));
    config.anthropic.thread_ttl = Duration::ZERO;
    let sim = SimServer::start(config).unwrap();
    let outcome = runner(&sim, Threads::On, None)
        .run("Look up 3 items.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(outcome.steps, 4, "a re-created thread is not another step");
    // Each continue meets `thread_not_found`; the same request then creates a thread whole.
    let kinds = thread_kinds(&sim);
    assert_eq!(
        kinds,
        [
            "create", "continue", "create", "continue", "create", "continue", "create"
        ]
    );
    let statuses: Vec<u16> = sim.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 404, 200, 404, 200, 404, 200]);
    let last = &sim.requests()[6].body;
    assert_eq!(last["messages"].as_array().unwrap().len(), 7, "{last}");
    assert!(last.get("system").is_some());
}

#[tokio::test]
async fn what_threads_refuse_goes_whole() {
    let sim = SimServer::start(SimConfig::with_policy(look_up(2))).unwrap();
    let thinking = ThinkingConfig::Enabled {
        budget_tokens: 1024,
        display: None,
    };
    let outcome = runner(&sim, Threads::On, Some(thinking))
        .run("Look up 2 items.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert!(
        thread_kinds(&sim).iter().all(|k| k == "none"),
        "{:?}",
        thread_kinds(&sim)
    );
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}
