//! The page and its API, on loopback only: `GET /` (the page), `GET /api/run` (the steps and
//! approvals), `GET /api/wait?version=N` (returns when something changed), `POST
//! /api/approvals/{id}` (the person's answer), `GET /images/{file}`; taking the wheel:
//! [`crate::wheel_api`].
//!
//! Every API call needs the view's token (a random secret printed with the URL), in the
//! `token` query parameter or the `X-Hands-Token` header; answers need the header, which a web
//! page of another origin cannot send without a CORS preflight this server never allows. So
//! another site open in the same browser can neither read the run nor approve an action.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::live::{Answer, Live};
use crate::steps::{dom_name_ok, read_log, video_name_ok};
use crate::trace::{APPROVALS, DOM_DIR, LOG, Trace, TraceError, image_name_ok};

/// The page.
pub(crate) const PAGE: &str = include_str!("../assets/view.html");

/// The header that carries the token on answers.
pub const TOKEN_HEADER: &str = "x-hands-token";

/// How long `/api/wait` holds a request before answering with no change.
const WAIT: Duration = Duration::from_secs(20);

/// Why the view cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ViewError {
    /// The address is not loopback.
    #[error("{0} is not a loopback address: the view listens on 127.0.0.1 or ::1 only")]
    NotLoopback(SocketAddr),
    /// No `log.jsonl` in the directory.
    #[error("{0} has no log.jsonl: give a run directory written by `hands run`")]
    NotARunDir(PathBuf),
    /// A trace file that cannot be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A socket failure.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// What is served: a run directory (read on each request, so a live run's changes show) or a
/// trace read once into memory.
enum Source {
    Dir(PathBuf),
    Trace(Box<Trace>),
}

pub(crate) struct Shared {
    dir: PathBuf,
    source: Source,
    token: String,
    pub(crate) live: Option<Live>,
}

/// A view being served.
#[derive(Debug)]
pub struct View {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The secret every API call carries.
    pub token: String,
    pub(crate) stop: CancellationToken,
}

impl View {
    /// The URL a person opens (the token included).
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.token)
    }

    /// Stops serving.
    pub fn stop(&self) {
        self.stop.cancel();
    }
}

