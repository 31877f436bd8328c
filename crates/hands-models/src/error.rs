//! Typed errors: HTTP errors from the API with their raw body, mid-stream failures, transport.

use std::fmt;
use std::time::Duration;

/// Which API a request went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI Responses API.
    OpenAi,
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Provider::Anthropic => "Anthropic",
            Provider::OpenAi => "OpenAI",
        })
    }
}

/// Anything that can go wrong while calling a model API.
///
/// A request is retried (per [`crate::RetryPolicy`]) before one of these is returned; a failure
/// after the first streamed event is never retried (see [`StreamError`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The API answered with an HTTP error status.
    #[error(transparent)]
    Api(Box<ApiError>),
    /// A streamed response failed after it had started.
    #[error(transparent)]
    Stream(Box<StreamError>),
    /// No HTTP response arrived: connection refused or reset before any response byte, or DNS.
    #[error(
        "could not reach the {provider} API at {url} ({attempts} attempt(s)): {}; check the base URL and the network",
        chain(source)
    )]
    Connection {
        /// Which API.
        provider: Provider,
        /// The endpoint that was called.
        url: String,
        /// How many times the request was sent.
        attempts: u32,
        /// The last transport error.
        #[source]
        source: reqwest::Error,
    },
    /// The response (or its headers, for a stream) did not arrive in time.
    #[error(
        "the {provider} API did not answer within {timeout:?} ({attempts} attempt(s)); raise the request timeout or retry later"
    )]
    Timeout {
        /// Which API.
        provider: Provider,
        /// The timeout that ran out.
        timeout: Duration,
        /// How many times the request was sent.
        attempts: u32,
    },
    /// The caller's cancellation token fired.
    #[error("the {provider} request was cancelled")]
    Cancelled {
        /// Which API.
        provider: Provider,
    },
    /// A success response whose body is not what the API documents.
    #[error(
        "the {provider} API answered HTTP {status} with a body that is not a valid {what}: {reason}"
    )]
    Decode {
        /// Which API.
        provider: Provider,
        /// HTTP status of the response.
        status: u16,
        /// What was expected ("Message", "Response").
        what: &'static str,
        /// The parser's message.
        reason: String,
        /// The raw body, kept for the log.
        raw_body: String,
    },
    /// Configuration is missing or invalid (API key, base URL, header values).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The request could not be sent as given (nothing went on the wire).
    #[error("the {provider} request was not sent: {reason}")]
    InvalidRequest {
        /// Which API.
        provider: Provider,
        /// What was wrong and what to do.
        reason: String,
    },
}

impl Error {
    /// The API error, when the API answered with an error status.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Error::Api(api) => Some(api),
            _ => None,
        }
    }

    /// The stream failure, when a streamed response failed after it started.
    pub fn stream(&self) -> Option<&StreamError> {
        match self {
            Error::Stream(stream) => Some(stream),
            _ => None,
        }
    }

    /// How many times the request was sent before this error (its retries included); `None`
    /// when unknown (cancelled, or refused before sending).
    pub fn attempts(&self) -> Option<u32> {
        match self {
            Error::Api(api) => Some(api.attempts),
            Error::Connection { attempts, .. } | Error::Timeout { attempts, .. } => Some(*attempts),
            _ => None,
        }
    }

    /// Whether trying again later may succeed. Only a hint for callers: this crate has already
    /// applied its retry policy, and never retries a stream that delivered events.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Api(api) => api.is_retryable(),
            Error::Stream(stream) => stream.is_transient(),
            Error::Connection { .. } | Error::Timeout { .. } => true,
            _ => false,
        }
    }
}

