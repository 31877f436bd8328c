//! Settling after an action by events, not sleeps: the document loaded (if one started), no request in flight for a quiet period, and no DOM mutation for a quiet period, each bounded by a cap.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use hands_core::browser::DriverError;

use crate::driver::{AgentError, CdpBrowser, Page};
use crate::events::Tab;

/// What a settle wait saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// False when the cap ran out first (the action still counts as done).
    pub quiet: bool,
    /// Time spent.
    pub waited: Duration,
}

#[derive(Deserialize)]
struct Quiet {
    quiet: bool,
}

impl CdpBrowser {
    /// Waits until the tab is network-idle and DOM-quiet at the same time, or the settle cap
    /// passes. `since` is when the action started: a request it triggered a little later still
    /// counts, because the network must stay quiet for `network_quiet` after it.
    pub(crate) async fn settle(
        &mut self,
        page: &Page,
        since: Instant,
        cancel: &CancellationToken,
    ) -> Result<Settled, DriverError> {
        let cap = self.config.settle.cap;
        self.settle_within(page, since, since + cap, cancel).await
    }

    /// [`CdpBrowser::settle`] with an explicit deadline.
    pub(crate) async fn settle_within(
        &mut self,
        page: &Page,
        since: Instant,
        deadline: Instant,
        cancel: &CancellationToken,
    ) -> Result<Settled, DriverError> {
        let settle = self.config.settle;
        loop {
            if cancel.is_cancelled() {
                return Err(DriverError::Cancelled);
            }
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                break;
            }
            // Network idle and DOM quiet are watched side by side; the page is settled when both
            // hold at the same moment.
            let args = json!({
                "quietMs": settle.dom_quiet.as_millis() as u64,
                "capMs": remaining.as_millis() as u64,
            });
            let (network, dom) = tokio::join!(
                self.network_idle(page, since, settle.network_quiet, deadline, cancel),
                self.agent::<Quiet>(
                    page,
                    "quiet",
                    args,
                    remaining + Duration::from_secs(1),
                    cancel
                ),
            );
            if !network {
                break;
            }
            match dom {
                Ok(quiet) => {
                    if self.network_quiet_now(page, since, settle.network_quiet) {
                        return Ok(Settled {
                            quiet: quiet.quiet,
                            waited: since.elapsed(),
                        });
                    }
                }
                // A navigation replaced the document: wait for the new one.
                Err(AgentError::ContextGone) => {}
                Err(AgentError::Cdp(crate::connection::CdpError::Timeout { .. })) => break,
                Err(e) => return Err(self.agent_error(e)),
            }
        }
        if cancel.is_cancelled() {
            return Err(DriverError::Cancelled);
        }
        self.check_alive()?;
        Ok(Settled {
            quiet: false,
            waited: since.elapsed(),
        })
    }

    /// Whether a tab's document is loading or has a request in flight. A request older than the
    /// settle cap (a long poll, a stream) no longer counts: it would hold every settle to the cap.
    fn tab_busy(&self, tab: &Tab, now: Instant) -> bool {
        let stale_after = self.config.settle.cap;
        tab.doc.loading
            || tab
                .inflight
                .values()
                .any(|started| now.duration_since(*started) < stale_after)
    }

    fn network_quiet_now(&self, page: &Page, since: Instant, quiet: Duration) -> bool {
        let state = self.shared.lock();
        let Some(tab) = state.tab(&page.id) else {
            return true;
        };
        let now = Instant::now();
        !self.tab_busy(tab, now) && now.duration_since(tab.last_network.max(since)) >= quiet
    }

    /// Waits for network idle; false when the deadline passed or the call was cancelled.
    async fn network_idle(
        &self,
        page: &Page,
        since: Instant,
        quiet: Duration,
        deadline: Instant,
        cancel: &CancellationToken,
    ) -> bool {
        let mut changed = self.shared.changed.subscribe();
        loop {
            let wake = {
                let state = self.shared.lock();
                if state.closed.is_some() {
                    return false;
                }
                let Some(tab) = state.tab(&page.id) else {
                    return true;
                };
                let now = Instant::now();
                if self.tab_busy(tab, now) {
                    deadline
                } else {
                    let quiet_from = tab.last_network.max(since);
                    if now.duration_since(quiet_from) >= quiet {
                        return true;
                    }
                    quiet_from + quiet
                }
            };
            if Instant::now() >= deadline {
                return false;
            }
            tokio::select! {
                r = changed.changed() => if r.is_err() { return false },
                _ = tokio::time::sleep_until(wake.min(deadline)) => {}
                _ = cancel.cancelled() => return false,
            }
        }
    }

    /// After a navigation committed a new document: waits for its `load` (at most `load_cap`),
    /// then settles. A page whose `load` never fires answers after the cap.
    pub(crate) async fn await_load(
        &mut self,
        page: &Page,
        since: Instant,
        commits_before: u64,
        cancel: &CancellationToken,
    ) -> Result<Settled, DriverError> {
        let load_cap = self.config.load_cap;
        let id = page.id.clone();
        let loaded = self
            .wait_until(load_cap, cancel, |state| {
                state
                    .tab(&id)
                    .is_none_or(|t| t.doc.n_commits > commits_before && t.doc.loaded)
            })
            .await;
        if cancel.is_cancelled() {
            return Err(DriverError::Cancelled);
        }
        self.check_alive()?;
        if !loaded {
            // Still loading after the cap: answer now rather than wait again.
            return Ok(Settled {
                quiet: false,
                waited: since.elapsed(),
            });
        }
        let deadline = Instant::now() + self.config.settle.cap.min(load_cap);
        let settled = self.settle_within(page, since, deadline, cancel).await?;
        Ok(Settled {
            quiet: loaded && settled.quiet,
            waited: since.elapsed(),
        })
    }
}
