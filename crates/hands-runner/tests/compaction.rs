//! Compaction and mid-run control (issue 19, "threads and compaction", "mid-run control"),
//! against the stand-in, which compacts as the Messages API does (a signed `compaction` block
//! that replaces what came before it) and refuses a changed summary.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::sync::{Arc, Mutex};

use hands_core::CancellationToken;
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_models::openai::{OpenAiClient, OpenAiConfig};
use hands_runner::context::{
    AfterCompaction, CALLER_SUMMARY_PREFIX, ClaudeEdit, ClientContext, CompactionDecision,
    CompactionSnapshot, Compactor, ContextBudget, ContextConfig, ContextManagement, NativeContext,
    compact_trigger_too_low,
};
use hands_runner::diagnostics::{Record, Stage};
use hands_runner::edits::{COMPACTION_NOT_ON_OPENAI, unknown_tool_edit};
use hands_runner::functions::{Function, Functions};
use hands_runner::ledger::SqliteLedger;
use hands_runner::{
    AnthropicSettings, EditError, OpenAiSettings, ParamsEdit, RunConfig, RunEdit, RunError,
    RunStatus, Runner, StopReason, Toolbox,
};
use hands_sim::policy::{function_call, text, tool_use};
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
    claude_streamed(sim, context, false)
}

fn claude_streamed(sim: &SimServer, context: ContextConfig, stream: bool) -> Runner {
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = sim.base_url();
    let mut settings = AnthropicSettings::new("claude-opus-5");
    settings.context = context;
    settings.stream = stream;
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
    for stream in [false, true] {
        keeps_the_compaction(stream).await;
    }
}

