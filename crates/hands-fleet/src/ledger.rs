//! [`PostgresLedger`]: one episode's checkpoints in the fleet's database, every save fenced by
//! the episode's epoch and live lease.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hands_runner::ledger::blobs::{self, Encoder, Hash};
use hands_runner::ledger::{
    Checkpoint, CheckpointStatus, Ledger, LedgerError, PendingTurn, RunEnd, RunIdentity, check_next,
};
use serde_json::Value;

use crate::fleet::EpisodeId;
use crate::{FleetError, SyncDb};

/// One episode's checkpoints in PostgreSQL, written under the epoch its worker claimed it with.
/// See the crate documentation. The run id is `episode-<id>`.
pub struct PostgresLedger {
    db: SyncDb,
    episode: EpisodeId,
    epoch: u64,
    run_id: String,
    encoder: Encoder,
    identity: Option<RunIdentity>,
    last_revision: u64,
    fenced: Arc<AtomicBool>,
    /// [`SAVE_SQL`], prepared once on the ledger's connection: a save is then one round trip
    /// (bind and execute), not two (parse and describe first).
    save_statement: tokio_postgres::Statement,
}

impl std::fmt::Debug for PostgresLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresLedger")
            .field("db", &self.db.name())
            .field("episode", &self.episode)
            .field("epoch", &self.epoch)
            .field("last_revision", &self.last_revision)
            .finish_non_exhaustive()
    }
}

/// One checkpoint as stored.
struct Row {
    completed: bool,
    steps_used: u32,
    conversation: String,
    turn: Option<String>,
}

/// What one save sends to the database.
struct Save {
    episode: i64,
    epoch: i64,
    revision: i64,
    identity: Option<(String, String)>,
    blobs: Vec<(Hash, Vec<u8>)>,
    completed: bool,
    steps_used: i32,
    doc: String,
    turn: Option<String>,
}

