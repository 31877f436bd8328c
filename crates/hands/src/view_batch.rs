//! `hands view --ledger URL [--batch NAME]`: hands-view's batch page fed from the fleet's
//! PostgreSQL — the episodes and their totals from [`Fleet`], an episode's steps and screenshots
//! from its checkpoints ([`PostgresLedger::conversations`]).

use hands_fleet::{EpisodeId, EpisodeInfo, Fleet, PostgresLedger, SyncDb};
use hands_view::batch::BoxFuture;
use hands_view::{BatchListing, BatchSource, EpisodeRecord, EpisodeRow};

/// The fleet's database, as a batch view reads it.
pub struct FleetSource {
    fleet: Fleet,
    url: String,
    batch: Option<String>,
}

impl FleetSource {
    /// Connects to the fleet at `url`, for the episodes of `batch` (or all).
    pub async fn connect(url: &str, batch: Option<String>) -> anyhow::Result<FleetSource> {
        Ok(FleetSource {
            fleet: Fleet::connect(url).await?,
            url: url.to_owned(),
            batch,
        })
    }

    /// What it is connected to (no password).
    pub fn name(&self) -> &str {
        self.fleet.name()
    }
}

/// An episode as the page lists it.
fn row(info: EpisodeInfo) -> EpisodeRow {
    let outcome = info.outcome.as_ref();
    EpisodeRow {
        id: info.id.0,
        batch: info.batch,
        state: info.state.as_str().to_owned(),
        epoch: info.epoch,
        worker: info.worker,
        attempts: info.attempts,
        prompt: info.task.prompt.clone(),
        steps: outcome.map_or(0, |o| o.steps),
        tokens: outcome.map_or([0; 3], |o| {
            [o.input_tokens, o.cached_tokens, o.output_tokens]
        }),
        success: outcome.map(|o| o.success),
        reason: outcome.and_then(|o| o.reason.clone()),
        checked: info.task.check.is_some(),
        checkpoints: info.checkpoints,
    }
}

impl FleetSource {
    async fn listing(&self) -> anyhow::Result<BatchListing> {
        let batch = self.batch.as_deref();
        let status = self.fleet.status(batch).await?;
        let episodes = self.fleet.episodes(batch, None).await?;
        Ok(BatchListing {
            batch: self.batch.clone(),
            totals_text: status.to_string(),
            totals: serde_json::to_value(&status)?,
            episodes: episodes.into_iter().map(row).collect(),
        })
    }

    async fn record(&self, id: i64) -> anyhow::Result<Option<EpisodeRecord>> {
        let episode = EpisodeId(id);
        let Some(info) = self
            .fleet
            .episodes(self.batch.as_deref(), Some(episode))
            .await?
            .pop()
        else {
            return Ok(None);
        };
        let conversations = if info.checkpoints == 0 {
            Vec::new()
        } else {
            // The ledger's reads are synchronous (its connection is on a thread of its own).
            let url = self.url.clone();
            tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
                let ledger = PostgresLedger::open(SyncDb::connect(&url)?, episode, 0)?;
                Ok(ledger.conversations()?)
            })
            .await??
        };
        Ok(Some(EpisodeRecord {
            row: row(info),
            conversations,
        }))
    }
}

impl BatchSource for FleetSource {
    fn list(&self) -> BoxFuture<'_, Result<BatchListing, String>> {
        Box::pin(async move { self.listing().await.map_err(|e| format!("{e:#}")) })
    }

    fn episode(&self, id: i64) -> BoxFuture<'_, Result<Option<EpisodeRecord>, String>> {
        Box::pin(async move { self.record(id).await.map_err(|e| format!("{e:#}")) })
    }
}
