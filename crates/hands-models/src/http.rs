//! The HTTP layer both clients share: TLS setup, sending with retries, error bodies, chunked
//! reads with cancellation and an idle timeout.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Once;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use crate::error::{ApiError, ConfigError, Error, Provider, StreamErrorKind};
use crate::retry::{self, RetryPolicy};
use crate::sse::{SseEvent, SseParser};

/// An API key. Its `Debug` never shows the key.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    /// The key itself, for the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Transport settings shared by both clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// Time to open a connection.
    pub connect_timeout: Duration,
    /// Time for a whole non-streaming response, and for a stream's response headers.
    pub request_timeout: Duration,
    /// A stream fails when no byte arrives for this long (the APIs send `ping` / keep-alives).
    pub stream_idle_timeout: Duration,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// When and how requests are retried.
    pub retry: RetryPolicy,
}

impl HttpConfig {
    /// 10 s to connect.
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
    /// 10 minutes for a response, the official SDKs' default.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(600);
    /// 5 minutes without a byte ends a stream.
    pub const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
}

impl Default for HttpConfig {
    fn default() -> HttpConfig {
        HttpConfig {
            connect_timeout: HttpConfig::DEFAULT_CONNECT_TIMEOUT,
            request_timeout: HttpConfig::DEFAULT_REQUEST_TIMEOUT,
            stream_idle_timeout: HttpConfig::DEFAULT_STREAM_IDLE_TIMEOUT,
            user_agent: concat!("hands/", env!("CARGO_PKG_VERSION")).to_owned(),
            retry: RetryPolicy::default(),
        }
    }
}

/// Why a request was sent again.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryCause {
    /// The API answered with this retryable status.
    Status(u16),
    /// No response arrived (connection error); the message says what happened.
    Connection(String),
    /// No response arrived in time.
    Timeout,
}

/// One retry: why, and how long the client waited before sending again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryRecord {
    /// Why the previous attempt failed.
    pub cause: RetryCause,
    /// The wait before the next attempt.
    pub delay: Duration,
}

/// Facts about a successful call, for a runner's diagnostics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallMeta {
    /// The response's request id header (`request-id` or `x-request-id`).
    pub request_id: Option<String>,
    /// The retries made before the answer that was kept, in order.
    pub retries: Vec<RetryRecord>,
    /// The rate-limit headers of the answer (`anthropic-ratelimit-*`, `x-ratelimit-*`).
    pub rate_limits: Vec<(String, String)>,
}

impl CallMeta {
    /// How many times the request was sent.
    pub fn attempts(&self) -> u32 {
        u32::try_from(self.retries.len()).map_or(u32::MAX, |n| n.saturating_add(1))
    }
}

/// A value from a successful call with its call facts.
#[derive(Debug, Clone)]
pub struct Completed<T> {
    /// The decoded answer.
    pub value: T,
    /// Request id, retries, rate-limit headers.
    pub meta: CallMeta,
}

/// Installs ring as rustls' process-wide crypto provider unless one is installed already.
/// reqwest is built without a provider so that aws-lc-rs stays out of the build.
pub(crate) fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Err means another provider is installed already: that one is used, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A configured HTTP client for one provider.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    pub(crate) provider: Provider,
    client: reqwest::Client,
    pub(crate) config: HttpConfig,
}

/// Whether a call streams (sets `Accept` and the timeouts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Whole,
    Stream,
}

/// The header naming a logical request, the same across its retries.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// Names of the request-id headers of both APIs.
const REQUEST_ID_HEADERS: [&str; 2] = ["request-id", "x-request-id"];

impl Transport {
    pub(crate) fn new(provider: Provider, config: HttpConfig) -> Result<Transport, ConfigError> {
        install_crypto_provider();
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .user_agent(config.user_agent.clone())
            .build()
            .map_err(|err| ConfigError::Client(err.to_string()))?;
        Ok(Transport {
            provider,
            client,
            config,
        })
    }

