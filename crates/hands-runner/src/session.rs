//! What the two APIs' sides of a run share: the [`Session`] trait each implements, and the
//! [`StepContext`] a step works with (tools, approver, observer, journal, cancellation).

use std::time::{Duration, Instant};

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_core::image::EncodedImage;
use serde_json::Value;

use crate::approval::{Approver, Decision, Effect, EffectKind, SafetyChecksContext, decide};
use crate::checkpoint::{Checkpoints, Resumable, TurnLog};
use crate::control::{
    BeforeEarlyCall, Choices, Flow, Gate, OnEvent, Paused, RunEvent, Turn, TurnCall,
};
use crate::diagnostics::{Api, Observer, Reason, Record, Stage, Usage, UsageTotals, emit};
use crate::functions::{Function, FunctionError, ToolOutput};
use crate::journal::{Entry, Journal};
use crate::outcome::{ApiStop, RunError, StopReason};
use crate::tools::Toolbox;

/// The text answering a call that was not executed because the run stopped.
pub const NOT_EXECUTED_RUN_STOPPED: &str =
    "Not executed: the run stopped before this call (cancelled, or an earlier call stopped it).";

/// The text answering, in the conversation kept for a later task, a call of the last allowed
/// request (sent with tool choice `none`), which never runs.
pub const NOT_EXECUTED_STEP_LIMIT: &str =
    "Not executed: the run reached its step limit before this call.";

/// The text answering, in the conversation kept for a later task, a call of a turn the API
/// ended for another reason than `tool_use` (such a turn runs nothing).
pub fn not_executed_turn_ended(stop: &ApiStop) -> String {
    format!("Not executed: the turn ended with {stop}, so none of its calls was run.")
}

/// What a step ended in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StepResult {
    /// Calls were answered; ask the model again.
    Continue,
    /// The API paused the turn (Claude's `pause_turn`): it is sent back, last and unchanged, to
    /// let it go on. Nothing of it ran; the conversation that holds it is saved, so a resume
    /// sends it back instead of the request before it (whose server tools already acted).
    Paused,
    /// The model answered without a call.
    Finished(String),
    /// The last allowed request was answered with calls, which did not run.
    StepLimit(String),
}

/// One API's side of a run.
#[async_trait]
pub(crate) trait Session: Resumable + Send {
    /// Builds and checks the tool declarations and the tool choice, before any request.
    fn prepare(&mut self, toolbox: &Toolbox) -> Result<(), RunError>;

    /// Adds the user's task to the conversation.
    fn add_task(&mut self, task: &str) -> Result<(), RunError>;

    /// Which API.
    fn api(&self) -> Api;

    /// The conversation, for a checkpoint.
    fn snapshot(&self) -> Value;

    /// Restores the conversation of a completed checkpoint.
    fn restore(&mut self, conversation: &Value) -> Result<(), RunError>;

    /// Applies a mid-run edit (between turns); the reason when it cannot apply.
    fn apply_edit(&mut self, edit: &crate::edits::RunEdit) -> Result<(), String>;

    /// Adds a person's note (what they did while they had the wheel, [`crate::wheel`]) to the
    /// user turn the conversation ends with, between turns.
    fn add_person_note(&mut self, text: &str) -> Result<(), RunError>;

    /// Whether the conversation is inside a turn the next request continues (Claude: a paused
    /// turn, a compaction alone): no edit applies there.
    fn mid_turn(&self) -> bool {
        false
    }

    /// Why this session cannot run without an approver, if it cannot (a computer toolset that
    /// requires confirmations).
    fn needs_approver(&self) -> Option<String> {
        None
    }

    /// Approvals due before the run's first request (and before its first checkpoint): on
    /// OpenAI, MCP approvals given before the run stopped whose calls did not complete are asked
    /// again; on Claude, the MCP servers the API calls unasked are approved once.
    async fn before_first_request(
        &mut self,
        approver: &mut Option<Box<dyn Approver>>,
        cancel: &CancellationToken,
    ) -> Result<(), StopReason> {
        let _ = (approver, cancel);
        Ok(())
    }

