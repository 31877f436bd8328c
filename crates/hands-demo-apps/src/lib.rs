//! Small, ordinary web apps that hands' offline drills and examples drive through a real
//! browser. Today there is one: the Harbour Hotel booking app ([`BookingApp`]), a
//! server-rendered form (text, email, date, number, select, checkbox, textarea, a submit among
//! other buttons, and a staff login with a password field) whose bookings are saved in SQLite.
//!
//! A drill starts the app, lets a model fill in and submit the form through real Chromium,
//! then checks the outcome by reading the database itself with [`bookings`]: never the
//! model's account, never a page the app rendered. [`BookingApp::requests_seen`] tells whether
//! the form was really posted.
//!
//! What it is not: a test double of hands or of any API. It knows nothing of models, CDP or
//! toolsets; it is a plain web app on loopback (hyper, rusqlite), with no external resources
//! on its pages, so it works on an offline machine.
//!
//! Layout: `booking` (fields, room types, validated values, the form's rules), `store`
//! (SQLite), `pages` (HTML), `server` (routes and the app's lifetime), `config`, `error`.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use hands_demo_apps::{BookingApp, BookingAppConfig, Room, bookings};
//!
//! let app = BookingApp::start(BookingAppConfig::default()).await?;
//! // What a browser sends when someone fills in the form and presses "Book now". (reqwest is
//! // built with rustls and no crypto provider in this workspace: install ring first.)
//! let _ = rustls::crypto::ring::default_provider().install_default();
//! let response = reqwest::Client::new()
//!     .post(app.url("/bookings"))
//!     .header("content-type", "application/x-www-form-urlencoded")
//!     .body("name=Ada+Lovelace&email=ada%40example.com&check_in=2030-06-14&nights=3&room=sea-view")
//!     .send()
//!     .await?;
//! assert_eq!(response.status(), 200); // the 303 was followed to the confirmation page
//!
//! // Verify in the database itself.
//! let saved = bookings(app.db_path())?;
//! assert_eq!((saved[0].name.as_str(), saved[0].room), ("Ada Lovelace", Room::SeaView));
//! assert_eq!(app.requests_seen().bookings_saved, 1);
//! # Ok(()) }
//! ```

mod booking;
mod config;
mod error;
mod pages;
mod server;
mod store;

pub use booking::{
    Booking, BookingForm, Date, DateError, Field, FieldError, MAX_EMAIL_CHARS, MAX_NAME_CHARS,
    MAX_NIGHTS, MAX_REQUESTS_CHARS, MIN_NIGHTS, NewBooking, Nights, REFERENCE_PREFIX, Room,
};
pub use config::{
    BookingAppConfig, DB_FILE_NAME, DEFAULT_ADDR, DEFAULT_MAX_BODY_BYTES, DEFAULT_STAFF_PASSWORD,
};
pub use error::{DbError, StartError};
pub use pages::{
    CANCEL_LABEL, CONFIRMED_HEADING, FORM_HEADING, FORM_ID, FORM_PAGE_TITLE, HELP_LABEL,
    NOT_SAVED_TEXT, REFERENCE_ID, RESET_LABEL, STAFF_HEADING, STAFF_LOGIN_REFUSED,
    STAFF_PASSWORD_ID, STAFF_SUBMIT_LABEL, STAFF_USER_ID, SUBMIT_ID, SUBMIT_LABEL,
};
pub use server::{BookingApp, HEALTH_BODY, RequestsSeen};
pub use store::bookings;
