//! The OpenAI Responses side of a run: output items replayed verbatim (reasoning with its
//! `encrypted_content` untouched), `store` with `previous_response_id` or stateless full input,
//! `computer_call`s approved and executed once each in order with a final screenshot, function
//! calls for the browser toolset and ordinary functions.
//!
//! Spec: openai-browser-desktop-drivers, "Contrato del controlador de computadora", "Aprobar
//! acciones y administrar la sesión", "Combinar acciones del navegador con otras herramientas";
//! api-contracts B.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;

use async_trait::async_trait;
use hands_core::{Desktop, DesktopError};
use hands_models::RetryPolicy;
use hands_models::openai::{
    FunctionCallOutput, FunctionOutput, FunctionOutputPart, Input, Item, ItemView, OpenAiClient,
    ReasoningConfig, Response, ResponseStatus, ResponsesRequest, ToolChoice, Truncation,
};
use hands_toolset::actions::DesktopAction;
use hands_toolset::computer_call::{ComputerCallExecutor, call_output, parse_call};
use serde_json::{Value, json};

use crate::approval::{
    ActionContext, Approver, CheckView, Decision, Effect, FunctionEffect, McpCallEffect,
    SafetyChecksContext, decide, refused_text,
};
use crate::context::{
    CallerCuts, Compactor, ContextBudget, ContextConfig, ContextManagement, ProjectError,
    ProjectionState, project_items,
};
use crate::control::{
    DEFAULT_MAX_CONCURRENT_CALLS, EarlyCall, EarlyDecision, EarlyExecution, RunEvent, TurnCall,
};
use crate::diagnostics::{Api, Reason, Usage};
use crate::edits::{COMPACTION_NOT_ON_OPENAI, Controls, RunEdit};
use crate::functions::{FunctionError, Job, OutputPart, ToolOutput};
use crate::items::{
    Declared, ItemKind, answer_id, api_stop, check_item, check_response, note_call_id,
};
use crate::mcp::{MCP_APPROVAL_RESPONSE, shown_url};
use crate::outcome::{RunError, StopReason};
use crate::server_items::{self, raw};
use crate::session::{ActionDone, Answered, FunctionFailure, Session, StepContext, StepResult};
use crate::tools::{Toolbox, is_server_tool};

mod eager;
mod resume;

use crate::executor::{self, Arguments, CallSite, Finished};
use hands_toolset::browser::ImageDetail;

/// How a run talks to the Responses API.
#[derive(Debug, Clone)]
pub struct OpenAiSettings {
    /// The model.
    pub model: String,
    /// Instructions (the system prompt).
    pub instructions: Option<String>,
    /// `tool_choice` (default auto). One that forces a local tool is refused before the run.
    pub tool_choice: Option<ToolChoice>,
    /// `store`: true chains requests with `previous_response_id`; false sends the full input each
    /// time and asks for `reasoning.encrypted_content` to replay.
    pub store: bool,
    /// Reasoning settings.
    pub reasoning: Option<ReasoningConfig>,
    /// Output token limit per request.
    pub max_output_tokens: Option<u32>,
    /// `truncation` (the preview computer model needed `auto`).
    pub truncation: Option<Truncation>,
    /// Use SSE streaming (the runner still waits for the complete response before acting,
    /// unless `eager`).
    pub stream: bool,
    /// With `stream`: execute each completed call as soon as it arrives, in order (never a
    /// partial one), instead of waiting for the whole response. Off when the run declares server
    /// tools (their results must be examined first). If a later event changes or drops a call
    /// already executed, the run stops; its execution stays recorded.
    pub eager: bool,
    /// With `eager`: which calls may run while the response streams (`None`: every local
    /// call; an empty policy defers them all). See [`EarlyExecution`].
    pub early_execution: Option<EarlyExecution>,
    /// With `eager` and no ledger: how many calls of functions marked
    /// [`crate::functions::Function::independent`] may run at once (at least 1). The runner
    /// waits for the group under way before reading more calls from the stream.
    ///
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución"
    /// (`max_concurrent_calls`, default 2).
    pub max_concurrent_calls: usize,
    /// `parallel_tool_calls` (`Some(false)`: at most one function call per response).
    pub parallel_tool_calls: Option<bool>,
    /// More tool entries sent as given: server tools (`web_search`, `file_search`,
    /// `code_interpreter`, `image_generation`) and remote MCP servers
    /// ([`crate::mcp::McpServer::openai_tool`]), beside the local tools. Declaring any turns
    /// eager execution off (the server's results are examined first); declaring an `mcp` tool
    /// turns automatic HTTP retries off and needs an approver; `image_generation` needs
    /// `store`.
    pub extra_tools: Vec<Value>,
    /// The context of each request: hands' projection (screenshots in cache-friendly batches,
    /// an optional budget — then the input is sent whole each time, never chained by
    /// `previous_response_id`), or the API's compaction (`context_management`).
    pub context: ContextConfig,
    /// With a context budget: the caller's compaction callback, asked which completed calls to
    /// drop (and for a summary) before hands cuts any (the SDK's `context_budget.compact`).
    pub compactor: Option<Compactor>,
}

