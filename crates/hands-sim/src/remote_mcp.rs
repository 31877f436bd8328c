//! The API's side of a remote MCP server: what OpenAI's `mcp` tool and Claude's MCP connector do
//! on the model provider's machines — connect to the declared server over streamable HTTP (with
//! the declared bearer token and headers), list its tools, call one. The simulator does this for
//! real (rmcp's client), so a test sees the remote server's effects happen, or not.
//!
//! Every connection is opened for one request's work and closed after it, bounded by
//! [`MCP_TIMEOUT`]: a server that hangs fails the request instead of the simulator.
//!
//! Spec: openai-browser-desktop-drivers, "Combinar acciones del navegador con otras
//! herramientas"; api-contracts A ("MCP connector") and C.

use std::collections::HashMap;
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, ClientConfig};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value, json};

/// How long one request's MCP work may take.
pub(crate) const MCP_TIMEOUT: Duration = Duration::from_secs(20);

/// A declared remote server as the API reaches it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// The server's URL.
    pub(crate) url: String,
    /// The bearer token (`authorization` / `authorization_token`), without `Bearer `.
    pub(crate) bearer: Option<String>,
    /// Custom headers (OpenAI `headers`).
    pub(crate) headers: Vec<(String, String)>,
}

/// A tool as the server listed it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ListedTool {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    pub(crate) input_schema: Value,
    pub(crate) annotations: Option<Value>,
}

impl ListedTool {
    /// Whether the server marks the tool read-only (`readOnlyHint`).
    pub(crate) fn read_only(&self) -> bool {
        self.annotations
            .as_ref()
            .and_then(|a| a.get("readOnlyHint"))
            .and_then(Value::as_bool)
            == Some(true)
    }
}

/// What a `tools/call` answered.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CallOutcome {
    /// `isError`.
    pub(crate) is_error: bool,
    /// The text contents joined by newlines.
    pub(crate) text: String,
    /// The content blocks as the server sent them.
    pub(crate) content: Vec<Value>,
}

type Client = RunningService<rmcp::RoleClient, ClientConfig>;

async fn connect(endpoint: &Endpoint) -> Result<Client, String> {
    // rmcp's reqwest client is built without a TLS provider of its own when another crate of
    // the process asked for `rustls-no-provider`: ring is installed if none is.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut config = StreamableHttpClientTransportConfig::with_uri(endpoint.url.clone());
    if let Some(token) = &endpoint.bearer {
        config = config.auth_header(token.clone());
    }
    let mut headers = HashMap::new();
    for (name, value) in &endpoint.headers {
        let name = hyper::http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| format!("header name {name:?}: {e}"))?;
        let value = hyper::http::HeaderValue::from_str(value)
            .map_err(|e| format!("header {name} value: {e}"))?;
        headers.insert(name, value);
    }
    config = config.custom_headers(headers);
    let transport = StreamableHttpClientTransport::from_config(config);
    ClientConfig::default()
        .serve(transport)
        .await
        .map_err(|e| e.to_string())
}

async fn bounded<T>(work: impl Future<Output = Result<T, String>>) -> Result<T, String> {
    match tokio::time::timeout(MCP_TIMEOUT, work).await {
        Ok(done) => done,
        Err(_) => Err(format!(
            "the MCP server did not answer within {} s",
            MCP_TIMEOUT.as_secs()
        )),
    }
}

/// Lists the server's tools.
pub(crate) async fn list_tools(endpoint: &Endpoint) -> Result<Vec<ListedTool>, String> {
    bounded(async {
        let client = connect(endpoint).await?;
        let listed = client.list_all_tools().await.map_err(|e| e.to_string());
        let _ = client.cancel().await;
        Ok(listed?
            .into_iter()
            .map(|tool| ListedTool {
                name: tool.name.to_string(),
                description: tool.description.map(|d| d.to_string()),
                input_schema: Value::Object((*tool.input_schema).clone()),
                annotations: tool
                    .annotations
                    .and_then(|a| serde_json::to_value(a).ok())
                    .filter(|a| a.as_object().is_some_and(|o| !o.is_empty())),
            })
            .collect())
    })
    .await
}

/// Calls one tool. `Err` is a protocol or transport failure; a tool's own failure is an
/// outcome with `is_error`.
pub(crate) async fn call_tool(
    endpoint: &Endpoint,
    name: &str,
    arguments: Map<String, Value>,
) -> Result<CallOutcome, String> {
    bounded(async {
        let client = connect(endpoint).await?;
        let called = client
            .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments))
            .await
            .map_err(|e| e.to_string());
        let _ = client.cancel().await;
        let result = called?;
        let content: Vec<Value> = result
            .content
            .iter()
            .filter_map(|block| serde_json::to_value(block).ok())
            .collect();
        let text = content
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n");
        Ok(CallOutcome {
            is_error: result.is_error == Some(true),
            text,
            content,
        })
    })
    .await
}

/// A listed tool as an OpenAI `mcp_list_tools` entry.
pub(crate) fn openai_listing(tool: &ListedTool) -> Value {
    let mut entry = json!({"name": tool.name, "input_schema": tool.input_schema});
    if let Some(description) = &tool.description {
        entry["description"] = json!(description);
    }
    entry["annotations"] = tool.annotations.clone().unwrap_or(Value::Null);
    entry
}
