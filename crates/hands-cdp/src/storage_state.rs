//! Saved sign-ins (issue 22): reads a browser's cookies and localStorage for the run's allowed
//! origins into a [`StorageState`], and puts one back, with nothing of other origins crossing
//! either way. The file format and its encryption are in [`crate::state_file`]; the values
//! never reach the model (no tool reads them: they go from the browser to the file and back).
//!
//! How:
//! - cookies: browser-wide `Storage.getCookies` / `Storage.setCookies`, kept when their domain
//!   is an allowed origin's host or a parent domain of one;
//! - localStorage, saved: evaluated in each open tab whose page is at an allowed origin (the
//!   items of saved origins with no open tab are carried over from the state loaded at start);
//! - localStorage, loaded: a script evaluated before any of the page's own on each new document
//!   of the tab (`Page.addScriptToEvaluateOnNewDocument`), filling the saved items of an allowed
//!   origin once per tab and origin (a `sessionStorage` marker, [`SEEDED_MARKER`]), so a page
//!   that removes an item later (sign-out) is not signed back in on its next load;
//! - IndexedDB, saved: every database and object store of each open tab's allowed origin, read
//!   by `idb.js` in an isolated world of its own ([`STATE_WORLD`]) with keys, values (tagged so
//!   structured-clone types come back as they were), key paths, key generators and indexes;
//! - IndexedDB, loaded: the same script, evaluated in that world before the page's own on each
//!   new document of the tab, creates each saved database that does not exist yet and fills it
//!   in its first upgrade transaction; IndexedDB queues later opens of the same database behind
//!   it, so the page reads the records even from its first inline script.

use std::sync::Arc;

use hands_core::browser::{DriverError, TabId};
use serde_json::{Value, json};
use url::Url;

use crate::CdpBrowser;
use crate::connection::SessionId;
use crate::events::Shared;
use crate::state_file::{SavedCookie, SavedIdbOrigin, SavedOrigin, StorageState};

/// The `sessionStorage` key that marks an origin's localStorage as filled in this tab.
pub const SEEDED_MARKER: &str = "__hands_state_seeded";
/// The `sessionStorage` key that marks an origin's IndexedDB as filled in this tab.
pub const IDB_SEEDED_MARKER: &str = "__hands_state_idb_seeded";
/// The isolated world IndexedDB is read and written in.
pub const STATE_WORLD: &str = "__hands_state";
/// The page-side IndexedDB copy: an object with `save()` and `seed(saved, marker)`.
const IDB_JS: &str = include_str!("idb.js");
/// The most of one origin's IndexedDB a state keeps (its tagged JSON): a larger copy is left
/// out (said in the log, by size only), so a page cannot make every save hold gigabytes.
pub const MAX_IDB_BYTES_PER_ORIGIN: usize = 32 << 20;
/// How long reading one tab's IndexedDB may take.
const IDB_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The origins a state may hold: the run's allow-list, as tuple origins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StateOrigins {
    origins: Vec<url::Origin>,
}

