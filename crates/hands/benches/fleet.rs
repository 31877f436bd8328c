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

/// Where one episode's time went, from its run directory's `log.jsonl`, in ms.
#[derive(Debug, Default, Clone)]
struct LogTimes {
    /// Until the first request: the environment started, the runner built.
    env: f64,
    /// The model's answers (the stand-in's).
    model: f64,
    /// The actions.
    actions: f64,
    /// Each checkpoint save.
    saves: Vec<f64>,
    /// The log's last line (the run, from its directory's creation).
    total: f64,
}

fn log_times(dir: &Path) -> LogTimes {
    let text = std::fs::read_to_string(dir.join("log.jsonl")).unwrap_or_default();
    let mut times = LogTimes::default();
    for line in text.lines() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let f = |key: &str| entry[key].as_f64().unwrap_or(0.0);
        if let Some(t) = entry["t_ms"].as_f64() {
            times.total = times.total.max(t);
        }
        match entry["kind"].as_str() {
            Some("request") if times.env == 0.0 => times.env = f("t_ms"),
            Some("response") => times.model += f("ms"),
            Some("action") => times.actions += f("ms"),
            Some("ledger") => times.saves.extend(
                entry["save_ms"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_f64),
            ),
            _ => {}
        }
    }
    times
}

/// `n` episodes, `at_once` `hands run` processes at a time; returns the wall time, how many
/// wrote their file, and each episode's process time in ms.
fn bare(sim: &SimServer, dir: &Path, n: usize, at_once: usize) -> (Duration, usize, Vec<f64>) {
    let next = Arc::new(AtomicUsize::new(0));
    let walls = std::sync::Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..at_once {
            let next = Arc::clone(&next);
            let walls = &walls;
            scope.spawn(move || {
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    if k >= n {
                        break;
                    }
                    let out = dir.join(format!("bare-{k}"));
                    let one = Instant::now();
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
                    walls
                        .lock()
                        .unwrap()
                        .push(one.elapsed().as_secs_f64() * 1e3);
                }
            });
        }
    });
    let took = started.elapsed();
    let ok = (0..n)
        .filter(|k| dir.join(format!("bare-{k}/out.txt")).is_file())
        .count();
    (took, ok, walls.into_inner().unwrap())
}

/// The same `n` episodes through one `hands worker --slots at_once`; returns the wall time
/// (submission included), the batch's status, and the worker's `phases` line of each episode.
fn through_worker(
    sim: &SimServer,
    url: &str,
    dir: &Path,
    n: usize,
    at_once: usize,
) -> (Duration, String, Vec<Value>) {
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
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&worked.stderr);
    assert!(worked.status.success(), "hands worker failed: {said}");
    let phases: Vec<Value> = said
        .lines()
        .filter_map(|l| l.split_once(" phases ").map(|(_, json)| json))
        .filter_map(|json| serde_json::from_str(json).ok())
        .collect();
    let took = started.elapsed();
    let status = hands(sim)
        .args(["batch", "status", "--ledger", url])
        .output()
        .unwrap();
    (
        took,
        String::from_utf8_lossy(&status.stdout).into_owned(),
        phases,
    )
}

fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = values
        .into_iter()
        .fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// The `q` quantile of `values` (nearest rank).
fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1]
}

/// Prints where each way's time per episode went, side by side, and the saves' latencies.
fn breakdown(bare: (&[LogTimes], &[f64], f64), worker: (&[LogTimes], &[Value], f64)) {
    let (bare_logs, bare_walls, bare_slot) = bare;
    let (fleet_logs, phases, fleet_slot) = worker;
    let p = |key: &str| mean(phases.iter().map(|v| v[key].as_f64().unwrap_or(0.0)));
    let fleet_wall = p("claim_ms") + p("open_ms") + p("run_ms") + p("judge_ms") + p("finish_ms");
    let row = |what: &str, bare: f64, fleet: f64| {
        println!(
            "  {what:<44} {bare:>8.1} {fleet:>8.1} {:>+8.1}",
            fleet - bare
        );
    };
    let of = |logs: &[LogTimes], f: &dyn Fn(&LogTimes) -> f64| mean(logs.iter().map(f));
    println!("per episode, mean ms                            bare   worker    extra");
    row(
        "a slot's time per episode (wall x slots / n)",
        bare_slot,
        fleet_slot,
    );
    row(
        "  the episode (bare: its process; worker: claim..finish)",
        mean(bare_walls.iter().copied()),
        fleet_wall,
    );
    let run = |l: &LogTimes| l.total;
    let saves = |l: &LogTimes| l.saves.iter().sum::<f64>();
    type Phase<'a> = (&'a str, &'a dyn Fn(&LogTimes) -> f64);
    let phases: [Phase; 6] = [
        ("    the run (its log)", &run),
        ("      environment start, runner built", &|l| l.env),
        ("      the model (stand-in)", &|l| l.model),
        ("      actions", &|l| l.actions),
        ("      checkpoint saves", &saves),
        ("      the rest of the run", &|l| {
            l.total - l.env - l.model - l.actions - saves(l)
        }),
    ];
    for (what, phase) in phases {
        row(what, of(bare_logs, phase), of(fleet_logs, phase));
    }
    row(
        "    outside the run",
        mean(bare_walls.iter().copied()) - of(bare_logs, &run),
        fleet_wall - of(fleet_logs, &run),
    );
    println!(
        "      worker: claim {:.1}, open the ledger {:.1}, after the log {:.1}, check {:.1}, finish {:.1}",
        p("claim_ms"),
        p("open_ms"),
        p("run_ms") - of(fleet_logs, &run),
        p("judge_ms"),
        p("finish_ms")
    );
    let all =
        |logs: &[LogTimes]| -> Vec<f64> { logs.iter().flat_map(|l| l.saves.clone()).collect() };
    for (what, saves) in [
        ("SQLite ledger (bare)", all(bare_logs)),
        ("PostgresLedger (worker)", all(fleet_logs)),
    ] {
        println!(
            "saves, {what:<24}: {:>5} saves, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (goal: p99 <= 10 ms)",
            saves.len(),
            quantile(&saves, 0.5),
            quantile(&saves, 0.99),
            quantile(&saves, 1.0)
        );
    }
}

fn main() {
    let n = setting("HANDS_BENCH_EPISODES", 100).max(1);
    let at_once = setting("HANDS_BENCH_AT_ONCE", 2).max(1);
    let pg = LocalCluster::start(Durability::Synced).unwrap();
    let url = pg.database("bench").unwrap();
    let sim = model();
    let dir = tempfile::tempdir().unwrap();
    let per_hour = |took: Duration| n as f64 * 3600.0 / took.as_secs_f64();
    let (bare_took, bare_ok, bare_walls) = bare(&sim, dir.path(), n, at_once);
    let (fleet_took, status, phases) = through_worker(&sim, &url, dir.path(), n, at_once);
    let bare_logs: Vec<LogTimes> = (0..n)
        .map(|k| log_times(&dir.path().join(format!("bare-{k}"))))
        .collect();
    let fleet_logs: Vec<LogTimes> = std::fs::read_dir(dir.path().join("fleet"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| log_times(&entry.path()))
        .collect();
    let slot = |took: Duration| took.as_secs_f64() * 1e3 * at_once as f64 / n as f64;
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
    breakdown(
        (&bare_logs, &bare_walls, slot(bare_took)),
        (&fleet_logs, &phases, slot(fleet_took)),
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at the end: {}", load.trim());
    println!("hands batch status:\n{status}");
}
