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
//! Where the tools act (issue 17, items 1 and 3; spec: Claude computer use, "Precauciones" 1,
//! and its bash and text editor tools): the shell is started through a
//! [`hands_jail::Launcher`] ([`BashConfig::launcher`]): the host by default (`--sandbox none`),
//! the episode's jail when the caller gives one. The editor's file operations happen in this
//! process; under configured roots ([`EditorConfig::roots`], e.g. `/home/user` →
//! `<episode>/home`, `/workspace` → `<episode>/workspace`) "everything hands itself touches in
//! the workspace … is opened beneath a directory fd without following symlinks": each
//! operation is an `openat2` beneath the root's fd with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`, and each write a temporary file renamed over
//! its target, so a symlink a jailed program swaps in never leads a write out of the root.
//! With no root and the host launcher (the defaults) nothing is confined: the shell runs as
//! the calling user and the editor uses paths as given.
//!
//! One thing this crate guards in every mode: the shell starts from an allow-list of the
//! caller's environment variables, and never with one whose name looks like a credential
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, any `…KEY`, `…TOKEN`, `…SECRET`, `…PASSWORD`; see
//! [`bash::env`]), so a model reading the shell's environment finds no key of the caller's. It
//! knows nothing of the Messages API beyond the two declarations and the tools' input objects,
//! and nothing of other toolsets.
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
//! output cap in `capture.rs`, the inherited environment in `env.rs`), `editor/` (the tool,
//! input parsing in `command.rs`, mapping a path to a root in `paths.rs`, the operations
//! beneath a root's fd in `beneath.rs`, directory listing in `listing.rs`, the pure text edits
//! in `text.rs`),
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
