//! The driver's event loop and the state it keeps: attached sessions, tabs with stable ids, the active tab, requests in flight, documents, dialogs, file choosers, downloads and the diagnostics rings.
//!
//! Every target is auto-attached paused (`waitForDebuggerOnStart`), gets request interception and
//! its own auto-attach before it may run, and only then is resumed: nothing a page, pop-up,
//! frame or worker does can reach the network before the policy sees it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use hands_core::browser::TabId;

use crate::connection::{Connection, Event, SessionId};
use crate::diagnostics::{ConsoleEntry, NetworkEntry, Rings};
use crate::policy::{BLOCKED_ERROR_REASON, BlockedRequest, SharedPolicy, Verdict, decide};
use crate::protocol::{
    AttachedToTarget, ConsoleApiCalled, DetachedFromTarget, DialogOpening, DownloadProgress,
    DownloadWillBegin, ExceptionThrown, FileChooserOpened, FrameNavigated,
    FrameRequestedNavigation, LifecycleEvent, LoadingDone, NavigatedWithinDocument, RequestPaused,
    RequestWillBeSent, ResponseReceived, SetAutoAttach, TargetIdEvent, TargetInfoEvent,
};

/// What kind of target a session is attached to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// A top-level page: a tab.
    Page,
    /// An out-of-process iframe.
    Frame,
    /// A dedicated, shared or service worker.
    Worker,
    /// Anything else (worklets, …).
    Other,
}

impl TargetKind {
    fn of(kind: &str) -> TargetKind {
        match kind {
            "page" => TargetKind::Page,
            "iframe" => TargetKind::Frame,
            "worker" | "shared_worker" | "service_worker" => TargetKind::Worker,
            _ => TargetKind::Other,
        }
    }
}

/// One attached session.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    /// Its target.
    pub target_id: String,
    /// What it is.
    pub kind: TargetKind,
    /// The tab it belongs to (itself for a page; its page for frames and dedicated workers;
    /// `None` for shared and service workers, which belong to no single tab).
    pub tab: Option<TabId>,
}

/// A file chooser the page opened (a click on `<input type=file>`), waiting for `upload_file`.
#[derive(Debug, Clone)]
pub struct FileChooser {
    /// The session of the frame that owns the input.
    pub session: SessionId,
    /// The input.
    pub backend_node_id: i64,
}

/// A download the browser started.
#[derive(Debug, Clone)]
pub struct Download {
    /// The browser's id (also the file name in the download directory).
    pub guid: String,
    /// `inProgress`, `completed` or `canceled`.
    pub state: String,
    /// Bytes received.
    pub received_bytes: u64,
    /// Whether `download_file` already took it.
    pub delivered: bool,
}

/// The document currently in a tab's main frame.
#[derive(Debug, Clone, Default)]
pub struct Document {
    /// The loader of the committed document.
    pub loader_id: String,
    /// Same-document navigations (history API, fragments) since it committed: refs of an older
    /// generation are refused.
    pub generation: u64,
    /// Between the document's `init` and its `load`.
    pub loading: bool,
    /// Whether this document's `load` fired.
    pub loaded: bool,
    /// Counts commits of new documents.
    pub n_commits: u64,
}

/// One tab.
#[derive(Debug)]
pub struct Tab {
    /// The stable id (`t1`, `t2`, … never reused).
    pub id: TabId,
    /// The page target.
    pub target_id: String,
    /// Its flat session.
    pub session: SessionId,
    /// Title, as the browser reports it.
    pub title: String,
    /// Full URL, as the browser reports it.
    pub url: String,
    /// Set once interception and setup are on and the page runs.
    pub ready: bool,
    /// Set when its renderer crashed.
    pub crashed: bool,
    /// The main frame's document.
    pub doc: Document,
    /// Requests in flight in the tab's frames and workers, by network request id.
    pub inflight: HashMap<String, Instant>,
    /// The last time a request started or ended.
    pub last_network: Instant,
    /// Requests started in the tab so far (counted from the browser's network events).
    pub n_requests: u64,
    /// When the main frame last asked to navigate (a link, a form, script) or to open a window,
    /// and has neither committed a new document nor moved within its own since: an action that
    /// sees one settles the long way, waiting for the new document or tab.
    pub nav_requested: Option<Instant>,
    /// A chooser waiting for a file.
    pub chooser: Option<FileChooser>,
    /// An action answered before the page was done with it (its DOM not yet quiet for the
    /// settle's `action_quiet`, or requests it caused still in flight): the tab's next call
    /// waits for that first ([`crate::driver::CdpBrowser::page_ready`]).
    pub settling: Option<crate::settle::Settling>,
    /// HTTP statuses of the main frame's recent document responses, by loader (request) id.
    pub doc_statuses: VecDeque<(String, u16)>,
    /// Console and network history, bounded.
    pub rings: Rings,
}

