//! Approvals of computer actions: pending safety checks and the per-action `before_action` check.
//!
//! Only an explicit [`Decision::Approve`] approves. A callback that is missing where one is
//! required, that panics, or whose run is cancelled while it decides, denies. Neither the model's
//! choice nor a message it writes can grant approval: contexts are independent copies made by
//! the runner, and decisions come only from these callbacks.
//!
//! Spec: openai-browser-desktop-drivers, "Aprobar acciones y administrar la sesión";
//! claude-computer-use-tool, "Acciones por lotes" (check before each block runs).

use async_trait::async_trait;
use hands_core::CancellationToken;
use serde_json::Value;

/// An approval decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[must_use]
pub enum Decision {
    /// The action may run.
    Approve,
    /// It may not.
    Deny,
}

/// A safety check as the approver sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckView {
    /// The check's id.
    pub id: String,
    /// Its code (`malicious_instructions`, `irrelevant_domain`, …), when given.
    pub code: Option<String>,
    /// Its message, when given.
    pub message: Option<String>,
}

/// What `approve_safety_checks` receives: an independent copy of the call.
#[derive(Debug, Clone, PartialEq)]
pub struct SafetyChecksContext {
    /// The computer call.
    pub call_id: String,
    /// The pending checks (possibly empty when a modern call omitted them).
    pub checks: Vec<CheckView>,
    /// The call's actions as the model sent them.
    pub actions: Vec<Value>,
}

/// What `before_action` receives: one action, just before it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionContext {
    /// The computer call or `tool_use` id.
    pub call_id: String,
    /// The position of the action in its call or batch.
    pub index: usize,
    /// The action's name (`click`, `left_click`, `screenshot` …).
    pub name: String,
    /// The action as the model sent it (a copy: changing it changes nothing).
    pub action: Value,
    /// True for the screenshot the runner takes after the call's actions.
    pub final_screenshot: bool,
}

/// Approves computer actions. `before_action` is optional (the default approves); when a runner
/// is given an approver whose `checks_before_action` is true, every action needs its approval,
/// the final screenshot included.
#[async_trait]
pub trait ComputerApprover: Send {
    /// Approves the pending safety checks of a call before any of its actions run.
    async fn approve_safety_checks(
        &mut self,
        context: SafetyChecksContext,
        cancel: &CancellationToken,
    ) -> Decision;

    /// Whether [`ComputerApprover::before_action`] is to be consulted.
    fn checks_before_action(&self) -> bool {
        false
    }

    /// Approves one action immediately before it runs.
    async fn before_action(
        &mut self,
        context: ActionContext,
        cancel: &CancellationToken,
    ) -> Decision {
        let _ = (context, cancel);
        Decision::Approve
    }
}

/// Approves everything (for scripts and drills: the policies that apply still apply).
#[derive(Debug, Clone, Copy, Default)]
pub struct ApproveAll;

#[async_trait]
impl ComputerApprover for ApproveAll {
    async fn approve_safety_checks(
        &mut self,
        _: SafetyChecksContext,
        _: &CancellationToken,
    ) -> Decision {
        Decision::Approve
    }
}

/// Refuses every safety check and every action.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAll;

#[async_trait]
impl ComputerApprover for DenyAll {
    async fn approve_safety_checks(
        &mut self,
        _: SafetyChecksContext,
        _: &CancellationToken,
    ) -> Decision {
        Decision::Deny
    }

    fn checks_before_action(&self) -> bool {
        true
    }

    async fn before_action(&mut self, _: ActionContext, _: &CancellationToken) -> Decision {
        Decision::Deny
    }
}

/// Asks an approver, treating cancellation during the decision as a denial.
pub(crate) async fn decide<F>(decision: F, cancel: &CancellationToken) -> Decision
where
    F: std::future::Future<Output = Decision>,
{
    tokio::select! {
        d = decision => d,
        () = cancel.cancelled() => Decision::Deny,
    }
}
