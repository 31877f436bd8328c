//! A function that fails is answered, not the end of the run (issue 19, "recover like the
//! SDK"): on both APIs, a function's failure, invalid arguments (JSON that is not an object or
//! does not fit the function's type) and an invalid output are each answered as an error the
//! model reads, the next call of the turn still runs, and the run finishes; a function declared
//! `.fatal()` stops the run as before.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::sync::{Arc, Mutex};

use hands_core::CancellationToken;
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_models::openai::{OpenAiClient, OpenAiConfig};
use hands_runner::approval::{Approver, Decision, Effect, EffectKind, SafetyChecksContext};
use hands_runner::diagnostics::{Reason, Record, Stage};
use hands_runner::functions::{Function, Functions, ToolOutput};
use hands_runner::ledger::SqliteLedger;
use hands_runner::{
    AnthropicSettings, CloseStatus, OpenAiSettings, RunConfig, RunError, RunStatus, Runner,
    StopReason, Toolbox,
};
use hands_sim::policy::{function_call, text, tool_use};
use hands_sim::{SimConfig, SimServer, Turn};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, schemars::JsonSchema)]
#[allow(dead_code, reason = "only the parse matters")]
struct Booking {
    nights: u32,
}

/// The run's functions: one that fails, one with typed arguments, one whose output is invalid,
/// and one that records that it ran.
fn functions(ran: &Arc<Mutex<Vec<String>>>, fatal: bool) -> Functions {
    let fails = Function::typed("fails", "Fails.", |_: Value| async move {
        Err::<String, _>("the printer is on fire".to_owned())
    });
    let fails = if fatal { fails.fatal() } else { fails };
    let ran_after = Arc::clone(ran);
    let list = [
        fails,
        Function::typed("book", "Books.", |_: Booking| async move {
            Ok::<_, String>("booked")
        }),
        Function::typed_output("empty", "Answers nothing.", |_: Value| async move {
            Ok(ToolOutput::Parts(Vec::new()))
        }),
        Function::typed("after", "Runs after.", move |_: Value| {
            let ran = Arc::clone(&ran_after);
            async move {
                ran.lock().unwrap().push("after".to_owned());
                Ok::<_, String>("after done")
            }
        }),
    ];
    let mut functions = Functions::new();
    for function in list {
        functions.add(function).unwrap();
    }
    functions
}

fn toolbox(functions: Functions) -> Toolbox {
    Toolbox {
        functions,
        ..Toolbox::default()
    }
}

fn claude_runner(sim: &SimServer, functions: Functions) -> Runner {
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = sim.base_url();
    Runner::anthropic(
        AnthropicClient::new(config).unwrap(),
        AnthropicSettings::new("claude-opus-5"),
        None,
        toolbox(functions),
        RunConfig { max_steps: 5 },
    )
}

#[tokio::test]
async fn claude_answers_a_failing_function_and_goes_on() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![
            tool_use("fails", json!({})),
            tool_use("book", json!({"nights": "two"})),
            tool_use("empty", json!({})),
            tool_use("after", json!({})),
        ]),
        Turn::text("Recovered."),
    ]))
    .unwrap();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let runner = claude_runner(&sim, functions(&ran, false));
    let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(outcome.final_text, "Recovered.");
    assert_eq!(*ran.lock().unwrap(), ["after"]);
    let answers: Vec<Value> = sim.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(answers.len(), 4);
    for (answer, says) in answers.iter().zip([
        "the printer is on fire",
        "invalid arguments",
        "function `empty` failed",
    ]) {
        assert_eq!(answer["is_error"], json!(true), "{answer}");
        assert!(answer.to_string().contains(says), "{answer}");
    }
    assert_ne!(answers[3]["is_error"], json!(true), "{}", answers[3]);
}

