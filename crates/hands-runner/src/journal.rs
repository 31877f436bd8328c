//! The run's journal: an optional sink that sees every request and response body, every action
//! with its timing, and every image, so a caller can keep a run directory (JSONL log and
//! screenshots). Unlike diagnostics, it receives content; it belongs to the caller, never to a
//! public log.

use std::time::Duration;

use hands_core::image::EncodedImage;
use serde_json::Value;

/// One journal entry.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Entry<'a> {
    /// A request about to be sent (the body, images included).
    Request {
        /// Step number, from 1.
        step: u32,
        /// The JSON body.
        body: &'a Value,
    },
    /// A response received.
    Response {
        /// Step number.
        step: u32,
        /// The JSON body.
        body: &'a Value,
        /// How long the request took, retries included.
        duration: Duration,
        /// HTTP attempts.
        attempts: u32,
    },
    /// One tool call or action done.
    Action {
        /// Step number.
        step: u32,
        /// The call id.
        call_id: &'a str,
        /// The tool or member.
        name: &'a str,
        /// Whether it failed or was refused.
        is_error: bool,
        /// A short summary of the result (text results; never images).
        summary: &'a str,
        /// How long it took.
        duration: Duration,
    },
    /// A person had the wheel and gave it back ([`crate::wheel`]): the note the next request
    /// carries.
    HandOff {
        /// The requests made before it.
        step: u32,
        /// The note, as the model reads it.
        note: &'a str,
    },
    /// An image returned to the model.
    Image {
        /// Step number.
        step: u32,
        /// The call id it answers.
        call_id: &'a str,
        /// The image.
        image: &'a EncodedImage,
    },
}

/// Receives journal entries. Called synchronously; keep it quick.
pub trait Journal: Send {
    /// Records one entry.
    fn record(&mut self, entry: Entry<'_>);
}
