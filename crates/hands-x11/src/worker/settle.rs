//! Settling: a screenshot waits until the client that got the last input has handled it, the
//! screen has changed if that input was expected to change it, and the screen is quiet.
//!
//! The same evidence that a client has handled its input (see `catchup`) guards the keymap: a
//! spare keycode pressed since the last proof is not rebound before the next one.

use std::time::{Duration, Instant};

use hands_core::CancellationToken;
use hands_core::desktop::{DesktopError, SettleBudget, SettleReport};
use x11rb::connection::Connection as _;

use super::XState;
use crate::X11Error;
use crate::catchup::Target;

/// Longest wait for a client to show it handled its input before a spare keycode it may not
/// have read is rebound (a client that takes longer is treated as caught up: it is hung).
pub(super) const PROOF_CAP: Duration = Duration::from_secs(3);
/// Longest wait, when the desktop drops, for the focused client to read its last keys before
/// the bindings are undone.
pub(super) const SHUTDOWN_PROOF_CAP: Duration = Duration::from_secs(2);
/// Without a ping or a process to watch: input and screen quiet this long count as the client
/// having caught up. 50 ms let a starved client fall behind on a loaded 2-core machine; 100 ms
/// held in repeated runs there.
const QUIET_PROOF: Duration = Duration::from_millis(100);
/// Longest wait for [`QUIET_PROOF`], for a screen that never stops changing.
const QUIET_PROOF_CAP: Duration = Duration::from_secs(1);
/// How often a process-state proof looks at `/proc`.
const IDLE_POLL: Duration = Duration::from_millis(1);
/// After input expected to change the screen (a key, a click), how long to wait for the first
/// change: above the 17 ms Chromium takes to repaint after a click under Xvfb.
const EXPECT_CHANGE: Duration = Duration::from_millis(20);
/// And at least this long after the client showed it handled the input: one frame at 60 Hz,
/// for a toolkit that paints on its next frame.
const EXPECT_AFTER_PROOF: Duration = Duration::from_millis(17);

/// When [`XState::prove_caught_up`] asks the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProofNeed {
    /// Only when a key or button was pressed since the last proof.
    AfterInput,
    /// Every time.
    Always,
}

/// How a client was shown to have handled its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Proof {
    /// Nothing was sent since the last proof.
    Already,
    /// No window receives the input.
    NoClient,
    /// It answered a ping.
    Pong,
    /// Its process and the X server's were asleep.
    Idle,
    /// Input and screen were quiet.
    Quiet,
    /// The cap ran out.
    TimedOut,
}

impl XState {
    /// Waits until the client that gets input aimed at `target` has handled everything sent so
    /// far (at most `cap`), and records that for the keymap. With [`ProofNeed::AfterInput`],
    /// returns at once when no key or button was pressed since the last proof.
    pub(crate) fn prove_caught_up(
        &mut self,
        target: Target,
        cap: Duration,
        need: ProofNeed,
    ) -> Result<Proof, X11Error> {
        let seq = self.input_seq;
        if seq <= self.proven_seq && need == ProofNeed::AfterInput {
            return Ok(Proof::Already);
        }
        let start = Instant::now();
        let deadline = start + cap;
        // The server has the input once a round trip returns, and has written the events to
        // the client once a second one does (it flushes every client before the next request).
        self.sync()?;
        self.sync()?;
        let proof = match self.catchup.client(&self.conn, target)? {
            None => Proof::NoClient,
            Some(client) if client.ping => {
                let token = self.catchup.ping(&self.conn, client)?;
                self.conn.flush()?;
                self.wait_until(deadline, |s| s.catchup.answered(token));
                if self.catchup.answered(token) {
                    Proof::Pong
                } else {
                    Proof::TimedOut
                }
            }
            Some(client) if self.catchup.idle(client).is_some() => {
                let mut idle_samples = 0;
                loop {
                    if self.catchup.idle(client) == Some(true) {
                        idle_samples += 1;
                        if idle_samples == 2 {
                            break Proof::Idle;
                        }
                    } else {
                        idle_samples = 0;
                    }
                    if Instant::now() >= deadline {
                        break Proof::TimedOut;
                    }
                    self.wait_readable(IDLE_POLL);
                    self.pump_events();
                }
            }
            Some(_) => {
                let cap = deadline.min(start + QUIET_PROOF_CAP);
                self.wait_until(cap, |s| {
                    Instant::now() >= s.last_input.max(s.last_change) + QUIET_PROOF
                });
                Proof::Quiet
            }
        };
        if proof == Proof::TimedOut {
            tracing::warn!(
                ?target,
                waited_ms = start.elapsed().as_millis() as u64,
                "the client did not show it handled its input in time"
            );
        }
        self.proven_seq = seq;
        tracing::trace!(
            ?target,
            ?proof,
            waited_ms = start.elapsed().as_secs_f64() * 1e3,
            "client caught up"
        );
        Ok(proof)
    }

