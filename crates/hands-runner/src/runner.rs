//! The [`Runner`]: request → execute every call of the turn → answer them all → repeat, until the
//! model stops calling tools or the step limit is reached.
//!
//! Spec: openai-browser-desktop-drivers, "Limitar una ejecución", "Medir el uso", "Cerrar y
//! cancelar operaciones", "Manejar fallos"; claude-computer-use-tool, "Comprende el ciclo del
//! agente".

use std::sync::Mutex as StdMutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use hands_core::{CancellationToken, Desktop};
use hands_models::anthropic::AnthropicClient;
use hands_models::openai::OpenAiClient;
use hands_toolset::computer::ComputerToolset;
use hands_toolset::computer_call::ComputerCallExecutor;
use tokio::sync::Mutex;

use crate::anthropic::{AnthropicSession, AnthropicSettings};
use crate::approval::Approver;
use crate::checkpoint::{Checkpoints, TurnLog};
use crate::control::{BeforeEarlyCall, Gate, OnEvent, RunEvent, TurnError, TurnStream};
use crate::diagnostics::{Observer, Reason, Record, Stage, UsageTotals, emit};
use crate::edits::{EditError, RunEdit};
use crate::journal::Journal;
use crate::ledger::{CheckpointStatus, Ledger, ResumePlan, RunEnd, RunIdentity, plan_resume};
use crate::openai::{OpenAiSession, OpenAiSettings};
use crate::outcome::{ApiStop, RunError, RunOutcome, RunStatus, StopReason};
use crate::session::{Session, StepContext, StepResult};
use crate::tools::Toolbox;
use crate::wheel::Wheel;

/// The default step limit: 20 requests.
pub const DEFAULT_MAX_STEPS: u32 = 20;

/// Limits of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunConfig {
    /// Requests allowed; the last one cannot start new effects.
    pub max_steps: u32,
}

impl Default for RunConfig {
    fn default() -> RunConfig {
        RunConfig {
            max_steps: DEFAULT_MAX_STEPS,
        }
    }
}

struct State {
    session: Box<dyn Session>,
    toolbox: Toolbox,
    approver: Option<Box<dyn Approver>>,
    observer: Option<Observer>,
    journal: Option<Box<dyn Journal>>,
    checkpoints: Option<Checkpoints>,
    config: RunConfig,
    prepared: bool,
    on_event: Option<OnEvent>,
    before_early_call: Option<BeforeEarlyCall>,
    wheel: Option<Box<dyn Wheel>>,
}

/// What [`Runner::close`] found: the one close status of hands, shared with the browser
/// toolset (`closed`, or `draining` while a run started before may still produce effects: wait
/// for its `run` call to return before closing the desktop or browser or handing them on).
///
/// Spec: openai-browser-desktop-drivers, "Cerrar y cancelar operaciones" (`close()` → `closed`
/// or `draining`).
pub use hands_toolset::browser::CloseStatus;

/// One runner serves one model API and one set of tools. It refuses a second run while one is
/// active; sequential runs continue the same conversation. [`Runner::close`] stops admission.
pub struct Runner {
    state: Mutex<State>,
    queued: StdMutex<crate::control::Queue>,
    /// Mid-run edits waiting for the end of the turn under way, each with the request it must
    /// precede (0: the next one).
    edits: StdMutex<Vec<(u32, RunEdit)>>,
    closed: AtomicBool,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner").finish_non_exhaustive()
    }
}

impl Runner {
    fn with_session(session: Box<dyn Session>, toolbox: Toolbox, config: RunConfig) -> Runner {
        Runner {
            state: Mutex::new(State {
                session,
                toolbox,
                approver: None,
                observer: None,
                journal: None,
                checkpoints: None,
                config,
                prepared: false,
                on_event: None,
                before_early_call: None,
                wheel: None,
            }),
            queued: StdMutex::new(crate::control::Queue::default()),
            edits: StdMutex::new(Vec::new()),
            closed: AtomicBool::new(false),
        }
    }

    /// Stops admission: every later `run` or `resume` is refused with [`RunError::Closed`]. A run
    /// already under way goes on (cancel it with its token to stop it): the status says
    /// `Draining` while one may, `Closed` otherwise. The runner never closes the desktop or
    /// browser it drives — they stay their owner's. Never waits, so it may be called from an
    /// approver or a function of the run itself.
    pub fn close(&self) -> CloseStatus {
        self.closed.store(true, Ordering::SeqCst);
        match self.state.try_lock() {
            Ok(_) => CloseStatus::Closed,
            Err(_) => CloseStatus::Draining,
        }
    }

