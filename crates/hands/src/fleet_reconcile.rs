//! `hands batch reconcile` (parked episodes: their uncertain calls listed, decided by a person
//! or a policy command, the episode queued again) and `hands batch status --watch` (a progress
//! line until the batch is done).

use std::io::IsTerminal as _;
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use anyhow::Context as _;
use hands_fleet::{Claim, EpisodeId, EpisodeState, Fleet, FleetStatus, PostgresLedger, SyncDb};
use hands_runner::ledger::{CallRecord, Ledger as _, Verdict, reconcile as record};

use crate::fleet::ReconcileArgs;

/// How long a reconciler holds an episode it took (it gives it back at once when done).
const RECONCILE_LEASE: Duration = Duration::from_secs(120);

/// How a call is decided.
#[derive(Debug, Clone)]
enum Decider {
    /// One call, as a person said.
    One {
        call: String,
        verdict: Verdict,
        note: Option<String>,
    },
    /// Every uncertain call, by a shell command's exit status.
    Policy(String),
}

/// What reconciling one episode did.
#[derive(Debug, Default)]
struct Reconciled {
    decided: Vec<(String, Verdict)>,
    left: usize,
}

/// `hands batch reconcile`.
pub async fn reconcile(args: ReconcileArgs) -> anyhow::Result<ExitCode> {
    let fleet = Fleet::connect(&args.ledger).await?;
    let decider = match (&args.episode, &args.call, &args.policy) {
        (Some(_), Some(call), None) => {
            anyhow::ensure!(
                args.happened || args.not_happened,
                "say what was found: --happened or --not-happened"
            );
            Decider::One {
                call: call.clone(),
                verdict: if args.happened {
                    Verdict::Happened
                } else {
                    Verdict::DidNotHappen
                },
                note: args.note.clone(),
            }
        }
        (None, None, Some(policy)) => Decider::Policy(policy.clone()),
        _ => return list(&fleet, &args).await,
    };
    let episodes = match args.episode {
        Some(id) => vec![EpisodeId(id)],
        None => fleet.parked(args.batch.as_deref()).await?,
    };
    let who = crate::fleet::default_name("reconcile-");
    let mut requeued = 0;
    for episode in episodes {
        let Some(claim) = fleet.take_parked(episode, &who, RECONCILE_LEASE).await? else {
            anyhow::ensure!(
                args.episode.is_none(),
                "episode {episode} is not parked (`hands batch reconcile --ledger …` lists those that are)"
            );
            continue;
        };
        let (url, decider) = (args.ledger.clone(), decider.clone());
        let claim_in = claim.clone();
        let done =
            tokio::task::spawn_blocking(move || decide_episode(&url, &claim_in, &decider)).await?;
        let back = match &done {
            Ok(r) if r.left == 0 => EpisodeState::Queued,
            _ => EpisodeState::Parked,
        };
        fleet.release(episode, claim.epoch, back).await?;
        let done = done.with_context(|| format!("reconciling episode {episode}"))?;
        for (call, verdict) in &done.decided {
            println!(
                "episode {episode}: call {call} recorded as {}",
                match verdict {
                    Verdict::Happened => "having taken effect",
                    Verdict::DidNotHappen => "not having taken effect",
                }
            );
        }
        if back == EpisodeState::Queued {
            requeued += 1;
            println!("episode {episode}: queued again (a worker resumes it)");
        } else {
            println!(
                "episode {episode}: {} uncertain call(s) left, still parked",
                done.left
            );
        }
    }
    eprintln!("hands batch reconcile: {requeued} episode(s) queued again");
    Ok(ExitCode::SUCCESS)
}

