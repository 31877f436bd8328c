//! Per-turn and streaming control of a run: [`TurnStream`] pauses the run after each completed
//! response, before its deferred calls run ([`Turn`]: supply outputs, append a person's text);
//! [`RunEvent`]s go to an `on_event` callback as independent copies; [`EarlyExecution`] and
//! [`EarlyDecision`] choose which streamed calls may run before the response completes.
//!
//! Spec: openai-browser-desktop-drivers, "Combinar acciones del navegador con otras
//! herramientas" (`supply_outputs`), "Transmitir y reanudar una ejecución" (`iterate()`,
//! `append_user_text`, `on_event`, `early_execution`, `before_early_call`, `independent`,
//! `max_concurrent_calls`, attempted and completed call ids).

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::functions::ToolOutput;
use crate::outcome::{RunError, RunOutcome, RunStatus};

/// The default of [`crate::OpenAiSettings::max_concurrent_calls`]: at most two independent
/// calls run at once. Spec: openai-browser-desktop-drivers, "se ejecutan simultáneamente como
/// máximo dos llamadas anticipadas independientes".
pub const DEFAULT_MAX_CONCURRENT_CALLS: usize = 2;

/// The journal's and diagnostics' summary of a call answered with a supplied output.
pub const SUPPLIED_SUMMARY: &str = "answered with an output the caller supplied";

/// Why a concurrency limit of zero is refused.
pub const ZERO_CONCURRENT_CALLS: &str = "max_concurrent_calls must be at least 1";

/// Why an early-execution policy naming `name` is refused: not a declared function, or named
/// twice.
pub fn early_name_refused(name: &str) -> String {
    format!(
        "early_execution names `{}`, which is not a declared function or is named twice",
        hands_toolset::errtext::name(name)
    )
}

/// Why an early computer without the computer tool is refused.
pub const EARLY_COMPUTER_WITHOUT_COMPUTER: &str =
    "early_execution lets computer calls run early, but this run has no computer tool";

/// Which streamed calls may run before their response completes, when a run streams with
/// eager execution. `None` in the settings keeps eager execution for every local call; an
/// empty policy (`EarlyExecution::default()`) defers them all. The first call the policy (or
/// [`EarlyDecision::Defer`]) defers also defers every call after it in that response, so calls
/// keep their order. A policy changes when calls run, never whether they are approved.
///
/// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución"
/// (`early_execution`: "Un objeto vacío pospone todas las herramientas locales … La primera
/// herramienta pospuesta también pospone todas las siguientes").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EarlyExecution {
    /// Function names (as the protocol streams them: ordinary functions and browser tools)
    /// that may run early. Each must be a declared function, named once.
    pub functions: Vec<String>,
    /// Whether `computer_call`s may run early (needs the computer tool).
    pub computer: bool,
}

/// What a `before_early_call` hook decides about one completed streamed call the policy lets
/// run early. It cannot make a call run early that the policy defers.
///
/// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" (`before_early_call`
/// "puede devolver defer").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EarlyDecision {
    /// Run it now, while the response streams.
    Execute,
    /// Wait for the whole response (this call and every later one of the response).
    Defer,
}

/// A completed streamed call, as a `before_early_call` hook sees it (an independent copy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlyCall {
    /// Its `call_id`.
    pub call_id: String,
    /// The function's name, or `computer` for a computer call.
    pub name: String,
    /// The item as streamed.
    pub item: Value,
}

/// The `before_early_call` hook ([`crate::Runner::set_before_early_call`]). A plain function
/// of the call: it decides from what the call is, not by waiting on a person (the approver
/// asks about every effect in any case).
pub type BeforeEarlyCall = Box<dyn FnMut(&EarlyCall) -> EarlyDecision + Send>;

/// What happened in a run, delivered to the `on_event` callback ([`crate::Runner::set_on_event`]).
/// Each event is the callback's own copy: changing it changes nothing in the run.
///
/// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" ("el ejecutor
/// proporciona copias independientes de los eventos").
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RunEvent {
    /// A request is about to be sent.
    RequestStarted {
        /// The request's number in the run (1-based, counting resumed ones).
        step: u32,
    },
    /// One event of a streamed Responses answer, as parsed.
    OpenAiStream(hands_models::openai::ResponseEvent),
    /// One event of a streamed Messages answer, as parsed.
    ClaudeStream(hands_models::anthropic::StreamEvent),
    /// The response of `step` completed and passed the checks; its calls have not all run.
    TurnCompleted {
        /// The request's number.
        step: u32,
        /// The response (OpenAI) or message (Claude), as received.
        response: Value,
    },
    /// A call's execution began.
    CallStarted {
        /// Its id.
        call_id: String,
        /// Its tool or function.
        name: String,
    },
    /// A call was answered.
    CallFinished {
        /// Its id.
        call_id: String,
        /// Its tool or function.
        name: String,
        /// The answer sent back (`function_call_output`, `computer_call_output` or
        /// `tool_result`).
        output: Value,
    },
    /// Text a person appended was added to the conversation.
    UserText {
        /// The text.
        text: String,
    },
    /// The run ended.
    Ended {
        /// How.
        status: RunStatus,
    },
}