impl StateOrigins {
    /// From URLs (`http://127.0.0.1:8000/`): their origins. An opaque origin (`data:`,
    /// `file:`) cannot hold a sign-in and is refused.
    pub fn new<'a>(urls: impl IntoIterator<Item = &'a Url>) -> Result<Self, String> {
        let mut origins = Vec::new();
        for url in urls {
            let origin = url.origin();
            if !origin.is_tuple() {
                return Err(format!(
                    "{url} has no origin a sign-in can be kept for: give http(s) origins"
                ));
            }
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        Ok(Self { origins })
    }

    /// Whether a serialized origin (`http://127.0.0.1:8000`) is allowed.
    pub fn allows_origin(&self, origin: &str) -> bool {
        Url::parse(origin).is_ok_and(|u| self.origins.contains(&u.origin()))
    }

    /// Whether a cookie belongs to an allowed origin: its domain (without the leading dot of a
    /// domain cookie) is an allowed origin's host, or a parent domain of one for a domain cookie.
    pub fn allows_cookie(&self, cookie: &SavedCookie) -> bool {
        let (domain, is_domain_cookie) = match cookie.domain.strip_prefix('.') {
            Some(rest) => (rest, true),
            None => (cookie.domain.as_str(), false),
        };
        let domain = domain.to_ascii_lowercase();
        self.origins.iter().any(|origin| {
            let url::Origin::Tuple(_, host, _) = origin else {
                return false;
            };
            let host = host.to_string().to_ascii_lowercase();
            host == domain || (is_domain_cookie && host.ends_with(&format!(".{domain}")))
        })
    }

    /// The part of a state these origins allow.
    pub fn filter(&self, state: &StorageState) -> StorageState {
        StorageState {
            cookies: state
                .cookies
                .iter()
                .filter(|c| self.allows_cookie(c))
                .cloned()
                .collect(),
            origins: state
                .origins
                .iter()
                .filter(|o| self.allows_origin(&o.origin))
                .cloned()
                .collect(),
            indexed_db: state
                .indexed_db
                .iter()
                .filter(|o| self.allows_origin(&o.origin))
                .cloned()
                .collect(),
        }
    }
}

/// What a load put into the browser (counts only: the values stay out of logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoadedState {
    /// Cookies set.
    pub cookies: usize,
    /// Origins whose localStorage will be filled on their first document in the tab.
    pub origins: usize,
    /// IndexedDB databases that will be created on their origin's first document in the tab.
    pub databases: usize,
    /// Cookies and origins of the file left out: outside the allowed origins.
    pub refused: usize,
}

const READ_LOCAL_STORAGE_JS: &str = "(() => { const out = []; \
    for (let i = 0; i < localStorage.length; i++) { const k = localStorage.key(i); \
    out.push([k, localStorage.getItem(k)]); } \
    return JSON.stringify({ origin: location.origin, items: out }); })()";

fn seed_script(origins: &[SavedOrigin]) -> String {
    let table: serde_json::Map<String, Value> = origins
        .iter()
        .map(|o| (o.origin.clone(), json!(o.local_storage)))
        .collect();
    format!(
        "(() => {{ const saved = {table}; const items = saved[location.origin]; \
         if (!items) return; \
         try {{ if (sessionStorage.getItem({marker})) return; \
         for (const [k, v] of items) localStorage.setItem(k, v); \
         sessionStorage.setItem({marker}, '1'); }} catch (e) {{}} }})()",
        table = Value::Object(table),
        marker = json!(SEEDED_MARKER),
    )
}

fn idb_seed_script(origins: &[SavedIdbOrigin]) -> String {
    let table: serde_json::Map<String, Value> = origins
        .iter()
        .map(|o| (o.origin.clone(), json!(o.databases)))
        .collect();
    format!(
        "({IDB_JS}).seed({table}, {marker})",
        table = Value::Object(table),
        marker = json!(IDB_SEEDED_MARKER),
    )
}

/// Reads the IndexedDB of the page in `session` (main frame `frame`) in [`STATE_WORLD`]: its
/// origin and databases. `None` when the page has none to give (gone, opaque, too large).
async fn read_indexed_db(
    conn: &crate::Connection,
    session: &SessionId,
    frame: &str,
) -> Option<SavedIdbOrigin> {
    let world = conn
        .call(
            Some(session),
            "Page.createIsolatedWorld",
            json!({"frameId": frame, "worldName": STATE_WORLD}),
        )
        .await
        .ok()?;
    let context = world.get("executionContextId")?.as_i64()?;
    let answer = conn
        .call_with(
            Some(session),
            "Runtime.callFunctionOn",
            json!({
                "functionDeclaration": format!("function () {{ return ({IDB_JS}).save(); }}"),
                "executionContextId": context,
                "returnByValue": true,
                "awaitPromise": true,
            }),
            IDB_READ_TIMEOUT,
            None,
        )
        .await
        .ok()?;
    if answer.get("exceptionDetails").is_some() {
        // The page's storage is unavailable (an opaque origin, storage blocked): nothing to keep.
        tracing::debug!("IndexedDB could not be read in a tab");
        return None;
    }
    let text = answer.pointer("/result/value")?.as_str()?;
    if text.len() > MAX_IDB_BYTES_PER_ORIGIN {
        tracing::warn!(
            bytes = text.len(),
            max = MAX_IDB_BYTES_PER_ORIGIN,
            "an origin's IndexedDB is too large to keep in the state: left out"
        );
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Read {
        origin: String,
        databases: Vec<crate::state_file::SavedDatabase>,
    }
    let read: Read = serde_json::from_str(text).ok()?;
    Some(SavedIdbOrigin {
        origin: read.origin,
        databases: read.databases,
    })
}

/// Saves a browser's state after the browser itself was handed away (to a toolset): it keeps
/// the connection and the tab list, not the browser. From [`CdpBrowser::state_saver`].
#[derive(Clone)]
pub struct StateSaver {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for StateSaver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateSaver")
    }
}

