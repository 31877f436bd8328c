//! The runner surfaces: hands' [`Runner`] with the computer toolset (Claude) or the computer tool
//! (OpenAI) on the shared Xvfb, against the suite's scripted stand-in API at the case's base URL.
//! Which calls acted is read from the desktop's log, attributed to each call by the runner's own
//! diagnostics record of that call.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use hands_core::{CancellationToken, Desktop};
use hands_models::RetryPolicy;
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_models::openai::{OpenAiClient, OpenAiConfig};
use hands_runner::approval::{Approver, Decision, Effect, EffectKind, SafetyChecksContext};
use hands_runner::diagnostics::{Record, Stage};
use hands_runner::{
    AnthropicSettings, OpenAiSettings, RunConfig, RunOutcome, RunStatus, Runner, Toolbox,
};
use hands_toolset::computer::declaration::ToolsetDeclaration;
use hands_toolset::computer::members::Member;
use hands_toolset::computer::{ComputerConfig, ComputerToolset, Shape};
use hands_toolset::computer_call::{ComputerCallConfig, ComputerCallExecutor};
use serde_json::{Value, json};

use super::Env;
use super::record::{Log, RecordedDesktop};

/// The API key the stand-in expects (it checks none).
const KEY: &str = "difftest-key";

/// Case: `{"base_url", "max_steps", "declaration"?, "approve": {"checks", "deny"}, "task"}`.
pub async fn anthropic(env: &mut Env, case: &Value) -> anyhow::Result<Value> {
    let declaration = match case.get("declaration") {
        None | Some(Value::Null) => ToolsetDeclaration::new(),
        Some(entry) => match ToolsetDeclaration::from_json(entry) {
            Ok(declaration) => declaration,
            Err(e) => return Ok(json!({"config_error": e.to_string()})),
        },
    };
    let log = Log::default();
    let desktop: Box<dyn Desktop> = Box::new(RecordedDesktop::new(env.desktop()?, log.clone()));
    // As the SDK's toolset: `type`, `key` and `hold_key` run only on an explicit approval.
    let computer = ComputerToolset::new(
        desktop,
        ComputerConfig {
            shape: Shape::Toolset(declaration),
            confirm_members: Member::KEYBOARD.to_vec(),
            ..ComputerConfig::default()
        },
    )?;
    let mut config = AnthropicConfig::new(KEY);
    config.base_url = base_url(case)?;
    let client = AnthropicClient::new(config)?.with_retry_policy(no_retries());
    let runner = Runner::anthropic(
        client,
        AnthropicSettings::new("claude-opus-5"),
        Some(computer),
        Toolbox::default(),
        run_config(case),
    );
    drive(runner, case, log).await
}

/// Case: as [`anthropic`], with the computer tool.
pub async fn openai(env: &mut Env, case: &Value) -> anyhow::Result<Value> {
    let log = Log::default();
    let desktop: Box<dyn Desktop> = Box::new(RecordedDesktop::new(env.desktop()?, log.clone()));
    let executor = ComputerCallExecutor::new(desktop, ComputerCallConfig::default());
    let mut config = OpenAiConfig::new(KEY);
    // The OpenAI base URL ends in `/v1`; the client appends `/responses`.
    config.base_url = format!("{}/v1", base_url(case)?);
    let client = OpenAiClient::new(config)?.with_retry_policy(no_retries());
    let runner = Runner::openai(
        client,
        OpenAiSettings::new("computer-use-2"),
        Some(executor),
        Toolbox::default(),
        run_config(case),
    );
    drive(runner, case, log).await
}

async fn drive(mut runner: Runner, case: &Value, log: Log) -> anyhow::Result<Value> {
    let approve = &case["approve"];
    runner.set_approver(Box::new(CaseApprover {
        checks: approve["checks"].as_bool().unwrap_or(true),
        deny: approve["deny"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
    }));
    let acted = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&acted);
    let observer_log = log.clone();
    runner.set_observer(Box::new(move |record: &Record| {
        if record.stage == Stage::Action
            && let Some(id) = &record.call_id
            && !observer_log.take().is_empty()
        {
            seen.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(id.clone());
        }
    }));
    let task = case["task"].as_str().unwrap_or("Do the task.");
    let outcome = runner.run(task, &CancellationToken::new()).await;
    let closing = !log.take().is_empty();
    let acted = acted.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(match outcome {
        Err(e) => json!({"run_error": e.to_string(), "acted": acted}),
        Ok(outcome) => outcome_json(&outcome, acted, closing),
    })
}

fn outcome_json(outcome: &RunOutcome, acted: Vec<String>, closing: bool) -> Value {
    let (status, reason) = match &outcome.status {
        RunStatus::Finished => ("finished", String::new()),
        RunStatus::StepLimit => ("step_limit", String::new()),
        RunStatus::Stopped(reason) => ("stopped", reason.to_string()),
        #[allow(unreachable_patterns)]
        other => ("other", format!("{other:?}")),
    };
    json!({
        "status": status,
        "reason": reason,
        "steps": outcome.steps,
        "acted": acted,
        "closing_acted": closing,
        "executed": outcome.executed_call_ids,
        "final_text": outcome.final_text,
    })
}

fn base_url(case: &Value) -> anyhow::Result<String> {
    case["base_url"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow::anyhow!("a runner case needs base_url"))
}

fn run_config(case: &Value) -> RunConfig {
    RunConfig {
        max_steps: case["max_steps"]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(hands_runner::DEFAULT_MAX_STEPS),
    }
}

/// The stand-in answers every request once: a retry would replay the script out of order.
fn no_retries() -> RetryPolicy {
    RetryPolicy::disabled()
}

/// Approves safety checks when the case says so, and every action but those it names.
struct CaseApprover {
    checks: bool,
    deny: Vec<String>,
}

#[async_trait]
impl Approver for CaseApprover {
    async fn approve_safety_checks(
        &mut self,
        _: SafetyChecksContext,
        _: &CancellationToken,
    ) -> Decision {
        if self.checks {
            Decision::Approve
        } else {
            Decision::Deny
        }
    }

    fn reviews(&self, kind: EffectKind) -> bool {
        kind == EffectKind::Computer && !self.deny.is_empty()
    }

    async fn approve(&mut self, effect: Effect, _: &CancellationToken) -> Decision {
        if self.deny.iter().any(|name| name == effect.name()) {
            Decision::Deny
        } else {
            Decision::Approve
        }
    }
}