/// The uncertain calls of `claim`'s episode, each decided by `decider` and recorded.
fn decide_episode(url: &str, claim: &Claim, decider: &Decider) -> anyhow::Result<Reconciled> {
    let mut ledger = PostgresLedger::open(SyncDb::connect(url)?, claim.episode, claim.epoch)?;
    let calls = uncertain_calls(&mut ledger)?;
    if let Decider::One { call, .. } = decider {
        anyhow::ensure!(
            calls.iter().any(|c| &c.call_id == call),
            "episode {} has no uncertain call {call}; its uncertain calls: {}",
            claim.episode,
            calls
                .iter()
                .map(|c| c.call_id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut done = Reconciled::default();
    for call in &calls {
        let decided = match decider {
            Decider::One {
                call: id,
                verdict,
                note,
            } => (id == &call.call_id).then(|| (*verdict, note.clone())),
            Decider::Policy(command) => run_policy(command, claim, call)?,
        };
        match decided {
            Some((verdict, note)) => {
                record(&mut ledger, &call.call_id, verdict, note)?;
                done.decided.push((call.call_id.clone(), verdict));
            }
            None => done.left += 1,
        }
    }
    Ok(done)
}

fn uncertain_calls(ledger: &mut PostgresLedger) -> anyhow::Result<Vec<CallRecord>> {
    Ok(ledger
        .latest()?
        .and_then(|c| c.pending().map(|t| t.uncertain().cloned().collect()))
        .unwrap_or_default())
}

/// Runs the policy for one call: `Some` verdict on exit 0 or 1, `None` otherwise.
fn run_policy(
    command: &str,
    claim: &Claim,
    call: &CallRecord,
) -> anyhow::Result<Option<(Verdict, Option<String>)>> {
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .env("HANDS_EPISODE", claim.episode.0.to_string())
        .env("HANDS_EPOCH", claim.epoch.to_string())
        .env("HANDS_CALL_ID", &call.call_id)
        .env("HANDS_CALL_NAME", &call.name)
        .env("HANDS_CALL_INPUT", call.input.to_string())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .context("running the --policy command with sh -c")?;
    let note = String::from_utf8_lossy(&output.stdout)
        .lines()
        .next()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned);
    Ok(match output.status.code() {
        Some(0) => Some((Verdict::Happened, note)),
        Some(1) => Some((Verdict::DidNotHappen, note)),
        _ => None,
    })
}

/// Lists the parked episodes and their uncertain calls.
async fn list(fleet: &Fleet, args: &ReconcileArgs) -> anyhow::Result<ExitCode> {
    let parked = fleet.parked(args.batch.as_deref()).await?;
    if parked.is_empty() {
        println!("no parked episode");
        return Ok(ExitCode::SUCCESS);
    }
    for episode in parked {
        let url = args.ledger.clone();
        let calls = tokio::task::spawn_blocking(move || {
            let mut ledger = PostgresLedger::open(SyncDb::connect(&url)?, episode, 0)?;
            uncertain_calls(&mut ledger)
        })
        .await??;
        println!("episode {episode}: {} uncertain call(s)", calls.len());
        for call in calls {
            println!(
                "  call {} ({}): {} — {}",
                call.call_id,
                call.name,
                call.state.label(),
                call.input
            );
        }
    }
    println!(
        "Check the environment, then: hands batch reconcile --ledger … --episode N --call ID --happened|--not-happened"
    );
    Ok(ExitCode::SUCCESS)
}

/// One line: done of total, by state, success rate.
fn progress_line(status: &FleetStatus) -> String {
    format!(
        "{} running, {} queued, {} parked, {} finished, {} failed; success {}",
        status.count(EpisodeState::Running),
        status.count(EpisodeState::Queued),
        status.count(EpisodeState::Parked),
        status.count(EpisodeState::Finished),
        status.count(EpisodeState::Failed),
        status
            .success_rate()
            .map_or("-".to_owned(), |r| format!("{:.1}%", r * 100.0))
    )
}

/// Redraws a progress bar (a terminal) or prints a line when the counts change (otherwise)
/// every second, until nothing is queued or running.
pub async fn watch(fleet: &Fleet, batch: Option<&str>, json: bool) -> anyhow::Result<()> {
    let terminal = std::io::stderr().is_terminal() && !json;
    let bar = indicatif::ProgressBar::new(0);
    if terminal {
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} done · {msg}")
                .context("the progress bar's template")?,
        );
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let mut last = String::new();
    loop {
        let status = fleet.status(batch).await?;
        let line = progress_line(&status);
        if terminal {
            bar.set_length(status.total());
            bar.set_position(status.done());
            bar.set_message(line.clone());
        } else if line != last {
            if json {
                println!("{}", serde_json::to_string(&status)?);
            } else {
                eprintln!("{}/{} done · {line}", status.done(), status.total());
            }
        }
        last = line;
        if status.count(EpisodeState::Queued) + status.count(EpisodeState::Running) == 0 {
            bar.finish();
            return Ok(());
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