#[tokio::test]
async fn openai_answers_a_failing_function_and_goes_on() {
    let not_json = json!({"type": "function_call", "name": "book", "arguments": "{nights: 2"});
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![
            function_call("fails", json!({})),
            not_json,
            function_call("book", json!({"nights": -1})),
            function_call("empty", json!({})),
            function_call("after", json!({})),
        ]),
        Turn::text("Recovered."),
    ]))
    .unwrap();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let mut config = OpenAiConfig::new("sk-test");
    config.base_url = sim.openai_base_url();
    let runner = Runner::openai(
        OpenAiClient::new(config).unwrap(),
        OpenAiSettings::new("gpt-5.5"),
        None,
        toolbox(functions(&ran, false)),
        RunConfig { max_steps: 5 },
    );
    let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(*ran.lock().unwrap(), ["after"]);
    let outputs: Vec<String> = sim.requests()[1].body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| item["output"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(outputs.len(), 5, "{outputs:?}");
    for (output, says) in outputs.iter().zip([
        "the printer is on fire",
        "not valid JSON",
        "invalid arguments",
        "function `empty` failed",
        "after done",
    ]) {
        assert!(output.contains(says), "{output}");
    }
}

#[tokio::test]
async fn a_fatal_function_still_stops_the_run_and_nothing_after_it_runs() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![
            tool_use("fails", json!({})),
            tool_use("after", json!({})),
        ]),
        Turn::Blocks(vec![text("never asked")]),
    ]))
    .unwrap();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let runner = claude_runner(&sim, functions(&ran, true));
    let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
    assert!(
        matches!(&outcome.status, RunStatus::Stopped(StopReason::FunctionFailed { name, .. }) if name == "fails"),
        "{outcome:?}"
    );
    assert!(ran.lock().unwrap().is_empty());
    assert_eq!(sim.requests().len(), 1);
}

/// Regression (issue 19): a run that ended at its step limit was not saved as ended, so
/// `--resume` sent its last request again (one paid request, its answer lost).
#[tokio::test]
async fn a_run_ended_at_its_step_limit_is_saved_and_a_resume_sends_nothing() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![function_call("after", json!({}))]),
        Turn::Items(vec![function_call("after", json!({}))]),
        Turn::text("Never reached."),
    ]))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let ran = Arc::new(Mutex::new(Vec::new()));
    let openai_runner = |ran: &Arc<Mutex<Vec<String>>>| {
        let mut config = OpenAiConfig::new("sk-test");
        config.base_url = sim.openai_base_url();
        Runner::openai(
            OpenAiClient::new(config).unwrap(),
            OpenAiSettings::new("gpt-5.5"),
            None,
            toolbox(functions(ran, false)),
            RunConfig { max_steps: 2 },
        )
    };
    let mut first = openai_runner(&ran);
    first.set_ledger(Box::new(SqliteLedger::create(&path, "run-1").unwrap()));
    let outcome = first.run("Go.", &CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::StepLimit, "{outcome:?}");
    assert_eq!(sim.requests().len(), 2);
    drop(first);
    let report = SqliteLedger::report(&path).unwrap();
    assert_eq!(report.pending, None, "the last turn is saved, ended");

    let mut second = openai_runner(&ran);
    second.set_ledger(Box::new(SqliteLedger::open(&path).unwrap()));
    let refused = second.resume(&CancellationToken::new()).await.unwrap_err();
    assert!(
        matches!(&refused, RunError::NothingToResume(why) if why.contains("step limit")),
        "{refused:?}"
    );
    assert_eq!(sim.requests().len(), 2, "nothing was sent again");
    assert_eq!(*ran.lock().unwrap(), ["after"], "nothing ran again");
}

/// Regression (issue 19): a failed request's diagnostics record said `attempts: 0`.
#[tokio::test]
async fn a_failed_request_records_how_many_times_it_was_sent() {
    let sim = SimServer::start(SimConfig::scripted(vec![Turn::text("Never sent.")])).unwrap();
    for _ in 0..3 {
        sim.inject(hands_sim::Fault::rate_limited_ms(5));
    }
    let ran = Arc::new(Mutex::new(Vec::new()));
    let mut runner = claude_runner(&sim, functions(&ran, false));
    let records: Arc<Mutex<Vec<Record>>> = Arc::default();
    let seen = Arc::clone(&records);
    runner.set_observer(Box::new(move |record: &Record| {
        seen.lock().unwrap().push(record.clone());
    }));
    let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
    assert!(
        matches!(outcome.status, RunStatus::Stopped(StopReason::Api(_))),
        "{outcome:?}"
    );
    let failed: Vec<Record> = records
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.stage == Stage::Request)
        .cloned()
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].reason, Reason::ApiFailed);
    assert_eq!(failed[0].attempts, 3, "the first try and its two retries");
    assert_eq!(sim.requests().len(), 3);
}

