//! The OpenAI Responses API client: `POST {base}/responses`, whole or streamed.
//!
//! The base URL includes the version, as in the official SDKs' `OPENAI_BASE_URL`
//! (`https://api.openai.com/v1`), so OpenAI-compatible local servers work with their usual
//! `http://127.0.0.1:PORT/v1`. Spec: api-contracts B.

pub mod actions;
pub mod stream;
pub mod types;

use reqwest::header::HeaderMap;
use tokio_util::sync::CancellationToken;

use crate::error::{ConfigError, Error, Provider, StreamErrorKind};
use crate::event_stream::{EventStream, Sealed, StreamProtocol};
use crate::http::{self, ApiKey, Completed, HttpConfig, Mode, Transport};
use crate::retry::RetryPolicy;

pub use actions::{ComputerAction, MouseButton, PathPoint};
pub use stream::{ResponseAccumulator, ResponseEvent, ResponseEventKind};
pub use types::*;

/// Environment variable holding the API key.
pub const API_KEY_ENV: &str = "OPENAI_API_KEY";
/// Environment variable overriding the base URL (the official SDKs' name; includes `/v1`).
pub const BASE_URL_ENV: &str = "OPENAI_BASE_URL";
/// Environment variable naming the organization.
pub const ORGANIZATION_ENV: &str = "OPENAI_ORG_ID";
/// Environment variable naming the project.
pub const PROJECT_ENV: &str = "OPENAI_PROJECT_ID";
/// The public API's base URL; requests go to `{base}/responses`.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The path of the Responses endpoint below the base URL.
pub const RESPONSES_PATH: &str = "/responses";

/// Client settings.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OpenAiConfig {
    /// The API key, sent as `Authorization: Bearer`.
    pub api_key: ApiKey,
    /// Base URL including the version (`https://api.openai.com/v1`).
    pub base_url: String,
    /// `OpenAI-Organization`, when set.
    pub organization: Option<String>,
    /// `OpenAI-Project`, when set.
    pub project: Option<String>,
    /// Timeouts, user agent, retries.
    pub http: HttpConfig,
}

impl OpenAiConfig {
    /// Settings for a key, with the public base URL and the defaults.
    pub fn new(api_key: impl Into<String>) -> OpenAiConfig {
        OpenAiConfig {
            api_key: ApiKey::new(api_key),
            base_url: DEFAULT_BASE_URL.to_owned(),
            organization: None,
            project: None,
            http: HttpConfig::default(),
        }
    }

    /// Settings from `OPENAI_API_KEY`, `OPENAI_BASE_URL`, `OPENAI_ORG_ID`, `OPENAI_PROJECT_ID`.
    pub fn from_env() -> Result<OpenAiConfig, ConfigError> {
        OpenAiConfig::from_lookup(|name| std::env::var(name).ok())
    }

    /// Settings from a variable lookup (the environment, or a map in tests).
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<OpenAiConfig, ConfigError> {
        let set = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
        let key = set(API_KEY_ENV).ok_or(ConfigError::MissingApiKey {
            provider: Provider::OpenAi,
            env_var: API_KEY_ENV,
        })?;
        let mut config = OpenAiConfig::new(key.trim());
        if let Some(base) = set(BASE_URL_ENV) {
            config.base_url = base;
        }
        config.organization = set(ORGANIZATION_ENV);
        config.project = set(PROJECT_ENV);
        Ok(config)
    }
}

/// A Responses API client. Cheap to clone; clones share the connection pool.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    transport: Transport,
    url: String,
    headers: HeaderMap,
}

impl OpenAiClient {
    /// A client for these settings.
    pub fn new(config: OpenAiConfig) -> Result<OpenAiClient, ConfigError> {
        let base = http::normalize_base_url(Provider::OpenAi, &config.base_url)?;
        let mut headers = HeaderMap::new();
        http::insert_header(
            &mut headers,
            "authorization",
            &format!("Bearer {}", config.api_key.expose()),
        )?;
        http::insert_header(&mut headers, "content-type", "application/json")?;
        if let Some(organization) = &config.organization {
            http::insert_header(&mut headers, "openai-organization", organization)?;
        }
        if let Some(project) = &config.project {
            http::insert_header(&mut headers, "openai-project", project)?;
        }
        Ok(OpenAiClient {
            transport: Transport::new(Provider::OpenAi, config.http)?,
            url: format!("{base}{RESPONSES_PATH}"),
            headers,
        })
    }

    /// A client from the environment ([`OpenAiConfig::from_env`]).
    pub fn from_env() -> Result<OpenAiClient, ConfigError> {
        OpenAiClient::new(OpenAiConfig::from_env()?)
    }

    /// The same client with another retry policy ([`RetryPolicy::disabled`] for runs that
    /// declare MCP tools).
    pub fn with_retry_policy(&self, retry: RetryPolicy) -> OpenAiClient {
        let mut client = self.clone();
        client.transport.config.retry = retry;
        client
    }