impl PostgresLedger {
    /// The ledger of `episode`, written under `epoch` (the epoch of the worker's claim). Reads
    /// the run's identity and latest revision, so a worker that took the episode over goes on
    /// from where the last holder stopped.
    pub fn open(db: SyncDb, episode: EpisodeId, epoch: u64) -> Result<PostgresLedger, FleetError> {
        let id = episode.0;
        let (identity, last, save_statement): (Option<String>, i64, _) =
            db.call(move |client| {
                Box::pin(async move {
                    let statement = client.prepare(SAVE_SQL).await.map_err(FleetError::db)?;
                    let row = client
                    .query_opt(
                        "SELECT identity, (SELECT COALESCE(MAX(revision), 0) FROM hands_checkpoints
                         WHERE episode = $1) FROM hands_episodes WHERE id = $1",
                        &[&id],
                    )
                    .await
                    .map_err(FleetError::db)?;
                    let row = row.ok_or_else(|| FleetError::Invalid(format!("no episode {id}")))?;
                    Ok::<_, FleetError>((row.get(0), row.get(1), statement))
                })
            })??;
        let identity = identity
            .map(|text| serde_json::from_str::<RunIdentity>(&text))
            .transpose()
            .map_err(|e| FleetError::Invalid(format!("episode {id}'s run identity: {e}")))?;
        Ok(PostgresLedger {
            db,
            episode,
            epoch,
            run_id: episode.run_id(),
            encoder: Encoder::default(),
            identity,
            last_revision: last.max(0) as u64,
            fenced: Arc::new(AtomicBool::new(false)),
            save_statement,
        })
    }

    /// Every checkpoint's conversation, oldest first (for a viewer: each holds the screenshots
    /// the runner had not dropped yet). Reads only; needs no live claim.
    pub fn conversations(&self) -> Result<Vec<Value>, LedgerError> {
        (1..=self.last_revision)
            .map(|revision| self.load(revision).map(|c| c.conversation))
            .collect()
    }

    /// Set once a save or an end was refused because the episode is no longer this writer's:
    /// the worker reads it to tell a fenced run from one that failed.
    pub fn fenced_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.fenced)
    }

    /// The episode it keeps.
    pub fn episode(&self) -> EpisodeId {
        self.episode
    }

    fn store_err(&self) -> impl Fn(FleetError) -> LedgerError + '_ {
        move |e| LedgerError::Store {
            store: format!("{} (episode {})", self.db.name(), self.episode),
            source: Box::new(e),
        }
    }

    fn invalid(&self, why: impl Into<String>) -> LedgerError {
        LedgerError::Invalid {
            path: format!("{} (episode {})", self.db.name(), self.episode),
            why: why.into(),
        }
    }

    fn fenced(&self) -> LedgerError {
        self.fenced.store(true, Ordering::SeqCst);
        LedgerError::Fenced {
            episode: self.episode.to_string(),
            epoch: self.epoch,
        }
    }

    /// Reads checkpoint rows of this episode by revision.
    fn rows(&self, revisions: Vec<i64>) -> Result<HashMap<i64, Row>, LedgerError> {
        let id = self.episode.0;
        self.db
            .call(move |client| {
                Box::pin(async move {
                    let rows = client
                        .query(
                            "SELECT revision, completed, steps_used, conversation, turn
                             FROM hands_checkpoints WHERE episode = $1 AND revision = ANY($2)",
                            &[&id, &revisions],
                        )
                        .await
                        .map_err(FleetError::db)?;
                    Ok::<_, FleetError>(
                        rows.into_iter()
                            .map(|r| {
                                (
                                    r.get::<_, i64>(0),
                                    Row {
                                        completed: r.get(1),
                                        steps_used: r.get::<_, i32>(2).max(0) as u32,
                                        conversation: r.get(3),
                                        turn: r.get(4),
                                    },
                                )
                            })
                            .collect(),
                    )
                })
            })
            .map_err(self.store_err())?
            .map_err(self.store_err())
    }

    fn get_blob(&self, hash: &Hash) -> Result<Vec<u8>, LedgerError> {
        let key = hash.to_vec();
        let data: Option<Vec<u8>> = self
            .db
            .call(move |client| {
                Box::pin(async move {
                    client
                        .query_opt("SELECT data FROM hands_blobs WHERE hash = $1", &[&key])
                        .await
                        .map(|row| row.map(|r| r.get(0)))
                        .map_err(FleetError::db)
                })
            })
            .map_err(self.store_err())?
            .map_err(self.store_err())?;
        data.ok_or_else(|| self.invalid("a checkpoint refers to a missing blob"))
    }

    fn load(&self, revision: u64) -> Result<Checkpoint, LedgerError> {
        let identity = self
            .identity
            .clone()
            .ok_or_else(|| self.invalid("checkpoints without a run identity"))?;
        let parse = |text: &str| -> Result<Value, LedgerError> {
            serde_json::from_str(text).map_err(|e| self.invalid(e.to_string()))
        };
        let mut rows = self.rows(vec![revision as i64])?;
        let first = rows
            .remove(&(revision as i64))
            .ok_or_else(|| self.invalid(format!("no checkpoint {revision}")))?;
        let mut chain = vec![parse(&first.conversation)?];
        while let Some(base) = chain.last().and_then(blobs::base_of) {
            if base >= revision || chain.len() as u64 > revision {
                return Err(self.invalid("a checkpoint chain loops"));
            }
            let row = self
                .rows(vec![base as i64])?
                .remove(&(base as i64))
                .ok_or_else(|| self.invalid(format!("no checkpoint {base}")))?;
            chain.push(parse(&row.conversation)?);
        }
        chain.reverse();
        let conversation = blobs::decode(&chain, &mut |h| self.get_blob(h))?;
        let status = if first.completed {
            CheckpointStatus::Completed
        } else {
            let turn = first
                .turn
                .as_deref()
                .ok_or_else(|| self.invalid("a pending checkpoint has no turn"))?;
            let value = blobs::restore(parse(turn)?, &mut |h| self.get_blob(h))?;
            CheckpointStatus::Pending(
                serde_json::from_value::<PendingTurn>(value)
                    .map_err(|e| self.invalid(format!("a pending turn: {e}")))?,
            )
        };
        Ok(Checkpoint {
            identity,
            revision,
            steps_used: first.steps_used,
            status,
            conversation,
        })
    }

    fn latest_where(&self, completed_only: bool) -> Result<Option<Checkpoint>, LedgerError> {
        let id = self.episode.0;
        let revision: Option<i64> = self
            .db
            .call(move |client| {
                Box::pin(async move {
                    client
                        .query_one(
                            "SELECT MAX(revision) FROM hands_checkpoints
                             WHERE episode = $1 AND (completed OR NOT $2)",
                            &[&id, &completed_only],
                        )
                        .await
                        .map(|row| row.get(0))
                        .map_err(FleetError::db)
                })
            })
            .map_err(self.store_err())?
            .map_err(self.store_err())?;
        revision.map(|r| self.load(r.max(0) as u64)).transpose()
    }

    /// Encodes `checkpoint`: its document, its pending turn and the blobs they name.
    fn encode(&self, checkpoint: &Checkpoint) -> Result<(Save, blobs::Arrays), LedgerError> {
        let mut new_blobs: Vec<(Hash, Vec<u8>)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut put = |hash: &Hash, bytes: &[u8]| -> Result<(), LedgerError> {
            if seen.insert(*hash) {
                new_blobs.push((*hash, bytes.to_vec()));
            }
            Ok(())
        };
        let encoded = self.encoder.encode(&checkpoint.conversation, &mut put)?;
        let turn = match &checkpoint.status {
            CheckpointStatus::Completed => None,
            CheckpointStatus::Pending(turn) => {
                let value = serde_json::to_value(turn).map_err(|e| self.invalid(e.to_string()))?;
                Some(blobs::extract(&value, &mut put)?.to_string())
            }
        };
        let identity = match &self.identity {
            Some(_) => None,
            None => Some((
                serde_json::to_string(&checkpoint.identity)
                    .map_err(|e| self.invalid(e.to_string()))?,
                checkpoint.identity.tools_fingerprint(),
            )),
        };
        Ok((
            Save {
                episode: self.episode.0,
                epoch: self.epoch as i64,
                revision: checkpoint.revision as i64,
                identity,
                blobs: new_blobs,
                completed: checkpoint.status == CheckpointStatus::Completed,
                steps_used: checkpoint.steps_used as i32,
                doc: encoded.doc.to_string(),
                turn,
            },
            encoded.arrays,
        ))
    }
}