    /// Sends `body` to `url` with `headers`, retrying per `policy`; returns the first success
    /// response (body unread) with its call facts, or the final error.
    pub(crate) async fn send(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: Bytes,
        mode: Mode,
        policy: &RetryPolicy,
        cancel: &CancellationToken,
    ) -> Result<(reqwest::Response, CallMeta), Error> {
        let provider = self.provider;
        let mut retries: Vec<RetryRecord> = Vec::new();
        // One key per logical request, the same on every retry of it, so a server that
        // deduplicates can tell a retry from a new request (unless the caller set its own).
        let idempotency_key = match headers.get(IDEMPOTENCY_KEY) {
            Some(_) => None,
            None => Some(retry::idempotency_key()),
        };
        loop {
            let n_retries_done = u32::try_from(retries.len()).unwrap_or(u32::MAX);
            let attempts = n_retries_done.saturating_add(1);
            let may_retry = n_retries_done < policy.max_retries;
            let mut request = self
                .client
                .post(url)
                .headers(headers.clone())
                .header(
                    reqwest::header::ACCEPT,
                    match mode {
                        Mode::Whole => "application/json",
                        Mode::Stream => "text/event-stream",
                    },
                )
                .body(body.clone());
            if let Some(key) = &idempotency_key {
                request = request.header(IDEMPOTENCY_KEY, key);
            }
            if mode == Mode::Whole {
                request = request.timeout(self.config.request_timeout);
            }
            let sent = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(Error::Cancelled { provider }),
                sent = tokio::time::timeout(self.config.request_timeout, request.send()) => sent,
            };
            let (cause, server_wait) = match sent {
                Err(_elapsed) => {
                    if !may_retry {
                        return Err(Error::Timeout {
                            provider,
                            timeout: self.config.request_timeout,
                            attempts,
                        });
                    }
                    (RetryCause::Timeout, None)
                }
                Ok(Err(err)) if err.is_timeout() => {
                    if !may_retry {
                        return Err(Error::Timeout {
                            provider,
                            timeout: self.config.request_timeout,
                            attempts,
                        });
                    }
                    (RetryCause::Timeout, None)
                }
                Ok(Err(err)) => {
                    if !may_retry || err.is_builder() {
                        return Err(Error::Connection {
                            provider,
                            url: url.to_owned(),
                            attempts,
                            source: err,
                        });
                    }
                    (RetryCause::Connection(crate::error::chain(&err)), None)
                }
                Ok(Ok(response)) if response.status().is_success() => {
                    let meta = CallMeta {
                        request_id: request_id(response.headers()),
                        retries,
                        rate_limits: rate_limits(response.headers()),
                    };
                    return Ok((response, meta));
                }
                Ok(Ok(response)) => {
                    let api = self.read_api_error(response, attempts, cancel).await?;
                    if !(may_retry && api.is_retryable()) {
                        return Err(Error::Api(Box::new(api)));
                    }
                    (RetryCause::Status(api.status), api.retry_after)
                }
            };
            let delay = policy.delay(n_retries_done, server_wait, retry::jitter_unit());
            tracing::debug!(%provider, ?cause, ?delay, attempt = attempts, "retrying request");
            retries.push(RetryRecord { cause, delay });
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(Error::Cancelled { provider }),
                () = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// Reads an error answer whole and parses what the API said.
    async fn read_api_error(
        &self,
        response: reqwest::Response,
        attempts: u32,
        cancel: &CancellationToken,
    ) -> Result<ApiError, Error> {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let raw_body = match self.read_body(response, attempts, cancel).await {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(Error::Cancelled { provider }) => return Err(Error::Cancelled { provider }),
            // A body that cannot be read still leaves the status to decide on.
            Err(err) => format!("<error body unreadable: {err}>"),
        };
        Ok(parse_api_error(
            self.provider,
            status,
            &headers,
            raw_body,
            attempts,
            SystemTime::now(),
        ))
    }

    /// Reads a whole body, honouring cancellation and the request timeout. `attempts` is how
    /// many times the request was sent, for the error.
    pub(crate) async fn read_body(
        &self,
        mut response: reqwest::Response,
        attempts: u32,
        cancel: &CancellationToken,
    ) -> Result<Vec<u8>, Error> {
        let provider = self.provider;
        let read = async {
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                body.extend_from_slice(&chunk);
            }
            Ok::<_, reqwest::Error>(body)
        };
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(Error::Cancelled { provider }),
            read = tokio::time::timeout(self.config.request_timeout, read) => match read {
                Err(_elapsed) => Err(Error::Timeout {
                    provider,
                    timeout: self.config.request_timeout,
                    attempts,
                }),
                Ok(Err(err)) if err.is_timeout() => Err(Error::Timeout {
                    provider,
                    timeout: self.config.request_timeout,
                    attempts,
                }),
                Ok(Err(err)) => Err(Error::Connection {
                    provider,
                    url: err.url().map(ToString::to_string).unwrap_or_default(),
                    attempts,
                    source: err,
                }),
                Ok(Ok(body)) => Ok(body),
            },
        }
    }
}

