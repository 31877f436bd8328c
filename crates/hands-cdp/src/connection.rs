//! One DevTools connection with flat sessions: request ids, per-call timeouts and cancellation, event subscriptions, and the task that owns the transport.
//!
//! The connection does not care how messages travel (the `transport` module): a browser hands
//! launches is spoken to over the two pipes of `--remote-debugging-pipe`
//! ([`Connection::over_pipes`]), so it has no DevTools port a local process could attach to and
//! switch the URL fence off with; a browser someone else started is attached to over its
//! DevTools WebSocket ([`Connection::connect`]). Everything above the transport — ids, answers,
//! events, sessions, the owning task — is the same for both.
//!
//! Spec: claude-computer-use-tool, precautions 1 and 3; issue 17.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::os::fd::OwnedFd;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_util::sync::CancellationToken;

use crate::protocol::Command;
use crate::transport::{MAX_MESSAGE_BYTES, Pipes, Transport, WebSocket};

/// A flat session id (`sessionId`), naming one attached target on the shared connection.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(pub String);

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A protocol failure: the transport, the browser's answer, or the wait for it.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CdpError {
    /// Connecting to the endpoint failed.
    #[error("could not connect to the DevTools endpoint {url}: {reason}")]
    Connect {
        /// The endpoint.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The connection is closed: the browser exited or the endpoint went away.
    #[error("the DevTools connection is closed: {reason}")]
    Closed {
        /// Why, as far as is known.
        reason: String,
    },
    /// The browser did not answer in time.
    #[error("{method} got no answer within {after:?}")]
    Timeout {
        /// The method called.
        method: String,
        /// The timeout.
        after: Duration,
    },
    /// The browser answered with an error.
    #[error("{method} failed: {message} (code {code})")]
    Protocol {
        /// The method called.
        method: String,
        /// The protocol error code.
        code: i64,
        /// The browser's message.
        message: String,
    },
    /// The answer did not have the expected shape.
    #[error("{method} returned an unexpected result: {reason}")]
    Decode {
        /// The method called.
        method: String,
        /// The decoding error.
        reason: String,
    },
    /// The caller cancelled the wait.
    #[error("cancelled")]
    Cancelled,
}

impl CdpError {
    /// Whether the error means the whole connection is gone (not just one call failing).
    pub fn is_closed(&self) -> bool {
        matches!(self, CdpError::Closed { .. } | CdpError::Connect { .. })
    }

    /// Whether the browser's error message contains `text` (protocol errors only).
    pub fn message_contains(&self, text: &str) -> bool {
        matches!(self, CdpError::Protocol { message, .. } if message.contains(text))
    }
}

/// One event: its method, the session it came from (`None` for the browser session), and params.
#[derive(Debug, Clone)]
pub struct Event {
    /// E.g. `Target.attachedToTarget`.
    pub method: String,
    /// The flat session that sent it.
    pub session: Option<SessionId>,
    /// The raw parameters.
    pub params: Value,
}

impl Event {
    /// The params as a typed event, ignoring fields the type does not name.
    pub fn parse<T: DeserializeOwned>(&self) -> Option<T> {
        match T::deserialize(&self.params) {
            Ok(value) => Some(value),
            Err(e) => {
                tracing::debug!(method = %self.method, error = %e, "event with an unexpected shape");
                None
            }
        }
    }
}

type Pending = HashMap<u64, (String, oneshot::Sender<Result<Value, CdpError>>)>;
type Filter = Box<dyn Fn(&Event) -> bool + Send + Sync>;

struct Subscriber {
    filter: Filter,
    tx: mpsc::UnboundedSender<Arc<Event>>,
}

struct Shared {
    next_id: AtomicU64,
    pending: Mutex<Pending>,
    subscribers: Mutex<Vec<Subscriber>>,
    closed: Mutex<Option<String>>,
    outgoing: mpsc::UnboundedSender<String>,
    /// Cancelled when the transport's task ends, for any reason.
    done: CancellationToken,
}

