//! The checkpoint ledger: what is saved around each effect, and a run resumed by a new runner
//! (a new process, a new desktop) from the end of a completed turn, repeating no action.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use hands_core::geometry::Size;
use hands_core::{CancellationToken, Desktop};
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_runner::ledger::{CheckpointStatus, FileLedger, MemoryLedger};
use hands_runner::{AnthropicSettings, RunConfig, RunError, RunStatus, Runner, Toolbox};
use hands_sim::policy::toolset_use;
use hands_sim::{SimConfig, SimServer, Turn};
use hands_testkit::InputRecorder;
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::{Value, json};

fn runner(sim: &SimServer) -> (Runner, InputRecorder) {
    let desktop = X11Desktop::spawn(&XvfbConfig::new(Size::new(640, 400).unwrap())).unwrap();
    let recorder = InputRecorder::start(desktop.display()).unwrap();
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = sim.base_url();
    let boxed: Box<dyn Desktop> = Box::new(desktop);
    let computer = ComputerToolset::new(
        boxed,
        ComputerConfig {
            append_screenshot: false,
            ..ComputerConfig::default()
        },
    )
    .unwrap();
    let runner = Runner::anthropic(
        AnthropicClient::new(config).unwrap(),
        AnthropicSettings::new("claude-opus-5"),
        Some(computer),
        Toolbox::default(),
        RunConfig::default(),
    );
    (runner, recorder)
}

/// Decides from the conversation itself (how many assistant turns it holds), so a resumed run
/// gets the turn that follows the checkpoint.
fn policy(request: &Value) -> Turn {
    let turns = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count();
    let c = |m: &str, input: Value| toolset_use("computer", m, input);
    match turns {
        0 => Turn::Blocks(vec![
            c("left_click", json!({"coordinate": [10, 10]})),
            c("left_click", json!({"coordinate": [20, 20]})),
        ]),
        1 => Turn::Blocks(vec![c("left_click", json!({"coordinate": [30, 30]}))]),
        _ => Turn::text("Done."),
    }
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_bracket_every_effect() {
    let sim = SimServer::start(SimConfig::with_policy(policy)).unwrap();
    let (mut runner, _recorder) = runner(&sim);
    let ledger = MemoryLedger::new();
    runner.set_ledger(Box::new(ledger.clone()));
    let outcome = runner
        .run("Click.", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished);
    let seen: Vec<(u32, String)> = ledger
        .checkpoints()
        .iter()
        .map(|c| {
            let status = match &c.status {
                CheckpointStatus::Completed => "completed".to_owned(),
                CheckpointStatus::Pending {
                    attempted_call_ids,
                    completed_call_ids,
                } => format!(
                    "pending {}/{}",
                    attempted_call_ids.len(),
                    completed_call_ids.len()
                ),
            };
            (c.steps_used, status)
        })
        .collect();
    let expect: Vec<(u32, &str)> = vec![
        (0, "completed"),
        (1, "pending 0/0"),
        (1, "pending 1/0"),
        (1, "pending 1/1"),
        (1, "pending 2/1"),
        (1, "pending 2/2"),
        (1, "completed"),
        (2, "pending 0/0"),
        (2, "pending 1/0"),
        (2, "pending 1/1"),
        (2, "completed"),
        (3, "completed"),
    ];
    let expect: Vec<(u32, String)> = expect.into_iter().map(|(n, s)| (n, s.into())).collect();
    assert_eq!(seen, expect);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_runner_resumes_from_a_completed_turn_and_repeats_nothing() {
    let sim = SimServer::start(SimConfig::with_policy(policy)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");

    // The first process is stopped after the first click of its first turn.
    let (mut first, first_desktop) = runner(&sim);
    first.set_ledger(Box::new(FileLedger::new(&path)));
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    first.set_observer(Box::new(
        move |record: &hands_runner::diagnostics::Record| {
            if record.stage == hands_runner::diagnostics::Stage::Action {
                stop.cancel();
            }
        },
    ));
    let outcome = first.run("Click.", &cancel).await.unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::Stopped(hands_runner::StopReason::Cancelled)
    );
    assert_eq!(clicks(&first_desktop), vec![(10, 10)]);
    // What it left on disk: the end of a turn in which every call is answered.
    let checkpoint = FileLedger::load(&path).unwrap();
    assert!(checkpoint.resumable(), "{checkpoint:?}");
    assert_eq!(checkpoint.steps_used, 1);

    // A pending checkpoint is refused.
    let mut pending = checkpoint.clone();
    pending.status = CheckpointStatus::Pending {
        attempted_call_ids: vec!["toolu_x".into()],
        completed_call_ids: vec![],
    };
    let (refusing, _d) = runner(&sim);
    assert!(matches!(
        refusing.resume(&pending, &CancellationToken::new()).await,
        Err(RunError::Config(_))
    ));

    // A second process resumes on a new desktop: the model sees the first turn answered (the
    // click not run is said so) and goes on; nothing of the first turn happens again.
    let (second, second_desktop) = runner(&sim);
    let before = sim.requests().len();
    let outcome = second
        .resume(&checkpoint, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(outcome.steps, 3, "the checkpoint's step count carries over");
    assert_eq!(clicks(&second_desktop), vec![(30, 30)]);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let resumed = &sim.requests()[before].body["messages"];
    assert_eq!(resumed.as_array().unwrap().len(), 3);
    assert!(resumed[2].to_string().contains("Not executed"));
}
