//! Where a run resumes from, and how a person reconciles an uncertain call.
//!
//! The rule: nothing that may have taken effect runs again, and nothing uncertain is decided
//! by hands. A completed checkpoint resumes as is. A pending turn with an uncertain call
//! (attempted, or interrupted during its effect) waits for [`reconcile`]. A pending turn in
//! which nothing took effect (every call refused or not started — a refused safety check, a
//! kill before the first action) is dropped: the run resumes from the completed checkpoint
//! before it and sends that request again, so the model proposes afresh and every approval is
//! asked again. Any other pending turn is closed: its calls are answered from their records
//! (answered calls with their answers, the rest with the texts below), and the model goes on.
//!
//! Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución": resume only
//! from the end of a completed turn; reconcile a pending or uncertain action first; a
//! checkpoint never authorises repeating an action; the remaining requests carry over.

use super::{
    CallRecord, CallState, Checkpoint, CheckpointStatus, Ledger, LedgerError, PendingTurn, Verdict,
};
use crate::outcome::{RunError, UncertainCall};

/// The answer to a call the run never started before it was interrupted.
pub const NOT_STARTED_ANSWER: &str = "Not executed: the run was interrupted before this call started, so it did not run. Check the current state, and ask again if it is still needed.";

/// The text added to the conversation when a run resumes.
pub const RESUMED_NOTE: &str = "The run was interrupted and has now resumed. The environment may have changed since the last observation: check its current state before acting.";

/// How a resumed run starts.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResumePlan {
    /// From this completed checkpoint, as is.
    FromCompleted(Checkpoint),
    /// The latest turn took no effect: from the completed checkpoint before it, sending its
    /// request again, with the requests the dropped turn used.
    RetryTurn {
        /// The completed checkpoint.
        from: Checkpoint,
        /// Requests used, the dropped turn's included.
        steps_used: u32,
    },
    /// The latest turn is closed from its records, then the run goes on.
    CloseTurn(Checkpoint),
}

impl ResumePlan {
    /// Requests used when the run resumes.
    pub fn steps_used(&self) -> u32 {
        match self {
            ResumePlan::FromCompleted(c) | ResumePlan::CloseTurn(c) => c.steps_used,
            ResumePlan::RetryTurn { steps_used, .. } => *steps_used,
        }
    }
}

/// Decides where a run resumes from its `latest` checkpoint (and the latest completed one).
pub fn plan_resume(
    latest: Checkpoint,
    latest_completed: Option<Checkpoint>,
) -> Result<ResumePlan, RunError> {
    let turn = match &latest.status {
        CheckpointStatus::Completed => return Ok(ResumePlan::FromCompleted(latest)),
        CheckpointStatus::Pending(turn) => turn,
    };
    let uncertain: Vec<UncertainCall> = turn
        .uncertain()
        .map(|c| UncertainCall {
            call_id: c.call_id.clone(),
            name: c.name.clone(),
        })
        .collect();
    if !uncertain.is_empty() {
        return Err(RunError::NeedsReconciliation(uncertain));
    }
    if !turn.any_effect() {
        let from = latest_completed.ok_or_else(|| {
            RunError::Ledger("a pending turn with no completed checkpoint before it".into())
        })?;
        return Ok(ResumePlan::RetryTurn {
            from,
            steps_used: latest.steps_used,
        });
    }
    // A request to MCP servers stands alone until its response arrives: only calls can be
    // missing from a response that never came whole.
    if !turn.response_complete && !turn.only_mcp_request() {
        return Err(RunError::Ledger(
            "calls ran while the response was still arriving, and the rest of it never came: \
             the turn cannot be answered; start a new run from what the environment shows now"
                .into(),
        ));
    }
    Ok(ResumePlan::CloseTurn(latest))
}