impl OpenAiSettings {
    /// Settings for `model`: stored responses chained by id, no streaming.
    pub fn new(model: impl Into<String>) -> OpenAiSettings {
        OpenAiSettings {
            model: model.into(),
            instructions: None,
            tool_choice: None,
            store: true,
            reasoning: None,
            max_output_tokens: None,
            truncation: None,
            stream: false,
            eager: false,
            early_execution: None,
            max_concurrent_calls: DEFAULT_MAX_CONCURRENT_CALLS,
            parallel_tool_calls: None,
            extra_tools: Vec::new(),
            context: ContextConfig::default(),
            compactor: None,
        }
    }
}

pub(crate) struct OpenAiSession {
    client: OpenAiClient,
    settings: OpenAiSettings,
    computer: Option<ComputerCallExecutor<Box<dyn Desktop>>>,
    tools: Vec<Value>,
    /// What the request's tools let a response hold.
    declared: Declared,
    /// The `call_id` of every call of earlier responses: none may come again.
    call_ids: HashSet<String>,
    /// Every item of the conversation (inputs and outputs), for stateless requests.
    items: Vec<Item>,
    /// Items not yet sent, for chained requests.
    pending: Vec<Item>,
    previous_response_id: Option<String>,
    unanswered: bool,
    /// Eager mode: how many items of the current response are already in `items`, and the
    /// outputs of calls already executed, by call id.
    appended_early: usize,
    early_outputs: HashMap<String, Item>,
    /// Eager mode: an executed call that stopped the run while the response streamed.
    early_stop: Option<StopReason>,
    /// What the budget has cut so far (it only grows).
    projection: ProjectionState,
    /// The caller's compaction decisions: applied to every request, saved with checkpoints.
    caller_cuts: CallerCuts,
    /// What mid-run edits changed (saved with every checkpoint).
    controls: Controls,
    /// The run declares a remote MCP server: its requests are never retried (the server may
    /// have acted on one that failed).
    no_retry: bool,
}

impl OpenAiSession {
    pub(crate) fn new(
        client: OpenAiClient,
        settings: OpenAiSettings,
        computer: Option<ComputerCallExecutor<Box<dyn Desktop>>>,
    ) -> OpenAiSession {
        OpenAiSession {
            client,
            settings,
            computer,
            tools: Vec::new(),
            declared: Declared::default(),
            call_ids: HashSet::new(),
            items: Vec::new(),
            pending: Vec::new(),
            previous_response_id: None,
            unanswered: false,
            appended_early: 0,
            early_outputs: HashMap::new(),
            early_stop: None,
            projection: ProjectionState::default(),
            caller_cuts: CallerCuts::default(),
            controls: Controls::default(),
            no_retry: false,
        }
    }

    fn push_input(&mut self, item: Item) {
        self.items.push(item.clone());
        self.pending.push(item);
    }

    async fn send(
        &mut self,
        ctx: &mut StepContext<'_>,
        last_allowed: bool,
    ) -> Result<Response, StopReason> {
        // A projected history is sent whole: chaining would leave it on the server, unpruned.
        let chained = self.settings.store
            && self.previous_response_id.is_some()
            && !self.settings.context.projects();
        let input = if chained {
            self.pending.clone()
        } else if self.settings.context.projects() {
            self.projected_input(ctx)?
        } else {
            self.items.clone()
        };
        let mut request = ResponsesRequest::new(self.settings.model.clone(), Input::Items(input));
        request.instructions = self
            .controls
            .params
            .instructions
            .clone()
            .or_else(|| self.settings.instructions.clone());
        request.tools = self.controls.declared(&self.tools);
        request.tool_choice = if last_allowed {
            Some(ToolChoice::None)
        } else {
            self.settings.tool_choice.clone()
        };
        request.store = Some(self.settings.store);
        if chained {
            request.previous_response_id = self.previous_response_id.clone();
        }
        if !self.settings.store {
            request.include = vec!["reasoning.encrypted_content".to_owned()];
        }
        request.reasoning = self.settings.reasoning.clone();
        if let Some(effort) = &self.controls.params.effort {
            let mut reasoning = request.reasoning.take().unwrap_or_default();
            reasoning.effort = Some(effort.clone());
            request.reasoning = Some(reasoning);
        }
        request.max_output_tokens = self
            .controls
            .params
            .max_output_tokens
            .or(self.settings.max_output_tokens);
        request.truncation = self.settings.truncation;
        request.parallel_tool_calls = self.settings.parallel_tool_calls;
        if let ContextManagement::Native(native) = &self.settings.context.management {
            request.context_management = Some(native.openai_entries());
        }
        // MCP servers and server tools may act while the request is under way: saved pending
        // first, so a run stopped before its answer is reconciled, never sent again by itself.
        let servers = self.declared.mcp.iter().map(|s| s.label.clone()).collect();
        let remote = crate::tools::remote_actors(servers, &self.tools);
        if !remote.is_empty() {
            ctx.mcp_request_attempted(remote, || self.snapshot())?;
        }
        ctx.journal_request(&request);
        let start = Instant::now();
        self.appended_early = 0;
        self.early_outputs.clear();
        let eager = self.settings.stream
            && self.settings.eager
            && !last_allowed
            && !self.tools.iter().any(is_server_tool);
        // A request that declares MCP tools is sent once: the MCP server may have acted on a
        // request that then failed (spec: "Las solicitudes que declaran herramientas MCP
        // deshabilitan los reintentos automáticos").
        let client = if self.no_retry {
            self.client.with_retry_policy(RetryPolicy::disabled())
        } else {
            self.client.clone()
        };
        let sent = if eager {
            match client.stream_response(&request, ctx.cancel).await {
                Ok(stream) => self.consume_eagerly(ctx, stream).await,
                Err(e) => Err(e),
            }
        } else if self.settings.stream {
            match client.stream_response(&request, ctx.cancel).await {
                Ok(stream) if ctx.on_event.is_some() => consume_told(ctx, stream).await,
                Ok(stream) => stream.finish().await,
                Err(e) => Err(e),
            }
        } else {
            client.create_response(&request, ctx.cancel).await
        };
        let duration = start.elapsed();
        match sent {
            Ok(done) => {
                let usage = done.value.usage.as_ref().map(|u| Usage {
                    input_tokens: Some(u.input_tokens),
                    output_tokens: Some(u.output_tokens),
                    total_tokens: Some(u.total_tokens),
                    cache_read_input_tokens: u
                        .input_tokens_details
                        .as_ref()
                        .map(|d| d.cached_tokens),
                    cache_creation_input_tokens: None,
                });
                ctx.request_done(Api::Responses, duration, usage, done.meta.attempts());
                ctx.journal_response(&done.value, duration, done.meta.attempts());
                self.pending.clear();
                Ok(done.value)
            }
            Err(e) => Err(ctx.request_failed(Api::Responses, duration, &e)),
        }
    }

