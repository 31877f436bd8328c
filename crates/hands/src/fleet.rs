//! `hands batch` and `hands worker`: many episodes on PostgreSQL (hands-fleet). `batch submit`
//! queues one episode per task of a `TASKS.jsonl`; `batch status` counts them; `worker` claims
//! episodes `--slots` at a time, heartbeats their leases, and runs each through `hands run`'s
//! own path ([`crate::run::run_with_ledger`]) with the episode's `PostgresLedger` — resuming
//! it when an earlier holder saved checkpoints. A worker that loses an episode's lease cancels
//! it, and its saves are refused by the fence: it never goes on acting on it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand, ValueEnum as _};
use hands_core::CancellationToken;
use hands_fleet::{
    Claim, Environment, EpisodeId, EpisodeOutcome, EpisodeState, Fleet, PostgresLedger, Provider,
    SyncDb, Task,
};
use hands_runner::{RunError, RunOutcome, RunStatus, UncertainCall};
use tokio::task::JoinSet;

use crate::cli::{ApproveArg, RunArgs, SandboxArgs};
use crate::run::ExternalLedger;

/// `hands batch`.
#[derive(Debug, Args)]
pub struct BatchArgs {
    #[command(subcommand)]
    pub action: BatchAction,
}

/// What `hands batch` does.
#[derive(Debug, Subcommand)]
pub enum BatchAction {
    /// Queue one episode per line of TASKS.jsonl: `{"prompt": …, "provider": "anthropic",
    /// "model": …, "environment": {"kind": "desktop"} | {"kind": "browser", "start_url": …,
    /// "allow_origin": […]} | {"kind": "remote_browser", "cdp_url": "ws://…", "relay":
    /// "ws://…", "start_url": …, "allow_origin": […]}, "max_steps": N, "check": "shell
    /// command"}`.
    Submit {
        /// The tasks, one JSON object per line.
        #[arg(value_name = "TASKS.jsonl")]
        tasks: PathBuf,
        /// The fleet's PostgreSQL (`postgres://USER@HOST/DB`, or `host=/socket/dir dbname=…`).
        #[arg(long, value_name = "URL")]
        ledger: String,
        /// The batch's name (default: the file's name).
        #[arg(long)]
        batch: Option<String>,
    },
    /// Episodes by state, success rate, tokens, and failures by reason.
    Status {
        /// The fleet's PostgreSQL.
        #[arg(long, value_name = "URL")]
        ledger: String,
        /// Only this batch.
        #[arg(long)]
        batch: Option<String>,
        /// Print JSON (for scripts).
        #[arg(long)]
        json: bool,
        /// Keep a progress line on the terminal, redrawn every second, until no episode is
        /// queued or running (`--json`: one JSON line each time instead).
        #[arg(long)]
        watch: bool,
    },
    /// Parked episodes: list each uncertain call (no other argument); record what a person
    /// found about one (`--episode N --call ID --happened|--not-happened`); or let a policy
    /// command decide every one (`--policy CMD`). An episode with no uncertain call left is
    /// queued again, and a worker resumes it. Taking an episode to reconcile moves its epoch
    /// on: its old holder can no longer save, and an environment that accepts only the current
    /// epoch (it reads it from the episode's `claim.json`: README, "Many episodes on many
    /// machines") refuses its late actions — reconcile only when that holds, or the old
    /// holder is known to be dead.
    Reconcile(ReconcileArgs),
}

/// `hands batch reconcile`.
#[derive(Debug, Args)]
pub struct ReconcileArgs {
    /// The fleet's PostgreSQL.
    #[arg(long, value_name = "URL")]
    pub ledger: String,
    /// Only this batch.
    #[arg(long)]
    pub batch: Option<String>,
    /// The episode of the call.
    #[arg(long, requires = "call", conflicts_with = "policy")]
    pub episode: Option<i64>,
    /// The call (as the listing shows it).
    #[arg(long, requires = "episode", conflicts_with = "policy")]
    pub call: Option<String>,
    /// It took effect.
    #[arg(long, requires = "call", conflicts_with = "not_happened")]
    pub happened: bool,
    /// It did not take effect.
    #[arg(long, requires = "call")]
    pub not_happened: bool,
    /// What was found, for the model.
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// A shell command run once per uncertain call of every parked episode, with
    /// HANDS_EPISODE, HANDS_EPOCH (the reconciler's), HANDS_CALL_ID, HANDS_CALL_NAME and
    /// HANDS_CALL_INPUT (JSON) in its environment: exit 0 = it happened, 1 = it did not, any
    /// other = leave it for a person. Its first line of output becomes the note.
    #[arg(long, value_name = "CMD")]
    pub policy: Option<String>,
}