/// Everything the event loop knows.
#[derive(Debug)]
pub struct State {
    /// Tabs, in the order they opened.
    pub tabs: Vec<Tab>,
    /// The active tab.
    pub active: Option<TabId>,
    /// Tabs in the order they were last activated (most recent last), to pick the next active
    /// tab when the active one closes.
    pub activation: Vec<TabId>,
    /// The next tab number.
    pub next_tab: u64,
    /// Attached sessions.
    pub sessions: HashMap<SessionId, SessionInfo>,
    /// Requests the policy denied, most recent last, bounded.
    pub blocked: VecDeque<BlockedRequest>,
    /// How many requests were denied in total.
    pub n_blocked: u64,
    /// Downloads, in start order.
    pub downloads: Vec<Download>,
    /// Targets that could not be intercepted and were kept paused.
    pub n_unintercepted: u64,
    /// Why the connection ended, once it has.
    pub closed: Option<String>,
    capacity: usize,
}

impl State {
    fn new(capacity: usize) -> State {
        State {
            tabs: Vec::new(),
            active: None,
            activation: Vec::new(),
            next_tab: 1,
            sessions: HashMap::new(),
            blocked: VecDeque::new(),
            n_blocked: 0,
            downloads: Vec::new(),
            n_unintercepted: 0,
            closed: None,
            capacity,
        }
    }

    /// The tab with `id`.
    pub fn tab(&self, id: &TabId) -> Option<&Tab> {
        self.tabs.iter().find(|t| &t.id == id)
    }

    /// The tabs a call can reach: loaded and not crashed.
    pub fn live_tabs(&self) -> impl Iterator<Item = &Tab> {
        self.tabs.iter().filter(|t| t.ready && !t.crashed)
    }

    /// The active tab's session, when that tab is live.
    pub fn active_session(&self) -> Option<SessionId> {
        self.active
            .as_ref()
            .and_then(|id| self.tab(id))
            .filter(|t| t.ready && !t.crashed)
            .map(|t| t.session.clone())
    }

    /// The HTTP status of the tab's current document, when it came over HTTP.
    pub fn doc_status(tab: &Tab) -> Option<u16> {
        tab.doc_statuses
            .iter()
            .rev()
            .find(|(id, _)| id == &tab.doc.loader_id)
            .map(|(_, s)| *s)
    }

    /// The tab with `id`, mutably.
    pub fn tab_mut(&mut self, id: &TabId) -> Option<&mut Tab> {
        self.tabs.iter_mut().find(|t| &t.id == id)
    }

    fn tab_of_session_mut(&mut self, session: &SessionId) -> Option<&mut Tab> {
        let id = self.sessions.get(session)?.tab.clone()?;
        self.tab_mut(&id)
    }

    fn page_tab_mut(&mut self, session: &SessionId) -> Option<&mut Tab> {
        self.tabs.iter_mut().find(|t| &t.session == session)
    }

    /// Makes `id` the active tab.
    pub fn activate(&mut self, id: &TabId) {
        self.active = Some(id.clone());
        self.activation.retain(|t| t != id);
        self.activation.push(id.clone());
    }

    fn remove_tab(&mut self, target_id: &str) {
        let Some(idx) = self.tabs.iter().position(|t| t.target_id == target_id) else {
            return;
        };
        let tab = self.tabs.remove(idx);
        self.activation.retain(|t| t != &tab.id);
        self.sessions.retain(|_, s| s.tab.as_ref() != Some(&tab.id));
        if self.active.as_ref() == Some(&tab.id) {
            // The most recently active tab that is still open, else the last opened one.
            self.active = self
                .activation
                .last()
                .cloned()
                .or_else(|| self.tabs.last().map(|t| t.id.clone()));
        }
    }