    /// The whole history, projected for the next request (see [`crate::context`]).
    fn projected_input(&mut self, ctx: &StepContext<'_>) -> Result<Vec<Item>, StopReason> {
        let values: Vec<Value> = self.items.iter().map(Item::to_value).collect();
        let browser = ctx.toolbox.browser.as_deref();
        let is_browser = |name: &str| browser.is_some_and(|b| b.owns(name));
        let n_decisions = self.caller_cuts.decisions.len();
        let projected = project_items(
            &values,
            &self.settings.context,
            &mut self.projection,
            &is_browser,
            self.settings.compactor.as_ref(),
            &mut self.caller_cuts,
        )
        .map_err(|error| match error {
            ProjectError::Budget(over) => StopReason::from((
                over,
                self.settings.context.budget().unwrap_or(ContextBudget {
                    max_input_bytes: 0,
                    max_input_images: 0,
                }),
            )),
            ProjectError::Decision(why) => StopReason::ProjectionFailed {
                what: "the compaction callback's decision".into(),
                why,
            },
        })?;
        if let Some(decision) = self.caller_cuts.decisions.get(n_decisions) {
            tracing::info!(
                n_dropped = decision.drop_call_ids.len(),
                summary = decision.summary.is_some(),
                "the compaction callback cut the input"
            );
        }
        projected
            .iter()
            .map(|value| {
                Item::from_value(value).map_err(|e| StopReason::InvalidResponse(e.to_string()))
            })
            .collect()
    }

    /// Executes one output item if it is a call, with the checkpoints around its effect.
    async fn run_call(
        &mut self,
        ctx: &mut StepContext<'_>,
        item: &Item,
        browser_failed: &mut bool,
    ) -> Result<Option<Item>, StopReason> {
        let Some(call_id) = call_id_of(item) else {
            return Ok(None);
        };
        match item.view() {
            ItemView::ComputerCall(_) => {}
            ItemView::FunctionCall(call) => {
                let (name, args) = (call.name.clone(), call.arguments.clone());
                return self
                    .function_call(ctx, item, &call_id, &name, &args, browser_failed)
                    .await
                    .map(Some);
            }
            _ => return Ok(None),
        }
        // The checkpoint before the effect says it may have happened; the call starts once its
        // safety checks are approved.
        if let Some(call) = resume::proposed(item) {
            ctx.call_attempted(call, || self.snapshot())?;
        }
        let output = match self.computer_call(ctx, item).await {
            Ok(output) => output,
            Err(reason) => {
                ctx.call_stopped(&call_id, &reason);
                return Err(reason);
            }
        };
        ctx.call_answered(&call_id, || output.to_value(), None)?;
        ctx.call_completed(&call_id, "computer_call", || output.to_value());
        Ok(Some(output))
    }

    /// The local calls of `response`, as a paused turn shows them: tried while streaming or
    /// not, and whether a caller may supply their outputs (not-yet-tried calls of ordinary
    /// functions registered as suppliable; never browser or computer calls).
    fn turn_calls(&self, ctx: &StepContext<'_>, response: &Response) -> Vec<TurnCall> {
        response
            .output
            .iter()
            .filter_map(|item| {
                let call_id = call_id_of(item)?;
                let tried =
                    self.early_outputs.contains_key(&call_id) || ctx.executed.contains(&call_id);
                let (name, arguments, ordinary) = match item.view() {
                    ItemView::FunctionCall(call) => (
                        call.name.clone(),
                        serde_json::from_str(&call.arguments)
                            .unwrap_or_else(|_| Value::String(call.arguments.clone())),
                        !ctx.toolbox
                            .browser
                            .as_ref()
                            .is_some_and(|b| b.owns(&call.name))
                            && ctx
                                .toolbox
                                .functions
                                .get(&call.name)
                                .is_some_and(crate::functions::Function::is_suppliable),
                    ),
                    _ => (
                        "computer".to_owned(),
                        item.to_value()
                            .get("actions")
                            .cloned()
                            .unwrap_or(Value::Null),
                        false,
                    ),
                };
                Some(TurnCall {
                    call_id,
                    name,
                    arguments,
                    tried,
                    suppliable: ordinary && !tried,
                })
            })
            .collect()
    }

