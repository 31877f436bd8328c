//! The MCP server: `tools/list` and `tools/call` over the browser and desktop surfaces, served
//! on stdio or on streamable HTTP bound to loopback, answering protocol revisions `2026-07-28`
//! (stateless, `server/discover`, `input_required` rounds) and `2025-11-25` (`initialize`,
//! sessions, `elicitation/create`).
//!
//! Calls are serialised: one browser and one desktop, so a second call waits for the first
//! rather than interleaving input with it.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;

use hands_core::CancellationToken;
use hands_toolset::computer::members::Member;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig as McpServerConfig, Tool,
};
use rmcp::service::{ElicitationMode, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt as _};
use serde_json::{Map, Value};
use tokio::sync::Mutex;

use crate::browser::BrowserSurface;
use crate::budget::Budget;
use crate::consent::{ApprovePolicy, Asker, ConsentSlot, Decider, Rounds, Verdict, short_json};
use crate::desktop::DesktopSurface;
use crate::tools::{
    BROWSER_MEMBERS, COMPUTER_MEMBERS, ToolKind, browser_is_action, browser_tool,
    computer_is_observation, computer_tool, kind_of,
};

/// The protocol revisions served: the current one and the one before it.
pub const PROTOCOL_VERSIONS: [ProtocolVersion; 2] =
    [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

/// What the client is told the server is for.
pub const INSTRUCTIONS: &str = "hands gives you a real browser (browser_* tools: read the page \
    to get element refs, then act on refs) and/or a real Linux desktop (computer_* tools: take a \
    screenshot, then act at its pixel coordinates). Answers are compact and fit your token \
    budget: a cut read ends with a cursor for the rest; an action answers one line of what \
    changed (ask `snapshot` or `screenshot` for more). A person approves each consequential \
    action, or the server's --approve policy decides.";

/// How the server behaves.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerConfig {
    /// The most tokens one tool response may cost.
    pub budget: Budget,
    /// What is decided when the client cannot ask a person.
    pub approve: ApprovePolicy,
}

struct Inner {
    config: ServerConfig,
    browser: Option<Mutex<BrowserSurface>>,
    desktop: Option<Mutex<DesktopSurface>>,
    /// One call at a time across both surfaces: the consent slot is per call.
    calls: Mutex<()>,
    slot: ConsentSlot,
    rounds: Rounds,
    tools: Vec<Tool>,
    /// Whether an answer already said that the server's `--approve` policy approved an action:
    /// said once, since the policy does not change (a person's decision and every refusal are
    /// said each time).
    policy_approval_said: std::sync::atomic::AtomicBool,
}

/// The hands MCP server. Cheap to clone: every clone (one per HTTP session) shares the surfaces.
#[derive(Clone)]
pub struct HandsMcp {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for HandsMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandsMcp")
            .field("config", &self.inner.config)
            .field("tools", &self.inner.tools.len())
            .finish_non_exhaustive()
    }
}

/// Why a server cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// Neither a browser nor a desktop.
    #[error("give the server a browser, a desktop, or both")]
    NothingToServe,
    /// The HTTP address is not loopback.
    #[error("{0} is not a loopback address: the server listens on 127.0.0.1 or ::1 only")]
    NotLoopback(SocketAddr),
    /// A socket or stdio failure.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The MCP session failed to start.
    #[error("the MCP session failed: {0}")]
    Session(String),
}

impl HandsMcp {
    /// A server over the surfaces given (build them with the same `slot`).
    pub fn new(
        config: ServerConfig,
        browser: Option<BrowserSurface>,
        desktop: Option<DesktopSurface>,
        slot: ConsentSlot,
    ) -> Result<HandsMcp, ServeError> {
        if browser.is_none() && desktop.is_none() {
            return Err(ServeError::NothingToServe);
        }
        let mut tools = Vec::new();
        if browser.is_some() {
            tools.extend(BROWSER_MEMBERS.into_iter().map(browser_tool));
        }
        if desktop.is_some() {
            tools.extend(COMPUTER_MEMBERS.into_iter().map(computer_tool));
        }
        Ok(HandsMcp {
            inner: Arc::new(Inner {
                config,
                browser: browser.map(Mutex::new),
                desktop: desktop.map(Mutex::new),
                calls: Mutex::new(()),
                slot,
                rounds: Rounds::new()?,
                policy_approval_said: std::sync::atomic::AtomicBool::new(false),
                tools,
            }),
        })
    }

