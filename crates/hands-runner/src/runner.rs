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
use crate::approval::ComputerApprover;
use crate::diagnostics::{Observer, UsageTotals};
use crate::journal::Journal;
use crate::openai::{OpenAiSession, OpenAiSettings};
use crate::outcome::{RunError, RunOutcome, RunStatus, StopReason};
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
    approver: Option<Box<dyn ComputerApprover>>,
    observer: Option<Observer>,
    journal: Option<Box<dyn Journal>>,
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

    /// Sets the approver of computer actions (safety checks, `before_action`).
    pub fn set_approver(&mut self, approver: Box<dyn ComputerApprover>) {
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
        if !state.prepared {
            state.session.prepare(&state.toolbox)?;
            state.prepared = true;
        }
        state.session.add_task(task)?;
        let mut usage = UsageTotals::default();
        let mut executed = Vec::new();
        let mut steps = 0u32;
        let mut final_text = String::new();
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
            };
            match state.session.step(&mut ctx, last_allowed).await {
                Ok(StepResult::Continue) => {}
                // The last allowed request is sent with tool choice `none`: the model can only
                // sum up, so the run ends at the limit even when it answered with text.
                Ok(StepResult::Finished(text)) if last_allowed => {
                    final_text = text;
                    break RunStatus::StepLimit;
                }
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
        Ok(RunOutcome {
            status,
            steps,
            final_text,
            usage,
            executed_call_ids: executed,
        })
    }
}
