//! `hands batch` and `hands worker` against a real private PostgreSQL and the simulated
//! Messages API: three desktop tasks submitted and run by one worker with two slots; then a
//! worker SIGKILLed while its episode waits on the model, and a second worker taking the
//! episode over once the lease has expired and finishing it by resume, the effect done once;
//! a stalled worker woken after a takeover; and a parked episode listed, reconciled with
//! `hands batch reconcile` and resumed.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hands_fleet::cluster::{Durability, LocalCluster};
use hands_sim::policy::tool_use;
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};

fn cluster() -> LocalCluster {
    LocalCluster::start(Durability::Unsynced).unwrap_or_else(|e| {
        panic!("a private PostgreSQL is needed ({e}); run scripts/install-system-deps.sh")
    })
}

fn hands(sim: &SimServer) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command
        .stdin(Stdio::null())
        .env_remove("DISPLAY")
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url());
    command
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned() + &String::from_utf8_lossy(&output.stdout)
}

/// The answered tool calls in a request.
fn answered(request: &Value) -> usize {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result" && b["is_error"] != json!(true))
        .count()
}

/// The task's text: the first user message.
fn prompt(request: &Value) -> String {
    match &request["messages"][0]["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

fn submit(sim: &SimServer, url: &str, dir: &Path, tasks: &[Value]) {
    let file = dir.join("tasks.jsonl");
    let lines: Vec<String> = tasks.iter().map(Value::to_string).collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let output = hands(sim)
        .args(["batch", "submit", "--ledger", url])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        text(&output).contains(&format!("submitted {} episode(s)", tasks.len())),
        "{}",
        text(&output)
    );
}

fn worker(sim: &SimServer, url: &str, dir: &Path, slots: &str) -> Command {
    let mut command = hands(sim);
    command
        .args(["worker", "--ledger", url, "--slots", slots, "--lease", "2"])
        .args(["--sandbox", "none", "--until-done", "--dir"])
        .arg(dir.join("runs"));
    command
}

fn status(sim: &SimServer, url: &str) -> String {
    let output = hands(sim)
        .args(["batch", "status", "--ledger", url])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    text(&output)
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_worker_runs_a_submitted_batch_to_its_end() {
    let pg = cluster();
    let url = pg.database("batch").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let effects = dir.path().join("effects.txt");
    let effects_in_policy = effects.clone();
    // Each task appends its number once, then says it is done.
    let sim = SimServer::start(SimConfig::with_policy(move |request: &Value| {
        if answered(request) == 0 {
            let n = prompt(request)
                .split_whitespace()
                .last()
                .unwrap_or("?")
                .to_owned();
            let command = format!("echo {n} >> {}", effects_in_policy.display());
            Turn::Blocks(vec![tool_use("bash", json!({ "command": command }))])
        } else {
            Turn::text("Done.")
        }
    }))
    .unwrap();
    let tasks: Vec<Value> = (1..=3)
        .map(|n| {
            json!({"prompt": format!("Append the line {n}"), "environment": {"kind": "desktop"},
                "max_steps": 5, "check": format!("grep -qx {n} {}", effects.display())})
        })
        .collect();
    submit(&sim, &url, dir.path(), &tasks);
    assert!(status(&sim, &url).contains("3 episodes: 3 queued"));
    let output = worker(&sim, &url, dir.path(), "2").output().unwrap();
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    let mut got = lines(&effects);
    got.sort();
    assert_eq!(got, ["1", "2", "3"], "{said}");
    let shown = status(&sim, &url);
    assert!(
        shown.contains("3 episodes: 0 queued, 0 running, 3 finished"),
        "{shown}"
    );
    assert!(shown.contains("success: 3 of 3 done (100.0%)"), "{shown}");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    // Each episode's run directory holds its log.
    for n in 1..=3 {
        let log = dir.path().join(format!("runs/episode-{n}/log.jsonl"));
        assert!(
            std::fs::read_to_string(&log)
                .unwrap()
                .contains("\"kind\":\"start\"")
        );
    }
}

fn wait_until(timeout: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn kill(mut child: Child) {
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

#[test]
fn a_killed_workers_episode_is_taken_over_after_its_lease_and_resumed() {
    let pg = cluster();
    let url = pg.database("takeover").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let effects = dir.path().join("effects.txt");
    let effects_in_policy = effects.clone();
    let waiting = Arc::new(AtomicBool::new(false));
    let second_requests = Arc::new(AtomicUsize::new(0));
    let (waiting_in_policy, seconds) = (Arc::clone(&waiting), Arc::clone(&second_requests));
    // The effect, then a model that is slow to answer the first time: the worker is killed
    // while it waits.
    let sim = SimServer::start(SimConfig::with_policy(move |request: &Value| {
        if answered(request) == 0 {
            let command = format!("echo once >> {}", effects_in_policy.display());
            return Turn::Blocks(vec![tool_use("bash", json!({ "command": command }))]);
        }
        if seconds.fetch_add(1, Ordering::SeqCst) == 0 {
            waiting_in_policy.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_secs(3));
        }
        Turn::text("Done.")
    }))
    .unwrap();
    let task = json!({"prompt": "Append once", "environment": {"kind": "desktop"}, "max_steps": 5,
        "check": format!("grep -qx once {}", effects.display())});
    submit(&sim, &url, dir.path(), &[task]);
    let first = worker(&sim, &url, dir.path(), "1")
        .args(["--name", "first"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(60), "the second request", || {
        waiting.load(Ordering::SeqCst)
    });
    kill(first);
    let killed_at = Instant::now();
    assert!(status(&sim, &url).contains("1 running"));
    let output = worker(&sim, &url, dir.path(), "1")
        .args(["--name", "second"])
        .output()
        .unwrap();
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    // The second worker waited for the lease (2 s) to expire, then resumed the episode.
    assert!(said.contains("episode 1 (epoch 2, resuming)"), "{said}");
    assert!(said.contains("episode 1 finished"), "{said}");
    assert!(killed_at.elapsed() >= Duration::from_millis(1500));
    // The effect happened once; the episode finished with its check passing.
    assert_eq!(lines(&effects), ["once"], "{said}");
    let shown = status(&sim, &url);
    assert!(shown.contains("1 finished"), "{shown}");
    assert!(shown.contains("success: 1 of 1 done"), "{shown}");
    assert_eq!(second_requests.load(Ordering::SeqCst), 2);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let log = std::fs::read_to_string(dir.path().join("runs/episode-1/log.jsonl")).unwrap();
    assert!(log.contains("\"kind\":\"resume\""), "{log}");
}

fn signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_stalled_worker_that_wakes_after_a_takeover_never_acts_again() {
    let pg = cluster();
    let url = pg.database("zombie").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let effects = dir.path().join("effects.txt");
    let effects_in_policy = effects.clone();
    let waiting = Arc::new(AtomicBool::new(false));
    let second_requests = Arc::new(AtomicUsize::new(0));
    let (waiting_in_policy, seconds) = (Arc::clone(&waiting), Arc::clone(&second_requests));
    // Two effects, one per turn; the model is slow to propose the second the first time: the
    // worker is stopped (SIGSTOP) while it waits, past its lease.
    let sim = SimServer::start(SimConfig::with_policy(move |request: &Value| {
        let append = |line: &str| {
            let command = format!("echo {line} >> {}", effects_in_policy.display());
            Turn::Blocks(vec![tool_use("bash", json!({ "command": command }))])
        };
        match answered(request) {
            0 => append("a"),
            1 => {
                if seconds.fetch_add(1, Ordering::SeqCst) == 0 {
                    waiting_in_policy.store(true, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_secs(3));
                }
                append("b")
            }
            _ => Turn::text("Done."),
        }
    }))
    .unwrap();
    let task = json!({"prompt": "Append a, then b", "environment": {"kind": "desktop"},
        "max_steps": 6});
    submit(&sim, &url, dir.path(), &[task]);
    let stalled = worker(&sim, &url, dir.path(), "1")
        .args(["--name", "stalled"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(60), "the second request", || {
        waiting.load(Ordering::SeqCst)
    });
    signal(&stalled, "-STOP");
    // The second worker takes the episode over once the lease expires, and finishes it.
    let output = worker(&sim, &url, dir.path(), "1")
        .args(["--name", "second"])
        .output()
        .unwrap();
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("episode 1 (epoch 2, resuming)"), "{said}");
    assert_eq!(lines(&effects), ["a", "b"], "{said}");
    // The stalled worker wakes with the model's answer proposing `b` in hand: its save before
    // the effect is refused by the fence, so it stops without acting and records nothing.
    signal(&stalled, "-CONT");
    let output = stalled.wait_with_output().unwrap();
    let stalled_said = text(&output);
    assert!(output.status.success(), "{stalled_said}");
    assert!(
        stalled_said.contains("episode 1 is no longer this worker's"),
        "{stalled_said}"
    );
    assert_eq!(lines(&effects), ["a", "b"], "{stalled_said}");
    let shown = status(&sim, &url);
    assert!(shown.contains("1 finished"), "{shown}");
    assert_eq!(second_requests.load(Ordering::SeqCst), 2);
}

#[test]
fn a_parked_episode_is_listed_reconciled_by_a_person_and_resumed() {
    let pg = cluster();
    let url = pg.database("reconcile").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let effects = dir.path().join("effects.txt");
    let (started_in_policy, effects_in_policy) = (started.clone(), effects.clone());
    // One long call: the worker is killed while it runs, so its outcome is unknown.
    let sim = SimServer::start(SimConfig::with_policy(move |request: &Value| {
        if answered(request) == 0 {
            // It appends only if the file `proceed` exists, which it never does: the effect
            // does not happen, and "did not happen" is the truth to reconcile.
            let command = format!(
                "touch {}; sleep 3; test -e proceed && echo once >> {}",
                started_in_policy.display(),
                effects_in_policy.display()
            );
            return Turn::Blocks(vec![tool_use("bash", json!({ "command": command }))]);
        }
        Turn::text("Done.")
    }))
    .unwrap();
    let task = json!({"prompt": "Append once, slowly", "environment": {"kind": "desktop"},
        "max_steps": 4});
    submit(&sim, &url, dir.path(), &[task]);
    let first = worker(&sim, &url, dir.path(), "1")
        .args(["--name", "first"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(60), "the call to start", || {
        started.exists()
    });
    kill(first);
    // The next worker finds the call uncertain and parks the episode.
    let output = worker(&sim, &url, dir.path(), "1").output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let shown = status(&sim, &url);
    assert!(shown.contains("1 parked"), "{shown}");
    let listed = hands(&sim)
        .args(["batch", "reconcile", "--ledger", &url])
        .output()
        .unwrap();
    let listing = text(&listed);
    assert!(listed.status.success(), "{listing}");
    assert!(
        listing.contains("episode 1: 1 uncertain call(s)"),
        "{listing}"
    );
    let call = listing
        .split("call ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .unwrap()
        .to_owned();
    // A call that is not uncertain is refused, naming those that are.
    let wrong = hands(&sim)
        .args(["batch", "reconcile", "--ledger", &url, "--episode", "1"])
        .args(["--call", "toolu_nope", "--happened"])
        .output()
        .unwrap();
    assert!(!wrong.status.success());
    assert!(text(&wrong).contains(&call), "{}", text(&wrong));
    assert!(status(&sim, &url).contains("1 parked"));
    let decided = hands(&sim)
        .args(["batch", "reconcile", "--ledger", &url, "--episode", "1"])
        .args([
            "--call",
            &call,
            "--not-happened",
            "--note",
            "nothing was appended",
        ])
        .output()
        .unwrap();
    let said = text(&decided);
    assert!(decided.status.success(), "{said}");
    assert!(said.contains("episode 1: queued again"), "{said}");
    // A worker resumes it: the model is told the call did not happen, and finishes.
    let output = worker(&sim, &url, dir.path(), "1").output().unwrap();
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("episode 1 finished"), "{said}");
    let shown = status(&sim, &url);
    assert!(shown.contains("1 finished"), "{shown}");
    assert!(lines(&effects).is_empty());
}

/// Issue 20, item 3: under `--sandbox jail` the episode's programs read the claim too — the run
/// directory is not in the jail, so `claim.json` is also written into the jail's `/workspace`
/// (the bash tool's working directory) and home.
#[test]
fn a_jailed_episode_reads_its_claim_where_its_shell_starts() {
    let pg = cluster();
    let url = pg.database("jailclaim").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(String::new()));
    let seen_in_policy = Arc::clone(&seen);
    let sim = SimServer::start(SimConfig::with_policy(move |request: &Value| {
        if answered(request) == 0 {
            let command = "cat claim.json && cat ~/claim.json";
            Turn::Blocks(vec![tool_use("bash", json!({ "command": command }))])
        } else {
            *seen_in_policy.lock().unwrap() = request["messages"].to_string();
            Turn::text("Done.")
        }
    }))
    .unwrap();
    let task = json!({"prompt": "Read the claim", "environment": {"kind": "desktop"},
        "max_steps": 3});
    submit(&sim, &url, dir.path(), &[task]);
    let output = hands(&sim)
        .args(["worker", "--ledger", &url, "--slots", "1", "--lease", "5"])
        .args(["--sandbox", "jail", "--until-done", "--dir"])
        .arg(dir.path().join("runs"))
        .output()
        .unwrap();
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.contains(r#"{\\\"episode\\\":1,\\\"epoch\\\":1,"#)
            || seen.contains(r#"{\"episode\":1,\"epoch\":1,"#),
        "the jailed shell did not read its claim: {seen}\n{said}"
    );
}