/// Runs to a stop on the fatal `fails` call (the first `after` ran), then resumes as a person
/// would: the resume asks for `fails` to be reconciled, it is found not to have happened, and the
/// run goes on to its end with nothing run again.
async fn stopped_reconciled_resumed(sim: &SimServer, runner: impl Fn() -> Runner) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut first = runner();
    first.set_ledger(Box::new(SqliteLedger::create(&path, "run-1").unwrap()));
    let outcome = first.run("Go.", &CancellationToken::new()).await.unwrap();
    assert!(
        matches!(&outcome.status, RunStatus::Stopped(StopReason::FunctionFailed { name, .. }) if name == "fails"),
        "{outcome:?}"
    );
    drop(first);
    let mut second = runner();
    second.set_ledger(Box::new(SqliteLedger::open(&path).unwrap()));
    let refused = second.resume(&CancellationToken::new()).await.unwrap_err();
    let RunError::NeedsReconciliation(uncertain) = &refused else {
        panic!("{refused:?}");
    };
    assert_eq!(uncertain.len(), 1);
    assert_eq!(uncertain[0].name, "fails");
    drop(second);
    let mut ledger = SqliteLedger::open(&path).unwrap();
    hands_runner::ledger::reconcile(
        &mut ledger,
        &uncertain[0].call_id,
        hands_runner::ledger::Verdict::DidNotHappen,
        None,
    )
    .unwrap();
    drop(ledger);
    let mut third = runner();
    third.set_ledger(Box::new(SqliteLedger::open(&path).unwrap()));
    let outcome = third.resume(&CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(outcome.final_text, "Resumed and done.");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

/// Regression (issue 19): an eager Claude run with a ledger, stopped by a call run while the
/// message streamed, could never be resumed: its checkpoint said the response never arrived
/// whole. Now the turn is recorded whole; the failed call is reconciled and the run goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eager_run_stopped_by_an_early_call_can_be_resumed() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![
            tool_use("after", json!({})),
            tool_use("fails", json!({})),
            tool_use("after", json!({})),
        ]),
        Turn::text("Resumed and done."),
    ]))
    .unwrap();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let runner = || {
        let mut config = AnthropicConfig::new("sk-test");
        config.base_url = sim.base_url();
        let mut settings = AnthropicSettings::new("claude-opus-5");
        settings.stream = true;
        settings.eager = true;
        Runner::anthropic(
            AnthropicClient::new(config).unwrap(),
            settings,
            None,
            toolbox(functions(&ran, true)),
            RunConfig { max_steps: 5 },
        )
    };
    stopped_reconciled_resumed(&sim, runner).await;
    assert_eq!(*ran.lock().unwrap(), ["after"], "nothing ran again");
}

/// The same on OpenAI: an eager run stopped by a call run while the response streamed keeps
/// the whole response and can be reconciled and resumed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eager_openai_run_stopped_by_an_early_call_can_be_resumed() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![
            function_call("after", json!({})),
            function_call("fails", json!({})),
            function_call("after", json!({})),
        ]),
        Turn::text("Resumed and done."),
    ]))
    .unwrap();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let runner = || {
        let mut config = OpenAiConfig::new("sk-test");
        config.base_url = sim.openai_base_url();
        let mut settings = OpenAiSettings::new("gpt-5.5");
        settings.stream = true;
        settings.eager = true;
        Runner::openai(
            OpenAiClient::new(config).unwrap(),
            settings,
            None,
            toolbox(functions(&ran, true)),
            RunConfig { max_steps: 5 },
        )
    };
    stopped_reconciled_resumed(&sim, runner).await;
    assert_eq!(*ran.lock().unwrap(), ["after"], "nothing ran again");
}

