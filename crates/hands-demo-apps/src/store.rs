//! The SQLite store: the schema, the app's own connection, and [`bookings`], the direct reader
//! a drill uses to check what was really saved.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, params};

use crate::booking::{Booking, Date, NewBooking, Nights, Room};
use crate::error::DbError;

/// The one table. Columns keep plain SQLite types (text dates, integer booleans) so any
/// `sqlite3` shell can read them.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS bookings (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    check_in TEXT NOT NULL,
    nights INTEGER NOT NULL,
    room TEXT NOT NULL,
    breakfast INTEGER NOT NULL,
    requests TEXT NOT NULL,
    created_at TEXT NOT NULL
)";

/// The columns of a [`Booking`], in the order [`booking_from_row`] reads them.
const COLUMNS: &str = "id, name, email, check_in, nights, room, breakfast, requests, created_at";

/// How long a connection waits for another one's write lock before giving up: the app's
/// writer and a drill's reader may meet.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The app's connection. Requests reach it through `spawn_blocking`, one at a time.
pub(crate) struct Store {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl Store {
    /// Opens (creating when absent) the database at `path` and its table.
    pub(crate) fn open(path: &Path) -> Result<Store, DbError> {
        let open_err = |source| DbError::Open {
            path: path.to_owned(),
            source,
        };
        let conn = Connection::open(path).map_err(open_err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        conn.execute_batch(SCHEMA)
            .map_err(|source| DbError::Query {
                path: path.to_owned(),
                source,
            })?;
        Ok(Store {
            path: path.to_owned(),
            conn: Mutex::new(conn),
        })
    }

    /// Saves `new` and returns the row as stored, id and timestamp included.
    pub(crate) fn insert(&self, new: &NewBooking) -> Result<Booking, DbError> {
        let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let sql = format!(
            "INSERT INTO bookings (name, email, check_in, nights, room, breakfast, requests, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
             RETURNING {COLUMNS}"
        );
        let row = conn
            .query_row(
                &sql,
                params![
                    new.name,
                    new.email,
                    new.check_in.to_string(),
                    new.nights.get(),
                    new.room.value(),
                    new.breakfast,
                    new.requests,
                ],
                RawBooking::from_row,
            )
            .map_err(|source| self.query_err(source))?;
        row.into_booking(&self.path)
    }

    /// The booking with row id `id`, if there is one.
    pub(crate) fn get(&self, id: i64) -> Result<Option<Booking>, DbError> {
        let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let sql = format!("SELECT {COLUMNS} FROM bookings WHERE id = ?1");
        let row = conn
            .query_row(&sql, [id], RawBooking::from_row)
            .optional()
            .map_err(|source| self.query_err(source))?;
        row.map(|row| row.into_booking(&self.path)).transpose()
    }

    /// Every booking, oldest first.
    pub(crate) fn list(&self) -> Result<Vec<Booking>, DbError> {
        let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        read_all(&conn, &self.path)
    }

    fn query_err(&self, source: rusqlite::Error) -> DbError {
        DbError::Query {
            path: self.path.clone(),
            source,
        }
    }
}

/// Reads every booking from the database at `db_path`, oldest first, through a read-only
/// connection of its own: what a drill calls to verify the outcome without trusting the app's
/// pages or the model's account. It never creates the file or the table; a row that holds a
/// value the form could not have produced is an error naming the row and column.
///
/// It blocks for as long as one small SQLite query takes (waiting up to 5 s for a writer's
/// lock); from async code, call it through `tokio::task::spawn_blocking` if that matters.
pub fn bookings(db_path: impl AsRef<Path>) -> Result<Vec<Booking>, DbError> {
    let path = db_path.as_ref();
    let open_err = |source| DbError::Open {
        path: path.to_owned(),
        source,
    };
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(open_err)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
    read_all(&conn, path)
}

fn read_all(conn: &Connection, path: &Path) -> Result<Vec<Booking>, DbError> {
    let query_err = |source| DbError::Query {
        path: path.to_owned(),
        source,
    };
    let mut stmt = conn
        .prepare(&format!("SELECT {COLUMNS} FROM bookings ORDER BY id"))
        .map_err(query_err)?;
    let rows = stmt
        .query_map([], RawBooking::from_row)
        .map_err(query_err)?
        .collect::<Result<Vec<RawBooking>, _>>()
        .map_err(query_err)?;
    rows.into_iter().map(|row| row.into_booking(path)).collect()
}

/// A row with SQLite's types, before its values are checked.
struct RawBooking {
    id: i64,
    name: String,
    email: String,
    check_in: String,
    nights: i64,
    room: String,
    breakfast: i64,
    requests: String,
    created_at: String,
}

impl RawBooking {
    fn from_row(row: &Row<'_>) -> rusqlite::Result<RawBooking> {
        Ok(RawBooking {
            id: row.get(0)?,
            name: row.get(1)?,
            email: row.get(2)?,
            check_in: row.get(3)?,
            nights: row.get(4)?,
            room: row.get(5)?,
            breakfast: row.get(6)?,
            requests: row.get(7)?,
            created_at: row.get(8)?,
        })
    }