    /// One request, and the execution of the calls it returns.
    async fn step(
        &mut self,
        ctx: &mut StepContext<'_>,
        last_allowed: bool,
    ) -> Result<StepResult, StopReason>;
}

/// How a call was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answered {
    /// With its result.
    Ok,
    /// With an error the model reads.
    Error,
}

impl Answered {
    /// [`Answered::Error`] when `failed`.
    pub(crate) fn error_if(failed: bool) -> Answered {
        if failed {
            Answered::Error
        } else {
            Answered::Ok
        }
    }
}

/// The end of one call, as [`StepContext::action_done`] records it.
#[derive(Debug)]
pub(crate) struct ActionDone<'a> {
    /// Which API the run speaks.
    pub api: Api,
    /// The call.
    pub call_id: &'a str,
    /// The member, tool or action type.
    pub member: &'a str,
    /// How it ended.
    pub reason: Reason,
    /// How long it took.
    pub duration: Duration,
    /// How the model was answered.
    pub answer: Answered,
    /// A short text for the journal.
    pub summary: &'a str,
}

/// Everything a step works with, borrowed from the runner for the step's length.
pub(crate) struct StepContext<'a> {
    pub(crate) toolbox: &'a mut Toolbox,
    pub(crate) approver: &'a mut Option<Box<dyn Approver>>,
    pub(crate) observer: &'a mut Option<Observer>,
    pub(crate) journal: &'a mut Option<Box<dyn Journal>>,
    pub(crate) cancel: &'a CancellationToken,
    pub(crate) queued: &'a std::sync::Mutex<crate::control::Queue>,
    pub(crate) step: u32,
    pub(crate) usage: &'a mut UsageTotals,
    pub(crate) executed: &'a mut Vec<String>,
    /// Calls answered so far (see [`crate::RunOutcome::completed_call_ids`]).
    pub(crate) completed: &'a mut Vec<String>,
    /// The caller's end of an iteration, when the run is driven turn by turn.
    pub(crate) gate: Option<&'a Gate>,
    /// The `on_event` callback.
    pub(crate) on_event: &'a mut Option<OnEvent>,
    /// The `before_early_call` hook.
    pub(crate) before_early_call: &'a mut Option<BeforeEarlyCall>,
    /// The run's checkpoints, when it keeps a ledger (see `checkpoint`).
    pub(crate) checkpoints: &'a mut Option<Checkpoints>,
    /// How the API said its last answer ended.
    pub(crate) api_stop: &'a mut Option<ApiStop>,
    /// The turn under way, for pending checkpoints.
    pub(crate) turn: TurnLog,
    /// Which API, for records.
    pub(crate) api: Api,
}

/// What the caller of an iteration chose for a paused turn.
#[derive(Debug, Default)]
pub(crate) struct TurnChoices {
    /// Outputs for not-yet-tried suppliable calls, by call id.
    pub(crate) supplied: std::collections::BTreeMap<String, ToolOutput>,
}