pub(crate) fn random_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Serves the run directory `dir` at `addr` (loopback), live when `live` is given (approvals,
/// changes as they happen) — or, when `dir` is a file, the trace it is (`hands runs export`),
/// read whole and checked first. Returns once listening; serving goes on in a task until
/// stopped.
pub async fn serve(dir: &Path, addr: SocketAddr, live: Option<Live>) -> Result<View, ViewError> {
    if !addr.ip().is_loopback() {
        return Err(ViewError::NotLoopback(addr));
    }
    let source = if live.is_none() && dir.is_file() {
        let path = dir.to_owned();
        let trace = tokio::task::spawn_blocking(move || Trace::open(&path))
            .await
            .map_err(std::io::Error::other)??;
        Source::Trace(Box::new(trace))
    } else if live.is_none() && !dir.join(LOG).is_file() {
        return Err(ViewError::NotARunDir(dir.to_owned()));
    } else {
        Source::Dir(dir.to_owned())
    };
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let token = random_token()?;
    let shared = Arc::new(Shared {
        dir: dir.to_owned(),
        source,
        token: token.clone(),
        live,
    });
    let router = Router::new()
        .route("/", get(page))
        .route("/api/run", get(run))
        .route("/api/wait", get(wait))
        .route("/api/approvals/{id}", post(answer))
        .route("/images/{file}", get(image))
        .route("/video/{file}", get(video))
        .route("/dom/{file}", get(dom))
        .merge(crate::wheel_api::routes())
        .with_state(shared);
    let stop = serve_until_stopped(listener, router, "the view");
    Ok(View { addr, token, stop })
}

/// Serves `router` on `listener` from a task until the token it returns is cancelled; a failure
/// of the server is logged as `what`'s.
pub(crate) fn serve_until_stopped(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    what: &'static str,
) -> CancellationToken {
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    tokio::spawn(async move {
        let served = axum::serve(listener, router)
            .with_graceful_shutdown(async move { stopped.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::warn!(error = %e, "{what} stopped");
        }
    });
    stop
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Auth {
    token: Option<String>,
    version: Option<u64>,
}

pub(crate) fn authorised(shared: &Shared, headers: &HeaderMap, query: &Auth) -> bool {
    token_ok(&shared.token, headers, query)
}

/// The request carries `token` (header or query) and a loopback `Host`.
pub(crate) fn token_ok(token: &str, headers: &HeaderMap, query: &Auth) -> bool {
    let from_header = headers
        .get(TOKEN_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    from_header.or_else(|| query.token.clone()).as_deref() == Some(token) && loopback_host(headers)
}

/// The `Host` a browser sent names this machine (a DNS-rebound name does not).
fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    matches!(name, "127.0.0.1" | "localhost" | "[::1]")
}

pub(crate) fn refused() -> Response {
    (StatusCode::FORBIDDEN, "this view needs its token").into_response()
}

async fn page() -> Html<&'static str> {
    Html(PAGE)
}

async fn run(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(query): Query<Auth>,
) -> Response {
    if !authorised(&shared, &headers, &query) {
        return refused();
    }
    // The version is read before the log and the approvals: what is sent is at least that
    // version, so a page never counts as having seen a change it was not sent.
    let version = shared.live.as_ref().map_or(0, Live::version);
    let (log, decided, manifest) = match &shared.source {
        Source::Dir(dir) => {
            let log = tokio::fs::read_to_string(dir.join(LOG))
                .await
                .unwrap_or_default();
            let decided = tokio::fs::read_to_string(dir.join(APPROVALS))
                .await
                .unwrap_or_default();
            (log, decided_of(&decided), None)
        }
        Source::Trace(trace) => (
            trace.log.clone(),
            trace.approval_values(),
            Some(&trace.manifest),
        ),
    };
    let view = read_log(&log);
    let approvals = match &shared.live {
        Some(live) => json!(live.approvals()),
        None => json!({"pending": [], "decided": decided}),
    };
    Json(
        json!({"run": view, "approvals": approvals, "live": shared.live.is_some(),
                "version": version, "dir": shared.dir.display().to_string(),
                "manifest": manifest}),
    )
    .into_response()
}

async fn wait(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(query): Query<Auth>,
) -> Response {
    if !authorised(&shared, &headers, &query) {
        return refused();
    }
    let version = match &shared.live {
        Some(live) => {
            // The page waits past the version it has shown: that is its receipt.
            let shown = query.version.unwrap_or(0);
            live.served(shown);
            live.changed_since(shown, WAIT).await
        }
        None => 0,
    };
    Json(json!({"version": version})).into_response()
}

#[derive(Debug, Deserialize)]
struct AnswerBody {
    approve: bool,
}

async fn answer(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<u64>,
    Json(body): Json<AnswerBody>,
) -> Response {
    // The header only: a form on another site can put the token in a URL but not in a header.
    let query = Auth {
        token: None,
        version: None,
    };
    if !authorised(&shared, &headers, &query) {
        return refused();
    }
    match &shared.live {
        Some(live) if live.answer(id, Answer::from_approve(body.approve)) => {
            Json(json!({"ok": true, "approved": body.approve})).into_response()
        }
        Some(_) => (StatusCode::CONFLICT, "not pending (answered already?)").into_response(),
        None => (StatusCode::NOT_FOUND, "this view is not of a live run").into_response(),
    }
}

/// A file a run stored beside its log, served as it was kept: a screenshot, the video, a DOM
/// snapshot.
#[derive(Debug, Clone, Copy)]
enum Stored {
    Image,
    Video,
    Dom,
}

impl Stored {
    /// Whether `name` is a bare file name of this kind (no separators, no `..`).
    fn name_ok(self, name: &str) -> bool {
        match self {
            Stored::Image => image_name_ok(name),
            Stored::Video => video_name_ok(name),
            Stored::Dom => dom_name_ok(name),
        }
    }

    /// What it is called in an answer.
    fn what(self) -> &'static str {
        match self {
            Stored::Image => "image",
            Stored::Video => "video",
            Stored::Dom => "DOM snapshot",
        }
    }

    /// Where a run directory keeps it, and where a trace does.
    async fn read(self, source: &Source, name: &str) -> Option<Vec<u8>> {
        match (source, self) {
            (Source::Dir(dir), Stored::Image) => {
                tokio::fs::read(dir.join("images").join(name)).await.ok()
            }
            (Source::Dir(dir), Stored::Video) => tokio::fs::read(dir.join(name)).await.ok(),
            (Source::Dir(dir), Stored::Dom) => {
                tokio::fs::read(dir.join(DOM_DIR).join(name)).await.ok()
            }
            (Source::Trace(trace), Stored::Image) => trace.images.get(name).cloned(),
            (Source::Trace(trace), Stored::Video) => trace.videos.get(name).cloned(),
            (Source::Trace(trace), Stored::Dom) => trace.doms.get(name).cloned(),
        }
    }

    /// The headers it is served with. A DOM snapshot's HTML is never rendered in the view's
    /// origin: `text/plain` with `nosniff`, and `Content-Security-Policy: sandbox` should a
    /// browser render it anyway (an opaque origin, no scripts).
    fn headers(self, name: &str) -> Vec<(header::HeaderName, &'static str)> {
        match self {
            Stored::Image if name.ends_with(".png") => vec![(header::CONTENT_TYPE, "image/png")],
            Stored::Image => vec![(header::CONTENT_TYPE, "image/jpeg")],
            Stored::Video => vec![(header::CONTENT_TYPE, "video/webm")],
            Stored::Dom => vec![
                (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                (header::CONTENT_SECURITY_POLICY, DOM_CSP),
            ],
        }
    }

    /// The answer to `GET` of `name`: only with the view's token, only a name of this kind.
    async fn serve(
        self,
        shared: &Shared,
        headers: &HeaderMap,
        query: &Auth,
        name: &str,
    ) -> Response {
        if !authorised(shared, headers, query) {
            return refused();
        }
        if !self.name_ok(name) {
            return (
                StatusCode::BAD_REQUEST,
                format!("not a {} name", self.what()),
            )
                .into_response();
        }
        match self.read(&shared.source, name).await {
            Some(bytes) => {
                let mut answer = bytes.into_response();
                for (key, value) in self.headers(name) {
                    answer
                        .headers_mut()
                        .insert(key, header::HeaderValue::from_static(value));
                }
                answer
            }
            None => (StatusCode::NOT_FOUND, format!("no such {}", self.what())).into_response(),
        }
    }
}

/// `GET /images/{file}`: a screenshot the run kept.
async fn image(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    UrlPath(file): UrlPath<String>,
    Query(query): Query<Auth>,
) -> Response {
    Stored::Image.serve(&shared, &headers, &query, &file).await
}

/// `GET /video/{file}`: the run's video (`hands run --video`), from its directory or trace.
async fn video(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    UrlPath(file): UrlPath<String>,
    Query(query): Query<Auth>,
) -> Response {
    Stored::Video.serve(&shared, &headers, &query, &file).await
}

/// `GET /dom/{file}`: a DOM snapshot, as text (see [`Stored::headers`]).
async fn dom(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    UrlPath(file): UrlPath<String>,
    Query(query): Query<Auth>,
) -> Response {
    Stored::Dom.serve(&shared, &headers, &query, &file).await
}

/// The policy a DOM snapshot is served with: no script, no plugin, an opaque origin.
pub const DOM_CSP: &str = "sandbox; default-src 'none'";

/// The approvals a run directory recorded (`approvals.jsonl`), lines that are not JSON skipped.
fn decided_of(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn only_loopback_hosts_pass() {
        let with = |host: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::HOST, HeaderValue::from_str(host).unwrap());
            loopback_host(&h)
        };
        assert!(with("127.0.0.1:8080"));
        assert!(with("localhost:1"));
        assert!(with("[::1]:9"));
        assert!(!with("evil.example:8080"));
        assert!(!with("127.0.0.1.evil.example"));
        assert!(!loopback_host(&HeaderMap::new()));
    }
}
