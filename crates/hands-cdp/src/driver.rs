//! [`CdpBrowser`]: a launched or attached Chromium, its event loop, and the helpers every member family shares (tabs, the page agent, ref checks, error mapping).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use hands_core::browser::{DriverError, TabId};
use hands_jail::SharedDir;

use crate::config::DriverConfig;
use crate::connection::{CdpError, Connection, SessionId};
use crate::events::{self, Shared};
use crate::launch::{Chromium, LaunchError};
use crate::protocol::{Evaluated, IsolatedWorld, SetAutoAttach};
use crate::proxy::PolicyProxy;
use crate::refs::{RefBinding, RefTable, Stale};

/// The page agent's source, installed in an isolated world of each document: `install` from
/// `agent.js`, which sees `refIdentity` from `refs.js` and `labelLooks` from `labels.js` (a
/// function expression evaluating to `install`).
pub const AGENT_JS: &str = concat!(
    "(function () {\n",
    include_str!("refs.js"),
    "\n",
    include_str!("labels.js"),
    "\nreturn (\n",
    include_str!("agent.js"),
    "\n);\n})()"
);

/// The name of the isolated world the agent lives in (page scripts cannot reach it).
pub const AGENT_WORLD: &str = "__hands__";

/// Calls one agent method, reporting a document without the agent as `{__missing: true}`.
const CALL_JS: &str = "function(m, a) { const h = globalThis.__hands; \
    return h ? h[m](a) : {__missing: true}; }";

/// How many refs the driver remembers (older ones become unknown).
const REF_CAPACITY: usize = 200_000;

/// Why a driver could not be created.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// Launching Chromium failed.
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// Talking to it failed.
    #[error("{0}")]
    Cdp(#[from] CdpError),
    /// The policy proxy could not listen.
    #[error("could not start the policy proxy: {0}")]
    Proxy(String),
    /// It did not open its first tab in time.
    #[error("the browser did not report a tab within {0:?}")]
    NoTab(Duration),
}

/// A Chromium driven over the DevTools Protocol.
///
/// Owns the connection and (when it launched the browser) the browser process; its event loop
/// is a task spawned at construction that lives until the connection closes or the driver is
/// dropped. Callers never poll anything.
pub struct CdpBrowser {
    pub(crate) shared: Arc<Shared>,
    pub(crate) config: DriverConfig,
    pub(crate) refs: RefTable,
    /// The session counter behind refs (`e17`, `s18`) and document ids (`d19`): it only grows.
    pub(crate) next_id: AtomicU64,
    /// The download directory's fd (where the browser puts downloads, taken from by this
    /// process) and the staged upload copies ([`crate::transfers`]).
    pub(crate) transfers: crate::transfers::Transfers,
    /// How long the last DOM walk took inside the page.
    pub(crate) last_walk: Duration,
    /// Refs that followed a re-render to their element's successor during the member running
    /// now (told in its answer; cleared when the next member starts).
    pub(crate) rebound: Vec<String>,
    /// The tab whose left button `mouse_button` pressed and has not released: pointer moves
    /// there drag (one mouse, as a person's).
    pub(crate) button_held: Option<TabId>,
    /// The agent's isolated world in each tab's current document: (the tab's document commit
    /// count when it was made, its execution context), so a call into the page is one round
    /// trip, not two. A world of an older document is never used; one that went away is
    /// forgotten and made again.
    agent_worlds: std::sync::Mutex<HashMap<TabId, (u64, i64)>>,
    event_task: tokio::task::JoinHandle<()>,
    /// The proxy every connection of a launched browser goes through.
    proxy: Option<PolicyProxy>,
    /// Dropped last: kills the browser we started. `None` for a borrowed browser.
    chromium: Option<Chromium>,
}

impl std::fmt::Debug for CdpBrowser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CdpBrowser")
            .field("owned", &self.chromium.is_some())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// A tab's session and target, copied out of the state.
#[derive(Debug, Clone)]
pub(crate) struct Page {
    pub id: TabId,
    pub session: SessionId,
    pub target_id: String,
}

/// How a call into the page agent failed.
#[derive(Debug)]
pub(crate) enum AgentError {
    /// The document went away mid-call (a navigation): retry on the new one or report stale.
    ContextGone,
    /// The protocol failed.
    Cdp(CdpError),
    /// The agent threw (a bug, or a page that broke a DOM API): not shown to the model.
    Threw(String),
}