    fn record_blocked(&mut self, blocked: BlockedRequest) {
        self.n_blocked += 1;
        if self.blocked.len() == self.capacity {
            self.blocked.pop_front();
        }
        self.blocked.push_back(blocked);
    }
}

/// The state shared by the driver and its event loop.
pub struct Shared {
    /// The DevTools connection.
    pub conn: Connection,
    /// The network policy.
    pub policy: SharedPolicy,
    /// Viewport every page is sized to.
    pub viewport: (u32, u32),
    /// Whether every page and frame gets [`PAGE_FENCE_JS`] before it runs (a browser without
    /// the policy proxy and launch settings: attached, or launched without the proxy).
    pub page_fence: bool,
    /// The listener log ([`LISTENERS_JS`]) with this session's event-name token in it.
    pub listener_log: String,
    /// The token: the page agent names its probe and mark events with it.
    pub listener_token: String,
    state: Mutex<State>,
    /// Bumped on every state change a waiter may care about.
    pub changed: watch::Sender<u64>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("conn", &self.conn).finish()
    }
}

impl Shared {
    /// A fresh state.
    pub fn new(
        conn: Connection,
        policy: SharedPolicy,
        viewport: (u32, u32),
        capacity: usize,
        page_fence: bool,
    ) -> Arc<Shared> {
        let token = session_token();
        Arc::new(Shared {
            conn,
            policy,
            viewport,
            page_fence,
            listener_log: LISTENERS_JS.replace(LISTENER_TOKEN_SLOT, &token),
            listener_token: token,
            state: Mutex::new(State::new(capacity)),
            changed: watch::channel(0).0,
        })
    }

    /// Locks the state (never held across an await).
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Tells waiters something changed.
    pub fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }
}

/// The listener log: run in the main world of every document before the page's own scripts,
/// it notes which elements get click, pointer, mouse, touch or key handlers, and answers the page
/// agent's probe once per read (see `listeners.js`). Cost: a wrapper around `addEventListener`
/// and the `on…` handler setters (a map insert per handler added), and per read one event per
/// element with a handler; no DOM change, no per-element protocol call
/// (`DOMDebugger.getEventListeners` would be one round trip per element).
pub const LISTENERS_JS: &str = include_str!("listeners.js");

/// Where [`LISTENERS_JS`] takes the session's token.
const LISTENER_TOKEN_SLOT: &str = "__HANDS_TOKEN__";

/// A token for event names no page can guess ahead of time (`__hands_` and 16 hex digits).
fn session_token() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    format!("__hands_{:016x}", hasher.finish())
}

/// The page fence: run in the main world of every document (and the first empty document of
/// every frame) before the page's own scripts, in a browser that has no policy proxy. It takes
/// away the three APIs whose network traffic the browser itself sends, where request
/// interception never sees it: WebRTC (UDP to any address a page names, STUN and TURN included),
/// the Payment Request API (payment-method manifests) and FedCM (identity-provider look-ups).
/// Each is made absent (`typeof RTCPeerConnection === "undefined"`), as in a browser without
/// it; a page that feature-tests falls back. A launched browser gets the same effect from its
/// settings and flags instead (see `launch`), and WebRTC there still works through the proxy.
pub const PAGE_FENCE_JS: &str = include_str!("fence.js");

/// Runs until the connection closes: applies every event to the state, answers paused requests,
/// sets up and resumes attached targets.
pub async fn run(shared: Arc<Shared>, mut events: mpsc::UnboundedReceiver<Arc<Event>>) {
    while let Some(event) = events.recv().await {
        handle(&shared, &event);
    }
    let reason = shared
        .conn
        .closed_reason()
        .unwrap_or_else(|| "the event stream ended".to_owned());
    shared.lock().closed = Some(reason);
    shared.bump();
}

