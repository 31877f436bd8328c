//! What the checkpoint ledger writes per step of a long run with screenshots, side by side with
//! the alternative of writing each checkpoint whole (one JSON document per save, synced and
//! renamed into place, as hands' ledger did before SQLite).
//!
//! A 100-step run on a real Xvfb desktop against the simulated Messages API: each step types a
//! line into mousepad, and the computer toolset answers with a fresh 1280x800 screenshot (every
//! screenshot differs); screenshot history is pruned as usual (the last 3 kept, dropped in
//! batches of 25). Every checkpoint goes to both ledgers; for each, the bytes handed to storage
//! are summed per step: for SQLite, the payload of its new rows (blobs and checkpoint rows) and
//! the bytes of its `write` system calls (pages, WAL frames and checkpoints included, read from
//! `/proc/thread-self/io`); for the whole-JSON ledger, the bytes written.
//!
//! Run with `cargo bench -p hands-runner --bench ledger`. Prints numbers; asserts nothing.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark binary"
)]

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hands_core::geometry::Size;
use hands_core::{CancellationToken, Desktop};
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_runner::ledger::{
    Checkpoint, CheckpointStatus, Ledger, LedgerError, RunEnd, SqliteLedger,
};
use hands_runner::{AnthropicSettings, RunConfig, Runner, Toolbox};
use hands_sim::policy::toolset_use;
use hands_sim::{SimConfig, SimServer, Turn};
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::{Value, json};

const STEPS: u32 = 100;

/// Bytes this thread has passed to `write` and friends so far.
fn written_by_thread() -> u64 {
    std::fs::read_to_string("/proc/thread-self/io")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("wchar:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0)
}

#[derive(Debug, Default, Clone, Copy)]
struct StepBytes {
    saves: u64,
    sqlite_blobs: u64,
    sqlite_rows: u64,
    sqlite_written: u64,
    whole_json: u64,
}

/// Saves each checkpoint to the SQLite ledger and to a whole-JSON file, measuring each.
struct Both {
    sqlite: SqliteLedger,
    json_path: PathBuf,
    per_step: Arc<Mutex<BTreeMap<u32, StepBytes>>>,
}

impl Both {
    fn save_whole(&self, checkpoint: &Checkpoint) -> u64 {
        let status = match &checkpoint.status {
            CheckpointStatus::Completed => json!("completed"),
            CheckpointStatus::Pending(turn) => serde_json::to_value(turn).unwrap(),
        };
        let body = serde_json::to_vec(&json!({"identity": checkpoint.identity,
            "revision": checkpoint.revision, "steps_used": checkpoint.steps_used,
            "status": status, "conversation": checkpoint.conversation}))
        .unwrap();
        let before = written_by_thread();
        let tmp = self.json_path.with_extension("tmp");
        let mut file = std::fs::File::create(&tmp).unwrap();
        file.write_all(&body).unwrap();
        file.sync_all().unwrap();
        std::fs::rename(&tmp, &self.json_path).unwrap();
        written_by_thread() - before
    }
}

impl Ledger for Both {
    fn run_id(&self) -> &str {
        self.sqlite.run_id()
    }

    fn save(&mut self, checkpoint: &Checkpoint) -> Result<(), LedgerError> {
        let stats_before = self.sqlite.stats();
        let before = written_by_thread();
        self.sqlite.save(checkpoint)?;
        let sqlite_written = written_by_thread() - before;
        let stats = self.sqlite.stats();
        let whole_json = self.save_whole(checkpoint);
        let mut per_step = self.per_step.lock().unwrap();
        let step = per_step.entry(checkpoint.steps_used).or_default();
        step.saves += 1;
        step.sqlite_blobs += stats.blob_bytes - stats_before.blob_bytes;
        step.sqlite_rows += stats.row_bytes - stats_before.row_bytes;
        step.sqlite_written += sqlite_written;
        step.whole_json += whole_json;
        Ok(())
    }

    fn latest_revision(&mut self) -> Result<u64, LedgerError> {
        self.sqlite.latest_revision()
    }

    fn latest(&mut self) -> Result<Option<Checkpoint>, LedgerError> {
        self.sqlite.latest()
    }

    fn latest_completed(&mut self) -> Result<Option<Checkpoint>, LedgerError> {
        self.sqlite.latest_completed()
    }

    fn record_end(&mut self, end: &RunEnd) -> Result<(), LedgerError> {
        self.sqlite.record_end(end)
    }

    fn end(&mut self) -> Result<Option<RunEnd>, LedgerError> {
        self.sqlite.end()
    }
}

/// Waits (bounded) until a window breaks Xvfb's uniform root.
async fn wait_for_window(desktop: &mut X11Desktop) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        let pixels = desktop.capture().await.unwrap();
        let size = pixels.size();
        if pixels.rgb_at(size.width / 2, size.height / 2) != pixels.rgb_at(0, 0) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("mousepad did not show its window");
}