    fn into_booking(self, path: &Path) -> Result<Booking, DbError> {
        let id = self.id;
        let invalid =
            |column: &'static str, value: String, reason: &'static str| DbError::InvalidRow {
                path: path.to_owned(),
                id,
                column,
                value,
                reason,
            };
        let check_in = Date::parse(&self.check_in)
            .map_err(|_| invalid("check_in", self.check_in.clone(), "not a YYYY-MM-DD date"))?;
        let nights = u8::try_from(self.nights)
            .ok()
            .and_then(Nights::new)
            .ok_or_else(|| invalid("nights", self.nights.to_string(), "not from 1 to 30"))?;
        let room = Room::from_value(&self.room)
            .ok_or_else(|| invalid("room", self.room.clone(), "not a room value"))?;
        let breakfast = match self.breakfast {
            0 => false,
            1 => true,
            other => return Err(invalid("breakfast", other.to_string(), "not 0 or 1")),
        };
        Ok(Booking {
            id,
            name: self.name,
            email: self.email,
            check_in,
            nights,
            room,
            breakfast,
            requests: self.requests,
            created_at: self.created_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_booking(name: &str) -> NewBooking {
        NewBooking {
            name: name.to_owned(),
            email: "guest@example.com".to_owned(),
            check_in: Date::new(2030, 6, 14).unwrap(),
            nights: Nights::new(3).unwrap(),
            room: Room::Suite,
            breakfast: true,
            requests: "Line one\nline two".to_owned(),
        }
    }

    #[test]
    fn a_saved_booking_reads_back_identically_through_both_connections() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.sqlite");
        let store = Store::open(&path).unwrap();
        let saved = store.insert(&new_booking("Zoë Ågren-Müller")).unwrap();
        assert_eq!(saved.id, 1);
        assert_eq!(saved.name, "Zoë Ågren-Müller");
        assert_eq!(saved.created_at.len(), "2030-06-14T10:00:00Z".len());
        assert_eq!(store.get(1).unwrap(), Some(saved.clone()));
        assert_eq!(store.get(2).unwrap(), None);
        assert_eq!(bookings(&path).unwrap(), vec![saved.clone()]);
        assert_eq!(store.list().unwrap(), vec![saved]);
    }

    #[test]
    fn reopening_keeps_earlier_bookings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.sqlite");
        Store::open(&path)
            .unwrap()
            .insert(&new_booking("First"))
            .unwrap();
        let second = Store::open(&path)
            .unwrap()
            .insert(&new_booking("Second"))
            .unwrap();
        assert_eq!(second.id, 2);
        let names: Vec<String> = bookings(&path)
            .unwrap()
            .into_iter()
            .map(|b| b.name)
            .collect();
        assert_eq!(names, ["First", "Second"]);
    }

    #[test]
    fn the_reader_neither_creates_a_missing_database_nor_accepts_a_bad_row() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.sqlite");
        assert!(matches!(bookings(&missing), Err(DbError::Open { .. })));
        assert!(!missing.exists());

        let empty = dir.path().join("empty.sqlite");
        Connection::open(&empty).unwrap();
        assert!(matches!(bookings(&empty), Err(DbError::Query { .. })));

        let path = dir.path().join("b.sqlite");
        Store::open(&path)
            .unwrap()
            .insert(&new_booking("A"))
            .unwrap();
        Connection::open(&path)
            .unwrap()
            .execute("UPDATE bookings SET room = 'attic'", [])
            .unwrap();
        match bookings(&path) {
            Err(DbError::InvalidRow {
                id, column, value, ..
            }) => assert_eq!((id, column, value.as_str()), (1, "room", "attic")),
            other => panic!("expected an invalid row, got {other:?}"),
        }
    }
}
