//! hands-fleet against a real private PostgreSQL (one cluster per test process: nextest runs
//! each test in a process of its own; each test has its own database in it).

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

use hands_fleet::cluster::{Durability, LocalCluster};
use hands_fleet::{
    Environment, EpisodeOutcome, EpisodeState, Fleet, PostgresLedger, Provider, SyncDb, Task,
};
use hands_runner::ledger::{
    CallRecord, CallState, Checkpoint, CheckpointStatus, Ledger, LedgerError, PendingTurn, RunEnd,
    RunIdentity,
};
use serde_json::{Value, json};

fn cluster() -> LocalCluster {
    LocalCluster::start(Durability::Unsynced).unwrap_or_else(|e| {
        panic!("a private PostgreSQL is needed ({e}); run scripts/install-system-deps.sh")
    })
}

fn task(n: usize) -> Task {
    Task {
        prompt: format!("task {n}"),
        provider: Provider::Anthropic,
        model: None,
        environment: Environment::Desktop,
        max_steps: Some(5),
        check: None,
    }
}

fn checkpoint(
    run_id: &str,
    revision: u64,
    conversation: Value,
    status: CheckpointStatus,
) -> Checkpoint {
    Checkpoint {
        identity: RunIdentity::new(run_id, "messages", "m", 20, &[json!({"name": "bash"})]),
        revision,
        steps_used: revision as u32,
        status,
        conversation,
    }
}

