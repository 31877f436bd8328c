//! The checkpoint ledger end to end: what is saved around each effect, and runs resumed by a new
//! runner (a new process, a new desktop) — from a completed turn, after a refused approval,
//! after a turn cut short, after an action interrupted mid-turn (reconciled by a person first)
//! — repeating nothing; and the resumes that are refused, with what changed.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::io::BufRead as _;
use std::path::Path;

use async_trait::async_trait;
use hands_core::geometry::Size;
use hands_core::{CancellationToken, Desktop};
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_models::openai::{OpenAiClient, OpenAiConfig};
use hands_runner::approval::{Approver, Decision, Effect, EffectKind, SafetyChecksContext};
use hands_runner::ledger::{
    CallState, Checkpoint, CheckpointStatus, Ledger, MemoryLedger, NOT_STARTED_ANSWER,
    RESUMED_NOTE, RunIdentity, SqliteLedger, Verdict, reconcile,
};
use hands_runner::{
    AnthropicSettings, OpenAiSettings, RunConfig, RunError, RunStatus, Runner, StopReason, Toolbox,
};
use hands_sandbox::{BashConfig, BashTool, EditorConfig, EditorTool};
use hands_sim::policy::{computer_call_with_checks, tool_use, toolset_use};
use hands_sim::{SimConfig, SimServer, Turn};
use hands_testkit::InputRecorder;
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_toolset::computer_call::{ComputerCallConfig, ComputerCallExecutor};
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::{Value, json};

const MODEL: &str = "claude-opus-5";

fn spawn_desktop() -> (X11Desktop, InputRecorder) {
    let desktop = X11Desktop::spawn(&XvfbConfig::new(Size::new(640, 400).unwrap())).unwrap();
    let recorder = InputRecorder::start(desktop.display()).unwrap();
    (desktop, recorder)
}

fn claude(sim: &SimServer, desktop: Option<&str>, toolbox: Toolbox, model: &str) -> Runner {
    claude_with(sim, desktop, toolbox, model, RunConfig::default())
}

fn claude_with(
    sim: &SimServer,
    desktop: Option<&str>,
    toolbox: Toolbox,
    model: &str,
    config: RunConfig,
) -> Runner {
    let mut client = AnthropicConfig::new("sk-test");
    client.base_url = sim.base_url();
    let computer = desktop.map(|display| {
        let boxed: Box<dyn Desktop> = Box::new(X11Desktop::connect(Some(display)).unwrap());
        ComputerToolset::new(
            boxed,
            ComputerConfig {
                append_screenshot: false,
                ..ComputerConfig::default()
            },
        )
        .unwrap()
    });
    Runner::anthropic(
        AnthropicClient::new(client).unwrap(),
        AnthropicSettings::new(model),
        computer,
        toolbox,
        config,
    )
}

fn bash_in(dir: &Path) -> Toolbox {
    Toolbox {
        bash: Some(BashTool::new(BashConfig {
            working_dir: Some(dir.to_owned()),
            ..BashConfig::default()
        })),
        ..Toolbox::default()
    }
}

