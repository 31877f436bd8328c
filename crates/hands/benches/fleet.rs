//! Episodes per hour through `hands worker` (PostgreSQL with fsync on, every checkpoint fenced)
//! against the same episodes run bare (`hands run`, one process each, its SQLite ledger), in one
//! run, at the same concurrency. Each episode is scripted by hands-sim: a screenshot, a click
//! and typed text on its own spawned Xvfb desktop, then a bash command writing a file, then
//! "Done." — and is verified by that file (a check command for the worker's). Prints both
//! rates, their ratio (goal: workers ≥ 90% of bare), and the batch's `hands batch status`.
//!
//! Run with `cargo bench -p hands --bench fleet` (or `scripts/bench-fleet`, which also runs the
//! ledger's save benchmark). `HANDS_BENCH_EPISODES` (default 100) episodes each way,
//! `HANDS_BENCH_AT_ONCE` (default 2) at once.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark binary prints its table"
)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hands_fleet::cluster::{Durability, LocalCluster};
use hands_sim::policy::{tool_use, toolset_use};
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The answered tool calls in a request.
fn answered(request: &Value) -> usize {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .count()
}

fn model() -> SimServer {
    SimServer::start(SimConfig::with_policy(|request: &Value| {
        match answered(request) {
            0 => Turn::Blocks(vec![toolset_use("computer", "screenshot", json!({}))]),
            1 => Turn::Blocks(vec![toolset_use(
                "computer",
                "left_click",
                json!({"coordinate": [200, 200]}),
            )]),
            2 => Turn::Blocks(vec![toolset_use(
                "computer",
                "type",
                json!({"text": "hands"}),
            )]),
            3 => Turn::Blocks(vec![tool_use(
                "bash",
                json!({"command": "echo done > out.txt"}),
            )]),
            _ => Turn::text("Done."),
        }
    }))
    .unwrap()
}

fn hands(sim: &SimServer) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command
        .stdin(Stdio::null())
        .env_remove("DISPLAY")
        .env("ANTHROPIC_API_KEY", "sk-bench")
        .env("ANTHROPIC_BASE_URL", sim.base_url());
    command
}

/// `n` episodes, `at_once` `hands run` processes at a time; returns the wall time and how many
/// wrote their file.
fn bare(sim: &SimServer, dir: &Path, n: usize, at_once: usize) -> (Duration, usize) {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..at_once {
            let next = Arc::clone(&next);
            scope.spawn(move || {
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    if k >= n {
                        break;
                    }
                    let out = dir.join(format!("bare-{k}"));
                    let output = hands(sim)
                        .args(["run", "--task", &format!("Episode {k}"), "--desktop"])
                        .args(["--sandbox", "none", "--approve", "all", "--max-steps", "8"])
                        .arg("--out")
                        .arg(&out)
                        .output()
                        .unwrap();
                    assert!(
                        output.status.success(),
                        "hands run of episode {k} failed: {}",
                        String::from_utf8_lossy(&output.stderr)
                    );
                }
            });
        }
    });
    let took = started.elapsed();
    let ok = (0..n)
        .filter(|k| dir.join(format!("bare-{k}/out.txt")).is_file())
        .count();
    (took, ok)
}

/// The same `n` episodes through one `hands worker --slots at_once`; returns the wall time
/// (submission included) and the batch's status.
fn through_worker(
    sim: &SimServer,
    url: &str,
    dir: &Path,
    n: usize,
    at_once: usize,
) -> (Duration, String) {
    let tasks: Vec<String> = (0..n)
        .map(|k| {
            json!({"prompt": format!("Episode {k}"), "environment": {"kind": "desktop"},
                "max_steps": 8, "check": "grep -qx done out.txt"})
            .to_string()
        })
        .collect();
    let file = dir.join("bench.jsonl");
    std::fs::write(&file, tasks.join("\n")).unwrap();
    let started = Instant::now();
    let submitted = hands(sim)
        .args(["batch", "submit", "--ledger", url])
        .arg(&file)
        .output()
        .unwrap();
    assert!(submitted.status.success());
    let worked = hands(sim)
        .args(["worker", "--ledger", url, "--slots", &at_once.to_string()])
        .args(["--sandbox", "none", "--until-done", "--dir"])
        .arg(dir.join("fleet"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(worked.success(), "hands worker failed");
    let took = started.elapsed();
    let status = hands(sim)
        .args(["batch", "status", "--ledger", url])
        .output()
        .unwrap();
    (took, String::from_utf8_lossy(&status.stdout).into_owned())
}

fn main() {
    let n = setting("HANDS_BENCH_EPISODES", 100).max(1);
    let at_once = setting("HANDS_BENCH_AT_ONCE", 2).max(1);
    let pg = LocalCluster::start(Durability::Synced).unwrap();
    let url = pg.database("bench").unwrap();
    let sim = model();
    let dir = tempfile::tempdir().unwrap();
    let per_hour = |took: Duration| n as f64 * 3600.0 / took.as_secs_f64();
    let (bare_took, bare_ok) = bare(&sim, dir.path(), n, at_once);
    let (fleet_took, status) = through_worker(&sim, &url, dir.path(), n, at_once);
    println!(
        "{n} episodes, {at_once} at once (scripted: screenshot, click, type, bash, done; a spawned Xvfb each)"
    );
    println!(
        "bare `hands run` (SQLite ledger): {:>7.0} episodes/hour ({:.1} s, {bare_ok}/{n} verified)",
        per_hour(bare_took),
        bare_took.as_secs_f64()
    );
    println!(
        "`hands worker` (PostgreSQL, fsync on): {:>7.0} episodes/hour ({:.1} s) = {:.0}% of bare (goal >= 90%)",
        per_hour(fleet_took),
        fleet_took.as_secs_f64(),
        100.0 * bare_took.as_secs_f64() / fleet_took.as_secs_f64()
    );
    println!("hands batch status:\n{status}");
}
