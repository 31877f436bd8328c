//! How a run writes its checkpoints: the [`Checkpoints`] a runner keeps beside its ledger, the
//! [`TurnLog`] of the turn under way, and the calls the two API sides make around each effect
//! (on [`StepContext`]); and the [`Resumable`] side of a session, which closes an interrupted
//! turn and tells the model that the run resumed.
//!
//! A request that declares remote MCP servers is saved pending before it is sent, as a record
//! of its own (see [`crate::ledger::MCP_REQUEST_RECORD`]): answered once its response begins a
//! turn, interrupted when the run stops first.
//!
//! Saves, for a turn with calls: when the response arrives (every call proposed), before each
//! effect (attempted), after it (answered, or interrupted when it was cancelled or faulted
//! during its effect, or refused when the run stopped before it could act), and when the turn
//! is answered — completed only if no call's outcome is uncertain. Pending checkpoints carry the
//! conversation as it was when the response arrived, and the answers in the turn log.
//!
//! Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución".

use std::collections::HashSet;

use async_trait::async_trait;
use hands_core::CancellationToken;
use serde_json::Value;

use crate::ledger::{
    CallRecord, CallState, Checkpoint, CheckpointStatus, Ledger, LedgerError, MCP_APPROVAL_RECORD,
    MCP_REQUEST_RECORD, PendingTurn, RunEnd, RunIdentity,
};
use crate::outcome::{RunError, StopReason};
use crate::session::StepContext;

/// A runner's ledger, with the identity and the next revision of the run it writes.
pub(crate) struct Checkpoints {
    ledger: Box<dyn Ledger>,
    identity: Option<RunIdentity>,
    next_revision: u64,
}

impl Checkpoints {
    pub(crate) fn new(ledger: Box<dyn Ledger>) -> Checkpoints {
        Checkpoints {
            ledger,
            identity: None,
            next_revision: 0,
        }
    }

    pub(crate) fn ledger(&mut self) -> &mut dyn Ledger {
        self.ledger.as_mut()
    }

    /// Starts writing the run of `identity` after the ledger's last revision.
    pub(crate) fn start(&mut self, identity: RunIdentity) -> Result<(), LedgerError> {
        self.next_revision = self.ledger.latest_revision()? + 1;
        self.identity = Some(identity);
        Ok(())
    }

    /// Saves the next revision. A save that fails stops the run.
    pub(crate) fn save(
        &mut self,
        steps_used: u32,
        status: CheckpointStatus,
        conversation: Value,
    ) -> Result<(), StopReason> {
        let identity = self
            .identity
            .clone()
            .ok_or_else(|| StopReason::LedgerFailed("the run was not started".into()))?;
        let checkpoint = Checkpoint {
            identity,
            revision: self.next_revision,
            steps_used,
            status,
            conversation,
        };
        self.ledger
            .save(&checkpoint)
            .map_err(|e| StopReason::LedgerFailed(e.to_string()))?;
        self.next_revision += 1;
        Ok(())
    }

    /// Records how the run ended; a failure here only loses the listing's note.
    pub(crate) fn record_end(&mut self, end: &RunEnd) {
        if let Err(e) = self.ledger.record_end(end) {
            tracing::warn!(error = %e, "could not record how the run ended");
        }
    }
}

/// The turn under way, as its pending checkpoints say it.
#[derive(Debug, Default)]
pub(crate) struct TurnLog {
    /// The conversation when the response arrived (taken once per turn).
    conversation: Option<Value>,
    pending: PendingTurn,
    /// Calls whose first effect began (OpenAI computer calls mark it).
    began: HashSet<String>,
}

/// A call as proposed: id, tool or member name, input.
pub(crate) struct Proposed {
    pub(crate) call_id: String,
    pub(crate) name: String,
    pub(crate) input: Value,
}