/// A cheap, cloneable handle on the one connection. The transport (a WebSocket or the pipes) is
/// owned by a task spawned in [`Connection::connect`] or [`Connection::over_pipes`], which lives
/// until the browser closes its end or every handle is dropped.
#[derive(Clone)]
pub struct Connection {
    shared: Arc<Shared>,
    /// Bound on calls made without an explicit timeout (per handle).
    call_timeout: Duration,
    /// Dropped with the last handle: cancels the transport's task.
    _owner: Arc<DropGuard>,
}

struct DropGuard(CancellationToken);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("closed", &self.closed_reason())
            .finish()
    }
}

impl Connection {
    /// Connects to a DevTools WebSocket URL (a browser someone else started) and starts the task
    /// that owns the socket.
    ///
    /// `call_timeout` bounds every call made without an explicit timeout.
    pub async fn connect(url: &str, call_timeout: Duration) -> Result<Connection, CdpError> {
        // CDP messages can be large (screenshots, whole-page reads); frames are local.
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE_BYTES))
            .max_frame_size(Some(MAX_MESSAGE_BYTES));
        let (socket, _) = tokio_tungstenite::connect_async_with_config(url, Some(config), true)
            .await
            .map_err(|e| CdpError::Connect {
                url: url.to_owned(),
                reason: e.to_string(),
            })?;
        Ok(Connection::start(WebSocket(socket), call_timeout))
    }

    /// Speaks to a browser started with `--remote-debugging-pipe` and starts the task that owns
    /// the pipes: `to_browser` is the write end of the pipe the browser reads commands from (its
    /// descriptor 3), `from_browser` the read end of the one it writes to (its descriptor 4).
    /// Each message is a JSON text ended by a NUL byte.
    ///
    /// Must be called inside a tokio runtime. `call_timeout` bounds every call made without an
    /// explicit timeout.
    pub fn over_pipes(
        to_browser: OwnedFd,
        from_browser: OwnedFd,
        call_timeout: Duration,
    ) -> Result<Connection, CdpError> {
        let not_a_pipe = |e: std::io::Error| CdpError::Connect {
            url: "the DevTools pipes".to_owned(),
            reason: e.to_string(),
        };
        let writer =
            tokio::net::unix::pipe::Sender::from_owned_fd(to_browser).map_err(not_a_pipe)?;
        let reader =
            tokio::net::unix::pipe::Receiver::from_owned_fd(from_browser).map_err(not_a_pipe)?;
        Ok(Connection::start(Pipes::new(reader, writer), call_timeout))
    }

    fn start(transport: impl Transport, call_timeout: Duration) -> Connection {
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        let shared = Arc::new(Shared {
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            subscribers: Mutex::new(Vec::new()),
            closed: Mutex::new(None),
            outgoing: out_tx,
            done: CancellationToken::new(),
        });
        tokio::spawn(run_transport(
            transport,
            out_rx,
            Arc::clone(&shared),
            stop.clone(),
        ));
        Connection {
            shared,
            call_timeout,
            _owner: Arc::new(DropGuard(stop)),
        }
    }

    /// A handle on the same connection whose calls without an explicit timeout wait at most
    /// `call_timeout`.
    pub fn with_call_timeout(&self, call_timeout: Duration) -> Connection {
        Connection {
            call_timeout,
            ..self.clone()
        }
    }

    /// Why the connection closed, if it has.
    pub fn closed_reason(&self) -> Option<String> {
        self.shared.closed.lock().ok().and_then(|c| c.clone())
    }

    /// A token cancelled when the connection closes.
    pub fn closed_token(&self) -> CancellationToken {
        self.shared.done.clone()
    }

    /// Receives every event `filter` accepts, in arrival order, until the connection closes or the
    /// receiver is dropped.
    pub fn subscribe(
        &self,
        filter: impl Fn(&Event) -> bool + Send + Sync + 'static,
    ) -> mpsc::UnboundedReceiver<Arc<Event>> {
        let (tx, rx) = mpsc::unbounded_channel();
        if self.closed_reason().is_none()
            && let Ok(mut subscribers) = self.shared.subscribers.lock()
        {
            subscribers.push(Subscriber {
                filter: Box::new(filter),
                tx,
            });
        }
        rx
    }

    /// Sends a command and waits for its answer (at most the connection's call timeout).
    pub async fn call(
        &self,
        session: Option<&SessionId>,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError> {
        self.call_with(session, method, params, self.call_timeout, None)
            .await
    }

    /// Sends a command and waits for its answer, at most `timeout`, or until `cancel` fires.
    pub async fn call_with(
        &self,
        session: Option<&SessionId>,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<Value, CdpError> {
        let (id, rx) = self.enqueue(session, method, params, true)?;
        let Some(rx) = rx else {
            return Ok(Value::Null);
        };
        let never = CancellationToken::new();
        let cancel = cancel.unwrap_or(&never);
        let result = tokio::select! {
            answer = rx => answer.unwrap_or_else(|_| Err(CdpError::Closed {
                reason: self.closed_reason().unwrap_or_else(|| "the connection's task ended".into()),
            })),
            _ = tokio::time::sleep(timeout) => Err(CdpError::Timeout {
                method: method.to_owned(),
                after: timeout,
            }),
            _ = cancel.cancelled() => Err(CdpError::Cancelled),
        };
        if result.is_err()
            && let Ok(mut pending) = self.shared.pending.lock()
        {
            pending.remove(&id);
        }
        result
    }

    /// Sends a command without waiting for its answer (an error answer is logged). Used where the
    /// event loop must not block, e.g. continuing a paused request.
    pub fn send(
        &self,
        session: Option<&SessionId>,
        method: &str,
        params: Value,
    ) -> Result<(), CdpError> {
        self.enqueue(session, method, params, false).map(|_| ())
    }

    /// Sends a typed command on `session` and decodes its answer.
    pub async fn run<C: Command>(
        &self,
        session: Option<&SessionId>,
        command: &C,
    ) -> Result<C::Response, CdpError> {
        let params = serde_json::to_value(command).map_err(|e| CdpError::Decode {
            method: C::METHOD.to_owned(),
            reason: e.to_string(),
        })?;
        let value = self.call(session, C::METHOD, params).await?;
        decode::<C::Response>(C::METHOD, value)
    }

    #[allow(clippy::type_complexity)]
    fn enqueue(
        &self,
        session: Option<&SessionId>,
        method: &str,
        params: Value,
        want_answer: bool,
    ) -> Result<(u64, Option<oneshot::Receiver<Result<Value, CdpError>>>), CdpError> {
        if let Some(reason) = self.closed_reason() {
            return Err(CdpError::Closed { reason });
        }
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = serde_json::json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = Value::String(session.0.clone());
        }
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.shared.pending.lock() {
            pending.insert(id, (method.to_owned(), tx));
        }
        if self.shared.outgoing.send(message.to_string()).is_err() {
            if let Ok(mut pending) = self.shared.pending.lock() {
                pending.remove(&id);
            }
            return Err(CdpError::Closed {
                reason: self
                    .closed_reason()
                    .unwrap_or_else(|| "the connection's task ended".into()),
            });
        }
        Ok((id, want_answer.then_some(rx)))
    }
}

