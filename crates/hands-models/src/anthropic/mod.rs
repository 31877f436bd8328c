//! The Anthropic Messages API client: `POST {base}/v1/messages`, whole or streamed.
//!
//! Spec: api-contracts A ("Transport", "Streaming", "Errors").

pub mod stream;
pub mod types;

use reqwest::header::HeaderMap;
use tokio_util::sync::CancellationToken;

use crate::error::{ConfigError, Error, Provider, StreamErrorKind};
use crate::event_stream::{EventStream, Sealed, StreamProtocol};
use crate::http::{self, ApiKey, Completed, HttpConfig, Mode, Transport};
use crate::retry::RetryPolicy;

pub use stream::{Delta, MessageAccumulator, StreamEvent};
pub use types::*;

/// Environment variable holding the API key.
pub const API_KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// Environment variable overriding the base URL (the official SDKs' name).
pub const BASE_URL_ENV: &str = "ANTHROPIC_BASE_URL";
/// The public API's base URL; requests go to `{base}/v1/messages`.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// The path of the Messages endpoint below the base URL.
pub const MESSAGES_PATH: &str = "/v1/messages";
/// Header carrying the API key.
pub const HEADER_API_KEY: &str = "x-api-key";
/// Header carrying the API version.
pub const HEADER_VERSION: &str = "anthropic-version";
/// Header carrying beta names, comma-separated.
pub const HEADER_BETA: &str = "anthropic-beta";

/// Client settings.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AnthropicConfig {
    /// The API key.
    pub api_key: ApiKey,
    /// Base URL without `/v1` (e.g. `http://127.0.0.1:8080` for a local stand-in).
    pub base_url: String,
    /// `anthropic-version`.
    pub version: String,
    /// `anthropic-beta` names sent with every request.
    pub betas: Vec<String>,
    /// Timeouts, user agent, retries.
    pub http: HttpConfig,
}

impl AnthropicConfig {
    /// Settings for a key, with the public base URL and the defaults.
    pub fn new(api_key: impl Into<String>) -> AnthropicConfig {
        AnthropicConfig {
            api_key: ApiKey::new(api_key),
            base_url: DEFAULT_BASE_URL.to_owned(),
            version: ANTHROPIC_VERSION.to_owned(),
            betas: Vec::new(),
            http: HttpConfig::default(),
        }
    }

    /// Settings from `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`.
    pub fn from_env() -> Result<AnthropicConfig, ConfigError> {
        AnthropicConfig::from_lookup(|name| std::env::var(name).ok())
    }

    /// Settings from a variable lookup (the environment, or a map in tests).
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<AnthropicConfig, ConfigError> {
        let key = lookup(API_KEY_ENV)
            .filter(|key| !key.trim().is_empty())
            .ok_or(ConfigError::MissingApiKey {
                provider: Provider::Anthropic,
                env_var: API_KEY_ENV,
            })?;
        let mut config = AnthropicConfig::new(key.trim());
        if let Some(base) = lookup(BASE_URL_ENV).filter(|url| !url.trim().is_empty()) {
            config.base_url = base;
        }
        Ok(config)
    }
}

/// A Messages API client. Cheap to clone; clones share the connection pool.
#[derive(Debug, Clone)]
pub struct AnthropicClient {
    transport: Transport,
    url: String,
    headers: HeaderMap,
    betas: Vec<String>,
}

impl AnthropicClient {
    /// A client for these settings.
    pub fn new(config: AnthropicConfig) -> Result<AnthropicClient, ConfigError> {
        let base = http::normalize_base_url(Provider::Anthropic, &config.base_url)?;
        let mut headers = HeaderMap::new();
        http::insert_header(&mut headers, HEADER_API_KEY, config.api_key.expose())?;
        http::insert_header(&mut headers, HEADER_VERSION, &config.version)?;
        http::insert_header(&mut headers, "content-type", "application/json")?;
        Ok(AnthropicClient {
            transport: Transport::new(Provider::Anthropic, config.http)?,
            url: format!("{base}{MESSAGES_PATH}"),
            headers,
            betas: config.betas,
        })
    }

    /// A client from the environment ([`AnthropicConfig::from_env`]).
    pub fn from_env() -> Result<AnthropicClient, ConfigError> {
        AnthropicClient::new(AnthropicConfig::from_env()?)
    }

    /// The same client with another retry policy ([`RetryPolicy::disabled`] for runs that
    /// declare MCP tools).
    pub fn with_retry_policy(&self, retry: RetryPolicy) -> AnthropicClient {
        let mut client = self.clone();
        client.transport.config.retry = retry;
        client
    }

