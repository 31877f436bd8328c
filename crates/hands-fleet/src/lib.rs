//! Many episodes on many machines: episodes as rows of a PostgreSQL database, workers that
//! claim them under a lease, and a checkpoint ledger fenced by the lease's epoch.
//!
//! - [`Fleet`]: `submit` tasks (one queued episode each), `claim` episodes for a worker
//!   (`FOR UPDATE SKIP LOCKED`: two workers never get the same one; the epoch goes up by one
//!   and the lease runs for a TTL), `heartbeat` the leases, `finish` an episode with its
//!   outcome, `status` (counts by state, success rate, tokens, failures by reason), and
//!   `episodes` (each with its claim, outcome and checkpoints, for a viewer).
//! - [`PostgresLedger`]: hands-runner's [`Ledger`](hands_runner::ledger::Ledger) on the same
//!   database, with the SQLite ledger's semantics (revisions in order, every checkpoint kept,
//!   blobs stored once by SHA-256, the run's end). Every save checks the episode's epoch and
//!   live lease in the transaction that inserts the checkpoint: a worker whose lease expired,
//!   or that a newer claim superseded, gets [`LedgerError::Fenced`] and nothing is kept — so
//!   once another worker has claimed an episode, no checkpoint of the old holder lands.
//! - [`SyncDb`]: the connection the ledger uses, called synchronously (the trait is) and
//!   driven on the caller's thread; see [`db`].
//! - [`relay`]: the remote half of the environment's fence — a WebSocket relay in front of
//!   remote browsers' DevTools endpoints that lets an episode's CDP frames through only from
//!   the epoch holding it under a live lease, and cuts an older epoch off when a newer one
//!   connects.
//! - [`cluster::LocalCluster`]: a private PostgreSQL (`initdb` + `pg_ctl` on a temporary
//!   directory, a unix socket) for tests and benchmarks.
//!
//! The schema is created by the crate, idempotently ([`schema::MIGRATIONS`]).
//!
//! [`LedgerError::Fenced`]: hands_runner::ledger::LedgerError::Fenced

pub mod cluster;
pub mod db;
mod fleet;
mod ledger;
pub mod relay;
pub mod schema;

pub use db::SyncDb;
pub use fleet::{
    BrowserEnv, Claim, Environment, EpisodeId, EpisodeInfo, EpisodeOutcome, EpisodeState, Fleet,
    FleetStatus, Holding, Provider, RemoteBrowserEnv, Task,
};
pub use ledger::PostgresLedger;

use tokio_postgres::{Client, NoTls};

/// What went wrong with the fleet's database.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FleetError {
    /// The connection string does not parse.
    #[error(
        "not a PostgreSQL connection string ({source}): give postgres://USER@HOST/DB, or host=/socket/dir user=… dbname=…"
    )]
    BadUrl {
        /// Why.
        source: tokio_postgres::Error,
    },
    /// The server could not be reached.
    #[error(
        "cannot connect to PostgreSQL at {target}: {source} (is it running, and is the URL right?)"
    )]
    Connect {
        /// Where (host and database, no password).
        target: String,
        /// Why.
        source: tokio_postgres::Error,
    },
    /// A statement failed.
    #[error("PostgreSQL: {0}")]
    Db(#[source] tokio_postgres::Error),
    /// The database was set up by a newer hands.
    #[error(
        "the database's hands schema is version {found}, this hands knows up to {known}: use a newer hands"
    )]
    SchemaTooNew {
        /// The database's version.
        found: usize,
        /// This code's.
        known: usize,
    },
    /// The episode is no longer this worker's: its lease expired or a newer claim took it.
    #[error(
        "fenced: episode {episode} is no longer held by epoch {epoch} (its lease expired, or another worker claimed it): stop acting on it"
    )]
    Fenced {
        /// The episode.
        episode: EpisodeId,
        /// The epoch the caller held.
        epoch: u64,
    },
    /// A task is not valid.
    #[error("task {line}: {why}")]
    BadTask {
        /// Its line (1-based) in the submitted file, or its index.
        line: usize,
        /// Why.
        why: String,
    },
    /// Stored data this version cannot read.
    #[error("the fleet database holds data this hands cannot read: {0}")]
    Invalid(String),
    /// The database thread failed.
    #[error("the database thread: {0}")]
    Thread(String),
    /// A local cluster could not be started.
    #[error("{0}")]
    Cluster(String),
}

impl FleetError {
    pub(crate) fn db(source: tokio_postgres::Error) -> FleetError {
        FleetError::Db(source)
    }
}

/// Host(s) and database of `config`, for messages: never the password.
pub(crate) fn describe(config: &tokio_postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    format!(
        "{}/{}",
        hosts.join(","),
        config.get_dbname().unwrap_or("(default database)")
    )
}

/// How long sent data may stay unacknowledged before a connection counts as dead, unless the
/// connection string says (`tcp_user_timeout`).
pub const TCP_USER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Connects on the current runtime (the connection is a task of it) and migrates the schema.
pub(crate) async fn connect_on_current(
    config: &tokio_postgres::Config,
    target: &str,
) -> Result<Client, FleetError> {
    let mut config = config.clone();
    // A connection whose peer went silent (a partition, a dead node) fails after this instead
    // of waiting out TCP's retransmissions (minutes): the fleet connects again, a ledger's save
    // fails and its episode is given back.
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(TCP_USER_TIMEOUT);
    }
    config.keepalives(true).keepalives_idle(TCP_USER_TIMEOUT);
    let (mut client, connection) =
        config
            .connect(NoTls)
            .await
            .map_err(|source| FleetError::Connect {
                target: target.to_owned(),
                source,
            })?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::warn!(error = %e, "the PostgreSQL connection ended");
        }
    });
    schema::migrate(&mut client).await?;
    Ok(client)
}
