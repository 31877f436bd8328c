//! [`BookingApp`]: the HTTP/1.1 server (hyper on a tokio task), its routes, and the request
//! counts a drill reads.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tempfile::TempDir;
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};

use crate::booking::BookingForm;
use crate::config::{BookingAppConfig, DB_FILE_NAME};
use crate::error::{DbError, StartError};
use crate::pages::{self, STAFF_LOGIN_REFUSED};
use crate::store::Store;

/// The body of `GET /health`.
pub const HEALTH_BODY: &str = "ok";

/// How long the accept loop rests after a failed `accept` (out of file descriptors, say)
/// before trying again, so it does not spin.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// The Harbour Hotel booking app, serving on loopback until dropped.
///
/// Routes: `GET /` the booking form; `POST /bookings` saves a booking (303 to its page) or
/// shows the form again with errors (400); `GET /bookings/<id>` the confirmation;
/// `GET /bookings` the list; `POST /staff/login` always 403; `GET /health` 200 `ok`.
/// Anything else is 404, or 405 with `Allow` for a known path.
pub struct BookingApp {
    addr: SocketAddr,
    base_url: String,
    db_path: PathBuf,
    shared: Arc<Shared>,
    /// The accept loop. It owns every connection's task (in a `JoinSet`), so aborting it on
    /// drop closes the listener and every open connection.
    task: JoinHandle<()>,
    /// The default database's directory, removed on drop. Declared last: fields drop in
    /// order, so the app's own handle on the database goes first.
    _temp_dir: Option<TempDir>,
}

impl BookingApp {
    /// Opens (or creates) the database, binds `config.addr` and starts serving on a task of
    /// the current tokio runtime. The app is ready for requests when this returns.
    pub async fn start(config: BookingAppConfig) -> Result<BookingApp, StartError> {
        let (temp_dir, db_path) = match config.db_path {
            Some(path) => (None, path),
            None => {
                let dir = tempfile::Builder::new()
                    .prefix("hands-demo-booking-")
                    .tempdir()
                    .map_err(|source| StartError::TempDir { source })?;
                let path = dir.path().join(DB_FILE_NAME);
                (Some(dir), path)
            }
        };
        let open_path = db_path.clone();
        let store = tokio::task::spawn_blocking(move || Store::open(&open_path))
            .await
            .map_err(|join| StartError::Runtime {
                reason: join.to_string(),
            })??;
        let listener = TcpListener::bind(config.addr)
            .await
            .map_err(|source| StartError::Bind {
                addr: config.addr,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| StartError::Bind {
            addr: config.addr,
            source,
        })?;
        let shared = Arc::new(Shared {
            store,
            counters: Counters::default(),
            staff_password: config.staff_password,
            max_body_bytes: config.max_body_bytes,
        });
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        Ok(BookingApp {
            addr,
            base_url: format!("http://{addr}"),
            db_path,
            shared,
            task,
            _temp_dir: temp_dir,
        })
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The absolute URL of `path` (which starts with `/`): `app.url("/bookings")`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// The address the app listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The SQLite file the bookings are saved in; read it with [`crate::bookings`].
    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    /// How many requests of each kind the app has answered so far.
    pub fn requests_seen(&self) -> RequestsSeen {
        self.shared.counters.snapshot()
    }
}

impl Drop for BookingApp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl std::fmt::Debug for BookingApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BookingApp")
            .field("base_url", &self.base_url)
            .field("db_path", &self.db_path)
            .finish_non_exhaustive()
    }
}

/// How many requests of each kind the app has answered, from [`BookingApp::requests_seen`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestsSeen {
    /// Every request, whatever it was.
    pub total: u64,
    /// `GET /`: the booking form was loaded.
    pub form_pages: u64,
    /// `POST /bookings`, whatever came of it: saved, rejected, or refused (413, 415, 500).
    pub booking_posts: u64,
    /// Posts that saved a booking.
    pub bookings_saved: u64,
    /// Posts the form's rules rejected (answered 400 with the form and its errors).
    pub bookings_rejected: u64,
    /// `GET /bookings/<id>` of a booking that exists.
    pub confirmation_pages: u64,
    /// `GET /bookings`.
    pub list_pages: u64,
    /// `POST /staff/login`.
    pub staff_logins: u64,
    /// `GET /health`.
    pub health_checks: u64,
    /// Requests no route took (404, 405), unknown bookings included.
    pub unmatched: u64,
}