    /// The answer a caller supplied for a call of a suppliable function: recorded as completed
    /// (not attempted: nothing ran).
    fn supplied_output(
        &mut self,
        ctx: &mut StepContext<'_>,
        item: &Item,
        call_id: &str,
        out: &ToolOutput,
    ) -> Result<Item, StopReason> {
        let name = match item.view() {
            ItemView::FunctionCall(call) => call.name.clone(),
            _ => String::new(),
        };
        for image in out.images() {
            ctx.journal_image(call_id, image);
        }
        ctx.action_done(ActionDone {
            api: Api::Responses,
            call_id,
            member: &name,
            reason: Reason::Completed,
            duration: std::time::Duration::ZERO,
            answer: Answered::Ok,
            summary: crate::control::SUPPLIED_SUMMARY,
        });
        let output = Item::function_call_output(&FunctionCallOutput {
            call_id: call_id.to_owned(),
            output: openai_output(out, None),
        });
        ctx.call_answered(call_id, || output.to_value(), None)?;
        ctx.call_completed(call_id, &name, || output.to_value());
        Ok(output)
    }

    /// One `mcp_approval_request`: shown to the approver as an independent copy; answered by an
    /// `mcp_approval_response` bound to its id, saved in the turn's record of the request.
    async fn approve_mcp(
        &mut self,
        ctx: &mut StepContext<'_>,
        item: &Item,
    ) -> Result<Item, StopReason> {
        let value = raw(item);
        let request_id = value
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let start = Instant::now();
        let effect = self.mcp_effect(&value, false);
        let tool = effect.tool.clone();
        let decision = match ctx.approve(Effect::McpCall(effect)).await {
            Ok(decision) => decision,
            Err(reason) => {
                // Never answered: asked again if the run resumes.
                ctx.call_stopped(&request_id, &reason);
                return Err(reason);
            }
        };
        if ctx.cancel.is_cancelled() {
            // Never answered: asked again if the run resumes.
            ctx.call_stopped(&request_id, &StopReason::Cancelled);
            return Err(StopReason::Cancelled);
        }
        let approve = decision == Decision::Approve;
        ctx.action_done(ActionDone {
            api: Api::Responses,
            call_id: &request_id,
            member: &tool,
            reason: if approve {
                Reason::Completed
            } else {
                Reason::Refused
            },
            duration: start.elapsed(),
            answer: Answered::error_if(!approve),
            summary: if approve {
                "MCP call approved"
            } else {
                "MCP call refused"
            },
        });
        let answer = approval_response(&request_id, approve)?;
        ctx.call_answered(&request_id, || answer.to_value(), None)?;
        Ok(answer)
    }

