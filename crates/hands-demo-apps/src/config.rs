//! [`BookingAppConfig`]: where the app listens, where it keeps its bookings, its limits.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::PathBuf;

/// Where the app listens unless told otherwise: loopback, a port the OS picks.
pub const DEFAULT_ADDR: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0));
/// The largest request body accepted by default; a booking form is well under 4 KiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024;
/// The value pre-filled in the staff login's password field by default: a known secret a drill
/// can look for in everything a model is shown, which must never contain it.
pub const DEFAULT_STAFF_PASSWORD: &str = "harbour-staff-7f3k9";
/// The file name of the default database, inside the app's own temporary directory.
pub const DB_FILE_NAME: &str = "bookings.sqlite";

/// How to start a [`BookingApp`](crate::BookingApp). Start from `BookingAppConfig::default()`
/// and change the fields you need.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BookingAppConfig {
    /// The SQLite file holding the bookings: created with its table when absent, earlier
    /// bookings kept when present, never removed by the app. `None` (the default): a fresh
    /// database in a temporary directory that the app owns and removes when dropped.
    pub db_path: Option<PathBuf>,
    /// Where to listen: [`DEFAULT_ADDR`], loopback on a free port. The app has no
    /// authentication, so think twice before binding anything but loopback.
    pub addr: SocketAddr,
    /// Request bodies larger than this are refused with 413: [`DEFAULT_MAX_BODY_BYTES`].
    pub max_body_bytes: usize,
    /// The value pre-filled in the staff password field, [`DEFAULT_STAFF_PASSWORD`]; empty
    /// leaves the field empty.
    pub staff_password: String,
}

impl Default for BookingAppConfig {
    fn default() -> Self {
        BookingAppConfig {
            db_path: None,
            addr: DEFAULT_ADDR,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            staff_password: DEFAULT_STAFF_PASSWORD.to_owned(),
        }
    }
}

impl BookingAppConfig {
    /// This config with the bookings kept in `path` (see [`BookingAppConfig::db_path`]).
    pub fn with_db_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.db_path = Some(path.into());
        self
    }
}
