//! Test-only X11 client for hands' tier-3 tests: a window that shows a known colour pattern,
//! holds the input focus, and records every pointer and keyboard event it receives, so a test can
//! assert what an application really got rather than what a driver says it sent.
//!
//! It is not a driver and injects nothing; it is a dev-dependency only. It speaks the core X
//! protocol through x11rb, translating key events the way the protocol specifies (and re-reading
//! the keyboard mapping on every MappingNotify, as a driver that binds spare keycodes requires).
//!
//! ```no_run
//! # fn demo(display: &str) -> Result<(), hands_testkit::RecorderError> {
//! use hands_testkit::{EventKind, InputRecorder};
//!
//! let recorder = InputRecorder::start(display)?; // full screen, mapped, drawn, focused
//! // … drive the display with the code under test …
//! let events = recorder.sync()?; // everything the server sent before this call
//! let presses = events.iter().filter(|e| e.kind == EventKind::ButtonPress).count();
//! assert_eq!(recorder.typed_text(), "");
//! # let _ = presses; Ok(()) }
//! ```
//!
//! Layout: [`pattern`] (the colours, a pure function of the position), `events` (what is
//! recorded), `keyboard` (the mapping copy and the core translation rules), `recorder` (the
//! client and its event thread), `clients` (real Xlib and GTK clients built from C, the five
//! layouts, and a CPU load generator).

mod clients;
mod events;
mod keyboard;
pub mod pattern;
mod recorder;
pub mod texts;

pub use clients::{ClientError, CpuLoad, GtkText, Layout, XlibKeys, XlibPress};
pub use events::{BUTTON1_MASK, EventKind, InputEvent, typed_text};
pub use pattern::{Pattern, channel_distance};
pub use recorder::{Area, InputRecorder, RecorderConfig, RecorderError};
