//! A batch of episodes in a local web page: `GET /` lists the batch's episodes (state, epoch,
//! holder, attempts, steps, tokens, outcome, the check's verdict) under the batch's totals, and
//! each opens at `GET /episodes/{id}/`: the run page ([`crate::server`]'s, the same file), fed
//! from the episode's checkpoints instead of a run directory ([`episode`]).
//!
//! What is served comes from a [`BatchSource`], which `hands` implements over the fleet's
//! PostgreSQL: this crate knows no database. The same guard as the run view: loopback only, and
//! every API call carries the view's token and a loopback `Host`.

pub mod episode;

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;
use serde_json::{Value, json};

use crate::server::{Auth, View, ViewError, random_token, refused, token_ok};
use crate::trace::image_name_ok;
use episode::EpisodeRun;

/// The batch page.
const BATCH_PAGE: &str = include_str!("../../assets/batch.html");

/// How long an episode read from the source is served before it is read again (a page asks
/// for its steps and then each screenshot: one read serves them all).
const FRESH: Duration = Duration::from_secs(5);

/// A boxed future, for [`BatchSource`]'s methods.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where a batch view reads episodes from.
pub trait BatchSource: Send + Sync + 'static {
    /// The episodes (of the batch the view was asked for, or all) and their totals.
    fn list(&self) -> BoxFuture<'_, Result<BatchListing, String>>;
    /// One episode: its row and its checkpoints' conversations, oldest first. `None` when there
    /// is no such episode (or it is not of the batch).
    fn episode(&self, id: i64) -> BoxFuture<'_, Result<Option<EpisodeRecord>, String>>;
}

/// What the batch page lists.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchListing {
    /// The batch, or `None` for every episode.
    pub batch: Option<String>,
    /// The totals as `hands batch status` prints them.
    pub totals_text: String,
    /// The totals as `hands batch status --json` prints them.
    pub totals: Value,
    /// The episodes, by id.
    pub episodes: Vec<EpisodeRow>,
}

/// One episode as the list shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EpisodeRow {
    /// Its id.
    pub id: i64,
    /// Its batch.
    pub batch: String,
    /// `queued`, `running`, `finished`, `failed` or `parked`.
    pub state: String,
    /// The epoch of its latest claim.
    pub epoch: u64,
    /// The worker of its latest claim.
    pub worker: Option<String>,
    /// Claims it has had.
    pub attempts: u32,
    /// Its task's prompt.
    pub prompt: String,
    /// Requests used (from its recorded outcome).
    pub steps: u32,
    /// Tokens: input, cached input, output.
    pub tokens: [u64; 3],
    /// Whether it succeeded, once it ended.
    pub success: Option<bool>,
    /// Why it did not succeed (a failed check says so), once it ended.
    pub reason: Option<String>,
    /// Whether its task has a check.
    pub checked: bool,
    /// Checkpoints saved.
    pub checkpoints: u64,
}

/// One episode as its page shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeRecord {
    /// Its row.
    pub row: EpisodeRow,
    /// Its checkpoints' conversations, oldest first.
    pub conversations: Vec<Value>,
}

/// An episode as read: its row, its steps and screenshots.
type ReadEpisode = Arc<(EpisodeRow, EpisodeRun)>;

struct BatchShared {
    source: Arc<dyn BatchSource>,
    token: String,
    /// Episodes read lately: when, the row, the steps and screenshots.
    read: Mutex<HashMap<i64, (Instant, ReadEpisode)>>,
}

