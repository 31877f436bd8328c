//! `hands-mcp`: an MCP server (on the official Rust SDK, rmcp) that gives any MCP client hands'
//! browser and desktop, within the client's token budget and with a person's consent.
//!
//! What it is: the browser toolset of `hands-toolset` (reads with refs, actions on refs, tabs,
//! scoped reads, console and network reads) and its computer toolset (screenshots, input at
//! screenshot coordinates, zoom) as MCP tools with input schemas and annotations; every response
//! fitted to a token budget ([`budget`]); consequential actions approved through MCP elicitation
//! or the server's `--approve` policy ([`consent`]); stdio and streamable HTTP on loopback,
//! protocol revisions `2026-07-28` and `2025-11-25` ([`server`]).
//!
//! What it is not: a driver (it takes any `hands_core` `Browser` / `Desktop`) or a policy of its
//! own (the URL policy and the origin allow-list are `hands run`'s).
//!
//! ```no_run
//! # async fn demo(browser: impl hands_core::browser::Browser + 'static) -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use hands_mcp::{BrowserSurface, ConsentSlot, HandsMcp, ServerConfig};
//! use hands_toolset::browser::OriginAllowList;
//!
//! let allow = OriginAllowList::new(&["https://example.com".to_owned()])?;
//! let slot = ConsentSlot::default();
//! let surface = BrowserSurface::new(browser, Arc::new(allow), slot.clone())?;
//! HandsMcp::new(ServerConfig::default(), Some(surface), None, slot)?
//!     .serve_stdio()
//!     .await?;
//! # Ok(()) }
//! ```

pub mod browser;
pub mod budget;
pub mod consent;
pub mod desktop;
pub mod read_form;
pub mod server;
pub mod tools;

pub use browser::{BrowserCalls, BrowserSurface, OpenBrowser, OpenError};
pub use budget::{Budget, DEFAULT_MAX_TOKENS};
pub use consent::{ApprovePolicy, ConsentSlot};
pub use desktop::DesktopSurface;
pub use server::{HandsMcp, PROTOCOL_VERSIONS, ServeError, ServerConfig};
