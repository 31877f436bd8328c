//! The latency of one `PostgresLedger::save` on a private PostgreSQL with synchronous commits
//! (fsync on): 1,000 saves of a growing run, each adding a turn with a distinct 20 KB screenshot
//! string (a new blob) and a small message, older screenshots dropped in batches of 25 as the
//! runner prunes them; every save a fenced transaction. Prints p50, p99
//! and the maximum; the goal is a p99 of 10 ms or less. Then the same with fsync off, to tell
//! the disk's share from the rest (encoding, the connection thread, the statement).
//!
//! Run with `cargo bench -p hands-fleet --bench save`.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark binary"
)]

use std::time::{Duration, Instant};

use hands_fleet::cluster::{Durability, LocalCluster};
use hands_fleet::{DbThread, Environment, Fleet, PostgresLedger, Provider, Task};
use hands_runner::ledger::{Checkpoint, CheckpointStatus, Ledger, RunIdentity};
use serde_json::json;

const SAVES: usize = 1000;

fn main() {
    for durability in [Durability::Synced, Durability::Unsynced] {
        bench(durability);
    }
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
        PostgresLedger::open(DbThread::connect(&url).unwrap(), claim.episode, claim.epoch).unwrap();
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
    }
    took.sort();
    let at = |q: f64| took[((took.len() as f64 * q).ceil() as usize).min(took.len()) - 1];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "PostgresLedger::save, {SAVES} saves, {}: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (goal: p99 <= 10 ms)",
        match durability {
            Durability::Synced => "fsync on",
            Durability::Unsynced => "fsync off",
        },
        ms(at(0.50)),
        ms(at(0.99)),
        ms(took[took.len() - 1])
    );
}
