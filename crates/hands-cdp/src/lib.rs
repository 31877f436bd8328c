//! The Chromium driver of hands: [`CdpBrowser`] implements hands-core's
//! [`Browser`](hands_core::browser::Browser) trait over the DevTools Protocol.
//!
//! What it does:
//! - launches Debian's headless `/usr/bin/chromium` on a fresh profile through a
//!   [`hands_jail::Launcher`] (the host, or a jail of its own), speaking CDP over the two pipes of
//!   `--remote-debugging-pipe` so it opens no DevTools port at all (issue 17), the process group
//!   killed on drop and by a parent-death signal; or attaches to a `ws://` endpoint it then
//!   leaves alone;
//! - speaks CDP itself with flat sessions over either transport ([`connection`]), thin serde
//!   types for the methods it uses ([`protocol`]) and a raw `call` for the rest;
//! - auto-attaches every target paused (pages, pop-ups, out-of-process frames, workers, service
//!   workers), turns request interception and its own auto-attach on, and only then lets it run,
//!   so the [`RequestPolicy`] sees every request — each redirect hop, pop-ups, frames, workers,
//!   subresources — before it leaves ([`policy`]);
//! - reads a page in one DOM walk of its own script in an isolated world, with refs bound to
//!   (tab, document, generation) here and to the node itself in the page, re-checked right before
//!   any action ([`refs`]);
//! - acts with real input (`Input.dispatchMouseEvent`, `dispatchKeyEvent`, `insertText`) after a
//!   hit test, and settles by events, each capped ([`SettleConfig`]): an action aimed at an
//!   element waits for what it caused (its DOM changes, the requests it started and the page's
//!   answer to them) and no longer when it changed nothing; navigations and the rest wait for
//!   load, network idle and DOM quiet. An animation (an attribute changed every frame, CSS,
//!   canvas) is not a change to wait for.
//!
//! What it is not: a surface. It reports raw truth (full URLs, titles); the toolset decides
//! what the model sees, asks for consent and applies the URL policy before a call reaches it.
//!
//! ```no_run
//! use hands_cdp::{CdpBrowser, DriverConfig};
//! use hands_core::browser::{Browser, ReadFilter};
//! use hands_core::browser::args::PageUrl;
//! use hands_core::CancellationToken;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let mut browser = CdpBrowser::launch(DriverConfig::default()).await?;
//! let cancel = CancellationToken::new();
//! let url = PageUrl::parse("url", "http://127.0.0.1:8000/")?;
//! browser.navigate(&url, None, &cancel).await?;
//! let read = browser.read_page(ReadFilter::All, None, &cancel).await?;
//! println!("{read:?}");
//! # Ok(()) }
//! ```
//!
//! Decisions worth knowing:
//! - **Two walls for the network policy.** Request interception (`Fetch`, request stage) on
//!   every target sees every request and redirect hop before it leaves. It does not see
//!   WebSocket handshakes (neither does `Network.setBlockedURLs`; measured on Chromium 156) nor
//!   the browser's own traffic (update checks, account look-ups, which this Chromium makes despite
//!   its quiet flags): a launched browser therefore also sends every connection through a local
//!   [`proxy`] that checks the policy per connection ([`DriverConfig::network_proxy`]), and
//!   that does every name resolution: the browser itself resolves none.
//! - **A launched browser cannot leak** past the policy: its fresh profile turns WebRTC's UDP
//!   and all preloading (DNS prefetch, preconnect, speculation rules) off, and FedCM and the
//!   Payment Request API (whose requests the browser sends itself, unseen by interception) are
//!   disabled ([`launch`]).
//! - **An attached browser** has no proxy and keeps its own settings. It gets interception on
//!   every target and browser-wide (a sandboxed `srcdoc` frame's requests), prerendering off,
//!   and a page fence ([`PAGE_FENCE_JS`]) that removes WebRTC, payments and FedCM from every
//!   document. It cannot be kept from: WebSocket handshakes, a cross-origin speculation-rules
//!   prefetch, name resolution (DNS prefetch, preconnect), WebRTC in pages loaded before the
//!   driver attached, the browser's own traffic. Launch the browser when that matters.
//! - **Service workers** are attached paused like any target and intercepted; their own
//!   requests (at install, or on behalf of a page) are checked. Dedicated workers have no `Fetch`
//!   domain: their requests go through their frame's interception (tested). A target whose
//!   interception cannot be turned on stays paused (fail closed).
//! - **Cross-origin frames** are not read (the page agent cannot reach into them): a read
//!   reports `frame_limit`. Pointer input over them works (the browser routes it).
//! - **Refs** are `e<n>`/`s<n>` from one session counter that only grows; the agent keeps a
//!   `WeakRef` per ref with the role, label and document address it was issued with.
//! - **What gets a ref**: every control (native or ARIA), and every element a person can operate
//!   only because of JavaScript: a handler of its own (found by [`LISTENERS_JS`], a listener log
//!   in each document's main world, probed once per read), a pointer cursor where a handler
//!   listens above it (delegation), a tab stop; never what is hidden from people (`aria-hidden`,
//!   `inert`, zero size, covered). Each element has a kind (`link`, `clickable`, …) that maps to
//!   one of the spec's seven roles in `BrowserReadV1` (links and clickables are `button`).
//! - **`type`** on a target replaces the field's content (empty text clears it); without a
//!   target it types at the focused element's caret. A file input is a `button`: a click opens
//!   a chooser that `upload_file` fills.
//! - **Clicks on refs** are real mouse input at a hit-tested point of the element, and the
//!   press is guarded: if the page moved between finding the point and the press (a late
//!   banner, an animation), the stray press, its release and its click are stopped in the
//!   capture phase before the page sees them, and the point is found again (three attempts,
//!   then [`CLICK_KEPT_MISSING`]). A click never lands on what the model did not name.
//! - **Dialogs** (`alert`, `confirm`, …) would block every read: alerts and `beforeunload` are
//!   accepted, `confirm` and `prompt` dismissed, and each is logged in the console history.
//! - **Drags** that start a native drag-and-drop (a selection, a draggable element) continue as
//!   intercepted drag events, so the page gets its `drop`.
//!
//! Layout: [`launch`] (the process), [`connection`], `transport` (the WebSocket and the pipes)
//! and [`protocol`] (CDP), `events` (the event loop, targets, tabs), [`policy`], `agent.js` (with
//! `refs.js` and `labels.js`) with `reads`, `refs` and `settle`, one module per member family
//! (`pointer`, `keyboard`, `forms`, `tabs`, `images`, `scripts`, `transfers`), [`files`] (grants)
//! and [`diagnostics`].

