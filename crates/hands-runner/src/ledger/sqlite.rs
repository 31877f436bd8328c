//! The default ledger: one embedded SQLite database per run, in WAL mode with synchronous
//! commits, every checkpoint kept, blobs stored once by SHA-256 ([`super::blobs`]).
//!
//! One owner per run: the writer holds an exclusive `flock` on `<db>.lock` (which names its
//! process id) for as long as it lives; the kernel drops the lock when the process dies, kill -9
//! included, so a resume never waits on a dead owner. A second writer is refused at once with
//! [`LedgerError::Owned`] naming the owner's pid. Inside the database each save is an
//! `IMMEDIATE` transaction that checks the owner token written at open, and revisions must
//! follow each other, so even a writer that bypassed the lock file could not interleave.
//! Readers ([`SqliteLedger::report`]) take no lock: WAL lets them read while the owner writes.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags, OptionalExtension as _, TransactionBehavior, params};
use serde_json::Value;

use super::blobs::{self, Encoder, Hash};
use super::memory::check_next;
use super::{Checkpoint, CheckpointStatus, Ledger, LedgerError, PendingTurn, RunEnd, RunIdentity};

/// The database schema version this code reads and writes (`PRAGMA user_version`).
const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE run (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    run_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    identity TEXT,
    tools_fingerprint TEXT,
    owner TEXT NOT NULL,
    end_state TEXT
);
CREATE TABLE blobs (hash BLOB PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE checkpoints (
    revision INTEGER PRIMARY KEY,
    saved_at INTEGER NOT NULL,
    completed INTEGER NOT NULL,
    steps_used INTEGER NOT NULL,
    conversation TEXT NOT NULL,
    turn TEXT
);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
";

/// What saves have written, cumulatively: the payload handed to SQLite (new blobs and
/// checkpoint rows), before SQLite's own page and WAL framing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SaveStats {
    /// Checkpoints saved.
    pub saves: u64,
    /// Blobs that were new (a blob already stored writes nothing).
    pub blobs_written: u64,
    /// Their bytes.
    pub blob_bytes: u64,
    /// Bytes of the checkpoint rows (documents and pending turns).
    pub row_bytes: u64,
}

impl SaveStats {
    /// All bytes written.
    pub fn bytes(&self) -> u64 {
        self.blob_bytes + self.row_bytes
    }
}

/// An exclusive `flock` on a run's lock file, which names the owner's process id. Released
/// when dropped, or by the kernel when the process dies.
#[derive(Debug)]
pub struct LedgerLock {
    _file: File,
}

impl LedgerLock {
    /// The lock file of the database at `db`.
    pub fn path_for(db: &Path) -> PathBuf {
        let mut name = db.as_os_str().to_owned();
        name.push(".lock");
        PathBuf::from(name)
    }

    /// Takes the lock of `db`, or says who holds it.
    pub fn acquire(db: &Path) -> Result<LedgerLock, LedgerError> {
        let path = LedgerLock::path_for(db);
        let io = |source| LedgerError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => {
                return Err(LedgerError::Owned {
                    path: db.display().to_string(),
                    pid: LedgerLock::holder(db).or_else(|| {
                        std::fs::read_to_string(&path)
                            .ok()
                            .and_then(|t| t.trim().parse().ok())
                    }),
                });
            }
            Err(e) => return Err(io(e.into())),
        }
        file.set_len(0).map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(LedgerLock { _file: file })
    }

    /// The process holding the lock of `db`, read from the kernel's lock table
    /// (`/proc/locks`), without touching the lock.
    pub fn holder(db: &Path) -> Option<u32> {
        let inode = std::fs::metadata(LedgerLock::path_for(db)).ok()?.ino();
        let table = std::fs::read_to_string("/proc/locks").ok()?;
        table.lines().find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // `1: FLOCK  ADVISORY  WRITE 2195 fd:00:1319456 0 EOF`; waiters have `->` second.
            if fields.get(1) != Some(&"FLOCK") {
                return None;
            }
            let file_inode: u64 = fields.get(5)?.rsplit(':').next()?.parse().ok()?;
            (file_inode == inode).then(|| fields.get(4)?.parse().ok())?
        })
    }
}