/// What kind of API error this is, from the HTTP status and the body's error type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApiErrorKind {
    /// 400: the request is malformed or breaks a rule (`invalid_request_error`).
    InvalidRequest,
    /// 401: missing or wrong API key.
    Authentication,
    /// 403: the key may not use this resource.
    Permission,
    /// 404: unknown model or endpoint.
    NotFound,
    /// 408: the server timed out waiting for the request.
    RequestTimeout,
    /// 409: a conflict, retryable.
    Conflict,
    /// 413: the request is over the size limit.
    RequestTooLarge,
    /// 429: rate limited; retryable.
    RateLimit,
    /// 429 that is not retryable: OpenAI `insufficient_quota`, Anthropic
    /// `enforced_spend_limit_reached`.
    QuotaExceeded,
    /// 529 or `overloaded_error`: the API is overloaded.
    Overloaded,
    /// Other 5xx.
    Server,
    /// Any other status.
    Other,
}

/// An HTTP error answer from the API, with everything the API said about it.
///
/// Anthropic: `{"type":"error","error":{"type","message","details"?},"request_id"}`.
/// OpenAI: `{"error":{"message","type","param","code"}}` (api-contracts.md A and B, "Errors").
#[derive(Debug, Clone, thiserror::Error)]
#[error("{provider} API error: HTTP {status}{}{}{}{}",
    opt_prefix(" ", error_type.as_deref()),
    opt_prefix(" ", code.as_deref().filter(|code| Some(*code) != error_type.as_deref())),
    opt_prefix(": ", message.as_deref()),
    opt_wrap(" (request id ", request_id.as_deref(), ")"))]
#[non_exhaustive]
pub struct ApiError {
    /// Which API answered.
    pub provider: Provider,
    /// HTTP status.
    pub status: u16,
    /// `error.type` of the body.
    pub error_type: Option<String>,
    /// `error.code` (OpenAI) or `error.details.error_code` (Anthropic).
    pub code: Option<String>,
    /// `error.message` of the body.
    pub message: Option<String>,
    /// `error.param` (OpenAI).
    pub param: Option<String>,
    /// The request id header (`request-id` or `x-request-id`) or the body's `request_id`.
    pub request_id: Option<String>,
    /// The wait the server asked for (`retry-after-ms`, then `retry-after`).
    pub retry_after: Option<Duration>,
    /// The `x-should-retry` header, when present.
    pub should_retry: Option<bool>,
    /// The body exactly as received (lossy UTF-8).
    pub raw_body: String,
    /// How many times the request was sent, this answer included.
    pub attempts: u32,
}

/// An error and its sources on one line (reqwest's top message alone is vague).
pub(crate) fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(inner) = source {
        out.push_str(": ");
        out.push_str(&inner.to_string());
        source = inner.source();
    }
    out
}

fn opt_prefix(prefix: &str, value: Option<&str>) -> String {
    value.map(|v| format!("{prefix}{v}")).unwrap_or_default()
}

fn opt_wrap(prefix: &str, value: Option<&str>, suffix: &str) -> String {
    value
        .map(|v| format!("{prefix}{v}{suffix}"))
        .unwrap_or_default()
}

/// OpenAI's non-retryable 429 code (api-contracts.md B, "Errors").
pub const OPENAI_INSUFFICIENT_QUOTA: &str = "insufficient_quota";
/// Anthropic's non-retryable 429 `error.details.error_code` (api-contracts.md A, "Errors").
pub const ANTHROPIC_SPEND_LIMIT_REACHED: &str = "enforced_spend_limit_reached";
/// Anthropic's `error.type` for an overloaded API (HTTP 529 or a mid-stream error).
pub const ANTHROPIC_OVERLOADED_ERROR: &str = "overloaded_error";