mod beneath;
pub mod config;
pub mod connection;
pub mod diagnostics;
pub mod dom_snapshot;
mod driver;
mod events;
pub mod files;
mod forms;
mod images;
mod keyboard;
pub mod keys;
pub mod launch;
mod members;
pub mod network_tap;
mod pointer;
pub mod policy;
pub mod protocol;
pub mod proxy;
pub mod reads;
pub mod refs;
pub mod saved_state;
pub mod screencast;
mod scripts;
mod settle;
pub mod state_file;
pub mod storage_state;
mod tabs;
mod transfers;
mod transport;
pub mod wheel;

pub use config::{DriverConfig, ReadLimits, SettleConfig, ValuePolicy};
pub use connection::{CdpError, Connection, Event, SessionId};
pub use driver::{AGENT_JS, CdpBrowser, StartError};
pub use events::{LISTENERS_JS, PAGE_FENCE_JS};
pub use files::{DownloadGrant, FileGrants, MemoryGrants, UploadGrant};
pub use forms::SET_CHECKED_REPLACED;
pub use images::{image_size, zoom_scale};
pub use keyboard::{TypedPiece, pieces};
pub use launch::{Chromium, LaunchConfig, LaunchError};
pub use pointer::CLICK_KEPT_MISSING;
pub use policy::{AllowAll, BlockedRequest, RequestInfo, RequestPolicy, Verdict};
pub use scripts::script_text;
pub use settle::Settled;
pub use tabs::{BLOCKED_NET_ERROR, NAVIGATION_BLOCKED};