/// `hands worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The fleet's PostgreSQL.
    #[arg(long, value_name = "URL")]
    pub ledger: String,
    /// Episodes run at once.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub slots: u32,
    /// How long a claim lasts without a heartbeat, in seconds (heartbeats go every third of
    /// it). Another worker takes an episode over once its lease has expired.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub lease: f64,
    /// Where the episodes' run directories go (`DIR/episode-<id>`: log and images).
    #[arg(long, value_name = "DIR", default_value = "runs/fleet")]
    pub dir: PathBuf,
    /// The worker's name in the database (default `<host>-<pid>`).
    #[arg(long)]
    pub name: Option<String>,
    /// Exit once no episode is queued or running (default: keep waiting for new ones).
    #[arg(long)]
    pub until_done: bool,
    /// Who approves consequential actions (nobody is at a worker's terminal): `all` (what the
    /// policies allow) or `none`.
    #[arg(long, value_enum, default_value_t = ApproveArg::All)]
    pub approve: ApproveArg,
    /// Where each episode's programs run.
    #[command(flatten)]
    pub isolation: SandboxArgs,
    /// Check the arguments, print the settings, and exit without connecting (for launchers'
    /// manifests: `hands worker <their arguments> --dry-run`).
    #[arg(long)]
    pub dry_run: bool,
}

impl WorkerArgs {
    /// `--name`, or `<host>-<pid>`.
    fn name_or_default(&self) -> String {
        self.name.clone().unwrap_or_else(|| default_name(""))
    }
}

/// `<prefix><host>-<pid>`.
pub(crate) fn default_name(prefix: &str) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "host".into());
    format!("{prefix}{host}-{}", std::process::id())
}

/// `hands batch …`.
pub async fn batch(args: BatchArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        BatchAction::Submit {
            tasks,
            ledger,
            batch,
        } => {
            let text = std::fs::read_to_string(&tasks)
                .with_context(|| format!("reading {}", tasks.display()))?;
            let parsed = Task::parse_jsonl(&text)?;
            anyhow::ensure!(!parsed.is_empty(), "{} holds no task", tasks.display());
            let batch = batch.unwrap_or_else(|| {
                tasks
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "batch".into())
            });
            let fleet = Fleet::connect(&ledger).await?;
            let ids = fleet.submit(&batch, &parsed).await?;
            println!(
                "submitted {} episode(s) to batch {batch} (ids {}–{}); run them with `hands worker --ledger …`",
                ids.len(),
                ids.first().map_or(0, |i| i.0),
                ids.last().map_or(0, |i| i.0)
            );
            Ok(ExitCode::SUCCESS)
        }
        BatchAction::Status {
            ledger,
            batch,
            json,
            watch,
        } => {
            let fleet = Fleet::connect(&ledger).await?;
            if watch {
                crate::fleet_reconcile::watch(&fleet, batch.as_deref(), json).await?;
            }
            let status = fleet.status(batch.as_deref()).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&status)?);
            } else {
                print!("{status}");
            }
            Ok(ExitCode::SUCCESS)
        }
        BatchAction::Reconcile(args) => crate::fleet_reconcile::reconcile(args).await,
    }
}

/// An episode being run by this worker.
struct Held {
    epoch: u64,
    cancel: CancellationToken,
}