/// Issue 19: a function with a timeout that does not answer in time is stopped (its future
/// dropped: what it holds is released) and answered as failed; the run goes on.
#[tokio::test]
async fn a_function_past_its_timeout_is_stopped_and_answered() {
    struct Held(Arc<Mutex<Vec<String>>>);
    impl Drop for Held {
        fn drop(&mut self) {
            self.0.lock().unwrap().push("released".to_owned());
        }
    }
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![
            tool_use("hangs", json!({})),
            tool_use("after", json!({})),
        ]),
        Turn::text("Went on."),
    ]))
    .unwrap();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let mut functions = functions(&ran, false);
    let held = Arc::clone(&ran);
    functions
        .add(
            Function::typed("hangs", "Never answers.", move |_: Value| {
                let guard = Held(Arc::clone(&held));
                async move {
                    tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                    drop(guard);
                    Ok::<_, String>("never")
                }
            })
            .timeout(std::time::Duration::from_millis(100)),
        )
        .unwrap();
    let runner = claude_runner(&sim, functions);
    let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(*ran.lock().unwrap(), ["released", "after"]);
    let answer = sim.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"][0]
        .clone();
    assert_eq!(answer["is_error"], json!(true), "{answer}");
    assert!(answer.to_string().contains("within 100 ms"), "{answer}");
}

/// Issue 19: `Runner::close` stops admission at once and reports a run under way as draining;
/// `drained` waits for that run to end; the runner is then closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_refuses_new_runs_and_drained_waits_for_the_one_under_way() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![tool_use("slow", json!({}))]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let started = Arc::new(tokio::sync::Notify::new());
    let mut functions = functions(&ran, false);
    let signal = Arc::clone(&started);
    functions
        .add(Function::typed(
            "slow",
            "Takes a while.",
            move |_: Value| {
                signal.notify_one();
                async move {
                    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                    Ok::<_, String>("slow done")
                }
            },
        ))
        .unwrap();
    let runner = Arc::new(claude_runner(&sim, functions));
    let running = {
        let runner = Arc::clone(&runner);
        tokio::spawn(async move { runner.run("Go.", &CancellationToken::new()).await })
    };
    started.notified().await;
    assert_eq!(runner.close(), CloseStatus::Draining);
    assert!(matches!(
        runner.run("Another.", &CancellationToken::new()).await,
        Err(RunError::Busy | RunError::Closed)
    ));
    runner.drained().await;
    // Drained: the run under way has ended, whole.
    let outcome = tokio::time::timeout(std::time::Duration::from_millis(50), running)
        .await
        .expect("drained returned before the run ended")
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(runner.close(), CloseStatus::Closed);
    assert!(matches!(
        runner.run("Another.", &CancellationToken::new()).await,
        Err(RunError::Closed)
    ));
}

/// Issue 19: tool-choice selection as the SDK enforces it — an `allowed_tools` choice in
/// `required` mode naming only local tools is refused before any request (the run could never
/// finish), and a call of a tool the choice excludes stops the run before anything of the
/// response runs.
#[tokio::test]
async fn tool_choice_selection_is_enforced() {
    use hands_models::openai::ToolChoice;
    let openai = |sim: &SimServer, choice: Value, ran: &Arc<Mutex<Vec<String>>>| {
        let mut config = OpenAiConfig::new("sk-test");
        config.base_url = sim.openai_base_url();
        let mut settings = OpenAiSettings::new("gpt-5.5");
        settings.tool_choice = Some(ToolChoice::Other(choice));
        Runner::openai(
            OpenAiClient::new(config).unwrap(),
            settings,
            None,
            toolbox(functions(ran, false)),
            RunConfig { max_steps: 5 },
        )
    };
    let ran = Arc::new(Mutex::new(Vec::new()));
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![
            function_call("after", json!({})),
            function_call("fails", json!({})),
        ]),
        Turn::text("Never."),
    ]))
    .unwrap();
    let always_local = json!({"type": "allowed_tools", "mode": "required",
        "tools": [{"type": "function", "name": "after"}]});
    let refused = openai(&sim, always_local, &ran)
        .run("Go.", &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(refused, RunError::ForcedLocalToolChoice(_)),
        "{refused:?}"
    );
    assert!(sim.requests().is_empty());

    let only_after = json!({"type": "allowed_tools", "mode": "auto",
        "tools": [{"type": "function", "name": "after"}]});
    let outcome = openai(&sim, only_after, &ran)
        .run("Go.", &CancellationToken::new())
        .await
        .unwrap();
    assert!(
        matches!(&outcome.status, RunStatus::Stopped(StopReason::ExcludedByToolChoice { name }) if name == "fails"),
        "{outcome:?}"
    );
    assert!(
        ran.lock().unwrap().is_empty(),
        "nothing of the response ran"
    );
}

