//! The network log of a run's trace (issue 22): the requests every tab made, allowed and
//! refused, with status and size, read after each action by whoever keeps the run's records. A
//! [`NetworkTap`] outlives the browser's handing to a toolset, as [`crate::wheel::BrowserWheel`]
//! does. What it reports is filtered as `read_diagnostics` filters it: no query, credentials,
//! headers or bodies.

use std::sync::Arc;

use crate::diagnostics::NetworkRecord;
use crate::driver::CdpBrowser;
use crate::events::Shared;

/// Reads the requests recorded since a point ([`NetworkTap::since`]).
#[derive(Clone)]
pub struct NetworkTap {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for NetworkTap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NetworkTap")
    }
}

impl CdpBrowser {
    /// A handle that reads this browser's network log after it was handed away.
    pub fn network_tap(&self) -> NetworkTap {
        NetworkTap {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl NetworkTap {
    /// The requests of every open tab recorded after `seq`, in the order recorded (a tab's
    /// history is bounded: what it dropped is not reported). Never waits.
    pub fn since(&self, seq: u64) -> Vec<NetworkRecord> {
        let state = self.shared.lock();
        let mut out: Vec<NetworkRecord> = state
            .tabs
            .iter()
            .flat_map(|t| t.rings.network_since(seq, t.id.as_str()))
            .collect();
        out.sort_by_key(|r| r.seq);
        out
    }
}
