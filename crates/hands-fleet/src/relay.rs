//! The remote half of the environment's fence (issue 20, item 3): a relay in front of remote
//! browsers' DevTools endpoints, owned by the fleet side, that lets an episode's CDP frames
//! through only from the epoch holding the episode under a live lease.
//!
//! A worker reaches an episode's remote browser at [`episode_url`] (`ws://RELAY/episode/ID/EPOCH`,
//! the epoch of its claim); the relay looks the episode up ([`Fleet::holding`]): running, at that
//! epoch, with more than [`RelayConfig::margin`] of its lease left, and a remote-browser task —
//! then it connects to the task's `cdp_url` and passes frames both ways. Every frame the worker
//! sends is checked again before it is passed: the lease left (by the database's clock) is
//! counted down on the relay's monotonic clock, and the database is asked again once it ran
//! under the margin (a heartbeat extended it, or the epoch moved on). A frame from an epoch that
//! is no longer current is answered with a CDP error and not passed, and that connection's
//! upstream is closed. When a newer epoch of an episode connects, every older connection of that
//! episode is cut off from the browser at once (its upstream closed, its CDP sessions detached,
//! so a stalled holder's request interception no longer holds the new holder's requests), and
//! its later frames are refused. A command passed before the cut that gets no answer is answered
//! with the same error, so the old holder's driver does not wait for it.
//!
//! Why a frame passed is safe: a newer claim needs the lease lapsed, and a frame is passed only
//! while more than the margin is left of it — so every frame of an old epoch reached the browser
//! at least the margin before any newer holder could claim, let alone act. The margin covers the
//! time from passing a frame to the browser acting on it (milliseconds for an input event), and
//! a clock that runs fast or slow by less than margin / lease.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_util::sync::CancellationToken;

use crate::{Environment, EpisodeId, Fleet};

/// The path prefix of an episode's endpoint on the relay.
pub const EPISODE_PATH: &str = "/episode/";

/// The CDP error code of a refused frame (JSON-RPC's server-error range).
pub const REFUSED_CODE: i64 = -32099;

/// Where the worker holding `episode` at `epoch` reaches its remote browser through `relay`
/// (`ws://host:port`).
pub fn episode_url(relay: &str, episode: EpisodeId, epoch: u64) -> String {
    format!(
        "{}{EPISODE_PATH}{}/{epoch}",
        relay.trim_end_matches('/'),
        episode.0
    )
}

/// `(episode, epoch)` of an [`episode_url`]'s path.
fn parse_path(path: &str) -> Option<(EpisodeId, u64)> {
    let (id, epoch) = path.strip_prefix(EPISODE_PATH)?.split_once('/')?;
    Some((EpisodeId(id.parse().ok()?), epoch.parse().ok()?))
}

/// How the relay decides.
#[derive(Debug, Clone, Copy)]
pub struct RelayConfig {
    /// A frame is passed only while more than this is left of its epoch's lease.
    pub margin: Duration,
}

impl Default for RelayConfig {
    fn default() -> Self {
        RelayConfig {
            margin: Duration::from_millis(250),
        }
    }
}

/// What the relay did, counted since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayCounts {
    /// Connections let through to a browser.
    pub connections: u64,
    /// Connections refused at the start (a stale or unknown epoch, or no remote browser).
    pub refused_connections: u64,
    /// Frames refused (sent from an epoch no longer current).
    pub refused_frames: u64,
    /// Connections cut off because a newer epoch of their episode connected.
    pub revoked: u64,
}

/// A live connection: its epoch, its id, and the switch that cuts it off.
struct Live {
    epoch: u64,
    id: u64,
    cut: CancellationToken,
}

/// The relay's state, shared by its connections.
struct Shared {
    fleet: Fleet,
    config: RelayConfig,
    /// Live connections by episode.
    live: Mutex<HashMap<EpisodeId, Vec<Live>>>,
    next_id: Mutex<u64>,
    counts: Mutex<RelayCounts>,
}

/// A relay bound to its address.
pub struct Relay {
    listener: TcpListener,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("listener", &self.listener.local_addr().ok())
            .finish_non_exhaustive()
    }
}