impl From<CdpError> for AgentError {
    fn from(e: CdpError) -> AgentError {
        let gone = e.message_contains("context was destroyed")
            || e.message_contains("Cannot find context")
            || e.message_contains("No frame")
            || e.message_contains("Inspected target navigated or closed");
        if gone {
            AgentError::ContextGone
        } else {
            AgentError::Cdp(e)
        }
    }
}

impl CdpBrowser {
    /// Launches a headless Chromium on a fresh profile through the configured launcher
    /// ([`crate::LaunchConfig::launcher`]) and drives it over its DevTools pipes. The browser is
    /// killed when the driver is dropped.
    ///
    /// The policy proxy listens where the browser runs ([`hands_jail::Launcher::listen_tcp`]: a
    /// jail's own loopback, or the host's) and is served by this process.
    pub async fn launch(config: DriverConfig) -> Result<CdpBrowser, StartError> {
        let mut launch = config.launch.clone();
        launch.viewport = config.viewport;
        let proxy = if config.network_proxy {
            let proxy = launch
                .launcher
                .listen_tcp(0)
                .and_then(|listener| {
                    PolicyProxy::serve_listener_keeping(
                        listener,
                        Arc::clone(&config.policy),
                        config.diagnostics_capacity,
                    )
                })
                .map_err(|e| StartError::Proxy(e.to_string()))?;
            launch.extra_args.extend(proxy.browser_args());
            Some(proxy)
        } else {
            None
        };
        let chromium = Chromium::launch(&launch).await?;
        let download_dir = match &config.download_dir {
            Some(dir) => Some(SharedDir {
                host: dir.clone(),
                inside: dir.clone(),
            }),
            None => chromium.download_dir().cloned(),
        };
        let conn = chromium.connection().with_call_timeout(config.call_timeout);
        let mut browser = CdpBrowser::start(conn, config, Some(chromium), download_dir).await?;
        browser.proxy = proxy;
        Ok(browser)
    }

    /// Attaches to a running browser's DevTools endpoint (`ws://host:port/devtools/browser/…`).
    /// The browser is borrowed: dropping the driver closes the connection and nothing else.
    pub async fn attach(ws_url: &str, config: DriverConfig) -> Result<CdpBrowser, StartError> {
        let download_dir = config.download_dir.clone().map(|dir| SharedDir {
            host: dir.clone(),
            inside: dir,
        });
        let conn = Connection::connect(ws_url, config.call_timeout).await?;
        CdpBrowser::start(conn, config, None, download_dir).await
    }

