//! `hands-view`: a run of hands in a local web page. It reads a run directory (`log.jsonl` and
//! `images/`, as `hands run` writes them) into steps — the model's text, each action with its
//! arguments, timing and result, the screenshots before and after with the click point or drag
//! path drawn — and, for a live run, holds the approvals the runner waits on until the person
//! clicks Approve or Deny.
//!
//! A finished run also travels as one file, a trace ([`trace`]): `hands runs export` writes it,
//! and [`serve`] given the file serves it as it serves the directory.
//!
//! What it is not: a runner or an approver of its own. It knows no model API types (the log's
//! JSON is read as JSON) and no runner trait: `hands` adapts its approvals to [`Live::ask`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), hands_view::ViewError> {
//! let view = hands_view::serve(std::path::Path::new("runs/run-1"), "127.0.0.1:0".parse().unwrap(), None).await?;
//! println!("open {}", view.url());
//! # Ok(()) }
//! ```

pub mod batch;
pub mod live;
pub mod server;
pub mod steps;
pub mod trace;
pub mod wheel;
mod wheel_api;

pub use batch::{BatchListing, BatchSource, EpisodeRecord, EpisodeRow, serve_batch};
pub use live::Live;
pub use server::{View, ViewError, serve};
