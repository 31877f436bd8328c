//! What can go wrong, mapped to the exception classes of the Python module `hands.errors` (so
//! one hierarchy serves the native module and the pure-Python adapters).

use pyo3::prelude::*;
use pyo3::types::PyType;

/// A failure of a driver operation, by what the caller should do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The operation was cancelled before it finished.
    #[error("the operation was cancelled")]
    Cancelled,
    /// Xvfb, Chromium or a program could not be started.
    #[error("{0}")]
    Start(String),
    /// No jail can be made here; the text says what to do (incl. `sandbox="none"`).
    #[error("{0}")]
    SandboxUnavailable(String),
    /// An argument is invalid (the model's or the caller's); the text is safe to show.
    #[error("{0}")]
    Argument(String),
    /// The display or its connection is gone: stop the run.
    #[error("{0}")]
    DesktopGone(String),
    /// A desktop action failed; the text is safe to show the model.
    #[error("{0}")]
    Action(String),
    /// A recoverable browser failure whose text is safe to show the model.
    #[error("{0}")]
    BrowserRefused(String),
    /// Any other browser failure: the model should see a generic message.
    #[error("{0}")]
    BrowserFailed(String),
    /// The browser or its connection is gone: stop the run.
    #[error("{0}")]
    BrowserGone(String),
    /// A saved sign-in (`state=`) could not be opened or saved: no key, a wrong key, a changed
    /// file, a bad name.
    #[error("{0}")]
    State(String),
}

impl Error {
    /// The class in `hands.errors`.
    fn class(&self) -> &'static str {
        match self {
            Error::Cancelled => "CancelledError",
            Error::Start(_) => "StartError",
            Error::SandboxUnavailable(_) => "SandboxUnavailable",
            Error::Argument(_) => "ArgumentError",
            Error::DesktopGone(_) => "DesktopGone",
            Error::Action(_) => "ActionError",
            Error::BrowserRefused(_) => "BrowserRefused",
            Error::BrowserFailed(_) => "BrowserFailed",
            Error::BrowserGone(_) => "BrowserGone",
            Error::State(_) => "StateError",
        }
    }
}

impl From<Error> for PyErr {
    fn from(error: Error) -> PyErr {
        Python::attach(|py| {
            let class = py
                .import("hands.errors")
                .and_then(|m| m.getattr(error.class()))
                .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
            match class {
                Ok(class) => PyErr::from_type(class, error.to_string()),
                Err(e) => e,
            }
        })
    }
}