#[derive(Default)]
struct Counters {
    total: AtomicU64,
    form_pages: AtomicU64,
    booking_posts: AtomicU64,
    bookings_saved: AtomicU64,
    bookings_rejected: AtomicU64,
    confirmation_pages: AtomicU64,
    list_pages: AtomicU64,
    staff_logins: AtomicU64,
    health_checks: AtomicU64,
    unmatched: AtomicU64,
}

impl Counters {
    fn snapshot(&self) -> RequestsSeen {
        let get = |counter: &AtomicU64| counter.load(Ordering::SeqCst);
        RequestsSeen {
            total: get(&self.total),
            form_pages: get(&self.form_pages),
            booking_posts: get(&self.booking_posts),
            bookings_saved: get(&self.bookings_saved),
            bookings_rejected: get(&self.bookings_rejected),
            confirmation_pages: get(&self.confirmation_pages),
            list_pages: get(&self.list_pages),
            staff_logins: get(&self.staff_logins),
            health_checks: get(&self.health_checks),
            unmatched: get(&self.unmatched),
        }
    }
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::SeqCst);
}

/// What every request handler shares; lives as long as the app or its last connection.
struct Shared {
    store: Store,
    counters: Counters,
    staff_password: String,
    max_body_bytes: usize,
}

type Body = Full<Bytes>;

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let stream = match listener.accept().await {
            Ok((stream, _peer)) => stream,
            Err(_) => {
                tokio::time::sleep(ACCEPT_RETRY).await;
                continue;
            }
        };
        let shared = Arc::clone(&shared);
        connections.spawn(async move {
            let service = service_fn(move |request| {
                let shared = Arc::clone(&shared);
                async move { Ok::<_, Infallible>(route(shared, request).await) }
            });
            // An error here (the peer left mid-request, a malformed request line) concerns
            // this connection alone; hyper has already answered what could be answered.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The methods each known path answers, for 405's `Allow`.
fn allowed_methods(path: &str) -> Option<&'static str> {
    match path {
        "/" | "/health" => Some("GET"),
        "/bookings" => Some("GET, POST"),
        "/staff/login" => Some("POST"),
        _ if path.starts_with("/bookings/") => Some("GET"),
        _ => None,
    }
}

async fn route(shared: Arc<Shared>, request: Request<Incoming>) -> Response<Body> {
    let counters = &shared.counters;
    bump(&counters.total);
    let path = request.uri().path().to_owned();
    match (request.method(), path.as_str()) {
        (&Method::GET, "/") => {
            bump(&counters.form_pages);
            let form = BookingForm::default();
            html(
                StatusCode::OK,
                pages::form_page(&form, &[], &shared.staff_password),
            )
        }
        (&Method::POST, "/bookings") => {
            bump(&counters.booking_posts);
            post_booking(Arc::clone(&shared), request).await
        }
        (&Method::GET, "/bookings") => {
            bump(&counters.list_pages);
            match blocking(&shared, Store::list).await {
                Ok(bookings) => html(StatusCode::OK, pages::list_page(&bookings)),
                Err(reason) => server_error(&reason),
            }
        }
        (&Method::GET, "/health") => {
            bump(&counters.health_checks);
            let mut response = Response::new(Body::from(HEALTH_BODY));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            response
        }
        (&Method::POST, "/staff/login") => {
            bump(&counters.staff_logins);
            // The body (a username and password) is neither read nor kept.
            html(
                StatusCode::FORBIDDEN,
                pages::message_page(pages::STAFF_HEADING, STAFF_LOGIN_REFUSED),
            )
        }
        (&Method::GET, _) if path.starts_with("/bookings/") => {
            booking_page(&shared, &path["/bookings/".len()..]).await
        }
        _ => {
            bump(&counters.unmatched);
            match allowed_methods(&path) {
                Some(allow) => {
                    let mut response = html(
                        StatusCode::METHOD_NOT_ALLOWED,
                        pages::message_page(
                            "Method not allowed",
                            &format!("{path} answers {allow} only."),
                        ),
                    );
                    response
                        .headers_mut()
                        .insert(header::ALLOW, HeaderValue::from_static(allow));
                    response
                }
                None => not_found(&format!("There is no page at {path}.")),
            }
        }
    }
}

async fn post_booking(shared: Arc<Shared>, request: Request<Incoming>) -> Response<Body> {
    if !is_form_urlencoded(request.headers()) {
        return html(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            pages::message_page(
                "Unsupported form encoding",
                "Send the booking form as application/x-www-form-urlencoded, as the page's form does.",
            ),
        );
    }
    let limit = shared.max_body_bytes;
    let body = match Limited::new(request.into_body(), limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => {
            return html(
                StatusCode::PAYLOAD_TOO_LARGE,
                pages::message_page(
                    "Form too large",
                    &format!("The form sent is over {limit} bytes; shorten the special requests."),
                ),
            );
        }
        Err(error) => {
            return html(
                StatusCode::BAD_REQUEST,
                pages::message_page(
                    "Form not received",
                    &format!("The form could not be read: {error}."),
                ),
            );
        }
    };
    let form = BookingForm::from_urlencoded(&body);
    let new = match form.validate() {
        Ok(new) => new,
        Err(errors) => {
            bump(&shared.counters.bookings_rejected);
            return html(
                StatusCode::BAD_REQUEST,
                pages::form_page(&form, &errors, &shared.staff_password),
            );
        }
    };
    let booking = match blocking(&shared, move |store| store.insert(&new)).await {
        Ok(booking) => booking,
        Err(reason) => return server_error(&reason),
    };
    bump(&shared.counters.bookings_saved);
    let location = format!("/bookings/{}", booking.id);
    let mut response = html(
        StatusCode::SEE_OTHER,
        pages::message_page(
            pages::CONFIRMED_HEADING,
            &format!("Booking {} saved: see {location}.", booking.reference()),
        ),
    );
    match HeaderValue::try_from(location) {
        Ok(value) => {
            response.headers_mut().insert(header::LOCATION, value);
            response
        }
        Err(error) => server_error(&format!("cannot redirect to the booking: {error}")),
    }
}

async fn booking_page(shared: &Arc<Shared>, id_text: &str) -> Response<Body> {
    let id = id_text
        .parse::<i64>()
        .ok()
        .filter(|id| *id > 0 && id_text.bytes().all(|b| b.is_ascii_digit()));
    let Some(id) = id else {
        bump(&shared.counters.unmatched);
        return not_found("A booking's page is /bookings/ and its number, like /bookings/1.");
    };
    match blocking(shared, move |store| store.get(id)).await {
        Ok(Some(booking)) => {
            bump(&shared.counters.confirmation_pages);
            html(StatusCode::OK, pages::confirmation_page(&booking))
        }
        Ok(None) => {
            bump(&shared.counters.unmatched);
            not_found(&format!("There is no booking number {id}."))
        }
        Err(reason) => server_error(&reason),
    }
}

/// Runs `job` on the store in tokio's blocking pool, so SQLite never stalls the runtime.
async fn blocking<T, F>(shared: &Arc<Shared>, job: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce(&Store) -> Result<T, DbError> + Send + 'static,
{
    let shared = Arc::clone(shared);
    match tokio::task::spawn_blocking(move || job(&shared.store)).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(error.to_string()),
        Err(join) => Err(format!("the database task did not finish: {join}")),
    }
}

/// Whether the request says its body is `application/x-www-form-urlencoded` (parameters such
/// as `charset` allowed).
fn is_form_urlencoded(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|mime| {
            mime.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
}

fn html(status: StatusCode, page: String) -> Response<Body> {
    let mut response = Response::new(Body::from(page));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    // Every answer is fresh: a drill reloading a page sees the database as it is now.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

fn not_found(message: &str) -> Response<Body> {
    html(
        StatusCode::NOT_FOUND,
        pages::message_page("Page not found", message),
    )
}

fn server_error(reason: &str) -> Response<Body> {
    html(
        StatusCode::INTERNAL_SERVER_ERROR,
        pages::message_page(
            "Something went wrong",
            &format!("The booking app could not finish this request: {reason}"),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_url_encoded_forms_are_taken() {
        let cases = [
            (Some("application/x-www-form-urlencoded"), true),
            (
                Some("application/x-www-form-urlencoded; charset=UTF-8"),
                true,
            ),
            (Some("Application/X-WWW-Form-Urlencoded"), true),
            (Some("multipart/form-data; boundary=x"), false),
            (Some("application/json"), false),
            (None, false),
        ];
        for (content_type, expected) in cases {
            let mut headers = HeaderMap::new();
            if let Some(value) = content_type {
                headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(value));
            }
            assert_eq!(is_form_urlencoded(&headers), expected, "{content_type:?}");
        }
    }

    #[test]
    fn allow_names_the_methods_of_known_paths_only() {
        let cases = [
            ("/", Some("GET")),
            ("/bookings", Some("GET, POST")),
            ("/bookings/3", Some("GET")),
            ("/staff/login", Some("POST")),
            ("/health", Some("GET")),
            ("/admin", None),
        ];
        for (path, expected) in cases {
            assert_eq!(allowed_methods(path), expected, "{path}");
        }
    }
}