    /// The approver's view of an `mcp_approval_request`.
    fn mcp_effect(&self, request: &Value, renewed: bool) -> McpCallEffect {
        let text = |key: &str| {
            request
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let label = text("server_label");
        let arguments = text("arguments");
        McpCallEffect {
            request_id: text("id"),
            server_url: self
                .declared
                .mcp_server(&label)
                .and_then(|s| s.url.as_deref())
                .map(shown_url),
            server_label: label,
            tool: text("name"),
            arguments: serde_json::from_str(&arguments).unwrap_or(Value::String(arguments)),
            renewed,
        }
    }

    /// One `computer_call`: parsed and validated whole (no effect if any action cannot be
    /// honoured), safety checks approved, each action approved and run once in order, then the
    /// final screenshot (approved too) answers it.
    async fn computer_call(
        &mut self,
        ctx: &mut StepContext<'_>,
        item: &Item,
    ) -> Result<Item, StopReason> {
        let raw = item.to_value();
        let call_id = raw
            .get("call_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let executor = self
            .computer
            .as_mut()
            .ok_or_else(|| StopReason::ComputerCallFailed {
                call_id: call_id.clone(),
                why: "the model called the computer tool, but this run has no desktop".into(),
            })?;
        let call =
            parse_call(&raw, executor.frame()).map_err(|e| StopReason::ComputerCallFailed {
                call_id: call_id.clone(),
                why: e.to_string(),
            })?;
        let raw_actions: Vec<Value> = match raw.get("actions") {
            Some(Value::Array(a)) => a.clone(),
            _ => raw.get("action").cloned().into_iter().collect(),
        };
        if !call.pending_safety_checks.is_empty() {
            let context = SafetyChecksContext {
                call_id: call.call_id.clone(),
                checks: call
                    .pending_safety_checks
                    .iter()
                    .map(|c| CheckView {
                        id: c.id.clone(),
                        code: c.code.clone(),
                        message: c.message.clone(),
                    })
                    .collect(),
                actions: raw_actions.clone(),
            };
            if ctx.approve_safety_checks(context).await? != Decision::Approve {
                return Err(StopReason::SafetyChecksDenied {
                    call_id: call.call_id,
                });
            }
        }
        let start = Instant::now();
        ctx.call_started(&call.call_id, "computer_call");
        for (index, action) in call.actions.iter().enumerate() {
            if ctx.cancel.is_cancelled() {
                return Err(StopReason::Cancelled);
            }
            {
                let decision = ctx
                    .approve(Effect::Computer(ActionContext {
                        call_id: call.call_id.clone(),
                        index,
                        name: action.kind().to_owned(),
                        action: raw_actions.get(index).cloned().unwrap_or(Value::Null),
                        parsed: action.action().clone(),
                        final_screenshot: false,
                        confirm_required: false,
                    }))
                    .await?;
                if decision != Decision::Approve {
                    ctx.action_done(ActionDone {
                        api: Api::Responses,
                        call_id: &call.call_id,
                        member: action.kind(),
                        reason: Reason::Refused,
                        duration: start.elapsed(),
                        answer: Answered::Error,
                        summary: "refused by the approver",
                    });
                    return Err(StopReason::ActionRefused {
                        call_id: call.call_id,
                        action: action.kind().to_owned(),
                    });
                }
            }
            let executor = self
                .computer
                .as_mut()
                .ok_or_else(|| StopReason::InvalidResponse("no desktop".into()))?;
            ctx.effect_began(&call.call_id);
            if let Err(e) = executor.execute(action, ctx.cancel).await {
                ctx.action_done(ActionDone {
                    api: Api::Responses,
                    call_id: &call.call_id,
                    member: action.kind(),
                    reason: if matches!(e, DesktopError::Cancelled) {
                        Reason::Cancelled
                    } else {
                        Reason::DriverFailed
                    },
                    duration: start.elapsed(),
                    answer: Answered::Error,
                    summary: "",
                });
                return Err(desktop_stop(&call.call_id, e));
            }
        }
        {
            let decision = ctx
                .approve(Effect::Computer(ActionContext {
                    call_id: call.call_id.clone(),
                    index: call.actions.len(),
                    name: "screenshot".into(),
                    action: json!({"type": "screenshot"}),
                    parsed: DesktopAction::Screenshot,
                    final_screenshot: true,
                    confirm_required: false,
                }))
                .await?;
            if decision != Decision::Approve {
                return Err(StopReason::ActionRefused {
                    call_id: call.call_id,
                    action: "screenshot".into(),
                });
            }
        }
        let executor = self
            .computer
            .as_mut()
            .ok_or_else(|| StopReason::InvalidResponse("no desktop".into()))?;
        let image = executor
            .screenshot(ctx.cancel)
            .await
            .map_err(|e| desktop_stop(&call.call_id, e))?;
        ctx.journal_image(&call.call_id, &image);
        ctx.action_done(ActionDone {
            api: Api::Responses,
            call_id: &call.call_id,
            member: "computer_call",
            reason: Reason::Completed,
            duration: start.elapsed(),
            answer: Answered::Ok,
            summary: "",
        });
        let output = call_output(&call.call_id, &image, &call.pending_safety_checks);
        Item::from_value(&output).map_err(|e| StopReason::InvalidResponse(e.to_string()))
    }

    /// One `function_call` (a browser tool, an ordinary function, or a name the run does not
    /// have) through the shared executor, in its frame: started, the checkpoint before its
    /// effect, the record and the checkpoint with its answer.
    async fn function_call(
        &mut self,
        ctx: &mut StepContext<'_>,
        item: &Item,
        call_id: &str,
        name: &str,
        arguments: &str,
        browser_failed: &mut bool,
    ) -> Result<Item, StopReason> {
        let site = CallSite { call_id, name };
        let start = executor::begin(ctx, site, resume::proposed(item), || self.snapshot())?;
        // Arguments arrive as JSON text: a function's that are not a JSON object stop the run;
        // the browser toolset answers its own ("not valid JSON").
        let answer = match executor::parse(
            ctx.toolbox,
            Api::Responses,
            name,
            Arguments::Text(arguments),
        ) {
            Ok(call) => executor::run(ctx, site, call, browser_failed).await,
            Err(e) => executor::failed(ctx, site, e, start),
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(reason) => {
                ctx.call_stopped(call_id, &reason);
                return Err(reason);
            }
        };
        for image in answer.output.images() {
            ctx.journal_image(call_id, image);
        }
        let output = Item::function_call_output(&FunctionCallOutput {
            call_id: call_id.to_owned(),
            output: openai_output(&answer.output, answer.detail),
        });
        let summary = answer.summary();
        let finished = Finished {
            reason: answer.reason,
            summary: &summary,
            wire: output.to_value(),
            interruption: None,
        };
        executor::finish(ctx, Api::Responses, site, start, finished)?;
        Ok(output)
    }
}

/// A function's output as a `function_call_output`'s `output`: text, or a list of
/// `input_text` and `input_image` parts. Spec: api-contracts B (function call output list).
fn openai_output(out: &ToolOutput, detail: Option<ImageDetail>) -> FunctionOutput {
    match out {
        ToolOutput::Text(text) => FunctionOutput::Text(text.clone()),
        ToolOutput::Parts(parts) => FunctionOutput::Parts(
            parts
                .iter()
                .map(|part| match part {
                    OutputPart::Text(text) => FunctionOutputPart::InputText { text: text.clone() },
                    OutputPart::Image(image) => FunctionOutputPart::InputImage {
                        image_url: Some(image.data_url()),
                        file_id: None,
                        detail: detail.map(|d| d.name().to_owned()),
                    },
                })
                .collect(),
        ),
    }
}

/// Reads a stream whole, telling `on_event` each event (its own copy).
async fn consume_told(
    ctx: &mut StepContext<'_>,
    mut stream: hands_models::openai::ResponseStream,
) -> Result<hands_models::Completed<Response>, hands_models::Error> {
    while let Some(event) = stream.next().await {
        let event = event?;
        ctx.event(|| RunEvent::OpenAiStream(event.clone()));
    }
    stream.finish().await
}

/// Refuses an early-execution policy that names a function the run does not declare (or one
/// twice), lets the computer run early without the computer tool, and a concurrency limit of
/// zero. Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución"; the SDK's
/// checks ("Early functions must be unique registered function names").
fn check_early_execution(
    settings: &OpenAiSettings,
    tools: &[Value],
    has_computer: bool,
) -> Result<(), RunError> {
    if settings.max_concurrent_calls == 0 {
        return Err(RunError::Config(
            crate::control::ZERO_CONCURRENT_CALLS.to_owned(),
        ));
    }
    let Some(policy) = &settings.early_execution else {
        return Ok(());
    };
    let declared: HashSet<&str> = tools
        .iter()
        .filter(|t| t.get("type").and_then(Value::as_str) == Some("function"))
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    let mut named = HashSet::new();
    for name in &policy.functions {
        if !declared.contains(name.as_str()) || !named.insert(name.as_str()) {
            return Err(RunError::Config(crate::control::early_name_refused(name)));
        }
    }
    if policy.computer && !has_computer {
        return Err(RunError::Config(
            crate::control::EARLY_COMPUTER_WITHOUT_COMPUTER.to_owned(),
        ));
    }
    Ok(())
}

/// The `call_id` of a computer or function call item.
/// Whether an `allowed_tools` choice in `required` mode names only local tools (functions, the
/// computer): the SDK refuses it, as a run under it could never finish.
fn always_local(choice: &Value) -> bool {
    let local = |t: &Value| {
        matches!(
            t.get("type").and_then(Value::as_str),
            Some("function" | "computer" | "computer_use" | "computer_use_preview")
        )
    };
    choice.get("type").and_then(Value::as_str) == Some("allowed_tools")
        && choice.get("mode").and_then(Value::as_str) == Some("required")
        && choice
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|tools| !tools.is_empty() && tools.iter().all(local))
}

fn call_id_of(item: &Item) -> Option<String> {
    crate::items::call_id(item).map(str::to_owned)
}

/// The `mcp_approval_response` answering request `request_id`.
fn approval_response(request_id: &str, approve: bool) -> Result<Item, StopReason> {
    Item::from_value(&json!({"type": MCP_APPROVAL_RESPONSE,
        "approval_request_id": request_id, "approve": approve}))
    .map_err(|e| StopReason::InvalidResponse(e.to_string()))
}

fn desktop_stop(call_id: &str, e: DesktopError) -> StopReason {
    match e {
        DesktopError::Cancelled => StopReason::Cancelled,
        DesktopError::Gone(why) => StopReason::DriverFault(why),
        other => StopReason::ComputerCallFailed {
            call_id: call_id.to_owned(),
            why: other.to_string(),
        },
    }
}

#[async_trait]
impl Session for OpenAiSession {
    fn add_person_note(&mut self, text: &str) -> Result<(), RunError> {
        self.push_input(Item::user_text(text));
        Ok(())
    }