    /// The endpoint URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn headers_for(&self, request: &MessagesRequest) -> Result<HeaderMap, Error> {
        let mut headers = self.headers.clone();
        let mut betas: Vec<&str> = self.betas.iter().map(String::as_str).collect();
        for beta in &request.betas {
            if !betas.contains(&beta.as_str()) {
                betas.push(beta);
            }
        }
        if !betas.is_empty() {
            http::insert_header(&mut headers, HEADER_BETA, &betas.join(","))?;
        }
        Ok(headers)
    }

    /// Sends a request and returns the whole message. Retries per the client's policy.
    pub async fn create_message(
        &self,
        request: &MessagesRequest,
        cancel: &CancellationToken,
    ) -> Result<Completed<Message>, Error> {
        if request.stream == Some(true) {
            return Err(Error::InvalidRequest {
                provider: Provider::Anthropic,
                reason: "`stream` is true: use stream_message for a streamed answer".into(),
            });
        }
        let body = http::encode(Provider::Anthropic, request)?;
        let headers = self.headers_for(request)?;
        let policy = self.transport.config.retry;
        let (response, meta) = self
            .transport
            .send(&self.url, &headers, body, Mode::Whole, &policy, cancel)
            .await?;
        let status = response.status().as_u16();
        let bytes = self
            .transport
            .read_body(response, meta.attempts(), cancel)
            .await?;
        let message = serde_json::from_slice::<Message>(&bytes).map_err(|err| Error::Decode {
            provider: Provider::Anthropic,
            status,
            what: "Message",
            reason: err.to_string(),
            raw_body: String::from_utf8_lossy(&bytes).into_owned(),
        })?;
        Ok(Completed {
            value: message,
            meta,
        })
    }

    /// Sends a request with `stream: true` and returns the open stream. The request is
    /// retried per the client's policy until the stream's headers arrive; once events flow,
    /// nothing is retried (see [`MessageStream`]).
    pub async fn stream_message(
        &self,
        request: &MessagesRequest,
        cancel: &CancellationToken,
    ) -> Result<MessageStream, Error> {
        let body = match request.stream {
            Some(true) => http::encode(Provider::Anthropic, request)?,
            None => http::encode(
                Provider::Anthropic,
                &http::Streaming {
                    inner: request,
                    stream: true,
                },
            )?,
            Some(false) => {
                return Err(Error::InvalidRequest {
                    provider: Provider::Anthropic,
                    reason: "`stream` is false: use create_message, or leave it unset".into(),
                });
            }
        };
        let headers = self.headers_for(request)?;
        let policy = self.transport.config.retry;
        let (response, meta) = self
            .transport
            .send(&self.url, &headers, body, Mode::Stream, &policy, cancel)
            .await?;
        Ok(MessageStream::open(
            response,
            cancel,
            self.transport.config.stream_idle_timeout,
            meta,
        ))
    }
}

/// The Messages API as a stream protocol (see [`EventStream`]).
#[derive(Debug)]
pub enum Messages {}

impl Sealed for Messages {}

impl StreamProtocol for Messages {
    const PROVIDER: Provider = Provider::Anthropic;
    type Event = StreamEvent;
    type Accumulator = MessageAccumulator;
    type Final = Message;

    fn accumulator() -> MessageAccumulator {
        MessageAccumulator::new()
    }
    fn parse(sse_name: Option<&str>, data: &str) -> Result<Option<StreamEvent>, StreamErrorKind> {
        stream::parse_event(sse_name, data).map(Some)
    }
    fn apply(acc: &mut MessageAccumulator, event: &StreamEvent) -> Result<(), StreamErrorKind> {
        acc.apply(event).map(drop)
    }
    /// After `message_stop`.
    fn is_complete(acc: &MessageAccumulator) -> bool {
        acc.is_complete()
    }
    fn finish(acc: MessageAccumulator) -> Result<Message, StreamErrorKind> {
        acc.finish()
    }
}

/// An open Messages stream. [`EventStream::next`] yields each event after applying it to the
/// accumulator; [`EventStream::finish`] drains the rest and returns the final message, equal to
/// what [`AnthropicClient::create_message`] would have returned.
pub type MessageStream = EventStream<Messages>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_from_lookup() {
        let vars = [
            (API_KEY_ENV, " sk-ant-test "),
            (BASE_URL_ENV, "http://127.0.0.1:9/"),
        ];
        let lookup = |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        };
        let config = AnthropicConfig::from_lookup(lookup).unwrap();
        assert_eq!(config.api_key.expose(), "sk-ant-test");
        let client = AnthropicClient::new(config).unwrap();
        assert_eq!(client.url(), "http://127.0.0.1:9/v1/messages");

        let err = AnthropicConfig::from_lookup(|_| None).unwrap_err();
        assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
        let config =
            AnthropicConfig::from_lookup(|n| (n == API_KEY_ENV).then(|| "k".into())).unwrap();
        assert_eq!(config.base_url, DEFAULT_BASE_URL);
    }

    #[test]
    fn betas_merge_without_duplicates() {
        let mut config = AnthropicConfig::new("k");
        config.betas = vec!["a-1".into()];
        let client = AnthropicClient::new(config).unwrap();
        let mut request = MessagesRequest::new("m", 10, vec![]);
        request.betas = vec!["a-1".into(), "b-2".into()];
        let headers = client.headers_for(&request).unwrap();
        assert_eq!(headers.get(HEADER_BETA).unwrap(), "a-1,b-2");
        let headers = client
            .headers_for(&MessagesRequest::new("m", 10, vec![]))
            .unwrap();
        assert_eq!(headers.get(HEADER_BETA).unwrap(), "a-1");
    }
}
