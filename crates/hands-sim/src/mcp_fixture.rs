//! A small real MCP server (rmcp, streamable HTTP on 127.0.0.1) that plays a remote one in tests
//! and drills: the simulated APIs connect to it as OpenAI's and Anthropic's servers connect to a
//! declared MCP server, so what a run's MCP calls did is counted where they happened.
//!
//! Tools: `add_note {text}` (an effect: the note is kept, and counted), `list_notes {}`
//! (`readOnlyHint`), `fail {}` (answers `isError: true`). Every `tools/call` is recorded with its
//! arguments and the bearer token it came with; a server started with a token refuses requests
//! without it (401), as a protected server does.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use crate::error::SimError;

/// The tool with an effect.
pub const ADD_NOTE: &str = "add_note";
/// The read-only tool.
pub const LIST_NOTES: &str = "list_notes";
/// The tool that fails.
pub const FAIL: &str = "fail";
/// What `fail` answers.
pub const FAIL_TEXT: &str = "The tool failed on purpose.";

/// One `tools/call` the server received.
#[derive(Clone, Debug, PartialEq)]
pub struct FixtureCall {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// The bearer token of the request, if any.
    pub bearer: Option<String>,
}

#[derive(Debug, Default)]
struct Book {
    notes: Vec<String>,
    calls: Vec<FixtureCall>,
    /// The bearer token of the request being served (set by the HTTP layer).
    bearer: Option<String>,
}

#[derive(Clone, Debug, Default)]
struct Shared(Arc<Mutex<Book>>);

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Book> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[derive(Clone)]
struct Notes {
    shared: Shared,
}

fn schema(value: Value) -> Arc<Map<String, Value>> {
    Arc::new(value.as_object().cloned().unwrap_or_default())
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            ADD_NOTE,
            "Save a note.",
            schema(
                json!({"type": "object", "properties": {"text": {"type": "string"}},
                "required": ["text"]}),
            ),
        )
        .with_annotations(ToolAnnotations::new().read_only(false)),
        Tool::new(
            LIST_NOTES,
            "List the saved notes.",
            schema(json!({"type": "object", "properties": {}})),
        )
        .with_annotations(ToolAnnotations::new().read_only(true)),
        Tool::new(
            FAIL,
            "Always fails.",
            schema(json!({"type": "object", "properties": {}})),
        ),
    ]
}

impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let mut book = self.shared.lock();
        let bearer = book.bearer.clone();
        book.calls.push(FixtureCall {
            tool: request.name.to_string(),
            arguments: arguments.clone(),
            bearer,
        });
        let result = match request.name.as_ref() {
            ADD_NOTE => match arguments.get("text").and_then(Value::as_str) {
                Some(text) => {
                    book.notes.push(text.to_owned());
                    CallToolResult::success(vec![ContentBlock::text(format!(
                        "Saved note {}.",
                        book.notes.len()
                    ))])
                }
                None => CallToolResult::error(vec![ContentBlock::text("`text` is required.")]),
            },
            LIST_NOTES => {
                CallToolResult::success(vec![ContentBlock::text(if book.notes.is_empty() {
                    "No notes.".to_owned()
                } else {
                    book.notes.join("\n")
                })])
            }
            FAIL => CallToolResult::error(vec![ContentBlock::text(FAIL_TEXT)]),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no tool named {other}"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}

/// The running fixture; dropping it stops the server.
pub struct McpFixture {
    shared: Shared,
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for McpFixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpFixture")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl McpFixture {
    /// Starts a server that takes any request.
    pub fn start() -> Result<McpFixture, SimError> {
        McpFixture::start_inner(None)
    }

    /// Starts a server that answers only requests with `Authorization: Bearer {token}`.
    pub fn with_token(token: &str) -> Result<McpFixture, SimError> {
        McpFixture::start_inner(Some(token.to_owned()))
    }

    fn start_inner(token: Option<String>) -> Result<McpFixture, SimError> {
        use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService,
        };
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(SimError::Bind)?;
        listener.set_nonblocking(true).map_err(SimError::Bind)?;
        let addr = listener.local_addr().map_err(SimError::Bind)?;
        let shared = Shared::default();
        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), std::io::Error>>();
        let server_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("hands-sim-mcp-{}", addr.port()))
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => listener,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let stop = tokio_util::sync::CancellationToken::new();
                    let handler_shared = server_shared.clone();
                    let service = StreamableHttpService::new(
                        move || {
                            Ok(Notes {
                                shared: handler_shared.clone(),
                            })
                        },
                        Arc::new(LocalSessionManager::default()),
                        StreamableHttpServerConfig::default()
                            .with_sse_keep_alive(None)
                            .with_cancellation_token(stop.child_token()),
                    );
                    let gate = Gate {
                        token,
                        shared: server_shared,
                    };
                    let router = axum::Router::new()
                        .nest_service("/mcp", service)
                        .layer(axum::middleware::from_fn_with_state(gate, check_bearer));
                    let _ = ready_tx.send(Ok(()));
                    let _ = axum::serve(listener, router)
                        .with_graceful_shutdown(async move {
                            let _ = shutdown_rx.await;
                            stop.cancel();
                        })
                        .await;
                });
            })
            .map_err(SimError::Runtime)?;
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(SimError::Runtime(e)),
            Err(_) => {
                return Err(SimError::Runtime(std::io::Error::other(
                    "the MCP fixture thread ended before it was ready",
                )));
            }
        }
        Ok(McpFixture {
            shared,
            addr,
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Every `tools/call` received, in order.
    pub fn calls(&self) -> Vec<FixtureCall> {
        self.shared.lock().calls.clone()
    }

    /// The calls of one tool.
    pub fn calls_of(&self, tool: &str) -> usize {
        self.shared
            .lock()
            .calls
            .iter()
            .filter(|c| c.tool == tool)
            .count()
    }

    /// The notes saved by `add_note`: the server's own state, the effects counted where they
    /// happened.
    pub fn notes(&self) -> Vec<String> {
        self.shared.lock().notes.clone()
    }
}

impl Drop for McpFixture {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[derive(Clone)]
struct Gate {
    token: Option<String>,
    shared: Shared,
}

/// Refuses a request without the server's token (when it has one), and notes the token the
/// request came with for the call it carries.
async fn check_bearer(
    axum::extract::State(gate): axum::extract::State<Gate>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let bearer = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    if let Some(token) = &gate.token
        && bearer.as_deref() != Some(token.as_str())
    {
        return axum::response::IntoResponse::into_response((
            axum::http::StatusCode::UNAUTHORIZED,
            [("www-authenticate", "Bearer")],
            "unauthorized",
        ));
    }
    gate.shared.lock().bearer = bearer;
    next.run(request).await
}