/// The `on_event` callback.
pub type OnEvent = Box<dyn FnMut(RunEvent) + Send>;

/// Text a person appended to the run, waiting for the answer of the turn under way.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    /// The texts, in order.
    pub(crate) texts: Vec<String>,
    /// Whether a turn is open for text: its response has calls that run (it is not final), and
    /// its answer has not been sent. Only then can text reach the model.
    pub(crate) open: bool,
}

/// Why a paused turn refused a change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TurnError {
    /// The run has moved on from this turn.
    #[error("this turn is no longer paused: supply outputs and append text before advancing")]
    NotPaused,
    /// The turn is final (a finished answer, or the step limit): nothing can follow it.
    #[error("this turn is final: nothing can be appended to it")]
    Final,
    /// Appended text must hold something besides whitespace.
    #[error("appended text must not be empty")]
    EmptyText,
    /// No turn is open: between runs, while a request is under way (its answer may end the
    /// run), or during a final turn, text could not reach the model.
    #[error(
        "no turn is open for text: append it while a turn's calls run (Runner::iterate pauses at each turn)"
    )]
    NoOpenTurn,
    /// A supplied output answers a call this turn cannot let a caller answer: unknown, already
    /// tried, not an ordinary function, or a function registered without
    /// [`crate::functions::Function::suppliable`].
    #[error(
        "call {call_id} cannot take a supplied output (only not-yet-tried calls of suppliable ordinary functions can)"
    )]
    NotSuppliable {
        /// The call id as given (bounded).
        call_id: String,
    },
    /// Two outputs for one call.
    #[error("two supplied outputs answer call {call_id}")]
    DuplicateOutput {
        /// The call id.
        call_id: String,
    },
    /// The output itself would be refused by the API.
    #[error("the output supplied for call {call_id} is invalid: {why}")]
    InvalidOutput {
        /// The call id.
        call_id: String,
        /// What is wrong.
        why: String,
    },
}

/// One call of a paused turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnCall {
    /// Its `call_id` (OpenAI) or `tool_use` id (Claude).
    pub call_id: String,
    /// The tool or function name (`computer` for an OpenAI computer call).
    pub name: String,
    /// Its arguments (parsed when they are JSON, the raw text otherwise).
    pub arguments: Value,
    /// Whether it was already tried while the response streamed (eager execution).
    pub tried: bool,
    /// Whether a caller may answer it ([`Turn::supply_outputs`]).
    pub suppliable: bool,
}

/// What a paused turn's caller chose, read when the run moves on.
#[derive(Debug, Default)]
pub(crate) struct Choices {
    pub(crate) paused: bool,
    pub(crate) final_turn: bool,
    pub(crate) eligible: BTreeSet<String>,
    pub(crate) supplied: BTreeMap<String, ToolOutput>,
    pub(crate) texts: Vec<String>,
}

/// A completed turn, paused before its deferred calls run. Its response and calls are copies:
/// changing them changes nothing. [`Turn::supply_outputs`] and [`Turn::append_user_text`] act
/// until the stream is advanced.
///
/// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" (`iterate()`:
/// "examina el turno completado antes de avanzar").
#[derive(Debug)]
pub struct Turn {
    /// The request's number in the run.
    pub step: u32,
    /// Whether nothing follows this turn: a finished answer, or calls the step limit keeps
    /// from running.
    pub final_turn: bool,
    /// The response (OpenAI) or message (Claude), as received.
    pub response: Value,
    /// Its local calls, in order.
    pub calls: Vec<TurnCall>,
    /// Calls of the run tried so far (their effects may have happened).
    pub attempted_call_ids: Vec<String>,
    /// Calls of the run answered so far.
    pub completed_call_ids: Vec<String>,
    pub(crate) choices: Arc<Mutex<Choices>>,
}

impl Turn {
    fn choices(&self) -> std::sync::MutexGuard<'_, Choices> {
        self.choices.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a person's text: added after this turn's tool outputs, before the next request.
    /// Text only (never tool outputs or approvals); it does not reset the step limit. Refused
    /// on a final turn, once the run moved on, and for blank text.
    ///
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución"
    /// (`append_user_text`).
    pub fn append_user_text(&self, text: impl Into<String>) -> Result<(), TurnError> {
        let text = text.into();
        let mut choices = self.choices();
        if !choices.paused {
            return Err(TurnError::NotPaused);
        }
        if choices.final_turn {
            return Err(TurnError::Final);
        }
        if text.trim().is_empty() {
            return Err(TurnError::EmptyText);
        }
        choices.texts.push(text);
        Ok(())
    }

