//! The HTTP server: a thread of its own running a current-thread tokio runtime and hyper's
//! HTTP/1 connection handler, the shared state, and the handles tests use.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::ops::Deref;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use hyper::body::{Body as _, Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::config::{AnthropicConfig, OpenAiConfig, SimConfig, StreamConfig};
use crate::error::{Api, ApiError, SimError};
use crate::faults::{Fault, QueuedFault};
use crate::images::ImageMemo;
use crate::policy::{Policy, Turn, TurnSource};
use crate::record::{Counters, RecordedRequest, Verdict};
use crate::sign::{IdGen, Signer, fingerprint};
use crate::sse::{ChunkBody, Ending, Event};
use crate::{anthropic, openai};

/// Everything the request handlers read and change, behind one lock: requests are handled
/// one at a time, as a model API answers one conversation turn at a time.
pub(crate) struct State {
    pub(crate) anthropic_config: AnthropicConfig,
    pub(crate) openai_config: OpenAiConfig,
    pub(crate) stream: StreamConfig,
    pub(crate) turns: TurnSource,
    pub(crate) faults: VecDeque<QueuedFault>,
    pub(crate) records: Vec<RecordedRequest>,
    pub(crate) counters: Counters,
    pub(crate) ids: IdGen,
    pub(crate) signer: Signer,
    pub(crate) anthropic: anthropic::Memory,
    pub(crate) openai: openai::Memory,
    /// Base64 images already decoded, for both APIs.
    pub(crate) images: ImageMemo,
    /// A turn whose answer a fault cut short, kept for the retry of the same body, so a
    /// script does not skip a turn the client never saw.
    replay: Option<(u64, Turn)>,
    /// The whole conversation of the request being answered, when it continued a `thread`:
    /// taken into its record.
    pub(crate) thread_conversation: Option<Vec<Value>>,
}

impl State {
    /// Takes the first queued fault that applies to `api`.
    pub(crate) fn take_fault(&mut self, api: Api) -> Option<Fault> {
        let idx = self
            .faults
            .iter()
            .position(|q| q.only.is_none_or(|only| only == api))?;
        self.faults.remove(idx).map(|q| q.fault)
    }

    /// Puts a fault back at the front, for a request it did not get to act on.
    pub(crate) fn return_fault(&mut self, fault: Fault, api: Api) {
        self.faults.push_front(QueuedFault {
            fault,
            only: Some(api),
        });
    }

    /// Applies the next queued fault for `api` to a checked request. A fault that answers with
    /// an HTTP error answers now, recording what the request broke, if anything. A fault that
    /// cuts a stream is handed back for the answer, unless the request is refused anyway: the
    /// real API refuses before it streams, so the fault waits for the next request.
    pub(crate) fn fault_or_refusal<C>(
        &mut self,
        api: Api,
        streaming: bool,
        checked: Result<C, ApiError>,
        request_id: &str,
    ) -> Result<(C, Option<Fault>), Box<Outcome>> {
        let mut stream_fault = None;
        if let Some(fault) = self.take_fault(api) {
            if let Some(error) = fault.http_error(api, streaming) {
                let verdict = Verdict::Faulted {
                    fault,
                    violation: checked.err(),
                };
                return Err(Box::new(Outcome::error(api, error, request_id, verdict)));
            }
            if checked.is_err() {
                self.return_fault(fault, api);
            } else {
                stream_fault = Some(fault);
            }
        }
        match checked {
            Ok(checked) => Ok((checked, stream_fault)),
            Err(error) => Err(Box::new(Outcome::rejected(api, error, request_id))),
        }
    }

    /// The next turn for this request: the stashed one when this is the retry of a cut-short
    /// answer, else the turn source's. A panicking policy is reported, not propagated.
    pub(crate) fn next_turn(&mut self, body_hash: u64, request: &Value) -> Result<Turn, String> {
        if let Some((hash, turn)) = self.replay.take()
            && hash == body_hash
        {
            return Ok(turn);
        }
        let turns = &mut self.turns;
        match std::panic::catch_unwind(AssertUnwindSafe(|| turns.next(request))) {
            Ok(Some(turn)) => Ok(turn),
            Ok(None) => Err(
                "hands-sim: no turn left: the script is exhausted and no policy is set".to_owned(),
            ),
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(format!("hands-sim: the policy panicked: {what}"))
            }
        }
    }

    /// Keeps `turn` for the retry of the request whose body hashes to `body_hash`.
    pub(crate) fn stash(&mut self, body_hash: u64, turn: Turn) {
        self.replay = Some((body_hash, turn));
    }
}