impl StepContext<'_> {
    /// Whether checkpoints are kept (snapshots and answers are only built when they are).
    pub(crate) fn keeps_checkpoints(&self) -> bool {
        self.checkpoints.is_some()
    }

    fn call_record(&mut self, call: Proposed) -> &mut CallRecord {
        let calls = &mut self.turn.pending.calls;
        let at = match calls.iter().position(|c| c.call_id == call.call_id) {
            Some(at) => at,
            None => {
                calls.push(CallRecord {
                    call_id: call.call_id,
                    name: call.name,
                    input: call.input,
                    state: CallState::Proposed,
                });
                calls.len() - 1
            }
        };
        &mut calls[at]
    }

    fn save_pending(&mut self) -> Result<(), StopReason> {
        let step = self.step;
        let conversation = self.turn.conversation.clone().unwrap_or(Value::Null);
        let turn = self.turn.pending.clone();
        match self.checkpoints.as_mut() {
            Some(checkpoints) => {
                checkpoints.save(step, CheckpointStatus::Pending(turn), conversation)
            }
            None => Ok(()),
        }
    }

    /// Before a request that declares the remote MCP servers `servers`: saved pending with the
    /// request attempted, since the servers may act while it is under way. A run stopped before
    /// the response begins a turn is then reconciled by a person, never sent again by itself.
    ///
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución": "Una
    /// ejecución que incluye herramientas MCP guarda un punto de control pendiente antes de
    /// cada solicitud."
    pub(crate) fn mcp_request_attempted(
        &mut self,
        servers: Vec<String>,
        conversation: impl FnOnce() -> Value,
    ) -> Result<(), StopReason> {
        if !self.keeps_checkpoints() {
            return Ok(());
        }
        self.turn.conversation = Some(conversation());
        self.turn.pending = PendingTurn {
            response_complete: false,
            calls: vec![CallRecord {
                call_id: format!("request-{}", self.step),
                name: MCP_REQUEST_RECORD.to_owned(),
                input: serde_json::json!({ "mcp_servers": servers }),
                state: CallState::Attempted,
            }],
        };
        let saved = self.save_pending();
        if saved.is_err() {
            // Never sent: nothing to settle.
            self.turn = TurnLog::default();
        }
        saved
    }

    /// The step ended without beginning a turn (a final answer aside): a request to MCP
    /// servers still recorded attempted is settled — answered when the run reached its step
    /// limit (its response arrived), interrupted when the run `stopped` (the servers may have
    /// acted, and the run did not go on from their results).
    pub(crate) fn settle_mcp_request(&mut self, stopped: Option<&StopReason>) {
        if !self.keeps_checkpoints() {
            return;
        }
        let Some(record) = self
            .turn
            .pending
            .calls
            .iter_mut()
            .find(|c| c.is_mcp_request() && c.state == CallState::Attempted)
        else {
            return;
        };
        record.state = match stopped {
            None => CallState::Answered {
                answer: response_arrived(),
            },
            Some(reason) => CallState::Interrupted {
                why: format!(
                    "the run stopped at this request ({reason}): the MCP servers may have acted"
                ),
            },
        };
        if let Err(e) = self.save_pending() {
            tracing::warn!(error = %e, "could not save the request that stopped the run");
        }
    }

    /// The response arrived whole with these calls: saved pending, every call proposed (calls
    /// an eager stream already ran keep their records); a request to MCP servers before it is
    /// answered.
    pub(crate) fn begin_turn(
        &mut self,
        calls: Vec<Proposed>,
        conversation: impl FnOnce() -> Value,
    ) -> Result<(), StopReason> {
        if !self.keeps_checkpoints() {
            return Ok(());
        }
        self.turn.conversation = Some(conversation());
        self.turn.pending.response_complete = true;
        for record in &mut self.turn.pending.calls {
            if record.is_mcp_request() {
                record.state = CallState::Answered {
                    answer: response_arrived(),
                };
            }
        }
        for call in calls {
            self.call_record(call);
        }
        self.save_pending()
    }

    /// Just before a call's effect: saved as attempted (it may have happened from now on).
    pub(crate) fn call_attempted(
        &mut self,
        call: Proposed,
        conversation: impl FnOnce() -> Value,
    ) -> Result<(), StopReason> {
        if !self.keeps_checkpoints() {
            return Ok(());
        }
        if self.turn.conversation.is_none() {
            // An eagerly executed call, before the response is complete.
            self.turn.conversation = Some(conversation());
        }
        self.call_record(call).state = CallState::Attempted;
        self.save_pending()
    }

    /// The first effect of `call_id` begins (an OpenAI computer call's first action): a stop
    /// after this point is no longer a refusal.
    pub(crate) fn effect_began(&mut self, call_id: &str) {
        if self.keeps_checkpoints() {
            self.turn.began.insert(call_id.to_owned());
        }
    }

    /// A call answered: saved with its answer, or as interrupted (`interruption` says why)
    /// when it was cancelled or faulted during its effect, whatever its answer says.
    pub(crate) fn call_answered(
        &mut self,
        call_id: &str,
        answer: impl FnOnce() -> Value,
        interruption: Option<String>,
    ) -> Result<(), StopReason> {
        if !self.keeps_checkpoints() {
            return Ok(());
        }
        let state = match interruption {
            Some(why) => CallState::Interrupted { why },
            None => CallState::Answered { answer: answer() },
        };
        if let Some(record) = self.turn.pending.call_mut(call_id) {
            record.state = state;
        }
        self.save_pending()
    }

    /// A call that stopped the run: refused (no effect), stopped part-way, or interrupted,
    /// by what stopped it. The run stops with `reason` whether or not this save succeeds.
    pub(crate) fn call_stopped(&mut self, call_id: &str, reason: &StopReason) {
        if !self.keeps_checkpoints() {
            return;
        }
        let began = self.turn.began.contains(call_id);
        let Some(record) = self.turn.pending.call_mut(call_id) else {
            return;
        };
        // Computer calls mark where their effects begin; an approval has none.
        let marked = record.name == "computer_call" || record.name == MCP_APPROVAL_RECORD;
        record.state = stopped_state(reason, marked, began);
        if let Err(e) = self.save_pending() {
            tracing::warn!(error = %e, "could not save the call that stopped the run");
        }
    }

    /// Every call of the turn is answered: a completed checkpoint of `conversation`, unless a
    /// call's outcome is uncertain — then the turn stays pending, for a person to reconcile.
    pub(crate) fn end_turn(
        &mut self,
        conversation: impl FnOnce() -> Value,
    ) -> Result<(), StopReason> {
        if !self.keeps_checkpoints() {
            return Ok(());
        }
        if self.turn.pending.uncertain().next().is_some() {
            return self.save_pending();
        }
        let step = self.step;
        let conversation = conversation();
        match self.checkpoints.as_mut() {
            Some(checkpoints) => checkpoints.save(step, CheckpointStatus::Completed, conversation),
            None => Ok(()),
        }
    }
}

