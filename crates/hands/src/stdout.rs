//! Standard output that its reader may close early (`hands read URL | head`, `hands runs | head`).
//!
//! Rust ignores `SIGPIPE`, so a write to a closed pipe fails with `EPIPE`, and `println!` panics
//! on it. The convention here is that of ripgrep and most Unix filters: a reader that has seen
//! enough ends the command quietly with exit status 0. Commands write through [`Out`] with
//! `writeln!(out, …)?`; a closed pipe becomes [`StdoutError::Closed`], which `main` turns into a
//! quiet success ([`closed_early`]). `SIGPIPE` is left ignored, so the programs hands starts and
//! its own pipes to them (CDP, the jail) keep reporting `EPIPE` as an error, not a kill.

use std::fmt;
use std::io::{self, StdoutLock, Write as _};

/// Why a line could not be written to stdout.
#[derive(Debug, thiserror::Error)]
pub enum StdoutError {
    /// The reader closed the pipe: the command ends quietly, exit 0.
    #[error("stdout was closed by its reader")]
    Closed,
    /// Any other write failure (a full disk behind a redirect, …).
    #[error("writing to stdout: {0}")]
    Other(#[source] io::Error),
}

impl From<io::Error> for StdoutError {
    fn from(e: io::Error) -> StdoutError {
        if e.kind() == io::ErrorKind::BrokenPipe {
            StdoutError::Closed
        } else {
            StdoutError::Other(e)
        }
    }
}

/// Locked stdout for `writeln!`, every line flushed so a closed reader is noticed at once.
pub struct Out(StdoutLock<'static>);

impl Out {
    /// Stdout, locked for this command.
    pub fn lock() -> Out {
        Out(io::stdout().lock())
    }

    /// What `writeln!(out, …)` calls: writes and flushes `args`.
    pub fn write_fmt(&mut self, args: fmt::Arguments<'_>) -> Result<(), StdoutError> {
        self.0.write_fmt(args)?;
        self.0.flush()?;
        Ok(())
    }
}

/// Whether `error` is stdout closed by its reader, which ends a command quietly with exit 0.
pub fn closed_early(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|e| matches!(e.downcast_ref::<StdoutError>(), Some(StdoutError::Closed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_broken_pipe_is_a_quiet_end() {
        let closed = anyhow::Error::from(StdoutError::from(io::Error::from(
            io::ErrorKind::BrokenPipe,
        )))
        .context("listing runs");
        assert!(closed_early(&closed));
        let full = anyhow::Error::from(StdoutError::from(io::Error::other("disk full")));
        assert!(!closed_early(&full));
        // A broken pipe to a browser or a jail is a fault, not stdout's reader leaving.
        let cdp = anyhow::Error::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(!closed_early(&cdp));
    }
}