impl StateSaver {
    /// Reads the cookies, localStorage and IndexedDB of the allowed origins. `carried` is the state loaded
    /// at start: its origins with no open tab now are kept as they were.
    pub async fn save(
        &self,
        origins: &StateOrigins,
        carried: Option<&StorageState>,
    ) -> Result<StorageState, DriverError> {
        let conn = &self.shared.conn;
        let failed = |what: &str, e: crate::CdpError| DriverError::Failed(format!("{what}: {e}"));
        let answer = conn
            .call(None, "Storage.getCookies", json!({}))
            .await
            .map_err(|e| failed("Storage.getCookies", e))?;
        let mut cookies: Vec<SavedCookie> =
            serde_json::from_value(answer.get("cookies").cloned().unwrap_or(Value::Null))
                .map_err(|e| DriverError::Failed(format!("Storage.getCookies: {e}")))?;
        for cookie in &mut cookies {
            // A session cookie reports `expires: -1`; `Storage.setCookies` wants it absent.
            if cookie.expires.is_some_and(|e| e <= 0.0) {
                cookie.expires = None;
            }
        }
        let mut state = StorageState {
            cookies: cookies
                .into_iter()
                .filter(|c| origins.allows_cookie(c))
                .collect(),
            origins: Vec::new(),
            indexed_db: Vec::new(),
        };
        let tabs: Vec<(SessionId, String, String)> = self
            .shared
            .lock()
            .live_tabs()
            .map(|t| (t.session.clone(), t.target_id.clone(), t.url.clone()))
            .collect();
        for (session, frame, url) in &tabs {
            // A tab at another origin is not even read (its page reports its origin again below,
            // in case it moved since).
            let at_allowed = Url::parse(url)
                .is_ok_and(|u| origins.allows_origin(&u.origin().ascii_serialization()));
            if !at_allowed {
                continue;
            }
            if let Some(idb) = read_indexed_db(conn, session, frame).await
                && origins.allows_origin(&idb.origin)
                && !state.indexed_db.iter().any(|o| o.origin == idb.origin)
            {
                state.indexed_db.push(idb);
            }
        }
        for (session, _, _) in tabs {
            let Ok(answer) = conn
                .call(
                    Some(&session),
                    "Runtime.evaluate",
                    json!({ "expression": READ_LOCAL_STORAGE_JS, "returnByValue": true }),
                )
                .await
            else {
                continue;
            };
            let Some(text) = answer.pointer("/result/value").and_then(Value::as_str) else {
                continue;
            };
            let Ok(read) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            let origin = read["origin"].as_str().unwrap_or_default().to_owned();
            if !origins.allows_origin(&origin) || state.origins.iter().any(|o| o.origin == origin) {
                continue;
            }
            let local_storage: Vec<(String, String)> =
                serde_json::from_value(read["items"].clone()).unwrap_or_default();
            state.origins.push(SavedOrigin {
                origin,
                local_storage,
            });
        }
        if let Some(carried) = carried {
            let carried = origins.filter(carried);
            for old in carried.origins {
                if !state.origins.iter().any(|o| o.origin == old.origin) {
                    state.origins.push(old);
                }
            }
            for old in carried.indexed_db {
                if !state.indexed_db.iter().any(|o| o.origin == old.origin) {
                    state.indexed_db.push(old);
                }
            }
        }
        Ok(state)
    }
}