/// What a request to MCP servers is answered with once its response arrived (the servers'
/// items are in the conversation).
fn response_arrived() -> Value {
    serde_json::json!({ "response": "arrived" })
}

/// Why a call that returned an answer may still not have finished its effect: the run was
/// cancelled, or its driver faulted, while it ran. `None` when neither happened.
pub(crate) fn interruption(cancelled: bool, faulted: bool) -> Option<String> {
    match (cancelled, faulted) {
        (true, _) => Some("the run was cancelled while this call ran".into()),
        (false, true) => Some("the driver failed while this call ran".into()),
        (false, false) => None,
    }
}

/// What a call that stopped the run did, by why it stopped. `marked`: the call marks the start
/// of its effects ([`StepContext::effect_began`]), and `began` says whether they started.
fn stopped_state(reason: &StopReason, marked: bool, began: bool) -> CallState {
    let why = reason.to_string();
    match reason {
        // Checked before anything runs.
        StopReason::SafetyChecksDenied { .. }
        | StopReason::InvalidFunctionArguments { .. }
        | StopReason::LedgerFailed(_) => CallState::Refused { why },
        StopReason::ActionRefused { .. } if began => CallState::StoppedPartway { why },
        StopReason::ActionRefused { .. } => CallState::Refused { why },
        StopReason::ComputerCallFailed { .. } | StopReason::Cancelled if marked && !began => {
            CallState::Refused { why }
        }
        _ => CallState::Interrupted { why },
    }
}

/// The side of a session that a resume needs.
#[async_trait]
pub(crate) trait Resumable {
    /// The model.
    fn model(&self) -> &str;

    /// The tool declarations, as prepared.
    fn declared_tools(&self) -> &[Value];

    /// Whether the restored conversation waits for a request (a task or answered calls at its
    /// end), rather than ending with the model's final answer.
    fn awaits_request(&self) -> bool;

    /// Answers every call of the restored pending turn from its record; nothing runs again.
    async fn close_turn(
        &mut self,
        turn: &PendingTurn,
        cancel: &CancellationToken,
    ) -> Result<(), RunError>;

    /// Tells the model the run resumed (with a screenshot of the desktop, when there is one).
    async fn note_resumed(&mut self, cancel: &CancellationToken) -> Result<(), RunError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_is_a_refusal_only_when_nothing_can_have_run() {
        let state = |reason: StopReason, marked, began| match stopped_state(&reason, marked, began)
        {
            CallState::Refused { .. } => "refused",
            CallState::StoppedPartway { .. } => "partway",
            CallState::Interrupted { .. } => "interrupted",
            other => panic!("{other:?}"),
        };
        let refused = || StopReason::ActionRefused {
            call_id: "c".into(),
            action: "click".into(),
        };
        let checks = StopReason::SafetyChecksDenied {
            call_id: "c".into(),
        };
        let failed = || StopReason::FunctionFailed {
            name: "f".into(),
            why: "boom".into(),
        };
        assert_eq!(state(checks, true, false), "refused");
        assert_eq!(state(refused(), true, false), "refused");
        assert_eq!(state(refused(), true, true), "partway");
        assert_eq!(state(StopReason::Cancelled, true, false), "refused");
        assert_eq!(state(StopReason::Cancelled, true, true), "interrupted");
        assert_eq!(state(StopReason::Cancelled, false, false), "interrupted");
        assert_eq!(state(failed(), false, false), "interrupted");
        assert_eq!(
            state(StopReason::DriverFault("gone".into()), true, true),
            "interrupted"
        );
    }
}
