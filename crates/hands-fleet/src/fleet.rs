//! Episodes as rows: tasks submitted, claimed by workers under a lease, heartbeated, finished.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio_postgres::Client;
use tokio_postgres::types::Json;

use crate::FleetError;

/// An episode's id (its row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EpisodeId(pub i64);

impl EpisodeId {
    /// The run id its ledger keeps (`episode-<id>`).
    pub fn run_id(self) -> String {
        format!("episode-{}", self.0)
    }
}

impl std::fmt::Display for EpisodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The model API an episode runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// Anthropic Messages.
    #[default]
    Anthropic,
    /// OpenAI Responses.
    Openai,
}

/// What one episode does: one line of a `TASKS.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// What the model should do.
    pub prompt: String,
    /// The model API (default `anthropic`).
    #[serde(default)]
    pub provider: Provider,
    /// The model (required for `openai`; default for `anthropic`: hands' default model).
    #[serde(default)]
    pub model: Option<String>,
    /// Where it acts.
    pub environment: Environment,
    /// Requests allowed (default: hands' default step limit).
    #[serde(default)]
    pub max_steps: Option<u32>,
    /// A shell command that says success by its exit status, run once the model finished.
    #[serde(default)]
    pub check: Option<String>,
}

/// Where an episode acts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Environment {
    /// A desktop of its own (Xvfb with a window manager), with bash and the editor.
    Desktop,
    /// Chromium at a start URL, under an origin allow-list.
    Browser(BrowserEnv),
    /// A browser already running elsewhere, driven over its DevTools endpoint (CDP), through
    /// the fleet's relay when one is named (`hands relay`: only the episode's current epoch
    /// gets through), else directly (unfenced).
    RemoteBrowser(RemoteBrowserEnv),
}

/// A remote browser environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteBrowserEnv {
    /// The browser's DevTools endpoint (`ws://host:port/devtools/browser/…`), as the relay (or,
    /// without one, the worker) reaches it.
    pub cdp_url: String,
    /// The relay's address (`ws://host:port`): the worker connects to
    /// [`crate::relay::episode_url`], and the relay to `cdp_url` for as long as the worker's
    /// claim is current. None: the worker connects to `cdp_url` itself, and a stalled worker's
    /// late action is not refused.
    #[serde(default)]
    pub relay: Option<String>,
    /// Where the browser is sent first (`http://` or `https://`).
    pub start_url: String,
    /// Origins it may open; default: the start URL's origin.
    #[serde(default)]
    pub allow_origin: Vec<String>,
}

/// Whether `url` is a `ws://` or `wss://` URL.
fn websocket_url(field: &str, url: &str) -> Result<(), String> {
    if url.starts_with("ws://") || url.starts_with("wss://") {
        Ok(())
    } else {
        Err(format!("{field} {url:?} is not a ws:// or wss:// URL"))
    }
}

/// A browser environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrowserEnv {
    /// Where the browser opens (`http://` or `https://`).
    pub start_url: String,
    /// Origins it may open; default: the start URL's origin.
    #[serde(default)]
    pub allow_origin: Vec<String>,
}

impl Task {
    /// Checks what can be checked before a worker runs it.
    pub fn validate(&self) -> Result<(), String> {
        if self.prompt.trim().is_empty() {
            return Err("the prompt is empty".into());
        }
        if self.provider == Provider::Openai && self.model.is_none() {
            return Err(
                "an openai task needs a model (a Responses model with the computer tool)".into(),
            );
        }
        if self.max_steps == Some(0) {
            return Err("max_steps must be at least 1".into());
        }
        let start_url = match &self.environment {
            Environment::Desktop => None,
            Environment::Browser(b) => Some(&b.start_url),
            Environment::RemoteBrowser(b) => {
                websocket_url("cdp_url", &b.cdp_url)?;
                if let Some(relay) = &b.relay {
                    websocket_url("relay", relay)?;
                }
                Some(&b.start_url)
            }
        };
        if let Some(url) = start_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(format!(
                "start_url {url:?} is not an http:// or https:// URL"
            ));
        }
        Ok(())
    }

    /// Parses a `TASKS.jsonl` text: one task per non-empty line, each validated; an error
    /// names the line.
    pub fn parse_jsonl(text: &str) -> Result<Vec<Task>, FleetError> {
        let mut tasks = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |why: String| FleetError::BadTask { line: i + 1, why };
            let task: Task = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
            task.validate().map_err(bad)?;
            tasks.push(task);
        }
        Ok(tasks)
    }
}