/// What a save transaction found.
enum Saved {
    Done,
    Fenced,
    Duplicate,
}

/// The save, as one statement (one round trip, one implicit transaction): the fence (epoch and
/// live lease; the row stays locked until commit, so no claim can pass it), the new blobs, the
/// checkpoint. The blobs and the checkpoint are written only when the fence held; a revision
/// already saved violates the checkpoints' key and aborts the whole statement.
const SAVE_SQL: &str = "
    WITH fence AS (
        UPDATE hands_episodes
        SET end_state = NULL,
            identity = COALESCE(identity, $3),
            tools_fingerprint = COALESCE(tools_fingerprint, $4)
        WHERE id = $1 AND epoch = $2 AND state = 'running'
          AND lease_until > clock_timestamp()
        RETURNING id),
    new_blobs AS (
        INSERT INTO hands_blobs (hash, data)
        SELECT h, d FROM unnest($5::bytea[], $6::bytea[]) AS b (h, d)
        WHERE EXISTS (SELECT 1 FROM fence)
        ON CONFLICT (hash) DO NOTHING),
    saved AS (
        INSERT INTO hands_checkpoints
            (episode, revision, epoch, completed, steps_used, conversation, turn)
        SELECT id, $7, $2, $8, $9, $10, $11 FROM fence
        RETURNING 1)
    SELECT (SELECT COUNT(*) FROM saved)";