/// Runs `hook(revision)` inside each save's transaction, just before it commits; an `Err`
/// abandons the save.
type BeforeCommit = Box<dyn FnMut(u64) -> Result<(), String> + Send>;

/// A run's checkpoints in SQLite. See the module documentation.
pub struct SqliteLedger {
    path: PathBuf,
    conn: Connection,
    run_id: String,
    owner: String,
    _lock: LedgerLock,
    encoder: Encoder,
    identity: Option<RunIdentity>,
    last_revision: u64,
    stats: SaveStats,
    before_commit: Option<BeforeCommit>,
}

impl std::fmt::Debug for SqliteLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteLedger")
            .field("path", &self.path)
            .field("run_id", &self.run_id)
            .field("last_revision", &self.last_revision)
            .finish_non_exhaustive()
    }
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn owner_token() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

impl SqliteLedger {
    fn sqlite_err(path: &Path) -> impl Fn(rusqlite::Error) -> LedgerError + '_ {
        move |source| LedgerError::Sqlite {
            path: path.display().to_string(),
            source,
        }
    }

    fn invalid(path: &Path, why: impl Into<String>) -> LedgerError {
        LedgerError::Invalid {
            path: path.display().to_string(),
            why: why.into(),
        }
    }

    fn connect(path: &Path) -> Result<Connection, LedgerError> {
        let err = SqliteLedger::sqlite_err(path);
        let conn = Connection::open(path).map_err(&err)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(&err)?;
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(&err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(SqliteLedger::invalid(
                path,
                format!("the database refused WAL mode ({mode})"),
            ));
        }
        // FULL: each commit is synced before it returns, so a saved checkpoint survives a
        // power cut as well as a kill.
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(&err)?;
        Ok(conn)
    }

    /// Creates the ledger of a new run at `path` (which must not exist yet) and owns it.
    pub fn create(path: &Path, run_id: &str) -> Result<SqliteLedger, LedgerError> {
        if path.exists() {
            return Err(SqliteLedger::invalid(
                path,
                "a ledger already exists here: resume that run, or start the new one elsewhere",
            ));
        }
        let lock = LedgerLock::acquire(path)?;
        let conn = SqliteLedger::connect(path)?;
        let err = SqliteLedger::sqlite_err(path);
        let owner = owner_token();
        conn.execute_batch(SCHEMA).map_err(&err)?;
        conn.pragma_update(None, "user_version", SCHEMA_VERSION)
            .map_err(&err)?;
        conn.execute(
            "INSERT INTO run (id, run_id, created_at, owner) VALUES (1, ?1, ?2, ?3)",
            params![run_id, now_secs(), owner],
        )
        .map_err(&err)?;
        Ok(SqliteLedger {
            path: path.to_owned(),
            conn,
            run_id: run_id.to_owned(),
            owner,
            _lock: lock,
            encoder: Encoder::default(),
            identity: None,
            last_revision: 0,
            stats: SaveStats::default(),
            before_commit: None,
        })
    }

    /// Opens the ledger of an existing run at `path` and owns it (to resume or reconcile).
    pub fn open(path: &Path) -> Result<SqliteLedger, LedgerError> {
        if !path.exists() {
            return Err(SqliteLedger::invalid(path, "no ledger here"));
        }
        let lock = LedgerLock::acquire(path)?;
        let conn = SqliteLedger::connect(path)?;
        let err = SqliteLedger::sqlite_err(path);
        check_version(&conn, path)?;
        let owner = owner_token();
        conn.execute("UPDATE run SET owner = ?1", params![owner])
            .map_err(&err)?;
        let (run_id, identity) = read_run(&conn, path)?;
        let last_revision: i64 = conn
            .query_row(
                "SELECT COALESCE(MAX(revision), 0) FROM checkpoints",
                [],
                |r| r.get(0),
            )
            .map_err(&err)?;
        let last_revision = last_revision.max(0) as u64;
        Ok(SqliteLedger {
            path: path.to_owned(),
            conn,
            run_id,
            owner,
            _lock: lock,
            encoder: Encoder::default(),
            identity,
            last_revision,
            stats: SaveStats::default(),
            before_commit: None,
        })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What this ledger's saves have written so far.
    pub fn stats(&self) -> SaveStats {
        self.stats
    }

    /// Calls `hook(revision)` inside every save's transaction, just before it commits; an
    /// `Err` abandons the save (nothing of it is kept). For crash tests that must stop a process
    /// in the middle of a save.
    pub fn set_before_commit(
        &mut self,
        hook: impl FnMut(u64) -> Result<(), String> + Send + 'static,
    ) {
        self.before_commit = Some(Box::new(hook));
    }

    /// Stores an application value beside the run (the command line that started it, say).
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<(), LedgerError> {
        self.conn
            .execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![key, value],
            )
            .map_err(SqliteLedger::sqlite_err(&self.path))?;
        Ok(())
    }

    /// An application value stored with [`SqliteLedger::set_meta`].
    pub fn meta(&self, key: &str) -> Result<Option<String>, LedgerError> {
        read_meta(&self.conn, &self.path, key)
    }

    /// What a run's ledger says, read without owning it (the owner may be writing).
    pub fn report(path: &Path) -> Result<RunReport, LedgerError> {
        if !path.exists() {
            return Err(SqliteLedger::invalid(path, "no ledger here"));
        }
        let err = SqliteLedger::sqlite_err(path);
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(&err)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(&err)?;
        check_version(&conn, path)?;
        let (run_id, identity) = read_run(&conn, path)?;
        let created_at: i64 = conn
            .query_row("SELECT created_at FROM run", [], |r| r.get(0))
            .map_err(&err)?;
        let end = read_end(&conn, path)?;
        let n_checkpoints: i64 = conn
            .query_row("SELECT COUNT(*) FROM checkpoints", [], |r| r.get(0))
            .map_err(&err)?;
        let latest: Option<(i64, i64, bool, u32, Option<String>)> = conn
            .query_row(
                "SELECT revision, saved_at, completed, steps_used, turn FROM checkpoints
                 ORDER BY revision DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()
            .map_err(&err)?;
        let mut report = RunReport {
            path: path.to_owned(),
            run_id,
            identity,
            created_at: created_at.max(0) as u64,
            checkpoints: n_checkpoints.max(0) as u64,
            latest_revision: 0,
            saved_at: None,
            steps_used: 0,
            pending: None,
            end,
            owner: LedgerLock::holder(path),
            meta: BTreeMap::new(),
        };
        if let Some((revision, saved_at, completed, steps_used, turn)) = latest {
            report.latest_revision = revision.max(0) as u64;
            report.saved_at = Some(saved_at.max(0) as u64);
            report.steps_used = steps_used;
            if !completed {
                report.pending = Some(decode_turn(&conn, path, turn.as_deref())?);
            }
        }
        let mut statement = conn.prepare("SELECT key, value FROM meta").map_err(&err)?;
        let rows = statement
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(&err)?;
        for row in rows {
            let (key, value) = row.map_err(&err)?;
            report.meta.insert(key, value);
        }
        Ok(report)
    }

    fn load(&self, revision: u64) -> Result<Checkpoint, LedgerError> {
        load_checkpoint(&self.conn, &self.path, revision, self.identity.as_ref())
    }

    fn latest_where(&self, completed_only: bool) -> Result<Option<Checkpoint>, LedgerError> {
        let sql = if completed_only {
            "SELECT MAX(revision) FROM checkpoints WHERE completed = 1"
        } else {
            "SELECT MAX(revision) FROM checkpoints"
        };
        let revision: Option<i64> = self
            .conn
            .query_row(sql, [], |r| r.get(0))
            .map_err(SqliteLedger::sqlite_err(&self.path))?;
        revision.map(|r| self.load(r.max(0) as u64)).transpose()
    }
}