    /// Answers not-yet-tried calls of suppliable ordinary functions with the given outputs:
    /// those functions do not run, and nobody is asked to approve them (nothing takes effect).
    /// Replaces every output supplied to this turn before (an empty list withdraws them);
    /// refused whole when one output is not allowed. Never for computer, browser, bash or
    /// editor calls, nor MCP approvals.
    ///
    /// Spec: openai-browser-desktop-drivers, "Combinar acciones del navegador con otras
    /// herramientas" (`supply_outputs`).
    pub fn supply_outputs<I, S>(&self, outputs: I) -> Result<(), TurnError>
    where
        I: IntoIterator<Item = (S, ToolOutput)>,
        S: Into<String>,
    {
        let mut choices = self.choices();
        if !choices.paused {
            return Err(TurnError::NotPaused);
        }
        let mut supplied = BTreeMap::new();
        for (call_id, output) in outputs {
            let call_id = call_id.into();
            if !choices.eligible.contains(&call_id) {
                return Err(TurnError::NotSuppliable {
                    call_id: hands_toolset::errtext::name(&call_id),
                });
            }
            if let Err(why) = output.check() {
                return Err(TurnError::InvalidOutput { call_id, why });
            }
            if supplied.contains_key(&call_id) {
                return Err(TurnError::DuplicateOutput { call_id });
            }
            supplied.insert(call_id, output);
        }
        choices.supplied = supplied;
        Ok(())
    }
}

/// What the paused run does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Proceed,
    Close,
}

/// A turn handed to the caller, with the way to let the run go on.
pub(crate) struct Paused {
    pub(crate) turn: Turn,
    pub(crate) resume: oneshot::Sender<Flow>,
}

/// The run's end of an iteration: turns go out through it.
pub(crate) type Gate = mpsc::UnboundedSender<Paused>;

type RunFuture<'r> = Pin<Box<dyn Future<Output = Result<RunOutcome, RunError>> + Send + 'r>>;

/// A run driven turn by turn ([`crate::Runner::iterate`]). The run moves only while
/// [`TurnStream::next_turn`], [`TurnStream::finish`] or [`TurnStream::close`] is awaited: a
/// caller inspecting a [`Turn`] holds the run still before that turn's deferred calls.
/// Dropping the stream drops the run where it stands (no deferred call runs); prefer
/// [`TurnStream::close`], which also returns the outcome.
pub struct TurnStream<'r> {
    run: Option<RunFuture<'r>>,
    turns: mpsc::UnboundedReceiver<Paused>,
    waiting: Option<oneshot::Sender<Flow>>,
    result: Option<Result<RunOutcome, RunError>>,
}

impl std::fmt::Debug for TurnStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnStream")
            .field("running", &self.run.is_some())
            .finish_non_exhaustive()
    }
}

impl<'r> TurnStream<'r> {
    pub(crate) fn new(
        run: RunFuture<'r>,
        turns: mpsc::UnboundedReceiver<Paused>,
    ) -> TurnStream<'r> {
        TurnStream {
            run: Some(run),
            turns,
            waiting: None,
            result: None,
        }
    }

    /// Lets the paused turn go on (its deferred calls run, with the outputs supplied and the
    /// text appended), and returns the next completed turn; `None` once the run ended (see
    /// [`TurnStream::finish`] for how).
    pub async fn next_turn(&mut self) -> Option<Turn> {
        self.advance(Flow::Proceed).await
    }

    async fn advance(&mut self, flow: Flow) -> Option<Turn> {
        if let Some(resume) = self.waiting.take() {
            // The run may have ended already (cancelled while paused): then nobody listens.
            let _ = resume.send(flow);
        }
        let run = self.run.as_mut()?;
        let paused = tokio::select! {
            biased;
            paused = self.turns.recv() => paused,
            result = &mut *run => {
                self.result = Some(result);
                self.run = None;
                return None;
            }
        };
        match paused {
            Some(paused) => {
                self.waiting = Some(paused.resume);
                Some(paused.turn)
            }
            None => {
                // The run dropped its gate: it is ending.
                let result = run.await;
                self.result = Some(result);
                self.run = None;
                None
            }
        }
    }

    /// Lets every remaining turn go on, and returns how the run ended.
    pub async fn finish(mut self) -> Result<RunOutcome, RunError> {
        while self.advance(Flow::Proceed).await.is_some() {}
        self.take_result()
    }

    /// Ends the run at the paused turn: none of its deferred calls runs, and the run stops
    /// with [`crate::StopReason::IterationClosed`] (a final turn stays finished). Returns how
    /// the run ended.
    ///
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" ("Si cierras la
    /// iteración en ese punto, no se ejecuta ninguna herramienta pospuesta").
    pub async fn close(mut self) -> Result<RunOutcome, RunError> {
        while self.advance(Flow::Close).await.is_some() {}
        self.take_result()
    }

    fn take_result(&mut self) -> Result<RunOutcome, RunError> {
        self.result
            .take()
            .unwrap_or_else(|| Err(RunError::Config("the run's outcome was taken".into())))
    }
}
