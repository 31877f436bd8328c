//! The checkpoint ledger: every step of a run saved so it can be resumed after its process ends
//! (kill -9 included) — only from the end of a completed turn, and never by repeating an action.
//!
//! A [`Checkpoint`] carries the run's [`RunIdentity`] (run id, API, model, step limit, the tool
//! declarations and their fingerprint), its revision (1, 2, 3 … in save order), the requests
//! used, and the conversation. It is `Completed` at the end of a turn whose calls are all
//! answered, else `Pending` with a [`PendingTurn`]: each call of the turn with its
//! [`CallState`] (proposed, attempted, answered, refused, interrupted, reconciled) and the
//! answers recorded so far. The runner saves one when the turn's response arrives, before and
//! after each effect, and once the turn is answered; an action interrupted mid-turn (cancelled
//! or failed during its effect) never yields a completed checkpoint.
//!
//! Resuming ([`crate::Runner::resume`]) starts from the latest checkpoint: a completed one as
//! is; a pending one with no uncertain call is closed (answered calls keep their recorded
//! answers, calls never started are answered as not executed — nothing runs again), or, when
//! nothing of the turn took effect, dropped and its request sent again; a pending one with an
//! uncertain call is refused until a person [`reconcile`]s it with what really happened.
//!
//! A run that declares remote MCP servers saves a pending checkpoint before each request, with
//! the request as a record of its own ([`MCP_REQUEST_RECORD`], attempted): the servers may act
//! while the request is under way, so a run stopped before its response arrived is reconciled
//! by a person, never sent again by itself. On OpenAI each `mcp_approval_request` of a turn is a
//! record too ([`MCP_APPROVAL_RECORD`]), answered by the approver's `mcp_approval_response`.
//!
//! Storage: [`SqliteLedger`] (embedded SQLite in WAL mode with synchronous commits, one owner
//! per run by a lock file, every checkpoint kept, images and large blocks stored once by
//! SHA-256) and [`MemoryLedger`] (tests). Tool declarations are saved sanitised
//! ([`sanitize`]): MCP server URLs as SHA-256 fingerprints, without authorization or headers,
//! code-interpreter secrets without their values.
//!
//! Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" (the ledger
//! paragraphs), "Combinar acciones del navegador con otras herramientas".

pub mod blobs;
mod identity;
mod memory;
mod plan;
pub mod sanitize;
mod sqlite;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use identity::{IdentityChange, RunIdentity};
pub use memory::{MemoryLedger, check_next};
pub use plan::{
    MCP_REQUEST_HAPPENED, NOT_STARTED_ANSWER, RESUMED_NOTE, ReconcileError, ResumePlan,
    closing_text, mcp_request_note, plan_resume, reconcile, reconciled_answer,
};
pub use sqlite::{LedgerLock, RunReport, SaveStats, SqliteLedger};

/// The name of the [`CallRecord`] of a request that declares remote MCP servers: attempted
/// before it is sent, answered when its response arrives, interrupted when the run stops before
/// the turn begins. Its input names the servers.
///
/// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución": "Una ejecución
/// que incluye herramientas MCP guarda un punto de control pendiente antes de cada solicitud
/// … No se puede reanudar automáticamente desde el punto de control pendiente."
pub const MCP_REQUEST_RECORD: &str = "mcp_request";

/// The name of the [`CallRecord`] of an OpenAI `mcp_approval_request`: proposed when its
/// response arrives, answered with the `mcp_approval_response` the approver chose. Asking is no
/// effect: one never answered is asked again when the run resumes.
pub const MCP_APPROVAL_RECORD: &str = "mcp_approval_request";

/// One saved state of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// Which run, and what it must be resumed with.
    pub identity: RunIdentity,
    /// 1 for the first checkpoint of the run, then one more for each save.
    pub revision: u64,
    /// Requests used so far.
    pub steps_used: u32,
    /// Completed, or pending with the calls of the turn under way.
    pub status: CheckpointStatus,
    /// The conversation, as the API side of the runner keeps it. For a pending checkpoint: as
    /// it was when the turn's response arrived (the answers are in the [`PendingTurn`]).
    pub conversation: Value,
}