/// Refuses a database of another schema version.
fn check_version(conn: &Connection, path: &Path) -> Result<(), LedgerError> {
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(SqliteLedger::sqlite_err(path))?;
    if version != SCHEMA_VERSION {
        return Err(SqliteLedger::invalid(
            path,
            format!(
                "ledger format {version}, but this hands reads format {SCHEMA_VERSION}: resume it with the hands that wrote it"
            ),
        ));
    }
    Ok(())
}

fn read_run(conn: &Connection, path: &Path) -> Result<(String, Option<RunIdentity>), LedgerError> {
    let (run_id, identity): (String, Option<String>) = conn
        .query_row("SELECT run_id, identity FROM run", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .map_err(SqliteLedger::sqlite_err(path))?;
    let identity = identity
        .map(|text| serde_json::from_str::<RunIdentity>(&text))
        .transpose()
        .map_err(|e| SqliteLedger::invalid(path, format!("the run identity: {e}")))?;
    Ok((run_id, identity))
}

fn read_end(conn: &Connection, path: &Path) -> Result<Option<RunEnd>, LedgerError> {
    let end: Option<String> = conn
        .query_row("SELECT end_state FROM run", [], |r| r.get(0))
        .map_err(SqliteLedger::sqlite_err(path))?;
    end.map(|text| serde_json::from_str::<RunEnd>(&text))
        .transpose()
        .map_err(|e| SqliteLedger::invalid(path, format!("how the run ended: {e}")))
}

fn read_meta(conn: &Connection, path: &Path, key: &str) -> Result<Option<String>, LedgerError> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()
        .map_err(SqliteLedger::sqlite_err(path))
}