fn assistant_turns(request: &Value) -> usize {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

/// `tool_result` blocks of the conversation that are not errors.
fn successes(request: &Value) -> usize {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result" && b["is_error"] != json!(true))
        .count()
}

fn clicks(recorder: &InputRecorder) -> Vec<(i32, i32)> {
    recorder
        .sync()
        .unwrap()
        .iter()
        .filter(|e| e.is_button_press(1))
        .map(|e| e.position())
        .collect()
}

/// Each checkpoint as `steps:status`, the calls of a pending one as letters: Proposed,
/// Attempted, Done, Refused, Interrupted.
fn trail(checkpoints: &[Checkpoint]) -> Vec<String> {
    checkpoints
        .iter()
        .map(|c| match &c.status {
            CheckpointStatus::Completed => format!("{}:completed", c.steps_used),
            CheckpointStatus::Pending(turn) => format!(
                "{}:{}",
                c.steps_used,
                turn.calls
                    .iter()
                    .map(|call| match call.state {
                        CallState::Proposed => 'P',
                        CallState::Attempted => 'A',
                        CallState::Answered { .. } => 'D',
                        CallState::Refused { .. } => 'R',
                        CallState::Interrupted { .. } => 'I',
                        _ => '?',
                    })
                    .collect::<String>()
            ),
        })
        .collect()
}

/// A token cancelled as soon as the first action of `runner` is done.
fn cancel_after_first_action(runner: &mut Runner) -> CancellationToken {
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    runner.set_observer(Box::new(
        move |record: &hands_runner::diagnostics::Record| {
            if record.stage == hands_runner::diagnostics::Stage::Action {
                stop.cancel();
            }
        },
    ));
    cancel
}

/// Makes the save of `revision` fail before it commits, as a process killed there would.
fn fail_save(ledger: &mut SqliteLedger, revision: u64) {
    ledger.set_before_commit(move |saving| {
        if saving == revision {
            Err("stopped here".into())
        } else {
            Ok(())
        }
    });
}

fn two_turns_of_clicks(request: &Value) -> Turn {
    let c = |m: &str, input: Value| toolset_use("computer", m, input);
    match assistant_turns(request) {
        0 => Turn::Blocks(vec![
            c("left_click", json!({"coordinate": [10, 10]})),
            c("left_click", json!({"coordinate": [20, 20]})),
        ]),
        1 => Turn::Blocks(vec![c("left_click", json!({"coordinate": [30, 30]}))]),
        _ => Turn::text("Done."),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_bracket_every_effect() {
    let sim = SimServer::start(SimConfig::with_policy(two_turns_of_clicks)).unwrap();
    let (desktop, _recorder) = spawn_desktop();
    let mut runner = claude(&sim, Some(desktop.display()), Toolbox::default(), MODEL);
    let ledger = MemoryLedger::new("run-1");
    runner.set_ledger(Box::new(ledger.clone()));
    let outcome = runner
        .run("Click.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    let checkpoints = ledger.checkpoints();
    assert_eq!(
        trail(&checkpoints),
        [
            "0:completed",
            "1:PP",
            "1:AP",
            "1:DP",
            "1:DA",
            "1:DD",
            "1:completed",
            "2:P",
            "2:A",
            "2:D",
            "2:completed",
            "3:completed"
        ]
    );
    let revisions: Vec<u64> = checkpoints.iter().map(|c| c.revision).collect();
    assert_eq!(revisions, (1..=12).collect::<Vec<u64>>());
    let identity = &checkpoints[0].identity;
    assert_eq!(
        (identity.run_id.as_str(), identity.model.as_str()),
        ("run-1", MODEL)
    );
    assert_eq!(identity.max_steps, 20);
    assert_eq!(identity.tools[0]["type"], "computer_toolset_20260801");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_runner_resumes_from_a_completed_turn_and_repeats_nothing() {
    let sim = SimServer::start(SimConfig::with_policy(two_turns_of_clicks)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let (desktop, recorder) = spawn_desktop();

    // The first process is stopped after the first click of its first turn.
    let mut first = claude(&sim, Some(desktop.display()), Toolbox::default(), MODEL);
    first.set_ledger(Box::new(SqliteLedger::create(&path, "run-1").unwrap()));
    let cancel = cancel_after_first_action(&mut first);
    let outcome = first.run("Click.", &cancel).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Stopped(StopReason::Cancelled));
    assert_eq!(clicks(&recorder), vec![(10, 10)]);
    // While it lives, it owns the run.
    assert!(matches!(
        SqliteLedger::open(&path),
        Err(hands_runner::ledger::LedgerError::Owned { .. })
    ));
    drop(first);
    // Cancelled between two clicks: every call is answered, so the turn is completed.
    let report = SqliteLedger::report(&path).unwrap();
    assert_eq!(report.pending, None);
    assert!(
        report.status().starts_with("stopped, resumable"),
        "{}",
        report.status()
    );

    // A second process resumes: the model sees the first turn answered (the click not run is
    // said so) and that the run resumed; nothing of the first turn happens again.
    let mut second = claude(&sim, Some(desktop.display()), Toolbox::default(), MODEL);
    second.set_ledger(Box::new(SqliteLedger::open(&path).unwrap()));
    let before = sim.requests().len();
    let outcome = second.resume(&CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(outcome.steps, 3, "the checkpoint's step count carries over");
    assert_eq!(clicks(&recorder), vec![(10, 10), (30, 30)]);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let resumed = &sim.requests()[before].body["messages"];
    assert_eq!(resumed.as_array().unwrap().len(), 3);
    let answer = resumed[2].to_string();
    assert!(answer.contains("Not executed"), "{answer}");
    assert!(answer.contains(RESUMED_NOTE), "{answer}");
    assert!(
        answer.contains("\"type\":\"image\""),
        "a current screenshot: {answer}"
    );
    drop(second);
    let report = SqliteLedger::report(&path).unwrap();
    assert_eq!(report.status(), "finished");
}

/// Regression: an action interrupted mid-turn on Claude was saved as a completed turn, so a
/// resume treated a command cut off half-way as done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_interrupted_mid_turn_is_never_saved_as_a_completed_turn() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("started");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let slow = format!("echo go > {}; sleep 30", fifo.display());
    let sim = SimServer::start(SimConfig::with_policy(
        move |request: &Value| match assistant_turns(request) {
            0 => Turn::Blocks(vec![
                tool_use("bash", json!({"command": slow})),
                tool_use("bash", json!({"command": "echo never >> later.txt"})),
            ]),
            _ => Turn::text("Done."),
        },
    ))
    .unwrap();
    let ledger = MemoryLedger::new("run-1");
    let mut first = claude(&sim, None, bash_in(dir.path()), MODEL);
    first.set_ledger(Box::new(ledger.clone()));
    // Cancelled while the first command runs (it told us it started).
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let reader = std::thread::spawn({
        let fifo = fifo.clone();
        move || {
            let mut line = String::new();
            std::io::BufReader::new(std::fs::File::open(fifo).unwrap())
                .read_line(&mut line)
                .unwrap();
            stop.cancel();
        }
    });
    let outcome = first.run("Work.", &cancel).await.unwrap();
    reader.join().unwrap();
    assert_eq!(outcome.status, RunStatus::Stopped(StopReason::Cancelled));
    let checkpoints = ledger.checkpoints();
    assert_eq!(
        trail(&checkpoints),
        ["0:completed", "1:PP", "1:AP", "1:IP", "1:IP"],
        "the interrupted turn stays pending, at its end too"
    );
    drop(first);

    // Resuming is refused until a person says what the interrupted command did.
    let mut second = claude(&sim, None, bash_in(dir.path()), MODEL);
    second.set_ledger(Box::new(ledger.clone()));
    let refused = second.resume(&CancellationToken::new()).await.unwrap_err();
    let RunError::NeedsReconciliation(calls) = &refused else {
        panic!("{refused:?}");
    };
    assert_eq!(calls.len(), 1);
    assert!(
        refused
            .to_string()
            .contains("(bash) may or may not have taken effect")
    );
    let mut recorder: Box<dyn Ledger> = Box::new(ledger.clone());
    reconcile(
        recorder.as_mut(),
        &calls[0].call_id,
        Verdict::Happened,
        Some("it printed go".into()),
    )
    .unwrap();
    let before = sim.requests().len();
    let outcome = second.resume(&CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert!(
        !dir.path().join("later.txt").exists(),
        "the call never started is never run"
    );
    let answer = sim.requests()[before].body["messages"][2].to_string();
    assert!(
        answer.contains("A person checked afterwards: it took effect"),
        "{answer}"
    );
    assert!(answer.contains("it printed go"), "{answer}");
    assert!(answer.contains(NOT_STARTED_ANSWER), "{answer}");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

/// Regression: a turn cut short after an effect (here the ledger refused a save, as a kill
/// would stop it) is closed from its records on resume: the done call keeps its answer, the
/// call never started is answered as not run, and the model asks again — each effect once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_cut_short_after_an_effect_is_closed_from_its_records() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimServer::start(SimConfig::with_policy(|request: &Value| {
        let echo = |n: usize| {
            tool_use(
                "bash",
                json!({"command": format!("echo {n} >> effects.txt")}),
            )
        };
        match successes(request) {
            0 => Turn::Blocks(vec![echo(1), echo(2)]),
            1 => Turn::Blocks(vec![echo(2)]),
            _ => Turn::text("Done."),
        }
    }))
    .unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut ledger = SqliteLedger::create(&path, "run-1").unwrap();
    // Revisions: 1 the task, 2 both proposed, 3 echo 1 attempted, 4 echo 1 done, 5 echo 2
    // attempted: that save never happens.
    fail_save(&mut ledger, 5);
    let mut first = claude(&sim, None, bash_in(dir.path()), MODEL);
    first.set_ledger(Box::new(ledger));
    let outcome = first
        .run("Append.", &CancellationToken::new())
        .await
        .unwrap();
    assert!(
        matches!(
            outcome.status,
            RunStatus::Stopped(StopReason::LedgerFailed(_))
        ),
        "{outcome:?}"
    );
    drop(first);
    let effects = || std::fs::read_to_string(dir.path().join("effects.txt")).unwrap();
    assert_eq!(effects(), "1\n");

    let mut second = claude(&sim, None, bash_in(dir.path()), MODEL);
    second.set_ledger(Box::new(SqliteLedger::open(&path).unwrap()));
    let before = sim.requests().len();
    let outcome = second.resume(&CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(effects(), "1\n2\n", "each effect exactly once");
    let closed = sim.requests()[before].body["messages"][2]["content"].clone();
    // Echo 1 keeps the answer recorded when it ran.
    assert!(closed[0].get("is_error").is_none(), "{closed}");
    assert!(
        closed[0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("<exit_status>0")
    );
    assert_eq!(closed[1]["content"], json!(NOT_STARTED_ANSWER));
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

struct Approve(bool);

#[async_trait]
impl Approver for Approve {
    async fn approve_safety_checks(
        &mut self,
        _: SafetyChecksContext,
        _: &CancellationToken,
    ) -> Decision {
        if self.0 {
            Decision::Approve
        } else {
            Decision::Deny
        }
    }

    fn reviews(&self, _: EffectKind) -> bool {
        false
    }

    async fn approve(&mut self, _: Effect, _: &CancellationToken) -> Decision {
        Decision::Approve
    }
}

fn openai(sim: &SimServer, display: Option<&str>, extra_tools: Vec<Value>) -> Runner {
    let mut client = OpenAiConfig::new("sk-test");
    client.base_url = sim.openai_base_url();
    let executor = display.map(|display| {
        let boxed: Box<dyn Desktop> = Box::new(X11Desktop::connect(Some(display)).unwrap());
        ComputerCallExecutor::new(boxed, ComputerCallConfig::default())
    });
    let mut settings = OpenAiSettings::new("computer-use-2");
    settings.extra_tools = extra_tools;
    Runner::openai(
        OpenAiClient::new(client).unwrap(),
        settings,
        executor,
        Toolbox::default(),
        RunConfig::default(),
    )
}

/// Regression: a refused safety check overwrote the last completed checkpoint, so the run could
/// never be resumed. Now every checkpoint is kept, the refused call is recorded as refused (it
/// did nothing), and a resume asks the model again — and the person again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_safety_check_leaves_the_run_resumable() {
    let sim = SimServer::start(SimConfig::with_policy(|request: &Value| {
        let answered = request["input"]
            .as_array()
            .is_some_and(|items| items.iter().any(|i| i["type"] == "computer_call_output"));
        if answered {
            Turn::text("Clicked.")
        } else {
            Turn::Items(vec![computer_call_with_checks(
                vec![json!({"type": "click", "button": "left", "x": 60, "y": 60})],
                vec![json!({"code": "malicious_instructions", "message": "The page asks you to."})],
            )])
        }
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let (desktop, recorder) = spawn_desktop();

    let mut first = openai(&sim, Some(desktop.display()), vec![]);
    first.set_ledger(Box::new(SqliteLedger::create(&path, "run-1").unwrap()));
    first.set_approver(Box::new(Approve(false)));
    let outcome = first
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
    drop(first);
    assert!(clicks(&recorder).is_empty());
    let report = SqliteLedger::report(&path).unwrap();
    let turn = report.pending.clone().unwrap();
    assert!(matches!(turn.calls[0].state, CallState::Refused { .. }));
    assert!(
        report.status().starts_with("stopped mid-turn, resumable"),
        "{}",
        report.status()
    );

    let mut second = openai(&sim, Some(desktop.display()), vec![]);
    second.set_ledger(Box::new(SqliteLedger::open(&path).unwrap()));
    second.set_approver(Box::new(Approve(true)));
    let outcome = second.resume(&CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(
        clicks(&recorder),
        vec![(60, 60)],
        "clicked once, once approved"
    );
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    // Both requests of the same turn were counted: the refused one and the one sent again.
    assert_eq!(outcome.steps, 3);
    drop(second);
    let report = SqliteLedger::report(&path).unwrap();
    assert_eq!(report.status(), "finished");
    assert!(report.checkpoints >= 6, "every checkpoint kept: {report:?}");
}

/// Regression: `--resume` accepted another model and silently kept the old step limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_refuses_another_model_step_limit_or_tools_and_names_each() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimServer::start(SimConfig::with_policy(
        |request: &Value| match assistant_turns(request) {
            0 => Turn::Blocks(vec![tool_use("bash", json!({"command": "true"}))]),
            _ => Turn::text("Done."),
        },
    ))
    .unwrap();
    let ledger = MemoryLedger::new("run-1");
    let mut first = claude(&sim, None, bash_in(dir.path()), MODEL);
    first.set_ledger(Box::new(ledger.clone()));
    let cancel = cancel_after_first_action(&mut first);
    first.run("Work.", &cancel).await.unwrap();

    let mut toolbox = bash_in(dir.path());
    toolbox.editor = Some(EditorTool::new(EditorConfig::default()).unwrap());
    let mut other = claude_with(
        &sim,
        None,
        toolbox,
        "claude-other",
        RunConfig { max_steps: 30 },
    );
    other.set_ledger(Box::new(ledger.clone()));
    let before = sim.requests().len();
    let refused = other.resume(&CancellationToken::new()).await.unwrap_err();
    let text = refused.to_string();
    assert!(
        matches!(refused, RunError::IdentityChanged(_)),
        "{refused:?}"
    );
    assert!(
        text.contains(&format!("the model changed: {MODEL} → claude-other")),
        "{text}"
    );
    assert!(text.contains("the step limit changed: 20 → 30"), "{text}");
    assert!(
        text.contains("the tool declarations changed (added str_replace_based_edit_tool)"),
        "{text}"
    );
    assert_eq!(sim.requests().len(), before, "nothing was sent");

    // The same identity resumes.
    let mut same = claude(&sim, None, bash_in(dir.path()), MODEL);
    same.set_ledger(Box::new(ledger.clone()));
    let outcome = same.resume(&CancellationToken::new()).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    // And a finished run has nothing left to resume.
    let mut again = claude(&sim, None, bash_in(dir.path()), MODEL);
    again.set_ledger(Box::new(ledger));
    let finished = again.resume(&CancellationToken::new()).await.unwrap_err();
    assert!(
        finished.to_string().contains("this run finished"),
        "{finished}"
    );
}

const MCP_SECRET: &str = "SECRET-TOKEN-1";
const HEADER_SECRET: &str = "HEADER-SECRET-2";
const CI_SECRET: &str = "CI-SECRET-3";

/// An MCP server at `url` with a token and a custom header, and a code interpreter with a
/// domain secret.
fn mcp_and_code_interpreter(url: &str) -> Vec<Value> {
    vec![
        json!({"type": "mcp", "server_label": "crm", "server_url": url,
            "authorization": MCP_SECRET, "headers": {"X-Api-Key": HEADER_SECRET}, "require_approval": "always"}),
        json!({"type": "code_interpreter", "container": {"type": "auto", "network_policy": {
            "type": "allowlist", "allowed_domains": ["api.example"],
            "domain_secrets": [{"domain": "api.example", "name": "API_KEY", "value": CI_SECRET}]}}}),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_declarations_hold_no_mcp_url_and_no_secret() {
    // A real MCP server the simulated API lists, which takes only the token.
    let fixture = hands_sim::McpFixture::with_token(MCP_SECRET).unwrap();
    let url = format!("{}?tenant=7", fixture.url());
    let sim = SimServer::start(SimConfig::scripted(vec![Turn::text("Nothing to do.")])).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut runner = openai(&sim, None, mcp_and_code_interpreter(&url));
    runner.set_approver(Box::new(Approve(true)));
    runner.set_ledger(Box::new(SqliteLedger::create(&path, "run-1").unwrap()));
    let outcome = runner
        .run("Look up.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    // The request itself used the real declarations.
    let sent = sim.requests()[0].body["tools"].to_string();
    assert!(sent.contains(&url) && sent.contains(MCP_SECRET));
    // Nothing of them is in any file the ledger wrote (database, WAL), while it is open…
    let scan = || {
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            for secret in [MCP_SECRET, HEADER_SECRET, CI_SECRET, &fixture.url()] {
                assert!(!text.contains(secret), "{secret} was saved");
            }
        }
    };
    scan();
    drop(runner);
    // …and after it closed.
    scan();
    let report = SqliteLedger::report(&path).unwrap();
    let identity = report.identity.unwrap();
    assert!(
        identity.tools[0]["server_url"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert_eq!(identity.tools[0]["server_label"], "crm");
    assert_eq!(
        identity.tools[1]["container"]["network_policy"]["domain_secrets"][0],
        json!({"domain": "api.example", "name": "API_KEY", "value": ""})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_holding_a_raw_mcp_url_refuses_resume() {
    let sim = SimServer::start(SimConfig::scripted(vec![Turn::text("Done.")])).unwrap();
    let mut ledger = MemoryLedger::new("run-1");
    // Written by something that did not sanitise: the identity holds the raw URL.
    let raw = RunIdentity {
        tools: mcp_and_code_interpreter("https://mcp.internal.example/v1?tenant=7"),
        ..RunIdentity::new("run-1", "responses", "computer-use-2", 20, &[])
    };
    ledger
        .save(&Checkpoint {
            identity: raw,
            revision: 1,
            steps_used: 0,
            status: CheckpointStatus::Completed,
            conversation: json!({"items": [{"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "Look up."}]}], "pending": []}),
        })
        .unwrap();
    let mut runner = openai(
        &sim,
        None,
        mcp_and_code_interpreter("https://mcp.internal.example/v1?tenant=7"),
    );
    runner.set_approver(Box::new(Approve(true)));
    runner.set_ledger(Box::new(ledger));
    let refused = runner.resume(&CancellationToken::new()).await.unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("raw URL or credentials of MCP server(s) crm"),
        "{refused}"
    );
    assert!(sim.requests().is_empty());
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Append {
    /// The line's number.
    n: u32,
}

/// The OpenAI side of the same: a turn of two function calls cut short after the first is
/// closed with exactly one output per call (the first's recorded output, the second not run),
/// and the model asks for the second again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_turn_cut_short_is_closed_with_one_output_per_call() {
    use hands_runner::functions::Function;
    use hands_sim::policy::function_call;

    let dir = tempfile::tempdir().unwrap();
    let effects = dir.path().join("effects.txt");
    let sim = SimServer::start(SimConfig::with_policy(|request: &Value| {
        // Stateless requests: the whole conversation is there.
        let done: Vec<String> = request["input"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .filter_map(|i| i["output"].as_str())
            .filter(|o| o.starts_with("appended"))
            .map(str::to_owned)
            .collect();
        let call = |n: u32| function_call("append", json!({"n": n}));
        match done.len() {
            0 => Turn::Items(vec![call(1), call(2)]),
            1 => Turn::Items(vec![call(2)]),
            _ => Turn::text("Both appended."),
        }
    }))
    .unwrap();
    let runner = |ledger: Box<dyn Ledger>| {
        let mut client = OpenAiConfig::new("sk-test");
        client.base_url = sim.openai_base_url();
        let mut settings = OpenAiSettings::new("gpt-5");
        settings.store = false;
        let mut toolbox = Toolbox::default();
        let path = effects.clone();
        toolbox
            .functions
            .add(Function::typed(
                "append",
                "Append line n.",
                move |args: Append| {
                    let path = path.clone();
                    async move {
                        let mut file = std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(&path)
                            .map_err(|e| e.to_string())?;
                        std::io::Write::write_all(&mut file, format!("{}\n", args.n).as_bytes())
                            .map_err(|e| e.to_string())?;
                        Ok(format!("appended {}", args.n))
                    }
                },
            ))
            .unwrap();
        let mut runner = Runner::openai(
            OpenAiClient::new(client).unwrap(),
            settings,
            None,
            toolbox,
            RunConfig::default(),
        );
        runner.set_ledger(ledger);
        runner
    };
    let path = dir.path().join("ledger.sqlite");
    let mut ledger = SqliteLedger::create(&path, "run-1").unwrap();
    fail_save(&mut ledger, 5);
    let outcome = runner(Box::new(ledger))
        .run("Append two lines.", &CancellationToken::new())
        .await
        .unwrap();
    assert!(
        matches!(
            outcome.status,
            RunStatus::Stopped(StopReason::LedgerFailed(_))
        ),
        "{outcome:?}"
    );
    assert_eq!(std::fs::read_to_string(&effects).unwrap(), "1\n");
    let before = sim.requests().len();
    let outcome = runner(Box::new(SqliteLedger::open(&path).unwrap()))
        .resume(&CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(std::fs::read_to_string(&effects).unwrap(), "1\n2\n");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let input = sim.requests()[before].body["input"].clone();
    let outputs: Vec<&str> = input
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| i["output"].as_str().unwrap())
        .collect();
    assert_eq!(outputs, ["appended 1", NOT_STARTED_ANSWER]);
    assert!(input.to_string().contains(RESUMED_NOTE));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_run_can_be_iterated_turn_by_turn() {
    let sim = SimServer::start(SimConfig::with_policy(two_turns_of_clicks)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let (desktop, recorder) = spawn_desktop();
    let mut first = claude(&sim, Some(desktop.display()), Toolbox::default(), MODEL);
    first.set_ledger(Box::new(SqliteLedger::create(&path, "run-1").unwrap()));
    let cancel = cancel_after_first_action(&mut first);
    let outcome = first.run("Click.", &cancel).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Stopped(StopReason::Cancelled));
    drop(first);

    let mut second = claude(&sim, Some(desktop.display()), Toolbox::default(), MODEL);
    second.set_ledger(Box::new(SqliteLedger::open(&path).unwrap()));
    let cancel = CancellationToken::new();
    let mut turns = second.iterate_resumed(&cancel);
    // The resumed run's next turn is shown before its click runs.
    let turn = turns.next_turn().await.expect("a turn");
    assert!(!turn.calls.is_empty());
    assert!(turn.calls.iter().all(|c| !c.tried), "{:?}", turn.calls);
    assert_eq!(
        clicks(&recorder),
        vec![(10, 10)],
        "nothing ran before the turn was shown"
    );
    let outcome = turns.finish().await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(clicks(&recorder), vec![(10, 10), (30, 30)]);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}