    /// Waits until no run is under way on this runner (returns at once when none is): after
    /// [`Runner::close`], the end of the drain. Never call it from inside a run of this runner
    /// (an approver, a function or an event callback): it would wait for itself.
    pub async fn drained(&self) {
        drop(self.state.lock().await);
    }

    /// [`Runner::close`], then [`Runner::drained`]: admission stops, and this returns once the
    /// run under way (if any) has ended. Cancel the run's token to make that sooner.
    pub async fn close_and_drain(&self) {
        self.close();
        self.drained().await;
    }

    /// Takes the runner for one run: refused while another run is active or once closed.
    fn admit(&self) -> Result<tokio::sync::MutexGuard<'_, State>, RunError> {
        let guard = self.state.try_lock().map_err(|_| RunError::Busy)?;
        if self.closed.load(Ordering::SeqCst) {
            return Err(RunError::Closed);
        }
        Ok(guard)
    }

    /// A runner on the Anthropic Messages API. `computer` is the computer toolset (any of its
    /// shapes) over the run's desktop, if the run has one.
    pub fn anthropic(
        client: AnthropicClient,
        settings: AnthropicSettings,
        computer: Option<ComputerToolset<Box<dyn Desktop>>>,
        toolbox: Toolbox,
        config: RunConfig,
    ) -> Runner {
        Runner::with_session(
            Box::new(AnthropicSession::new(client, settings, computer)),
            toolbox,
            config,
        )
    }

    /// A runner on the OpenAI Responses API with the computer tool over `computer`, if any.
    pub fn openai(
        client: OpenAiClient,
        settings: OpenAiSettings,
        computer: Option<ComputerCallExecutor<Box<dyn Desktop>>>,
        toolbox: Toolbox,
        config: RunConfig,
    ) -> Runner {
        Runner::with_session(
            Box::new(OpenAiSession::new(client, settings, computer)),
            toolbox,
            config,
        )
    }

    /// Sets the approver of the run's effects (computer actions and safety checks, bash, the
    /// text editor, ordinary functions; see [`crate::approval`]).
    pub fn set_approver(&mut self, approver: Box<dyn Approver>) {
        self.state.get_mut().approver = Some(approver);
    }

    /// Sets the diagnostics observer.
    pub fn set_observer(&mut self, observer: Observer) {
        self.state.get_mut().observer = Some(observer);
    }

    /// Sets the journal.
    pub fn set_journal(&mut self, journal: Box<dyn Journal>) {
        self.state.get_mut().journal = Some(journal);
    }

    /// Sets the checkpoint ledger of this run: every step saved, so the run can be resumed by
    /// [`Runner::resume`] after its process ends. A run keeps one ledger, and a ledger one run.
    pub fn set_ledger(&mut self, ledger: Box<dyn Ledger>) {
        self.state.get_mut().checkpoints = Some(Checkpoints::new(ledger));
    }

    /// Sets the `on_event` callback: it receives every [`RunEvent`] of the run as its own copy.
    ///
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" (`on_event`).
    pub fn set_on_event(&mut self, on_event: OnEvent) {
        self.state.get_mut().on_event = Some(on_event);
    }

    /// Sets the wheel a person may take between turns ([`crate::wheel`]): asked at the end of
    /// each turn; while a person holds it the run waits; the note it returns goes, as the user's
    /// text, into the next request, saved in the ledger and told to the journal.
    pub fn set_wheel(&mut self, wheel: Box<dyn Wheel>) {
        self.state.get_mut().wheel = Some(wheel);
    }

    /// Sets the `before_early_call` hook: asked about each completed streamed call the
    /// early-execution policy lets run early; it may defer it (and so every later call of the
    /// response). With eager execution and no policy, the hook makes every local call a
    /// candidate, as if the policy named them all.
    ///
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución"
    /// (`before_early_call`).
    pub fn set_before_early_call(&mut self, hook: BeforeEarlyCall) {
        self.state.get_mut().before_early_call = Some(hook);
    }

    /// Queues a person's text: it is added after the pending tool outputs of the turn under way.
    /// It does not reset the step limit. Refused unless a turn is open — its response has calls
    /// that run and its answer is not yet sent ([`TurnError::NoOpenTurn`]): between runs, while a
    /// request is under way or during a final turn the text could never reach the model (it
    /// would land in a later run). Text of a turn the run then abandons (it stopped) goes with it.
    pub fn append_user_text(&self, text: impl Into<String>) -> Result<(), TurnError> {
        let text = text.into();
        if text.trim().is_empty() {
            return Err(TurnError::EmptyText);
        }
        let mut queue = self.queued.lock().unwrap_or_else(|e| e.into_inner());
        if !queue.open {
            return Err(TurnError::NoOpenTurn);
        }
        queue.texts.push(text);
        Ok(())
    }

    /// Queues a mid-run edit (see [`crate::edits`]): new request parameters, tools added or
    /// removed by name, a compaction before the next turn (Claude). It applies before the next
    /// request that starts a turn — never inside one — and is saved with a checkpoint at once, so
    /// a resumed run sends what this one would have. Edits queued before a run apply before its
    /// first request. An edit the run cannot apply (a tool it was not built with, a compaction on
    /// OpenAI) stops the run before that request ([`StopReason::EditRefused`]).
    ///
    /// The SDKs' `set_messages_params`, `add_tools`, `remove_tools` and
    /// `compact_before_next_turn` (issue 19, "mid-run control").
    pub fn edit(&self, edit: RunEdit) -> Result<(), EditError> {
        self.queue_edit(0, edit)
    }

    /// [`Runner::edit`], held until request `step` (counted from 1 in the run, a resumed run
    /// counting the requests its ledger says were made): it applies before that request, at the
    /// end of the turn before it (or, when a turn is still open then, at the end of that turn).
    /// A step already passed is skipped: a run resumed past it has its effect in the state the
    /// ledger gave back. What `hands run --edits` schedules.
    pub fn edit_before_step(&self, step: u32, edit: RunEdit) -> Result<(), EditError> {
        if step == 0 {
            return Err(EditError::ZeroStep);
        }
        self.queue_edit(step, edit)
    }

    fn queue_edit(&self, step: u32, edit: RunEdit) -> Result<(), EditError> {
        edit.check()?;
        if self.closed.load(Ordering::SeqCst) {
            return Err(EditError::Closed);
        }
        self.edits
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((step, edit));
        Ok(())
    }

    /// Applies the queued edits due before request `steps_used + 1`, then saves the conversation
    /// with them.
    fn apply_edits(&self, state: &mut State, steps_used: u32) -> Result<(), StopReason> {
        let edits: Vec<RunEdit> = {
            let mut queue = self.edits.lock().unwrap_or_else(|e| e.into_inner());
            let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut *queue)
                .into_iter()
                .partition(|(step, _)| *step <= steps_used + 1);
            *queue = later;
            due.into_iter()
                .filter(|(step, _)| *step == 0 || *step > steps_used)
                .map(|(_, edit)| edit)
                .collect()
        };
        if edits.is_empty() {
            return Ok(());
        }
        for edit in &edits {
            state
                .session
                .apply_edit(edit)
                .map_err(StopReason::EditRefused)?;
        }
        save_completed(state, steps_used)
    }

    /// No turn takes text, and none is waiting.
    fn close_queue(&self) {
        let mut queue = self.queued.lock().unwrap_or_else(|e| e.into_inner());
        queue.open = false;
        queue.texts.clear();
    }

    /// Runs `task` until the model finishes, the step limit holds, or the run stops. Refused when
    /// another run is active on this runner, and when its ledger already holds another run's
    /// checkpoints (resume that run instead).
    pub async fn run(
        &self,
        task: &str,
        cancel: &CancellationToken,
    ) -> Result<RunOutcome, RunError> {
        self.run_with(task, cancel, None).await
    }

    /// Runs `task` turn by turn: each completed response is handed out as a
    /// [`crate::control::Turn`] before its deferred calls run (calls already run eagerly while
    /// it streamed are marked tried). The caller may supply outputs and append text, then
    /// advances with [`TurnStream::next_turn`], or ends with [`TurnStream::close`] (no deferred
    /// call runs). Refused as [`Runner::run`] is, when the stream is first advanced.
    ///
    /// ```no_run
    /// # async fn demo(runner: hands_runner::Runner) -> Result<(), hands_runner::RunError> {
    /// let cancel = Default::default();
    /// let mut turns = runner.iterate("Book a room.", &cancel);
    /// while let Some(turn) = turns.next_turn().await {
    ///     if !turn.final_turn {
    ///         let _ = turn.append_user_text("Prefer the 12th.");
    ///     }
    /// }
    /// let outcome = turns.finish().await?;
    /// # let _ = outcome; Ok(()) }
    /// ```
    ///
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" (`iterate()`).
    pub fn iterate<'r>(
        &'r self,
        task: impl Into<String>,
        cancel: &'r CancellationToken,
    ) -> TurnStream<'r> {
        let task = task.into();
        let (gate, turns) = tokio::sync::mpsc::unbounded_channel();
        TurnStream::new(
            Box::pin(async move { self.run_with(&task, cancel, Some(gate)).await }),
            turns,
        )
    }

    async fn run_with(
        &self,
        task: &str,
        cancel: &CancellationToken,
        gate: Option<Gate>,
    ) -> Result<RunOutcome, RunError> {
        let mut guard = self.admit()?;
        let state = &mut *guard;
        let continuing = state.prepared;
        prepare(state)?;
        if let (Some(identity), Some(checkpoints)) =
            (identity_of(state), state.checkpoints.as_mut())
        {
            let ledger = checkpoints.ledger();
            let saved = ledger
                .latest_revision()
                .map_err(|e| RunError::Ledger(e.to_string()))?;
            if saved > 0 && !continuing {
                return Err(RunError::Ledger(format!(
                    "this ledger already holds run {} ({saved} checkpoints): resume it, or give the new run a new ledger",
                    ledger.run_id()
                )));
            }
            checkpoints
                .start(identity)
                .map_err(|e| RunError::Ledger(e.to_string()))?;
        }
        state.session.add_task(task)?;
        Ok(self.drive(state, 0, cancel, gate.as_ref()).await)
    }

    /// Resumes the run its ledger holds ([`Runner::set_ledger`]), with the requests it had left,
    /// on this runner (a new process, a new desktop). Refused when this runner is not that
    /// run's identity (another model, step limit or set of tools: the error names what
    /// changed), when the saved tools hold a raw MCP server URL, while a call of the last turn
    /// may or may not have taken effect ([`crate::ledger::reconcile`] it first), and when the
    /// run has nothing left to do. Nothing that may have taken effect runs again; see
    /// [`crate::ledger::plan_resume`] for where the run starts. The model is told that the run
    /// resumed, with a screenshot of the desktop when the run has one.
    ///
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución".
    pub async fn resume(&self, cancel: &CancellationToken) -> Result<RunOutcome, RunError> {
        self.resume_with(cancel, None).await
    }

    /// [`Runner::resume`], turn by turn as [`Runner::iterate`]: each completed response of the
    /// resumed run is handed out before its deferred calls run. Refused as `resume` is, when
    /// the stream is first advanced.
    pub fn iterate_resumed<'r>(&'r self, cancel: &'r CancellationToken) -> TurnStream<'r> {
        let (gate, turns) = tokio::sync::mpsc::unbounded_channel();
        TurnStream::new(
            Box::pin(async move { self.resume_with(cancel, Some(gate)).await }),
            turns,
        )
    }

    async fn resume_with(
        &self,
        cancel: &CancellationToken,
        gate: Option<Gate>,
    ) -> Result<RunOutcome, RunError> {
        let mut guard = self.admit()?;
        let state = &mut *guard;
        prepare(state)?;
        let identity = identity_of(state);
        let (Some(checkpoints), Some(identity)) = (state.checkpoints.as_mut(), identity) else {
            return Err(RunError::Config(
                "resuming needs the run's ledger: set_ledger first".into(),
            ));
        };
        let ledger_err = |e: crate::ledger::LedgerError| RunError::Ledger(e.to_string());
        let ledger = checkpoints.ledger();
        let latest = ledger
            .latest()
            .map_err(ledger_err)?
            .ok_or_else(|| RunError::NothingToResume("the ledger holds no checkpoint".into()))?;
        let raw = crate::ledger::sanitize::raw_mcp_entries(&latest.identity.tools);
        if !raw.is_empty() {
            return Err(RunError::Ledger(format!(
                "the checkpoint holds the raw URL or credentials of MCP server(s) {}: it cannot be resumed; start a new run",
                raw.join(", ")
            )));
        }
        let changes = identity.changes_from(&latest.identity);
        if !changes.is_empty() {
            return Err(RunError::IdentityChanged(changes));
        }
        match ledger.end().map_err(ledger_err)? {
            Some(RunEnd::Finished) if latest.pending().is_none() => {
                return Err(RunError::NothingToResume(
                    "this run finished (give it a new task to go on)".into(),
                ));
            }
            Some(RunEnd::StepLimit) if latest.pending().is_none() => {
                return Err(RunError::NothingToResume(format!(
                    "this run ended at its step limit ({} requests): nothing is sent again; \
                     start a new run to go on",
                    latest.identity.max_steps
                )));
            }
            _ => {}
        }
        let completed = match latest.status {
            CheckpointStatus::Completed => None,
            CheckpointStatus::Pending(_) => ledger.latest_completed().map_err(ledger_err)?,
        };
        let plan = plan_resume(latest, completed)?;
        let steps = plan.steps_used();
        if steps >= state.config.max_steps {
            return Err(RunError::NothingToResume(format!(
                "this run has used all {} of its requests",
                state.config.max_steps
            )));
        }
        match &plan {
            ResumePlan::FromCompleted(checkpoint) => {
                state.session.restore(&checkpoint.conversation)?;
            }
            ResumePlan::RetryTurn { from, .. } => {
                state.session.restore(&from.conversation)?;
            }
            ResumePlan::CloseTurn(checkpoint) => {
                state.session.restore(&checkpoint.conversation)?;
                if let Some(turn) = checkpoint.pending() {
                    state.session.close_turn(turn, cancel).await?;
                }
            }
        }
        if !state.session.awaits_request() {
            return Err(RunError::NothingToResume(
                "the conversation ends with the model's final answer".into(),
            ));
        }
        state.session.note_resumed(cancel).await?;
        if let Some(checkpoints) = state.checkpoints.as_mut() {
            checkpoints.start(identity).map_err(ledger_err)?;
        }
        Ok(self.drive(state, steps, cancel, gate.as_ref()).await)
    }

    /// The loop, from `steps_used` requests already made.
    async fn drive(
        &self,
        state: &mut State,
        steps_used: u32,
        cancel: &CancellationToken,
        gate: Option<&Gate>,
    ) -> RunOutcome {
        let mut usage = UsageTotals::default();
        let mut executed = Vec::new();
        let mut completed = Vec::new();
        let mut steps = steps_used;
        let mut final_text = String::new();
        let mut api_stop: Option<ApiStop> = None;
        let api = state.session.api();
        let started = Instant::now();
        self.close_queue();
        emit(
            &mut state.observer,
            &Record::new(api, Stage::Run, Reason::Started, std::time::Duration::ZERO),
        );
        // Approvals due before the first request (renewed MCP approvals, MCP servers the API
        // calls unasked) are asked before anything is saved or sent. The starting point is the
        // end of a completed turn (the task just added, or the checkpoint resumed from).
        let approvals = state
            .session
            .before_first_request(&mut state.approver, cancel)
            .await;
        let saved = approvals.and_then(|()| save_completed(state, steps));
        let status = loop {
            if let Err(reason) = &saved {
                break RunStatus::Stopped(reason.clone());
            }
            if cancel.is_cancelled() {
                break RunStatus::Stopped(StopReason::Cancelled);
            }
            if steps >= state.config.max_steps {
                break RunStatus::StepLimit;
            }
            // A paused turn (or a compaction alone) is continued before any edit applies, and
            // before a person may take the wheel.
            if !state.session.mid_turn() {
                if let Err(reason) = hand_off(state, steps, cancel).await {
                    break RunStatus::Stopped(reason);
                }
                if cancel.is_cancelled() {
                    break RunStatus::Stopped(StopReason::Cancelled);
                }
                if let Err(reason) = self.apply_edits(state, steps) {
                    break RunStatus::Stopped(reason);
                }
            }
            steps += 1;
            let last_allowed = steps == state.config.max_steps;
            if let Some(on_event) = state.on_event.as_mut() {
                on_event(RunEvent::RequestStarted { step: steps });
            }
            let mut ctx = StepContext {
                toolbox: &mut state.toolbox,
                approver: &mut state.approver,
                observer: &mut state.observer,
                journal: &mut state.journal,
                cancel,
                queued: &self.queued,
                step: steps,
                usage: &mut usage,
                executed: &mut executed,
                completed: &mut completed,
                gate,
                on_event: &mut state.on_event,
                before_early_call: &mut state.before_early_call,
                checkpoints: &mut state.checkpoints,
                api_stop: &mut api_stop,
                turn: TurnLog::default(),
                api,
            };
            match state.session.step(&mut ctx, last_allowed).await {
                // A paused turn (Claude) began no turn: its request is settled as answered.
                Ok(StepResult::Continue) => ctx.settle_mcp_request(None),
                Ok(StepResult::Paused) => {
                    ctx.settle_mcp_request(None);
                    if let Err(reason) = save_completed(state, steps) {
                        break RunStatus::Stopped(reason);
                    }
                }
                // A text answer is a finish, on the last allowed request too (sent with tool
                // choice `none`, the model sums up there): as the SDKs' runners end.
                Ok(StepResult::Finished(text)) => {
                    final_text = text;
                    break RunStatus::Finished;
                }
                Ok(StepResult::StepLimit(text)) => {
                    ctx.settle_mcp_request(None);
                    final_text = text;
                    break RunStatus::StepLimit;
                }
                Err(reason) => {
                    ctx.settle_mcp_request(Some(&reason));
                    break RunStatus::Stopped(reason);
                }
            }
        };
        // A finished run ends a completed turn too: a later task may continue from it. So does
        // a run at its step limit (its last answer's calls are answered as not executed): a
        // resume must never send that last request again.
        let status = match status {
            ended @ (RunStatus::Finished | RunStatus::StepLimit) => {
                match save_completed(state, steps) {
                    Ok(()) => ended,
                    Err(reason) => RunStatus::Stopped(reason),
                }
            }
            other => other,
        };
        emit(
            &mut state.observer,
            &Record::new(api, Stage::Run, status.reason(), started.elapsed()),
        );
        if let Some(checkpoints) = state.checkpoints.as_mut() {
            checkpoints.record_end(&match &status {
                RunStatus::Finished => RunEnd::Finished,
                RunStatus::StepLimit => RunEnd::StepLimit,
                RunStatus::Stopped(why) => RunEnd::Stopped(why.to_string()),
            });
        }
        // Text of a turn the run abandoned never reaches a later run.
        self.close_queue();
        if let Some(on_event) = state.on_event.as_mut() {
            on_event(RunEvent::Ended {
                status: status.clone(),
            });
        }
        RunOutcome {
            status,
            steps,
            final_text,
            usage,
            executed_call_ids: executed,
            completed_call_ids: completed,
            api_stop,
        }
    }
}