fn handle(shared: &Arc<Shared>, event: &Event) {
    let session = event.session.as_ref();
    match event.method.as_str() {
        "Fetch.requestPaused" => {
            // With a session: a target's own interception. Without: the browser-wide one
            // (requests of frames whose own interception misses them, such as sandboxed
            // `srcdoc` frames in a process of their own).
            if let Some(paused) = event.parse::<RequestPaused>() {
                on_request_paused(shared, session, &paused);
            }
        }
        "Target.attachedToTarget" => {
            if let Some(attached) = event.parse::<AttachedToTarget>() {
                on_attached(shared, session, attached);
            }
        }
        "Target.detachedFromTarget" => {
            if let Some(detached) = event.parse::<DetachedFromTarget>() {
                on_detached(shared, detached);
            }
        }
        "Target.targetDestroyed" => {
            if let Some(gone) = event.parse::<TargetIdEvent>() {
                shared.lock().remove_tab(&gone.target_id);
                shared.bump();
            }
        }
        "Target.targetInfoChanged" => {
            if let Some(changed) = event.parse::<TargetInfoEvent>() {
                on_target_info_changed(shared, changed);
            }
        }
        "Inspector.targetCrashed" => {
            if let Some(session) = session {
                if let Some(tab) = shared.lock().page_tab_mut(session) {
                    tab.crashed = true;
                }
                shared.bump();
            }
        }
        "Network.requestWillBeSent" => {
            if let (Some(session), Some(sent)) = (session, event.parse::<RequestWillBeSent>()) {
                on_request_sent(shared, session, &sent);
            }
        }
        "Network.responseReceived" => {
            if let (Some(session), Some(received)) = (session, event.parse::<ResponseReceived>()) {
                on_response(shared, session, &received);
            }
        }
        "Network.loadingFinished" | "Network.loadingFailed" => {
            if let (Some(session), Some(done)) = (session, event.parse::<LoadingDone>()) {
                on_loading_done(shared, session, &done);
            }
        }
        "Page.lifecycleEvent" => {
            if let (Some(session), Some(lifecycle)) = (session, event.parse::<LifecycleEvent>()) {
                on_lifecycle(shared, session, &lifecycle);
            }
        }
        "Page.frameNavigated" => {
            if let (Some(session), Some(navigated)) = (session, event.parse::<FrameNavigated>()) {
                on_frame_navigated(shared, session, navigated);
            }
        }
        "Page.frameRequestedNavigation" => {
            if let (Some(session), Some(requested)) =
                (session, event.parse::<FrameRequestedNavigation>())
            {
                on_navigation_requested(shared, session, &requested);
            }
        }
        "Page.windowOpen" => {
            if let Some(session) = session {
                if let Some(tab) = shared.lock().page_tab_mut(session) {
                    tab.nav_requested = Some(Instant::now());
                }
                shared.bump();
            }
        }
        "Page.navigatedWithinDocument" => {
            if let (Some(session), Some(nav)) = (session, event.parse::<NavigatedWithinDocument>())
            {
                on_navigated_within_document(shared, session, nav);
            }
        }
        "Page.javascriptDialogOpening" => {
            if let (Some(session), Some(dialog)) = (session, event.parse::<DialogOpening>()) {
                on_dialog(shared, session, &dialog);
            }
        }
        "Page.fileChooserOpened" => {
            if let (Some(session), Some(chooser)) = (session, event.parse::<FileChooserOpened>()) {
                on_file_chooser(shared, session, &chooser);
            }
        }
        "Browser.downloadWillBegin" | "Page.downloadWillBegin" => {
            if let Some(begin) = event.parse::<DownloadWillBegin>() {
                on_download_begin(shared, begin);
            }
        }
        "Browser.downloadProgress" | "Page.downloadProgress" => {
            if let Some(progress) = event.parse::<DownloadProgress>() {
                on_download_progress(shared, progress);
            }
        }
        "Runtime.consoleAPICalled" => {
            if let (Some(session), Some(call)) = (session, event.parse::<ConsoleApiCalled>()) {
                let text = call
                    .args
                    .iter()
                    .map(|a| a.describe())
                    .collect::<Vec<_>>()
                    .join(" ");
                push_console(shared, session, ConsoleEntry::new(&call.kind, &text));
            }
        }
        "Runtime.exceptionThrown" => {
            if let (Some(session), Some(thrown)) = (session, event.parse::<ExceptionThrown>()) {
                let text = thrown.exception_details.describe();
                push_console(shared, session, ConsoleEntry::new("exception", &text));
            }
        }
        _ => {}
    }
}