/// A streamed body read as server-sent events, with cancellation and an idle timeout.
#[derive(Debug)]
pub(crate) struct SseBody {
    response: reqwest::Response,
    parser: SseParser,
    pending: VecDeque<SseEvent>,
    cancel: CancellationToken,
    idle: Duration,
}

/// Why [`SseBody::next_event`] stopped.
#[derive(Debug)]
pub(crate) enum SseStop {
    /// The body ended cleanly (a half-received event counts as a drop).
    End,
    /// The caller's token fired.
    Cancelled,
    /// The stream failed.
    Failed(StreamErrorKind),
}

impl SseBody {
    pub(crate) fn new(
        response: reqwest::Response,
        cancel: &CancellationToken,
        idle: Duration,
    ) -> SseBody {
        SseBody {
            response,
            parser: SseParser::new(),
            pending: VecDeque::new(),
            cancel: cancel.clone(),
            idle,
        }
    }

    /// The next complete event.
    pub(crate) async fn next_event(&mut self) -> Result<SseEvent, SseStop> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Ok(event);
            }
            let read = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return Err(SseStop::Cancelled),
                read = tokio::time::timeout(self.idle, self.response.chunk()) => read,
            };
            match read {
                Err(_elapsed) => {
                    return Err(SseStop::Failed(StreamErrorKind::IdleTimeout(self.idle)));
                }
                Ok(Err(err)) => return Err(SseStop::Failed(StreamErrorKind::Transport(err))),
                Ok(Ok(None)) if self.parser.has_partial_event() => {
                    return Err(SseStop::Failed(StreamErrorKind::Protocol(
                        "the body ended inside an event".into(),
                    )));
                }
                Ok(Ok(None)) => return Err(SseStop::End),
                Ok(Ok(Some(bytes))) => match self.parser.push(&bytes) {
                    Ok(events) => self.pending.extend(events),
                    Err(err) => {
                        return Err(SseStop::Failed(StreamErrorKind::Malformed {
                            event_type: String::new(),
                            reason: err.to_string(),
                        }));
                    }
                },
            }
        }
    }
}

fn header_str<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

pub(crate) fn request_id(headers: &HeaderMap) -> Option<String> {
    REQUEST_ID_HEADERS
        .iter()
        .find_map(|name| header_str(headers, name))
        .map(str::to_owned)
}

fn rate_limits(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .filter(|(name, _)| {
            let name = name.as_str();
            name.starts_with("anthropic-ratelimit-") || name.starts_with("x-ratelimit-")
        })
        .filter_map(|(name, value)| {
            Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
        })
        .collect()
}

/// Builds an [`ApiError`] from an error answer of either API.
pub(crate) fn parse_api_error(
    provider: Provider,
    status: u16,
    headers: &HeaderMap,
    raw_body: String,
    attempts: u32,
    now: SystemTime,
) -> ApiError {
    let body: Option<serde_json::Value> = serde_json::from_str(&raw_body).ok();
    let error = body.as_ref().and_then(|b| b.get("error"));
    let text = |value: Option<&serde_json::Value>| -> Option<String> {
        match value? {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Null => None,
            other => Some(other.to_string()),
        }
    };
    let code = text(error.and_then(|e| e.get("code"))).or_else(|| {
        text(
            error
                .and_then(|e| e.get("details"))
                .and_then(|d| d.get("error_code")),
        )
    });
    ApiError {
        provider,
        status,
        error_type: text(error.and_then(|e| e.get("type"))),
        code,
        message: text(error.and_then(|e| e.get("message"))),
        param: text(error.and_then(|e| e.get("param"))),
        request_id: request_id(headers)
            .or_else(|| text(body.as_ref().and_then(|b| b.get("request_id")))),
        retry_after: retry::parse_retry_after(
            header_str(headers, retry::HEADER_RETRY_AFTER_MS),
            header_str(headers, retry::HEADER_RETRY_AFTER),
            now,
        ),
        should_retry: retry::parse_should_retry(header_str(headers, retry::HEADER_SHOULD_RETRY)),
        raw_body,
        attempts,
    }
}

/// Adds a header, rejecting values HTTP forbids without repeating the value (it may be a key).
pub(crate) fn insert_header(
    headers: &mut HeaderMap,
    name: &'static str,
    value: &str,
) -> Result<(), ConfigError> {
    let value = HeaderValue::from_str(value).map_err(|_| ConfigError::InvalidHeader {
        header: name,
        reason: "it contains characters not allowed in an HTTP header (a newline or a control character?)".into(),
    })?;
    headers.insert(HeaderName::from_static(name), value);
    Ok(())
}

