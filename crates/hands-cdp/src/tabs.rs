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

impl CdpBrowser {
    /// Every tab, raw: full URLs and titles (the surface filters what the model sees). Titles
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
                tab.url = info.url;
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
                title: t.title.clone(),
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
