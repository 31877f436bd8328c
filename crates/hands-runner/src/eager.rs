//! What eager execution is on both APIs: the order in which calls that streamed in are run.
//! Each provider says what its calls are ([`EagerCalls`]); [`EagerPass`] decides, call by call
//! as each completes, whether it runs now, alongside others, or not before the stream ends.
//!
//! The rules (Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución":
//! `eager`, `early_execution`, `before_early_call`, `max_concurrent_calls`; "Las ejecuciones
//! persistentes, las acciones del navegador y las acciones de la computadora mantienen el
//! orden"):
//! - a call runs early only when the policy allows it and the hook does not defer it; the first
//!   deferred call defers every later one (they run after the stream, in order);
//! - independent functions (without a ledger) run concurrently, at most `max_concurrent_calls`
//!   at a time; any other call first waits for every started one, then runs alone;
//! - once a call stops the run, or the run is cancelled, nothing more runs early.

use crate::functions::Job;
use crate::outcome::StopReason;
use crate::session::StepContext;

/// One provider's calls, as eager execution sees them.
pub(crate) trait EagerCalls {
    /// A complete call, as it streamed in.
    type Call;
    /// Whether a call or a check has stopped the run (nothing more runs early).
    fn has_stopped(&self) -> bool;
    /// Whether `call` may run now: the early-execution policy allows it and the
    /// `before_early_call` hook does not defer it.
    fn may_run_early(&mut self, ctx: &mut StepContext<'_>, call: &Self::Call) -> bool;
    /// Whether `call` may run concurrently with others.
    fn is_independent(&self, ctx: &StepContext<'_>, call: &Self::Call) -> bool;
    /// Approves and starts an independent call; `Ok(None)` when it was answered at once (a
    /// refusal, a function that could not start).
    async fn start_independent(
        &mut self,
        ctx: &mut StepContext<'_>,
        call: &Self::Call,
    ) -> Result<Option<Job>, StopReason>;
    /// Keeps `reason`, why `call` could not start, as the run's stop.
    fn stopped_at(&mut self, ctx: &mut StepContext<'_>, call: &Self::Call, reason: StopReason);
    /// Waits for every started call, in the order they started, keeping their answers (and
    /// the first stop one of them brings).
    async fn settle(&mut self, ctx: &mut StepContext<'_>, jobs: &mut Vec<Job>);
    /// Runs `call` alone, keeping its answer or the run's stop.
    async fn run_in_order(&mut self, ctx: &mut StepContext<'_>, call: &Self::Call);
}

/// One stream's eager execution: the calls started and not yet waited for, and whether a call
/// was deferred.
pub(crate) struct EagerPass {
    deferred: bool,
    max_jobs: usize,
    jobs: Vec<Job>,
}

impl EagerPass {
    /// A pass running at most `max_concurrent_calls` independent calls at once (at least one).
    pub(crate) fn new(max_concurrent_calls: usize) -> EagerPass {
        EagerPass {
            deferred: false,
            max_jobs: max_concurrent_calls.max(1),
            jobs: Vec::new(),
        }
    }

    /// Whether a call that completes now is still looked at: not once one was deferred, the
    /// run stopped or it was cancelled.
    pub(crate) fn open<C: EagerCalls>(&self, calls: &C, ctx: &StepContext<'_>) -> bool {
        !(self.deferred || calls.has_stopped() || ctx.cancel.is_cancelled())
    }

    /// Runs `call` now, starts it alongside others, or defers it (and every later one).
    pub(crate) async fn offer<C: EagerCalls>(
        &mut self,
        calls: &mut C,
        ctx: &mut StepContext<'_>,
        call: &C::Call,
    ) {
        if !self.open(calls, ctx) {
            return;
        }
        if !calls.may_run_early(ctx, call) {
            self.deferred = true;
            calls.settle(ctx, &mut self.jobs).await;
            return;
        }
        if calls.is_independent(ctx, call) {
            match calls.start_independent(ctx, call).await {
                Ok(Some(job)) => {
                    self.jobs.push(job);
                    if self.jobs.len() >= self.max_jobs {
                        calls.settle(ctx, &mut self.jobs).await;
                    }
                }
                Ok(None) => {}
                Err(reason) => {
                    calls.stopped_at(ctx, call, reason);
                    calls.settle(ctx, &mut self.jobs).await;
                }
            }
            return;
        }
        calls.settle(ctx, &mut self.jobs).await;
        if calls.has_stopped() {
            return;
        }
        calls.run_in_order(ctx, call).await;
    }

    /// Waits for every call still running: at the stream's end, and before a stream error
    /// stops the run (so the calls' records stay whole).
    pub(crate) async fn finish<C: EagerCalls>(&mut self, calls: &mut C, ctx: &mut StepContext<'_>) {
        calls.settle(ctx, &mut self.jobs).await;
    }
}