/// Who holds a running episode ([`Fleet::holding`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Holding {
    /// The current epoch.
    pub epoch: u64,
    /// What is left of its lease (zero when it lapsed).
    pub lease_left: Duration,
    /// Its task.
    pub task: Task,
}

/// An episode claimed by a worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// Which.
    pub episode: EpisodeId,
    /// The epoch of this claim: every save and the finish must carry it.
    pub epoch: u64,
    /// What to do.
    pub task: Task,
    /// Whether a worker saved checkpoints before: the episode is resumed, not started.
    pub resume: bool,
    /// How many claims it has had, this one included.
    pub attempts: u32,
}

/// Where an episode stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EpisodeState {
    /// Waiting for a worker.
    Queued,
    /// Claimed by a worker (its lease may have expired: then another worker may claim it).
    Running,
    /// The run ended (the model finished or reached its step limit).
    Finished,
    /// The run could not go on (an error, a refusal, a stop).
    Failed,
    /// Waiting for a person: a call whose outcome nobody knows must be reconciled first.
    Parked,
}

impl EpisodeState {
    /// Its name in the database and in listings.
    pub fn as_str(self) -> &'static str {
        match self {
            EpisodeState::Queued => "queued",
            EpisodeState::Running => "running",
            EpisodeState::Finished => "finished",
            EpisodeState::Failed => "failed",
            EpisodeState::Parked => "parked",
        }
    }
}

/// How an episode ended, as its worker recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeOutcome {
    /// Finished, failed or parked.
    pub state: EpisodeState,
    /// Whether the task succeeded: its check passed, or (without a check) the model finished.
    pub success: bool,
    /// Why not, when it did not.
    pub reason: Option<String>,
    /// Requests used.
    pub steps: u32,
    /// Input tokens (uncached).
    pub input_tokens: u64,
    /// Input tokens read from the cache.
    pub cached_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
}

/// An episode as a listing shows it ([`Fleet::episodes`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeInfo {
    /// Which.
    pub id: EpisodeId,
    /// Its batch.
    pub batch: String,
    /// Where it stands.
    pub state: EpisodeState,
    /// The epoch of its latest claim (0: never claimed).
    pub epoch: u64,
    /// The worker of its latest claim.
    pub worker: Option<String>,
    /// Claims it has had.
    pub attempts: u32,
    /// What it does.
    pub task: Task,
    /// How it ended, once recorded.
    pub outcome: Option<EpisodeOutcome>,
    /// Checkpoints saved.
    pub checkpoints: u64,
}

/// What `hands batch status` shows.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FleetStatus {
    /// Episodes by state.
    pub by_state: BTreeMap<String, u64>,
    /// Running episodes whose lease has expired (another worker may take them over).
    pub stale: u64,
    /// Finished or failed episodes that succeeded.
    pub succeeded: u64,
    /// Tokens: input, cached input, output.
    pub tokens: (u64, u64, u64),
    /// Episodes that did not succeed, by reason.
    pub failures: BTreeMap<String, u64>,
}

impl FleetStatus {
    /// Episodes in `state`.
    pub fn count(&self, state: EpisodeState) -> u64 {
        self.by_state.get(state.as_str()).copied().unwrap_or(0)
    }

    /// All episodes.
    pub fn total(&self) -> u64 {
        self.by_state.values().sum()
    }

    /// Episodes nobody has to do anything about any more (finished, failed).
    pub fn done(&self) -> u64 {
        self.count(EpisodeState::Finished) + self.count(EpisodeState::Failed)
    }

    /// Successes among the done, when any is done.
    pub fn success_rate(&self) -> Option<f64> {
        let done = self.done();
        (done > 0).then(|| self.succeeded as f64 / done as f64)
    }
}

