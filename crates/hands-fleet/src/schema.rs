//! The schema, as SQL migrations applied in order, once each, under an advisory lock (so
//! workers starting together do not race on `CREATE TABLE`).

use tokio_postgres::Client;

use crate::FleetError;

/// The advisory lock key the migrations run under (`hands` in ASCII).
const MIGRATION_LOCK: i64 = 0x68616e6473;

/// The migrations, in order: the number each brings the schema to is its index + 1.
pub const MIGRATIONS: &[&str] = &[
    // 1: episodes as rows, their checkpoints, blobs stored once by SHA-256.
    "
    CREATE TABLE hands_episodes (
        id BIGSERIAL PRIMARY KEY,
        batch TEXT NOT NULL,
        task JSONB NOT NULL,
        state TEXT NOT NULL DEFAULT 'queued'
            CHECK (state IN ('queued', 'running', 'finished', 'failed', 'parked')),
        epoch BIGINT NOT NULL DEFAULT 0,
        worker TEXT,
        lease_until TIMESTAMPTZ,
        attempts INTEGER NOT NULL DEFAULT 0,
        submitted_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        claimed_at TIMESTAMPTZ,
        finished_at TIMESTAMPTZ,
        outcome JSONB,
        identity TEXT,
        tools_fingerprint TEXT,
        end_state TEXT
    );
    CREATE INDEX hands_episodes_claimable ON hands_episodes (state, id);
    CREATE TABLE hands_blobs (hash BYTEA PRIMARY KEY, data BYTEA NOT NULL);
    CREATE TABLE hands_checkpoints (
        episode BIGINT NOT NULL REFERENCES hands_episodes (id),
        revision BIGINT NOT NULL,
        epoch BIGINT NOT NULL,
        saved_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        completed BOOLEAN NOT NULL,
        steps_used INTEGER NOT NULL,
        conversation TEXT NOT NULL,
        turn TEXT,
        PRIMARY KEY (episode, revision)
    );
    ",
];

/// Brings the database's schema up to date: each missing migration in one transaction, under
/// an advisory lock.
pub async fn migrate(client: &mut Client) -> Result<(), FleetError> {
    // Up to date (every connection but the first few): no lock taken. A client that stalled
    // inside the locked transaction (a stopped process keeps its connection open) would
    // otherwise keep every later connection of the fleet waiting.
    let exists: Option<String> = client
        .query_one("SELECT to_regclass('hands_schema')::text", &[])
        .await
        .map_err(FleetError::db)?
        .get(0);
    if exists.is_some() {
        let version: Option<i32> = client
            .query_one("SELECT MAX(version) FROM hands_schema", &[])
            .await
            .map_err(FleetError::db)?
            .get(0);
        if version.unwrap_or(0).max(0) as usize == MIGRATIONS.len() {
            return Ok(());
        }
    }
    let tx = client.transaction().await.map_err(FleetError::db)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(FleetError::db)?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS hands_schema (version INTEGER NOT NULL)")
        .await
        .map_err(FleetError::db)?;
    let version: Option<i32> = tx
        .query_one("SELECT MAX(version) FROM hands_schema", &[])
        .await
        .map_err(FleetError::db)?
        .get(0);
    let version = version.unwrap_or(0).max(0) as usize;
    if version > MIGRATIONS.len() {
        return Err(FleetError::SchemaTooNew {
            found: version,
            known: MIGRATIONS.len(),
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        tx.batch_execute(sql).await.map_err(FleetError::db)?;
        tx.execute(
            "INSERT INTO hands_schema (version) VALUES ($1)",
            &[&(i as i32 + 1)],
        )
        .await
        .map_err(FleetError::db)?;
    }
    tx.commit().await.map_err(FleetError::db)
}