/// Builds the declarations once, and refuses a run that needs an approver without one (known
/// from the declarations: an MCP server that asks).
fn prepare(state: &mut State) -> Result<(), RunError> {
    if !state.prepared {
        state.session.prepare(&state.toolbox)?;
        state.prepared = true;
    }
    if state.approver.is_none()
        && let Some(why) = state.session.needs_approver()
    {
        return Err(RunError::Config(why));
    }
    Ok(())
}

/// Between turns: waits while a person holds the wheel; their note goes into the conversation,
/// the journal and a checkpoint.
async fn hand_off(
    state: &mut State,
    steps_used: u32,
    cancel: &CancellationToken,
) -> Result<(), StopReason> {
    let Some(wheel) = state.wheel.as_ref() else {
        return Ok(());
    };
    let Some(note) = wheel.between_turns(cancel).await else {
        return Ok(());
    };
    state
        .session
        .add_person_note(&note)
        .map_err(|e| StopReason::HandOffFailed(e.to_string()))?;
    if let Some(journal) = state.journal.as_mut() {
        journal.record(crate::journal::Entry::HandOff {
            step: steps_used,
            note: &note,
        });
    }
    if let Some(on_event) = state.on_event.as_mut() {
        on_event(RunEvent::UserText { text: note.clone() });
    }
    save_completed(state, steps_used)
}

/// Saves a completed checkpoint of the conversation, when the run keeps a ledger.
fn save_completed(state: &mut State, steps_used: u32) -> Result<(), StopReason> {
    let Some(checkpoints) = state.checkpoints.as_mut() else {
        return Ok(());
    };
    checkpoints.save(
        steps_used,
        CheckpointStatus::Completed,
        state.session.snapshot(),
    )
}

/// The identity of the run this runner makes, once prepared (when it keeps a ledger).
fn identity_of(state: &mut State) -> Option<RunIdentity> {
    let run_id = state.checkpoints.as_mut()?.ledger().run_id().to_owned();
    Some(RunIdentity::new(
        run_id,
        state.session.api().name(),
        state.session.model(),
        state.config.max_steps,
        state.session.declared_tools(),
    ))
}
