//! The one call executor both providers share. A client call that is not a computer action —
//! bash, the text editor, a browser function tool, an ordinary function, or a name the run does
//! not have — is parsed from its wire into a [`ToolCall`], approved, run, and answered as a
//! wire-neutral [`CallAnswer`]; each provider file only reads its wire into calls and writes
//! answers in its wire (`tool_result` blocks, `function_call_output` items). The call's frame —
//! started, the checkpoint before its effect, the record after it, the checkpoint with its
//! answer — is [`begin`] and [`finish`], the same for every kind of call, computer calls
//! included.
//!
//! Spec: openai-browser-desktop-drivers, "Manejar fallos", "Aprobar acciones y administrar la
//! sesión"; claude-computer-use-tool, "Comprende el ciclo del agente".

use std::time::Instant;

use hands_sandbox::strings::{BASH_TOOL_NAME, EDITOR_TOOL_NAME};
use hands_sandbox::{BashInput, EditorCommand};
use hands_toolset::browser::ImageDetail;
use serde_json::Value;

use crate::approval::{BashEffect, Decision, EditorEffect, Effect, FunctionEffect, refused_text};
use crate::diagnostics::{Api, Reason};
use crate::functions::{FunctionError, ToolOutput};
use crate::outcome::StopReason;
use crate::session::{
    ActionDone, Answered, FunctionFailure, StepContext, function_result, unknown_tool_text,
};
use crate::tools::{BrowserStop, Toolbox};

/// A call's arguments as its wire carries them: a JSON value (a Claude `tool_use` input) or
/// JSON text (an OpenAI `function_call`'s `arguments`, which may not be JSON at all).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arguments<'a> {
    /// Parsed JSON.
    Json(&'a Value),
    /// Text as sent.
    Text(&'a str),
}

/// A call as the executor runs it: which tool, with arguments already parsed into what that
/// tool takes. Parsing happens once, before anyone is asked.
#[derive(Debug)]
pub(crate) enum ToolCall<'a> {
    /// Claude's bash tool, its input valid.
    Bash(BashInput),
    /// Claude's text editor, its command valid.
    Editor(EditorCommand),
    /// A browser function tool: the browser toolset parses and approves its own arguments
    /// (its `confirm` and URL policy), so they go to it as the wire sent them.
    Browser(Arguments<'a>),
    /// An ordinary function with arguments that are a JSON object.
    Function(Value),
    /// Arguments that cannot be what the tool takes: the model reads why; nothing runs and
    /// nobody is asked.
    Invalid(String),
    /// A name this run has no tool for.
    Unknown,
}

/// The call a wire names: `name` with `arguments`, for a run of `api`.
///
/// Bash and the editor are Claude's tools, reached by their plain names; every other plain name
/// is a browser tool, a function or unknown, in that order on both APIs. A function's arguments
/// that are not a JSON object stop the run ([`FunctionError::InvalidArguments`]), as the SDKs'
/// runners do.
pub(crate) fn parse<'a>(
    toolbox: &Toolbox,
    api: Api,
    name: &str,
    arguments: Arguments<'a>,
) -> Result<ToolCall<'a>, FunctionError> {
    let claude_input = match (api, arguments) {
        (Api::Messages, Arguments::Json(value)) => Some(value),
        _ => None,
    };
    if let Some(input) = claude_input {
        if name == BASH_TOOL_NAME && toolbox.bash.is_some() {
            return Ok(match BashInput::parse(input) {
                Ok(input) => ToolCall::Bash(input),
                Err(e) => ToolCall::Invalid(e.to_string()),
            });
        }
        if name == EDITOR_TOOL_NAME && toolbox.editor.is_some() {
            return Ok(match EditorCommand::parse(input) {
                Ok(command) => ToolCall::Editor(command),
                Err(e) => ToolCall::Invalid(e.to_string()),
            });
        }
    }
    if toolbox.browser.as_ref().is_some_and(|b| b.owns(name)) {
        return Ok(ToolCall::Browser(arguments));
    }
    if toolbox.functions.get(name).is_none() {
        return Ok(ToolCall::Unknown);
    }
    match arguments {
        Arguments::Json(value) => Ok(ToolCall::Function(value.clone())),
        Arguments::Text(text) => crate::functions::parse_arguments(text)
            .map(ToolCall::Function)
            .map_err(FunctionError::InvalidArguments),
    }
}