impl Checkpoint {
    /// The pending turn, if the checkpoint is pending.
    pub fn pending(&self) -> Option<&PendingTurn> {
        match &self.status {
            CheckpointStatus::Completed => None,
            CheckpointStatus::Pending(turn) => Some(turn),
        }
    }
}

/// Whether a checkpoint ends a completed turn.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckpointStatus {
    /// Every call of the last turn is answered: a run may resume from here as is.
    Completed,
    /// A turn's calls are under way.
    Pending(PendingTurn),
}

/// The calls of a turn under way.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PendingTurn {
    /// Whether the response proposing the calls had fully arrived (false while an eagerly
    /// executed stream was still arriving: later calls may be missing).
    pub response_complete: bool,
    /// The calls, in response order.
    pub calls: Vec<CallRecord>,
}

impl PendingTurn {
    /// The calls whose outcome nobody knows: attempted (the process stopped during them) or
    /// interrupted. A run cannot resume until each is reconciled.
    pub fn uncertain(&self) -> impl Iterator<Item = &CallRecord> {
        self.calls.iter().filter(|c| c.state.is_uncertain())
    }

    /// Whether some call of the turn took effect, or may have.
    pub fn any_effect(&self) -> bool {
        self.calls.iter().any(|c| c.state.may_have_taken_effect())
    }

    /// The record of `call_id`.
    pub fn call_mut(&mut self, call_id: &str) -> Option<&mut CallRecord> {
        self.calls.iter_mut().find(|c| c.call_id == call_id)
    }

    /// Whether the turn is only a request to MCP servers whose response never began a turn.
    pub fn only_mcp_request(&self) -> bool {
        !self.calls.is_empty() && self.calls.iter().all(CallRecord::is_mcp_request)
    }
}

/// One call of a pending turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The call id (`toolu_…`, `call_…`).
    pub call_id: String,
    /// The tool or member (`bash`, `left_click`, `computer_call`, a function name).
    pub name: String,
    /// Its input as the model sent it (shown to the person reconciling).
    pub input: Value,
    /// Where it stands.
    pub state: CallState,
}

impl CallRecord {
    /// Whether it stands for a request to MCP servers ([`MCP_REQUEST_RECORD`]), not a call.
    pub fn is_mcp_request(&self) -> bool {
        self.name == MCP_REQUEST_RECORD
    }

    /// Whether it stands for an MCP approval request ([`MCP_APPROVAL_RECORD`]).
    pub fn is_mcp_approval(&self) -> bool {
        self.name == MCP_APPROVAL_RECORD
    }
}

/// Where one call stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum CallState {
    /// Proposed by the model; not started.
    Proposed,
    /// Started: its effect may have happened, and nothing was recorded since.
    Attempted,
    /// Finished, with the answer the model gets (the API's own JSON: a `tool_result` block or
    /// an output item).
    Answered {
        /// The answer.
        answer: Value,
    },
    /// The run stopped at this call before it could take any effect (an approval refused,
    /// invalid arguments).
    Refused {
        /// Why.
        why: String,
    },
    /// The run stopped at this call after part of it ran, and what ran is known (a computer
    /// call whose later action was refused).
    StoppedPartway {
        /// Why, and what ran.
        why: String,
    },
    /// Cancelled or failed during its effect: what happened is unknown.
    Interrupted {
        /// Why.
        why: String,
    },
    /// A person checked what an uncertain call did.
    Reconciled {
        /// What they found.
        verdict: Verdict,
        /// What they added, if anything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
}

impl CallState {
    /// Attempted or interrupted: nobody knows what it did.
    pub fn is_uncertain(&self) -> bool {
        matches!(self, CallState::Attempted | CallState::Interrupted { .. })
    }

    /// Whether it took effect or may have.
    pub fn may_have_taken_effect(&self) -> bool {
        match self {
            CallState::Proposed | CallState::Refused { .. } => false,
            CallState::Reconciled { verdict, .. } => *verdict == Verdict::Happened,
            _ => true,
        }
    }

