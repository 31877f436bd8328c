//! Settling after an action by events, not sleeps: an action aimed at an element answers after one look at the page, one turn of its event loop after the input (what the input did at once shows), and leaves what is still to come (the requests it caused, the page's answer to them, the DOM going quiet) to the tab's next call, which waits for it before it reads or aims; an action that navigated, and other actions and navigations, wait for the document to load, no request in flight for a quiet period and no DOM mutation for a quiet period, each bounded by a cap. [`ActionTimer`] logs where an action's time went.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use hands_core::browser::DriverError;

use crate::driver::{AgentError, CdpBrowser, Page};
use crate::events::Tab;

/// How long an action waits to hear of the requests the page says it started.
const REQUESTS_HEARD_CAP: Duration = Duration::from_millis(1000);

/// What an action that answered early left for the tab's next call
/// ([`CdpBrowser::await_settling`]).
#[derive(Debug, Clone, Copy)]
pub struct Settling {
    /// When the action started.
    since: Instant,
    /// The tab's count of requests heard of ([`Tab::n_requests`]) when the action started.
    requests_before: u64,
    /// What is left to wait for.
    left: Left,
}

/// What an action that answered early left to wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Left {
    /// The page changed and had not been quiet for `action_quiet`.
    Quiet,
    /// Requests the action caused, `started` of them by the page's scripts, were in flight, not
    /// heard of yet, or ended after the page was asked: their end, the page's answer to them,
    /// then the quiet.
    Requests { started: u64 },
}

/// What the first look after an action's input found.
enum AfterInput {
    /// The action navigated (its document went away, or the main frame asked to navigate):
    /// settle the long way.
    Navigated,
    /// The action answers now; the tab's next call waits for what is left, if anything.
    Answer(Option<Left>),
}

/// What a settle wait saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// False when the cap ran out first (the action still counts as done), or when an action
    /// answered before the page was done with it (the tab's next call waits for the rest).
    pub quiet: bool,
    /// Time spent.
    pub waited: Duration,
}

#[derive(Deserialize)]
struct Quiet {
    quiet: bool,
}

/// What the page's action watch saw (the agent's `settled`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Watched {
    /// With `guard`: the press guard's verdict, `hit`, `missed` or `none`.
    #[serde(default)]
    pub(crate) guard: Option<String>,
    /// False in a document where no action armed the watch (the action navigated).
    armed: bool,
    /// Changes since the watch was armed.
    mutations: u64,
    /// When the first change came, in ms after the watch was armed (right before the input).
    #[serde(default)]
    first_ms: Option<f64>,
    /// How long ago the last change came, in ms.
    #[serde(default)]
    last_ms: Option<f64>,
    /// Requests the page's scripts started since the watch was armed (`None` where the page's
    /// listener log did not answer).
    #[serde(default)]
    requests: Option<u64>,
}

/// A look at the page after an action's input: when it was asked, and what it answered.
#[derive(Debug)]
pub(crate) struct Look {
    asked: Instant,
    pub(crate) outcome: Result<Watched, AgentError>,
}

/// Per-phase timings of one browser action, logged at debug level when it answers
/// (`RUST_LOG=hands_cdp::timing=debug`): aiming (the ref re-checked and hit-tested), input,
/// the press guard's answer, the settle; and when the page's first change came.
#[derive(Debug)]
pub(crate) struct ActionTimer {
    member: &'static str,
    started: Instant,
    mark: Instant,
    phases: Vec<(&'static str, Duration)>,
    first_change_ms: Option<f64>,
    mutations: u64,
    long_way: bool,
    /// The press guard's verdict (`hit`, `missed`, `none`), for a guarded click.
    pub(crate) guard: Option<String>,
    /// Whether the action answered before the page's quiet (the next call waits for it).
    settling: bool,
    /// The tab's count of requests seen ([`Tab::n_requests`]) when the action started.
    requests_before: u64,
    /// Requests the page started that the driver waited to hear of.
    requests_awaited: u64,
}

impl ActionTimer {
    /// Starts timing `member` now, before any of its input, in a tab that has seen
    /// `requests_before` requests so far.
    pub(crate) fn start(member: &'static str, requests_before: u64) -> ActionTimer {
        let now = Instant::now();
        ActionTimer {
            member,
            started: now,
            mark: now,
            phases: Vec::with_capacity(5),
            first_change_ms: None,
            mutations: 0,
            long_way: false,
            guard: None,
            settling: false,
            requests_before,
            requests_awaited: 0,
        }
    }