/// `hands worker`.
pub async fn worker(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.approve != ApproveArg::Ask,
        "a worker has nobody at its terminal: give --approve all or --approve none"
    );
    anyhow::ensure!(
        args.lease.is_finite() && args.lease >= 0.5,
        "--lease must be at least 0.5 seconds"
    );
    let ttl = Duration::from_secs_f64(args.lease);
    if args.dry_run {
        println!(
            "hands worker: {} slot(s), lease {:.1} s, runs in {}, sandbox {}, approve {}",
            args.slots,
            ttl.as_secs_f64(),
            args.dir.display(),
            args.isolation
                .sandbox
                .to_possible_value()
                .map(|v| v.get_name().to_owned())
                .unwrap_or_default(),
            args.approve
                .to_possible_value()
                .map(|v| v.get_name().to_owned())
                .unwrap_or_default(),
        );
        return Ok(ExitCode::SUCCESS);
    }
    let fleet = Fleet::connect(&args.ledger).await?;
    let name = args.name_or_default();
    let args = Arc::new(args);
    eprintln!(
        "hands worker {name}: {} slot(s), lease {:.1} s, on {}",
        args.slots,
        ttl.as_secs_f64(),
        fleet.name()
    );
    let (run_done, mut runs_ended) = tokio::sync::mpsc::unbounded_channel();
    let worker = Worker {
        fleet: fleet.clone(),
        args: Arc::clone(&args),
        connections: Connections::default(),
        run_done,
    };
    let mut held: HashMap<EpisodeId, Held> = HashMap::new();
    // The held episodes whose run has not ended: each has its environment.
    let mut running: HashSet<EpisodeId> = HashSet::new();
    let mut episodes: JoinSet<EpisodeId> = JoinSet::new();
    let mut beat = tokio::time::interval(ttl / 3);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let free = args.slots.saturating_sub(running.len() as u32);
        if free > 0 {
            for (claim, phases) in claim_some(&fleet, &name, free, ttl).await {
                let cancel = CancellationToken::new();
                held.insert(
                    claim.episode,
                    Held {
                        epoch: claim.epoch,
                        cancel: cancel.clone(),
                    },
                );
                running.insert(claim.episode);
                episodes.spawn(episode(worker.clone(), claim, cancel, phases));
            }
        }
        if args.until_done && held.is_empty() {
            let status = fleet.status(None).await?;
            if status.count(EpisodeState::Queued) + status.count(EpisodeState::Running) == 0 {
                eprintln!("hands worker {name}: nothing left to run");
                return Ok(ExitCode::SUCCESS);
            }
        }
        tokio::select! {
            _ = beat.tick() => {
                let leases: Vec<(EpisodeId, u64)> =
                    held.iter().map(|(e, h)| (*e, h.epoch)).collect();
                match fleet.heartbeat(&leases, ttl).await {
                    Ok(lost) => {
                        for episode in lost {
                            if let Some(h) = held.get(&episode) {
                                eprintln!(
                                    "hands worker {name}: lost the lease of episode {episode}: stopping it"
                                );
                                h.cancel.cancel();
                            }
                        }
                    }
                    // The saves' fence still holds: a lease that lapses refuses them.
                    Err(e) => tracing::warn!("heartbeat failed: {e}"),
                }
            }
            Some(ended) = runs_ended.recv() => { running.remove(&ended); }
            Some(done) = episodes.join_next() => {
                match done {
                    Ok(episode) => {
                        // Its run's end was told before it ended: taken now, so a stale word
                        // cannot free the slot of the same episode claimed again.
                        while let Ok(ended) = runs_ended.try_recv() {
                            running.remove(&ended);
                        }
                        held.remove(&episode);
                        running.remove(&episode);
                    }
                    Err(e) => anyhow::bail!("an episode's task failed: {e}"),
                }
            }
            () = tokio::time::sleep(Duration::from_millis(500)) => {}
        }
    }
}

/// Claims up to `free` episodes for the worker `name`, each with its claim's time; none when
/// the database cannot be reached (a partition is waited out: the connection is made again on
/// the next call).
async fn claim_some(fleet: &Fleet, name: &str, free: u32, ttl: Duration) -> Vec<(Claim, Phases)> {
    let claiming = Instant::now();
    let claims = match fleet.claim(name, free, ttl).await {
        Ok(claims) => claims,
        Err(e) => {
            eprintln!("hands worker {name}: claiming: {e}");
            tokio::time::sleep(ttl / 3).await;
            Vec::new()
        }
    };
    let claim_ms = ms(claiming);
    claims
        .into_iter()
        .map(|claim| {
            eprintln!(
                "hands worker {name}: episode {} (epoch {}{})",
                claim.episode,
                claim.epoch,
                if claim.resume { ", resuming" } else { "" }
            );
            let phases = Phases {
                claim_ms,
                ..Phases::default()
            };
            (claim, phases)
        })
        .collect()
}

