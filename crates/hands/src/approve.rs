//! Approvals for `hands run`: ask a person on the terminal, approve everything the policies
//! allow (for scripts), or refuse every consequential action. One type answers both the
//! computer's safety checks and actions and the browser toolset's `confirm`.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::sync::Arc;

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_runner::approval::{ActionContext, ComputerApprover, Decision, SafetyChecksContext};
use hands_toolset::browser::consent::{Approval, CallbackError, Confirm, ConfirmContext};
use tokio::sync::Mutex;

use crate::cli::ApproveArg;

/// How a run's approvals are decided.
#[derive(Clone)]
pub struct Approver {
    mode: ApproveArg,
    /// One question at a time on the terminal.
    terminal: Arc<Mutex<()>>,
}

impl Approver {
    /// An approver; `ask` without a terminal on stdin refuses (nobody can answer).
    pub fn new(mode: ApproveArg) -> Approver {
        let mode = if mode == ApproveArg::Ask && !std::io::stdin().is_terminal() {
            eprintln!("hands: stdin is not a terminal, so nobody can approve: --approve none");
            ApproveArg::None
        } else {
            mode
        };
        Approver {
            mode,
            terminal: Arc::new(Mutex::new(())),
        }
    }

    /// Asks `question` (the answer must be `y` or `yes`), unless the mode decides alone.
    async fn decide(&self, question: String, cancel: &CancellationToken) -> bool {
        match self.mode {
            ApproveArg::All => true,
            ApproveArg::None => false,
            ApproveArg::Ask => {
                let _one_at_a_time = self.terminal.lock().await;
                let ask = tokio::task::spawn_blocking(move || {
                    eprint!("\n{question}\nApprove? [y/N] ");
                    let _ = std::io::stderr().flush();
                    let mut line = String::new();
                    std::io::stdin().lock().read_line(&mut line).ok()?;
                    Some(matches!(
                        line.trim().to_ascii_lowercase().as_str(),
                        "y" | "yes"
                    ))
                });
                tokio::select! {
                    answer = ask => matches!(answer, Ok(Some(true))),
                    () = cancel.cancelled() => false,
                }
            }
        }
    }
}

fn short(value: &serde_json::Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 300 {
        format!("{}…", text.chars().take(300).collect::<String>())
    } else {
        text
    }
}

#[async_trait]
impl ComputerApprover for Approver {
    async fn approve_safety_checks(
        &mut self,
        context: SafetyChecksContext,
        cancel: &CancellationToken,
    ) -> Decision {
        let checks: Vec<String> = context
            .checks
            .iter()
            .map(|c| {
                format!(
                    "  - {} ({}): {}",
                    c.id,
                    c.code.as_deref().unwrap_or("?"),
                    c.message.as_deref().unwrap_or("")
                )
            })
            .collect();
        let question = format!(
            "The model's provider flagged computer call {}:\n{}\nIts actions: {}",
            context.call_id,
            checks.join("\n"),
            short(&serde_json::Value::Array(context.actions))
        );
        if self.decide(question, cancel).await {
            Decision::Approve
        } else {
            Decision::Deny
        }
    }

    fn checks_before_action(&self) -> bool {
        self.mode != ApproveArg::All
    }

    async fn before_action(
        &mut self,
        context: ActionContext,
        cancel: &CancellationToken,
    ) -> Decision {
        // Looking changes nothing: screenshots, zooms, the cursor position and waits need no one.
        if context.final_screenshot || OBSERVATIONS.contains(&context.name.as_str()) {
            return Decision::Approve;
        }
        let question = format!(
            "Computer action `{}`: {}",
            context.name,
            short(&context.action)
        );
        if self.decide(question, cancel).await {
            Decision::Approve
        } else {
            Decision::Deny
        }
    }
}

/// Computer actions that only observe.
const OBSERVATIONS: [&str; 4] = ["screenshot", "zoom", "cursor_position", "wait"];

#[async_trait]
impl Confirm for Approver {
    async fn confirm(
        &self,
        context: ConfirmContext,
        cancel: CancellationToken,
    ) -> Result<Approval, CallbackError> {
        let question = format!(
            "Browser `{}` ({}): {}",
            context.member,
            context.call_id,
            short(&context.arguments)
        );
        Ok(if self.decide(question, &cancel).await {
            Approval::Approve
        } else {
            Approval::Deny
        })
    }
}