    /// A short name for listings.
    pub fn label(&self) -> &'static str {
        match self {
            CallState::Proposed => "not started",
            CallState::Attempted => "UNCERTAIN (started, no outcome recorded)",
            CallState::Answered { .. } => "done",
            CallState::Refused { .. } => "refused (did not run)",
            CallState::StoppedPartway { .. } => "stopped part-way",
            CallState::Interrupted { .. } => "UNCERTAIN (interrupted)",
            CallState::Reconciled {
                verdict: Verdict::Happened,
                ..
            } => "reconciled: happened",
            CallState::Reconciled {
                verdict: Verdict::DidNotHappen,
                ..
            } => "reconciled: did not happen",
        }
    }
}

/// What a person found when they checked an uncertain call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// It took effect.
    Happened,
    /// It did not.
    DidNotHappen,
}

/// How a run ended, for listings (`hands runs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "end", content = "why", rename_all = "snake_case")]
pub enum RunEnd {
    /// The model finished.
    Finished,
    /// The step limit was reached.
    StepLimit,
    /// The run stopped (why).
    Stopped(String),
}

/// Why a checkpoint could not be saved or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// The database failed.
    #[error("the ledger {path} failed: {source}")]
    Sqlite {
        /// Which database.
        path: String,
        /// Why.
        source: rusqlite::Error,
    },
    /// A file operation failed.
    #[error("the ledger {path} failed: {source}")]
    Io {
        /// Which file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Another process owns the run.
    #[error(
        "the run in {path} is owned by {}: one process at a time may write a run; wait for it to end, or stop it, then try again",
        match .pid { Some(pid) => format!("process {pid}"), None => "another process".to_owned() }
    )]
    Owned {
        /// The ledger.
        path: String,
        /// The owner's process id, when the lock file names it.
        pid: Option<u32>,
    },
    /// The stored data is not a checkpoint this version can read.
    #[error("{path} holds no valid ledger: {why}")]
    Invalid {
        /// Where.
        path: String,
        /// Why.
        why: String,
    },
    /// A save out of order, or for another run: the ledger keeps one run, in revision order.
    #[error("checkpoint refused: {0}")]
    Refused(String),
    /// Fenced: another worker holds this episode now (a shared ledger's lease expired, or a
    /// newer epoch claimed it). Nothing of the save was kept; the writer must stop acting on the
    /// episode at once — its new holder resumes it.
    #[error(
        "fenced: another worker holds episode {episode} now (this writer's epoch {epoch} is stale or its lease expired); nothing was saved, stop acting on it"
    )]
    Fenced {
        /// The episode.
        episode: String,
        /// The epoch this writer claimed it with.
        epoch: u64,
    },
    /// A ledger store other than SQLite failed (a database server, its connection).
    #[error("the ledger {store} failed: {source}")]
    Store {
        /// Which store, as its owner names it (never with a password).
        store: String,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Stores a run's checkpoints. Each save receives its own complete checkpoint; a ledger keeps
/// one run, every revision of it, in order. A run whose checkpoint cannot be saved stops: it
/// could not be resumed safely.
pub trait Ledger: Send {
    /// The run it keeps.
    fn run_id(&self) -> &str;

    /// Durably saves `checkpoint`, whose revision must be one more than the last saved.
    fn save(&mut self, checkpoint: &Checkpoint) -> Result<(), LedgerError>;

    /// The last revision saved (0 when none).
    fn latest_revision(&mut self) -> Result<u64, LedgerError>;

    /// The latest checkpoint.
    fn latest(&mut self) -> Result<Option<Checkpoint>, LedgerError>;

    /// The latest completed checkpoint.
    fn latest_completed(&mut self) -> Result<Option<Checkpoint>, LedgerError>;

    /// Records how the run ended (for listings, and so a finished run is not resumed); a later
    /// save clears it.
    fn record_end(&mut self, end: &RunEnd) -> Result<(), LedgerError>;

    /// How the run ended, when its process recorded it after its latest save.
    fn end(&mut self) -> Result<Option<RunEnd>, LedgerError>;
}