    /// When the action started.
    pub(crate) fn started(&self) -> Instant {
        self.started
    }

    /// Ends the phase `name` now (a phase that repeats, as aiming does when a press missed, adds
    /// up).
    pub(crate) fn phase(&mut self, name: &'static str) {
        let now = Instant::now();
        let spent = now - self.mark;
        self.mark = now;
        match self.phases.iter_mut().find(|(n, _)| *n == name) {
            Some((_, total)) => *total += spent,
            None => self.phases.push((name, spent)),
        }
    }

    /// Logs the timings.
    pub(crate) fn finish(mut self) {
        self.phase("rest");
        let phases = self
            .phases
            .iter()
            .filter(|(name, spent)| *name != "rest" || !spent.is_zero())
            .map(|(name, spent)| format!("{name} {:.1} ms", spent.as_secs_f64() * 1000.0))
            .collect::<Vec<_>>()
            .join(", ");
        tracing::debug!(
            target: "hands_cdp::timing",
            member = self.member,
            total_ms = self.started.elapsed().as_secs_f64() * 1000.0,
            first_change_ms = self.first_change_ms,
            mutations = self.mutations,
            long_way = self.long_way,
            guard = self.guard.as_deref(),
            settling = self.settling,
            requests_awaited = self.requests_awaited,
            %phases,
            "browser action timings"
        );
    }
}

impl CdpBrowser {
    /// Starts timing an action aimed at an element of `page` (see [`ActionTimer`]).
    pub(crate) fn action_timer(&self, page: &Page, member: &'static str) -> ActionTimer {
        let seen = self
            .shared
            .lock()
            .tab(&page.id)
            .map_or(0, |tab| tab.n_requests);
        ActionTimer::start(member, seen)
    }

    /// Waits until the driver has heard of `started` requests in the tab since the action
    /// began, when the tab had heard of `before` (the page's scripts started them; their network
    /// events can reach the driver after the page's answer), at most [`REQUESTS_HEARD_CAP`] or
    /// until `deadline`.
    async fn hear_requests(&self, page: &Page, before: u64, started: u64, deadline: Instant) {
        let id = page.id.clone();
        let wait = REQUESTS_HEARD_CAP.min(deadline.saturating_duration_since(Instant::now()));
        let heard = self
            .wait_until(wait, &CancellationToken::new(), |state| {
                state
                    .tab(&id)
                    .is_none_or(|tab| tab.n_requests.saturating_sub(before) >= started)
            })
            .await;
        if !heard {
            tracing::debug!(
                started,
                "the page started requests the driver did not hear of"
            );
        }
    }

    /// Whether the tab's network may still hold something of an action: a request the page
    /// says it started (`started` since the tab had heard of `before`) that the driver has not
    /// heard of yet, a request in flight, or one that started or ended after the page was last
    /// asked (`asked`: the page's answer to it may not have run then).
    fn requests_pending(&self, page: &Page, before: u64, started: u64, asked: Instant) -> bool {
        let state = self.shared.lock();
        let Some(tab) = state.tab(&page.id) else {
            return false;
        };
        tab.n_requests.saturating_sub(before) < started
            || self.tab_busy(tab, Instant::now())
            || tab.last_network >= asked
    }

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