impl ApiError {
    /// Classifies the error from its status and body.
    pub fn kind(&self) -> ApiErrorKind {
        if self.is_quota_exceeded() {
            return ApiErrorKind::QuotaExceeded;
        }
        if self.error_type.as_deref() == Some(ANTHROPIC_OVERLOADED_ERROR) {
            return ApiErrorKind::Overloaded;
        }
        match self.status {
            400 => ApiErrorKind::InvalidRequest,
            401 => ApiErrorKind::Authentication,
            403 => ApiErrorKind::Permission,
            404 => ApiErrorKind::NotFound,
            408 => ApiErrorKind::RequestTimeout,
            409 => ApiErrorKind::Conflict,
            413 => ApiErrorKind::RequestTooLarge,
            429 => ApiErrorKind::RateLimit,
            529 => ApiErrorKind::Overloaded,
            500..=599 => ApiErrorKind::Server,
            _ => ApiErrorKind::Other,
        }
    }

    /// A quota or spend limit: retrying cannot help until a person acts.
    pub fn is_quota_exceeded(&self) -> bool {
        self.code.as_deref() == Some(OPENAI_INSUFFICIENT_QUOTA)
            || self.error_type.as_deref() == Some(OPENAI_INSUFFICIENT_QUOTA)
            || self.code.as_deref() == Some(ANTHROPIC_SPEND_LIMIT_REACHED)
    }

    /// Whether the retry policy would retry this answer (ignoring the attempt count).
    pub fn is_retryable(&self) -> bool {
        crate::retry::is_retryable(self.status, self.should_retry, self.is_quota_exceeded())
    }
}

/// A streamed response that failed after it started. Never retried by this crate: the caller
/// may already have acted on delivered events (an eagerly executed output item), so only the
/// caller can decide whether a new request is safe.
#[derive(Debug, thiserror::Error)]
#[error("{provider} stream failed after {events_delivered} event(s): {kind}")]
#[non_exhaustive]
pub struct StreamError {
    /// Which API.
    pub provider: Provider,
    /// How many events had been handed to the caller before the failure.
    pub events_delivered: usize,
    /// What went wrong.
    #[source]
    pub kind: StreamErrorKind,
    /// The request id of the stream's HTTP response.
    pub request_id: Option<String>,
}

impl StreamError {
    /// Whether a new request may succeed (the API said overloaded, or the connection dropped).
    pub fn is_transient(&self) -> bool {
        match &self.kind {
            StreamErrorKind::ErrorEvent { error_type, .. } => matches!(
                error_type.as_deref(),
                Some(
                    ANTHROPIC_OVERLOADED_ERROR | "api_error" | "rate_limit_error" | "server_error"
                )
            ),
            StreamErrorKind::Transport(_)
            | StreamErrorKind::IdleTimeout(_)
            | StreamErrorKind::Ended => true,
            _ => false,
        }
    }
}

/// The ways a stream fails.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StreamErrorKind {
    /// The API sent an `error` event.
    #[error("the API sent an error event{}{}{}",
        opt_prefix(" ", error_type.as_deref()),
        opt_prefix(" ", code.as_deref()),
        opt_prefix(": ", message.as_deref()))]
    ErrorEvent {
        /// `error.type` (Anthropic) or `type`/`code` (OpenAI).
        error_type: Option<String>,
        /// `code` (OpenAI).
        code: Option<String>,
        /// `message`.
        message: Option<String>,
        /// The event's data exactly as received.
        raw: String,
    },
    /// Reading the body failed (the connection dropped).
    #[error("the connection dropped: {}", chain(.0))]
    Transport(#[source] reqwest::Error),
    /// No bytes arrived for this long.
    #[error("no data for {0:?}")]
    IdleTimeout(Duration),
    /// The body ended before the terminal event (`message_stop`, `response.completed`...).
    #[error("the stream ended before its final event")]
    Ended,
    /// An event's data is not the JSON the API documents.
    #[error("event {event_type:?} is malformed: {reason}")]
    Malformed {
        /// The event type.
        event_type: String,
        /// What was wrong.
        reason: String,
    },
    /// Events arrived in an order the protocol does not allow.
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// OpenAI: the final response holds a different item at an index already delivered by
    /// `response.output_item.done`. The caller may have executed the delivered one.
    #[error("output item {output_index} changed after it was delivered as done")]
    ItemChanged {
        /// The output index.
        output_index: usize,
    },
}

