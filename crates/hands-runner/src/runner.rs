//! The [`Runner`]: request → execute every call of the turn → answer them all → repeat, until the
//! model stops calling tools or the step limit is reached.
//!
//! Spec: openai-browser-desktop-drivers, "Limitar una ejecución", "Medir el uso", "Cerrar y
//! cancelar operaciones", "Manejar fallos"; claude-computer-use-tool, "Comprende el ciclo del
//! agente".

use std::sync::Mutex as StdMutex;

use hands_core::{CancellationToken, Desktop};
use hands_models::anthropic::AnthropicClient;
use hands_models::openai::OpenAiClient;
use hands_toolset::computer::ComputerToolset;
use hands_toolset::computer_call::ComputerCallExecutor;
use tokio::sync::Mutex;

use crate::anthropic::{AnthropicSession, AnthropicSettings};
use crate::approval::Approver;
use crate::diagnostics::{Observer, UsageTotals};
use crate::journal::Journal;
use crate::ledger::{Checkpoint, CheckpointStatus, Ledger};
use crate::openai::{OpenAiSession, OpenAiSettings};
use crate::outcome::{ApiStop, RunError, RunOutcome, RunStatus, StopReason};
use crate::session::{Session, StepContext, StepResult};
use crate::tools::Toolbox;

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
    ledger: Option<Box<dyn Ledger>>,
    config: RunConfig,
    prepared: bool,
}

/// One runner serves one model API and one set of tools. It refuses a second run while one is
/// active; sequential runs continue the same conversation.
pub struct Runner {
    state: Mutex<State>,
    queued: StdMutex<Vec<String>>,
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
                ledger: None,
                config,
                prepared: false,
            }),
            queued: StdMutex::new(Vec::new()),
        }
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

    /// Sets the checkpoint ledger: every step saved so a run can resume after its process ends.
    pub fn set_ledger(&mut self, ledger: Box<dyn Ledger>) {
        self.state.get_mut().ledger = Some(ledger);
    }

    /// Queues a person's text: it is added after the pending tool outputs of the current turn.
    /// It does not reset the step limit.
    pub fn append_user_text(&self, text: impl Into<String>) {
        self.queued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(text.into());
    }

    /// Runs `task` until the model finishes, the step limit holds, or the run stops. Refused when
    /// another run is active on this runner.
    pub async fn run(
        &self,
        task: &str,
        cancel: &CancellationToken,
    ) -> Result<RunOutcome, RunError> {
        let mut guard = self.state.try_lock().map_err(|_| RunError::Busy)?;
        let state = &mut *guard;
        prepare(state)?;
        state.session.add_task(task)?;
        Ok(self.drive(state, 0, cancel).await)
    }

    /// Resumes a run from a checkpoint saved at the end of a completed turn, with the requests it
    /// had left. A pending checkpoint is refused: reconcile its attempted calls with what really
    /// happened first — a checkpoint never authorises repeating an action.
    pub async fn resume(
        &self,
        checkpoint: &Checkpoint,
        cancel: &CancellationToken,
    ) -> Result<RunOutcome, RunError> {
        let mut guard = self.state.try_lock().map_err(|_| RunError::Busy)?;
        let state = &mut *guard;
        if !checkpoint.resumable() {
            return Err(RunError::Config(
                "this checkpoint is pending (calls were running): reconcile them with what really happened, then resume from a completed checkpoint".into(),
            ));
        }
        if checkpoint.api != state.session.api().name() {
            return Err(RunError::Config(format!(
                "this checkpoint is of the {} API, this runner speaks {}",
                checkpoint.api,
                state.session.api().name()
            )));
        }
        prepare(state)?;
        state.session.restore(&checkpoint.conversation)?;
        state.config.max_steps = checkpoint.max_steps;
        Ok(self.drive(state, checkpoint.steps_used, cancel).await)
    }

    /// The loop, from `steps_used` requests already made.
    async fn drive(
        &self,
        state: &mut State,
        steps_used: u32,
        cancel: &CancellationToken,
    ) -> RunOutcome {
        let mut usage = UsageTotals::default();
        let mut executed = Vec::new();
        let mut steps = steps_used;
        let mut final_text = String::new();
        let mut api_stop: Option<ApiStop> = None;
        let api = state.session.api();
        // Approvals due before the first request (renewed MCP approvals, MCP servers the API
        // calls unasked) are asked before anything is saved or sent.
        let approvals = state
            .session
            .before_first_request(&mut state.approver, cancel)
            .await;
        // The starting point is the end of a completed turn (the task just added, or the
        // checkpoint resumed from).
        if let Err(reason) = approvals.and_then(|()| save_completed(state, steps)) {
            return RunOutcome {
                status: RunStatus::Stopped(reason),
                steps,
                final_text,
                usage,
                executed_call_ids: executed,
                api_stop,
            };
        }
        let status = loop {
            if cancel.is_cancelled() {
                break RunStatus::Stopped(StopReason::Cancelled);
            }
            if steps >= state.config.max_steps {
                break RunStatus::StepLimit;
            }
            steps += 1;
            let last_allowed = steps == state.config.max_steps;
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
                ledger: &mut state.ledger,
                max_steps: state.config.max_steps,
                api,
                api_stop: &mut api_stop,
                attempted: Vec::new(),
                completed: Vec::new(),
            };
            match state.session.step(&mut ctx, last_allowed).await {
                Ok(StepResult::Continue) => {}
                // A text answer is a finish, on the last allowed request too (sent with tool
                // choice `none`, the model sums up there): as the SDKs' runners end.
                Ok(StepResult::Finished(text)) => {
                    final_text = text;
                    break RunStatus::Finished;
                }
                Ok(StepResult::StepLimit(text)) => {
                    final_text = text;
                    break RunStatus::StepLimit;
                }
                Err(reason) => break RunStatus::Stopped(reason),
            }
        };
        // A finished run ends a completed turn too: a later task may continue from it.
        let status = match status {
            RunStatus::Finished => match save_completed(state, steps) {
                Ok(()) => RunStatus::Finished,
                Err(reason) => RunStatus::Stopped(reason),
            },
            other => other,
        };
        RunOutcome {
            status,
            steps,
            final_text,
            usage,
            executed_call_ids: executed,
            api_stop,
        }
    }
}

/// Builds the declarations once, and refuses a run that needs an approver without one.
fn prepare(state: &mut State) -> Result<(), RunError> {
    if state.approver.is_none()
        && let Some(why) = state.session.needs_approver()
    {
        return Err(RunError::Config(why));
    }
    if !state.prepared {
        state.session.prepare(&state.toolbox)?;
        state.prepared = true;
    }
    Ok(())
}

/// Saves a completed checkpoint of the conversation, when the run keeps a ledger.
fn save_completed(state: &mut State, steps_used: u32) -> Result<(), StopReason> {
    let Some(ledger) = state.ledger.as_mut() else {
        return Ok(());
    };
    ledger
        .save(Checkpoint {
            version: Checkpoint::VERSION,
            api: state.session.api().name().to_owned(),
            steps_used,
            max_steps: state.config.max_steps,
            status: CheckpointStatus::Completed,
            conversation: state.session.snapshot(),
        })
        .map_err(|e| StopReason::LedgerFailed(e.to_string()))
}