    /// Handles events until `done` holds or `deadline` passes.
    fn wait_until(&mut self, deadline: Instant, done: impl Fn(&XState) -> bool) {
        loop {
            self.pump_events();
            if done(self) {
                return;
            }
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            self.wait_readable((deadline - now).min(Duration::from_millis(50)));
        }
    }

    pub(crate) fn settle(
        &mut self,
        budget: SettleBudget,
        cancel: &CancellationToken,
    ) -> Result<SettleReport, DesktopError> {
        if self.damage.is_none() {
            return self.settle_by_frames(budget, cancel);
        }
        let start = Instant::now();
        let cap = start + budget.cap;
        let changes_before = self.n_changes;
        self.pump_events();
        let pending = std::mem::take(&mut self.pending);
        let mut proved_at = None;
        for (wanted, target) in [
            (pending.keyboard, Target::Keyboard),
            (pending.pointer, Target::Pointer),
        ] {
            if wanted {
                let left = cap.saturating_duration_since(Instant::now());
                self.prove_caught_up(target, left.min(PROOF_CAP), ProofNeed::Always)?;
                proved_at = Some(Instant::now());
            }
            if cancel.is_cancelled() {
                return Err(DesktopError::Cancelled);
            }
        }
        // The change the input is expected to cause.
        if pending.expect_change && self.n_changes == self.changes_at_input {
            let mut deadline = self.last_input + EXPECT_CHANGE;
            if let Some(at) = proved_at {
                deadline = deadline.max(at + EXPECT_AFTER_PROOF);
            }
            let changes = self.changes_at_input;
            self.wait_until(deadline.min(cap), |s| s.n_changes != changes);
        }
        // Then quiet.
        let settled = loop {
            self.pump_events();
            let quiet_until = self.last_change + budget.quiet;
            let now = Instant::now();
            if now >= quiet_until || self.n_changes == self.changes_at_input {
                break true;
            }
            if now >= cap {
                break false;
            }
            if cancel.is_cancelled() {
                return Err(DesktopError::Cancelled);
            }
            // Wake at least every 50 ms to notice cancellation.
            self.wait_readable((quiet_until.min(cap) - now).min(Duration::from_millis(50)));
        };
        Ok(SettleReport {
            waited: start.elapsed(),
            n_changes: self.n_changes.wrapping_sub(changes_before),
            settled,
        })
    }

    /// Without DAMAGE: settled once two captures `quiet` apart are identical.
    fn settle_by_frames(
        &mut self,
        budget: SettleBudget,
        cancel: &CancellationToken,
    ) -> Result<SettleReport, DesktopError> {
        let start = Instant::now();
        let step = (budget.quiet / 2).max(Duration::from_millis(5));
        let mut previous = self.capture()?;
        let mut stable_since = Instant::now();
        let mut n_changes = 0;
        loop {
            if cancel.is_cancelled() {
                return Err(DesktopError::Cancelled);
            }
            if stable_since.elapsed() >= budget.quiet && self.last_input.elapsed() >= budget.quiet {
                return Ok(SettleReport {
                    waited: start.elapsed(),
                    n_changes,
                    settled: true,
                });
            }
            if start.elapsed() >= budget.cap {
                return Ok(SettleReport {
                    waited: start.elapsed(),
                    n_changes,
                    settled: false,
                });
            }
            // Polling interval between frame comparisons, not a settle delay.
            std::thread::sleep(step);
            let frame = self.capture()?;
            if frame != previous {
                n_changes += 1;
                stable_since = Instant::now();
                previous = frame;
            }
        }
    }
}
