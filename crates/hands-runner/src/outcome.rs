//! How a run ends, and the errors that refuse to start one.

use std::fmt;

use crate::diagnostics::UsageTotals;

/// How the model's API said its last answer ended: the Messages API's `stop_reason`, or the
/// Responses API's `status` with `incomplete_details.reason`. Values the API may add later are
/// kept as sent (bounded, see [`ApiStop::messages`]).
///
/// Spec: api-contracts A ("`stop_reason` ∈ …") and B ("Response object").
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApiStop {
    /// Messages API: `stop_reason` (`end_turn`, `tool_use`, `max_tokens`, `pause_turn`,
    /// `refusal`, `model_context_window_exceeded`, `stop_sequence`, …); empty when absent.
    Messages(String),
    /// Responses API: `status` (`completed`, `incomplete`, …; empty when absent) and, for an
    /// incomplete response, why (`max_output_tokens`, `content_filter`).
    Responses {
        /// `status`.
        status: String,
        /// `incomplete_details.reason`.
        reason: Option<String>,
    },
}

/// Longest API value kept in an [`ApiStop`]: the known values are short, and a longer one is
/// not echoed whole into error texts.
const MAX_API_VALUE_CHARS: usize = 64;

/// An API's value as kept: printable ASCII only, at most [`MAX_API_VALUE_CHARS`] characters.
fn api_value(value: &str) -> String {
    value
        .chars()
        .filter(|c| c.is_ascii_graphic())
        .take(MAX_API_VALUE_CHARS)
        .collect()
}

impl ApiStop {
    /// A Messages API `stop_reason` (`None` when the message had none).
    pub fn messages(stop_reason: Option<&str>) -> ApiStop {
        ApiStop::Messages(api_value(stop_reason.unwrap_or("")))
    }

    /// A Responses API `status` and incomplete reason.
    pub fn responses(status: Option<&str>, reason: Option<&str>) -> ApiStop {
        ApiStop::Responses {
            status: api_value(status.unwrap_or("")),
            reason: reason.map(api_value),
        }
    }
}

impl fmt::Display for ApiStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiStop::Messages(reason) if reason.is_empty() => f.write_str("no stop_reason"),
            ApiStop::Messages(reason) => write!(f, "stop_reason `{reason}`"),
            ApiStop::Responses { status, reason } => {
                if status.is_empty() {
                    f.write_str("no status")?;
                } else {
                    write!(f, "status `{status}`")?;
                }
                match reason {
                    Some(reason) => write!(f, " (`{reason}`)"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// Why a run stopped before the model finished.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StopReason {
    /// The caller cancelled the run.
    #[error("the run was cancelled")]
    Cancelled,
    /// The caller closed the iteration at a paused turn: none of its deferred calls ran.
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" ("Si cierras la
    /// iteración …").
    #[error("the iteration was closed before this turn's deferred calls ran")]
    IterationClosed,
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
    /// An approval is due (an MCP approval to renew on resume, an MCP server to approve) and
    /// the run has no approver: nothing was sent.
    #[error("an approval is needed and nobody can give it: {0}")]
    ApprovalUnavailable(String),
    /// A person did not approve a remote MCP server the API would call unasked: nothing was
    /// sent.
    #[error("MCP server `{0}` was not approved, so the run did not start")]
    McpServerRefused(String),
    /// A person's hand-off note could not be added to the conversation ([`crate::wheel`]).
    #[error("the note of what the person did could not be added to the conversation: {0}")]
    HandOffFailed(String),
    /// A checkpoint could not be saved: the run could not be resumed safely.
    #[error("the checkpoint ledger failed: {0}")]
    LedgerFailed(String),
    /// The model answered with something the runner cannot pair or execute.
    #[error("the model's answer cannot be executed: {0}")]
    InvalidResponse(String),
    /// The API ended the turn for another reason than a tool call or its natural end
    /// (`max_tokens`, `refusal`, `model_context_window_exceeded`, an unknown `stop_reason`; a
    /// Responses `status` other than `completed`): no call of that answer was run.
    #[error("the model's answer ended with {0}: none of its calls was run")]
    ModelStopped(ApiStop),
    /// An output item whose `status` is not `completed`: a call (`function_call`,
    /// `computer_call`) or an assistant message still `in_progress` or `incomplete`. No call of
    /// that response was run.
    #[error(
        "{item_type} {id} has status `{status}`, not `completed`: no call of this response was run"
    )]
    ItemNotCompleted {
        /// `function_call`, `computer_call`, `message`.
        item_type: String,
        /// Its `call_id` (a call) or `id` (a message).
        id: String,
        /// Its status (empty when absent).
        status: String,
    },
    /// Two calls with one `call_id` (in one response, or across the run): no call of that
    /// response was run, since their answers could not be told apart.
    #[error("two calls have the call_id `{call_id}`: no call of this response was run")]
    DuplicateCallId {
        /// The `call_id`.
        call_id: String,
    },
    /// An output item of a kind the request did not declare (an `mcp_approval_request` without
    /// an MCP tool, a server tool's item without that tool, a type this runner does not know):
    /// no call of that response was run.
    #[error(
        "the response holds a `{item_type}` item, which this run did not declare: no call of this response was run"
    )]
    UndeclaredItem {
        /// The item's `type`, bounded and printable.
        item_type: String,
    },
    /// A response with neither a final message nor a call.
    #[error("the response holds neither a final message nor a call")]
    EmptyResponse,
    /// The next request does not fit the context budget even with every screenshot but the
    /// kept ones and every droppable call removed: nothing was sent.
    #[error(
        "the next request does not fit the context budget ({input_bytes} bytes and {input_images} images of input, for at most {max_input_bytes} bytes and {max_input_images} images) even with everything droppable removed"
    )]
    ContextBudgetExceeded {
        /// Bytes of the smallest projection.
        input_bytes: usize,
        /// Images of the smallest projection.
        input_images: usize,
        /// The budget's bytes.
        max_input_bytes: usize,
        /// The budget's images.
        max_input_images: usize,
    },
    /// A mid-run edit could not apply (it names a tool the run was not built with, or asks for
    /// what this API does not offer): nothing was sent after it.
    #[error("a mid-run edit was refused: {0}; nothing was sent after it")]
    EditRefused(String),
    /// The next request could not be built from the history: a message or the system prompt
    /// did not survive its projection (pruned or given cache breakpoints, it no longer parses).
    /// Nothing was sent: not the message unpruned, nor the request without its system prompt.
    #[error("the next request could not be built from {what}: {why}; nothing was sent")]
    ProjectionFailed {
        /// What failed: `message <index>` of the history, or `the system prompt`.
        what: String,
        /// Why.
        why: String,
    },
    /// A `function_call` of a function the request did not declare: nothing of the response
    /// ran.
    #[error(
        "the response calls `{name}`, a function the request did not declare: nothing of it was run"
    )]
    UndeclaredFunction {
        /// The name as the API sent it, bounded and printable.
        name: String,
    },
    /// A call of a local tool the request's `tool_choice` did not select (a named function, the
    /// computer, or an `allowed_tools` list): nothing of the response ran. The SDK's "Response
    /// contains a local tool excluded by tool_choice."
    #[error(
        "the response calls `{name}`, a tool the request's tool_choice excludes: nothing of it was run"
    )]
    ExcludedByToolChoice {
        /// The name as the API sent it, bounded and printable.
        name: String,
    },
}

