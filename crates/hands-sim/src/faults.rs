//! Injected faults: error answers the real APIs give under load, dropped connections and
//! mid-stream errors, queued for the next requests.

use std::time::Duration;

use crate::error::{Api, ApiError};
use crate::messages;

/// One injected fault, consumed by one request.
///
/// Spec: api-contracts A "Errors" (429 `rate_limit_error`, 500 `api_error`, 529
/// `overloaded_error`, mid-stream `event: error`) and B "Errors" (429 `rate_limit_exceeded`
/// vs `insufficient_quota`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// 429 that may be retried after `retry_after`, sent as `retry-after-ms` and
    /// `retry-after` (whole seconds, rounded up). Anthropic `rate_limit_error`, OpenAI
    /// `rate_limit_exceeded`.
    RateLimited {
        /// How long the client should wait.
        retry_after: Duration,
    },
    /// 429 that must not be retried: OpenAI `insufficient_quota`; Anthropic
    /// `rate_limit_error` with `details.error_code: "enforced_spend_limit_reached"`.
    QuotaExhausted,
    /// Anthropic 529 `overloaded_error`; OpenAI 503 `server_error`.
    Overloaded,
    /// 500: Anthropic `api_error`, OpenAI `server_error`.
    ServerError,
    /// The connection is closed after this many SSE events, without an error event and
    /// without the end of the chunked body. A non-streaming request is closed before any
    /// answer.
    DropConnection {
        /// Events sent before the drop (pings included).
        after_events: usize,
    },
    /// After this many SSE events, an `event: error` (Anthropic `overloaded_error`, OpenAI
    /// `server_error`) ends the stream. A non-streaming request gets [`Fault::Overloaded`].
    StreamError {
        /// Events sent before the error event.
        after_events: usize,
    },
    /// The request is served — its server-side work done: declared MCP servers listed and
    /// called — and then answered with [`Fault::ServerError`]'s 500, as when the API fails
    /// after its tools ran. Sending the request again repeats that work, so a client must not
    /// retry a request that declares MCP tools.
    ServerErrorAfterTools,
}

impl Fault {
    /// A retryable 429 asking for a wait of `ms` milliseconds.
    pub fn rate_limited_ms(ms: u64) -> Fault {
        Fault::RateLimited {
            retry_after: Duration::from_millis(ms),
        }
    }

    /// The HTTP error this fault answers with, or `None` for the stream faults.
    pub(crate) fn http_error(&self, api: Api, streaming: bool) -> Option<ApiError> {
        match (self, api) {
            (Fault::RateLimited { retry_after }, _) => {
                let ms = retry_after.as_millis();
                let secs = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
                let error = match api {
                    Api::Anthropic => ApiError::new(
                        429,
                        "rate_limit_error",
                        "This request would exceed the rate limit for your organization. Please try again later.",
                    ),
                    Api::OpenAi => ApiError::new(
                        429,
                        "requests",
                        format!("Rate limit reached for requests. Please try again in {ms}ms."),
                    )
                    .code("rate_limit_exceeded"),
                };
                Some(
                    error
                        .header("retry-after-ms", ms.to_string())
                        .header("retry-after", secs.to_string()),
                )
            }
            (Fault::QuotaExhausted, Api::Anthropic) => Some(
                ApiError::new(
                    429,
                    "rate_limit_error",
                    "You have reached your specified API usage limits.",
                )
                .code("enforced_spend_limit_reached"),
            ),
            (Fault::QuotaExhausted, Api::OpenAi) => Some(
                ApiError::new(
                    429,
                    "insufficient_quota",
                    messages::OPENAI_INSUFFICIENT_QUOTA,
                )
                .code("insufficient_quota"),
            ),
            (Fault::Overloaded, Api::Anthropic) => {
                Some(ApiError::new(529, "overloaded_error", messages::OVERLOADED))
            }
            (Fault::Overloaded, Api::OpenAi) => Some(ApiError::new(
                503,
                "server_error",
                "The server is overloaded or not ready yet.",
            )),
            (Fault::ServerError, Api::Anthropic) => {
                Some(ApiError::new(500, "api_error", "Internal server error"))
            }
            (Fault::ServerError, Api::OpenAi) => Some(ApiError::new(
                500,
                "server_error",
                messages::OPENAI_SERVER_ERROR,
            )),
            (Fault::StreamError { .. }, _) if !streaming => {
                Fault::Overloaded.http_error(api, false)
            }
            (
                Fault::DropConnection { .. }
                | Fault::StreamError { .. }
                | Fault::ServerErrorAfterTools,
                _,
            ) => None,
        }
    }
}

/// A fault waiting in the queue, optionally only for one API.
#[derive(Clone, Debug)]
pub(crate) struct QueuedFault {
    pub(crate) fault: Fault,
    pub(crate) only: Option<Api>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limit_headers_round_seconds_up() {
        let error = Fault::rate_limited_ms(1500)
            .http_error(Api::Anthropic, false)
            .expect("http fault");
        assert_eq!(error.status, 429);
        assert_eq!(error.kind, "rate_limit_error");
        assert_eq!(
            error.headers,
            vec![
                ("retry-after-ms", "1500".to_owned()),
                ("retry-after", "2".to_owned())
            ]
        );
    }

    #[test]
    fn openai_quota_is_not_a_rate_limit() {
        let quota = Fault::QuotaExhausted
            .http_error(Api::OpenAi, false)
            .expect("http fault");
        let limit = Fault::rate_limited_ms(0)
            .http_error(Api::OpenAi, false)
            .expect("http fault");
        assert_eq!(quota.code, Some("insufficient_quota"));
        assert_eq!(limit.code, Some("rate_limit_exceeded"));
        assert!(quota.headers.is_empty());
    }

    #[test]
    fn stream_faults_have_no_http_answer_when_streaming() {
        let fault = Fault::StreamError { after_events: 3 };
        assert_eq!(fault.http_error(Api::Anthropic, true), None);
        assert_eq!(
            fault
                .http_error(Api::Anthropic, false)
                .map(|e| (e.status, e.kind)),
            Some((529, "overloaded_error"))
        );
        assert_eq!(
            Fault::DropConnection { after_events: 0 }.http_error(Api::OpenAi, false),
            None
        );
    }
}
