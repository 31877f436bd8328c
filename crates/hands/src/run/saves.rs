//! How long a run's checkpoint saves took: a [`Ledger`] wrapper that times each `save`, and the
//! `ledger` line it adds at the end of the run's `log.jsonl` (`{"kind": "ledger", "store":
//! "sqlite"|"external", "save_ms": [..]}`), which the fleet benchmark reads to put the SQLite
//! ledger's saves beside PostgreSQL's, episode by episode.

use std::io::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use hands_runner::ledger::{Checkpoint, Ledger, LedgerError, RunEnd};

/// The durations of the saves of one run, in milliseconds, in order.
#[derive(Debug, Clone, Default)]
pub struct SaveTimes(Arc<Mutex<Vec<f64>>>);

impl SaveTimes {
    /// The saves so far.
    pub fn take(&self) -> Vec<f64> {
        self.0
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default()
    }

    /// Appends the `ledger` line of the saves so far to `dir/log.jsonl` (after the runner's own
    /// lines: the runner, which owns the log's writer, has finished with it).
    pub fn log(&self, dir: &Path, store: &str) {
        let line = serde_json::json!({"kind": "ledger", "store": store, "save_ms": self.take()});
        let written = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join("log.jsonl"))
            .and_then(|mut f| writeln!(f, "{line}"));
        if let Err(e) = written {
            tracing::warn!(error = %e, "could not write the saves' timings");
        }
    }
}

/// A ledger whose saves are timed into a [`SaveTimes`].
pub struct Timed {
    pub inner: Box<dyn Ledger>,
    pub times: SaveTimes,
}

impl Ledger for Timed {
    fn run_id(&self) -> &str {
        self.inner.run_id()
    }

    fn save(&mut self, checkpoint: &Checkpoint) -> Result<(), LedgerError> {
        let started = Instant::now();
        let saved = self.inner.save(checkpoint);
        if let Ok(mut times) = self.times.0.lock() {
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        saved
    }

    fn latest_revision(&mut self) -> Result<u64, LedgerError> {
        self.inner.latest_revision()
    }

    fn latest(&mut self) -> Result<Option<Checkpoint>, LedgerError> {
        self.inner.latest()
    }

    fn latest_completed(&mut self) -> Result<Option<Checkpoint>, LedgerError> {
        self.inner.latest_completed()
    }

    fn record_end(&mut self, end: &RunEnd) -> Result<(), LedgerError> {
        self.inner.record_end(end)
    }

    fn end(&mut self) -> Result<Option<RunEnd>, LedgerError> {
        self.inner.end()
    }
}