/// `Target.detachedFromTarget`: the session is forgotten, and a page's tab with it.
fn on_detached(shared: &Shared, detached: DetachedFromTarget) {
    let session = SessionId(detached.session_id);
    let mut state = shared.lock();
    if let Some(info) = state.sessions.remove(&session)
        && info.kind == TargetKind::Page
    {
        state.remove_tab(&info.target_id);
    }
    drop(state);
    shared.bump();
}

/// `Target.targetInfoChanged`: a tab's new title and URL.
fn on_target_info_changed(shared: &Shared, changed: TargetInfoEvent) {
    let info = changed.target_info;
    let mut state = shared.lock();
    if let Some(tab) = state
        .tabs
        .iter_mut()
        .find(|t| t.target_id == info.target_id)
    {
        tab.title = info.title;
        tab.url = info.url;
    }
    drop(state);
    shared.bump();
}

/// `Page.frameNavigated`: a new document committed in a tab's main frame.
fn on_frame_navigated(shared: &Shared, session: &SessionId, navigated: FrameNavigated) {
    let mut state = shared.lock();
    if let Some(tab) = state.page_tab_mut(session)
        && navigated.frame.parent_id.is_none()
        && navigated.frame.id == tab.target_id
        && navigated.frame.loader_id != tab.doc.loader_id
    {
        tab.doc.loader_id = navigated.frame.loader_id;
        tab.doc.generation = 0;
        tab.doc.n_commits += 1;
        tab.doc.loading = true;
        tab.doc.loaded = false;
        tab.chooser = None;
        tab.nav_requested = None;
    }
    drop(state);
    shared.bump();
}

/// `Page.frameRequestedNavigation`: the main frame is about to navigate.
fn on_navigation_requested(
    shared: &Shared,
    session: &SessionId,
    requested: &FrameRequestedNavigation,
) {
    let mut state = shared.lock();
    if let Some(tab) = state.page_tab_mut(session)
        && requested.frame_id == tab.target_id
    {
        tab.nav_requested = Some(Instant::now());
    }
    drop(state);
    shared.bump();
}

/// `Page.navigatedWithinDocument`: the same document under a new URL (a fragment, a
/// `history.pushState`).
fn on_navigated_within_document(
    shared: &Shared,
    session: &SessionId,
    nav: NavigatedWithinDocument,
) {
    let mut state = shared.lock();
    if let Some(tab) = state.page_tab_mut(session)
        && nav.frame_id == tab.target_id
    {
        tab.doc.generation += 1;
        tab.url = nav.url;
        tab.nav_requested = None;
    }
    drop(state);
    shared.bump();
}

/// `Page.fileChooserOpened`: the tab's open chooser, for the next upload.
fn on_file_chooser(shared: &Shared, session: &SessionId, chooser: &FileChooserOpened) {
    let mut state = shared.lock();
    if let Some(backend_node_id) = chooser.backend_node_id
        && let Some(tab) = state.tab_of_session_mut(session)
    {
        tab.chooser = Some(FileChooser {
            session: session.clone(),
            backend_node_id,
        });
    }
    drop(state);
    shared.bump();
}

/// `downloadWillBegin` (browser or page domain): a download in progress, noted once.
fn on_download_begin(shared: &Shared, begin: DownloadWillBegin) {
    let mut state = shared.lock();
    if !state.downloads.iter().any(|d| d.guid == begin.guid) {
        state.downloads.push(Download {
            guid: begin.guid,
            state: "inProgress".to_owned(),
            received_bytes: 0,
            delivered: false,
        });
    }
    drop(state);
    shared.bump();
}

/// `downloadProgress` (browser or page domain): a download's state and bytes so far.
fn on_download_progress(shared: &Shared, progress: DownloadProgress) {
    let mut state = shared.lock();
    if let Some(d) = state.downloads.iter_mut().find(|d| d.guid == progress.guid) {
        d.state = progress.state;
        d.received_bytes = progress.received_bytes.max(0.0) as u64;
    }
    drop(state);
    shared.bump();
}

fn push_console(shared: &Shared, session: &SessionId, entry: ConsoleEntry) {
    let mut state = shared.lock();
    if let Some(tab) = state.tab_of_session_mut(session) {
        tab.rings.push_console(entry);
    }
}