/// Regression (issue 19): a Claude `pause_turn` was never checkpointed, so a run stopped right
/// after one resumed by sending the request before it again (its server tools acting twice).
/// Now the conversation holding the paused turn is saved, and a resume sends it back.
#[tokio::test]
async fn a_paused_turn_is_saved_and_a_resume_sends_it_back() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::stopped(Turn::Blocks(vec![text("Still searching.")]), "pause_turn"),
        Turn::text("Found it."),
    ]))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let ran = Arc::new(Mutex::new(Vec::new()));
    let mut first = claude_runner(&sim, functions(&ran, false));
    first.set_ledger(Box::new(SqliteLedger::create(&path, "run-1").unwrap()));
    // Stopped right after the paused answer arrives.
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    first.set_observer(Box::new(move |record: &Record| {
        if record.stage == Stage::Request {
            stop.cancel();
        }
    }));
    let outcome = first.run("Search.", &cancel).await.unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::Stopped(StopReason::Cancelled),
        "{outcome:?}"
    );
    assert_eq!(sim.requests().len(), 1);
    drop(first);

    let mut second = claude_runner(&sim, functions(&ran, false));
    second.set_ledger(Box::new(SqliteLedger::open(&path).unwrap()));
    let outcome = second.resume(&CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(outcome.final_text, "Found it.");
    let requests = sim.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(
        last["role"], "assistant",
        "the paused turn goes back last: {last}"
    );
    assert!(last.to_string().contains("Still searching."), "{last}");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

/// Regression (issue 19): a request declaring server tools was sent again by a resume after it
/// failed part-way, so its server tools (code execution) could act twice. Now it is saved
/// pending before it is sent: a resume asks for reconciliation first.
#[tokio::test]
async fn a_failed_request_with_server_tools_is_reconciled_before_it_is_sent_again() {
    let sim = SimServer::start(SimConfig::scripted(vec![Turn::text("Ran the code.")])).unwrap();
    sim.inject(hands_sim::Fault::QuotaExhausted);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let server_runner = || {
        let mut config = AnthropicConfig::new("sk-test");
        config.base_url = sim.base_url();
        let mut settings = AnthropicSettings::new("claude-opus-5");
        settings.extra_tools = vec![
            hands_runner::mcp::ServerTool::CodeInterpreter
                .claude_tool()
                .unwrap(),
        ];
        Runner::anthropic(
            AnthropicClient::new(config).unwrap(),
            settings,
            None,
            Toolbox::default(),
            RunConfig { max_steps: 5 },
        )
    };
    let mut first = server_runner();
    first.set_ledger(Box::new(SqliteLedger::create(&path, "run-1").unwrap()));
    let outcome = first
        .run("Run the code.", &CancellationToken::new())
        .await
        .unwrap();
    assert!(
        matches!(outcome.status, RunStatus::Stopped(StopReason::Api(_))),
        "{outcome:?}"
    );
    drop(first);
    let mut second = server_runner();
    second.set_ledger(Box::new(SqliteLedger::open(&path).unwrap()));
    let refused = second.resume(&CancellationToken::new()).await.unwrap_err();
    let RunError::NeedsReconciliation(uncertain) = &refused else {
        panic!("{refused:?}");
    };
    assert_eq!(uncertain.len(), 1);
    assert_eq!(sim.requests().len(), 1, "nothing was sent again by itself");
    drop(second);
    let mut ledger = SqliteLedger::open(&path).unwrap();
    hands_runner::ledger::reconcile(
        &mut ledger,
        &uncertain[0].call_id,
        hands_runner::ledger::Verdict::DidNotHappen,
        None,
    )
    .unwrap();
    drop(ledger);
    let mut third = server_runner();
    third.set_ledger(Box::new(SqliteLedger::open(&path).unwrap()));
    let outcome = third.resume(&CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(sim.requests().len(), 2);
}

/// Approves every function but `fails`, and is asked about each.
struct AllButFails;

#[async_trait::async_trait]
impl Approver for AllButFails {
    async fn approve_safety_checks(
        &mut self,
        _: SafetyChecksContext,
        _: &CancellationToken,
    ) -> Decision {
        Decision::Deny
    }

    fn reviews(&self, kind: EffectKind) -> bool {
        kind == EffectKind::Function
    }

    async fn approve(&mut self, effect: Effect, _: &CancellationToken) -> Decision {
        match effect {
            Effect::Function(f) if f.name == "fails" => Decision::Deny,
            _ => Decision::Approve,
        }
    }
}

/// Issue 19: every kind of diagnostics record, asserted — the run's start and end, a request
/// with its attempts, an approval given and one refused, invalid arguments, an invalid output,
/// and actions (a failed request's attempts: `a_failed_request_records_how_many_times_it_was_sent`).
#[tokio::test]
async fn every_kind_of_diagnostics_record_is_emitted() {
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![
            tool_use("fails", json!({})),
            tool_use("book", json!({"nights": -1})),
            tool_use("empty", json!({})),
            tool_use("after", json!({})),
        ]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let ran = Arc::new(Mutex::new(Vec::new()));
    let mut runner = claude_runner(&sim, functions(&ran, false));
    runner.set_approver(Box::new(AllButFails));
    let records: Arc<Mutex<Vec<Record>>> = Arc::default();
    let seen = Arc::clone(&records);
    runner.set_observer(Box::new(move |record: &Record| {
        seen.lock().unwrap().push(record.clone());
    }));
    let outcome = runner.run("Go.", &CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    let records = records.lock().unwrap().clone();
    let kinds: Vec<(Stage, Reason, Option<String>)> = records
        .iter()
        .map(|r| (r.stage, r.reason, r.member.clone()))
        .collect();
    let has = |stage: Stage, reason: Reason, member: Option<&str>| {
        kinds
            .iter()
            .any(|(s, r, m)| *s == stage && *r == reason && m.as_deref() == member)
    };
    for (stage, reason, member) in [
        (Stage::Run, Reason::Started, None),
        (Stage::Approval, Reason::Refused, Some("fails")),
        (Stage::Action, Reason::Refused, Some("fails")),
        (Stage::Arguments, Reason::InvalidInput, Some("book")),
        (Stage::Approval, Reason::Completed, Some("empty")),
        (Stage::Output, Reason::InvalidOutput, Some("empty")),
        (Stage::Approval, Reason::Completed, Some("after")),
        (Stage::Action, Reason::Completed, Some("after")),
        (Stage::Run, Reason::Completed, None),
    ] {
        assert!(
            has(stage, reason, member),
            "no {stage:?} {reason:?} {member:?} record in {kinds:#?}"
        );
    }
    let requests: Vec<&Record> = records
        .iter()
        .filter(|r| r.stage == Stage::Request)
        .collect();
    assert_eq!(requests.len(), 2);
    for request in requests {
        assert_eq!(request.reason, Reason::Completed);
        assert_eq!(request.attempts, 1);
        assert!(request.usage.is_some_and(|u| u.input_tokens.is_some()));
    }
    // A record names the call it belongs to.
    assert!(
        records
            .iter()
            .filter(|r| r.stage == Stage::Output)
            .all(|r| r
                .call_id
                .as_deref()
                .is_some_and(|id| id.starts_with("toolu_")))
    );
}
