//! The agent loop of hands: a [`Runner`] sends the task to a model (Anthropic Messages or OpenAI
//! Responses), executes every call of each turn through the toolsets — the computer (Claude's
//! toolset or OpenAI's computer tool over a [`hands_core::Desktop`]), the browser toolset, bash
//! and the text editor, ordinary functions — answers them all, and repeats until the model stops
//! calling tools or the step limit is reached.
//!
//! What it owns: the validation of every answer before any of it runs (Claude's client tools
//! run only on `stop_reason: "tool_use"`; an OpenAI response and its calls must be `completed`
//! and declared), the step limit (the last allowed request cannot start new effects),
//! approvals of every effect — computer actions, bash, the text editor, ordinary functions
//! ([`approval`]), diagnostics records and usage totals ([`diagnostics`]),
//! cancellation between actions and into driver calls, screenshot history and cache breakpoints
//! ([`context`]), typed functions ([`functions`]), a journal for run directories ([`journal`]),
//! a checkpoint ledger that resumes a run after its process dies ([`ledger`]), and per-turn
//! and streaming control ([`control`]: [`Runner::iterate`] pauses each completed turn before its
//! deferred calls, for supplied outputs and appended text; events to an `on_event` callback;
//! which streamed calls run early, and independent functions run concurrently).
//! What it does not know: how a driver acts, or the wire JSON beyond what the model clients and
//! toolsets hand it.
//!
//! ```no_run
//! # async fn demo(desktop: Box<dyn hands_core::Desktop>) -> Result<(), Box<dyn std::error::Error>> {
//! use hands_models::anthropic::AnthropicClient;
//! use hands_runner::{AnthropicSettings, RunConfig, Runner, Toolbox};
//! use hands_toolset::computer::{ComputerConfig, ComputerToolset};
//!
//! let client = AnthropicClient::from_env()?;
//! let computer = ComputerToolset::new(desktop, ComputerConfig::default())?;
//! let runner = Runner::anthropic(client, AnthropicSettings::new("claude-opus-5-5"),
//!     Some(computer), Toolbox::default(), RunConfig::default());
//! let outcome = runner.run("Open the editor and write a haiku.", &Default::default()).await?;
//! println!("{:?} after {} steps: {}", outcome.status, outcome.steps, outcome.final_text);
//! # Ok(()) }
//! ```

pub mod anthropic;
pub mod approval;
mod checkpoint;
pub mod context;
pub mod control;
pub mod diagnostics;
mod eager;
pub mod edits;
mod executor;
pub mod functions;
mod items;
pub mod journal;
pub mod ledger;
pub mod mcp;
pub mod openai;
pub mod outcome;
mod runner;
mod server_blocks;
mod server_items;
mod session;
pub mod strict;
pub mod tools;
pub mod wheel;

pub use anthropic::AnthropicSettings;
pub use control::{EarlyDecision, EarlyExecution, RunEvent, Turn, TurnError, TurnStream};
pub use edits::{EditError, ParamsEdit, RunEdit};
pub use openai::OpenAiSettings;
pub use outcome::{ApiStop, RunError, RunOutcome, RunStatus, StopReason, UncertainCall};
pub use runner::{CloseStatus, DEFAULT_MAX_STEPS, RunConfig, Runner};
pub use session::{NOT_EXECUTED_RUN_STOPPED, NOT_EXECUTED_STEP_LIMIT, not_executed_turn_ended};
pub use tools::{BrowserCallOutcome, BrowserStop, BrowserTools, ClaudeBrowserTools, Toolbox};
