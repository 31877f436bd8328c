//! The two client tools Claude uses beside the computer toolset, executed in the sandbox:
//! the bash tool `bash_20250124` (a shell session that persists across calls, with a timeout
//! and an output cap, stdout, stderr and the exit status kept apart) and the text editor tool
//! `text_editor_20250728` (`view`, `create`, `str_replace`, `insert`, with the reference
//! implementation's texts).
//!
//! Spec: claude-computer-use-tool, quick start, which declares both tools beside
//! `computer_toolset_20260801`; anchors computer-use §1 for what the reference demo does.
//!
//! Each tool offers the same shape to a runner: `declaration()` for the request's `tools`
//! array, and `call(input, cancel)` turning a `tool_use` input into a [`ToolOutcome`] (text and
//! `is_error`). A bad input, a missing file or a timed-out command is an `is_error` outcome the
//! model reads, never a panic and never a failed loop. Under `call`, typed layers are public
//! too: [`BashInput`] / [`EditorCommand`] parsed from the input, and `run` / `execute` with
//! typed errors.
//!
//! This crate is not a security boundary: the shell runs as the calling user, and the
//! editor's root only keeps the editor's own paths in place. One thing it does guard: the shell
//! starts from an allow-list of the caller's environment variables, and never with one whose
//! name looks like a credential (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, any `…KEY`, `…TOKEN`,
//! `…SECRET`, `…PASSWORD`; see [`bash::env`]), so a model reading the shell's environment finds
//! no key of the caller's. It knows nothing of the Messages
//! API beyond the two declarations and the tools' input objects, and nothing of other toolsets.
//!
//! ```no_run
//! # async fn demo() {
//! use hands_sandbox::{BashConfig, BashTool, EditorConfig, EditorTool};
//! use serde_json::json;
//! use tokio_util::sync::CancellationToken;
//!
//! let cancel = CancellationToken::new();
//! let mut bash = BashTool::new(BashConfig::default());
//! bash.call(&json!({"command": "cd /tmp && export GREETING=hi"}), &cancel).await;
//! let outcome = bash.call(&json!({"command": "echo $GREETING from $(pwd)"}), &cancel).await;
//! assert_eq!(outcome.text, "hi from /tmp");
//!
//! let mut editor = EditorTool::new(EditorConfig::default()).unwrap();
//! let outcome = editor
//!     .call(&json!({"command": "view", "path": "/etc/hostname"}), &cancel)
//!     .await;
//! assert!(outcome.text.starts_with("Here's the result of running `cat -n` on /etc/hostname:"));
//! # }
//! ```
//!
//! Layout: `bash/` (the tool, the shell process in `session.rs`, marker detection and the
//! output cap in `capture.rs`, the inherited environment in `env.rs`), `editor/` (the tool, input parsing in `command.rs`, path checks
//! in `paths.rs`, directory listing in `listing.rs`, the pure text edits in `text.rs`),
//! `strings.rs` (every exact text), `input.rs` (field readers and [`InputError`]).

pub mod bash;
pub mod editor;
pub mod input;
pub mod outcome;
pub mod strings;

pub use bash::{
    BashConfig, BashError, BashInput, BashReply, BashTool, CommandOutput, Inherit, StreamText,
};
pub use editor::{
    EditorCommand, EditorConfig, EditorConfigError, EditorError, EditorRoot, EditorTool,
};
pub use input::InputError;
pub use outcome::ToolOutcome;
