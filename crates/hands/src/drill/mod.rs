//! `hands drill`: the offline exercises. A deterministic built-in policy, served by the simulated
//! model API (a real HTTP server on 127.0.0.1 that rejects what the real APIs reject), drives the
//! real runner, the real toolsets and a real desktop or browser through a task; then the drill
//! verifies the result itself — the file on disk, the booking in the app's database — never the
//! policy's claim. It prints what it verified and fails loudly when it does not hold.

pub mod browser;
pub mod browser_policy;
pub mod desktop;
pub mod desktop_policy;

use std::time::Duration;

use hands_models::RetryPolicy;
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_models::openai::{OpenAiClient, OpenAiConfig};
use hands_runner::diagnostics::{Record, Stage};
use hands_runner::{RunOutcome, RunStatus};
use hands_sim::SimServer;

use crate::cli::{DrillArgs, DrillKind, ProviderArg};

/// Runs the drills asked for; exit status 0 only when every check of every drill held.
pub async fn run(args: DrillArgs) -> anyhow::Result<std::process::ExitCode> {
    let mut passed = true;
    let both = [ProviderArg::Anthropic, ProviderArg::Openai];
    let (desktops, browsers): (&[ProviderArg], &[ProviderArg]) = match args.which {
        DrillKind::All => (&both, &both),
        DrillKind::Desktop => (std::slice::from_ref(&args.provider), &[]),
        DrillKind::Browser => (&[], std::slice::from_ref(&args.provider)),
    };
    for provider in desktops {
        passed &= desktop::run(*provider, &args.isolation).await?;
    }
    for provider in browsers {
        passed &= browser::run(*provider, &args.isolation).await?;
    }
    Ok(if passed {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    })
}

/// The key the drills send: the simulated API wants one, as the real one does.
pub const DRILL_API_KEY: &str = "sk-hands-drill-offline";

/// Retries as a live run would have them, with short waits (the simulated API answers at once).
fn drill_retries() -> RetryPolicy {
    RetryPolicy {
        base_delay: Duration::from_millis(50),
        max_delay: Duration::from_millis(500),
        max_retry_after: Duration::from_secs(2),
        ..RetryPolicy::DEFAULT
    }
}

/// A Messages client pointed at the simulated API.
pub fn anthropic_client(sim: &SimServer) -> anyhow::Result<AnthropicClient> {
    let mut config = AnthropicConfig::new(DRILL_API_KEY);
    config.base_url = sim.base_url();
    Ok(AnthropicClient::new(config)?.with_retry_policy(drill_retries()))
}

/// A Responses client pointed at the simulated API.
pub fn openai_client(sim: &SimServer) -> anyhow::Result<OpenAiClient> {
    let mut config = OpenAiConfig::new(DRILL_API_KEY);
    config.base_url = sim.openai_base_url();
    Ok(OpenAiClient::new(config)?.with_retry_policy(drill_retries()))
}

/// Prints one line per request and per action while a drill runs.
pub fn progress_printer(provider: ProviderArg) -> hands_runner::diagnostics::Observer {
    let api = match provider {
        ProviderArg::Anthropic => "messages",
        ProviderArg::Openai => "responses",
    };
    Box::new(move |record: &Record| match record.stage {
        Stage::Request => eprintln!(
            "  {api} request: {:?} in {:.0} ms ({} attempt{})",
            record.reason,
            record.duration.as_secs_f64() * 1e3,
            record.attempts,
            if record.attempts == 1 { "" } else { "s" }
        ),
        Stage::Action => eprintln!(
            "    {} {}: {:?} in {:.0} ms",
            record.member.as_deref().unwrap_or("?"),
            record.call_id.as_deref().unwrap_or(""),
            record.reason,
            record.duration.as_secs_f64() * 1e3
        ),
        _ => {}
    })
}

/// The outcome in one line.
pub fn describe(outcome: &RunOutcome) -> String {
    let status = match &outcome.status {
        RunStatus::Finished => "finished".to_owned(),
        RunStatus::StepLimit => "hit the step limit".to_owned(),
        RunStatus::Stopped(why) => format!("stopped: {why}"),
    };
    format!(
        "the run {status} after {} request(s), {} tool call(s); {} input / {} output tokens{}",
        outcome.steps,
        outcome.executed_call_ids.len(),
        outcome.usage.input_tokens,
        outcome.usage.output_tokens,
        if outcome.usage.incomplete {
            " (incomplete)"
        } else {
            ""
        }
    )
}

/// Runs the drill's task with progress lines, and starts its verdicts with what every drill
/// checks: the model finished, and every request followed the API's rules.
pub async fn run_and_check(
    mut runner: hands_runner::Runner,
    provider: ProviderArg,
    prompt: &str,
    sim: &SimServer,
) -> anyhow::Result<(RunOutcome, Verdicts)> {
    runner.set_observer(progress_printer(provider));
    let outcome = runner
        .run(prompt, &hands_core::CancellationToken::new())
        .await?;
    eprintln!("  {}", describe(&outcome));
    let mut verdicts = Verdicts::default();
    verdicts.check(
        outcome.status == RunStatus::Finished,
        format!("the model finished ({:?})", outcome.status),
    );
    let violations = sim.violations();
    verdicts.check(
        violations.is_empty(),
        format!(
            "every request followed the API's rules ({} request(s), {} rejected)",
            sim.requests().len(),
            violations.len()
        ),
    );
    Ok((outcome, verdicts))
}

/// What a drill checked: each line passed or failed.
#[derive(Debug, Default)]
pub struct Verdicts {
    lines: Vec<(bool, String)>,
}

impl Verdicts {
    /// Records one check.
    pub fn check(&mut self, ok: bool, what: impl Into<String>) {
        self.lines.push((ok, what.into()));
    }

    /// Prints them; true when all passed.
    pub fn report(&self) -> bool {
        for (ok, what) in &self.lines {
            eprintln!("  [{}] {what}", if *ok { "ok" } else { "FAILED" });
        }
        self.lines.iter().all(|(ok, _)| *ok)
    }
}