    /// Settles after an action aimed at an element, whose resolve armed the page's action
    /// watch before the input: one look after one turn of the page. The action answers then:
    /// what its input did at once shows. What is still to come is left to the tab's next call
    /// ([`CdpBrowser::await_settling`]): the DOM going quiet when the page changed and has not
    /// been quiet for `action_quiet` yet, and, when the action caused requests (in flight, not
    /// heard of yet, or ended after the look began), their end and the page's answer to them.
    /// An action that asked for a navigation settles the long way ([`CdpBrowser::settle`]),
    /// waiting for the new document.
    pub(crate) async fn settle_action(
        &mut self,
        page: &Page,
        timer: &mut ActionTimer,
        first: Option<Look>,
        cancel: &CancellationToken,
    ) -> Result<Settled, DriverError> {
        let since = timer.started();
        let deadline = since + self.config.settle.cap;
        let settled = match self.first_look(page, timer, first, cancel).await? {
            AfterInput::Answer(left) => {
                if cancel.is_cancelled() {
                    return Err(DriverError::Cancelled);
                }
                self.check_alive()?;
                timer.settling = left.is_some();
                if let Some(left) = left
                    && let Some(tab) = self.shared.lock().tab_mut(&page.id)
                {
                    tab.settling = Some(Settling {
                        since,
                        requests_before: timer.requests_before,
                        left,
                    });
                }
                Settled {
                    quiet: left.is_none(),
                    waited: since.elapsed(),
                }
            }
            AfterInput::Navigated => {
                timer.settling = false;
                timer.long_way = true;
                self.settle_within(page, since, deadline, cancel).await?
            }
        };
        timer.phase("settle");
        Ok(settled)
    }

    /// The look after an action's input (`first`, when the click already took it).
    async fn first_look(
        &self,
        page: &Page,
        timer: &mut ActionTimer,
        first: Option<Look>,
        cancel: &CancellationToken,
    ) -> Result<AfterInput, DriverError> {
        let since = timer.started();
        if cancel.is_cancelled() {
            return Err(DriverError::Cancelled);
        }
        if self.navigation_since(page, since) {
            return Ok(AfterInput::Navigated);
        }
        let look = match first {
            Some(look) => look,
            None => self.look(page, since, false, cancel).await,
        };
        let watched = match look.outcome {
            Ok(watched) if watched.armed => watched,
            // A document the watch was not armed in: the action navigated.
            Ok(_) | Err(AgentError::ContextGone) => return Ok(AfterInput::Navigated),
            // The page did not answer within the cap: the action answers as it is.
            Err(AgentError::Cdp(crate::connection::CdpError::Timeout { .. })) => {
                return Ok(AfterInput::Answer(None));
            }
            Err(e) => return Err(self.agent_error(e)),
        };
        timer.mutations = watched.mutations;
        timer.first_change_ms = watched.first_ms;
        let started = watched.requests.unwrap_or(0);
        timer.requests_awaited = started;
        if self.navigation_since(page, since) {
            return Ok(AfterInput::Navigated);
        }
        if self.requests_pending(page, timer.requests_before, started, look.asked) {
            return Ok(AfterInput::Answer(Some(Left::Requests { started })));
        }
        // Changed, and not yet quiet for `action_quiet`.
        let unquiet = watched.mutations > 0
            && watched
                .last_ms
                .is_none_or(|ms| ms < self.config.settle.action_quiet.as_secs_f64() * 1000.0);
        Ok(AfterInput::Answer(unquiet.then_some(Left::Quiet)))
    }

    /// Asks the page's action watch (see [`CdpBrowser::settle_action`]) for the action that
    /// started at `since`: it answers after one turn of the page (the tasks the input queued
    /// have run), without waiting for the page to go quiet. With `guard`, it first waits for
    /// the guarded press to be released, and the guard's verdict comes in the same call.
    pub(crate) async fn look(
        &self,
        page: &Page,
        since: Instant,
        guard: bool,
        cancel: &CancellationToken,
    ) -> Look {
        let deadline = since + self.config.settle.cap;
        self.look_for(page, deadline, guard, Duration::ZERO, cancel)
            .await
    }