fn get_blob(conn: &Connection, path: &Path, hash: &Hash) -> Result<Vec<u8>, LedgerError> {
    conn.prepare("SELECT data FROM blobs WHERE hash = ?1")
        .and_then(|mut s| s.query_row([&hash[..]], |r| r.get(0)).optional())
        .map_err(SqliteLedger::sqlite_err(path))?
        .ok_or_else(|| SqliteLedger::invalid(path, "a checkpoint refers to a missing blob"))
}

fn decode_turn(
    conn: &Connection,
    path: &Path,
    turn: Option<&str>,
) -> Result<PendingTurn, LedgerError> {
    let turn =
        turn.ok_or_else(|| SqliteLedger::invalid(path, "a pending checkpoint has no turn"))?;
    let value: Value = serde_json::from_str(turn)
        .map_err(|e| SqliteLedger::invalid(path, format!("a pending turn: {e}")))?;
    let value = blobs::restore(value, &mut |h| get_blob(conn, path, h))?;
    serde_json::from_value(value)
        .map_err(|e| SqliteLedger::invalid(path, format!("a pending turn: {e}")))
}

fn load_checkpoint(
    conn: &Connection,
    path: &Path,
    revision: u64,
    identity: Option<&RunIdentity>,
) -> Result<Checkpoint, LedgerError> {
    let err = SqliteLedger::sqlite_err(path);
    let identity = identity
        .cloned()
        .ok_or_else(|| SqliteLedger::invalid(path, "checkpoints without a run identity"))?;
    let row = |revision: u64| {
        conn.query_row(
            "SELECT completed, steps_used, conversation, turn FROM checkpoints WHERE revision = ?1",
            [revision as i64],
            |r| {
                Ok((
                    r.get::<_, bool>(0)?,
                    r.get::<_, u32>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                ))
            },
        )
        .map_err(&err)
    };
    let (completed, steps_used, doc, turn) = row(revision)?;
    let parse = |text: &str| -> Result<Value, LedgerError> {
        serde_json::from_str(text).map_err(|e| SqliteLedger::invalid(path, e.to_string()))
    };
    let mut chain = vec![parse(&doc)?];
    while let Some(base) = chain.last().and_then(blobs::base_of) {
        if base >= revision || chain.len() as u64 > revision {
            return Err(SqliteLedger::invalid(path, "a checkpoint chain loops"));
        }
        chain.push(parse(&row(base)?.2)?);
    }
    chain.reverse();
    let conversation = blobs::decode(&chain, &mut |h| get_blob(conn, path, h))?;
    let status = if completed {
        CheckpointStatus::Completed
    } else {
        CheckpointStatus::Pending(decode_turn(conn, path, turn.as_deref())?)
    };
    Ok(Checkpoint {
        identity,
        revision,
        steps_used,
        status,
        conversation,
    })
}