/// Serves the batch view of `source` at `addr` (loopback). Returns once listening; serving goes
/// on in a task until stopped.
pub async fn serve_batch(
    source: Arc<dyn BatchSource>,
    addr: SocketAddr,
) -> Result<View, ViewError> {
    if !addr.ip().is_loopback() {
        return Err(ViewError::NotLoopback(addr));
    }
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let token = random_token()?;
    let shared = Arc::new(BatchShared {
        source,
        token: token.clone(),
        read: Mutex::new(HashMap::new()),
    });
    let router = Router::new()
        .route("/", get(|| async { Html(BATCH_PAGE) }))
        .route("/api/batch", get(listing))
        .route(
            "/episodes/{id}/",
            get(|| async { Html(crate::server::PAGE) }),
        )
        .route("/episodes/{id}/api/run", get(episode_run))
        .route(
            "/episodes/{id}/api/wait",
            get(|| async { axum::Json(json!({"version": 0})) }),
        )
        .route("/episodes/{id}/images/{file}", get(episode_image))
        // A stored episode has nobody to hand the wheel to: the run page's script is left out.
        .route(
            "/episodes/{id}/wheel.js",
            get(|| async { ([(header::CONTENT_TYPE, "text/javascript")], "") }),
        )
        .with_state(shared);
    let stop = crate::server::serve_until_stopped(listener, router, "the batch view");
    Ok(View { addr, token, stop })
}

fn failed_read(e: String) -> Response {
    (
        StatusCode::BAD_GATEWAY,
        format!("reading the ledger failed: {e}"),
    )
        .into_response()
}

async fn listing(
    State(shared): State<Arc<BatchShared>>,
    headers: HeaderMap,
    Query(query): Query<Auth>,
) -> Response {
    if !token_ok(&shared.token, &headers, &query) {
        return refused();
    }
    match shared.source.list().await {
        Ok(listing) => axum::Json(listing).into_response(),
        Err(e) => failed_read(e),
    }
}

/// The episode `id`, read again when what was read is older than [`FRESH`].
async fn read_episode(shared: &BatchShared, id: i64) -> Result<Option<ReadEpisode>, String> {
    if let Ok(read) = shared.read.lock()
        && let Some((at, episode)) = read.get(&id)
        && at.elapsed() < FRESH
    {
        return Ok(Some(Arc::clone(episode)));
    }
    let Some(record) = shared.source.episode(id).await? else {
        return Ok(None);
    };
    let conversations = record.conversations;
    let run = tokio::task::spawn_blocking(move || episode::read_conversations(&conversations))
        .await
        .map_err(|e| e.to_string())?;
    let episode = Arc::new((record.row, run));
    if let Ok(mut read) = shared.read.lock() {
        read.retain(|_, (at, _)| at.elapsed() < FRESH);
        read.insert(id, (Instant::now(), Arc::clone(&episode)));
    }
    Ok(Some(episode))
}

async fn episode_run(
    State(shared): State<Arc<BatchShared>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<i64>,
    Query(query): Query<Auth>,
) -> Response {
    if !token_ok(&shared.token, &headers, &query) {
        return refused();
    }
    let episode = match read_episode(&shared, id).await {
        Ok(Some(episode)) => episode,
        Ok(None) => return (StatusCode::NOT_FOUND, "no such episode").into_response(),
        Err(e) => return failed_read(e),
    };
    let (row, run) = &*episode;
    let mut view = run.run.clone().unwrap_or(crate::steps::RunView {
        start: None,
        steps: Vec::new(),
        video: None,
    });
    if view.start.is_none() {
        view.start = Some(json!({"task": row.prompt}));
    }
    axum::Json(json!({
        "run": view,
        "approvals": {"pending": [], "decided": []},
        "live": false,
        "version": 0,
        "dir": format!("episode {} of {}", row.id, row.batch),
        "manifest": null,
        "episode": row,
    }))
    .into_response()
}

async fn episode_image(
    State(shared): State<Arc<BatchShared>>,
    headers: HeaderMap,
    UrlPath((id, file)): UrlPath<(i64, String)>,
    Query(query): Query<Auth>,
) -> Response {
    if !token_ok(&shared.token, &headers, &query) {
        return refused();
    }
    if !image_name_ok(&file) {
        return (StatusCode::BAD_REQUEST, "not an image name").into_response();
    }
    let episode = match read_episode(&shared, id).await {
        Ok(Some(episode)) => episode,
        Ok(None) => return (StatusCode::NOT_FOUND, "no such episode").into_response(),
        Err(e) => return failed_read(e),
    };
    match episode.1.images.get(&file) {
        Some(image) => ([(header::CONTENT_TYPE, image.mime)], image.bytes.clone()).into_response(),
        None => (StatusCode::NOT_FOUND, "no such image").into_response(),
    }
}