/// A call's answer, in no wire's shape.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallAnswer {
    /// What the model reads: text, or text and images in order.
    pub(crate) output: ToolOutput,
    /// Why it ended: completed, failed, refused.
    pub(crate) reason: Reason,
    /// The `detail` of its images on OpenAI (the browser toolset's `image_detail`).
    pub(crate) detail: Option<ImageDetail>,
}

impl CallAnswer {
    fn text(reason: Reason, text: String) -> CallAnswer {
        CallAnswer {
            output: ToolOutput::Text(text),
            reason,
            detail: None,
        }
    }

    /// Whether the model is told the call failed (`is_error`).
    pub(crate) fn is_error(&self) -> bool {
        self.reason != Reason::Completed
    }

    /// A line for records and the journal: the answer's text.
    pub(crate) fn summary(&self) -> String {
        self.output.text()
    }
}

/// Where a call sits: its id and the name it is recorded under.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallSite<'a> {
    /// The call's id in its wire (`tool_use.id`, `call_id`).
    pub(crate) call_id: &'a str,
    /// The tool or member name.
    pub(crate) name: &'a str,
}

/// Runs `call`: asks the approver about its effect (bash, the editor and functions; the browser
/// toolset asks its own `confirm`), runs it, and answers. `browser_failed` is the response's
/// browser state: after one browser call was not ok, the toolset answers the rest as skipped.
/// An `Err` stops the run: cancellation, a browser fault, a function that failed.
pub(crate) async fn run(
    ctx: &mut StepContext<'_>,
    site: CallSite<'_>,
    call: ToolCall<'_>,
    browser_failed: &mut bool,
) -> Result<CallAnswer, StopReason> {
    let call_id = site.call_id.to_owned();
    match call {
        ToolCall::Invalid(why) => Ok(CallAnswer::text(Reason::Failed, why)),
        ToolCall::Unknown => Ok(CallAnswer::text(
            Reason::Failed,
            unknown_tool_text(site.name),
        )),
        ToolCall::Bash(input) => {
            let effect = Effect::Bash(BashEffect {
                call_id,
                input: input.clone(),
            });
            if ctx.approve(effect).await? == Decision::Deny {
                return Ok(refused(BASH_TOOL_NAME));
            }
            let Some(bash) = ctx.toolbox.bash.as_mut() else {
                return Ok(refused(BASH_TOOL_NAME));
            };
            let outcome = bash.answer(input, ctx.cancel).await;
            Ok(CallAnswer::text(failed_if(outcome.is_error), outcome.text))
        }
        ToolCall::Editor(command) => {
            let effect = Effect::Editor(EditorEffect {
                call_id,
                command: command.clone(),
            });
            if ctx.approve(effect).await? == Decision::Deny {
                return Ok(refused(EDITOR_TOOL_NAME));
            }
            let Some(editor) = ctx.toolbox.editor.as_ref() else {
                return Ok(refused(EDITOR_TOOL_NAME));
            };
            let outcome = editor.answer(command, ctx.cancel).await;
            Ok(CallAnswer::text(failed_if(outcome.is_error), outcome.text))
        }
        ToolCall::Browser(arguments) => run_browser(ctx, site, arguments, browser_failed).await,
        ToolCall::Function(arguments) => run_function(ctx, site, arguments).await,
    }
}

/// A browser function tool, through the toolset (which applies its own consent, URL policy
/// and privacy rules).
async fn run_browser(
    ctx: &mut StepContext<'_>,
    site: CallSite<'_>,
    arguments: Arguments<'_>,
    browser_failed: &mut bool,
) -> Result<CallAnswer, StopReason> {
    let Some(browser) = ctx.toolbox.browser.as_mut() else {
        return Ok(CallAnswer::text(
            Reason::Failed,
            unknown_tool_text(site.name),
        ));
    };
    let (id, name, skip) = (site.call_id, site.name, *browser_failed);
    let outcome = match arguments {
        Arguments::Json(value) => browser.call(id, name, value, skip, ctx.cancel).await,
        Arguments::Text(text) => browser.call_text(id, name, text, skip, ctx.cancel).await,
    }
    .map_err(|e| match e {
        BrowserStop::Cancelled => StopReason::Cancelled,
        BrowserStop::Fault(why) => StopReason::BrowserFault(why),
    })?;
    *browser_failed |= !outcome.ok;
    let output = if outcome.images.is_empty() {
        ToolOutput::Text(outcome.text)
    } else {
        let mut parts = vec![crate::functions::OutputPart::Text(outcome.text)];
        parts.extend(
            outcome
                .images
                .into_iter()
                .map(crate::functions::OutputPart::Image),
        );
        ToolOutput::Parts(parts)
    };
    Ok(CallAnswer {
        output,
        reason: failed_if(!outcome.ok),
        detail: outcome.detail,
    })
}