fn on_request_paused(shared: &Shared, session: Option<&SessionId>, paused: &RequestPaused) {
    let tab = {
        let state = shared.lock();
        match session {
            Some(session) => state.sessions.get(session).and_then(|s| s.tab.clone()),
            // A browser-wide pause names its frame: a tab's main frame has the tab's target id.
            None => state
                .tabs
                .iter()
                .find(|t| t.target_id == paused.frame_id)
                .map(|t| t.id.clone()),
        }
    };
    let (verdict, origin) = decide(
        shared.policy.as_ref(),
        &paused.request.url,
        &paused.resource_type,
        &paused.request.method,
        tab.as_ref(),
    );
    let sent = match &verdict {
        Verdict::Allow => shared.conn.send(
            session,
            "Fetch.continueRequest",
            json!({"requestId": paused.request_id}),
        ),
        Verdict::Deny { .. } => shared.conn.send(
            session,
            "Fetch.failRequest",
            json!({"requestId": paused.request_id, "errorReason": BLOCKED_ERROR_REASON}),
        ),
    };
    if let Err(e) = sent {
        tracing::debug!(error = %e, "could not answer a paused request");
    }
    if let Verdict::Deny { reason } = verdict {
        tracing::debug!(%origin, resource_type = %paused.resource_type, %reason, "request blocked");
        let blocked = BlockedRequest {
            tab: tab.clone(),
            origin,
            resource_type: paused.resource_type.clone(),
            reason,
        };
        let mut state = shared.lock();
        if let Some(id) = &tab
            && let Some(tab) = state.tab_mut(id)
        {
            tab.rings
                .push_network(NetworkEntry::blocked(&blocked, &paused.request.method));
        }
        state.record_blocked(blocked);
        drop(state);
        shared.bump();
    }
}

/// Resource types that stay open by design and never count as "network busy".
fn long_lived(kind: Option<&str>) -> bool {
    matches!(
        kind,
        Some("EventSource" | "WebSocket" | "Ping" | "Prefetch")
    )
}

fn on_request_sent(shared: &Shared, session: &SessionId, sent: &RequestWillBeSent) {
    let mut state = shared.lock();
    if let Some(tab) = state.tab_of_session_mut(session) {
        let now = Instant::now();
        if !long_lived(sent.kind.as_deref()) {
            tab.inflight.insert(sent.request_id.clone(), now);
        }
        tab.last_network = now;
        tab.n_requests += 1;
        tab.rings.push_network(NetworkEntry::started(
            &sent.request_id,
            &sent.request.method,
            &sent.request.url,
            sent.kind.as_deref().unwrap_or("Other"),
        ));
    }
    drop(state);
    shared.bump();
}

fn on_response(shared: &Shared, session: &SessionId, received: &ResponseReceived) {
    let mut state = shared.lock();
    if let Some(tab) = state.tab_of_session_mut(session) {
        let status = received.response.status.clamp(0.0, 999.0) as u16;
        if received.kind.as_deref() == Some("Document")
            && &tab.session == session
            && received.frame_id.as_deref() == Some(tab.target_id.as_str())
        {
            if tab.doc_statuses.len() == 8 {
                tab.doc_statuses.pop_front();
            }
            tab.doc_statuses
                .push_back((received.request_id.clone(), status));
        }
        tab.rings.set_status(&received.request_id, status);
    }
}

fn on_loading_done(shared: &Shared, session: &SessionId, done: &LoadingDone) {
    let mut state = shared.lock();
    if let Some(tab) = state.tab_of_session_mut(session) {
        tab.inflight.remove(&done.request_id);
        tab.last_network = Instant::now();
        if let Some(error) = &done.error_text {
            tab.rings.set_failed(&done.request_id, error);
        } else if let Some(bytes) = done.encoded_data_length {
            tab.rings.set_bytes(&done.request_id, bytes.max(0.0) as u64);
        }
    }
    drop(state);
    shared.bump();
}

fn on_lifecycle(shared: &Shared, session: &SessionId, lifecycle: &LifecycleEvent) {
    let mut state = shared.lock();
    if let Some(tab) = state.page_tab_mut(session)
        && lifecycle.frame_id == tab.target_id
    {
        match lifecycle.name.as_str() {
            "init" => {
                if lifecycle.loader_id != tab.doc.loader_id {
                    tab.doc.loader_id = lifecycle.loader_id.clone();
                    tab.doc.generation = 0;
                    tab.doc.n_commits += 1;
                }
                tab.doc.loading = true;
                tab.doc.loaded = false;
            }
            // A late `load` of the previous document must not mark the new one loaded.
            "load" if lifecycle.loader_id == tab.doc.loader_id => {
                tab.doc.loading = false;
                tab.doc.loaded = true;
            }
            _ => {}
        }
    }
    drop(state);
    shared.bump();
}