impl std::fmt::Display for FleetStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let states: Vec<String> = [
            EpisodeState::Queued,
            EpisodeState::Running,
            EpisodeState::Finished,
            EpisodeState::Failed,
            EpisodeState::Parked,
        ]
        .iter()
        .map(|s| format!("{} {}", self.count(*s), s.as_str()))
        .collect();
        writeln!(f, "{} episodes: {}", self.total(), states.join(", "))?;
        if self.stale > 0 {
            writeln!(
                f,
                "{} running with an expired lease (another worker will take them over)",
                self.stale
            )?;
        }
        match self.success_rate() {
            Some(rate) => writeln!(
                f,
                "success: {} of {} done ({:.1}%)",
                self.succeeded,
                self.done(),
                rate * 100.0
            )?,
            None => writeln!(f, "success: none done yet")?,
        }
        writeln!(
            f,
            "tokens: {} input + {} cached + {} output",
            self.tokens.0, self.tokens.1, self.tokens.2
        )?;
        for (reason, n) in &self.failures {
            writeln!(f, "not successful ({n}): {reason}")?;
        }
        Ok(())
    }
}

/// The fleet's episodes in PostgreSQL, on the caller's tokio runtime; clones share the
/// connection.
#[derive(Clone)]
pub struct Fleet {
    /// The connection, made again when it closed (a partition outlasted its TCP timeout).
    client: Arc<tokio::sync::Mutex<Arc<Client>>>,
    config: tokio_postgres::Config,
    name: String,
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fleet")
            .field("db", &self.name)
            .finish_non_exhaustive()
    }
}

fn millis(ttl: Duration) -> f64 {
    ttl.as_secs_f64() * 1e3
}