/// Streamed, the summary arrives in a `compaction_delta`: the block the runner keeps must be the
/// one the API signed.
async fn keeps_the_compaction(stream: bool) {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![tool_use("fetch_page", json!({}))]),
        Turn::Blocks(vec![text("Noting."), tool_use("note", json!({}))]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let outcome = claude_streamed(&sim, compacting(AfterCompaction::GoOn), stream)
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
    let bytes: Vec<usize> = requests.iter().map(|r| r.body.to_string().len()).collect();
    eprintln!(
        "bytes uploaded per request (stream {stream}): {bytes:?}; after the compaction {} instead of about {}",
        bytes[2],
        bytes[1] + bytes[2]
    );
    assert!(bytes[2] < 10_000, "the page is not uploaded again");
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

/// A model that looks something up ten times, then answers.
fn look_up_ten() -> impl FnMut(&Value) -> Turn + Send {
    let mut n = 0;
    move |_| {
        n += 1;
        if n > 10 {
            Turn::text("All looked up.")
        } else {
            Turn::Items(vec![function_call("look_up", json!({"item": n}))])
        }
    }
}

fn openai_with(sim: &SimServer, compactor: Compactor) -> Runner {
    let mut config = OpenAiConfig::new("sk-test");
    config.base_url = sim.openai_base_url();
    let mut settings = OpenAiSettings::new("gpt-5.5");
    settings.context = ContextConfig {
        management: ContextManagement::Client(ClientContext {
            budget: Some(ContextBudget {
                max_input_bytes: 12_000,
                max_input_images: 3,
            }),
            ..ClientContext::default()
        }),
        ..ContextConfig::default()
    };
    settings.compactor = Some(compactor);
    let mut functions = Functions::new();
    functions
        .add(Function::typed(
            "look_up",
            "Looks an item up.",
            |args: Value| async move {
                Ok::<_, String>(format!("item {}: {}", args["item"], "x".repeat(2_000)))
            },
        ))
        .unwrap();
    Runner::openai(
        OpenAiClient::new(config).unwrap(),
        settings,
        None,
        Toolbox {
            functions,
            ..Toolbox::default()
        },
        RunConfig { max_steps: 12 },
    )
}

fn input_of(sim: &SimServer, idx: usize) -> Vec<Value> {
    sim.requests()[idx].body["input"]
        .as_array()
        .unwrap()
        .clone()
}

fn mentions(input: &[Value], call_id: &str) -> bool {
    input.iter().any(|item| item["call_id"] == call_id)
}

#[tokio::test]
async fn the_openai_compaction_callback_drops_calls_adds_a_summary_and_a_resume_replays_it() {
    let sim = SimServer::start(SimConfig::with_policy(look_up_ten())).unwrap();
    let seen: Arc<Mutex<Vec<CompactionSnapshot>>> = Arc::default();
    let kept = Arc::clone(&seen);
    // Drops every eligible call but the newest, with a summary.
    let compactor = Compactor::new(move |snapshot: &CompactionSnapshot| {
        kept.lock().unwrap().push(snapshot.clone());
        let n = snapshot.eligible_call_ids.len();
        CompactionDecision {
            drop_call_ids: snapshot.eligible_call_ids[..n - 1].to_vec(),
            summary: Some(format!("{} lookups done", n - 1)),
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut first = openai_with(&sim, compactor);
    first.set_ledger(Box::new(SqliteLedger::create(&path, "run-1").unwrap()));
    // Stopped after the ninth answer: the callback decided before the seventh request, and the
    // turns after it completed (a resume starts from the last completed turn).
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let n_answers = Arc::new(Mutex::new(0));
    first.set_observer(Box::new(move |record: &Record| {
        if record.stage == Stage::Request {
            let mut n = n_answers.lock().unwrap();
            *n += 1;
            if *n == 9 {
                stop.cancel();
            }
        }
    }));
    let outcome = first.run("Look up ten items.", &cancel).await.unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::Stopped(StopReason::Cancelled),
        "{outcome:?}"
    );
    drop(first);
    let snapshots = seen.lock().unwrap().clone();
    assert!(!snapshots.is_empty(), "the budget was passed");
    let decided = &snapshots[0];
    assert!(decided.input_bytes > 12_000);
    let dropped = &decided.eligible_call_ids[..decided.eligible_call_ids.len() - 1];
    let summary = format!("{CALLER_SUMMARY_PREFIX}{} lookups done", dropped.len());
    // The request after the decision: the summary opens it, the dropped calls are gone.
    let n_sent = sim.requests().len();
    let last = input_of(&sim, n_sent - 1);
    assert_eq!(last[0]["content"][0]["text"], summary, "{last:?}");
    assert!(dropped.iter().all(|id| !mentions(&last, id)));
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());

    // Resumed with a callback that would drop nothing: the saved decision still applies.
    let idle = Compactor::new(|_: &CompactionSnapshot| CompactionDecision::default());
    let mut second = openai_with(&sim, idle);
    second.set_ledger(Box::new(SqliteLedger::open(&path).unwrap()));
    let outcome = second.resume(&CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    let resumed = input_of(&sim, n_sent);
    assert_eq!(resumed[0]["content"][0]["text"], summary, "{resumed:?}");
    assert!(dropped.iter().all(|id| !mentions(&resumed, id)));
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

#[tokio::test]
async fn a_compaction_decision_naming_an_ineligible_call_stops_the_run_before_the_request() {
    let sim = SimServer::start(SimConfig::with_policy(look_up_ten())).unwrap();
    let compactor = Compactor::new(|_: &CompactionSnapshot| CompactionDecision {
        drop_call_ids: vec!["call_never_made".into()],
        summary: None,
    });
    let outcome = openai_with(&sim, compactor)
        .run("Look up ten items.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::Stopped(StopReason::ProjectionFailed {
            what: "the compaction callback's decision".into(),
            why: hands_runner::context::decision_refused("call_never_made"),
        }),
        "{outcome:?}"
    );
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

/// A Claude runner with two small functions, `look_up` and `note`.
fn claude_small(sim: &SimServer) -> Runner {
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = sim.base_url();
    let mut settings = AnthropicSettings::new("claude-opus-5");
    settings.system = Some("You look things up.".into());
    let mut functions = Functions::new();
    for name in ["look_up", "note"] {
        functions
            .add(Function::typed(name, "Does it.", |_: Value| async move {
                Ok::<_, String>("done")
            }))
            .unwrap();
    }
    Runner::anthropic(
        AnthropicClient::new(config).unwrap(),
        settings,
        None,
        Toolbox {
            functions,
            ..Toolbox::default()
        },
        RunConfig { max_steps: 8 },
    )
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn edits_apply_between_turns_are_saved_and_a_resume_sends_the_edited_request() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![tool_use("look_up", json!({}))]),
        Turn::Blocks(vec![tool_use("note", json!({}))]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut first = claude_small(&sim);
    first.set_ledger(Box::new(SqliteLedger::create(&path, "run-1").unwrap()));
    // Queued before the run: `note` is held back from the first request.
    first
        .edit(RunEdit::RemoveTools {
            names: vec!["note".into()],
        })
        .unwrap();
    let cancel = CancellationToken::new();
    let mut turns = first.iterate("Look it up, then note it.", &cancel);
    let turn = turns.next_turn().await.unwrap();
    assert_eq!(turn.step, 1);
    // Between turns: new parameters and `note` back, for the next request.
    first
        .edit(RunEdit::Params(ParamsEdit {
            max_output_tokens: Some(777),
            instructions: Some("Be terse.".into()),
            effort: Some("low".into()),
        }))
        .unwrap();
    first
        .edit(RunEdit::AddTools {
            names: vec!["note".into()],
        })
        .unwrap();
    let turn = turns.next_turn().await.unwrap();
    assert_eq!(turn.step, 2);
    // Killed here: the second answer's call never runs.
    cancel.cancel();
    let outcome = turns.finish().await.unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::Stopped(StopReason::Cancelled),
        "{outcome:?}"
    );
    let requests = sim.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(tool_names(&requests[0].body), ["look_up"]);
    assert_eq!(requests[0].body["max_tokens"], 4096);
    let edited = &requests[1].body;
    assert_eq!(tool_names(edited), ["look_up", "note"]);
    assert_eq!(edited["max_tokens"], 777);
    assert!(edited["system"].to_string().contains("Be terse."));
    assert_eq!(edited["output_config"]["effort"], "low");
    drop(first);

    // A new process, built as the first was: the ledger gives back the edited state.
    let mut second = claude_small(&sim);
    second.set_ledger(Box::new(SqliteLedger::open(&path).unwrap()));
    let outcome = second.resume(&CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    let resumed = &sim.requests()[2].body;
    assert_eq!(tool_names(resumed), ["look_up", "note"]);
    assert_eq!(resumed["max_tokens"], 777);
    assert!(resumed["system"].to_string().contains("Be terse."));
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

#[tokio::test]
async fn a_compaction_scheduled_between_turns_replaces_the_conversation() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![tool_use("look_up", json!({}))]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let runner = claude_small(&sim);
    let cancel = CancellationToken::new();
    let mut turns = runner.iterate("Look it up.", &cancel);
    let _turn = turns.next_turn().await.unwrap();
    runner
        .edit(RunEdit::CompactBeforeNextTurn {
            instructions: Some("Keep the item.".into()),
        })
        .unwrap();
    while turns.next_turn().await.is_some() {}
    let outcome = turns.finish().await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(outcome.final_text, "Done.");
    let requests = sim.requests();
    assert_eq!(requests.len(), 3);
    // The compaction request: the whole conversation, the parameter and its beta.
    let compaction = &requests[1];
    assert_eq!(
        compaction.body["compaction"],
        json!({"type": "summarize", "instructions": "Keep the item."})
    );
    assert_eq!(
        compaction.header("anthropic-beta"),
        Some("compact-2026-09-04")
    );
    assert_eq!(compaction.body["messages"].as_array().unwrap().len(), 3);
    let summary = compaction.response.as_ref().unwrap();
    assert_eq!(summary["stop_reason"], "compaction");
    // The next request sends the summary alone in place of the conversation.
    let messages = requests[2].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0]["content"], summary["content"]);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

#[tokio::test]
async fn edits_a_run_cannot_apply_stop_it_before_the_request() {
    let sim = SimServer::start(SimConfig::scripted(vec![])).unwrap();
    let runner = claude_small(&sim);
    assert_eq!(
        runner.edit(RunEdit::Params(ParamsEdit::default())),
        Err(EditError::Empty)
    );
    runner
        .edit(RunEdit::RemoveTools {
            names: vec!["web_fetch".into()],
        })
        .unwrap();
    let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::Stopped(StopReason::EditRefused(unknown_tool_edit("web_fetch")))
    );
    // OpenAI has no compaction request.
    let openai = openai_with(
        &sim,
        Compactor::new(|_: &CompactionSnapshot| CompactionDecision::default()),
    );
    openai
        .edit(RunEdit::CompactBeforeNextTurn { instructions: None })
        .unwrap();
    let outcome = openai.run("Go.", &CancellationToken::new()).await.unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::Stopped(StopReason::EditRefused(COMPACTION_NOT_ON_OPENAI.into()))
    );
    assert!(sim.requests().is_empty());
}

