//! Every checkpoint in memory, in order: for tests, and for callers that store elsewhere.

use std::sync::{Arc, Mutex, MutexGuard};

use super::{Checkpoint, CheckpointStatus, Ledger, LedgerError, RunEnd};

#[derive(Debug, Default)]
struct Inner {
    saved: Vec<Checkpoint>,
    end: Option<RunEnd>,
}

/// Every checkpoint of one run in memory; clones share them. It keeps the rules of a ledger
/// (revisions in order, one identity) but not the data past the process.
#[derive(Debug, Clone)]
pub struct MemoryLedger {
    run_id: String,
    inner: Arc<Mutex<Inner>>,
}

impl MemoryLedger {
    /// An empty ledger for run `run_id`.
    pub fn new(run_id: impl Into<String>) -> MemoryLedger {
        MemoryLedger {
            run_id: run_id.into(),
            inner: Arc::default(),
        }
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The checkpoints saved so far.
    pub fn checkpoints(&self) -> Vec<Checkpoint> {
        self.inner().saved.clone()
    }

    /// How the run ended, if recorded.
    pub fn end(&self) -> Option<RunEnd> {
        self.inner().end.clone()
    }
}

impl Ledger for MemoryLedger {
    fn run_id(&self) -> &str {
        &self.run_id
    }

    fn save(&mut self, checkpoint: &Checkpoint) -> Result<(), LedgerError> {
        let mut inner = self.inner();
        check_next(
            &self.run_id,
            inner.saved.last().map(|c| (c.revision, &c.identity)),
            checkpoint,
        )?;
        inner.saved.push(checkpoint.clone());
        inner.end = None;
        Ok(())
    }

    fn latest_revision(&mut self) -> Result<u64, LedgerError> {
        Ok(self.inner().saved.last().map_or(0, |c| c.revision))
    }

    fn latest(&mut self) -> Result<Option<Checkpoint>, LedgerError> {
        Ok(self.inner().saved.last().cloned())
    }

    fn latest_completed(&mut self) -> Result<Option<Checkpoint>, LedgerError> {
        Ok(self
            .inner()
            .saved
            .iter()
            .rev()
            .find(|c| c.status == CheckpointStatus::Completed)
            .cloned())
    }

    fn record_end(&mut self, end: &RunEnd) -> Result<(), LedgerError> {
        self.inner().end = Some(end.clone());
        Ok(())
    }

    fn end(&mut self) -> Result<Option<RunEnd>, LedgerError> {
        Ok(self.inner().end.clone())
    }
}

/// The rules every ledger keeps: its own run, the next revision, the identity it started with.
/// `last` is the latest saved revision and its identity, `None` before the first save. Ledgers
/// kept outside this crate (hands-fleet's PostgreSQL one) check saves with it too.
pub fn check_next(
    run_id: &str,
    last: Option<(u64, &super::RunIdentity)>,
    checkpoint: &Checkpoint,
) -> Result<(), LedgerError> {
    if checkpoint.identity.run_id != run_id {
        return Err(LedgerError::Refused(format!(
            "this ledger keeps run {run_id}, not {}",
            checkpoint.identity.run_id
        )));
    }
    let expected = last.map_or(1, |(revision, _)| revision + 1);
    if checkpoint.revision != expected {
        return Err(LedgerError::Refused(format!(
            "revision {} out of order: the next revision of run {run_id} is {expected}",
            checkpoint.revision
        )));
    }
    if let Some((_, identity)) = last
        && let Some(change) = checkpoint.identity.changes_from(identity).first()
    {
        return Err(LedgerError::Refused(format!(
            "a run keeps its identity: {change}"
        )));
    }
    Ok(())
}