/// What a handler decided: the answer, the verdict and the object recorded as the answer.
pub(crate) struct Outcome {
    pub(crate) reply: Reply,
    pub(crate) verdict: Verdict,
    pub(crate) response: Option<Value>,
}

/// The answer to send.
pub(crate) enum Reply {
    /// One JSON document.
    Json {
        status: u16,
        headers: Vec<(String, String)>,
        body: Value,
    },
    /// An SSE stream (status 200).
    Events {
        headers: Vec<(String, String)>,
        events: Vec<Event>,
        ending: Ending,
    },
    /// Close the connection without answering.
    Drop,
}

impl Outcome {
    /// An error answer in `api`'s shape.
    pub(crate) fn error(api: Api, error: ApiError, request_id: &str, verdict: Verdict) -> Outcome {
        let body = error.body(api, request_id);
        let mut headers: Vec<(String, String)> = error
            .headers
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .collect();
        headers.push((request_id_header(api).to_owned(), request_id.to_owned()));
        Outcome {
            reply: Reply::Json {
                status: error.status,
                headers,
                body: body.clone(),
            },
            verdict,
            response: Some(body),
        }
    }

    /// A rejection by a rule.
    pub(crate) fn rejected(api: Api, error: ApiError, request_id: &str) -> Outcome {
        Outcome::error(api, error.clone(), request_id, Verdict::Rejected(error))
    }

    /// A failure of the turn source, answered with a 400 that names it.
    pub(crate) fn policy_failed(api: Api, message: String, request_id: &str) -> Outcome {
        let error = ApiError::invalid(message.clone());
        Outcome::error(api, error, request_id, Verdict::PolicyFailed(message))
    }
}

/// The request-id header of each API.
pub(crate) fn request_id_header(api: Api) -> &'static str {
    match api {
        Api::Anthropic => "request-id",
        Api::OpenAi => "x-request-id",
    }
}

/// The value of a header by lower-case name.
pub(crate) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// The state and the settings every handler shares.
pub(crate) struct Shared {
    state: Mutex<State>,
    max_request_bytes: usize,
    /// Held for a whole request: requests are answered one at a time, even while one waits on
    /// an MCP server with the state unlocked.
    serial: tokio::sync::Mutex<()>,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the state usable: every write is whole.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A cloneable handle on a running [`SimServer`]: queue turns and faults, read the records.
/// It stays valid (and inert) after the server is dropped.
#[derive(Clone)]
pub struct SimHandle {
    shared: Arc<Shared>,
}

impl SimHandle {
    /// Appends a scripted turn.
    pub fn push_turn(&self, turn: Turn) {
        self.shared.lock().turns.script.push_back(turn);
    }

    /// Appends scripted turns.
    pub fn push_turns(&self, turns: impl IntoIterator<Item = Turn>) {
        self.shared.lock().turns.script.extend(turns);
    }

    /// Scripted turns not yet served.
    pub fn turns_left(&self) -> usize {
        self.shared.lock().turns.script.len()
    }

    /// Sets the policy asked once the script is empty.
    pub fn set_policy(&self, policy: impl Policy + 'static) {
        self.shared.lock().turns.policy = Some(Box::new(policy));
    }

    /// Queues a fault for the next request of either API.
    pub fn inject(&self, fault: Fault) {
        self.inject_n(fault, 1);
    }

    /// Queues a fault for each of the next `n` requests of either API.
    pub fn inject_n(&self, fault: Fault, n: usize) {
        let mut state = self.shared.lock();
        for _ in 0..n {
            state.faults.push_back(QueuedFault {
                fault: fault.clone(),
                only: None,
            });
        }
    }

    /// Queues a fault for the next request of `api`.
    pub fn inject_for(&self, api: Api, fault: Fault) {
        self.shared.lock().faults.push_back(QueuedFault {
            fault,
            only: Some(api),
        });
    }

    /// Faults still queued.
    pub fn faults_left(&self) -> usize {
        self.shared.lock().faults.len()
    }