/// What a worker's episode tasks share.
#[derive(Clone)]
struct Worker {
    fleet: Fleet,
    args: Arc<WorkerArgs>,
    /// Ledger connections kept from one episode to the next.
    connections: Connections,
    /// Told when an episode's run has ended (its environment is gone): the worker claims the
    /// next episode while this one is judged and its end recorded (its lease still held).
    run_done: tokio::sync::mpsc::UnboundedSender<EpisodeId>,
}

/// The ledger connections a worker keeps between episodes: connecting (a server process, the
/// schema check, the save statement prepared) cost more than the rest of opening a ledger.
#[derive(Clone, Default)]
struct Connections(Arc<std::sync::Mutex<Vec<SyncDb>>>);

impl Connections {
    /// A kept connection that is still open, else a new one (blocks: call it off the runtime).
    fn take(&self, url: &str) -> anyhow::Result<SyncDb> {
        while let Some(db) = self.0.lock().ok().and_then(|mut kept| kept.pop()) {
            if !db.is_closed() {
                return Ok(db);
            }
        }
        Ok(SyncDb::connect(url)?)
    }

    /// Keeps `db` for the next episode, unless it has closed.
    fn give_back(&self, db: SyncDb) {
        if !db.is_closed()
            && let Ok(mut kept) = self.0.lock()
        {
            kept.push(db);
        }
    }
}

/// How long the parts of one episode took on its worker, in ms: the claim that took it,
/// opening its ledger (a
/// connection, the resume check, `claim.json`), the run (environment, model, actions, saves),
/// judging it (the task's check), and recording its end. Printed on stderr after each episode
/// (`hands worker: episode N phases {…}`): the fleet benchmark reads it.
#[derive(Debug, Default)]
struct Phases {
    claim_ms: f64,
    open_ms: f64,
    run_ms: f64,
    judge_ms: f64,
    finish_ms: f64,
}

impl Phases {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({"claim_ms": self.claim_ms, "open_ms": self.open_ms, "run_ms": self.run_ms,
            "judge_ms": self.judge_ms, "finish_ms": self.finish_ms})
    }
}

/// Milliseconds since `since`.
fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

/// Runs one claimed episode to its end, and records the end unless the episode was lost.
async fn episode(
    worker: Worker,
    claim: Claim,
    cancel: CancellationToken,
    mut phases: Phases,
) -> EpisodeId {
    let Worker { fleet, args, .. } = &worker;
    let id = claim.episode;
    let fenced = Arc::new(AtomicBool::new(false));
    let ran = run_episode(
        &worker,
        &claim,
        cancel.clone(),
        Arc::clone(&fenced),
        &mut phases,
    )
    .await;
    let _ = worker.run_done.send(id);
    if fenced.load(Ordering::SeqCst) || cancel.is_cancelled() {
        eprintln!("hands worker: episode {id} is no longer this worker's; its new holder goes on");
        return id;
    }
    if environment_failed(&ran) && claim.attempts < GIVE_BACK_ATTEMPTS_ENVIRONMENT {
        // Its desktop or browser did not start (Xvfb on a loaded machine, a remote browser
        // away): nothing acted under this claim, so it is tried again, by any worker.
        eprintln!(
            "hands worker: episode {id}: its environment did not start; giving it back to be tried again"
        );
        if let Err(e) = fleet.release(id, claim.epoch, EpisodeState::Queued).await {
            eprintln!("hands worker: episode {id}: {e}");
        }
        return id;
    }
    if ledger_failed(&ran) && claim.attempts < GIVE_BACK_ATTEMPTS {
        // The database went away mid-run (the save's connection died): the episode is not
        // over, it is given back and resumed (by the next claim, or once its lease lapses).
        eprintln!("hands worker: episode {id}: its ledger failed; giving it back to be resumed");
        if let Err(e) = fleet.release(id, claim.epoch, EpisodeState::Queued).await {
            eprintln!("hands worker: episode {id}: {e}");
        }
        return id;
    }
    let judging = Instant::now();
    let outcome = match ran {
        Ok((outcome, dir)) => judge(&claim.task, &outcome, &dir).await,
        // The run ended under an earlier holder that could not record the episode's end (it
        // died or lost its lease between the two): the episode ends as the run did.
        Err(e)
            if claim.resume
                && matches!(
                    e.downcast_ref::<RunError>(),
                    Some(RunError::NothingToResume(_))
                ) =>
        {
            let dir = args.dir.join(format!("episode-{id}"));
            match ended_before(&args.ledger, &claim, &dir).await {
                Ok(outcome) => outcome,
                Err(e) => failed(EpisodeState::Failed, short(&format!("{e:#}"))),
            }
        }
        Err(e) => {
            let (state, reason) = match e.downcast_ref::<RunError>() {
                Some(RunError::NeedsReconciliation(_)) => (
                    EpisodeState::Parked,
                    "needs reconciliation: a call's outcome is unknown".to_owned(),
                ),
                _ => (EpisodeState::Failed, short(&format!("{e:#}"))),
            };
            failed(state, reason)
        }
    };
    phases.judge_ms = ms(judging);
    let finishing = Instant::now();
    let finished = fleet.finish(id, claim.epoch, &outcome).await;
    phases.finish_ms = ms(finishing);
    eprintln!("hands worker: episode {id} phases {}", phases.json());
    match finished {
        Ok(()) => eprintln!(
            "hands worker: episode {id} {}{}",
            match outcome.state {
                EpisodeState::Parked => "parked",
                EpisodeState::Failed => "failed",
                _ => "finished",
            },
            outcome
                .reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ),
        Err(e) => eprintln!("hands worker: episode {id}: {e}"),
    }
    id
}

