//! Clients for the model APIs hands drives: the Anthropic Messages API ([`anthropic`]) and the
//! OpenAI Responses API ([`openai`]). They move requests and responses exactly: content blocks
//! and output items are kept as the JSON text the API sent, so replaying them (thinking
//! signatures, redacted thinking, reasoning `encrypted_content`, block types added later)
//! sends the same bytes back.
//!
//! What this crate is not: it knows no driver, no toolset and no runner. Tool entries are JSON
//! values the toolsets build; tool inputs are handed out as JSON for the toolsets to parse.
//!
//! # Layout
//! - [`anthropic`]: `MessagesRequest`, `ContentBlock` (verbatim + typed view), `Message`,
//!   streaming events and the `MessageAccumulator`, the `AnthropicClient`.
//! - [`openai`]: `ResponsesRequest`, `Item` (verbatim + typed view), computer actions,
//!   `Response`, streaming events and the `ResponseAccumulator`, the `OpenAiClient`.
//! - [`retry`]: the [`RetryPolicy`]; [`error`]: [`Error`], [`ApiError`] (raw body kept),
//!   [`StreamError`]; [`http`]: [`HttpConfig`], [`CallMeta`]; [`sse`]: the event-stream parser;
//!   [`event_stream`]: the open stream both clients return.
//!
//! # Retries never repeat an action
//! A request is retried (408, 409, 429, 5xx, 529, and connection errors before any response
//! byte; `x-should-retry`, `retry-after-ms` and `retry-after` honoured) because sending it
//! again has no side effect. A stream that has delivered an event is never retried: the
//! runner may already have executed an item it received, so a mid-stream failure comes back
//! as [`Error::Stream`] and the caller decides.
//!
//! # HTTP stack
//! reqwest 0.13 with rustls on ring (no aws-lc-rs: it is heavy to build); [`sse::SseParser`]
//! is a small byte-level parser (see its module doc for why not `eventsource-stream`).
//!
//! # Example
//! ```no_run
//! use hands_models::anthropic::{AnthropicClient, MessageParam, MessagesRequest};
//! use hands_models::CancellationToken;
//!
//! # async fn run() -> Result<(), hands_models::Error> {
//! let client = AnthropicClient::from_env()?; // ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
//! let request = MessagesRequest::new("claude-opus-5-5", 1024,
//!     vec![MessageParam::user_text("Say hi")]);
//! let cancel = CancellationToken::new();
//! let mut stream = client.stream_message(&request, &cancel).await?;
//! while let Some(event) = stream.next().await {
//!     let _progress = event?; // live progress; the accumulator has applied it already
//! }
//! // (or `stream.finish().await?` to drain and get the message in one call)
//! # Ok(()) }
//! ```
//!
//! The pure parts run without a network:
//! ```
//! use hands_models::anthropic::{Block, ContentBlock};
//!
//! let json = r#"{"type":"thinking","thinking":"","signature":"EqQBCkgIARAB"}"#;
//! let block = ContentBlock::from_json(json).unwrap();
//! assert!(matches!(block.view(), Block::Thinking(t) if t.signature == "EqQBCkgIARAB"));
//! assert_eq!(serde_json::to_string(&block).unwrap(), json); // replayed byte for byte
//! ```

pub mod anthropic;
pub mod error;
pub mod event_stream;
pub mod http;
pub mod openai;
pub mod retry;
pub mod sse;
mod verbatim;

pub use error::{
    ApiError, ApiErrorKind, ConfigError, Error, Provider, StreamError, StreamErrorKind,
};
pub use http::{ApiKey, CallMeta, Completed, HttpConfig, RetryCause, RetryRecord};
pub use retry::RetryPolicy;
pub use tokio_util::sync::CancellationToken;
