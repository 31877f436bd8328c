//! Taking the wheel: a person may pause a run between turns, act on the desktop or browser
//! themselves, and give the run back. The runner knows nothing of how the person acts; it asks
//! its [`Wheel`] at each turn's end whether a person holds it, waits while they do, and adds the
//! note the wheel returns (what hands observed the person do) to the next request, saved with a
//! checkpoint and told to the journal.
//!
//! Where the run stops is chosen so no action is cut: after every call of a turn has been
//! answered and before the next request (a paused turn, which must go back unchanged, is
//! continued first). A person who asks for the wheel while an action runs or an approval waits
//! gets it when that turn ends.

use async_trait::async_trait;
use hands_core::CancellationToken;

/// A person's hold on a run, asked between turns ([`crate::Runner::set_wheel`]).
#[async_trait]
pub trait Wheel: Send + Sync {
    /// Returns at once when nobody asked for the wheel. Otherwise hands it to the person,
    /// returns when they give it back (or `cancel` fires), with the note for the model: what
    /// the person did, as observed. `None`: nobody took it (or nothing to tell).
    async fn between_turns(&self, cancel: &CancellationToken) -> Option<String>;
}