    /// Drops every queued fault.
    pub fn clear_faults(&self) {
        self.shared.lock().faults.clear();
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().records.clone()
    }

    /// The latest request.
    pub fn last_request(&self) -> Option<RecordedRequest> {
        self.shared.lock().records.last().cloned()
    }

    /// Requests that broke a rule of the real API, whether they were answered with the
    /// rejection or with an injected fault. Empty for a well-behaved client.
    pub fn violations(&self) -> Vec<RecordedRequest> {
        self.shared
            .lock()
            .records
            .iter()
            .filter(|r| r.verdict.violation().is_some())
            .cloned()
            .collect()
    }

    /// Running totals.
    pub fn counters(&self) -> Counters {
        self.shared.lock().counters
    }
}

/// The simulated model API, listening on 127.0.0.1 on a port of its own.
///
/// It runs on its own thread with its own tokio runtime, so it serves callers on any runtime
/// (a paused test clock included) or none; dropping it stops the thread and frees the port.
/// It dereferences to its [`SimHandle`].
pub struct SimServer {
    handle: SimHandle,
    addr: SocketAddr,
    /// Tells the server thread to stop; owned here, consumed on drop.
    shutdown: Option<oneshot::Sender<()>>,
    /// The server thread; joined on drop.
    thread: Option<JoinHandle<()>>,
}

impl SimServer {
    /// Binds 127.0.0.1:0 and starts serving.
    pub fn start(config: SimConfig) -> Result<SimServer, SimError> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(SimError::Bind)?;
        listener.set_nonblocking(true).map_err(SimError::Bind)?;
        let addr = listener.local_addr().map_err(SimError::Bind)?;
        let max_request_bytes = config.max_request_bytes;
        let mut faults = VecDeque::new();
        for fault in config.faults {
            faults.push_back(QueuedFault { fault, only: None });
        }
        let state = State {
            anthropic_config: config.anthropic,
            openai_config: config.openai,
            stream: config.stream,
            turns: TurnSource {
                script: config.script.into(),
                policy: config.policy,
            },
            faults,
            records: Vec::new(),
            counters: Counters::default(),
            ids: IdGen::default(),
            signer: Signer::new(&config.signing_key),
            anthropic: anthropic::Memory::default(),
            openai: openai::Memory::default(),
            images: ImageMemo::default(),
            replay: None,
            thread_conversation: None,
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            max_request_bytes,
            serial: tokio::sync::Mutex::new(()),
        });
        let (shutdown_tx, shutdown_rx) = oneshot::channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), std::io::Error>>();
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("hands-sim-{}", addr.port()))
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
                    match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => {
                            let _ = ready_tx.send(Ok(()));
                            serve(listener, thread_shared, shutdown_rx).await;
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                        }
                    }
                });
            })
            .map_err(SimError::Runtime)?;
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(SimError::Runtime(e)),
            Err(_) => {
                return Err(SimError::Runtime(std::io::Error::other(
                    "the server thread ended before it was ready",
                )));
            }
        }
        Ok(SimServer {
            handle: SimHandle { shared },
            addr,
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT`: the Anthropic base URL (the client appends `/v1/messages`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`: the OpenAI base URL (the client appends `/responses`).
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A cloneable handle for other tasks and threads.
    pub fn handle(&self) -> SimHandle {
        self.handle.clone()
    }
}

impl Deref for SimServer {
    type Target = SimHandle;

    fn deref(&self) -> &SimHandle {
        &self.handle
    }
}

impl Drop for SimServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            // The thread ends as soon as its accept loop sees the signal; dropping its
            // runtime cancels open connections.
            let _ = thread.join();
        }
    }
}

async fn serve(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    mut shutdown: oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let shared = shared.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let shared = shared.clone();
                        async move { handle(&shared, request).await }
                    });
                    // A connection error (client gone, injected drop) ends only this
                    // connection.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        }
    }
}

enum BodyError {
    TooLarge,
    Io(std::io::Error),
}

async fn read_body(mut body: Incoming, limit: usize) -> Result<Vec<u8>, BodyError> {
    let mut buf = Vec::new();
    loop {
        let frame = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
        match frame {
            None => return Ok(buf),
            Some(Err(e)) => return Err(BodyError::Io(std::io::Error::other(e))),
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    if buf.len() + data.len() > limit {
                        return Err(BodyError::TooLarge);
                    }
                    buf.extend_from_slice(&data);
                }
            }
        }
    }
}