    async fn start(
        conn: Connection,
        config: DriverConfig,
        chromium: Option<Chromium>,
        download_dir: Option<SharedDir>,
    ) -> Result<CdpBrowser, StartError> {
        let shared = Shared::new(
            conn.clone(),
            Arc::clone(&config.policy),
            config.viewport,
            config.diagnostics_capacity,
            // A launched browser is fenced by its own settings and flags (see `launch`).
            config.page_fence && chromium.is_none(),
        );
        // Subscribe before anything is attached, so no event is missed.
        let events = conn.subscribe(|_| true);
        let event_task = tokio::spawn(events::run(Arc::clone(&shared), events));
        // Sent together: the browser answers in order, and no round trip waits on another.
        let discover = conn.call(None, "Target.setDiscoverTargets", json!({"discover": true}));
        // Downloads land where `download_file` can take them; a borrowed browser without a
        // download directory keeps its owner's setting.
        let downloads = match &download_dir {
            Some(dir) => {
                if let Err(e) = tokio::fs::create_dir_all(&dir.host).await {
                    tracing::warn!(dir = %dir.host.display(), error = %e, "no download directory");
                }
                Some(
                    json!({"behavior": "allowAndName", "downloadPath": dir.inside, "eventsEnabled": true}),
                )
            }
            None if chromium.is_some() => Some(json!({"behavior": "deny", "eventsEnabled": true})),
            None => None,
        };
        let downloads = async {
            match downloads {
                Some(params) => conn.call(None, "Browser.setDownloadBehavior", params).await,
                None => Ok(Value::Null),
            }
        };
        // Browser-wide interception, before anything is attached: it sees requests that a
        // target's own interception misses (a sandboxed `srcdoc` frame in a process of its own
        // fetches past its frame's interception on Chromium 156, measured).
        let intercept = conn.call(
            None,
            "Fetch.enable",
            json!({"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}),
        );
        let attach = conn.run(None, &SetAutoAttach::ALL_PAUSED);
        let (discover, downloads, intercept, attach) =
            tokio::join!(discover, downloads, intercept, attach);
        discover?;
        downloads?;
        intercept?;
        attach?;
        let transfers = crate::transfers::Transfers::new(download_dir.as_ref());
        let browser = CdpBrowser {
            shared,
            config,
            refs: RefTable::new(REF_CAPACITY),
            next_id: AtomicU64::new(1),
            transfers,
            last_walk: Duration::ZERO,
            rebound: Vec::new(),
            button_held: None,
            agent_worlds: std::sync::Mutex::new(HashMap::new()),
            event_task,
            proxy: None,
            chromium,
        };
        // Wait until every page that exists now (a launched browser's blank tab, an attached
        // browser's tabs) is attached and set up, so the first call finds them.
        let targets = browser
            .shared
            .conn
            .run(None, &crate::protocol::GetTargets {})
            .await?;
        let mut pages: Vec<String> = targets
            .target_infos
            .into_iter()
            .filter(|t| t.kind == "page")
            .map(|t| t.target_id)
            .collect();
        // A launched browser started without a window (`LaunchConfig::first_tab` off) gets its
        // first tab here, attached paused and set up like any other.
        if pages.is_empty() && browser.chromium.is_some() {
            let created = browser
                .shared
                .conn
                .run(
                    None,
                    &crate::protocol::CreateTarget {
                        url: "about:blank".to_owned(),
                    },
                )
                .await?;
            pages.push(created.target_id);
        }
        let wait = browser.config.call_timeout;
        let ready = browser
            .wait_until(wait, &CancellationToken::new(), |state| {
                pages
                    .iter()
                    .all(|p| state.tabs.iter().any(|t| &t.target_id == p && t.ready))
            })
            .await;
        if !ready {
            return Err(StartError::NoTab(wait));
        }
        Ok(browser)
    }

    /// The DevTools connection, for calls this driver has no member for.
    pub fn connection(&self) -> &Connection {
        &self.shared.conn
    }

    /// Sends a raw command on a tab's session (`None`: the active tab), for what no member does.
    /// Browser-level commands go through [`CdpBrowser::connection`].
    pub async fn call_raw(
        &self,
        tab: Option<&TabId>,
        method: &str,
        params: Value,
    ) -> Result<Value, DriverError> {
        let page = self.page_ready(tab).await?;
        self.shared
            .conn
            .call(Some(&page.session), method, params)
            .await
            .map_err(|e| self.cdp_error(e))
    }

    /// Requests the network policy denied so far, most recent last (bounded).
    /// Connections the policy proxy denied are listed after the requests interception denied.
    pub fn blocked_requests(&self) -> Vec<crate::policy::BlockedRequest> {
        let mut blocked: Vec<_> = self.shared.lock().blocked.iter().cloned().collect();
        if let Some(proxy) = &self.proxy {
            blocked.extend(proxy.blocked());
        }
        blocked
    }

    /// The HTTP status of the active tab's current document, when it came over HTTP (a page the
    /// request proxy answered for a server it could not reach is a 502).
    pub fn active_document_status(&self) -> Option<u16> {
        let state = self.shared.lock();
        let tab = state.tab(state.active.as_ref()?)?;
        events::State::doc_status(tab)
    }

    /// How many targets could not be intercepted and were kept paused.
    pub fn unintercepted_targets(&self) -> u64 {
        self.shared.lock().n_unintercepted
    }

    /// How long the last read's DOM walk took inside the page (the rest of a read is transport
    /// and conversion).
    pub fn last_walk(&self) -> Duration {
        self.last_walk
    }

    /// Changes which field values later reads report.
    pub fn set_value_policy(&mut self, values: crate::config::ValuePolicy) {
        self.config.values = values;
    }

    /// The browser process, when this driver launched it.
    pub fn chromium(&self) -> Option<&Chromium> {
        self.chromium.as_ref()
    }

    /// A fresh id from the session counter.
    pub(crate) fn fresh_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Maps a protocol error: a closed connection is the browser gone (a harness fault), the rest
    /// is a generic failure whose detail stays in the logs.
    pub(crate) fn cdp_error(&self, e: CdpError) -> DriverError {
        match e {
            CdpError::Cancelled => DriverError::Cancelled,
            CdpError::Closed { reason } | CdpError::Connect { reason, .. } => {
                DriverError::Gone(self.gone_reason(&reason))
            }
            other => DriverError::Failed(other.to_string()),
        }
    }

    fn gone_reason(&self, reason: &str) -> String {
        match self.chromium.as_ref().and_then(Chromium::exited) {
            Some(exit) => format!(
                "{reason}; the browser exited ({}); its last output: {}",
                exit.status, exit.stderr_tail
            ),
            None => reason.to_owned(),
        }
    }

    pub(crate) fn agent_error(&self, e: AgentError) -> DriverError {
        match e {
            AgentError::ContextGone => DriverError::refused(
                "The page navigated while the action ran; read the page again.",
            ),
            AgentError::Cdp(e) => self.cdp_error(e),
            AgentError::Threw(detail) => {
                DriverError::Failed(format!("page agent failed: {detail}"))
            }
        }
    }

    /// Fails fast once the connection is gone.
    pub(crate) fn check_alive(&self) -> Result<(), DriverError> {
        match &self.shared.lock().closed {
            Some(reason) => Err(DriverError::Gone(self.gone_reason(reason))),
            None => Ok(()),
        }
    }

    /// The tab a call acts on: the given one, or the active one.
    pub(crate) fn page(&self, tab: Option<&TabId>) -> Result<Page, DriverError> {
        self.check_alive()?;
        let state = self.shared.lock();
        let id = match tab {
            Some(id) => id.clone(),
            None => state
                .active
                .clone()
                .ok_or_else(|| DriverError::refused("No tab is open; open one with new_tab."))?,
        };
        let Some(tab) = state.tab(&id) else {
            return Err(DriverError::refused(format!(
                "There is no tab {}; list_tabs shows the open tabs.",
                hands_core::browser::truncate_utf8(id.as_str(), 64)
            )));
        };
        if tab.crashed {
            return Err(DriverError::refused(format!(
                "Tab {} crashed; navigate it again or close it.",
                tab.id
            )));
        }
        Ok(Page {
            id: tab.id.clone(),
            session: tab.session.clone(),
            target_id: tab.target_id.clone(),
        })
    }

    /// [`CdpBrowser::page`], once the tab's setup is done (a pop-up, or a tab of a browser just
    /// attached to, may still be being set up).
    pub(crate) async fn page_ready(&self, tab: Option<&TabId>) -> Result<Page, DriverError> {
        let page = self.page(tab)?;
        let id = page.id.clone();
        let ready = self
            .wait_until(self.config.call_timeout, &CancellationToken::new(), |s| {
                s.tab(&id).is_none_or(|t| t.ready)
            })
            .await;
        if !ready {
            self.check_alive()?;
            return Err(DriverError::Failed(format!(
                "tab {id} was not set up in time"
            )));
        }
        let page = self.page(Some(&id))?;
        self.await_settling(&page).await;
        Ok(page)
    }

    /// Waits until `done(state)` holds, or `timeout` passes (false), or `cancel` fires (false).
    pub(crate) async fn wait_until(
        &self,
        timeout: Duration,
        cancel: &CancellationToken,
        done: impl Fn(&events::State) -> bool,
    ) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut changed = self.shared.changed.subscribe();
        loop {
            {
                let state = self.shared.lock();
                if done(&state) {
                    return true;
                }
                if state.closed.is_some() {
                    return false;
                }
            }
            tokio::select! {
                r = changed.changed() => if r.is_err() { return false },
                _ = tokio::time::sleep_until(deadline) => return false,
                _ = cancel.cancelled() => return false,
            }
        }
    }

    /// Calls `__hands[method](args)` in the agent's isolated world of the tab's main frame,
    /// installing the agent first in a document that does not have it yet.
    pub(crate) async fn agent<T: DeserializeOwned>(
        &self,
        page: &Page,
        method: &str,
        args: Value,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<T, AgentError> {
        for _ in 0..4 {
            let commits = self
                .shared
                .lock()
                .tab(&page.id)
                .map(|tab| tab.doc.n_commits);
            let cached = self
                .agent_worlds
                .lock()
                .ok()
                .and_then(|worlds| worlds.get(&page.id).copied())
                .filter(|(made_in, _)| Some(*made_in) == commits)
                .map(|(_, context)| context);
            let context = match cached {
                Some(context) => context,
                None => {
                    let context = self.agent_context(page, cancel).await?;
                    if let (Some(commits), Ok(mut worlds)) = (commits, self.agent_worlds.lock()) {
                        worlds.insert(page.id.clone(), (commits, context));
                    }
                    context
                }
            };
            let value = match self
                .call_function(
                    page,
                    context,
                    CALL_JS,
                    json!([method, args]),
                    timeout,
                    cancel,
                )
                .await
            {
                // The kept world went with its document: make the new one's.
                Err(AgentError::ContextGone) if cached.is_some() => {
                    if let Ok(mut worlds) = self.agent_worlds.lock() {
                        worlds.remove(&page.id);
                    }
                    continue;
                }
                other => other?,
            };
            if value.get("__missing").is_some() {
                let doc = format!("d{}", self.fresh_id());
                self.call_function(page, context, AGENT_JS, json!([doc]), timeout, cancel)
                    .await?;
                continue;
            }
            // Large answers come as JSON text.
            let decoded = match value {
                Value::String(text) if text.starts_with('{') => serde_json::from_str(&text),
                other => serde_json::from_value(other),
            };
            return decoded.map_err(|e| {
                AgentError::Threw(format!("{method} returned an unexpected shape: {e}"))
            });
        }
        Err(AgentError::ContextGone)
    }

    async fn agent_context(
        &self,
        page: &Page,
        cancel: &CancellationToken,
    ) -> Result<i64, AgentError> {
        let value = self
            .shared
            .conn
            .call_with(
                Some(&page.session),
                "Page.createIsolatedWorld",
                json!({"frameId": page.target_id, "worldName": AGENT_WORLD}),
                self.config.call_timeout,
                Some(cancel),
            )
            .await?;
        let world: IsolatedWorld = crate::connection::decode("Page.createIsolatedWorld", value)?;
        Ok(world.execution_context_id)
    }

    async fn call_function(
        &self,
        page: &Page,
        context: i64,
        function: &str,
        args: Value,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<Value, AgentError> {
        let arguments: Vec<Value> = args
            .as_array()
            .map(|a| a.iter().map(|v| json!({"value": v})).collect())
            .unwrap_or_default();
        let value = self
            .shared
            .conn
            .call_with(
                Some(&page.session),
                "Runtime.callFunctionOn",
                json!({
                    "functionDeclaration": function,
                    "executionContextId": context,
                    "arguments": arguments,
                    "returnByValue": true,
                    "awaitPromise": true,
                }),
                timeout,
                Some(cancel),
            )
            .await?;
        let evaluated: Evaluated = crate::connection::decode("Runtime.callFunctionOn", value)?;
        if let Some(details) = evaluated.exception_details {
            return Err(AgentError::Threw(details.describe()));
        }
        Ok(evaluated.result.value.unwrap_or(Value::Null))
    }

    /// The binding of `reference` after the checks that need no page: issued, same tab, the
    /// right kind, same generation.
    pub(crate) fn bound(
        &self,
        reference: &str,
        page: &Page,
        want_scope: bool,
    ) -> Result<RefBinding, DriverError> {
        let stale = |s: Stale| DriverError::refused(s.text(reference));
        let binding = self
            .refs
            .get(reference)
            .ok_or_else(|| stale(Stale::Unknown))?
            .clone();
        let state = self.shared.lock();
        let Some(tab) = state.tab(&binding.tab) else {
            return Err(stale(Stale::TabClosed));
        };
        if binding.tab != page.id {
            return Err(stale(Stale::OtherTab));
        }
        if binding.scope && !want_scope {
            return Err(stale(Stale::Scope));
        }
        if !binding.scope && want_scope {
            return Err(stale(Stale::NotScope));
        }
        if tab.doc.generation != binding.generation {
            return Err(stale(Stale::Navigated));
        }
        Ok(binding)
    }

    /// The current document generation of a tab.
    pub(crate) fn generation(&self, page: &Page) -> u64 {
        self.shared
            .lock()
            .tab(&page.id)
            .map_or(0, |t| t.doc.generation)
    }
}

impl Drop for CdpBrowser {
    fn drop(&mut self) {
        self.event_task.abort();
        // `chromium` drops after this body: the process group is killed, then the profile goes.
    }
}