/// What a call of a closed turn is answered with, when not with its recorded answer: the text,
/// and whether it is an error.
pub fn closing_text(state: &CallState) -> Option<(String, bool)> {
    match state {
        CallState::Answered { .. } => None,
        CallState::Proposed | CallState::Attempted | CallState::Interrupted { .. } => {
            Some((NOT_STARTED_ANSWER.to_owned(), true))
        }
        CallState::Refused { why } => Some((format!("Not executed: {why}."), true)),
        CallState::StoppedPartway { why } => Some((
            format!("Stopped part-way: {why}. Check the current state before going on."),
            true,
        )),
        CallState::Reconciled { verdict, note } => {
            Some(reconciled_answer(*verdict, note.as_deref()))
        }
    }
}

/// What the model is told, on resume, about a request to MCP servers whose response never came
/// and that a person found had taken effect (the servers acted); `None` for any other record.
pub fn mcp_request_note(record: &CallRecord) -> Option<String> {
    let CallState::Reconciled {
        verdict: Verdict::Happened,
        note,
    } = &record.state
    else {
        return None;
    };
    if !record.is_mcp_request() {
        return None;
    }
    let mut text = MCP_REQUEST_HAPPENED.to_owned();
    if let Some(note) = note.as_deref().filter(|n| !n.trim().is_empty()) {
        text.push_str(" Their note: ");
        text.push_str(note.trim());
    }
    Some(text)
}

/// The start of [`mcp_request_note`].
pub const MCP_REQUEST_HAPPENED: &str = "The run was interrupted during a request in which MCP servers could act, and its response was lost. A person checked afterwards: the MCP servers did act.";

/// The answer to a reconciled call: what the person found, and their note.
pub fn reconciled_answer(verdict: Verdict, note: Option<&str>) -> (String, bool) {
    let (found, is_error) = match verdict {
        Verdict::Happened => ("it took effect, but its output was not recorded", false),
        Verdict::DidNotHappen => ("it did not take effect", true),
    };
    let mut text =
        format!("The run was interrupted during this call. A person checked afterwards: {found}.");
    if let Some(note) = note.filter(|n| !n.trim().is_empty()) {
        text.push_str(" Their note: ");
        text.push_str(note.trim());
    }
    (text, is_error)
}

/// Why a call could not be reconciled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReconcileError {
    /// The ledger failed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The latest checkpoint is not pending: nothing to reconcile.
    #[error("the run's latest checkpoint ends a completed turn: nothing to reconcile")]
    NotPending,
    /// No call of the pending turn has that id.
    #[error("the pending turn has no call {call_id}; its calls: {known}")]
    NoSuchCall {
        /// The id given.
        call_id: String,
        /// The ids there are.
        known: String,
    },
    /// The call's outcome is already known.
    #[error("call {call_id} is not uncertain ({state}): only uncertain calls are reconciled")]
    NotUncertain {
        /// The call.
        call_id: String,
        /// Where it stands.
        state: &'static str,
    },
}

/// Records what a person found about an uncertain call of the run's pending turn, as a new
/// revision (the earlier ones stay). Returns that checkpoint.
pub fn reconcile(
    ledger: &mut dyn Ledger,
    call_id: &str,
    verdict: Verdict,
    note: Option<String>,
) -> Result<Checkpoint, ReconcileError> {
    let Some(mut checkpoint) = ledger.latest()? else {
        return Err(ReconcileError::NotPending);
    };
    let CheckpointStatus::Pending(turn) = &mut checkpoint.status else {
        return Err(ReconcileError::NotPending);
    };
    let known = known_ids(turn);
    let Some(call) = turn.call_mut(call_id) else {
        return Err(ReconcileError::NoSuchCall {
            call_id: call_id.to_owned(),
            known,
        });
    };
    if !call.state.is_uncertain() {
        return Err(ReconcileError::NotUncertain {
            call_id: call_id.to_owned(),
            state: call.state.label(),
        });
    }
    call.state = CallState::Reconciled { verdict, note };
    checkpoint.revision += 1;
    ledger.save(&checkpoint)?;
    Ok(checkpoint)
}