const SECRET_HEADERS: [&str; 2] = ["x-api-key", "authorization"];

async fn handle(
    shared: &Shared,
    request: Request<Incoming>,
) -> Result<Response<ChunkBody>, std::io::Error> {
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    let api = match path.as_str() {
        "/v1/messages" => Some(Api::Anthropic),
        "/v1/responses" => Some(Api::OpenAi),
        _ => None,
    };
    let body = read_body(request.into_body(), shared.max_request_bytes).await;

    let _one_at_a_time = shared.serial.lock().await;
    let early = |api: Api, error: ApiError| {
        let mut state = shared.lock();
        let request_id = state.ids.next("req_011C");
        Outcome::rejected(api, error, &request_id)
    };
    let (body_value, outcome) = match body {
        Err(BodyError::Io(e)) => return Err(e),
        Err(BodyError::TooLarge) => {
            let error = ApiError::new(
                413,
                "request_too_large",
                format!(
                    "Request exceeds the maximum allowed number of bytes ({}).",
                    shared.max_request_bytes
                ),
            );
            (Value::Null, early(api.unwrap_or(Api::Anthropic), error))
        }
        Ok(bytes) => {
            let parsed: Result<Value, _> = serde_json::from_slice(&bytes);
            let body_hash = fingerprint(7, &bytes);
            let outcome = match (api, method.as_str(), &parsed) {
                (None, _, _) => early(
                    Api::Anthropic,
                    ApiError::new(404, "not_found_error", format!("Not found: {path}")),
                ),
                (Some(api), m, _) if m != "POST" => early(
                    api,
                    ApiError::new(405, "invalid_request_error", "Method Not Allowed"),
                ),
                (Some(api), _, Err(e)) => {
                    let error = match api {
                        Api::Anthropic => ApiError::invalid(format!(
                            "There was an issue with your request body: it is not valid JSON ({e})."
                        )),
                        Api::OpenAi => ApiError::invalid(format!(
                            "We could not parse the JSON body of your request. ({e})"
                        )),
                    };
                    early(api, error)
                }
                (Some(Api::Anthropic), _, Ok(value)) => {
                    anthropic::handle(shared, &headers, value, body_hash).await
                }
                (Some(Api::OpenAi), _, Ok(value)) => {
                    openai::handle(shared, &headers, value, body_hash).await
                }
            };
            (parsed.unwrap_or(Value::Null), outcome)
        }
    };

    let mut state = shared.lock();
    let seq = state.counters.requests;
    let status = match &outcome.reply {
        Reply::Json { status, .. } => *status,
        Reply::Events { .. } => 200,
        Reply::Drop => 0,
    };
    state.counters.count(&outcome.verdict);
    let redacted = headers
        .into_iter()
        .map(|(name, value)| {
            if SECRET_HEADERS.contains(&name.as_str()) {
                (name, "[redacted]".to_owned())
            } else {
                (name, value)
            }
        })
        .collect();
    let thread_conversation = state.thread_conversation.take();
    state.records.push(RecordedRequest {
        seq,
        api,
        method,
        path,
        headers: redacted,
        body: body_value,
        thread_conversation,
        verdict: outcome.verdict,
        status,
        response: outcome.response,
    });
    drop(state);
    build_response(outcome.reply)
}

fn build_response(reply: Reply) -> Result<Response<ChunkBody>, std::io::Error> {
    let (status, headers, content_type, body) = match reply {
        Reply::Drop => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "hands-sim: injected dropped connection",
            ));
        }
        Reply::Json {
            status,
            headers,
            body,
        } => (
            status,
            headers,
            "application/json",
            ChunkBody::document(Bytes::from(body.to_string())),
        ),
        Reply::Events {
            headers,
            events,
            ending,
        } => (
            200,
            headers,
            "text/event-stream; charset=utf-8",
            ChunkBody::stream(events.iter().map(Event::encode).collect(), ending),
        ),
    };
    let mut builder = Response::builder()
        .status(status)
        .header("content-type", content_type);
    if content_type.starts_with("text/event-stream") {
        builder = builder.header("cache-control", "no-cache");
    }
    for (name, value) in headers {
        builder = builder.header(name, value);
    }
    builder.body(body).map_err(std::io::Error::other)
}