/// Whether the run stopped because its ledger failed (not fenced: the database or the
/// connection to it).
fn ledger_failed(ran: &anyhow::Result<(RunOutcome, PathBuf)>) -> bool {
    match ran {
        Ok((outcome, _)) => matches!(
            &outcome.status,
            RunStatus::Stopped(hands_runner::StopReason::LedgerFailed(_))
        ),
        Err(e) => {
            matches!(e.downcast_ref::<RunError>(), Some(RunError::Ledger(_)))
                || e.downcast_ref::<hands_fleet::FleetError>().is_some()
        }
    }
}

/// Claims after which an episode whose ledger keeps failing fails instead of being given back.
const GIVE_BACK_ATTEMPTS: u32 = 20;

/// Claims after which an episode whose environment keeps failing to start fails instead of
/// being given back.
const GIVE_BACK_ATTEMPTS_ENVIRONMENT: u32 = 3;

/// Whether the run failed before anything acted: its desktop or browser did not start.
fn environment_failed(ran: &anyhow::Result<(RunOutcome, PathBuf)>) -> bool {
    ran.as_ref()
        .err()
        .is_some_and(|e| e.downcast_ref::<crate::run::EnvironmentFailed>().is_some())
}

/// An episode that did not succeed, with why.
fn failed(state: EpisodeState, reason: String) -> EpisodeOutcome {
    EpisodeOutcome {
        state,
        success: false,
        reason: Some(reason),
        steps: 0,
        input_tokens: 0,
        cached_tokens: 0,
        output_tokens: 0,
    }
}

/// How the run of `claim`'s episode ended under an earlier holder, from its ledger: the end it
/// recorded (a finished run when it recorded none: its last checkpoint completed the run),
/// judged as [`judge`] does (the task's check runs in `dir`). Tokens are not kept by the
/// ledger: they count as 0.
async fn ended_before(url: &str, claim: &Claim, dir: &Path) -> anyhow::Result<EpisodeOutcome> {
    use hands_runner::ledger::RunEnd;
    let (url, episode, epoch) = (url.to_owned(), claim.episode, claim.epoch);
    let (end, steps) = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
        use hands_runner::ledger::Ledger as _;
        let mut ledger = PostgresLedger::open(SyncDb::connect(&url)?, episode, epoch)?;
        let steps = ledger.latest_completed()?.map_or(0, |c| c.steps_used);
        Ok((ledger.end()?, steps))
    })
    .await??;
    let mut outcome = match end {
        None | Some(RunEnd::Finished) => failed(EpisodeState::Finished, String::new()),
        Some(RunEnd::StepLimit) => {
            failed(EpisodeState::Finished, "reached its step limit".to_owned())
        }
        Some(RunEnd::Stopped(why)) => {
            failed(EpisodeState::Failed, short(&format!("stopped: {why}")))
        }
    };
    outcome.steps = steps;
    if outcome.reason.as_deref() == Some("") {
        outcome.reason = None;
        outcome.success = true;
        std::fs::create_dir_all(dir)?;
        if let Some(failed) = check_failure(&claim.task, dir).await {
            outcome.success = false;
            outcome.reason = Some(failed);
        }
    }
    Ok(outcome)
}

