//! `hands view RUN_DIR` (a finished run in a local web page) and the live view of
//! `hands run --view`: the run directory's journal also wakes the page, and the runner's
//! approvals are asked on the page.
//!
//! The approvals adapter is thin on purpose: [`ViewApprover`] turns today's approval traits
//! (`hands_runner::approval::ComputerApprover`, the browser toolset's `Confirm`) into
//! [`hands_view::Live::ask`]; when approvals cover more kinds of effect, only this file changes.

use std::process::ExitCode;

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_runner::approval::{ActionContext, ComputerApprover, Decision, SafetyChecksContext};
use hands_runner::journal::{Entry, Journal};
use hands_toolset::browser::consent::{Approval, CallbackError, Confirm, ConfirmContext};
use hands_view::Live;
use serde_json::json;

use crate::cli::ViewArgs;
use crate::rundir::RunDir;

/// `hands view RUN_DIR`: serves the page until Ctrl-C.
pub async fn run(args: ViewArgs) -> anyhow::Result<ExitCode> {
    let view = hands_view::serve(&args.run_dir, args.addr, None).await?;
    eprintln!(
        "hands view: {} at {}\n(open it in a browser on this machine; Ctrl-C stops)",
        args.run_dir.display(),
        view.url()
    );
    tokio::signal::ctrl_c().await?;
    view.stop();
    Ok(ExitCode::SUCCESS)
}

/// A live view of a running run.
pub struct LiveView {
    /// The approvals and the change counter; the page is served until the process ends.
    pub live: Live,
}

impl LiveView {
    /// Serves the run directory `dir` live on a loopback port and says where.
    pub async fn start(dir: &std::path::Path) -> anyhow::Result<LiveView> {
        let live = Live::default();
        let view = hands_view::serve(dir, "127.0.0.1:0".parse()?, Some(live.clone())).await?;
        eprintln!(
            "hands run: watch the run and approve its actions at {}",
            view.url()
        );
        Ok(LiveView { live })
    }

    /// The approver that asks on the page.
    pub fn approver(&self) -> ViewApprover {
        ViewApprover {
            live: self.live.clone(),
        }
    }

    /// The run directory's journal, waking the page after each entry.
    pub fn journal(&self, rundir: RunDir) -> ViewJournal {
        ViewJournal {
            rundir,
            live: self.live.clone(),
        }
    }
}

/// Writes the run directory and tells the page.
pub struct ViewJournal {
    rundir: RunDir,
    live: Live,
}

impl Journal for ViewJournal {
    fn record(&mut self, entry: Entry<'_>) {
        self.rundir.record(entry);
        self.live.bump();
    }
}

/// Asks the person on the page.
#[derive(Clone)]
pub struct ViewApprover {
    live: Live,
}

/// Computer actions that only look (the same list `hands run`'s terminal approver uses).
const OBSERVATIONS: [&str; 4] = ["screenshot", "zoom", "cursor_position", "wait"];

#[async_trait]
impl ComputerApprover for ViewApprover {
    async fn approve_safety_checks(
        &mut self,
        context: SafetyChecksContext,
        cancel: &CancellationToken,
    ) -> Decision {
        let checks: Vec<String> = context
            .checks
            .iter()
            .map(|c| format!("{}: {}", c.id, c.message.as_deref().unwrap_or("")))
            .collect();
        let question = format!(
            "The model's provider flagged computer call {}: {}",
            context.call_id,
            checks.join("; ")
        );
        let detail = json!({"call_id": context.call_id, "actions": context.actions});
        decision(self.live.ask(question, detail, cancel).await)
    }

    fn checks_before_action(&self) -> bool {
        true
    }

    async fn before_action(
        &mut self,
        context: ActionContext,
        cancel: &CancellationToken,
    ) -> Decision {
        if context.final_screenshot || OBSERVATIONS.contains(&context.name.as_str()) {
            return Decision::Approve;
        }
        let question = format!("Computer action `{}`", context.name);
        let detail = json!({"call_id": context.call_id, "action": context.action});
        decision(self.live.ask(question, detail, cancel).await)
    }
}

fn decision(approved: bool) -> Decision {
    if approved {
        Decision::Approve
    } else {
        Decision::Deny
    }
}

#[async_trait]
impl Confirm for ViewApprover {
    async fn confirm(
        &self,
        context: ConfirmContext,
        cancel: CancellationToken,
    ) -> Result<Approval, CallbackError> {
        let question = format!("Browser `{}`", context.member);
        let detail = json!({"call_id": context.call_id, "arguments": context.arguments});
        Ok(if self.live.ask(question, detail, &cancel).await {
            Approval::Approve
        } else {
            Approval::Deny
        })
    }
}