impl CdpBrowser {
    /// A handle that can save this browser's state later, after the browser was handed away.
    pub fn state_saver(&self) -> StateSaver {
        StateSaver {
            shared: Arc::clone(&self.shared),
        }
    }

    /// Reads the cookies, localStorage and IndexedDB of the allowed origins ([`StateSaver::save`]).
    pub async fn save_storage_state(
        &self,
        origins: &StateOrigins,
        carried: Option<&StorageState>,
    ) -> Result<StorageState, DriverError> {
        self.state_saver().save(origins, carried).await
    }

    /// Puts a state back: its cookies of allowed origins now, its localStorage of allowed
    /// origins on their first document in `tab` (`None`: the active tab). Call it before the
    /// first navigation.
    pub async fn load_storage_state(
        &self,
        state: &StorageState,
        origins: &StateOrigins,
        tab: Option<&TabId>,
    ) -> Result<LoadedState, DriverError> {
        let allowed = origins.filter(state);
        let refused = state.cookies.len() + state.origins.len() + state.indexed_db.len()
            - allowed.cookies.len()
            - allowed.origins.len()
            - allowed.indexed_db.len();
        if !allowed.cookies.is_empty() {
            self.connection()
                .call(
                    None,
                    "Storage.setCookies",
                    json!({ "cookies": allowed.cookies }),
                )
                .await
                .map_err(|e| self.cdp_error(e))?;
        }
        if !allowed.origins.is_empty() {
            self.call_raw(
                tab,
                "Page.addScriptToEvaluateOnNewDocument",
                json!({ "source": seed_script(&allowed.origins) }),
            )
            .await?;
        }
        if !allowed.indexed_db.is_empty() {
            self.call_raw(
                tab,
                "Page.addScriptToEvaluateOnNewDocument",
                json!({
                    "source": idb_seed_script(&allowed.indexed_db),
                    "worldName": STATE_WORLD,
                }),
            )
            .await?;
        }
        Ok(LoadedState {
            cookies: allowed.cookies.len(),
            origins: allowed.origins.len(),
            databases: allowed.indexed_db.iter().map(|o| o.databases.len()).sum(),
            refused,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cookie(domain: &str) -> SavedCookie {
        SavedCookie {
            name: "n".into(),
            value: "v".into(),
            domain: domain.into(),
            path: "/".into(),
            expires: None,
            http_only: false,
            secure: false,
            same_site: None,
        }
    }

    #[test]
    fn only_allowed_origins_pass_the_filter() {
        let urls = [
            Url::parse("http://127.0.0.1:8000/app").unwrap(),
            Url::parse("https://shop.example.com/").unwrap(),
        ];
        let allowed = StateOrigins::new(&urls).unwrap();
        assert!(allowed.allows_origin("http://127.0.0.1:8000"));
        assert!(!allowed.allows_origin("http://127.0.0.1:8001"));
        assert!(!allowed.allows_origin("https://127.0.0.1:8000"));
        assert!(!allowed.allows_origin("not a url"));
        assert!(allowed.allows_cookie(&cookie("127.0.0.1")));
        assert!(allowed.allows_cookie(&cookie("shop.example.com")));
        assert!(allowed.allows_cookie(&cookie(".example.com")));
        assert!(!allowed.allows_cookie(&cookie("example.com")));
        assert!(!allowed.allows_cookie(&cookie("evil.example.com")));
        assert!(!allowed.allows_cookie(&cookie(".evil.com")));
        assert!(!allowed.allows_cookie(&cookie("127.0.0.2")));
        let data = [Url::parse("data:text/html,x").unwrap()];
        assert!(StateOrigins::new(&data).is_err());
    }
}
