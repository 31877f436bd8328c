//! Compaction and mid-run control (issue 19, "threads and compaction", "mid-run control"),
//! against the stand-in, which compacts as the Messages API does (a signed `compaction` block
//! that replaces what came before it) and refuses a changed summary.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::sync::{Arc, Mutex};

use hands_core::CancellationToken;
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_runner::context::{
    AfterCompaction, ClaudeEdit, ContextConfig, NativeContext, compact_trigger_too_low,
};
use hands_runner::diagnostics::{Record, Stage};
use hands_runner::functions::{Function, Functions};
use hands_runner::ledger::SqliteLedger;
use hands_runner::{
    AnthropicSettings, RunConfig, RunError, RunStatus, Runner, StopReason, Toolbox,
};
use hands_sim::policy::{text, tool_use};
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};

/// A page of about 60,000 tokens as the stand-in counts them (four bytes a token).
fn big_page() -> String {
    "page text ".repeat(24_000)
}

fn functions() -> Functions {
    let mut functions = Functions::new();
    functions
        .add(Function::typed(
            "fetch_page",
            "Fetches a page.",
            |_: Value| async move { Ok::<_, String>(big_page()) },
        ))
        .unwrap();
    functions
        .add(Function::typed(
            "note",
            "Takes a note.",
            |_: Value| async move { Ok::<_, String>("noted") },
        ))
        .unwrap();
    functions
}

fn compacting(after: AfterCompaction) -> ContextConfig {
    ContextConfig::native(NativeContext {
        trigger_input_tokens: 50_000,
        claude_edit: ClaudeEdit::Compact(after),
        ..NativeContext::default()
    })
}

fn claude(sim: &SimServer, context: ContextConfig) -> Runner {
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = sim.base_url();
    let mut settings = AnthropicSettings::new("claude-opus-5");
    settings.context = context;
    Runner::anthropic(
        AnthropicClient::new(config).unwrap(),
        settings,
        None,
        Toolbox {
            functions: functions(),
            ..Toolbox::default()
        },
        RunConfig { max_steps: 8 },
    )
}

fn block_types(message: &Value) -> Vec<String> {
    message["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .map(|b| b["type"].as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn claude_keeps_the_compaction_and_never_sends_what_it_replaced_again() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![tool_use("fetch_page", json!({}))]),
        Turn::Blocks(vec![text("Noting."), tool_use("note", json!({}))]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let outcome = claude(&sim, compacting(AfterCompaction::GoOn))
        .run("Read the page.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let requests = sim.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_eq!(request.header("anthropic-beta"), Some("compact-2026-01-12"));
        assert_eq!(
            request.body["context_management"]["edits"][0]["type"],
            "compact_20260112"
        );
    }
    // The second request passed the trigger: its answer opened with the summary.
    let answer = requests[1].response.clone().unwrap();
    assert_eq!(block_types(&answer), ["compaction", "text", "tool_use"]);
    // The third sends the summary first, in place of the page and everything before it.
    let messages = requests[2].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0]["content"], answer["content"]);
    assert!(
        requests[2].body.to_string().len() < 10_000,
        "the page is not uploaded again"
    );
}

#[tokio::test]
async fn a_paused_compaction_is_saved_and_a_resume_sends_the_compacted_history() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![tool_use("fetch_page", json!({}))]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut first = claude(&sim, compacting(AfterCompaction::Pause));
    first.set_ledger(Box::new(SqliteLedger::create(&path, "run-1").unwrap()));
    // Stopped right after the compaction arrives (the second answer).
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let n_answers = Arc::new(Mutex::new(0));
    first.set_observer(Box::new(move |record: &Record| {
        if record.stage == Stage::Request {
            let mut n = n_answers.lock().unwrap();
            *n += 1;
            if *n == 2 {
                stop.cancel();
            }
        }
    }));
    let outcome = first.run("Read the page.", &cancel).await.unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::Stopped(StopReason::Cancelled),
        "{outcome:?}"
    );
    let requests = sim.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1].response.as_ref().unwrap()["stop_reason"],
        "compaction"
    );
    drop(first);

    let mut second = claude(&sim, compacting(AfterCompaction::Pause));
    second.set_ledger(Box::new(SqliteLedger::open(&path).unwrap()));
    let outcome = second.resume(&CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(outcome.final_text, "Done.");
    let requests = sim.requests();
    assert_eq!(requests.len(), 3);
    // The saved conversation is the compaction alone: it opens the request, followed only by
    // the note that the run was resumed.
    let messages = requests[2].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(block_types(&messages[0]), ["compaction"]);
    assert_eq!(
        messages[0]["content"],
        requests[1].response.as_ref().unwrap()["content"]
    );
    assert_eq!(messages[1]["role"], "user");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

#[tokio::test]
async fn a_compaction_trigger_below_the_apis_least_is_refused_before_any_request() {
    let sim = SimServer::start(SimConfig::scripted(vec![])).unwrap();
    let context = ContextConfig::native(NativeContext {
        trigger_input_tokens: 30_000,
        claude_edit: ClaudeEdit::Compact(AfterCompaction::GoOn),
        ..NativeContext::default()
    });
    let refused = claude(&sim, context)
        .run("Read.", &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(refused, RunError::Config(compact_trigger_too_low(30_000)));
    assert!(sim.requests().is_empty());
}