fn on_dialog(shared: &Shared, session: &SessionId, dialog: &DialogOpening) {
    // A dialog blocks the page's scripts (and so every read); alerts and beforeunload are
    // accepted, confirm and prompt are dismissed, as a cautious user would.
    let accept = matches!(dialog.kind.as_str(), "alert" | "beforeunload");
    let _ = shared.conn.send(
        Some(session),
        "Page.handleJavaScriptDialog",
        json!({"accept": accept}),
    );
    let verb = if accept { "accepted" } else { "dismissed" };
    push_console(
        shared,
        session,
        ConsoleEntry::new(
            "dialog",
            &format!("{} {verb}: {}", dialog.kind, dialog.message),
        ),
    );
}

fn on_attached(shared: &Arc<Shared>, parent: Option<&SessionId>, attached: AttachedToTarget) {
    let session = SessionId(attached.session_id.clone());
    let info = &attached.target_info;
    let kind = TargetKind::of(&info.kind);
    if info.kind == "browser_ui" {
        // The browser's own UI (chrome:// pages): not the model's to drive. Let it run and let
        // it go.
        let conn = shared.conn.clone();
        tokio::spawn(async move {
            let _ = conn
                .call(Some(&session), "Runtime.runIfWaitingForDebugger", json!({}))
                .await;
            let _ = conn
                .call(
                    None,
                    "Target.detachFromTarget",
                    json!({"sessionId": session.0}),
                )
                .await;
        });
        return;
    }
    let mut state = shared.lock();
    let owner = parent
        .and_then(|p| state.sessions.get(p))
        .and_then(|s| s.tab.clone());
    let duplicate_page =
        kind == TargetKind::Page && state.tabs.iter().any(|t| t.target_id == info.target_id);
    let tab = match kind {
        TargetKind::Page if !duplicate_page => {
            let id = TabId::new(format!("t{}", state.next_tab));
            state.next_tab += 1;
            let Some(id) = id else { return };
            let rings = Rings::new(state.capacity);
            state.tabs.push(Tab {
                id: id.clone(),
                target_id: info.target_id.clone(),
                session: session.clone(),
                title: info.title.clone(),
                url: info.url.clone(),
                ready: false,
                crashed: false,
                doc: Document::default(),
                inflight: HashMap::new(),
                last_network: Instant::now(),
                n_requests: 0,
                nav_requested: None,
                chooser: None,
                settling: None,
                doc_statuses: VecDeque::new(),
                rings,
            });
            // A pop-up comes to the front, as in a real browser; so does the first tab.
            if info.opener_id.is_some() || state.active.is_none() {
                state.activate(&id);
            }
            Some(id)
        }
        TargetKind::Page => None,
        // Service and shared workers serve every tab of their origin.
        TargetKind::Worker if info.kind != "worker" => None,
        _ => owner,
    };
    state.sessions.insert(
        session.clone(),
        SessionInfo {
            target_id: info.target_id.clone(),
            kind,
            tab,
        },
    );
    drop(state);
    shared.bump();
    let shared = Arc::clone(shared);
    let dedicated_worker = info.kind == "worker";
    tokio::spawn(async move {
        if duplicate_page {
            let _ = shared
                .conn
                .call(Some(&session), "Runtime.runIfWaitingForDebugger", json!({}))
                .await;
            return;
        }
        set_up(&shared, &session, kind, dedicated_worker).await;
    });
}