fn known_ids(turn: &PendingTurn) -> String {
    turn.calls
        .iter()
        .map(|c| c.call_id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::ledger::{CallRecord, MemoryLedger, RunIdentity};

    fn call(id: &str, state: CallState) -> CallRecord {
        CallRecord {
            call_id: id.into(),
            name: "bash".into(),
            input: json!({"command": "true"}),
            state,
        }
    }

    fn checkpoint(revision: u64, steps_used: u32, turn: Option<Vec<CallRecord>>) -> Checkpoint {
        Checkpoint {
            identity: RunIdentity::new("r", "messages", "m", 20, &[]),
            revision,
            steps_used,
            status: match turn {
                None => CheckpointStatus::Completed,
                Some(calls) => CheckpointStatus::Pending(PendingTurn {
                    response_complete: true,
                    calls,
                }),
            },
            conversation: Value::Null,
        }
    }

    fn answered() -> CallState {
        CallState::Answered {
            answer: json!({"type": "tool_result"}),
        }
    }

    /// One table: the latest turn's calls → the plan.
    #[test]
    fn where_a_run_resumes() {
        let before = checkpoint(3, 2, None);
        let plan = |calls: Option<Vec<CallRecord>>| match plan_resume(
            checkpoint(9, 3, calls),
            Some(before.clone()),
        ) {
            Ok(ResumePlan::FromCompleted(c)) => format!("from {}", c.revision),
            Ok(ResumePlan::RetryTurn { from, steps_used }) => {
                format!("retry from {} with {steps_used} used", from.revision)
            }
            Ok(ResumePlan::CloseTurn(c)) => format!("close {}", c.revision),
            Err(RunError::NeedsReconciliation(calls)) => format!(
                "reconcile {}",
                calls
                    .iter()
                    .map(|c| c.call_id.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            Err(e) => format!("error {e}"),
        };
        let refused = || CallState::Refused { why: "no".into() };
        let cases: Vec<(Option<Vec<CallRecord>>, &str)> = vec![
            (None, "from 9"),
            (
                Some(vec![call("a", refused()), call("b", CallState::Proposed)]),
                "retry from 3 with 3 used",
            ),
            (
                Some(vec![call("a", answered()), call("b", CallState::Proposed)]),
                "close 9",
            ),
            (
                Some(vec![call("a", answered()), call("b", CallState::Attempted)]),
                "reconcile b",
            ),
            (
                Some(vec![call("a", CallState::Interrupted { why: "x".into() })]),
                "reconcile a",
            ),
            (
                Some(vec![call(
                    "a",
                    CallState::Reconciled {
                        verdict: Verdict::DidNotHappen,
                        note: None,
                    },
                )]),
                "retry from 3 with 3 used",
            ),
            (
                Some(vec![call(
                    "a",
                    CallState::Reconciled {
                        verdict: Verdict::Happened,
                        note: None,
                    },
                )]),
                "close 9",
            ),
            (
                Some(vec![call(
                    "a",
                    CallState::StoppedPartway { why: "x".into() },
                )]),
                "close 9",
            ),
        ];
        for (calls, expect) in cases {
            assert_eq!(plan(calls.clone()), expect, "{calls:?}");
        }
    }

    #[test]
    fn a_reconciliation_is_a_new_revision_of_an_uncertain_call_only() {
        let mut ledger = MemoryLedger::new("r");
        ledger.save(&checkpoint(1, 0, None)).unwrap();
        ledger
            .save(&checkpoint(
                2,
                1,
                Some(vec![call("a", answered()), call("b", CallState::Attempted)]),
            ))
            .unwrap();
        assert!(matches!(
            reconcile(&mut ledger, "a", Verdict::Happened, None),
            Err(ReconcileError::NotUncertain { .. })
        ));
        assert!(matches!(
            reconcile(&mut ledger, "zz", Verdict::Happened, None),
            Err(ReconcileError::NoSuchCall { .. })
        ));
        let saved = reconcile(
            &mut ledger,
            "b",
            Verdict::Happened,
            Some("the file is there".into()),
        )
        .unwrap();
        assert_eq!(saved.revision, 3);
        assert_eq!(ledger.checkpoints().len(), 3);
        let turn = saved.pending().unwrap();
        assert_eq!(turn.uncertain().count(), 0);
        let (text, is_error) = closing_text(&turn.calls[1].state).unwrap();
        assert!(!is_error);
        assert!(text.ends_with("Their note: the file is there"), "{text}");
    }
}