impl Ledger for SqliteLedger {
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
            return Err(SqliteLedger::invalid(
                &self.path,
                "checkpoints without a run identity",
            ));
        }
        let path = self.path.clone();
        let err = SqliteLedger::sqlite_err(&path);
        let result = (|| {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(&err)?;
            let owner: String = tx
                .query_row("SELECT owner FROM run", [], |r| r.get(0))
                .map_err(&err)?;
            if owner != self.owner {
                return Err(LedgerError::Refused(
                    "another process has taken this run over since this one opened it".into(),
                ));
            }
            if self.identity.is_none() {
                let identity = serde_json::to_string(&checkpoint.identity)
                    .map_err(|e| SqliteLedger::invalid(&path, e.to_string()))?;
                tx.execute(
                    "UPDATE run SET identity = ?1, tools_fingerprint = ?2",
                    params![identity, checkpoint.identity.tools_fingerprint()],
                )
                .map_err(&err)?;
            }
            let mut stats = SaveStats {
                saves: 1,
                ..SaveStats::default()
            };
            let (encoded, turn) = {
                let mut insert = tx
                    .prepare("INSERT OR IGNORE INTO blobs (hash, data) VALUES (?1, ?2)")
                    .map_err(&err)?;
                let mut put = |hash: &Hash, bytes: &[u8]| -> Result<(), LedgerError> {
                    if insert.execute(params![&hash[..], bytes]).map_err(&err)? == 1 {
                        stats.blobs_written += 1;
                        stats.blob_bytes += bytes.len() as u64;
                    }
                    Ok(())
                };
                let encoded = self.encoder.encode(&checkpoint.conversation, &mut put)?;
                let turn = match &checkpoint.status {
                    CheckpointStatus::Completed => None,
                    CheckpointStatus::Pending(turn) => {
                        let value = serde_json::to_value(turn)
                            .map_err(|e| SqliteLedger::invalid(&path, e.to_string()))?;
                        Some(blobs::extract(&value, &mut put)?.to_string())
                    }
                };
                (encoded, turn)
            };
            let doc = encoded.doc.to_string();
            stats.row_bytes = (doc.len() + turn.as_ref().map_or(0, String::len)) as u64;
            tx.execute(
                "INSERT INTO checkpoints (revision, saved_at, completed, steps_used, conversation, turn)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    checkpoint.revision as i64,
                    now_secs(),
                    checkpoint.status == CheckpointStatus::Completed,
                    checkpoint.steps_used,
                    doc,
                    turn
                ],
            )
            .map_err(&err)?;
            tx.execute("UPDATE run SET end_state = NULL", [])
                .map_err(&err)?;
            if let Some(hook) = self.before_commit.as_mut() {
                hook(checkpoint.revision).map_err(|why| {
                    LedgerError::Refused(format!(
                        "the save was abandoned before it committed: {why}"
                    ))
                })?;
            }
            tx.commit().map_err(&err)?;
            Ok((encoded.arrays, stats))
        })();
        match result {
            Ok((arrays, stats)) => {
                self.encoder.committed(checkpoint.revision, arrays);
                self.last_revision = checkpoint.revision;
                if self.identity.is_none() {
                    self.identity = Some(checkpoint.identity.clone());
                }
                self.stats.saves += stats.saves;
                self.stats.blobs_written += stats.blobs_written;
                self.stats.blob_bytes += stats.blob_bytes;
                self.stats.row_bytes += stats.row_bytes;
                Ok(())
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
        let text = serde_json::to_string(end)
            .map_err(|e| SqliteLedger::invalid(&self.path, e.to_string()))?;
        self.conn
            .execute("UPDATE run SET end_state = ?1", [text])
            .map_err(SqliteLedger::sqlite_err(&self.path))?;
        Ok(())
    }

    fn end(&mut self) -> Result<Option<RunEnd>, LedgerError> {
        read_end(&self.conn, &self.path)
    }
}

