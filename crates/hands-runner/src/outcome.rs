//! How a run ends, and the errors that refuse to start one.

use crate::diagnostics::UsageTotals;

/// Why a run stopped before the model finished.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StopReason {
    /// The caller cancelled the run.
    #[error("the run was cancelled")]
    Cancelled,
    /// A model request failed after its retries.
    #[error("the model API request failed: {0}")]
    Api(String),
    /// A driver broke (the display or the browser is gone).
    #[error("a driver failed: {0}")]
    DriverFault(String),
    /// Pending safety checks were not approved (or no approver was given).
    #[error("the safety checks of computer call {call_id} were not approved")]
    SafetyChecksDenied {
        /// The call.
        call_id: String,
    },
    /// `before_action` refused an action of a computer call.
    #[error("`{action}` of computer call {call_id} was refused before it ran")]
    ActionRefused {
        /// The call.
        call_id: String,
        /// The action type.
        action: String,
    },
    /// A computer call the driver cannot honour, or an action that failed.
    #[error("computer call {call_id} failed: {why}")]
    ComputerCallFailed {
        /// The call.
        call_id: String,
        /// What went wrong.
        why: String,
    },
    /// An ordinary function got invalid arguments (it did not run).
    #[error("function `{name}` got invalid arguments: {why}")]
    InvalidFunctionArguments {
        /// The function.
        name: String,
        /// What was wrong.
        why: String,
    },
    /// An ordinary function failed (it is not run again).
    #[error("function `{name}` failed: {why}")]
    FunctionFailed {
        /// The function.
        name: String,
        /// What went wrong.
        why: String,
    },
    /// The browser toolset reported an invalid state or result, or could not report state.
    #[error("the browser toolset stopped the run: {0}")]
    BrowserFault(String),
    /// A server tool's result failed or is incomplete: no local action ran in that turn.
    #[error("a server tool result failed or is incomplete: {0}")]
    ServerToolFailed(String),
    /// A checkpoint could not be saved: the run could not be resumed safely.
    #[error("the checkpoint ledger failed: {0}")]
    LedgerFailed(String),
    /// The model answered with something the runner cannot pair or execute.
    #[error("the model's answer cannot be executed: {0}")]
    InvalidResponse(String),
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunStatus {
    /// The model answered without calling a tool.
    Finished,
    /// The step limit was reached; the last allowed request started no new effect.
    StepLimit,
    /// The run stopped.
    Stopped(StopReason),
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    /// How it ended.
    pub status: RunStatus,
    /// Requests sent (steps used).
    pub steps: u32,
    /// The model's last text.
    pub final_text: String,
    /// Usage summed over completed requests.
    pub usage: UsageTotals,
    /// Tool calls executed (attempted), in order.
    pub executed_call_ids: Vec<String>,
}

impl RunOutcome {
    /// Whether the model finished.
    pub fn finished(&self) -> bool {
        self.status == RunStatus::Finished
    }
}

/// Why a run could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// Another run is active on this runner.
    #[error("this runner is busy with another run: give each run its own runner")]
    Busy,
    /// A `tool_choice` that forces a local tool on every request: the run could never end.
    #[error(
        "tool_choice {0} forces a local tool on every request, so the run could never finish: use auto"
    )]
    ForcedLocalToolChoice(String),
    /// The tools would be rejected by the API.
    #[error("invalid tools: {0}")]
    InvalidTools(String),
    /// Nothing to run with.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The run resuming is not the run its ledger holds.
    #[error("this run cannot resume: {}", join(.0))]
    IdentityChanged(Vec<crate::ledger::IdentityChange>),
    /// Calls of the last turn may or may not have taken effect: a person must reconcile each
    /// with what really happened before the run resumes; none is repeated.
    #[error(
        "this run cannot resume yet: {} may or may not have taken effect; check what really happened and reconcile each call first (it is never repeated)",
        join(.0)
    )]
    NeedsReconciliation(Vec<UncertainCall>),
    /// The ledger failed, or holds what this run cannot resume.
    #[error("the ledger: {0}")]
    Ledger(String),
    /// The run has nothing left to resume (it finished, or used all its requests).
    #[error("nothing to resume: {0}")]
    NothingToResume(String),
}

/// A call whose outcome nobody knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UncertainCall {
    /// Its id.
    pub call_id: String,
    /// Its tool or member.
    pub name: String,
}

impl std::fmt::Display for UncertainCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "call {} ({})", self.call_id, self.name)
    }
}

fn join<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}
