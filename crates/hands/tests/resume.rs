//! `hands run --resume RUN_DIR` as a new user tries it, against the simulated APIs: after a
//! refused approval, after kill -9 in the middle of an action (reconciled first, with
//! `hands runs show` and `hands runs reconcile`), and with another model or step limit
//! (refused, naming what changed); `hands runs` lists the runs with their status.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use hands_core::geometry::Size;
use hands_sim::policy::{computer_call_with_checks, tool_use};
use hands_sim::{SimConfig, SimServer, Turn};
use hands_testkit::InputRecorder;
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::{Value, json};

fn hands() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command.stdin(Stdio::null()).env_remove("DISPLAY");
    command
}

fn anthropic(sim: &SimServer) -> Command {
    let mut command = hands();
    command
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url());
    command
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned() + &String::from_utf8_lossy(&output.stdout)
}

fn runs_show(run_dir: &Path) -> Value {
    let output = hands()
        .args(["runs", "show", "--json"])
        .arg(run_dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn desktop() -> (X11Desktop, InputRecorder) {
    let desktop = X11Desktop::spawn(&XvfbConfig::new(Size::new(640, 400).unwrap())).unwrap();
    let recorder = InputRecorder::start(desktop.display()).unwrap();
    (desktop, recorder)
}

fn successes(request: &Value) -> usize {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result" && b["is_error"] != json!(true))
        .count()
}

#[test]
fn resume_after_a_refused_approval_asks_again_and_clicks_once() {
    let (desktop, recorder) = desktop();
    let sim = SimServer::start(SimConfig::with_policy(|request: &Value| {
        let answered = request["input"]
            .as_array()
            .is_some_and(|items| items.iter().any(|i| i["type"] == "computer_call_output"));
        if answered {
            Turn::text("Clicked.")
        } else {
            Turn::Items(vec![computer_call_with_checks(
                vec![json!({"type": "click", "button": "left", "x": 50, "y": 40})],
                vec![json!({"code": "irrelevant_domain", "message": "Off the task's site."})],
            )])
        }
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let openai = || {
        let mut command = hands();
        command
            .env("OPENAI_API_KEY", "sk-test")
            .env("OPENAI_BASE_URL", sim.openai_base_url());
        command
    };
    // Nobody approves: the run stops before the click.
    let output = openai()
        .args(["run", "--provider", "openai", "--model", "computer-use-2"])
        .args([
            "--display",
            desktop.display(),
            "--sandbox",
            "none",
            "--approve",
            "none",
        ])
        .args(["--task", "Click the button."])
        .arg("--out")
        .arg(&run_dir)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = text(&output);
    assert!(said.contains("were not approved"), "{said}");
    assert!(said.contains("hands run --resume"), "{said}");
    assert!(
        recorder
            .sync()
            .unwrap()
            .iter()
            .all(|e| !e.is_button_press(1))
    );
    let shown = runs_show(&run_dir);
    assert_eq!(shown["pending_turn"][0]["state"], "refused (did not run)");
    assert!(
        shown["status"]
            .as_str()
            .unwrap()
            .starts_with("stopped mid-turn, resumable"),
        "{shown}"
    );

    // Resumed with its own settings (provider, model, display) and a person who approves: the
    // model proposes again, the approval is asked again, the click happens once.
    let output = openai()
        .args(["run", "--approve", "all", "--resume"])
        .arg(&run_dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let presses: Vec<(i32, i32)> = recorder
        .sync()
        .unwrap()
        .iter()
        .filter(|e| e.is_button_press(1))
        .map(|e| e.position())
        .collect();
    assert_eq!(presses, vec![(50, 40)]);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    assert_eq!(runs_show(&run_dir)["status"], "finished");
    let log = std::fs::read_to_string(run_dir.join("log.jsonl")).unwrap();
    assert!(log.contains("\"kind\":\"start\"") && log.contains("\"kind\":\"resume\""));
}

#[test]
fn resume_after_kill_9_mid_action_waits_for_reconciliation_and_repeats_nothing() {
    let (desktop, _recorder) = desktop();
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let fifo = dir.path().join("started");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    // Effect 1 appends a line, says it started, and is still running when hands is killed.
    let first = format!(
        "echo 1 >> effects.txt; echo go > {}; sleep 2",
        fifo.display()
    );
    let sim = SimServer::start(SimConfig::with_policy(
        move |request: &Value| match successes(request) {
            0 => Turn::Blocks(vec![
                tool_use("bash", json!({"command": first})),
                tool_use("bash", json!({"command": "echo 2 >> effects.txt"})),
            ]),
            1 => Turn::Blocks(vec![tool_use(
                "bash",
                json!({"command": "echo 2 >> effects.txt"}),
            )]),
            _ => Turn::text("Both lines are there."),
        },
    ))
    .unwrap();
    let mut child = anthropic(&sim)
        .args([
            "run",
            "--approve",
            "all",
            "--sandbox",
            "none",
            "--display",
            desktop.display(),
        ])
        .args(["--task", "Append two lines."])
        .arg("--out")
        .arg(&run_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(std::fs::File::open(&fifo).unwrap())
        .read_line(&mut line)
        .unwrap();
    // While it runs, the run has an owner: a second one is refused, naming it.
    let output = anthropic(&sim)
        .args(["run", "--approve", "all", "--resume"])
        .arg(&run_dir)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        text(&output).contains(&format!("owned by process {}", child.id())),
        "{}",
        text(&output)
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let effects = || std::fs::read_to_string(run_dir.join("effects.txt")).unwrap();
    assert_eq!(effects(), "1\n");

    // Resuming is refused: the first command may or may not have finished.
    let output = anthropic(&sim)
        .args(["run", "--approve", "all", "--resume"])
        .arg(&run_dir)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = text(&output);
    assert!(
        said.contains("(bash) may or may not have taken effect"),
        "{said}"
    );
    assert!(said.contains("hands runs reconcile"), "{said}");
    let shown = runs_show(&run_dir);
    let calls = shown["pending_turn"].as_array().unwrap();
    assert_eq!(calls[0]["uncertain"], true);
    assert!(
        calls[0]["input"]["command"]
            .as_str()
            .unwrap()
            .starts_with("echo 1")
    );
    assert_eq!(calls[1]["state"], "not started");
    let listed = hands().arg("runs").arg(dir.path()).output().unwrap();
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("needs reconciliation: 1 call(s)"),
        "{}",
        text(&listed)
    );
    let human = hands()
        .args(["runs", "show"])
        .arg(&run_dir)
        .output()
        .unwrap();
    assert!(text(&human).contains("UNCERTAIN"), "{}", text(&human));

    // The person looks: line 1 is there. They say so, and the run goes on without running the
    // first command again; the second, never started, is asked for again by the model.
    let call_id = calls[0]["call_id"].as_str().unwrap();
    let output = hands()
        .args(["runs", "reconcile"])
        .arg(&run_dir)
        .args([call_id, "--happened", "--note", "effects.txt has line 1"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let output = anthropic(&sim)
        .args(["run", "--approve", "all", "--resume"])
        .arg(&run_dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    assert_eq!(effects(), "1\n2\n");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let last = sim.requests().last().unwrap().body.to_string();
    assert!(last.contains("effects.txt has line 1"), "{last}");
}

#[test]
fn resume_with_another_model_or_step_limit_is_refused_naming_what_changed() {
    let (desktop, _recorder) = desktop();
    let sim = SimServer::start(SimConfig::with_policy(|request: &Value| {
        match successes(request) {
            0 => Turn::Blocks(vec![tool_use("bash", json!({"command": "true"}))]),
            _ => Turn::text("Done."),
        }
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let output = anthropic(&sim)
        .args(["run", "--approve", "all", "--max-steps", "5"])
        .args([
            "--display",
            desktop.display(),
            "--sandbox",
            "none",
            "--task",
            "Nothing much.",
        ])
        .arg("--out")
        .arg(&run_dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let before = sim.requests().len();
    for (flag, value, expect) in [
        (
            "--model",
            "claude-other",
            "the model changed: claude-opus-5-5 → claude-other",
        ),
        ("--max-steps", "9", "the step limit changed: 5 → 9"),
    ] {
        let output = anthropic(&sim)
            .args(["run", "--resume"])
            .arg(&run_dir)
            .args([flag, value])
            .output()
            .unwrap();
        assert!(!output.status.success());
        assert!(text(&output).contains(expect), "{}", text(&output));
    }
    // The same settings: the run finished, there is nothing to resume.
    let output = anthropic(&sim)
        .args(["run", "--resume"])
        .arg(&run_dir)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        text(&output).contains("this run finished"),
        "{}",
        text(&output)
    );
    assert_eq!(
        sim.requests().len(),
        before,
        "no refused resume sent anything"
    );
    let listed = hands().arg("runs").arg(dir.path()).output().unwrap();
    let listing = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listing.contains("finished  2/5 requests  claude-opus-5-5"),
        "{listing}"
    );
}