async fn count(url: &str, sql: &str) -> i64 {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client.query_one(sql, &[]).await.unwrap().get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ledger_keeps_every_revision_blobs_once_and_the_runs_end() {
    let pg = cluster();
    let url = pg.database("roundtrip").unwrap();
    let fleet = Fleet::connect(&url).await.unwrap();
    let ids = fleet.submit("b", &[task(1)]).await.unwrap();
    let claim = fleet
        .claim("w1", 1, Duration::from_secs(60))
        .await
        .unwrap()
        .remove(0);
    assert_eq!(
        (claim.episode, claim.epoch, claim.resume),
        (ids[0], 1, false)
    );
    let run_id = claim.episode.run_id();
    let image = "iVBOR".repeat(4000);
    let first = json!({"messages": [{"role": "user", "content": "go"}], "unanswered": false});
    let turn = PendingTurn {
        response_complete: true,
        calls: vec![CallRecord {
            call_id: "toolu_1".into(),
            name: "screenshot".into(),
            input: json!({}),
            state: CallState::Answered {
                answer: json!({"type": "tool_result", "content": [{"type": "image",
                    "source": {"data": image}}]}),
            },
        }],
    };
    let second = json!({"messages": [{"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1"}]}], "unanswered": true});
    let third = json!({"messages": [{"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1"}]},
        {"role": "user", "content": [{"type": "tool_result", "content": [{"type": "image",
            "source": {"data": image}}]}]}], "unanswered": false});
    let (url2, episode, epoch) = (url.clone(), claim.episode, claim.epoch);
    let run_id2 = run_id.clone();
    let (first2, second2, third2, turn2) =
        (first.clone(), second.clone(), third.clone(), turn.clone());
    tokio::task::spawn_blocking(move || {
        let db = SyncDb::connect(&url2).unwrap();
        let mut ledger = PostgresLedger::open(db.clone(), episode, epoch).unwrap();
        // A second writer of the same claim, opened before anything was saved (it believes
        // revision 1 is next): the database refuses its revision 1 at the end.
        let mut stale = PostgresLedger::open(db.clone(), episode, epoch).unwrap();
        assert_eq!(ledger.run_id(), run_id2);
        assert_eq!(ledger.latest_revision().unwrap(), 0);
        assert!(ledger.latest().unwrap().is_none());
        ledger
            .save(&checkpoint(
                &run_id2,
                1,
                first2.clone(),
                CheckpointStatus::Completed,
            ))
            .unwrap();
        ledger
            .save(&checkpoint(
                &run_id2,
                2,
                second2.clone(),
                CheckpointStatus::Pending(turn2.clone()),
            ))
            .unwrap();
        let latest = ledger.latest().unwrap().unwrap();
        assert_eq!(latest.conversation, second2);
        assert_eq!(latest.status, CheckpointStatus::Pending(turn2.clone()));
        assert_eq!(latest.revision, 2);
        assert_eq!(
            ledger.latest_completed().unwrap().unwrap().conversation,
            first2
        );
        // Out of order, or another run: refused, as by the SQLite ledger.
        assert!(matches!(
            ledger.save(&checkpoint(
                &run_id2,
                2,
                first2.clone(),
                CheckpointStatus::Completed
            )),
            Err(LedgerError::Refused(_))
        ));
        assert!(matches!(
            ledger.save(&checkpoint(
                "episode-999",
                3,
                first2.clone(),
                CheckpointStatus::Completed
            )),
            Err(LedgerError::Refused(_))
        ));
        // The end is recorded, and a later save clears it.
        ledger
            .record_end(&RunEnd::Stopped("paused".into()))
            .unwrap();
        assert_eq!(
            ledger.end().unwrap(),
            Some(RunEnd::Stopped("paused".into()))
        );
        ledger
            .save(&checkpoint(
                &run_id2,
                3,
                third2.clone(),
                CheckpointStatus::Completed,
            ))
            .unwrap();
        assert_eq!(ledger.end().unwrap(), None);
        ledger.record_end(&RunEnd::Finished).unwrap();
        drop(ledger);
        // A new writer (same claim) reads every revision back and goes on from the last.
        let mut reopened = PostgresLedger::open(db, episode, epoch).unwrap();
        assert_eq!(reopened.latest_revision().unwrap(), 3);
        assert_eq!(reopened.latest().unwrap().unwrap().conversation, third2);
        assert_eq!(
            reopened.latest_completed().unwrap().unwrap().conversation,
            third2
        );
        assert_eq!(reopened.end().unwrap(), Some(RunEnd::Finished));
        // The stale writer's revision 1 is refused as a whole: nothing of it is kept, and the
        // recorded end stays.
        let refused = stale
            .save(&checkpoint(
                &run_id2,
                1,
                json!({"m": ["y".repeat(5000)]}),
                CheckpointStatus::Completed,
            ))
            .unwrap_err();
        assert!(
            matches!(&refused, LedgerError::Refused(why) if why.contains("already saved")),
            "{refused:?}"
        );
        assert_eq!(reopened.end().unwrap(), Some(RunEnd::Finished));
        // A different identity is refused.
        let mut other = checkpoint(&run_id2, 4, third2, CheckpointStatus::Completed);
        other.identity = RunIdentity::new(
            &run_id2,
            "messages",
            "another-model",
            20,
            &[json!({"name": "bash"})],
        );
        assert!(matches!(
            reopened.save(&other),
            Err(LedgerError::Refused(_))
        ));
    })
    .await
    .unwrap();
    // The image (in the pending turn, and in the third checkpoint's conversation) is stored once.
    assert_eq!(
        count(
            &url,
            "SELECT COUNT(*) FROM hands_blobs WHERE length(data) >= 20000"
        )
        .await,
        1
    );
    assert_eq!(
        count(&url, "SELECT COUNT(*) FROM hands_checkpoints").await,
        3
    );
    assert_eq!(
        count(
            &url,
            "SELECT COUNT(*) FROM hands_blobs WHERE strpos(encode(data, 'escape'), 'yyyy') > 0"
        )
        .await,
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_lease_expired_is_fenced_once_another_claims() {
    let pg = cluster();
    let url = pg.database("fence").unwrap();
    let fleet = Fleet::connect(&url).await.unwrap();
    let ids = fleet.submit("b", &[task(1)]).await.unwrap();
    let ttl = Duration::from_millis(800);
    let a = fleet.claim("worker-a", 1, ttl).await.unwrap().remove(0);
    assert_eq!((a.episode, a.epoch), (ids[0], 1));
    // Nobody else can claim it while A's lease runs.
    assert!(fleet.claim("worker-b", 1, ttl).await.unwrap().is_empty());
    let run_id = a.episode.run_id();
    let url2 = url.clone();
    let (episode, epoch_a) = (a.episode, a.epoch);
    let mut ledger_a = tokio::task::spawn_blocking(move || {
        let mut ledger =
            PostgresLedger::open(SyncDb::connect(&url2).unwrap(), episode, epoch_a).unwrap();
        ledger
            .save(&checkpoint(
                &episode.run_id(),
                1,
                json!({"m": [1]}),
                CheckpointStatus::Completed,
            ))
            .unwrap();
        ledger
    })
    .await
    .unwrap();
    // A stalls past its lease; B claims with the next epoch, and A's heartbeat says it lost it.
    tokio::time::sleep(ttl + Duration::from_millis(300)).await;
    let b = fleet
        .claim("worker-b", 1, Duration::from_secs(60))
        .await
        .unwrap()
        .remove(0);
    assert_eq!((b.episode, b.epoch, b.resume), (a.episode, 2, true));
    assert_eq!(
        fleet.heartbeat(&[(a.episode, a.epoch)], ttl).await.unwrap(),
        vec![a.episode]
    );
    let url2 = url.clone();
    let run_id2 = run_id.clone();
    tokio::task::spawn_blocking(move || {
        let fenced = ledger_a.fenced_flag();
        let refused = ledger_a
            .save(&checkpoint(&run_id2, 2, json!({"m": [1, "a"]}), CheckpointStatus::Completed))
            .unwrap_err();
        assert!(
            matches!(&refused, LedgerError::Fenced { episode, epoch } if *episode == b.episode.to_string() && *epoch == 1),
            "{refused:?}"
        );
        assert!(refused.to_string().contains("another worker holds episode"), "{refused}");
        assert!(fenced.load(Ordering::SeqCst));
        assert!(matches!(ledger_a.record_end(&RunEnd::Finished), Err(LedgerError::Fenced { .. })));
        // B resumes from revision 1 and goes on.
        let mut ledger_b = PostgresLedger::open(SyncDb::connect(&url2).unwrap(), b.episode, b.epoch).unwrap();
        assert_eq!(ledger_b.latest_revision().unwrap(), 1);
        ledger_b
            .save(&checkpoint(&run_id2, 2, json!({"m": [1, "b"]}), CheckpointStatus::Completed))
            .unwrap();
        assert!(!ledger_b.fenced_flag().load(Ordering::SeqCst));
        // A, still stale, can write nothing after B's claim — not even the revision B
        // already wrote (the fence is checked before anything else).
        assert!(matches!(
            ledger_a.save(&checkpoint(&run_id2, 2, json!({"m": [1, "a", "late"]}), CheckpointStatus::Completed)),
            Err(LedgerError::Fenced { .. })
        ));
    })
    .await
    .unwrap();
    // A's finish is fenced too; B's lands.
    let outcome = EpisodeOutcome {
        state: EpisodeState::Finished,
        success: true,
        reason: None,
        steps: 2,
        input_tokens: 10,
        cached_tokens: 0,
        output_tokens: 5,
    };
    assert!(matches!(
        fleet.finish(a.episode, a.epoch, &outcome).await,
        Err(hands_fleet::FleetError::Fenced { .. })
    ));
    fleet.finish(b.episode, b.epoch, &outcome).await.unwrap();
    // Every checkpoint after B's claim is B's: A's only one is revision 1, before the claim.
    assert_eq!(
        count(
            &url,
            "SELECT COUNT(*) FROM hands_checkpoints WHERE epoch = 1"
        )
        .await,
        1
    );
    assert_eq!(
        count(
            &url,
            "SELECT COUNT(*) FROM hands_checkpoints c JOIN hands_episodes e ON e.id = c.episode
                     WHERE c.epoch < e.epoch AND c.saved_at >= e.claimed_at"
        )
        .await,
        0
    );
    let status = fleet.status(None).await.unwrap();
    assert_eq!(status.count(EpisodeState::Finished), 1);
    assert_eq!(status.succeeded, 1);
    assert_eq!(status.tokens, (10, 0, 5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_claims_never_give_one_episode_to_two_workers() {
    let pg = cluster();
    let url = pg.database("claims").unwrap();
    let fleet = Fleet::connect(&url).await.unwrap();
    let tasks: Vec<Task> = (0..60).map(task).collect();
    let ids = fleet.submit("b", &tasks).await.unwrap();
    assert_eq!(ids.len(), 60);
    // 50 claims of one slot at once, each on its own connection.
    let mut handles = Vec::new();
    for n in 0..50 {
        let url = url.clone();
        handles.push(tokio::spawn(async move {
            let fleet = Fleet::connect(&url).await.unwrap();
            fleet
                .claim(&format!("worker-{n}"), 1, Duration::from_secs(60))
                .await
                .unwrap()
        }));
    }
    let mut claimed = Vec::new();
    for handle in handles {
        claimed.extend(handle.await.unwrap());
    }
    let unique: HashSet<_> = claimed.iter().map(|c| c.episode).collect();
    assert_eq!(unique.len(), claimed.len(), "an episode was claimed twice");
    // SKIP LOCKED may skip a row locked by a claim that then took another; none is lost:
    // every claim got one, or the rows left are exactly the unclaimed ones.
    assert_eq!(claimed.len(), 50, "every claim found a free episode");
    assert!(claimed.iter().all(|c| c.epoch == 1));
    let status = fleet.status(Some("b")).await.unwrap();
    assert_eq!(status.count(EpisodeState::Running), 50);
    assert_eq!(status.count(EpisodeState::Queued), 10);
    // Bad tasks are refused with the line that was wrong.
    let err = Task::parse_jsonl("{\"prompt\":\"x\",\"environment\":{\"kind\":\"desktop\"}}\n{\"prompt\":\"\",\"environment\":{\"kind\":\"desktop\"}}").unwrap_err();
    assert!(
        err.to_string().starts_with("task 2: the prompt is empty"),
        "{err}"
    );
}

/// Issue 20, item 5: the primary killed (kill -9 of all its processes) and its synchronous
/// standby promoted; a fleet on both (`target_session_attrs=read-write`) connects again to the
/// new primary and finds every commit it was told of.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promoted_synchronous_standby_holds_every_acknowledged_commit() {
    let primary = cluster();
    primary.database("failover").unwrap();
    let standby = primary
        .start_standby(hands_fleet::cluster::Listen::SocketOnly)
        .unwrap();
    let url = format!(
        "host={},{} user=postgres dbname=failover connect_timeout=5 target_session_attrs=read-write",
        primary.socket_dir().display(),
        standby.socket_dir().display()
    );
    let fleet = Fleet::connect(&url).await.unwrap();
    let tasks: Vec<Task> = (0..50).map(task).collect();
    fleet.submit("failover", &tasks).await.unwrap();
    let claims = fleet.claim("w", 10, Duration::from_secs(60)).await.unwrap();
    assert_eq!(claims.len(), 10);
    primary.kill_hard().unwrap();
    standby.promote().unwrap();
    let mut status = None;
    for _ in 0..100 {
        match fleet.status(Some("failover")).await {
            Ok(s) => {
                status = Some(s);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    let status = status.expect("the fleet reached the promoted standby");
    assert_eq!(status.total(), 50);
    assert_eq!(status.count(EpisodeState::Running), 10);
    // It takes writes: the claims' leases are extended there.
    let held: Vec<_> = claims.iter().map(|c| (c.episode, c.epoch)).collect();
    let lost = fleet
        .heartbeat(&held, Duration::from_secs(60))
        .await
        .unwrap();
    assert!(lost.is_empty(), "{lost:?}");
}
