//! The latency of one checkpoint save, side by side in one run: `PostgresLedger::save` on a
//! private PostgreSQL with synchronous commits (fsync on), `SqliteLedger::save` (WAL,
//! `synchronous = FULL`) on the same disk, and the floor both stand on — one 8 KB write and
//! `fdatasync` of a file there. 1,000 saves of a growing run, each adding a turn with a distinct
//! 20 KB screenshot string (a new blob) and a small message, older screenshots dropped in
//! batches of 25 as the runner prunes them; every PostgreSQL save a fenced transaction. The
//! three are interleaved save by save (the disk's latency on a shared machine drifts: measured
//! one after the other they would not see the same disk). Prints p50, p99 and the maximum of
//! each; the goal is a PostgreSQL p99 of 10 ms or less. Then PostgreSQL with fsync off, to tell
//! the disk's share from the rest (encoding, the round trip, the statement). Prints the load
//! average too.
//!
//! Run with `cargo bench -p hands-fleet --bench save`.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark binary"
)]

use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::time::{Duration, Instant};

use hands_fleet::cluster::{Durability, LocalCluster};
use hands_fleet::{Environment, Fleet, PostgresLedger, Provider, SyncDb, Task};
use hands_runner::ledger::{Checkpoint, CheckpointStatus, Ledger, RunIdentity, SqliteLedger};
use serde_json::json;

const SAVES: usize = 1000;

fn main() {
    for durability in [Durability::Synced, Durability::Unsynced] {
        bench(durability);
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average: {}", load.trim());
}

/// p50, p99 and max of `took`, as a line.
fn line(what: &str, mut took: Vec<Duration>) -> String {
    took.sort();
    let at = |q: f64| took[((took.len() as f64 * q).ceil() as usize).min(took.len()) - 1];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!(
        "{what:<44} {} saves: p50 {:>6.2} ms, p99 {:>6.2} ms, max {:>6.2} ms",
        took.len(),
        ms(at(0.50)),
        ms(at(0.99)),
        ms(took[took.len() - 1])
    )
}

fn bench(durability: Durability) {
    let pg = LocalCluster::start(durability).unwrap();
    let url = pg.database("bench").unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let claim = runtime.block_on(async {
        let fleet = Fleet::connect(&url).await.unwrap();
        let task = Task {
            prompt: "bench".into(),
            provider: Provider::Anthropic,
            model: None,
            environment: Environment::Desktop,
            max_steps: None,
            check: None,
        };
        fleet.submit("bench", &[task]).await.unwrap();
        fleet
            .claim("bench", 1, Duration::from_secs(3600))
            .await
            .unwrap()
            .remove(0)
    });
    let mut ledger =
        PostgresLedger::open(SyncDb::connect(&url).unwrap(), claim.episode, claim.epoch).unwrap();
    // The SQLite ledger and the raw file in a temporary directory, as the cluster's.
    let local = tempfile::tempdir().unwrap();
    let synced = durability == Durability::Synced;
    let mut sqlite = synced.then(|| {
        SqliteLedger::create(&local.path().join("ledger.sqlite"), &claim.episode.run_id()).unwrap()
    });
    let raw = std::fs::File::create(local.path().join("raw")).unwrap();
    let page = vec![7u8; 8192];
    let (mut sqlite_took, mut raw_took) = (Vec::new(), Vec::new());
    let identity = RunIdentity::new(
        claim.episode.run_id(),
        "messages",
        "m",
        1000,
        &[json!({"name": "bash"})],
    );
    let mut messages = vec![json!({"role": "user", "content": "go"})];
    let mut took = Vec::with_capacity(SAVES);
    for n in 0..SAVES {
        messages.push(json!({"role": "assistant", "content": format!("step {n}")}));
        messages.push(json!({"role": "user", "content": [{"type": "image",
            "source": {"data": format!("{n:06}").repeat(3400)}}]}));
        // Screenshot history pruned as the runner does (the last 3 kept, the older dropped in
        // batches of 25): without it the conversation would carry every image.
        if n % 25 == 0 && messages.len() > 8 {
            let keep_from = messages.len() - 6;
            for message in &mut messages[1..keep_from] {
                if message["role"] == "user" {
                    *message = json!({"role": "user", "content": "[screenshot dropped]"});
                }
            }
        }
        let checkpoint = Checkpoint {
            identity: identity.clone(),
            revision: n as u64 + 1,
            steps_used: n as u32,
            status: CheckpointStatus::Completed,
            conversation: json!({"messages": messages, "unanswered": false}),
        };
        let start = Instant::now();
        ledger.save(&checkpoint).unwrap();
        took.push(start.elapsed());
        if let Some(sqlite) = &mut sqlite {
            let start = Instant::now();
            sqlite.save(&checkpoint).unwrap();
            sqlite_took.push(start.elapsed());
            let start = Instant::now();
            raw.write_all_at(&page, (n as u64 % 64) * 8192).unwrap();
            raw.sync_data().unwrap();
            raw_took.push(start.elapsed());
        }
    }
    let what = match durability {
        Durability::Synced => "PostgresLedger::save (fsync on)",
        Durability::Unsynced => "PostgresLedger::save (fsync off)",
    };
    println!("{} (goal: p99 <= 10 ms)", line(what, took));
    if synced {
        println!(
            "{}",
            line("SqliteLedger::save (WAL, synchronous FULL)", sqlite_took)
        );
        println!(
            "{}",
            line("8 KB write + fdatasync (the disk's floor)", raw_took)
        );
    }
    let _ = std::io::stdout().flush();
}