/// Runs [`SAVE_SQL`] for `save`.
async fn save_tx(
    client: &mut tokio_postgres::Client,
    statement: tokio_postgres::Statement,
    save: Save,
) -> Result<Saved, FleetError> {
    let (identity, fingerprint) = save.identity.unzip();
    let (hashes, data): (Vec<Vec<u8>>, Vec<Vec<u8>>) =
        save.blobs.into_iter().map(|(h, d)| (h.to_vec(), d)).unzip();
    let result = client
        .query_one(
            &statement,
            &[
                &save.episode,
                &save.epoch,
                &identity,
                &fingerprint,
                &hashes,
                &data,
                &save.revision,
                &save.completed,
                &save.steps_used,
                &save.doc,
                &save.turn,
            ],
        )
        .await;
    match result {
        Ok(row) if row.get::<_, i64>(0) == 1 => Ok(Saved::Done),
        Ok(_) => Ok(Saved::Fenced),
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => {
            Ok(Saved::Duplicate)
        }
        Err(e) => Err(FleetError::db(e)),
    }
}

impl Ledger for PostgresLedger {
    fn run_id(&self) -> &str {
        &self.run_id
    }

    fn save(&mut self, checkpoint: &Checkpoint) -> Result<(), LedgerError> {
        check_next(
            &self.run_id,
            self.identity
                .as_ref()
                .map(|identity| (self.last_revision, identity)),
            checkpoint,
        )?;
        if self.identity.is_none() && self.last_revision != 0 {
            return Err(self.invalid("checkpoints without a run identity"));
        }
        let (save, arrays) = match self.encode(checkpoint) {
            Ok(encoded) => encoded,
            Err(e) => {
                self.encoder.reset();
                return Err(e);
            }
        };
        let result = self
            .db
            .call({
                let statement = self.save_statement.clone();
                move |client| Box::pin(save_tx(client, statement, save))
            })
            .map_err(self.store_err())
            .and_then(|r| r.map_err(self.store_err()));
        match result {
            Ok(Saved::Done) => {
                self.encoder.committed(checkpoint.revision, arrays);
                self.last_revision = checkpoint.revision;
                if self.identity.is_none() {
                    self.identity = Some(checkpoint.identity.clone());
                }
                Ok(())
            }
            Ok(Saved::Fenced) => {
                self.encoder.reset();
                Err(self.fenced())
            }
            Ok(Saved::Duplicate) => {
                self.encoder.reset();
                Err(LedgerError::Refused(format!(
                    "revision {} of {} is already saved: another writer went on with this run",
                    checkpoint.revision, self.run_id
                )))
            }
            Err(e) => {
                self.encoder.reset();
                Err(e)
            }
        }
    }

    fn latest_revision(&mut self) -> Result<u64, LedgerError> {
        Ok(self.last_revision)
    }

    fn latest(&mut self) -> Result<Option<Checkpoint>, LedgerError> {
        self.latest_where(false)
    }

    fn latest_completed(&mut self) -> Result<Option<Checkpoint>, LedgerError> {
        self.latest_where(true)
    }

    fn record_end(&mut self, end: &RunEnd) -> Result<(), LedgerError> {
        let text = serde_json::to_string(end).map_err(|e| self.invalid(e.to_string()))?;
        let (id, epoch) = (self.episode.0, self.epoch as i64);
        let updated = self
            .db
            .call(move |client| {
                Box::pin(async move {
                    client
                        .execute(
                            "UPDATE hands_episodes SET end_state = $3
                             WHERE id = $1 AND epoch = $2 AND state = 'running'
                               AND lease_until > clock_timestamp()",
                            &[&id, &epoch, &text],
                        )
                        .await
                        .map_err(FleetError::db)
                })
            })
            .map_err(self.store_err())?
            .map_err(self.store_err())?;
        if updated == 0 {
            return Err(self.fenced());
        }
        Ok(())
    }

    fn end(&mut self) -> Result<Option<RunEnd>, LedgerError> {
        let id = self.episode.0;
        let end: Option<String> = self
            .db
            .call(move |client| {
                Box::pin(async move {
                    client
                        .query_one("SELECT end_state FROM hands_episodes WHERE id = $1", &[&id])
                        .await
                        .map(|row| row.get(0))
                        .map_err(FleetError::db)
                })
            })
            .map_err(self.store_err())?
            .map_err(self.store_err())?;
        end.map(|text| serde_json::from_str::<RunEnd>(&text))
            .transpose()
            .map_err(|e| self.invalid(format!("how the run ended: {e}")))
    }
}