/// An edit queued while a turn is paused (`pause_turn`) waits until the turn is over: the request
/// that continues the paused turn goes out as the turn began, the one after it is edited.
#[tokio::test]
async fn an_edit_waits_for_a_paused_turn_to_finish() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::stopped(Turn::Blocks(vec![text("Still searching.")]), "pause_turn"),
        Turn::Blocks(vec![tool_use("look_up", json!({}))]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let slot: Arc<std::sync::OnceLock<Arc<Runner>>> = Arc::default();
    let mut runner = claude_small(&sim);
    let seen = Arc::clone(&slot);
    runner.set_on_event(Box::new(move |event| {
        // Queued while the first request (answered with `pause_turn`) is under way.
        if let hands_runner::RunEvent::RequestStarted { step: 1 } = event {
            let edit = RunEdit::Params(ParamsEdit {
                max_output_tokens: Some(777),
                ..ParamsEdit::default()
            });
            seen.get().unwrap().edit(edit).unwrap();
        }
    }));
    let runner = Arc::new(runner);
    slot.set(Arc::clone(&runner)).unwrap();
    let outcome = runner
        .run("Search.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    let max_tokens: Vec<Value> = sim
        .requests()
        .iter()
        .map(|r| r.body["max_tokens"].clone())
        .collect();
    assert_eq!(max_tokens, [json!(4096), json!(4096), json!(777)]);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

/// Edits scheduled by step (what `hands run --edits FILE` holds) apply before their request; a
/// resumed run given the same schedule skips the steps it already made (a compaction is not made
/// twice) and applies the rest.
#[tokio::test]
async fn edits_scheduled_by_step_apply_once_across_a_resume() {
    let schedule = hands_runner::edits::parse_edits(concat!(
        r#"{"step": 2, "edit": {"type": "compact_before_next_turn"}}"#,
        "\n",
        r#"{"step": 3, "edit": {"type": "params", "max_output_tokens": 555}}"#,
        "\n",
    ))
    .unwrap();
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![tool_use("look_up", json!({}))]),
        Turn::Blocks(vec![tool_use("look_up", json!({}))]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut first = claude_small(&sim);
    first.set_ledger(Box::new(SqliteLedger::create(&path, "run-1").unwrap()));
    for scheduled in &schedule {
        first
            .edit_before_step(scheduled.step, scheduled.edit.clone())
            .unwrap();
    }
    // Stopped after the second request's answer (the third answer: the compaction's came between).
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let n_answers = Arc::new(Mutex::new(0));
    first.set_observer(Box::new(move |record: &Record| {
        if record.stage == Stage::Request {
            let mut n = n_answers.lock().unwrap();
            *n += 1;
            if *n == 3 {
                stop.cancel();
            }
        }
    }));
    let outcome = first.run("Look it up twice.", &cancel).await.unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::Stopped(StopReason::Cancelled),
        "{outcome:?}"
    );
    drop(first);
    let kinds = |sim: &SimServer| -> Vec<bool> {
        sim.requests()
            .iter()
            .map(|r| r.body.get("compaction").is_some())
            .collect()
    };
    assert_eq!(kinds(&sim), [false, true, false]);

    let mut second = claude_small(&sim);
    second.set_ledger(Box::new(SqliteLedger::open(&path).unwrap()));
    for scheduled in &schedule {
        second
            .edit_before_step(scheduled.step, scheduled.edit.clone())
            .unwrap();
    }
    let outcome = second.resume(&CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(
        kinds(&sim),
        [false, true, false, false],
        "no second compaction"
    );
    let requests = sim.requests();
    assert_eq!(requests[2].body["max_tokens"], 4096);
    assert_eq!(requests[3].body["max_tokens"], 555);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}