/// The first line of `text`, at most 200 characters: failures are grouped by it.
fn short(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(200)
        .collect()
}

/// Opens the episode's ledger and runs it through `hands run`'s path.
async fn run_episode(
    worker: &Worker,
    claim: &Claim,
    cancel: CancellationToken,
    fenced: Arc<AtomicBool>,
    phases: &mut Phases,
) -> anyhow::Result<(RunOutcome, PathBuf)> {
    let args = &*worker.args;
    let opening = Instant::now();
    let (url, connections) = (args.ledger.clone(), worker.connections.clone());
    let (episode, epoch) = (claim.episode, claim.epoch);
    let resume = claim.resume;
    let (db, ledger, uncertain) = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
        let db = connections.take(&url)?;
        let mut ledger = PostgresLedger::open(db.clone(), episode, epoch)?;
        let uncertain = if resume {
            uncertain_calls(&mut ledger)?
        } else {
            Vec::new()
        };
        Ok((db, ledger, uncertain))
    })
    .await??;
    // A call of the last turn may or may not have taken effect: the episode is parked before
    // its environment starts. Starting it would act on an environment whose state is in
    // question (a browser sent to the start URL), and a remote one may still be held by the
    // holder that stalled mid-call.
    if !uncertain.is_empty() {
        worker.connections.give_back(db);
        return Err(RunError::NeedsReconciliation(uncertain).into());
    }
    let flag = ledger.fenced_flag();
    let dir = args.dir.join(format!("episode-{episode}"));
    let claim_text = write_claim(&dir, claim, &args.name_or_default())?;
    let run_args = run_args(args, claim, &dir)?;
    phases.open_ms = ms(opening);
    let running = Instant::now();
    let result = crate::run::run_with_ledger(
        run_args,
        ExternalLedger {
            ledger: Box::new(ledger),
            resume: claim.resume,
            cancel,
            // Under the jail the run directory is not in it: the jail's home gets a copy.
            jail_file: Some((CLAIM_FILE.to_owned(), claim_text)),
        },
    )
    .await;
    phases.run_ms = ms(running);
    fenced.store(flag.load(Ordering::SeqCst), Ordering::SeqCst);
    let result = result.map(|outcome| (outcome, dir));
    // A connection whose ledger failed (the database away, a partition) is not kept.
    if !ledger_failed(&result) && !flag.load(Ordering::SeqCst) {
        worker.connections.give_back(db);
    }
    result
}

/// The calls of the ledger's last turn whose outcome nobody knows (what `hands batch
/// reconcile` lists).
fn uncertain_calls(ledger: &mut PostgresLedger) -> anyhow::Result<Vec<UncertainCall>> {
    use hands_runner::ledger::Ledger as _;
    Ok(ledger
        .latest()?
        .and_then(|c| {
            c.pending().map(|t| {
                t.uncertain()
                    .map(|c| UncertainCall {
                        call_id: c.call_id.clone(),
                        name: c.name.clone(),
                    })
                    .collect()
            })
        })
        .unwrap_or_default())
}

/// The file in an episode's run directory that says which claim its programs act under (the
/// bash tool's working directory under `--sandbox none`): an environment fenced by epoch is
/// given the epoch from it with each action.
pub const CLAIM_FILE: &str = "claim.json";

/// Writes [`CLAIM_FILE`] (`{"episode": N, "epoch": N, "worker": "…"}`), replacing it whole;
/// returns its text.
fn write_claim(dir: &Path, claim: &Claim, worker: &str) -> anyhow::Result<String> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let text = serde_json::json!({
        "episode": claim.episode.0, "epoch": claim.epoch, "worker": worker,
    })
    .to_string();
    let partial = dir.join(format!("{CLAIM_FILE}.partial"));
    std::fs::write(&partial, &text).with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, dir.join(CLAIM_FILE))
        .with_context(|| format!("writing {}/{CLAIM_FILE}", dir.display()))?;
    Ok(text)
}