async fn long_run() {
    let mut desktop = X11Desktop::spawn(&XvfbConfig::new(Size::new(1280, 800).unwrap())).unwrap();
    let _wm = desktop.spawn_client("openbox", &[]).unwrap();
    let _editor = desktop
        .spawn_client("mousepad", &["--disable-server"])
        .unwrap();
    wait_for_window(&mut desktop).await;
    let sim = SimServer::start(SimConfig::with_policy(|request: &Value| {
        if request["tool_choice"]["type"] == "none" {
            return Turn::text("Typed every line.");
        }
        let n = request["messages"].as_array().map_or(0, Vec::len) / 2;
        Turn::Blocks(vec![toolset_use(
            "computer",
            "type",
            json!({"text": format!("step {n}: the quick brown fox\n")}),
        )])
    }))
    .unwrap();
    let mut config = AnthropicConfig::new("sk-bench");
    config.base_url = sim.base_url();
    let boxed: Box<dyn Desktop> = Box::new(desktop);
    let computer = ComputerToolset::new(boxed, ComputerConfig::default()).unwrap();
    let mut runner = Runner::anthropic(
        AnthropicClient::new(config).unwrap(),
        AnthropicSettings::new("claude-opus-5"),
        Some(computer),
        Toolbox::default(),
        RunConfig {
            max_steps: STEPS + 1,
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let per_step: Arc<Mutex<BTreeMap<u32, StepBytes>>> = Arc::default();
    runner.set_ledger(Box::new(Both {
        sqlite: SqliteLedger::create(&dir.path().join("ledger.sqlite"), "bench").unwrap(),
        json_path: dir.path().join("checkpoint.json"),
        per_step: Arc::clone(&per_step),
    }));
    let start = Instant::now();
    let outcome = runner
        .run("Type a line per step.", &CancellationToken::new())
        .await
        .unwrap();
    let per_step = per_step.lock().unwrap();
    println!(
        "checkpoint ledger: {} steps with a 1280x800 screenshot each in {:.1} s ({:?})",
        outcome.steps,
        start.elapsed().as_secs_f64(),
        outcome.status
    );
    println!(
        "  per step (its saves summed): new blobs are the step's new content (its screenshot),"
    );
    println!(
        "  rows the checkpoint documents; write() is what SQLite wrote (pages, WAL, checkpoints)"
    );
    println!(
        "  {:>5} {:>6} {:>12} {:>8} {:>14} {:>14} {:>8}",
        "step", "saves", "new blobs", "rows", "SQLite write()", "whole JSON", "ratio"
    );
    let row = |label: String, b: &StepBytes| {
        println!(
            "  {:>5} {:>6} {:>10} B {:>6} B {:>12} B {:>12} B {:>7.1}x",
            label,
            b.saves,
            b.sqlite_blobs,
            b.sqlite_rows,
            b.sqlite_written,
            b.whole_json,
            b.whole_json as f64 / b.sqlite_written.max(1) as f64
        );
    };
    for step in [1, 10, 25, 50, 75, 100] {
        if let Some(b) = per_step.get(&step) {
            row(step.to_string(), b);
        }
    }
    let total = per_step
        .values()
        .fold(StepBytes::default(), |a, b| StepBytes {
            saves: a.saves + b.saves,
            sqlite_blobs: a.sqlite_blobs + b.sqlite_blobs,
            sqlite_rows: a.sqlite_rows + b.sqlite_rows,
            sqlite_written: a.sqlite_written + b.sqlite_written,
            whole_json: a.whole_json + b.whole_json,
        });
    row("all".to_owned(), &total);
    let db = std::fs::metadata(dir.path().join("ledger.sqlite")).map_or(0, |m| m.len());
    println!(
        "  ledger file after the run: {} KB (every checkpoint kept); the whole-JSON file keeps only the last",
        db / 1024
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(long_run());
}
