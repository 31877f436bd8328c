//! A strict stand-in for the model APIs: a real HTTP server on 127.0.0.1 that speaks the
//! Anthropic Messages API (`POST /v1/messages`) and the OpenAI Responses API
//! (`POST /v1/responses`), streaming included, and **rejects what the real APIs reject**, with
//! their error shapes: an unanswered `tool_use`, a toolset result without `toolset_name`, an
//! image over the size limits, a fifth cache breakpoint, legacy fields on the toolset entry,
//! a replayed thinking block or reasoning blob that was changed, an unacknowledged safety
//! check, a `previous_response_id` that was never stored, a user message after a turn paused
//! with `pause_turn` (which goes back last, unchanged), an output for a call that did not
//! complete, an MCP approval nobody asked for, `context_management` without its beta or with an
//! unknown edit, a forged compaction item, an unknown effort, and more (see [`messages`]).
//!
//! Context management is applied, not only checked: Anthropic's `clear_tool_uses_20250919`
//! clears old tool results from what the model sees and the cache hashes (so a clearing costs
//! cache writes, and `applied_edits` says what went); OpenAI's `compaction` opens the response
//! with a sealed compaction item over its threshold, and the items before a replayed one are no
//! longer billed; Anthropic's `compact_20260112` edit (beta `compact-2026-01-12`) opens the
//! answer with a signed `compaction` block over its trigger (alone, with `stop_reason:
//! "compaction"`, under `pause_after_compaction`), the `compaction` parameter (beta
//! `compact-2026-09-04`) answers with that block alone, and what a replayed block summarizes is
//! dropped from the prompt. Prompt caching is modelled by prefix: Anthropic reads up to the breakpoints it
//! has seen (20-block lookback) and writes up to the last one; OpenAI caches automatically.
//!
//! Turns can end the ways the real APIs end them: `max_tokens`, `refusal`, `pause_turn`,
//! `model_context_window_exceeded`; an `incomplete` response; calls left `in_progress` or
//! `incomplete`; items a request did not declare (an `mcp_approval_request` without an MCP
//! tool), so a test fails when a client acts on them.
//!
//! Turns come from a script ([`SimConfig::scripted`], [`SimHandle::push_turn`]) or from a
//! [`Policy`] that looks at each request; the server fills in ids, signatures, usage and
//! `stop_reason`. Faults ([`Fault`]) inject 429/500/529 answers, dropped connections and
//! mid-stream errors. Every request is recorded with its verdict ([`SimHandle::requests`],
//! [`SimHandle::violations`]).
//!
//! It is not a model, and not a mirror of hands' own clients: it works on raw JSON and
//! depends on no other hands crate, so it checks the clients instead of agreeing with them.
//! It never calls a real API.
//!
//! Spec: api-contracts A and B; claude-computer-use-tool, "Acciones por lotes",
//! "Parámetros de la herramienta", "Dimensiona las capturas de pantalla…", "Gestionar el
//! historial de capturas de pantalla".
//!
//! # Why hyper without axum
//! Two fixed routes need no router, and a dropped stream needs control over the body: a
//! body that fails mid-way makes hyper cut the connection without the closing chunk, which is
//! exactly the fault to inject. hyper (http1, server) and hyper-util (TokioIo) are the least
//! that does that; axum would add tower, matchit and its extractors on top of the same hyper.
//! The server runs on a thread of its own with a current-thread runtime, so it serves callers
//! on any runtime (a paused test clock included) or none.
//!
//! # Layout
//! - `server`: the thread, the accept loop, recording, [`SimServer`] and [`SimHandle`].
//! - `anthropic/`, `openai/`: per API, `validate` (the rules), `mod` (the turn and the
//!   answer), `stream` (the SSE events).
//! - [`messages`]: every error text; [`toolsets`]: toolset types and members;
//!   [`images`]: header sniffing; `tokens`: token estimates and the prompt-cache model;
//!   `sign`: ids and the keyed hash behind signatures.
//!
//! # Example
//! ```
//! use std::io::{Read, Write};
//! use hands_sim::{SimConfig, SimServer, Turn};
//!
//! let server = SimServer::start(SimConfig::scripted(vec![Turn::text("Done.")]))?;
//! let body = r#"{"model":"claude-opus-5","max_tokens":1024,
//!     "messages":[{"role":"user","content":"Say done."}]}"#;
//! let mut tcp = std::net::TcpStream::connect(server.addr())?;
//! write!(tcp, "POST /v1/messages HTTP/1.1\r\nhost: sim\r\nx-api-key: k\r\n\
//!     anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n\
//!     content-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())?;
//! let mut answer = String::new();
//! tcp.read_to_string(&mut answer)?;
//! assert!(answer.starts_with("HTTP/1.1 200"));
//! assert!(answer.contains(r#""stop_reason":"end_turn""#));
//! assert_eq!(server.counters().accepted, 1);
//! assert!(server.violations().is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod anthropic;
pub mod config;
mod error;
pub mod faults;
pub mod images;
mod mcp;
pub mod mcp_fixture;
mod member_inputs;
pub mod messages;
mod openai;
pub mod policy;
pub mod record;
mod remote_mcp;
mod server;
mod sign;
mod sse;
mod tokens;
pub mod toolsets;

pub use config::{AnthropicConfig, ImageTier, OpenAiConfig, SimConfig, StreamConfig};
pub use error::{Api, ApiError, SimError};
pub use faults::Fault;
pub use mcp_fixture::McpFixture;
pub use policy::{Policy, Turn};
pub use record::{Counters, RecordedRequest, Verdict};
pub use server::{SimHandle, SimServer};