    /// The tools served.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// Serves one client on stdin/stdout until it disconnects.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| ServeError::Session(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| ServeError::Session(e.to_string()))?;
        Ok(())
    }

    /// Serves streamable HTTP at `http://{addr}/mcp` until `stop` is cancelled. `addr` must be
    /// loopback; hosts other than loopback names and any browser `Origin` are refused (DNS
    /// rebinding, web pages posting to the server). Returns the bound address through `bound`
    /// before serving.
    pub async fn serve_http(
        self,
        addr: SocketAddr,
        stop: CancellationToken,
        bound: impl FnOnce(SocketAddr),
    ) -> Result<(), ServeError> {
        use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService,
        };
        if !addr.ip().is_loopback() {
            return Err(ServeError::NotLoopback(addr));
        }
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let mut config = StreamableHttpServerConfig::default().enforce_origin_validation();
        config.cancellation_token = stop.child_token();
        let server = self.clone();
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let router = axum::Router::new().nest_service("/mcp", service);
        bound(local);
        axum::serve(listener, router)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await?;
        Ok(())
    }

    /// How this call's consent is obtained, from the client's capabilities and protocol.
    fn asker(
        &self,
        request: &CallToolRequestParams,
        arguments: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Asker, String> {
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let elicits = context
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_some());
        if modern && elicits {
            return match &request.request_state {
                None => Ok(Asker::Rounds { answer: None }),
                Some(sealed) => self
                    .inner
                    .rounds
                    .answer(
                        sealed,
                        &request.name,
                        arguments,
                        request.input_responses.as_ref(),
                    )
                    .map(|answer| Asker::Rounds {
                        answer: Some(answer),
                    })
                    .map_err(|e| e.to_string()),
            };
        }
        if !modern
            && context
                .peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form)
        {
            return Ok(Asker::Elicit(context.peer.clone()));
        }
        Ok(Asker::Policy(self.inner.config.approve))
    }

    async fn run_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(kind) = kind_of(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                None,
            ));
        };
        let arguments: Map<String, Value> = request.arguments.clone().unwrap_or_default();
        let arguments_value = Value::Object(arguments.clone());
        let asker = match self.asker(&request, &arguments_value, &context) {
            Ok(asker) => asker,
            Err(why) => return Ok(CallToolResult::error(vec![ContentBlock::text(why)]).into()),
        };
        let cancel = context.ct.clone();
        // The client's request id names the call (what `confirm` and the answer are bound to).
        let call_id = format!("mcp-request-{}", context.id);
        let budget = self.inner.config.budget;
        let _one_call = self.inner.calls.lock().await;
        self.inner.slot.begin(asker);
        let (content, is_error, consent) = match kind {
            ToolKind::Browser(member) => {
                let Some(browser) = &self.inner.browser else {
                    return Err(ErrorData::invalid_params("no browser is served", None));
                };
                let answer = browser
                    .lock()
                    .await
                    .call(&call_id, member, &arguments, budget, &cancel)
                    .await;
                if let Some(fault) = &answer.fault {
                    tracing::error!(target: "hands::mcp", %fault, "browser fault");
                }
                let consent = self.inner.slot.finish();
                let consent = consent.filter(|_| browser_is_action(member) || is_diagnostics(kind));
                (answer.content, answer.is_error, consent)
            }
            ToolKind::Computer(member) => {
                let Some(desktop) = &self.inner.desktop else {
                    return Err(ErrorData::invalid_params("no desktop is served", None));
                };
                // Read before anyone is asked: a call that cannot run is answered with what is
                // wrong, and the person is asked only about what would run.
                let request = match desktop.lock().await.prepare(member, &arguments) {
                    Ok(request) => request,
                    Err(why) => {
                        self.inner.slot.finish();
                        return Ok(CallToolResult::error(vec![ContentBlock::text(why)]).into());
                    }
                };
                let mut consent = None;
                if !computer_is_observation(member) {
                    // The person is asked about the parsed action, which is what runs.
                    let question = format!(
                        "Allow the desktop action `{member}` ({}) {}?",
                        request.action,
                        short_json(&arguments_value, 300)
                    );
                    let verdict = self.inner.slot.decide(&question, &cancel).await;
                    self.inner.slot.finish();
                    consent = Some(verdict);
                }
                match consent {
                    Some(Verdict::Decided {
                        approved: false,
                        by,
                    }) => (
                        vec![ContentBlock::text(format!(
                            "The action was {}; nothing was done.",
                            by.phrase(false)
                        ))],
                        true,
                        None,
                    ),
                    Some(Verdict::NeedsInput { .. }) => (Vec::new(), false, consent),
                    _ => {
                        let answer = desktop.lock().await.call(&request, &cancel).await;
                        if let Some(fault) = &answer.fault {
                            tracing::error!(target: "hands::mcp", %fault, "desktop fault");
                        }
                        (answer.content, answer.is_error, consent)
                    }
                }
            }
        };
        match consent {
            Some(Verdict::NeedsInput { question }) => {
                let rounds = self
                    .inner
                    .rounds
                    .ask(&request.name, &arguments_value, &question)
                    .map_err(|e| ErrorData::internal_error(e, None))?;
                Ok(rounds.into())
            }
            decided => {
                let mut content = content;
                if let Some(Verdict::Decided { approved, by }) = decided {
                    let said_before = approved
                        && matches!(by, Decider::Policy(_))
                        && self
                            .inner
                            .policy_approval_said
                            .swap(true, std::sync::atomic::Ordering::Relaxed);
                    if !said_before {
                        append_consent(&mut content, approved, by);
                    }
                }
                let content = budget.fit(content);
                Ok(if is_error {
                    CallToolResult::error(content)
                } else {
                    CallToolResult::success(content)
                }
                .into())
            }
        }
    }
}

fn is_diagnostics(kind: ToolKind) -> bool {
    kind == ToolKind::Browser(hands_core::browser::BrowserMember::ReadDiagnostics)
}

/// Says who decided, on the answer's first text line.
fn append_consent(content: &mut Vec<ContentBlock>, approved: bool, by: Decider) {
    let note = format!("({})", by.phrase(approved));
    match content.iter_mut().find_map(|b| match b {
        ContentBlock::Text(t) => Some(&mut t.text),
        _ => None,
    }) {
        Some(text) => {
            let end = text.find('\n').unwrap_or(text.len());
            text.insert_str(end, &format!(" {note}"));
        }
        None => content.push(ContentBlock::text(note)),
    }
}

impl ServerHandler for HandsMcp {
    fn get_info(&self) -> McpServerConfig {
        McpServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("hands", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
            .with_protocol_version(ProtocolVersion::V_2026_07_28)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Owned(PROTOCOL_VERSIONS.to_vec())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.run_call(request, context).await
    }
}

/// The desktop members this server answers without asking anyone.
pub fn observations() -> impl Iterator<Item = Member> {
    COMPUTER_MEMBERS
        .into_iter()
        .filter(|m| computer_is_observation(*m))
}
