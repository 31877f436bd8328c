//! Tab members: `state()`, `navigate`, `new_tab`, `switch_tab`, `close_tab`. Tab ids are the driver's own (`t1`, `t2`, … never reused); exactly one tab is active.

use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use hands_core::browser::args::PageUrl;
use hands_core::browser::{BrowserState, DriverError, TabId, TabInfo, truncate_utf8};

use crate::connection::decode;
use crate::driver::{CdpBrowser, Page};
use crate::events::State;
use crate::protocol::{CreateTarget, GetTargets, Navigated};

/// What the page sees when the policy blocks a request.
pub const BLOCKED_NET_ERROR: &str = "net::ERR_BLOCKED_BY_CLIENT";

/// The model's text for a navigation the network policy blocked.
pub const NAVIGATION_BLOCKED: &str = "The network policy blocked this navigation.";

/// A tab's title as reported: the page's own title, or — for a document without one, which
/// Chromium titles with its URL (path, query and fragment included) — what the URL is reduced
/// to everywhere else: its origin (`about:blank`, or the scheme alone for other URLs). A title
/// that merely looks like the URL is reduced too (the safe side).
pub fn reported_title(title: &str, url: &str) -> String {
    if !is_url_stand_in(title, url) {
        return title.to_owned();
    }
    match url::Url::parse(url) {
        Ok(parsed) if parsed.scheme() == "about" && parsed.path() == "blank" => {
            "about:blank".to_owned()
        }
        Ok(parsed) => crate::policy::origin_of(&parsed),
        Err(_) => String::new(),
    }
}

/// Whether `title` is the browser's stand-in for a missing title: the URL itself, without its
/// scheme, without a trailing slash or percent-escapes (as Chromium formats it), or for
/// `data:`, `blob:`, `javascript:` and `file:` URLs, any title that starts with the scheme or
/// is the file's name.
fn is_url_stand_in(title: &str, url: &str) -> bool {
    let title = title.trim();
    if title.is_empty() {
        return false;
    }
    fn bare(s: &str) -> &str {
        let s = s.split_once("://").map_or(s, |(_, rest)| rest);
        s.trim_end_matches('/')
    }
    let decoded = unescape(url);
    let (t, u) = (bare(title), bare(url));
    if t == u || t.eq_ignore_ascii_case(u) || t == bare(&decoded) || title == url {
        return true;
    }
    let scheme = url.split(':').next().unwrap_or("").to_ascii_lowercase();
    match scheme.as_str() {
        "data" | "blob" | "javascript" => title
            .to_ascii_lowercase()
            .starts_with(&format!("{scheme}:")),
        "file" => url.ends_with(&format!("/{title}")) || title.starts_with("file:"),
        _ => false,
    }
}