impl Relay {
    /// A relay on `listener`, deciding by `fleet`'s database.
    pub fn new(listener: TcpListener, fleet: Fleet, config: RelayConfig) -> Relay {
        Relay {
            listener,
            shared: Arc::new(Shared {
                fleet,
                config,
                live: Mutex::new(HashMap::new()),
                next_id: Mutex::new(0),
                counts: Mutex::new(RelayCounts::default()),
            }),
        }
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> std::io::Result<std::net::SocketAddr> {
        self.listener.local_addr()
    }

    /// What it did so far, readable while it serves.
    pub fn counts(&self) -> impl Fn() -> RelayCounts + Send + Sync + 'static {
        let shared = Arc::clone(&self.shared);
        move || *lock(&shared.counts)
    }

    /// Serves connections until the listener fails.
    pub async fn serve(self) -> std::io::Result<()> {
        loop {
            let (stream, _) = self.listener.accept().await?;
            let _ = stream.set_nodelay(true);
            tokio::spawn(connection(Arc::clone(&self.shared), stream));
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What the database says of a connection's epoch: how long it may pass frames, and where the
/// browser is; or why not.
async fn current(
    shared: &Shared,
    episode: EpisodeId,
    epoch: u64,
) -> Result<(Instant, String), String> {
    let asked = Instant::now();
    let holding = match shared.fleet.holding(episode).await {
        Ok(Some(h)) => h,
        Ok(None) => return Err(format!("episode {episode} is not running")),
        Err(e) => return Err(format!("cannot check episode {episode}: {e}")),
    };
    if holding.epoch != epoch {
        return Err(format!(
            "episode {episode} is held at epoch {}, not {epoch}",
            holding.epoch
        ));
    }
    let Some(left) = holding.lease_left.checked_sub(shared.config.margin) else {
        return Err(format!(
            "episode {episode}'s lease at epoch {epoch} has lapsed (or is about to)"
        ));
    };
    if left.is_zero() {
        return Err(format!(
            "episode {episode}'s lease at epoch {epoch} has lapsed (or is about to)"
        ));
    }
    match holding.task.environment {
        Environment::RemoteBrowser(b) => Ok((asked + left, b.cdp_url)),
        _ => Err(format!("episode {episode} has no remote browser")),
    }
}

/// Registers a connection of `episode` at `epoch`; cuts off every older one.
fn register(shared: &Shared, episode: EpisodeId, epoch: u64) -> (u64, CancellationToken) {
    let id = {
        let mut next = lock(&shared.next_id);
        *next += 1;
        *next
    };
    let token = CancellationToken::new();
    let mut live = lock(&shared.live);
    let conns = live.entry(episode).or_default();
    let mut revoked = 0;
    conns.retain(|c| {
        if c.epoch < epoch {
            c.cut.cancel();
            revoked += 1;
            false
        } else {
            true
        }
    });
    conns.push(Live {
        epoch,
        id,
        cut: token.clone(),
    });
    drop(live);
    if revoked > 0 {
        lock(&shared.counts).revoked += revoked;
        eprintln!(
            "hands relay: episode {episode}: epoch {epoch} connected; {revoked} connection(s) of older epochs cut off"
        );
    }
    (id, token)
}

fn unregister(shared: &Shared, episode: EpisodeId, id: u64) {
    let mut live = lock(&shared.live);
    if let Some(conns) = live.get_mut(&episode) {
        conns.retain(|c| c.id != id);
        if conns.is_empty() {
            live.remove(&episode);
        }
    }
}

/// The id and session of a CDP command or answer.
fn head(text: &str) -> Option<(u64, Option<String>)> {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<u64>,
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
    }
    let head: Head = serde_json::from_str(text).ok()?;
    Some((head.id?, head.session_id))
}

/// A CDP error answer to command `id`.
fn refusal(id: u64, session: Option<&String>, why: &str) -> Message {
    let mut answer = json!({
        "id": id,
        "error": {"code": REFUSED_CODE, "message": format!("hands relay: refused: {why}")},
    });
    if let Some(s) = session {
        answer["sessionId"] = Value::String(s.clone());
    }
    Message::text(answer.to_string())
}

async fn connection(shared: Arc<Shared>, stream: TcpStream) {
    let mut path = None;
    // The signature tungstenite's handshake takes.
    #[allow(clippy::result_large_err)]
    let callback = |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
        path = Some(request.uri().path().to_owned());
        Ok(response)
    };
    let Ok(mut client) = tokio_tungstenite::accept_hdr_async(stream, callback).await else {
        return;
    };
    let Some((episode, epoch)) = path.as_deref().and_then(parse_path) else {
        let why = format!("the relay serves {EPISODE_PATH}<episode>/<epoch>");
        let _ = client.close(Some(close_frame(&why))).await;
        return;
    };
    let (mut valid_until, cdp_url) = match current(&shared, episode, epoch).await {
        Ok(ok) => ok,
        Err(why) => {
            lock(&shared.counts).refused_connections += 1;
            eprintln!(
                "hands relay: refused a connection of episode {episode} at epoch {epoch}: {why}"
            );
            let _ = client.close(Some(close_frame(&why))).await;
            return;
        }
    };
    let upstream = match tokio_tungstenite::connect_async(cdp_url.as_str()).await {
        Ok((upstream, _)) => upstream,
        Err(e) => {
            let why = format!("cannot reach the browser of episode {episode}: {e}");
            eprintln!("hands relay: {why}");
            let _ = client.close(Some(close_frame(&why))).await;
            return;
        }
    };
    lock(&shared.counts).connections += 1;
    let (id, revoke) = register(&shared, episode, epoch);
    let (mut up_tx, mut up_rx) = upstream.split();
    let (mut down_tx, mut down_rx) = client.split();
    // Commands passed and not yet answered.
    let mut pending: HashSet<(u64, Option<String>)> = HashSet::new();
    let mut cut: Option<String> = None;
    loop {
        tokio::select! {
            () = revoke.cancelled(), if cut.is_none() => {
                let why = format!("a newer epoch of episode {episode} connected");
                let _ = up_tx.close().await;
                for (id, session) in pending.drain() {
                    let _ = down_tx.send(refusal(id, session.as_ref(), &why)).await;
                }
                cut = Some(why);
            }
            up = up_rx.next(), if cut.is_none() => {
                let Some(Ok(message)) = up else { break };
                if let Message::Text(text) = &message
                    && let Some(key) = head(text.as_str())
                {
                    pending.remove(&key);
                }
                if down_tx.send(message).await.is_err() {
                    break;
                }
            }
            down = down_rx.next() => {
                let message = match down {
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                    Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                    Some(Ok(m)) => m,
                };
                let key = match &message {
                    Message::Text(text) => head(text.as_str()),
                    _ => None,
                };
                if cut.is_none() && Instant::now() >= valid_until {
                    match current(&shared, episode, epoch).await {
                        Ok((until, _)) => valid_until = until,
                        Err(why) => {
                            let _ = up_tx.close().await;
                            for (id, session) in pending.drain() {
                                let _ = down_tx.send(refusal(id, session.as_ref(), &why)).await;
                            }
                            cut = Some(why);
                        }
                    }
                }
                if let Some(why) = &cut {
                    lock(&shared.counts).refused_frames += 1;
                    eprintln!("hands relay: refused a frame of episode {episode} from epoch {epoch}: {why}");
                    if let Some((id, session)) = &key
                        && down_tx.send(refusal(*id, session.as_ref(), why)).await.is_err()
                    {
                        break;
                    }
                    continue;
                }
                if let Some(key) = key {
                    pending.insert(key);
                }
                if up_tx.send(message).await.is_err() {
                    break;
                }
            }
        }
    }
    unregister(&shared, episode, id);
    let _ = up_tx.close().await;
}

fn close_frame(why: &str) -> CloseFrame {
    // A close reason is at most 123 bytes.
    let mut reason: String = why.chars().take(120).collect();
    while reason.len() > 123 {
        reason.pop();
    }
    CloseFrame {
        code: CloseCode::Policy,
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_and_bad_ones_are_refused() {
        let url = episode_url("ws://10.0.0.3:9333/", EpisodeId(17), 4);
        assert_eq!(url, "ws://10.0.0.3:9333/episode/17/4");
        assert_eq!(parse_path("/episode/17/4"), Some((EpisodeId(17), 4)));
        for bad in [
            "/",
            "/episode/",
            "/episode/17",
            "/episode/x/4",
            "/episode/17/-1",
            "/devtools/browser/abc",
        ] {
            assert_eq!(parse_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_refusal_answers_the_command_in_its_session() {
        assert_eq!(
            head(r#"{"id":7,"sessionId":"S","method":"Input.dispatchMouseEvent"}"#),
            Some((7, Some("S".to_owned())))
        );
        assert_eq!(head(r#"{"method":"Page.loadEventFired"}"#), None);
        let Message::Text(text) = refusal(7, Some(&"S".to_owned()), "stale") else {
            panic!("a text frame")
        };
        let v: Value = serde_json::from_str(text.as_str()).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["sessionId"], "S");
        assert_eq!(v["error"]["code"], REFUSED_CODE);
        assert!(close_frame(&"x".repeat(400)).reason.len() <= 123);
    }
}
