//! The live side of a view: approvals a running `hands run --view` waits on, answered by the
//! person's click on the page, and a version number that moves whenever the run's log or an
//! approval changes (the page waits on it instead of polling on a timer).
//!
//! A pending approval is answered once; a run that is cancelled while it waits, or a view that
//! goes away, denies (nothing approves by default).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::wheel::Wheel;

/// An approval waiting for the person.
#[derive(Debug, Clone, Serialize)]
pub struct Pending {
    /// Its id, in the order asked.
    pub id: u64,
    /// What is asked, in a sentence.
    pub question: String,
    /// The action (member, arguments, call id), for the page to show.
    pub detail: Value,
}

/// A decided approval.
#[derive(Debug, Clone, Serialize)]
pub struct Decided {
    /// The id it had while pending.
    pub id: u64,
    /// What was asked.
    pub question: String,
    /// The action.
    pub detail: Value,
    /// The answer.
    pub approved: bool,
    /// Who answered: `person` (a click), `cancelled` (the run stopped first).
    pub by: &'static str,
}

#[derive(Debug, Default)]
struct State {
    next_id: u64,
    pending: BTreeMap<u64, (Pending, oneshot::Sender<bool>)>,
    decided: Vec<Decided>,
}

/// The approvals of a live run, shared by the runner (which asks) and the page (which answers).
#[derive(Debug, Clone)]
pub struct Live {
    state: Arc<Mutex<State>>,
    version: Arc<watch::Sender<u64>>,
    /// The newest version a page has shown (`None` until a page showed one).
    served: Arc<watch::Sender<Option<u64>>>,
    /// Who holds the wheel ([`crate::wheel`]).
    wheel: Wheel,
}

impl Default for Live {
    fn default() -> Live {
        Live {
            state: Arc::default(),
            version: Arc::new(watch::channel(0).0),
            served: Arc::new(watch::channel(None).0),
            wheel: Wheel::default(),
        }
    }
}

/// The approvals as the page sees them.
#[derive(Debug, Clone, Serialize)]
pub struct Approvals {
    /// Waiting for an answer, oldest first.
    pub pending: Vec<Pending>,
    /// Answered, in order.
    pub decided: Vec<Decided>,
}

/// A person's answer to an approval on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Let the action run.
    Approve,
    /// Refuse it.
    Deny,
}

impl Answer {
    /// `approve: true` / `false`, as the page posts it.
    pub fn from_approve(approve: bool) -> Answer {
        if approve {
            Answer::Approve
        } else {
            Answer::Deny
        }
    }
}

impl Live {
    /// The run's wheel: the person may take it between turns.
    pub fn wheel(&self) -> &Wheel {
        &self.wheel
    }

    /// Something changed (a log line was written): wakes the pages waiting.
    pub fn bump(&self) {
        self.version.send_modify(|v| *v += 1);
    }

    /// The current version.
    pub fn version(&self) -> u64 {
        *self.version.borrow()
    }

    /// Waits until the version passes `seen`, or `timeout`; returns the version.
    pub async fn changed_since(&self, seen: u64, timeout: Duration) -> u64 {
        let mut rx = self.version.subscribe();
        let _ = tokio::time::timeout(timeout, rx.wait_for(|v| *v > seen)).await;
        self.version()
    }

    /// A page showed the run as it was at `version` (it waits for what comes after).
    pub fn served(&self, version: u64) {
        let version = version.min(self.version());
        self.served
            .send_modify(|v| *v = Some(v.map_or(version, |old| old.max(version))));
    }

    /// Before the run's process ends (and the page's server with it): waits, at most
    /// `timeout`, until a page that watched the run has shown its last version, so the
    /// person sees how the run ended. With no page watching, returns at once; true when the
    /// last version reached a page (or none watched).
    pub async fn delivered(&self, timeout: Duration) -> bool {
        let last = self.version();
        let mut rx = self.served.subscribe();
        if rx.borrow().is_none() {
            return true;
        }
        tokio::time::timeout(timeout, rx.wait_for(|v| v.is_some_and(|v| v >= last)))
            .await
            .is_ok()
    }

    /// Asks the person; waits for the click. Cancelled, or the view gone: denied.
    pub async fn ask(&self, question: String, detail: Value, cancel: &CancellationToken) -> bool {
        let (tx, rx) = oneshot::channel();
        let id = {
            let Ok(mut state) = self.state.lock() else {
                return false;
            };
            state.next_id += 1;
            let id = state.next_id;
            let pending = Pending {
                id,
                question,
                detail,
            };
            state.pending.insert(id, (pending, tx));
            id
        };
        self.bump();
        let answer = tokio::select! {
            answer = rx => answer.ok(),
            () = cancel.cancelled() => None,
        };
        if answer.is_none() {
            self.settle(id, Answer::Deny, "cancelled");
        }
        answer.unwrap_or(false)
    }

    /// The page's answer to approval `id`; false when it is not pending (answered already).
    pub fn answer(&self, id: u64, answer: Answer) -> bool {
        self.settle(id, answer, "person")
    }

    fn settle(&self, id: u64, answer: Answer, by: &'static str) -> bool {
        let approved = answer == Answer::Approve;
        let settled = {
            let Ok(mut state) = self.state.lock() else {
                return false;
            };
            match state.pending.remove(&id) {
                None => false,
                Some((pending, tx)) => {
                    let _ = tx.send(approved);
                    state.decided.push(Decided {
                        id,
                        question: pending.question,
                        detail: pending.detail,
                        approved,
                        by,
                    });
                    true
                }
            }
        };
        if settled {
            self.bump();
        }
        settled
    }

    /// The approvals now.
    pub fn approvals(&self) -> Approvals {
        match self.state.lock() {
            Ok(state) => Approvals {
                pending: state.pending.values().map(|(p, _)| p.clone()).collect(),
                decided: state.decided.clone(),
            },
            Err(_) => Approvals {
                pending: Vec::new(),
                decided: Vec::new(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn a_click_reaches_the_one_who_asked_once() {
        let live = Live::default();
        let cancel = CancellationToken::new();
        let asker = {
            let live = live.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move { live.ask("Click?".into(), json!({}), &cancel).await })
        };
        let seen = live.changed_since(0, Duration::from_secs(5)).await;
        assert!(seen >= 1);
        let pending = live.approvals().pending;
        assert_eq!(pending.len(), 1);
        assert!(live.answer(pending[0].id, Answer::Approve));
        assert!(!live.answer(pending[0].id, Answer::Deny), "answered once");
        assert!(asker.await.unwrap());
        let approvals = live.approvals();
        assert!(approvals.pending.is_empty());
        assert!(approvals.decided[0].approved);
        assert_eq!(approvals.decided[0].by, "person");
    }

    #[tokio::test]
    async fn the_end_waits_for_a_watching_page_to_show_it() {
        let live = Live::default();
        assert!(live.delivered(Duration::ZERO).await, "nobody watches");
        live.served(live.version());
        live.bump();
        assert!(
            !live.delivered(Duration::from_millis(20)).await,
            "the page has not shown the last change"
        );
        let page = {
            let live = live.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                live.served(live.version());
            })
        };
        assert!(live.delivered(Duration::from_secs(5)).await);
        page.await.unwrap();
    }

    #[tokio::test]
    async fn a_cancelled_run_denies_what_it_was_asking() {
        let live = Live::default();
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert!(!live.ask("Click?".into(), json!({}), &cancel).await);
        assert_eq!(live.approvals().decided[0].by, "cancelled");
        assert!(live.approvals().pending.is_empty());
    }
}
