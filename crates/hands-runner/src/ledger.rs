//! The checkpoint ledger: every step of a run saved so a run can be resumed after its process
//! ends — only from the end of a completed turn, and never by repeating an action.
//!
//! A checkpoint holds the whole conversation as sent and received (blocks and items verbatim),
//! the requests used, and, while a turn's calls run, which calls were attempted and which
//! completed. It is saved after each response (the batch known, nothing attempted), before and
//! after each effect, and once the turn is answered. A checkpoint left `pending` says exactly
//! which effects may have happened: reconcile them with the real world before starting again —
//! it never authorises repeating one.
//!
//! Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" (the ledger
//! paragraphs).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Whether a checkpoint ends a completed turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CheckpointStatus {
    /// Every call of the last turn is answered: a run may resume from here.
    Completed,
    /// A turn's calls are running: these were attempted, these completed.
    Pending {
        /// Calls started (their effects may have happened).
        attempted_call_ids: Vec<String>,
        /// Calls that finished.
        completed_call_ids: Vec<String>,
    },
}

/// One saved state of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Format version: 1.
    pub version: u32,
    /// `messages` or `responses`.
    pub api: String,
    /// Requests used so far.
    pub steps_used: u32,
    /// The step limit of the run.
    pub max_steps: u32,
    /// Completed, or pending with the calls attempted and completed.
    #[serde(flatten)]
    pub status: CheckpointStatus,
    /// The conversation, as the API side of the runner keeps it.
    pub conversation: Value,
}

impl Checkpoint {
    /// The current format version.
    pub const VERSION: u32 = 1;

    /// Whether a run may resume from it.
    pub fn resumable(&self) -> bool {
        self.version == Checkpoint::VERSION && self.status == CheckpointStatus::Completed
    }
}

/// Why a checkpoint could not be saved or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// The storage failed.
    #[error("the ledger could not save or read {path}: {source}")]
    Io {
        /// Where.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The stored checkpoint is not one.
    #[error("{path} holds no valid checkpoint: {why}")]
    Invalid {
        /// Where.
        path: PathBuf,
        /// Why.
        why: String,
    },
}

/// Stores checkpoints. Each save receives its own complete copy. A run whose checkpoint cannot
/// be saved stops: it could not be resumed safely.
pub trait Ledger: Send {
    /// Saves one checkpoint.
    fn save(&mut self, checkpoint: Checkpoint) -> Result<(), LedgerError>;
}

/// The latest checkpoint in a JSON file, replaced atomically (written beside it, synced, then
/// renamed over it), so a crash leaves the previous checkpoint or the new one, never half of one.
#[derive(Debug, Clone)]
pub struct FileLedger {
    path: PathBuf,
}

impl FileLedger {
    /// A ledger at `path`.
    pub fn new(path: impl Into<PathBuf>) -> FileLedger {
        FileLedger { path: path.into() }
    }

    /// Reads the checkpoint saved at `path`.
    pub fn load(path: &Path) -> Result<Checkpoint, LedgerError> {
        let text = std::fs::read_to_string(path).map_err(|source| LedgerError::Io {
            path: path.to_owned(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|e| LedgerError::Invalid {
            path: path.to_owned(),
            why: e.to_string(),
        })
    }
}

impl Ledger for FileLedger {
    fn save(&mut self, checkpoint: Checkpoint) -> Result<(), LedgerError> {
        let io = |source| LedgerError::Io {
            path: self.path.clone(),
            source,
        };
        let tmp = self.path.with_extension("tmp");
        let body = serde_json::to_vec(&checkpoint).map_err(|e| LedgerError::Invalid {
            path: self.path.clone(),
            why: e.to_string(),
        })?;
        let mut file = std::fs::File::create(&tmp).map_err(io)?;
        file.write_all(&body).map_err(io)?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&tmp, &self.path).map_err(io)
    }
}

/// Every checkpoint in memory, in order (for tests and for callers that store elsewhere).
#[derive(Debug, Clone, Default)]
pub struct MemoryLedger {
    saved: Arc<Mutex<Vec<Checkpoint>>>,
}

impl MemoryLedger {
    /// An empty ledger; clones share its checkpoints.
    pub fn new() -> MemoryLedger {
        MemoryLedger::default()
    }

    /// The checkpoints saved so far.
    pub fn checkpoints(&self) -> Vec<Checkpoint> {
        self.saved.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Ledger for MemoryLedger {
    fn save(&mut self, checkpoint: Checkpoint) -> Result<(), LedgerError> {
        self.saved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(checkpoint);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_file_ledger_keeps_the_latest_checkpoint_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.ledger.json");
        let mut ledger = FileLedger::new(&path);
        let mut checkpoint = Checkpoint {
            version: Checkpoint::VERSION,
            api: "messages".into(),
            steps_used: 1,
            max_steps: 20,
            status: CheckpointStatus::Pending {
                attempted_call_ids: vec!["toolu_1".into()],
                completed_call_ids: vec![],
            },
            conversation: json!({"messages": []}),
        };
        ledger.save(checkpoint.clone()).unwrap();
        assert!(!FileLedger::load(&path).unwrap().resumable());
        checkpoint.status = CheckpointStatus::Completed;
        ledger.save(checkpoint.clone()).unwrap();
        let loaded = FileLedger::load(&path).unwrap();
        assert_eq!(loaded, checkpoint);
        assert!(loaded.resumable());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"status\":\"completed\""), "{text}");
        std::fs::write(&path, "{").unwrap();
        assert!(matches!(
            FileLedger::load(&path),
            Err(LedgerError::Invalid { .. })
        ));
    }
}