impl Fleet {
    /// Connects to `url` and creates the schema when missing.
    pub async fn connect(url: &str) -> Result<Fleet, FleetError> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|source| FleetError::BadUrl { source })?;
        let name = crate::describe(&config);
        let client = crate::connect_on_current(&config, &name).await?;
        Ok(Fleet {
            client: Arc::new(tokio::sync::Mutex::new(Arc::new(client))),
            config,
            name,
        })
    }

    /// The connection; a new one when the last closed.
    async fn client(&self) -> Result<Arc<Client>, FleetError> {
        let mut client = self.client.lock().await;
        if client.is_closed() {
            tracing::warn!("the connection to {} closed: connecting again", self.name);
            *client = Arc::new(crate::connect_on_current(&self.config, &self.name).await?);
        }
        Ok(Arc::clone(&client))
    }

    /// What it is connected to (no password).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Queues one episode per task in `batch`, in one statement (all or none).
    pub async fn submit(&self, batch: &str, tasks: &[Task]) -> Result<Vec<EpisodeId>, FleetError> {
        for (i, task) in tasks.iter().enumerate() {
            task.validate()
                .map_err(|why| FleetError::BadTask { line: i + 1, why })?;
        }
        let docs: Vec<serde_json::Value> = tasks
            .iter()
            .map(serde_json::to_value)
            .collect::<Result<_, _>>()
            .map_err(|e| FleetError::Invalid(e.to_string()))?;
        let rows = self
            .client()
            .await?
            .query(
                "INSERT INTO hands_episodes (batch, task)
                 SELECT $1, t FROM unnest($2::jsonb[]) WITH ORDINALITY AS u (t, n) ORDER BY n
                 RETURNING id",
                &[&batch, &docs],
            )
            .await
            .map_err(FleetError::db)?;
        let mut ids: Vec<EpisodeId> = rows.iter().map(|r| EpisodeId(r.get(0))).collect();
        ids.sort();
        Ok(ids)
    }

    /// Claims up to `slots` episodes for `worker`: queued ones, or running ones whose lease
    /// expired, oldest first, skipping rows another claim has locked. Each claim bumps the
    /// epoch and leases the episode until now + `ttl`.
    pub async fn claim(
        &self,
        worker: &str,
        slots: u32,
        ttl: Duration,
    ) -> Result<Vec<Claim>, FleetError> {
        let rows = self
            .client()
            .await?
            .query(
                "WITH free AS (
                     SELECT id FROM hands_episodes
                     WHERE state = 'queued'
                        OR (state = 'running' AND lease_until <= clock_timestamp())
                     ORDER BY id LIMIT $2
                     FOR UPDATE SKIP LOCKED)
                 UPDATE hands_episodes e
                 SET state = 'running', epoch = e.epoch + 1, worker = $1,
                     lease_until = clock_timestamp() + $3 * interval '1 millisecond',
                     attempts = e.attempts + 1, claimed_at = clock_timestamp()
                 FROM free WHERE e.id = free.id
                 RETURNING e.id, e.epoch, e.task, e.attempts,
                     EXISTS (SELECT 1 FROM hands_checkpoints c WHERE c.episode = e.id)",
                &[&worker, &i64::from(slots), &millis(ttl)],
            )
            .await
            .map_err(FleetError::db)?;
        let mut claims = Vec::with_capacity(rows.len());
        for row in rows {
            let id = EpisodeId(row.get(0));
            let Json(task): Json<Task> = row
                .try_get(2)
                .map_err(|e| FleetError::Invalid(format!("episode {id}'s task: {e}")))?;
            claims.push(Claim {
                episode: id,
                epoch: row.get::<_, i64>(1).max(0) as u64,
                task,
                attempts: row.get::<_, i32>(3).max(0) as u32,
                resume: row.get(4),
            });
        }
        claims.sort_by_key(|c| c.episode);
        Ok(claims)
    }

    /// Extends the leases `held` (episode, epoch) by `ttl` from now; returns the episodes whose
    /// lease could not be extended (expired, or claimed by a newer epoch): their worker must
    /// stop acting on them.
    pub async fn heartbeat(
        &self,
        held: &[(EpisodeId, u64)],
        ttl: Duration,
    ) -> Result<Vec<EpisodeId>, FleetError> {
        if held.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<i64> = held.iter().map(|(e, _)| e.0).collect();
        let epochs: Vec<i64> = held.iter().map(|(_, epoch)| *epoch as i64).collect();
        let rows = self
            .client()
            .await?
            .query(
                "UPDATE hands_episodes e
                 SET lease_until = clock_timestamp() + $3 * interval '1 millisecond'
                 FROM unnest($1::bigint[], $2::bigint[]) AS h (id, epoch)
                 WHERE e.id = h.id AND e.epoch = h.epoch AND e.state = 'running'
                   AND e.lease_until > clock_timestamp()
                 RETURNING e.id",
                &[&ids, &epochs, &millis(ttl)],
            )
            .await
            .map_err(FleetError::db)?;
        let kept: std::collections::HashSet<i64> = rows.iter().map(|r| r.get(0)).collect();
        Ok(held
            .iter()
            .map(|(e, _)| *e)
            .filter(|e| !kept.contains(&e.0))
            .collect())
    }

    /// Records how `episode` ended, if the caller still holds it at `epoch` under a live
    /// lease; else [`FleetError::Fenced`] (the episode is claimed again and resumed).
    pub async fn finish(
        &self,
        episode: EpisodeId,
        epoch: u64,
        outcome: &EpisodeOutcome,
    ) -> Result<(), FleetError> {
        if matches!(outcome.state, EpisodeState::Queued | EpisodeState::Running) {
            return Err(FleetError::Invalid(format!(
                "an episode ends finished, failed or parked, not {}",
                outcome.state.as_str()
            )));
        }
        let updated = self
            .client()
            .await?
            .execute(
                "UPDATE hands_episodes
                 SET state = $3, outcome = $4, finished_at = clock_timestamp(), lease_until = NULL
                 WHERE id = $1 AND epoch = $2 AND state = 'running'
                   AND lease_until > clock_timestamp()",
                &[
                    &episode.0,
                    &(epoch as i64),
                    &outcome.state.as_str(),
                    &Json(outcome),
                ],
            )
            .await
            .map_err(FleetError::db)?;
        if updated == 0 {
            return Err(FleetError::Fenced { episode, epoch });
        }
        Ok(())
    }

    /// The parked episodes (of `batch`, or all), oldest first: each waits for its uncertain
    /// calls to be reconciled.
    pub async fn parked(&self, batch: Option<&str>) -> Result<Vec<EpisodeId>, FleetError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT id FROM hands_episodes
                 WHERE state = 'parked' AND ($1::text IS NULL OR batch = $1) ORDER BY id",
                &[&batch],
            )
            .await
            .map_err(FleetError::db)?;
        Ok(rows.iter().map(|r| EpisodeId(r.get(0))).collect())
    }

    /// Takes the parked `episode` to reconcile it: parked becomes running under a new epoch,
    /// leased to `who` for `ttl`. The epoch moving on is what makes a reconciliation safe: the
    /// holder that left the call uncertain can no longer save, and an environment that accepts
    /// only the current epoch refuses its late actions. `None` when the episode is not parked
    /// (someone else took it, or it was never parked).
    pub async fn take_parked(
        &self,
        episode: EpisodeId,
        who: &str,
        ttl: Duration,
    ) -> Result<Option<Claim>, FleetError> {
        let row = self
            .client()
            .await?
            .query_opt(
                "UPDATE hands_episodes e
                 SET state = 'running', epoch = e.epoch + 1, worker = $2,
                     lease_until = clock_timestamp() + $3 * interval '1 millisecond',
                     claimed_at = clock_timestamp()
                 WHERE id = $1 AND state = 'parked'
                 RETURNING e.epoch, e.task, e.attempts",
                &[&episode.0, &who, &millis(ttl)],
            )
            .await
            .map_err(FleetError::db)?;
        let Some(row) = row else { return Ok(None) };
        let Json(task): Json<Task> = row
            .try_get(1)
            .map_err(|e| FleetError::Invalid(format!("episode {episode}'s task: {e}")))?;
        Ok(Some(Claim {
            episode,
            epoch: row.get::<_, i64>(0).max(0) as u64,
            task,
            resume: true,
            attempts: row.get::<_, i32>(2).max(0) as u32,
        }))
    }

    /// Gives back an episode held at `epoch` without ending it: `Queued` (a worker resumes
    /// it; its recorded outcome is cleared) or `Parked` (still waiting for a person); else
    /// [`FleetError::Fenced`] when the caller no longer holds it.
    pub async fn release(
        &self,
        episode: EpisodeId,
        epoch: u64,
        to: EpisodeState,
    ) -> Result<(), FleetError> {
        let clear_outcome = match to {
            EpisodeState::Queued => true,
            EpisodeState::Parked => false,
            other => {
                return Err(FleetError::Invalid(format!(
                    "an episode is given back queued or parked, not {}",
                    other.as_str()
                )));
            }
        };
        let updated = self
            .client()
            .await?
            .execute(
                "UPDATE hands_episodes
                 SET state = $3, lease_until = NULL,
                     outcome = CASE WHEN $4 THEN NULL ELSE outcome END
                 WHERE id = $1 AND epoch = $2 AND state = 'running'",
                &[&episode.0, &(epoch as i64), &to.as_str(), &clear_outcome],
            )
            .await
            .map_err(FleetError::db)?;
        if updated == 0 {
            return Err(FleetError::Fenced { episode, epoch });
        }
        Ok(())
    }

    /// The epoch `episode` is held at now, if a live lease holds it (`None` when it is queued,
    /// parked, ended, or its lease expired). An environment fenced by epoch accepts an action
    /// only from this epoch.
    pub async fn current_epoch(&self, episode: EpisodeId) -> Result<Option<u64>, FleetError> {
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT epoch FROM hands_episodes WHERE id = $1 AND state = 'running'
                   AND lease_until > clock_timestamp()",
                &[&episode.0],
            )
            .await
            .map_err(FleetError::db)?;
        Ok(row.map(|r| r.get::<_, i64>(0).max(0) as u64))
    }

    /// Who holds `episode` now: its epoch, how long its lease has left (by the database's
    /// clock; zero or less when it lapsed) and its task — `None` unless it is running.
    pub async fn holding(&self, episode: EpisodeId) -> Result<Option<Holding>, FleetError> {
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT epoch,
                        EXTRACT(EPOCH FROM (lease_until - clock_timestamp()))::float8, task
                 FROM hands_episodes WHERE id = $1 AND state = 'running'",
                &[&episode.0],
            )
            .await
            .map_err(FleetError::db)?;
        let Some(row) = row else {
            return Ok(None);
        };
        let Json(task): Json<Task> = row
            .try_get(2)
            .map_err(|e| FleetError::Invalid(format!("episode {episode}'s task: {e}")))?;
        let left: Option<f64> = row.get(1);
        Ok(Some(Holding {
            epoch: row.get::<_, i64>(0).max(0) as u64,
            lease_left: Duration::from_secs_f64(left.unwrap_or(0.0).clamp(0.0, 1e6)),
            task,
        }))
    }

    /// The episodes of `batch` (or every episode) by id, or only `only` when given.
    pub async fn episodes(
        &self,
        batch: Option<&str>,
        only: Option<EpisodeId>,
    ) -> Result<Vec<EpisodeInfo>, FleetError> {
        let only = only.map(|e| e.0);
        let rows = self
            .client()
            .await?
            .query(
                "SELECT e.id, e.batch, e.state, e.epoch, e.worker, e.attempts, e.task, e.outcome,
                        (SELECT COUNT(*) FROM hands_checkpoints c WHERE c.episode = e.id)
                 FROM hands_episodes e
                 WHERE ($1::text IS NULL OR e.batch = $1) AND ($2::bigint IS NULL OR e.id = $2)
                 ORDER BY e.id",
                &[&batch, &only],
            )
            .await
            .map_err(FleetError::db)?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let id = EpisodeId(row.get(0));
            let state: String = row.get(2);
            let state = [
                EpisodeState::Queued,
                EpisodeState::Running,
                EpisodeState::Finished,
                EpisodeState::Failed,
                EpisodeState::Parked,
            ]
            .into_iter()
            .find(|s| s.as_str() == state)
            .ok_or_else(|| FleetError::Invalid(format!("episode {id}'s state {state:?}")))?;
            let Json(task): Json<Task> = row
                .try_get(6)
                .map_err(|e| FleetError::Invalid(format!("episode {id}'s task: {e}")))?;
            let outcome: Option<Json<EpisodeOutcome>> = row
                .try_get(7)
                .map_err(|e| FleetError::Invalid(format!("episode {id}'s outcome: {e}")))?;
            out.push(EpisodeInfo {
                id,
                batch: row.get(1),
                state,
                epoch: row.get::<_, i64>(3).max(0) as u64,
                worker: row.get(4),
                attempts: row.get::<_, i32>(5).max(0) as u32,
                task,
                outcome: outcome.map(|Json(o)| o),
                checkpoints: row.get::<_, i64>(8).max(0) as u64,
            });
        }
        Ok(out)
    }

    /// Counts by state, successes, tokens, and failures by reason, over every episode (or
    /// those of `batch`).
    pub async fn status(&self, batch: Option<&str>) -> Result<FleetStatus, FleetError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT state,
                        COUNT(*),
                        COUNT(*) FILTER (WHERE state = 'running' AND lease_until <= clock_timestamp()),
                        COUNT(*) FILTER (WHERE (outcome->>'success')::boolean),
                        COALESCE(SUM((outcome->>'input_tokens')::bigint), 0)::bigint,
                        COALESCE(SUM((outcome->>'cached_tokens')::bigint), 0)::bigint,
                        COALESCE(SUM((outcome->>'output_tokens')::bigint), 0)::bigint
                 FROM hands_episodes WHERE ($1::text IS NULL OR batch = $1)
                 GROUP BY state",
                &[&batch],
            )
            .await
            .map_err(FleetError::db)?;
        let mut status = FleetStatus::default();
        let n = |v: i64| v.max(0) as u64;
        for row in rows {
            let state: String = row.get(0);
            status.by_state.insert(state, n(row.get(1)));
            status.stale += n(row.get(2));
            status.succeeded += n(row.get(3));
            status.tokens.0 += n(row.get(4));
            status.tokens.1 += n(row.get(5));
            status.tokens.2 += n(row.get(6));
        }
        let rows = self
            .client()
            .await?
            .query(
                "SELECT COALESCE(outcome->>'reason', state), COUNT(*) FROM hands_episodes
                 WHERE ($1::text IS NULL OR batch = $1) AND outcome IS NOT NULL
                   AND NOT (outcome->>'success')::boolean
                 GROUP BY 1",
                &[&batch],
            )
            .await
            .map_err(FleetError::db)?;
        for row in rows {
            status.failures.insert(row.get(0), n(row.get(1)));
        }
        Ok(status)
    }
}