    fn prepare(&mut self, toolbox: &Toolbox) -> Result<(), RunError> {
        let mut tools = Vec::new();
        if self.computer.is_some() {
            tools.push(ComputerCallExecutor::<Box<dyn Desktop>>::declaration());
        }
        if let Some(browser) = &toolbox.browser {
            tools.extend(browser.openai_declarations());
        }
        for f in toolbox.functions.iter() {
            if toolbox.browser.as_ref().is_some_and(|b| b.owns(f.name())) {
                return Err(RunError::Config(format!(
                    "function `{}` has the name of an enabled browser tool",
                    f.name()
                )));
            }
            tools.push(f.openai_declaration());
        }
        if toolbox.bash.is_some() || toolbox.editor.is_some() {
            return Err(RunError::Config(
                "bash and the text editor are Claude's tools; this run uses the Responses API"
                    .into(),
            ));
        }
        tools.extend(self.settings.extra_tools.iter().cloned());
        self.settings.context.validate().map_err(RunError::Config)?;
        // The SDK's rule: a context budget is hands' projection of the input; the server may
        // not truncate it on top ("context_budget cannot use server truncation").
        if self.settings.context.budget().is_some()
            && self.settings.truncation == Some(Truncation::Auto)
        {
            return Err(RunError::Config(
                "a context budget cannot be combined with truncation \"auto\": choose hands' budget or the server's truncation".into(),
            ));
        }
        self.declared = Declared::new(self.computer.is_some(), &tools);
        self.declared.selection = crate::items::Selection::of(self.settings.tool_choice.as_ref());
        self.declared.compaction = matches!(
            self.settings.context.management,
            ContextManagement::Native(_)
        );
        let mut labels = HashSet::new();
        for server in &self.declared.mcp {
            if server.label.trim().is_empty() || !labels.insert(server.label.as_str()) {
                return Err(RunError::InvalidTools(
                    "MCP server labels must be non-empty and unique".into(),
                ));
            }
        }
        // The next request must send the image generation call back by reference.
        // Spec: openai-browser-desktop-drivers, "Rechaza store: false … cuando declaras
        // image_generation."
        if !self.settings.store
            && tools
                .iter()
                .any(|t| t.get("type").and_then(Value::as_str) == Some("image_generation"))
        {
            return Err(RunError::Config(
                "this runner needs stored responses to continue after image generation: set store to true, or send a single request without the runner".into(),
            ));
        }
        check_early_execution(&self.settings, &tools, self.computer.is_some())?;
        self.no_retry = !self.declared.mcp.is_empty();
        let has_server_tool = tools.iter().any(is_server_tool);
        let forced = match &self.settings.tool_choice {
            Some(ToolChoice::Required) if !has_server_tool => Some("\"required\"".to_owned()),
            // Every tool it may choose from is local: the run could never finish.
            Some(ToolChoice::Other(choice)) if always_local(choice) => Some(choice.to_string()),
            Some(ToolChoice::Function(name)) => Some(format!("function {name:?}")),
            Some(ToolChoice::BuiltIn(kind))
                if matches!(
                    kind.as_str(),
                    "computer" | "computer_use" | "computer_use_preview"
                ) =>
            {
                Some(format!("{kind:?}"))
            }
            _ => None,
        };
        if let Some(forced) = forced {
            return Err(RunError::ForcedLocalToolChoice(forced));
        }
        self.tools = tools;
        Ok(())
    }