/// What a run's ledger says, for listings and reconciliation (read without owning the run).
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    /// The database.
    pub path: PathBuf,
    /// The run's id.
    pub run_id: String,
    /// Its identity, once a checkpoint was saved.
    pub identity: Option<RunIdentity>,
    /// When it was created (Unix seconds).
    pub created_at: u64,
    /// Checkpoints saved.
    pub checkpoints: u64,
    /// The latest revision (0 when none).
    pub latest_revision: u64,
    /// When it was saved (Unix seconds).
    pub saved_at: Option<u64>,
    /// Requests used at the latest checkpoint.
    pub steps_used: u32,
    /// The latest checkpoint's turn, when it is pending.
    pub pending: Option<PendingTurn>,
    /// How the run ended, if its process recorded it.
    pub end: Option<RunEnd>,
    /// The process that owns the run now, if one does.
    pub owner: Option<u32>,
    /// Application values ([`SqliteLedger::set_meta`]).
    pub meta: BTreeMap<String, String>,
}

impl RunReport {
    /// The run's state in a few words: running, finished, resumable, or waiting for a person
    /// to reconcile uncertain calls.
    pub fn status(&self) -> String {
        if let Some(pid) = self.owner {
            return format!("running (process {pid})");
        }
        if self.checkpoints == 0 {
            return "empty (nothing saved)".to_owned();
        }
        if let Some(turn) = &self.pending {
            let n_uncertain = turn.uncertain().count();
            if n_uncertain > 0 {
                return format!(
                    "needs reconciliation: {n_uncertain} call(s) may or may not have taken effect"
                );
            }
            return match &self.end {
                Some(RunEnd::Stopped(why)) => format!("stopped mid-turn, resumable: {why}"),
                _ => "interrupted mid-turn, resumable".to_owned(),
            };
        }
        match &self.end {
            Some(RunEnd::Finished) => "finished".to_owned(),
            Some(RunEnd::StepLimit) => "reached its step limit".to_owned(),
            Some(RunEnd::Stopped(why)) => format!("stopped, resumable: {why}"),
            None => "interrupted between turns, resumable".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ledger::{CallRecord, CallState};

    fn checkpoint(revision: u64, conversation: Value, status: CheckpointStatus) -> Checkpoint {
        Checkpoint {
            identity: RunIdentity::new("run-a", "messages", "m", 20, &[json!({"name": "bash"})]),
            revision,
            steps_used: revision as u32,
            status,
            conversation,
        }
    }

    #[test]
    fn every_checkpoint_is_kept_and_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let mut ledger = SqliteLedger::create(&path, "run-a").unwrap();
        let image = "iVBOR".repeat(4000);
        let first = json!({"messages": [{"role": "user", "content": "go"}], "unanswered": false});
        ledger
            .save(&checkpoint(1, first.clone(), CheckpointStatus::Completed))
            .unwrap();
        let turn = PendingTurn {
            response_complete: true,
            calls: vec![CallRecord {
                call_id: "toolu_1".into(),
                name: "screenshot".into(),
                input: json!({}),
                state: CallState::Answered {
                    answer: json!({"type": "tool_result", "content": [{"type": "image",
                        "source": {"data": image}}]}),
                },
            }],
        };
        let second = json!({"messages": [{"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1"}]}], "unanswered": true});
        ledger
            .save(&checkpoint(
                2,
                second.clone(),
                CheckpointStatus::Pending(turn.clone()),
            ))
            .unwrap();
        assert_eq!(ledger.latest().unwrap().unwrap().conversation, second);
        assert_eq!(
            ledger.latest().unwrap().unwrap().status,
            CheckpointStatus::Pending(turn.clone())
        );
        assert_eq!(
            ledger.latest_completed().unwrap().unwrap().conversation,
            first
        );
        // Out of order, or another run: refused.
        assert!(matches!(
            ledger.save(&checkpoint(2, first.clone(), CheckpointStatus::Completed)),
            Err(LedgerError::Refused(_))
        ));
        let report = SqliteLedger::report(&path).unwrap();
        assert_eq!(report.owner, Some(std::process::id()));
        assert_eq!(report.checkpoints, 2);
        assert_eq!(report.pending, Some(turn.clone()));
        drop(ledger);
        // A new owner reads every revision back, and goes on from the last.
        let mut reopened = SqliteLedger::open(&path).unwrap();
        assert_eq!(reopened.latest_revision().unwrap(), 2);
        assert_eq!(reopened.latest().unwrap().unwrap().conversation, second);
        reopened
            .save(&checkpoint(3, second.clone(), CheckpointStatus::Completed))
            .unwrap();
        assert_eq!(reopened.load(2).unwrap().conversation, second);
        assert_eq!(reopened.load(1).unwrap().conversation, first);
        // The image is stored once, however many checkpoints name it.
        let n_blobs: i64 = reopened
            .conn
            .query_row(
                "SELECT COUNT(*) FROM blobs WHERE length(data) >= 20000",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n_blobs, 1);
    }

    #[test]
    fn a_second_owner_is_refused_with_the_owners_pid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let _owner = SqliteLedger::create(&path, "run-a").unwrap();
        let refused = SqliteLedger::open(&path).unwrap_err();
        match &refused {
            LedgerError::Owned { pid, .. } => assert_eq!(*pid, Some(std::process::id())),
            other => panic!("{other:?}"),
        }
        assert!(
            refused
                .to_string()
                .contains(&format!("owned by process {}", std::process::id())),
            "{refused}"
        );
        assert!(matches!(
            SqliteLedger::create(&path, "run-b"),
            Err(LedgerError::Invalid { .. })
        ));
    }

    #[test]
    fn a_save_interrupted_before_commit_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        let mut ledger = SqliteLedger::create(&path, "run-a").unwrap();
        ledger
            .save(&checkpoint(
                1,
                json!({"m": [1]}),
                CheckpointStatus::Completed,
            ))
            .unwrap();
        // A failing hook stands for a process that stops inside the transaction.
        ledger.set_before_commit(|revision| {
            if revision == 2 {
                Err("stopped mid-save".into())
            } else {
                Ok(())
            }
        });
        let saved = ledger.save(&checkpoint(
            2,
            json!({"m": [1, "x".repeat(5000)]}),
            CheckpointStatus::Completed,
        ));
        assert!(matches!(saved, Err(LedgerError::Refused(_))), "{saved:?}");
        drop(ledger);
        let report = SqliteLedger::report(&path).unwrap();
        assert_eq!(report.latest_revision, 1);
        let mut reopened = SqliteLedger::open(&path).unwrap();
        assert_eq!(
            reopened.latest().unwrap().unwrap().conversation,
            json!({"m": [1]})
        );
    }
}