/// `hands run`'s arguments for `task`, parsed as its command line would be (so every default
/// is the command's own).
fn run_args(args: &WorkerArgs, claim: &Claim, dir: &Path) -> anyhow::Result<RunArgs> {
    let task = &claim.task;
    #[derive(Parser)]
    struct RunCommand {
        #[command(flatten)]
        args: RunArgs,
    }
    let name = |v: Option<clap::builder::PossibleValue>| {
        v.map(|v| v.get_name().to_owned()).unwrap_or_default()
    };
    let mut argv: Vec<String> = vec![
        "hands-run".into(),
        "--task".into(),
        task.prompt.clone(),
        "--provider".into(),
        match task.provider {
            Provider::Anthropic => "anthropic".into(),
            Provider::Openai => "openai".into(),
        },
        "--approve".into(),
        name(args.approve.to_possible_value()),
        "--sandbox".into(),
        name(args.isolation.sandbox.to_possible_value()),
        "--out".into(),
        dir.display().to_string(),
    ];
    if let Some(model) = &task.model {
        argv.extend(["--model".into(), model.clone()]);
    }
    if let Some(steps) = task.max_steps {
        argv.extend(["--max-steps".into(), steps.to_string()]);
    }
    if let Some(workspace) = &args.isolation.workspace {
        argv.extend(["--workspace".into(), workspace.display().to_string()]);
        if args.isolation.workspace_bind {
            argv.push("--workspace-bind".into());
        }
    }
    match &task.environment {
        Environment::Desktop => argv.push("--desktop".into()),
        Environment::Browser(browser) => {
            argv.extend(["--browser".into(), browser.start_url.clone()]);
            for origin in &browser.allow_origin {
                argv.extend(["--allow-origin".into(), origin.clone()]);
            }
        }
        Environment::RemoteBrowser(remote) => {
            // Through the relay, the URL names this claim: once another claim is current, the
            // relay refuses what this worker still sends.
            let attach = match &remote.relay {
                Some(relay) => hands_fleet::relay::episode_url(relay, claim.episode, claim.epoch),
                None => remote.cdp_url.clone(),
            };
            argv.extend(["--browser".into(), remote.start_url.clone()]);
            argv.extend(["--attach".into(), attach]);
            for origin in &remote.allow_origin {
                argv.extend(["--allow-origin".into(), origin.clone()]);
            }
        }
    }
    Ok(RunCommand::try_parse_from(argv)
        .map_err(|e| anyhow::anyhow!("the task does not make a valid run: {e}"))?
        .args)
}

/// How long a task's check may run.
const CHECK_TIMEOUT: Duration = Duration::from_secs(120);

/// The episode's outcome: success when the model finished and the task's check (if any)
/// passed.
async fn judge(task: &Task, outcome: &RunOutcome, dir: &Path) -> EpisodeOutcome {
    let (state, mut success, mut reason) = match &outcome.status {
        RunStatus::Finished => (EpisodeState::Finished, true, None),
        RunStatus::StepLimit => (
            EpisodeState::Finished,
            false,
            Some("reached its step limit".to_owned()),
        ),
        RunStatus::Stopped(why) => (
            EpisodeState::Failed,
            false,
            Some(short(&format!("stopped: {why}"))),
        ),
    };
    if success && let Some(failed) = check_failure(task, dir).await {
        success = false;
        reason = Some(failed);
    }
    EpisodeOutcome {
        state,
        success,
        reason,
        steps: outcome.steps,
        input_tokens: outcome.usage.input_tokens,
        cached_tokens: outcome.usage.cache_read_input_tokens,
        output_tokens: outcome.usage.output_tokens,
    }
}

/// Why the task's check says it did not succeed (`None`: it passed, or the task has none).
async fn check_failure(task: &Task, dir: &Path) -> Option<String> {
    match run_check(task.check.as_deref()?, dir).await {
        Ok(true) => None,
        Ok(false) => Some("its check failed".into()),
        Err(e) => Some(short(&format!("its check could not run: {e:#}"))),
    }
}

/// Runs `check` with `sh -c` in the episode's run directory; true when it exits 0.
async fn run_check(check: &str, dir: &Path) -> anyhow::Result<bool> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(check)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("starting sh")?;
    match tokio::time::timeout(CHECK_TIMEOUT, child.wait()).await {
        Ok(status) => Ok(status?.success()),
        Err(_) => anyhow::bail!("it ran longer than {CHECK_TIMEOUT:?}"),
    }
}