/// Configuration that cannot work.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// No API key in the config or the environment.
    #[error(
        "no {provider} API key: set {env_var} (or pass a key in the config); without a key, try `hands drill`"
    )]
    MissingApiKey {
        /// Which API.
        provider: Provider,
        /// The environment variable that was read.
        env_var: &'static str,
    },
    /// The base URL cannot be parsed or is not http(s).
    #[error("invalid {provider} base URL {url:?}: {reason}")]
    InvalidBaseUrl {
        /// Which API.
        provider: Provider,
        /// The URL as given.
        url: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A header value (API key, beta name, user agent) holds characters HTTP forbids.
    #[error("invalid value for header {header}: {reason}")]
    InvalidHeader {
        /// The header name.
        header: &'static str,
        /// Why it was rejected (the value itself is not repeated: it may be a key).
        reason: String,
    },
    /// The HTTP client could not be built.
    #[error("could not build the HTTP client: {0}")]
    Client(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(status: u16, error_type: Option<&str>, code: Option<&str>) -> ApiError {
        ApiError {
            provider: Provider::Anthropic,
            status,
            error_type: error_type.map(str::to_owned),
            code: code.map(str::to_owned),
            message: Some("m".into()),
            param: None,
            request_id: Some("req_1".into()),
            retry_after: None,
            should_retry: None,
            raw_body: String::new(),
            attempts: 1,
        }
    }

    #[test]
    fn kinds_follow_status_and_body() {
        let cases = [
            (
                400,
                Some("invalid_request_error"),
                None,
                ApiErrorKind::InvalidRequest,
                false,
            ),
            (
                401,
                Some("authentication_error"),
                None,
                ApiErrorKind::Authentication,
                false,
            ),
            (403, None, None, ApiErrorKind::Permission, false),
            (404, None, None, ApiErrorKind::NotFound, false),
            (408, None, None, ApiErrorKind::RequestTimeout, true),
            (409, None, None, ApiErrorKind::Conflict, true),
            (
                413,
                Some("request_too_large"),
                None,
                ApiErrorKind::RequestTooLarge,
                false,
            ),
            (
                429,
                Some("rate_limit_error"),
                None,
                ApiErrorKind::RateLimit,
                true,
            ),
            (
                429,
                Some("rate_limit_error"),
                Some(ANTHROPIC_SPEND_LIMIT_REACHED),
                ApiErrorKind::QuotaExceeded,
                false,
            ),
            (
                429,
                Some(OPENAI_INSUFFICIENT_QUOTA),
                Some(OPENAI_INSUFFICIENT_QUOTA),
                ApiErrorKind::QuotaExceeded,
                false,
            ),
            (500, Some("api_error"), None, ApiErrorKind::Server, true),
            (503, None, None, ApiErrorKind::Server, true),
            (
                529,
                Some("overloaded_error"),
                None,
                ApiErrorKind::Overloaded,
                true,
            ),
            (418, None, None, ApiErrorKind::Other, false),
        ];
        for (status, error_type, code, kind, retryable) in cases {
            let err = api_error(status, error_type, code);
            assert_eq!(err.kind(), kind, "status {status}");
            assert_eq!(err.is_retryable(), retryable, "status {status}");
        }
    }

    #[test]
    fn display_names_status_type_message_and_request_id() {
        let err = api_error(400, Some("invalid_request_error"), None);
        assert_eq!(
            err.to_string(),
            "Anthropic API error: HTTP 400 invalid_request_error: m (request id req_1)"
        );
        let err = api_error(429, Some("insufficient_quota"), Some("insufficient_quota"));
        assert_eq!(
            err.to_string(),
            "Anthropic API error: HTTP 429 insufficient_quota: m (request id req_1)"
        );
    }
}