impl StopReason {
    /// An [`StopReason::UndeclaredItem`] for an item `type` as the API sent it (kept printable
    /// and bounded, since it is the server's text).
    pub fn undeclared_item(item_type: &str) -> StopReason {
        StopReason::UndeclaredItem {
            item_type: api_value(item_type),
        }
    }

    /// A [`StopReason::ExcludedByToolChoice`] (the name is kept printable and bounded).
    pub fn excluded_by_tool_choice(name: &str) -> StopReason {
        StopReason::ExcludedByToolChoice {
            name: api_value(name),
        }
    }

    /// A [`StopReason::UndeclaredFunction`] (the name is kept printable and bounded).
    pub fn undeclared_function(name: &str) -> StopReason {
        StopReason::UndeclaredFunction {
            name: api_value(name),
        }
    }

    /// A [`StopReason::ItemNotCompleted`] (the values are kept printable and bounded).
    pub fn item_not_completed(item_type: &str, id: &str, status: Option<&str>) -> StopReason {
        StopReason::ItemNotCompleted {
            item_type: api_value(item_type),
            id: api_value(id),
            status: api_value(status.unwrap_or("")),
        }
    }

    /// A [`StopReason::DuplicateCallId`] (the value is kept printable and bounded).
    pub fn duplicate_call_id(call_id: &str) -> StopReason {
        StopReason::DuplicateCallId {
            call_id: api_value(call_id),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunStatus {
    /// The model answered without calling a tool (on the last allowed request too: a text
    /// answer there is a finish).
    Finished,
    /// The step limit was reached before the model finished (the last allowed request was
    /// answered with calls, which did not run, or with a paused turn).
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
    /// Tool calls attempted, in order: their effects may have happened, fully or in part
    /// (the SDK's `attempted_call_ids`). Ids only.
    ///
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución"
    /// (`attempted_call_ids`).
    pub executed_call_ids: Vec<String>,
    /// Calls whose answer was built, in the order they were answered (the SDK's
    /// `completed_call_ids`): a call run to its end, or answered with a supplied output. A
    /// supplied output is completed without being attempted — nothing ran. Ids only.
    ///
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución"
    /// (`completed_call_ids`).
    pub completed_call_ids: Vec<String>,
    /// How the API said its last answer ended (`None` when no answer came).
    pub api_stop: Option<ApiStop>,
}

impl RunStatus {
    /// The diagnostics reason a run that ended so is recorded with.
    pub fn reason(&self) -> crate::diagnostics::Reason {
        use crate::diagnostics::Reason;
        match self {
            RunStatus::Finished => Reason::Completed,
            RunStatus::StepLimit => Reason::StepLimit,
            RunStatus::Stopped(why) => match why {
                StopReason::Cancelled | StopReason::IterationClosed => Reason::Cancelled,
                StopReason::Api(_) => Reason::ApiFailed,
                StopReason::DriverFault(_)
                | StopReason::ComputerCallFailed { .. }
                | StopReason::FunctionFailed { .. }
                | StopReason::BrowserFault(_) => Reason::DriverFailed,
                StopReason::SafetyChecksDenied { .. } | StopReason::ActionRefused { .. } => {
                    Reason::Refused
                }
                StopReason::InvalidFunctionArguments { .. } => Reason::InvalidInput,
                _ => Reason::PolicyFailed,
            },
        }
    }
}

impl RunOutcome {
    /// The calls attempted (the same as [`RunOutcome::executed_call_ids`]).
    pub fn attempted_call_ids(&self) -> &[String] {
        &self.executed_call_ids
    }

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
    /// The runner was closed ([`crate::Runner::close`]): it admits no new run.
    #[error("this runner is closed: it starts no new run")]
    Closed,
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