/// Decodes a result into `T`, ignoring unknown fields.
pub fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T, CdpError> {
    serde_json::from_value(value).map_err(|e| CdpError::Decode {
        method: method.to_owned(),
        reason: e.to_string(),
    })
}

#[derive(Deserialize)]
struct Incoming {
    id: Option<u64>,
    method: Option<String>,
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    #[serde(default)]
    params: Value,
    result: Option<Value>,
    error: Option<ProtocolErrorBody>,
}

#[derive(Deserialize)]
struct ProtocolErrorBody {
    #[serde(default)]
    code: i64,
    #[serde(default)]
    message: String,
    #[serde(default)]
    data: Option<String>,
}

/// The transport's task: writes queued commands, reads answers and events, and on close fails
/// every pending call and ends every subscription.
async fn run_transport(
    mut transport: impl Transport,
    mut outgoing: mpsc::UnboundedReceiver<String>,
    shared: Arc<Shared>,
    stop: CancellationToken,
) {
    let reason = loop {
        tokio::select! {
            biased;
            _ = stop.cancelled() => {
                transport.close().await;
                break "the connection was dropped".to_owned();
            }
            message = outgoing.recv() => {
                let Some(text) = message else { break "the connection was dropped".to_owned() };
                if let Err(reason) = transport.send(text).await {
                    break reason;
                }
            }
            incoming = transport.recv() => match incoming {
                Ok(text) => dispatch(&shared, &text),
                Err(reason) => break reason,
            },
        }
    };
    tracing::debug!(%reason, "DevTools connection closed");
    if let Ok(mut closed) = shared.closed.lock() {
        closed.get_or_insert(reason.clone());
    }
    if let Ok(mut pending) = shared.pending.lock() {
        for (_, (_, tx)) in pending.drain() {
            let _ = tx.send(Err(CdpError::Closed {
                reason: reason.clone(),
            }));
        }
    }
    if let Ok(mut subscribers) = shared.subscribers.lock() {
        subscribers.clear();
    }
    shared.done.cancel();
}