/// Checks a base URL and removes a trailing slash.
pub(crate) fn normalize_base_url(provider: Provider, url: &str) -> Result<String, ConfigError> {
    let trimmed = url.trim().trim_end_matches('/');
    let invalid = |reason: &str| ConfigError::InvalidBaseUrl {
        provider,
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    let rest = trimmed
        .strip_prefix("https://")
        .or_else(|| trimmed.strip_prefix("http://"))
        .ok_or_else(|| invalid("it must start with http:// or https://"))?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err(invalid("it has no host"));
    }
    if trimmed.contains(['?', '#', ' ']) {
        return Err(invalid("it must not hold a query, a fragment or spaces"));
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn anthropic_error_body_and_headers() {
        let body = r#"{"type":"error","error":{"type":"rate_limit_error","message":"Spend limit reached","details":{"error_code":"enforced_spend_limit_reached"}},"request_id":"req_body"}"#;
        let err = parse_api_error(
            Provider::Anthropic,
            429,
            &headers(&[("retry-after", "3"), ("x-should-retry", "false")]),
            body.to_owned(),
            1,
            SystemTime::now(),
        );
        assert_eq!(err.error_type.as_deref(), Some("rate_limit_error"));
        assert_eq!(err.code.as_deref(), Some("enforced_spend_limit_reached"));
        assert_eq!(err.request_id.as_deref(), Some("req_body"));
        assert_eq!(err.retry_after, Some(Duration::from_secs(3)));
        assert_eq!(err.should_retry, Some(false));
        assert_eq!(err.raw_body, body);
        assert!(err.is_quota_exceeded());
    }

    #[test]
    fn openai_error_body_and_header_request_id() {
        let body = r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
        let err = parse_api_error(
            Provider::OpenAi,
            429,
            &headers(&[("x-request-id", "req_hdr"), ("retry-after-ms", "20")]),
            body.to_owned(),
            2,
            SystemTime::now(),
        );
        assert_eq!(err.code.as_deref(), Some("insufficient_quota"));
        assert_eq!(err.param, None);
        assert_eq!(err.request_id.as_deref(), Some("req_hdr"));
        assert_eq!(err.retry_after, Some(Duration::from_millis(20)));
        assert_eq!(err.attempts, 2);
        assert!(!err.is_retryable());
    }

    #[test]
    fn non_json_error_body_is_kept_raw() {
        let err = parse_api_error(
            Provider::OpenAi,
            502,
            &HeaderMap::new(),
            "<html>Bad Gateway</html>".to_owned(),
            1,
            SystemTime::now(),
        );
        assert_eq!(err.error_type, None);
        assert_eq!(err.raw_body, "<html>Bad Gateway</html>");
        assert!(err.is_retryable());
    }

    #[test]
    fn base_urls() {
        let ok = [
            ("https://api.anthropic.com", "https://api.anthropic.com"),
            ("http://127.0.0.1:8080/", "http://127.0.0.1:8080"),
            ("https://api.openai.com/v1/", "https://api.openai.com/v1"),
        ];
        for (input, expect) in ok {
            assert_eq!(normalize_base_url(Provider::OpenAi, input).unwrap(), expect);
        }
        for bad in ["api.openai.com", "ftp://x", "http://", "http://x/?a=1"] {
            assert!(
                matches!(
                    normalize_base_url(Provider::OpenAi, bad),
                    Err(ConfigError::InvalidBaseUrl { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn api_key_debug_is_redacted() {
        assert_eq!(
            format!("{:?}", ApiKey::new("sk-secret")),
            "ApiKey(<redacted>)"
        );
    }

    #[test]
    fn header_with_newline_is_rejected_without_echoing_it() {
        let mut map = HeaderMap::new();
        let err = insert_header(&mut map, "x-api-key", "sk-1\nInjected: yes").unwrap_err();
        assert!(!err.to_string().contains("sk-1"));
    }
}

/// A request body with `stream` set, without copying the request.
#[derive(serde::Serialize)]
pub(crate) struct Streaming<'a, T> {
    #[serde(flatten)]
    pub(crate) inner: &'a T,
    pub(crate) stream: bool,
}

/// A request body as JSON bytes.
pub(crate) fn encode(
    provider: Provider,
    value: &impl serde::Serialize,
) -> Result<bytes::Bytes, Error> {
    serde_json::to_vec(value)
        .map(bytes::Bytes::from)
        .map_err(|err| Error::InvalidRequest {
            provider,
            reason: format!("the request cannot be encoded as JSON: {err}"),
        })
}