impl StepContext<'_> {
    /// Delivers an event to the `on_event` callback; `make` builds the callback's own copy,
    /// only when there is a callback.
    pub(crate) fn event(&mut self, make: impl FnOnce() -> RunEvent) {
        if let Some(on_event) = self.on_event.as_mut() {
            on_event(make());
        }
    }

    /// A call's execution begins: it is attempted from now on.
    pub(crate) fn call_started(&mut self, call_id: &str, name: &str) {
        self.executed.push(call_id.to_owned());
        self.event(|| RunEvent::CallStarted {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
        });
    }

    /// A call's answer is built.
    pub(crate) fn call_completed(
        &mut self,
        call_id: &str,
        name: &str,
        output: impl FnOnce() -> Value,
    ) {
        self.completed.push(call_id.to_owned());
        self.event(|| RunEvent::CallFinished {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            output: output(),
        });
    }

    /// The response of this step completed and passed its checks: tells `on_event`, and when
    /// the run is iterated, pauses until the caller moves on. Closing the iteration stops the
    /// run here, before any deferred call runs; on a final turn the caller's choices are
    /// ignored (nothing follows it).
    ///
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" (`iterate()`).
    pub(crate) async fn inspect(
        &mut self,
        final_turn: bool,
        response: impl Fn() -> Value,
        calls: Vec<TurnCall>,
    ) -> Result<TurnChoices, StopReason> {
        let step = self.step;
        // A turn whose calls run takes a person's text until its answer goes; a final one
        // cannot (nothing follows it).
        self.queued.lock().unwrap_or_else(|e| e.into_inner()).open = !final_turn;
        self.event(|| RunEvent::TurnCompleted {
            step,
            response: response(),
        });
        let Some(gate) = self.gate else {
            return Ok(TurnChoices::default());
        };
        let eligible = calls
            .iter()
            .filter(|c| c.suppliable)
            .map(|c| c.call_id.clone())
            .collect();
        let choices = std::sync::Arc::new(std::sync::Mutex::new(Choices {
            paused: true,
            final_turn,
            eligible,
            ..Choices::default()
        }));
        let turn = Turn {
            step,
            final_turn,
            response: response(),
            calls,
            attempted_call_ids: self.executed.clone(),
            completed_call_ids: self.completed.clone(),
            choices: std::sync::Arc::clone(&choices),
        };
        let (resume, resumed) = tokio::sync::oneshot::channel();
        let flow = if gate.send(Paused { turn, resume }).is_err() {
            Some(Flow::Close)
        } else {
            tokio::select! {
                flow = resumed => Some(flow.unwrap_or(Flow::Close)),
                () = self.cancel.cancelled() => None,
            }
        };
        // The turn takes no change from now on, however the pause ended.
        let mut choices = choices.lock().unwrap_or_else(|e| e.into_inner());
        choices.paused = false;
        // A final turn ends the run as it ended, even cancelled or closed while paused:
        // nothing was left to run.
        if final_turn {
            return Ok(TurnChoices::default());
        }
        let Some(flow) = flow else {
            return Err(StopReason::Cancelled);
        };
        match flow {
            Flow::Proceed => {
                // Appended text joins the queue, added after this turn's outputs.
                self.queued
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .texts
                    .append(&mut choices.texts);
                Ok(TurnChoices {
                    supplied: std::mem::take(&mut choices.supplied),
                })
            }
            Flow::Close => Err(StopReason::IterationClosed),
        }
    }

    /// Whether the approver reviews every effect of `kind`.
    pub(crate) fn reviews(&self, kind: EffectKind) -> bool {
        self.approver.as_ref().is_some_and(|a| a.reviews(kind))
    }

    /// Asks the approver about `effect` when it reviews effects of its kind or the effect
    /// requires a confirmation; otherwise approves. A required confirmation without an
    /// approver denies. Cancellation while it decides is a cancellation, never a refusal: the
    /// run stops with [`StopReason::Cancelled`].
    pub(crate) async fn approve(&mut self, effect: Effect) -> Result<Decision, StopReason> {
        let required = effect.confirm_required();
        if !required && !self.reviews(effect.kind()) {
            return Ok(Decision::Approve);
        }
        let (call_id, member) = (effect.call_id().to_owned(), effect.name().to_owned());
        let start = Instant::now();
        let decision = match self.approver.as_mut() {
            Some(approver) => decide(approver.approve(effect, self.cancel), self.cancel).await,
            None => Decision::Deny,
        };
        self.approval_done(&call_id, &member, decision, start)
    }

    /// Asks for the safety checks' approval; without an approver they are denied.
    /// Cancellation while it decides stops the run as cancelled.
    pub(crate) async fn approve_safety_checks(
        &mut self,
        context: SafetyChecksContext,
    ) -> Result<Decision, StopReason> {
        let call_id = context.call_id.clone();
        let start = Instant::now();
        let decision = match self.approver.as_mut() {
            Some(approver) => {
                decide(
                    approver.approve_safety_checks(context, self.cancel),
                    self.cancel,
                )
                .await
            }
            None => Decision::Deny,
        };
        self.approval_done(&call_id, "safety_checks", decision, start)
    }

    /// Records an approval; a cancelled run's decision is a cancellation.
    fn approval_done(
        &mut self,
        call_id: &str,
        member: &str,
        decision: Decision,
        start: Instant,
    ) -> Result<Decision, StopReason> {
        let reason = if self.cancel.is_cancelled() {
            Reason::Cancelled
        } else if decision == Decision::Approve {
            Reason::Completed
        } else {
            Reason::Refused
        };
        self.record(
            Record::new(self.api, Stage::Approval, reason, start.elapsed())
                .of_call(call_id, member),
        );
        if reason == Reason::Cancelled {
            return Err(StopReason::Cancelled);
        }
        Ok(decision)
    }

    /// Delivers a record to the observer.
    pub(crate) fn record(&mut self, record: Record) {
        emit(self.observer, &record);
    }

    /// Records why an ordinary function did not answer (invalid arguments, a failure, an invalid
    /// output) and decides what follows: by default the call is answered with the error and the
    /// run goes on; a [`crate::functions::FailurePolicy::StopsTheRun`] function, or a
    /// cancellation, stops it.
    pub(crate) fn function_failed(
        &mut self,
        call_id: &str,
        name: &str,
        error: FunctionError,
        start: Instant,
    ) -> FunctionFailure {
        let (stage, reason, stop) = match error {
            FunctionError::InvalidArguments(why) => (
                Stage::Arguments,
                Reason::InvalidInput,
                StopReason::InvalidFunctionArguments {
                    name: name.to_owned(),
                    why,
                },
            ),
            FunctionError::Failed(why) => (
                Stage::Action,
                Reason::DriverFailed,
                StopReason::FunctionFailed {
                    name: name.to_owned(),
                    why,
                },
            ),
            FunctionError::InvalidOutput(why) => (
                Stage::Output,
                Reason::InvalidOutput,
                StopReason::FunctionFailed {
                    name: name.to_owned(),
                    why,
                },
            ),
        };
        let reason = if self.cancel.is_cancelled() {
            Reason::Cancelled
        } else {
            reason
        };
        self.record(Record::new(self.api, stage, reason, start.elapsed()).of_call(call_id, name));
        let fatal =
            self.toolbox.functions.get(name).is_some_and(|f| {
                f.failure_policy() == crate::functions::FailurePolicy::StopsTheRun
            });
        if reason == Reason::Cancelled {
            FunctionFailure::Stop(StopReason::Cancelled)
        } else if fatal {
            FunctionFailure::Stop(stop)
        } else {
            // The function's own words, bounded, on the error the model reads.
            FunctionFailure::Answer(hands_toolset::errtext::error_text(&format!(
                "Error: {stop}"
            )))
        }
    }

    /// Text a person queued, taken once; each is told to `on_event`.
    pub(crate) fn take_queued(&mut self) -> Vec<String> {
        let texts = {
            let mut queue = self.queued.lock().unwrap_or_else(|e| e.into_inner());
            // The turn's answer goes now: later text would miss it.
            queue.open = false;
            std::mem::take(&mut queue.texts)
        };
        for text in &texts {
            self.event(|| RunEvent::UserText { text: text.clone() });
        }
        texts
    }

    pub(crate) fn request_done(
        &mut self,
        api: Api,
        duration: Duration,
        usage: Option<Usage>,
        attempts: u32,
    ) {
        self.usage.add(usage.as_ref());
        emit(
            self.observer,
            &Record {
                api,
                stage: Stage::Request,
                reason: Reason::Completed,
                call_id: None,
                member: None,
                duration,
                usage,
                attempts,
            },
        );
    }

    /// Records a failed request; the run stops with the API's error, or as cancelled.
    pub(crate) fn request_failed(
        &mut self,
        api: Api,
        duration: Duration,
        error: &hands_models::Error,
    ) -> StopReason {
        emit(
            self.observer,
            &Record {
                api,
                stage: Stage::Request,
                reason: if self.cancel.is_cancelled() {
                    Reason::Cancelled
                } else {
                    Reason::ApiFailed
                },
                call_id: None,
                member: None,
                duration,
                usage: None,
                // Unknown (cancelled before an answer) counts as the one attempt under way.
                attempts: error.attempts().unwrap_or(1),
            },
        );
        if self.cancel.is_cancelled() {
            StopReason::Cancelled
        } else {
            StopReason::Api(error.to_string())
        }
    }

    /// Records a call's end: a diagnostics record for the observer and a journal entry.
    pub(crate) fn action_done(&mut self, done: ActionDone<'_>) {
        let ActionDone {
            api,
            call_id,
            member,
            reason,
            duration,
            answer,
            summary,
        } = done;
        // A call cut short by cancellation is a cancellation, whatever it answered.
        let reason = match reason {
            Reason::Failed | Reason::Refused if self.cancel.is_cancelled() => Reason::Cancelled,
            other => other,
        };
        let mut record = Record::new(api, Stage::Action, reason, duration).of_call(call_id, member);
        record.attempts = 1;
        emit(self.observer, &record);
        let step = self.step;
        if let Some(journal) = self.journal.as_mut() {
            journal.record(Entry::Action {
                step,
                call_id,
                name: member,
                is_error: answer == Answered::Error,
                summary,
                duration,
            });
        }
    }

    /// Journals a request body (serialised only when a journal is kept).
    pub(crate) fn journal_request(&mut self, request: &impl serde::Serialize) {
        let step = self.step;
        if let Some(journal) = self.journal.as_mut()
            && let Ok(mut body) = serde_json::to_value(request)
        {
            // Credentials for remote servers are sent, never kept.
            crate::mcp::redact_credentials(&mut body);
            journal.record(Entry::Request { step, body: &body });
        }
    }

    /// Journals a response body (serialised only when a journal is kept).
    pub(crate) fn journal_response(
        &mut self,
        response: &impl serde::Serialize,
        duration: Duration,
        attempts: u32,
    ) {
        let step = self.step;
        if let Some(journal) = self.journal.as_mut()
            && let Ok(mut body) = serde_json::to_value(response)
        {
            crate::mcp::redact_credentials(&mut body);
            journal.record(Entry::Response {
                step,
                body: &body,
                duration,
                attempts,
            });
        }
    }

    pub(crate) fn journal_image(&mut self, call_id: &str, image: &EncodedImage) {
        let step = self.step;
        if let Some(journal) = self.journal.as_mut() {
            journal.record(Entry::Image {
                step,
                call_id,
                image,
            });
        }
    }
}

/// What follows an ordinary function's failure.
#[derive(Debug)]
pub(crate) enum FunctionFailure {
    /// The call is answered with this error text (`is_error`); the run goes on.
    Answer(String),
    /// The run stops.
    Stop(StopReason),
}

/// The answer to a call not executed because the run stopped.
pub(crate) fn cancelled_text() -> &'static str {
    NOT_EXECUTED_RUN_STOPPED
}

/// The answer to a call of a tool this run does not have.
pub(crate) fn unknown_tool_text(name: &str) -> String {
    // The name is the model's: echoed on one line and cut short.
    format!(
        "Error: this run has no tool named `{}`; use one of the declared tools.",
        hands_toolset::errtext::name(name)
    )
}

/// Runs an ordinary function: invalid arguments stop the run before it runs; a failure stops the
/// run too, and the function is never run again.
pub(crate) async fn function_result(
    function: &Function,
    arguments: Value,
) -> Result<ToolOutput, FunctionError> {
    function.start(arguments)?.await
}