/// Interception first, then this target's own auto-attach and the domains the driver reads;
/// all sent at once (the browser runs a session's commands in order), then resumed.
async fn set_up(shared: &Shared, session: &SessionId, kind: TargetKind, dedicated_worker: bool) {
    let conn = &shared.conn;
    let s = Some(session);
    let auto_attach = serde_json::to_value(SetAutoAttach::ALL_PAUSED).unwrap_or(Value::Null);
    let fetch = conn.call(
        s,
        "Fetch.enable",
        json!({"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}),
    );
    let attach = conn.call(s, "Target.setAutoAttach", auto_attach);
    let mut optional: Vec<(&str, Value)> = Vec::new();
    if matches!(kind, TargetKind::Page | TargetKind::Frame) {
        optional.push((
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": shared.listener_log, "runImmediately": true}),
        ));
    }
    if shared.page_fence && matches!(kind, TargetKind::Page | TargetKind::Frame) {
        optional.push((
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": PAGE_FENCE_JS, "runImmediately": true}),
        ));
    }
    match kind {
        TargetKind::Page => {
            let (w, h) = shared.viewport;
            optional.extend([
                // A prerendered page is a target of its own that no tab owns: none is made.
                ("Page.setPrerenderingAllowed", json!({"isAllowed": false})),
                ("Network.enable", json!({})),
                ("Page.enable", json!({})),
                ("Page.setLifecycleEventsEnabled", json!({"enabled": true})),
                ("Runtime.enable", json!({})),
                (
                    "Page.setInterceptFileChooserDialog",
                    json!({"enabled": true}),
                ),
                (
                    "Emulation.setDeviceMetricsOverride",
                    json!({"width": w, "height": h, "deviceScaleFactor": 1, "mobile": false}),
                ),
                (
                    "Emulation.setFocusEmulationEnabled",
                    json!({"enabled": true}),
                ),
                ("Inspector.enable", json!({})),
            ]);
        }
        TargetKind::Frame => optional.extend([
            ("Network.enable", json!({})),
            ("Page.enable", json!({})),
            ("Runtime.enable", json!({})),
            (
                "Page.setInterceptFileChooserDialog",
                json!({"enabled": true}),
            ),
        ]),
        TargetKind::Worker => {
            // A paused service worker answers these only once it runs: they are sent ahead of
            // the resume (so they apply first) but not waited for.
            for (method, params) in [("Network.enable", json!({})), ("Runtime.enable", json!({}))] {
                if let Err(e) = conn.send(s, method, params) {
                    tracing::debug!(%method, error = %e, "could not enable a worker domain");
                }
            }
        }
        TargetKind::Other => {}
    }
    let optional_calls = optional
        .into_iter()
        .map(|(method, params)| async move { (method, conn.call(s, method, params).await) });
    let (fetch, attach, optional) = tokio::join!(
        fetch,
        attach,
        futures_util::future::join_all(optional_calls)
    );
    for (method, result) in optional {
        if let Err(e) = result {
            tracing::debug!(%method, error = %e, ?kind, "optional setup step failed");
        }
    }
    if let Err(e) = &attach {
        tracing::debug!(error = %e, ?kind, "auto-attach on a child failed");
    }
    if let Err(e) = fetch {
        if e.is_closed() {
            return;
        }
        // A dedicated worker has no Fetch domain of its own: its requests go through its
        // frame's loader and are paused by the frame's interception (tested), and the proxy
        // checks its connections.
        let covered_by_frame = dedicated_worker
            && matches!(
                e,
                crate::connection::CdpError::Protocol { code: -32601, .. }
            );
        if covered_by_frame {
            resume(shared, session, kind).await;
            return;
        }
        // Fail closed: a target whose requests cannot be checked never runs.
        tracing::warn!(error = %e, ?kind, "request interception failed; the target stays paused");
        shared.lock().n_unintercepted += 1;
        return;
    }
    if kind == TargetKind::Page
        && let Ok(tree) = conn.run(s, &crate::protocol::GetFrameTree {}).await
    {
        let mut state = shared.lock();
        if let Some(tab) = state.page_tab_mut(session)
            && tab.doc.loader_id.is_empty()
        {
            tab.doc.loader_id = tree.frame_tree.frame.loader_id;
        }
    }
    resume(shared, session, kind).await;
}

async fn resume(shared: &Shared, session: &SessionId, kind: TargetKind) {
    if let Err(e) = shared
        .conn
        .call(Some(session), "Runtime.runIfWaitingForDebugger", json!({}))
        .await
    {
        tracing::debug!(error = %e, ?kind, "could not resume a target");
    }
    if kind == TargetKind::Page {
        if let Some(tab) = shared.lock().page_tab_mut(session) {
            tab.ready = true;
        }
        shared.bump();
    }
}