    fn api(&self) -> Api {
        Api::Responses
    }

    fn needs_approver(&self) -> Option<String> {
        let server = self
            .declared
            .mcp
            .iter()
            .find(|s| s.require_approval.may_ask())?;
        Some(format!(
            "MCP server `{}` asks a person to approve its calls (require_approval): give the runner an approver (Runner::set_approver)",
            server.label
        ))
    }

    async fn before_first_request(
        &mut self,
        approver: &mut Option<Box<dyn Approver>>,
        cancel: &hands_core::CancellationToken,
    ) -> Result<(), StopReason> {
        // Approvals given before the run stopped whose calls no completed result shows are
        // asked again: the person decides on the world as it is now.
        // Spec: openai-browser-desktop-drivers, "el ejecutor vuelve a pedir cada aprobación para
        // la que no haya una llamada MCP correspondiente ya completada".
        let open = server_items::approved_requests(&self.items);
        // Chained requests sent the older answers already; only unsent ones can change.
        let chained = self.settings.store && self.previous_response_id.is_some();
        let candidates: Vec<Item> = if chained {
            self.pending.clone()
        } else {
            self.items.clone()
        };
        for answer in candidates {
            if answer.item_type() != MCP_APPROVAL_RESPONSE {
                continue;
            }
            let value = raw(&answer);
            let Some(request_id) = value.get("approval_request_id").and_then(Value::as_str) else {
                continue;
            };
            if !open.contains_key(request_id) {
                continue;
            }
            let Some(request) = self.items.iter().map(raw).find(|r| {
                r.get("type").and_then(Value::as_str) == Some(crate::mcp::MCP_APPROVAL_REQUEST)
                    && r.get("id").and_then(Value::as_str) == Some(request_id)
            }) else {
                continue;
            };
            let Some(approver) = approver.as_mut() else {
                return Err(StopReason::ApprovalUnavailable(format!(
                    "the MCP call of approval request {} must be approved again, and the run has no approver",
                    request_id
                )));
            };
            let effect = Effect::McpCall(self.mcp_effect(&request, true));
            let approve =
                decide(approver.approve(effect, cancel), cancel).await == Decision::Approve;
            if cancel.is_cancelled() {
                return Err(StopReason::Cancelled);
            }
            let renewed = approval_response(request_id, approve)?;
            for list in [&mut self.items, &mut self.pending] {
                for item in list.iter_mut() {
                    if item.item_type() == MCP_APPROVAL_RESPONSE
                        && raw(item).get("approval_request_id").and_then(Value::as_str)
                            == Some(request_id)
                    {
                        *item = renewed.clone();
                    }
                }
            }
        }
        // Requests the run stopped before answering (a resumed turn closed from its records):
        // asked now, as the approver would have been.
        for request in server_items::unanswered_requests(&self.items) {
            let request_id = request
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let Some(approver) = approver.as_mut() else {
                return Err(StopReason::ApprovalUnavailable(format!(
                    "MCP approval request {request_id} was never answered, and the run has no approver"
                )));
            };
            let effect = Effect::McpCall(self.mcp_effect(&request, true));
            let approve =
                decide(approver.approve(effect, cancel), cancel).await == Decision::Approve;
            if cancel.is_cancelled() {
                return Err(StopReason::Cancelled);
            }
            self.push_input(approval_response(&request_id, approve)?);
        }
        Ok(())
    }

    fn apply_edit(&mut self, edit: &RunEdit) -> Result<(), String> {
        if matches!(edit, RunEdit::CompactBeforeNextTurn { .. }) {
            return Err(COMPACTION_NOT_ON_OPENAI.to_owned());
        }
        self.controls.apply(edit, &self.tools)?;
        // A function an edit removed is not declared: a call to it stops the run unrun.
        self.declared = Declared::new(
            self.computer.is_some(),
            &self.controls.declared(&self.tools),
        );
        Ok(())
    }

    fn snapshot(&self) -> Value {
        serde_json::json!({"items": self.items, "pending": self.pending,
            "previous_response_id": self.previous_response_id, "unanswered": self.unanswered,
            "caller_cuts": self.caller_cuts, "controls": self.controls})
    }