/// An ordinary function: approved, then run once; its failure stops the run (recorded).
async fn run_function(
    ctx: &mut StepContext<'_>,
    site: CallSite<'_>,
    arguments: Value,
) -> Result<CallAnswer, StopReason> {
    let effect = Effect::Function(FunctionEffect {
        call_id: site.call_id.to_owned(),
        name: site.name.to_owned(),
        arguments: arguments.clone(),
    });
    if ctx.approve(effect).await? == Decision::Deny {
        return Ok(refused(site.name));
    }
    let Some(function) = ctx.toolbox.functions.get(site.name) else {
        return Ok(CallAnswer::text(
            Reason::Failed,
            unknown_tool_text(site.name),
        ));
    };
    let start = Instant::now();
    match function_result(function, arguments).await {
        Ok(output) => Ok(CallAnswer {
            output,
            reason: Reason::Completed,
            detail: None,
        }),
        Err(e) => failed(ctx, site, e, start),
    }
}

/// A function that did not answer (invalid arguments, a failure, an invalid output): recorded,
/// then answered with the error — or, for a function whose failure stops the run, or once the
/// run is cancelled, the run's stop.
pub(crate) fn failed(
    ctx: &mut StepContext<'_>,
    site: CallSite<'_>,
    error: FunctionError,
    start: Instant,
) -> Result<CallAnswer, StopReason> {
    match ctx.function_failed(site.call_id, site.name, error, start) {
        FunctionFailure::Answer(text) => Ok(CallAnswer::text(Reason::Failed, text)),
        FunctionFailure::Stop(reason) => Err(reason),
    }
}

/// The answer to a call whose effect the approver refused: it did not run.
fn refused(name: &str) -> CallAnswer {
    CallAnswer::text(Reason::Refused, refused_text(name))
}

fn failed_if(failed: bool) -> Reason {
    if failed {
        Reason::Failed
    } else {
        Reason::Completed
    }
}

/// A call's effect is about to begin: it is started, and the checkpoint before its effect says
/// it may have happened (`proposed` is the call's record; `conversation` the state it belongs
/// to). An `Err` stops the run before anything ran: the call is recorded as stopped.
pub(crate) fn begin(
    ctx: &mut StepContext<'_>,
    site: CallSite<'_>,
    proposed: Option<crate::checkpoint::Proposed>,
    conversation: impl FnOnce() -> Value,
) -> Result<Instant, StopReason> {
    let start = Instant::now();
    ctx.call_started(site.call_id, site.name);
    if let Some(proposed) = proposed
        && let Err(reason) = ctx.call_attempted(proposed, conversation)
    {
        ctx.call_stopped(site.call_id, &reason);
        return Err(reason);
    }
    Ok(start)
}

/// What a finished call was: its answer's meaning and the answer as its wire sends it.
#[derive(Debug)]
pub(crate) struct Finished<'a> {
    /// Why it ended.
    pub(crate) reason: Reason,
    /// The line for records and the journal.
    pub(crate) summary: &'a str,
    /// The answer in its wire's shape, as the checkpoint keeps it.
    pub(crate) wire: Value,
    /// Set when the call was cut short during its effect (cancelled, or its driver faulted):
    /// its checkpoint says interrupted, whatever its answer says.
    pub(crate) interruption: Option<String>,
}

/// A call's answer is built: recorded (diagnostics and journal), saved with its answer in the
/// turn's checkpoint, and told (`on_event`). An `Err` is a checkpoint that could not be saved:
/// the run stops after this turn is answered.
pub(crate) fn finish(
    ctx: &mut StepContext<'_>,
    api: Api,
    site: CallSite<'_>,
    start: Instant,
    finished: Finished<'_>,
) -> Result<(), StopReason> {
    let Finished {
        reason,
        summary,
        wire,
        interruption,
    } = finished;
    ctx.action_done(ActionDone {
        api,
        call_id: site.call_id,
        member: site.name,
        reason,
        duration: start.elapsed(),
        answer: Answered::error_if(reason != Reason::Completed),
        summary,
    });
    let saved = ctx.call_answered(site.call_id, || wire.clone(), interruption);
    ctx.call_completed(site.call_id, site.name, || wire);
    saved
}