    /// [`CdpBrowser::look`] that also waits until the page's DOM has not changed for `quiet`,
    /// at most until `deadline`.
    async fn look_for(
        &self,
        page: &Page,
        deadline: Instant,
        guard: bool,
        quiet: Duration,
        cancel: &CancellationToken,
    ) -> Look {
        let asked = Instant::now();
        let remaining = deadline.saturating_duration_since(asked);
        let args = json!({
            "quietMs": quiet.as_millis() as u64,
            "capMs": remaining.as_millis() as u64,
            "guard": guard,
        });
        let timeout = remaining + Duration::from_secs(1);
        let outcome = self
            .agent::<Watched>(page, "settled", args, timeout, cancel)
            .await;
        Look { asked, outcome }
    }

    /// Whether the tab's last action answered before the page was done with it.
    pub(crate) fn is_settling(&self, page: &Page) -> bool {
        self.shared
            .lock()
            .tab(&page.id)
            .is_some_and(|tab| tab.settling.is_some())
    }

    /// Before a call on a tab whose last action answered before the page was done with it
    /// ([`Tab::settling`]): waits for what was left, so what the call reads or aims at is what
    /// the action left. The requests it caused end, the page answers them (a list rendered from a
    /// response), its DOM goes quiet for `action_quiet`; a navigation they led to is waited for
    /// the long way. All within the settle cap from the action's start, and at least one look.
    /// By the time a model's next call comes this is usually one look.
    pub(crate) async fn await_settling(&self, page: &Page) {
        let Some(pending) = self
            .shared
            .lock()
            .tab_mut(&page.id)
            .and_then(|tab| tab.settling.take())
        else {
            return;
        };
        let settle = self.config.settle;
        let cancel = CancellationToken::new();
        // At least one look, however late the call comes.
        let deadline = (pending.since + settle.cap).max(Instant::now() + settle.action_quiet * 4);
        let mut started = match pending.left {
            Left::Quiet => None,
            Left::Requests { started } => Some(started),
        };
        loop {
            if let Some(started) = started {
                self.hear_requests(page, pending.requests_before, started, deadline)
                    .await;
                if !self
                    .network_idle(page, pending.since, Duration::ZERO, deadline, &cancel)
                    .await
                {
                    return;
                }
            }
            if self.navigation_since(page, pending.since) {
                break;
            }
            let look = self
                .look_for(page, deadline, false, settle.action_quiet, &cancel)
                .await;
            let watched = match look.outcome {
                Ok(watched) if watched.armed => watched,
                Ok(_) | Err(AgentError::ContextGone) => break,
                Err(e) => {
                    tracing::debug!(error = ?e, "the wait for a settling page failed");
                    return;
                }
            };
            if self.navigation_since(page, pending.since) {
                break;
            }
            let now_started = watched.requests.unwrap_or(0);
            if !self.requests_pending(page, pending.requests_before, now_started, look.asked)
                || Instant::now() >= deadline
            {
                return;
            }
            started = Some(now_started);
        }
        // The action's requests led to a navigation: wait for the new document.
        if let Err(e) = self
            .settle_within(page, pending.since, deadline, &cancel)
            .await
        {
            tracing::debug!(error = ?e, "the wait for a settling page's navigation failed");
        }
    }

    /// Whether the tab's main frame asked to navigate since `since` and has not moved yet.
    fn navigation_since(&self, page: &Page, since: Instant) -> bool {
        let state = self.shared.lock();
        state
            .tab(&page.id)
            .and_then(|tab| tab.nav_requested)
            .is_some_and(|asked| asked >= since)
    }

    /// [`CdpBrowser::settle`] with an explicit deadline.
    pub(crate) async fn settle_within(
        &self,
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