    /// The endpoint URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends a request and returns the whole response (whatever its `status`: a `failed` or
    /// `incomplete` response is returned, not an error). Retries per the client's policy.
    pub async fn create_response(
        &self,
        request: &ResponsesRequest,
        cancel: &CancellationToken,
    ) -> Result<Completed<Response>, Error> {
        if request.stream == Some(true) {
            return Err(Error::InvalidRequest {
                provider: Provider::OpenAi,
                reason: "`stream` is true: use stream_response for a streamed answer".into(),
            });
        }
        let body = http::encode(Provider::OpenAi, request)?;
        let policy = self.transport.config.retry;
        let (response, meta) = self
            .transport
            .send(&self.url, &self.headers, body, Mode::Whole, &policy, cancel)
            .await?;
        let status = response.status().as_u16();
        let bytes = self
            .transport
            .read_body(response, meta.attempts(), cancel)
            .await?;
        let value = serde_json::from_slice::<Response>(&bytes).map_err(|err| Error::Decode {
            provider: Provider::OpenAi,
            status,
            what: "Response",
            reason: err.to_string(),
            raw_body: String::from_utf8_lossy(&bytes).into_owned(),
        })?;
        Ok(Completed { value, meta })
    }

    /// Sends a request with `stream: true` and returns the open stream. The request is
    /// retried per the client's policy until the stream's headers arrive; once events flow,
    /// nothing is retried (see [`ResponseStream`]).
    pub async fn stream_response(
        &self,
        request: &ResponsesRequest,
        cancel: &CancellationToken,
    ) -> Result<ResponseStream, Error> {
        let body = match request.stream {
            Some(true) => http::encode(Provider::OpenAi, request)?,
            None => http::encode(
                Provider::OpenAi,
                &http::Streaming {
                    inner: request,
                    stream: true,
                },
            )?,
            Some(false) => {
                return Err(Error::InvalidRequest {
                    provider: Provider::OpenAi,
                    reason: "`stream` is false: use create_response, or leave it unset".into(),
                });
            }
        };
        let policy = self.transport.config.retry;
        let (response, meta) = self
            .transport
            .send(
                &self.url,
                &self.headers,
                body,
                Mode::Stream,
                &policy,
                cancel,
            )
            .await?;
        Ok(ResponseStream::open(
            response,
            cancel,
            self.transport.config.stream_idle_timeout,
            meta,
        ))
    }
}

/// The Responses API as a stream protocol (see [`EventStream`]).
#[derive(Debug)]
pub enum Responses {}

impl Sealed for Responses {}

impl StreamProtocol for Responses {
    const PROVIDER: Provider = Provider::OpenAi;
    type Event = ResponseEvent;
    type Accumulator = ResponseAccumulator;
    type Final = Response;

    fn accumulator() -> ResponseAccumulator {
        ResponseAccumulator::new()
    }
    /// `Ok(None)` for `[DONE]`, which before the final event means the stream ended early.
    fn parse(sse_name: Option<&str>, data: &str) -> Result<Option<ResponseEvent>, StreamErrorKind> {
        stream::parse_event(sse_name, data)
    }
    fn apply(acc: &mut ResponseAccumulator, event: &ResponseEvent) -> Result<(), StreamErrorKind> {
        acc.apply(event)
    }
    /// After the final response event.
    fn is_complete(acc: &ResponseAccumulator) -> bool {
        acc.is_complete()
    }
    fn finish(acc: ResponseAccumulator) -> Result<Response, StreamErrorKind> {
        acc.finish()
    }
}

/// An open Responses stream. [`EventStream::next`] yields each event after applying it to the
/// accumulator; completed items are available in order from [`EventStream::take_ready`] as
/// soon as their `response.output_item.done` arrives; [`EventStream::finish`] drains the rest
/// and returns the final response, equal to what [`OpenAiClient::create_response`] would have
/// returned.
pub type ResponseStream = EventStream<Responses>;

impl EventStream<Responses> {
    /// Completed items not yet taken, in output order (see
    /// [`ResponseAccumulator::take_ready`]).
    pub fn take_ready(&mut self) -> Vec<(usize, Item)> {
        self.accumulator_mut().take_ready()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_from_lookup() {
        let vars = [
            (API_KEY_ENV, "sk-test"),
            (BASE_URL_ENV, "http://127.0.0.1:9/v1/"),
            (PROJECT_ENV, "proj_1"),
        ];
        let lookup = |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        };
        let config = OpenAiConfig::from_lookup(lookup).unwrap();
        assert_eq!(config.project.as_deref(), Some("proj_1"));
        assert_eq!(config.organization, None);
        let client = OpenAiClient::new(config).unwrap();
        assert_eq!(client.url(), "http://127.0.0.1:9/v1/responses");
        assert_eq!(
            client.headers.get("authorization").unwrap(),
            "Bearer sk-test"
        );
        assert_eq!(client.headers.get("openai-project").unwrap(), "proj_1");

        let err = OpenAiConfig::from_lookup(|_| None).unwrap_err();
        assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
    }
}
