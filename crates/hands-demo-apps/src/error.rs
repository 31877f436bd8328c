//! The crate's errors: starting an app, and reading or writing the bookings database.

use std::net::SocketAddr;
use std::path::PathBuf;

/// The app could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// No temporary directory for the default database: check `TMPDIR` and free space, or set
    /// `BookingAppConfig::db_path`.
    #[error("cannot create a temporary directory for the bookings database: {source}")]
    TempDir {
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The database could not be opened or its table created.
    #[error(transparent)]
    Db(#[from] DbError),
    /// Opening the database on tokio's blocking pool did not finish: the runtime is shutting
    /// down.
    #[error("the bookings database was not opened: {reason}")]
    Runtime {
        /// What tokio said.
        reason: String,
    },
    /// The listening socket could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
}

/// The bookings database could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DbError {
    /// The file could not be opened (absent, for the read-only reader; or not a database).
    #[error("cannot open the bookings database {}: {source}", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// A statement failed (no `bookings` table, a lock held too long, a full disk).
    #[error("query on the bookings database {} failed: {source}", path.display())]
    Query {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// A row holds a value the app never writes: something else changed the database.
    #[error(
        "booking {id} in {} has an invalid {column}: {value:?} is {reason}",
        path.display()
    )]
    InvalidRow {
        /// The database file.
        path: PathBuf,
        /// The row's id.
        id: i64,
        /// The column holding the bad value.
        column: &'static str,
        /// The value, as text.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}