fn dispatch(shared: &Shared, text: &str) {
    let incoming: Incoming = match serde_json::from_str(text) {
        Ok(incoming) => incoming,
        Err(e) => {
            tracing::warn!(error = %e, "unreadable DevTools message");
            return;
        }
    };
    if let Some(id) = incoming.id {
        let entry = shared.pending.lock().ok().and_then(|mut p| p.remove(&id));
        let Some((method, tx)) = entry else { return };
        let result = match (incoming.result, incoming.error) {
            (_, Some(error)) => {
                let message = match error.data {
                    Some(data) if !data.is_empty() => format!("{}: {data}", error.message),
                    _ => error.message,
                };
                if tx.is_closed() {
                    tracing::debug!(%method, %message, "a command sent without waiting failed");
                }
                Err(CdpError::Protocol {
                    method,
                    code: error.code,
                    message,
                })
            }
            (Some(result), None) => Ok(result),
            (None, None) => Ok(Value::Null),
        };
        let _ = tx.send(result);
        return;
    }
    let Some(method) = incoming.method else {
        return;
    };
    let event = Arc::new(Event {
        method,
        session: incoming.session_id.map(SessionId),
        params: incoming.params,
    });
    if let Ok(mut subscribers) = shared.subscribers.lock() {
        subscribers.retain(|s| {
            if !(s.filter)(&event) {
                return !s.tx.is_closed();
            }
            s.tx.send(Arc::clone(&event)).is_ok()
        });
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::io::{BufRead as _, BufReader, Write as _};

    use serde_json::json;

    use super::*;

    /// The far ends of a connection's pipes, as a browser started with `--remote-debugging-pipe`
    /// holds them: commands are read from one, answers and events written to the other.
    struct FakeBrowser {
        commands: BufReader<std::fs::File>,
        answers: std::fs::File,
    }

    impl FakeBrowser {
        fn read(&mut self) -> Value {
            let mut bytes = Vec::new();
            self.commands.read_until(0, &mut bytes).unwrap();
            assert_eq!(bytes.pop(), Some(0), "a command without its NUL");
            serde_json::from_slice(&bytes).unwrap()
        }

        fn write(&mut self, messages: &[Value]) {
            // All in one write: the connection must split them.
            let mut bytes = Vec::new();
            for message in messages {
                bytes.extend_from_slice(message.to_string().as_bytes());
                bytes.push(0);
            }
            self.answers.write_all(&bytes).unwrap();
        }
    }

    fn connect() -> (Connection, FakeBrowser) {
        let flags = rustix::pipe::PipeFlags::CLOEXEC;
        let (commands_in, commands_out) = rustix::pipe::pipe_with(flags).unwrap();
        let (answers_in, answers_out) = rustix::pipe::pipe_with(flags).unwrap();
        let conn =
            Connection::over_pipes(commands_out, answers_in, Duration::from_secs(5)).unwrap();
        let browser = FakeBrowser {
            commands: BufReader::new(std::fs::File::from(commands_in)),
            answers: std::fs::File::from(answers_out),
        };
        (conn, browser)
    }

    #[tokio::test]
    async fn calls_answers_events_and_the_end_travel_over_the_pipes() {
        let (conn, mut browser) = connect();
        let fake = std::thread::spawn(move || {
            let first = browser.read();
            let second = browser.read();
            // Answered out of order, after an event of a flat session.
            browser.write(&[
                json!({"method": "Target.attachedToTarget", "sessionId": "S1", "params": {"x": 1}}),
                json!({"id": second["id"], "result": {"n": 2}}),
                json!({"id": first["id"], "error": {"code": -32000, "message": "No such thing"}}),
            ]);
            let unanswered = browser.read();
            let last = browser.read();
            // The browser goes away: its end of the pipes closes.
            drop(browser);
            (first, second, unanswered, last)
        });
        let mut events = conn.subscribe(|e| e.method.starts_with("Target."));
        let session = SessionId("S0".to_owned());
        let (one, two) = tokio::join!(
            conn.call(None, "A.one", json!({})),
            conn.call(Some(&session), "B.two", json!({"k": 1})),
        );
        match one {
            Err(CdpError::Protocol {
                method,
                code,
                message,
            }) => {
                assert_eq!((method.as_str(), code), ("A.one", -32000));
                assert_eq!(message, "No such thing");
            }
            other => panic!("expected a protocol error, got {other:?}"),
        }
        assert_eq!(two.unwrap(), json!({"n": 2}));
        let event = events.recv().await.unwrap();
        assert_eq!(event.method, "Target.attachedToTarget");
        assert_eq!(event.session, Some(SessionId("S1".to_owned())));
        assert_eq!(event.params, json!({"x": 1}));

        let timeout = Duration::from_millis(100);
        let unanswered = conn
            .call_with(None, "C.never", json!({}), timeout, None)
            .await;
        assert!(
            matches!(unanswered, Err(CdpError::Timeout { ref method, after }) if method == "C.never" && after == timeout),
            "{unanswered:?}"
        );
        let last = conn.call(None, "D.last", json!({})).await;
        match last {
            Err(CdpError::Closed { reason }) => {
                assert_eq!(reason, "the browser closed the DevTools pipe");
            }
            other => panic!("expected the connection closed, got {other:?}"),
        }
        conn.closed_token().cancelled().await;
        assert!(
            events.recv().await.is_none(),
            "the subscription outlived the pipes"
        );
        assert!(
            conn.call(None, "E.after", json!({}))
                .await
                .unwrap_err()
                .is_closed()
        );

        let (first, second, unanswered, last) = fake.join().unwrap();
        assert_eq!(first["method"], "A.one");
        assert!(first.get("sessionId").is_none());
        assert_eq!(second["method"], "B.two");
        assert_eq!(second["sessionId"], "S0");
        assert_eq!(second["params"], json!({"k": 1}));
        assert_eq!(unanswered["method"], "C.never");
        assert_eq!(last["method"], "D.last");
        let ids: HashSet<u64> = [&first, &second, &unanswered, &last]
            .iter()
            .map(|m| m["id"].as_u64().unwrap())
            .collect();
        assert_eq!(ids.len(), 4, "request ids repeat");
    }

    #[tokio::test]
    async fn a_cancelled_call_stops_waiting_and_dropping_the_last_handle_closes_the_pipes() {
        let (conn, mut browser) = connect();
        let cancel = CancellationToken::new();
        let waiting = {
            let conn = conn.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move {
                conn.call_with(
                    None,
                    "A.slow",
                    json!({}),
                    Duration::from_secs(30),
                    Some(&cancel),
                )
                .await
            })
        };
        let command = tokio::task::spawn_blocking(move || {
            let command = browser.read();
            (command, browser)
        })
        .await
        .unwrap();
        let (command, mut browser) = command;
        assert_eq!(command["method"], "A.slow");
        cancel.cancel();
        assert!(matches!(waiting.await.unwrap(), Err(CdpError::Cancelled)));
        drop(conn);
        // The connection's task ends and closes its end: the browser reads EOF.
        let rest = tokio::task::spawn_blocking(move || {
            let mut bytes = Vec::new();
            browser.commands.read_until(0, &mut bytes).unwrap();
            bytes
        })
        .await
        .unwrap();
        assert!(rest.is_empty(), "{rest:?}");
    }
}