    fn restore(&mut self, conversation: &Value) -> Result<(), RunError> {
        let parse = |key: &str| -> Result<Vec<Item>, RunError> {
            serde_json::from_value(
                conversation
                    .get(key)
                    .cloned()
                    .unwrap_or(Value::Array(vec![])),
            )
            .map_err(|e| RunError::Config(format!("the checkpoint's {key} do not parse: {e}")))
        };
        self.items = parse("items")?;
        self.pending = parse("pending")?;
        self.previous_response_id = conversation
            .get("previous_response_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        // A resumed run still refuses a call id it has seen before.
        self.call_ids = self.items.iter().filter_map(call_id_of).collect();
        self.unanswered = false;
        self.projection = ProjectionState::default();
        self.controls = Controls::restore(conversation).map_err(RunError::Config)?;
        self.declared = Declared::new(
            self.computer.is_some(),
            &self.controls.declared(&self.tools),
        );
        // The caller's decisions are replayed as they were taken (never asked again).
        self.caller_cuts = match conversation.get("caller_cuts") {
            None | Some(Value::Null) => CallerCuts::default(),
            Some(cuts) => serde_json::from_value(cuts.clone()).map_err(|e| {
                RunError::Config(format!("the checkpoint's caller_cuts do not parse: {e}"))
            })?,
        };
        Ok(())
    }

    fn add_task(&mut self, task: &str) -> Result<(), RunError> {
        if self.unanswered {
            return Err(RunError::Config(
                "the previous run stopped with calls unanswered: start a new runner".into(),
            ));
        }
        self.push_input(Item::user_text(task));
        Ok(())
    }

    async fn step(
        &mut self,
        ctx: &mut StepContext<'_>,
        last_allowed: bool,
    ) -> Result<StepResult, StopReason> {
        let response = self.send(ctx, last_allowed).await?;
        *ctx.api_stop = Some(api_stop(&response));
        if response.status == Some(ResponseStatus::Failed) {
            return Err(StopReason::Api(format!(
                "the response failed: {}",
                response
                    .error
                    .as_ref()
                    .map(|e| format!("{e:?}"))
                    .unwrap_or_default()
            )));
        }
        // Calls of this response left unanswered, should the run stop here: a later task on
        // this runner is then refused.
        self.unanswered = response.output.iter().any(|i| answer_id(i).is_some());
        if let Some(reason) = self.early_stop.take() {
            // A call run early stopped the run. The response still arrived whole: it is kept,
            // and its calls are recorded with it (those run early keep their records), so a
            // resume closes the turn from its records instead of refusing a response it
            // thinks never came.
            self.unanswered = true;
            self.items
                .extend(response.output.iter().skip(self.appended_early).cloned());
            self.appended_early = response.output.len();
            let proposed = response
                .output
                .iter()
                .filter_map(resume::proposed)
                .collect();
            if let Err(e) = ctx.begin_turn(proposed, || self.snapshot()) {
                tracing::warn!(error = %e, "could not record the turn an early call stopped");
            }
            return Err(reason);
        }
        let text = response.output_text();
        // The history before this response: its approvals bind this response's MCP calls.
        let history = self.items.len().saturating_sub(self.appended_early);
        // Items an eager stream already appended are not appended twice.
        self.items
            .extend(response.output.iter().skip(self.appended_early).cloned());
        if self.settings.store {
            self.previous_response_id = Some(response.id.clone());
        }
        // Nothing runs before the whole response is checked (an eager stream checked each
        // item before running it).
        let kinds = check_response(&response, &self.declared, &self.call_ids)?;
        server_items::check(
            &response.output,
            &self.declared,
            server_items::approved_requests(&self.items[..history]),
        )?;
        self.call_ids
            .extend(response.output.iter().filter_map(answer_id));
        let calls = self.turn_calls(ctx, &response);
        let response_value = || serde_json::to_value(&response).unwrap_or(Value::Null);
        if !kinds
            .iter()
            .any(|k| matches!(k, ItemKind::Call | ItemKind::ApprovalRequest))
        {
            ctx.inspect(true, response_value, calls).await?;
            return Ok(StepResult::Finished(text));
        }
        // A server result that failed, is incomplete or still pending: nothing local runs
        // after it. Spec: openai-browser-desktop-drivers, "el turno se detiene antes de las
        // acciones locales".
        if let Some(why) = response.output.iter().find_map(server_items::unfinished) {
            return Err(StopReason::ServerToolFailed(why));
        }
        if last_allowed {
            ctx.inspect(true, response_value, calls).await?;
            return Ok(StepResult::StepLimit(text));
        }
        let mut choices = ctx.inspect(false, response_value, calls).await?;
        ctx.begin_turn(
            response
                .output
                .iter()
                .filter_map(resume::proposed)
                .collect(),
            || self.snapshot(),
        )?;
        let mut browser_failed = false;
        let mut early = std::mem::take(&mut self.early_outputs);
        for (item, kind) in response.output.iter().zip(&kinds) {
            if ctx.cancel.is_cancelled() {
                return Err(StopReason::Cancelled);
            }
            if *kind == ItemKind::ApprovalRequest {
                let answer = self.approve_mcp(ctx, item).await?;
                self.push_input(answer);
                continue;
            }
            let Some(call_id) = call_id_of(item) else {
                continue;
            };
            // Executed while the response streamed: its output is ready. Supplied by the
            // caller: nothing runs, and nobody is asked (nothing takes effect).
            let output = if let Some(output) = early.remove(&call_id) {
                output
            } else if let Some(out) = choices.supplied.remove(&call_id) {
                self.supplied_output(ctx, item, &call_id, &out)?
            } else {
                match self.run_call(ctx, item, &mut browser_failed).await? {
                    Some(output) => output,
                    None => continue,
                }
            };
            self.push_input(output);
        }
        for text in ctx.take_queued() {
            self.push_input(Item::user_text(&text));
        }
        self.unanswered = false;
        ctx.end_turn(|| self.snapshot())?;
        Ok(StepResult::Continue)
    }
}
