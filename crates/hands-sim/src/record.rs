//! What the simulator saw and decided: one record per request, and running counters.

use serde_json::Value;

use crate::error::{Api, ApiError};
use crate::faults::Fault;

/// The simulator's decision on one request.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Valid; answered with a turn.
    Accepted {
        /// Whether the answer was an SSE stream.
        stream: bool,
    },
    /// Refused as the real API would refuse it (400, 401, 404, 413).
    Rejected(ApiError),
    /// Answered by an injected fault. `violation` is what validation found, so a broken
    /// request is never hidden behind a fault.
    Faulted {
        /// The fault that answered.
        fault: Fault,
        /// The rule the request broke, if any.
        violation: Option<ApiError>,
    },
    /// The request was valid but the turn source failed: no scripted turn left, the wrong
    /// protocol's turn, a call to an undeclared tool, a panic. Answered with a 400 whose
    /// message starts `hands-sim:`; a bug in the test or drill, not in the client.
    PolicyFailed(String),
}

impl Verdict {
    /// The rule the request broke, whether it was answered with it or with a fault.
    pub fn violation(&self) -> Option<&ApiError> {
        match self {
            Verdict::Rejected(error) => Some(error),
            Verdict::Faulted { violation, .. } => violation.as_ref(),
            _ => None,
        }
    }
}

/// One request as received, secrets removed, with the verdict and the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    /// 0 for the first request the server saw.
    pub seq: u64,
    /// The protocol, when the path named one.
    pub api: Option<Api>,
    /// HTTP method.
    pub method: String,
    /// Request path.
    pub path: String,
    /// Headers, lower-case names; `x-api-key` and `authorization` values are `[redacted]`.
    pub headers: Vec<(String, String)>,
    /// The JSON body, `Value::Null` when it was not JSON.
    pub body: Value,
    /// When the request continued a `thread`: the whole conversation it was checked as (the
    /// held history, then the body's `messages`).
    pub thread_conversation: Option<Vec<Value>>,
    /// The decision.
    pub verdict: Verdict,
    /// HTTP status of the answer (0 when the connection was dropped before one).
    pub status: u16,
    /// The answer: the error body, the message or response object (for a stream, the
    /// object the events add up to), or `None` when the connection was dropped first.
    pub response: Option<Value>,
}

impl RecordedRequest {
    /// The value of a header, by lower-case name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Running totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Requests received.
    pub requests: u64,
    /// Requests answered with a turn.
    pub accepted: u64,
    /// Requests refused by a rule.
    pub rejected: u64,
    /// Requests answered by a fault.
    pub faulted: u64,
    /// Requests whose turn source failed.
    pub policy_failures: u64,
    /// Answers sent as SSE streams.
    pub streams: u64,
    /// Requests that broke a rule, whether answered by the rule or by a fault.
    pub violations: u64,
}

impl Counters {
    pub(crate) fn count(&mut self, verdict: &Verdict) {
        self.requests += 1;
        match verdict {
            Verdict::Accepted { stream } => {
                self.accepted += 1;
                self.streams += u64::from(*stream);
            }
            Verdict::Rejected(_) => self.rejected += 1,
            Verdict::Faulted { .. } => self.faulted += 1,
            Verdict::PolicyFailed(_) => self.policy_failures += 1,
        }
        self.violations += u64::from(verdict.violation().is_some());
    }
}