/// `%XX` escapes decoded (invalid UTF-8 replaced), the rest as it is.
fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl CdpBrowser {
    /// Every tab, raw: full URLs and titles (the surface filters what the model sees), except
    /// a missing title, which Chromium fills with the full URL ([`reported_title`]). Titles
    /// and URLs are refreshed from the browser first: it does not announce every title change.
    pub(crate) async fn state_impl(&self) -> Result<BrowserState, DriverError> {
        self.check_alive()?;
        let targets = self
            .shared
            .conn
            .run(None, &GetTargets {})
            .await
            .map_err(|e| self.cdp_error(e))?;
        let mut state = self.shared.lock();
        for info in targets.target_infos {
            if let Some(tab) = state
                .tabs
                .iter_mut()
                .find(|t| t.target_id == info.target_id)
            {
                tab.title = info.title;
                // A failed navigation leaves the text it was given as the target's URL (an
                // entry that never committed, e.g. `example.com/x`): the tab keeps the last URL
                // that parsed, the document it still shows (D16; an empty URL is not a state).
                if url::Url::parse(&info.url).is_ok() || tab.url.is_empty() {
                    tab.url = info.url;
                }
            }
        }
        let active = state
            .active
            .clone()
            .filter(|a| state.tab(a).is_some())
            .or_else(|| state.tabs.last().map(|t| t.id.clone()));
        let tabs = state
            .tabs
            .iter()
            .map(|t| TabInfo {
                id: t.id.clone(),
                title: reported_title(&t.title, &t.url),
                url: t.url.clone(),
                active: Some(&t.id) == active.as_ref(),
            })
            .collect();
        BrowserState::new(tabs).map_err(|e| DriverError::Failed(format!("inconsistent tabs: {e}")))
    }

    /// Brings a tab to the front and marks it active.
    async fn activate(&self, page: &Page) -> Result<(), DriverError> {
        self.shared.lock().activate(&page.id);
        self.shared.bump();
        let conn = &self.shared.conn;
        let front = conn.call(
            None,
            "Target.activateTarget",
            json!({"targetId": page.target_id}),
        );
        let bring = conn.call(Some(&page.session), "Page.bringToFront", json!({}));
        let (front, bring) = tokio::join!(front, bring);
        front.map_err(|e| self.cdp_error(e))?;
        bring.map_err(|e| self.cdp_error(e))?;
        Ok(())
    }

    /// Navigates a tab and waits for the new document to load and settle (bounded).
    pub(crate) async fn navigate_page(
        &mut self,
        page: &Page,
        url: &PageUrl,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let started = Instant::now();
        let n_commits = self
            .shared
            .lock()
            .tab(&page.id)
            .map_or(0, |t| t.doc.n_commits);
        let value = self
            .shared
            .conn
            .call_with(
                Some(&page.session),
                "Page.navigate",
                json!({"url": url.as_str()}),
                self.config.navigation_timeout,
                Some(cancel),
            )
            .await
            .map_err(|e| match e {
                crate::connection::CdpError::Timeout { .. } => DriverError::refused(format!(
                    "The page did not start loading within {} s.",
                    self.config.navigation_timeout.as_secs()
                )),
                e => self.cdp_error(e),
            })?;
        let navigated: Navigated = decode("Page.navigate", value).map_err(|e| self.cdp_error(e))?;
        if let Some(error) = navigated.error_text.as_deref().filter(|e| !e.is_empty()) {
            return match error {
                BLOCKED_NET_ERROR => Err(DriverError::refused(NAVIGATION_BLOCKED)),
                // A download or a 204: nothing new to show.
                "net::ERR_ABORTED" => Ok(Some(
                    "The navigation did not open a new page (a download or an empty response)."
                        .to_owned(),
                )),
                other => Err(DriverError::refused(format!(
                    "The navigation failed: {}.",
                    truncate_utf8(other, 80)
                ))),
            };
        }
        let settled = match navigated.loader_id {
            Some(_) => self.await_load(page, started, n_commits, cancel).await?,
            None => self.settle(page, started, cancel).await?,
        };
        let status = self.shared.lock().tab(&page.id).and_then(State::doc_status);
        let mut text = match status {
            Some(status) if status >= 400 => format!("Navigated (HTTP {status})."),
            _ => "Navigated.".to_owned(),
        };
        if !settled.quiet {
            text.push_str(" The page was still loading when the wait ended.");
        }
        Ok(Some(text))
    }

    /// `navigate`.
    pub(crate) async fn navigate_impl(
        &mut self,
        url: &PageUrl,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        self.navigate_page(&page, url, cancel).await
    }

    /// `new_tab`: a blank tab, made the only active one, then navigated when a URL is given.
    pub(crate) async fn new_tab_impl(
        &mut self,
        url: Option<&PageUrl>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.check_alive()?;
        let created = self
            .shared
            .conn
            .run(
                None,
                &CreateTarget {
                    url: "about:blank".to_owned(),
                },
            )
            .await
            .map_err(|e| self.cdp_error(e))?;
        let target = created.target_id;
        let ready = self
            .wait_until(self.config.call_timeout, cancel, |s| {
                s.tabs.iter().any(|t| t.target_id == target && t.ready)
            })
            .await;
        if cancel.is_cancelled() {
            return Err(DriverError::Cancelled);
        }
        let page = {
            let state = self.shared.lock();
            let tab = state.tabs.iter().find(|t| t.target_id == target);
            match (ready, tab) {
                (true, Some(t)) => Page {
                    id: t.id.clone(),
                    session: t.session.clone(),
                    target_id: t.target_id.clone(),
                },
                _ => {
                    drop(state);
                    self.check_alive()?;
                    return Err(DriverError::Failed(
                        "the new tab was not attached in time".into(),
                    ));
                }
            }
        };
        self.activate(&page).await?;
        if let Some(url) = url {
            let text = self.navigate_page(&page, url, cancel).await?;
            return Ok(Some(format!(
                "Opened tab {}. {}",
                page.id,
                text.unwrap_or_default()
            )));
        }
        Ok(Some(format!("Opened tab {}.", page.id)))
    }

    /// `switch_tab`.
    pub(crate) async fn switch_tab_impl(
        &mut self,
        tab: &TabId,
        _cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(Some(tab)).await?;
        self.activate(&page).await?;
        Ok(Some(format!("Switched to tab {}.", page.id)))
    }

    /// `close_tab`: the tab goes; if it was active, the most recently active remaining tab
    /// becomes active.
    pub(crate) async fn close_tab_impl(
        &mut self,
        tab: &TabId,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = {
            self.check_alive()?;
            let state = self.shared.lock();
            let Some(t) = state.tab(tab) else {
                return Err(DriverError::refused(format!(
                    "There is no tab {}; list_tabs shows the open tabs.",
                    truncate_utf8(tab.as_str(), 64)
                )));
            };
            Page {
                id: t.id.clone(),
                session: t.session.clone(),
                target_id: t.target_id.clone(),
            }
        };
        self.shared
            .conn
            .call(
                None,
                "Target.closeTarget",
                json!({"targetId": page.target_id}),
            )
            .await
            .map_err(|e| self.cdp_error(e))?;
        let id = page.id.clone();
        let closed = self
            .wait_until(self.config.call_timeout, cancel, |s| s.tab(&id).is_none())
            .await;
        if !closed {
            if cancel.is_cancelled() {
                return Err(DriverError::Cancelled);
            }
            self.check_alive()?;
            return Err(DriverError::Failed("the tab did not close in time".into()));
        }
        let next = self.shared.lock().active.clone();
        if let Some(next) = next
            && let Ok(page) = self.page(Some(&next))
        {
            self.activate(&page).await?;
        }
        Ok(Some(format!("Closed tab {}.", page.id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_title_is_reduced_like_the_url() {
        let cases = [
            // Chromium's stand-ins, as Target.getTargets reports them.
            (
                "127.0.0.1:8080/untitled?secret=1#frag",
                "http://127.0.0.1:8080/untitled?secret=1#frag",
                "http://127.0.0.1:8080",
            ),
            (
                "127.0.0.1:8080/a",
                "http://127.0.0.1:8080/a",
                "http://127.0.0.1:8080",
            ),
            (
                "example.test",
                "https://example.test/",
                "https://example.test",
            ),
            (
                "https://example.test/p?q=1",
                "https://example.test/p?q=1",
                "https://example.test",
            ),
            (
                "data:text/html,<p>secret",
                "data:text/html,%3Cp%3Esecret",
                "data:",
            ),
            (
                "secret-report.html",
                "file:///home/u/secret-report.html",
                "file:",
            ),
            ("about:blank", "about:blank", "about:blank"),
            // Real titles stay.
            ("Inbox (3)", "https://mail.test/u/0/?token=x", "Inbox (3)"),
            ("Example Domain", "https://example.test/", "Example Domain"),
            ("", "https://example.test/x", ""),
        ];
        for (title, url, want) in cases {
            assert_eq!(reported_title(title, url), want, "{title} at {url}");
        }
    }
}
