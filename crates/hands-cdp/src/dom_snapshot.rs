//! DOM snapshots for a run's trace (issue 22): after each action, the active tab's document
//! serialized as HTML by `dom_snapshot.js` in an isolated world — open shadow roots as
//! declarative templates, frames noted, no script contents, no event-handler attributes, no
//! password value. A [`DomTap`] outlives the browser's handing to a toolset, as
//! [`crate::network_tap::NetworkTap`] does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::driver::CdpBrowser;
use crate::events::Shared;

/// The serializer: a function of the most characters to write.
const DOM_SNAPSHOT_JS: &str = include_str!("dom_snapshot.js");
/// The isolated world the serializer runs in.
pub const DOM_WORLD: &str = "__hands_dom";
/// The most characters a snapshot holds; a larger document is cut, with a note.
pub const MAX_SNAPSHOT_CHARS: usize = 2 << 20;
/// How long one snapshot may take.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a snapshot waits for the tab's requests in flight to end: an action answers before
/// the requests it caused end (the tab's next call waits for them), and the trace should show
/// what they did.
const REQUESTS_WAIT: Duration = Duration::from_secs(2);
/// A request in flight for longer (a long poll, a stream) is not waited for.
const LONG_REQUEST: Duration = Duration::from_secs(5);

/// Takes DOM snapshots of the active tab ([`DomTap::snapshot`]).
#[derive(Clone)]
pub struct DomTap {
    shared: Arc<Shared>,
    /// The isolated world of the last snapshot, reused while its document lasts: a new world
    /// per snapshot would pile up one per action in a long-lived document.
    world: Arc<Mutex<Option<World>>>,
    /// How many isolated worlds it made.
    worlds_made: Arc<AtomicU64>,
}

/// An isolated world the serializer ran in: the tab's session, the document (its commit count)
/// and the execution context.
#[derive(Debug, Clone, PartialEq)]
struct World {
    session: crate::connection::SessionId,
    commits: u64,
    context: i64,
}

impl std::fmt::Debug for DomTap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DomTap")
    }
}

impl CdpBrowser {
    /// A handle that takes DOM snapshots after the browser was handed away.
    pub fn dom_tap(&self) -> DomTap {
        DomTap {
            shared: Arc::clone(&self.shared),
            world: Arc::default(),
            worlds_made: Arc::default(),
        }
    }
}

impl DomTap {
    /// The active tab's document as HTML (scripts dropped, no password value), or `None` when
    /// there is no ready tab or the page did not answer in time.
    pub async fn snapshot(&self) -> Option<String> {
        self.requests_done().await;
        let (session, frame, commits) = {
            let state = self.shared.lock();
            let tab = state.tab(state.active.as_ref()?)?;
            if !tab.ready || tab.crashed {
                return None;
            }
            (
                tab.session.clone(),
                tab.target_id.clone(),
                tab.doc.n_commits,
            )
        };
        let cached = self
            .world
            .lock()
            .ok()
            .and_then(|w| w.clone())
            .filter(|w| w.session == session && w.commits == commits);
        if let Some(world) = cached
            && let Some(html) = self.serialize(&world).await
        {
            return Some(html);
        }
        // No world for this document yet, or it is gone (the document was replaced).
        let made = self
            .shared
            .conn
            .call_with(
                Some(&session),
                "Page.createIsolatedWorld",
                json!({"frameId": frame, "worldName": DOM_WORLD}),
                SNAPSHOT_TIMEOUT,
                None,
            )
            .await
            .ok()?;
        self.worlds_made.fetch_add(1, Ordering::Relaxed);
        let world = World {
            session,
            commits,
            context: made.get("executionContextId")?.as_i64()?,
        };
        if let Ok(mut kept) = self.world.lock() {
            *kept = Some(world.clone());
        }
        self.serialize(&world).await
    }

    /// How many isolated worlds the snapshots so far were taken in: one per document, unless a
    /// world went away under it.
    pub fn worlds_made(&self) -> u64 {
        self.worlds_made.load(Ordering::Relaxed)
    }

    /// Runs the serializer in `world`.
    async fn serialize(&self, world: &World) -> Option<String> {
        let answer = self
            .shared
            .conn
            .call_with(
                Some(&world.session),
                "Runtime.callFunctionOn",
                json!({
                    "functionDeclaration": DOM_SNAPSHOT_JS,
                    "executionContextId": world.context,
                    "arguments": [{"value": MAX_SNAPSHOT_CHARS}],
                    "returnByValue": true,
                }),
                SNAPSHOT_TIMEOUT,
                None,
            )
            .await
            .ok()?;
        answer
            .pointer("/result/value")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// Waits until the active tab has no request in flight (younger than [`LONG_REQUEST`]), at
    /// most [`REQUESTS_WAIT`].
    async fn requests_done(&self) {
        let deadline = tokio::time::Instant::now() + REQUESTS_WAIT;
        let mut changed = self.shared.changed.subscribe();
        loop {
            let busy = {
                let state = self.shared.lock();
                let now = tokio::time::Instant::now();
                state
                    .active
                    .as_ref()
                    .and_then(|id| state.tab(id))
                    .is_some_and(|tab| {
                        tab.inflight
                            .values()
                            .any(|started| now.duration_since(*started) < LONG_REQUEST)
                    })
            };
            if !busy {
                return;
            }
            tokio::select! {
                r = changed.changed() => if r.is_err() { return },
                () = tokio::time::sleep_until(deadline) => return,
            }
        }
    }
}
