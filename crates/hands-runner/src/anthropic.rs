//! The Anthropic Messages side of a run: the conversation kept verbatim, the request built each
//! step (tools, cache breakpoints, screenshot history), and a turn's `tool_use` blocks executed
//! in order and answered in one `user` message with exactly one `tool_result` each.
//!
//! Spec: claude-computer-use-tool, "Comprende el ciclo del agente", "Acciones por lotes",
//! "Gestionar el historial de capturas de pantalla"; api-contracts A.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use hands_core::{Desktop, DesktopError};
use hands_models::anthropic::{
    AnthropicClient, Block, ContentBlock, Message, MessageContent, MessageParam, MessagesRequest,
    MessagesStopReason, Role, System, ThinkingConfig, ToolChoice, ToolResult as ApiToolResult,
};
use hands_sandbox::strings::{BASH_TOOL_NAME, EDITOR_TOOL_NAME};
use hands_toolset::browser::BrowserFault;
use hands_toolset::claude_browser::Batch as ClaudeBatch;
use hands_toolset::computer::declaration::check_tools;
use hands_toolset::computer::members::Member;
use hands_toolset::computer::{Batch, ComputerToolset, Shape};
use hands_toolset::strings::{LEGACY_20250124_BETA, LEGACY_20251124_BETA};
use hands_toolset::wire::{ResultBlock, ToolResult as WireResult, ToolUse};
use serde_json::Value;

use crate::approval::{
    ActionContext, Approver, Decision, Effect, McpServerEffect, decide, refused_text,
};
use crate::checkpoint::interruption;
use crate::context::{
    ClaudeEdit, ContextConfig, ContextManagement, LastScreenshot, ProjectionState,
    place_breakpoints, project_messages,
};
use crate::control::{EarlyExecution, RunEvent, TurnCall};
use crate::diagnostics::{Api, Reason, Record, Stage, Usage};
use crate::edits::{COMPACTION_BESIDE_COMPACT_EDIT, Controls, RunEdit};
use crate::functions::{OutputPart, ToolOutput};
use crate::mcp::{MCP_CLIENT_BETA, shown_url};
use crate::outcome::{ApiStop, RunError, StopReason};
use crate::server_blocks::{self, ClaudeToolset};
use crate::session::{
    ActionDone, Answered, NOT_EXECUTED_STEP_LIMIT, Session, StepContext, StepResult,
    cancelled_text, not_executed_turn_ended,
};
use crate::tools::is_server_tool;

mod compaction;
mod eager;
mod rebuild;
mod resume;
mod threads;

use threads::{Sent, ThreadState, is_thread_lost, recreate};
pub use threads::{THREADS_BETA, Threads};

use crate::executor::{self, Arguments, CallAnswer, CallSite, Finished, ToolCall};

#[cfg(test)]
use rebuild::LOST_RESULT_TEXT;
use rebuild::{rebuild_messages, rebuild_system, result_blocks};

/// How a Claude run talks to the Messages API.
#[derive(Debug, Clone)]
pub struct AnthropicSettings {
    /// The model.
    pub model: String,
    /// Output token limit per request.
    pub max_tokens: u32,
    /// The system prompt.
    pub system: Option<String>,
    /// Thinking, if any.
    pub thinking: Option<ThinkingConfig>,
    /// `output_config.effort` (`low`, `medium`, `high`, `xhigh`, `max`), if set.
    pub effort: Option<String>,
    /// `tool_choice` (default auto). One that forces a local tool is refused before the run.
    pub tool_choice: Option<ToolChoice>,
    /// Use SSE streaming (the runner still waits for the complete message before acting,
    /// unless `eager`).
    pub stream: bool,
    /// With `stream`: run each complete `tool_use` block of an ordinary function as it
    /// arrives, in order, before the message ends (and so before its `stop_reason` is known).
    /// Toolset calls keep their batch: a computer, browser, bash or editor call is never run
    /// early, and it defers every call after it. Off when the run declares server tools or MCP
    /// servers (their results are examined first) and on the last allowed request. A call run
    /// early is answered with its result whatever the message's end.
    ///
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" (`eager`); the
    /// Anthropic SDK's `run_tools_eagerly`.
    pub eager: bool,
    /// With `eager`: which functions may run early (`None`: every ordinary function; an empty
    /// policy defers them all). Only `functions` applies on Claude; `computer: true` is
    /// refused (toolset calls keep their batch).
    pub early_execution: Option<EarlyExecution>,
    /// With `eager` and no ledger: how many calls of functions marked
    /// [`crate::functions::Function::independent`] may run at once (at least 1), as on OpenAI.
    ///
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución"
    /// (`max_concurrent_calls`, default 2).
    pub max_concurrent_calls: usize,
    /// The context of each request: who shrinks it (hands, in cache-friendly batches and an
    /// optional budget; or the API's tool-result clearing), cache breakpoints, unchanged
    /// screenshots.
    pub context: ContextConfig,
    /// More tool entries sent as given: server tools (`web_search_20250305`,
    /// `code_execution_20250825`, …) and the `mcp_toolset` of each MCP server
    /// ([`crate::mcp::McpServer::claude_toolset`]).
    pub extra_tools: Vec<Value>,
    /// The MCP connector's `mcp_servers` entries ([`crate::mcp::McpServer::claude_server`]),
    /// each referenced by exactly one `mcp_toolset` of `extra_tools`. Declaring any adds the
    /// beta header, turns automatic HTTP retries off, and needs an approver: the API calls these
    /// servers' tools without asking, so each server is approved once before the first request.
    pub mcp_servers: Vec<Value>,
    /// Whether requests go on message threads (only new messages sent; the whole conversation
    /// whenever a thread cannot be continued). Off by default.
    pub threads: Threads,
}

impl AnthropicSettings {
    /// Settings for `model` with the defaults: 4,096 output tokens, no thinking, auto tool choice,
    /// no streaming, the spec's history defaults.
    pub fn new(model: impl Into<String>) -> AnthropicSettings {
        AnthropicSettings {
            model: model.into(),
            max_tokens: 4096,
            system: None,
            thinking: None,
            effort: None,
            tool_choice: None,
            stream: false,
            eager: false,
            early_execution: None,
            max_concurrent_calls: crate::control::DEFAULT_MAX_CONCURRENT_CALLS,
            context: ContextConfig::default(),
            extra_tools: Vec::new(),
            mcp_servers: Vec::new(),
            threads: Threads::Off,
        }
    }
}

/// Why an early computer is refused on Claude.
pub const EARLY_COMPUTER_ON_CLAUDE: &str = "early_execution.computer is not supported on Claude: the computer toolset's calls run in their batch, after the message completes";

/// A request's system prompt, tools and messages, projected from the history.
type Projected = (Option<System>, Vec<Value>, Vec<MessageParam>);

/// The Messages side of a runner.
pub(crate) struct AnthropicSession {
    client: AnthropicClient,
    settings: AnthropicSettings,
    computer: Option<ComputerToolset<Box<dyn Desktop>>>,
    tools: Vec<Value>,
    /// The declarations that make the run's identity: `tools` and the MCP connector's
    /// `mcp_servers` (saved sanitised: URLs as fingerprints, no tokens).
    declared: Vec<Value>,
    messages: Vec<MessageParam>,
    /// Whether the last assistant turn has `tool_use` blocks that no `user` message answers
    /// yet, or is a paused turn the API expects back last.
    unanswered: bool,
    /// What the budget has cut so far (it only grows).
    projection: ProjectionState,
    /// The last screenshot the model was sent.
    last_screenshot: LastScreenshot,
    /// The declared MCP toolsets.
    toolsets: Vec<ClaudeToolset>,
    /// The container the last answer ran server code in: sent back so the API keeps it.
    container: Option<String>,
    /// Whether the MCP servers were approved (once per runner).
    mcp_approved: bool,
    /// Eager mode: the results of calls run while the message streamed, by `tool_use` id.
    early_results: HashMap<String, WireResult>,
    /// Eager mode: a call run early that stopped the run.
    early_stop: Option<StopReason>,
    /// The thread the API holds, when requests go on threads.
    thread: ThreadState,
    /// The last message is a paused turn the API expects back, last and unchanged.
    paused: bool,
    /// What mid-run edits changed (saved with every checkpoint).
    controls: Controls,
}

impl AnthropicSession {
    pub(crate) fn new(
        client: AnthropicClient,
        settings: AnthropicSettings,
        computer: Option<ComputerToolset<Box<dyn Desktop>>>,
    ) -> AnthropicSession {
        AnthropicSession {
            client,
            settings,
            computer,
            tools: Vec::new(),
            declared: Vec::new(),
            messages: Vec::new(),
            unanswered: false,
            projection: ProjectionState::default(),
            last_screenshot: LastScreenshot::default(),
            toolsets: Vec::new(),
            early_results: HashMap::new(),
            early_stop: None,
            container: None,
            mcp_approved: false,
            thread: ThreadState::default(),
            paused: false,
            controls: Controls::default(),
        }
    }

    fn betas(&self) -> Vec<String> {
        let mut betas = Vec::new();
        if let Some(computer) = &self.computer {
            match computer.config().shape {
                Shape::Legacy20251124 { .. } => betas.push(LEGACY_20251124_BETA.to_owned()),
                Shape::Legacy20250124 => betas.push(LEGACY_20250124_BETA.to_owned()),
                Shape::Toolset(_) => {}
            }
        }
        if let ContextManagement::Native(native) = &self.settings.context.management {
            betas.push(native.anthropic_beta().to_owned());
        }
        if !self.settings.mcp_servers.is_empty() {
            betas.push(MCP_CLIENT_BETA.to_owned());
        }
        betas
    }

    /// The next request's system prompt, tools and messages: the history projected (old
    /// screenshots dropped in batches, the budget's cuts), with this request's cache
    /// breakpoints. The history itself is never changed; assistant messages go verbatim.
    fn manage_context(&mut self) -> Result<Projected, StopReason> {
        let values: Vec<Value> = self
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                serde_json::to_value(m).map_err(|e| StopReason::ProjectionFailed {
                    what: format!("message {i}"),
                    why: e.to_string(),
                })
            })
            .collect::<Result<_, _>>()?;
        let projected = project_messages(&values, &self.settings.context, &mut self.projection)
            .map_err(|over| {
                StopReason::from((
                    over,
                    self.settings
                        .context
                        .budget()
                        .unwrap_or(crate::context::ContextBudget {
                            max_input_bytes: 0,
                            max_input_images: 0,
                        }),
                ))
            })?;
        let mut kept_at = Vec::new();
        let mut kept = Vec::new();
        for (i, value) in projected.into_iter().enumerate() {
            if let Some(value) = value {
                kept_at.push(i);
                kept.push(value);
            }
        }
        let mut system = match self
            .controls
            .params
            .instructions
            .as_ref()
            .or(self.settings.system.as_ref())
        {
            Some(s) => Value::String(s.clone()),
            None => Value::Null,
        };
        let mut tools = self.controls.declared(&self.tools);
        place_breakpoints(
            &mut system,
            &mut tools,
            &mut kept,
            self.settings.context.turn_breakpoints,
        );
        let messages = rebuild_messages(&self.messages, kept_at, kept)?;
        let system = rebuild_system(system)?;
        Ok((system, tools, messages))
    }

    /// A request with what every request of the run carries: the model, the output limit, the
    /// system prompt, the tools, thinking, the MCP servers and the container.
    fn base_request(
        &self,
        system: Option<System>,
        tools: Vec<Value>,
        messages: Vec<MessageParam>,
    ) -> MessagesRequest {
        let mut request = MessagesRequest::new(
            self.settings.model.clone(),
            self.controls
                .params
                .max_output_tokens
                .unwrap_or(self.settings.max_tokens),
            messages,
        );
        request.system = system;
        request.tools = tools;
        request.thinking = self.settings.thinking.clone();
        if !self.settings.mcp_servers.is_empty() {
            request.extra.insert(
                "mcp_servers".into(),
                Value::Array(self.settings.mcp_servers.clone()),
            );
        }
        if let Some(container) = &self.container {
            request
                .extra
                .insert("container".into(), Value::String(container.clone()));
        }
        request
    }

    async fn send(
        &mut self,
        ctx: &mut StepContext<'_>,
        last_allowed: bool,
    ) -> Result<Message, StopReason> {
        let (system, tools, messages) = self.manage_context()?;
        let (whole_system, whole_tools) = (system.clone(), tools.clone());
        let mut request = self.base_request(system, tools, messages);
        if let Some(effort) = self
            .controls
            .params
            .effort
            .as_ref()
            .or(self.settings.effort.as_ref())
        {
            request.output_config = Some(hands_models::anthropic::OutputConfig {
                effort: Some(effort.clone()),
                format: None,
            });
        }
        request.betas = self.betas();
        // The last allowed request cannot start new effects: the model may only answer.
        request.tool_choice = if last_allowed {
            Some(ToolChoice::None)
        } else {
            self.settings.tool_choice.clone()
        };
        if let ContextManagement::Native(native) = &self.settings.context.management {
            request.context_management = Some(native.anthropic_edits());
        }
        let mut sent_as = self.thread.prepare(self.settings.threads, &mut request);
        // MCP servers and server tools may act while the request is under way: saved pending
        // first, so a run stopped before its answer is reconciled, never sent again by itself.
        let servers = self.toolsets.iter().map(|t| t.server.clone()).collect();
        let remote = crate::tools::remote_actors(servers, &self.settings.extra_tools);
        if !remote.is_empty() {
            ctx.mcp_request_attempted(remote, || self.snapshot())?;
        }
        ctx.journal_request(&request);
        let start = Instant::now();
        let eager = self.settings.stream
            && self.settings.eager
            && !last_allowed
            && self.settings.mcp_servers.is_empty()
            && !self.settings.extra_tools.iter().any(is_server_tool);
        let mut sent = self.transmit(ctx, &request, eager).await;
        // A thread the API no longer holds: the same request, creating a new thread with the
        // whole conversation (nothing ran on a request the API did not find).
        if let (
            Err(e),
            Sent::OnThread {
                conversation,
                continued: true,
            },
        ) = (&sent, &sent_as)
            && is_thread_lost(e)
        {
            let conversation = conversation.clone();
            recreate(
                &mut request,
                conversation.clone(),
                whole_system,
                whole_tools,
            );
            sent_as = Sent::OnThread {
                conversation,
                continued: false,
            };
            ctx.journal_request(&request);
            sent = self.transmit(ctx, &request, eager).await;
        }
        let duration = start.elapsed();
        match sent {
            Ok(done) => {
                self.thread.answered(sent_as, &done.value);
                let usage = Usage {
                    input_tokens: Some(done.value.usage.input_tokens),
                    output_tokens: Some(done.value.usage.output_tokens),
                    total_tokens: Some(
                        done.value.usage.total_input_tokens() + done.value.usage.output_tokens,
                    ),
                    cache_read_input_tokens: done.value.usage.cache_read_input_tokens,
                    cache_creation_input_tokens: done.value.usage.cache_creation_input_tokens,
                };
                ctx.request_done(Api::Messages, duration, Some(usage), done.meta.attempts());
                ctx.journal_response(&done.value, duration, done.meta.attempts());
                Ok(done.value)
            }
            Err(e) => {
                self.thread.forget();
                Err(ctx.request_failed(Api::Messages, duration, &e))
            }
        }
    }

    /// Sends one request (streamed or not; run eagerly when `eager`), once when it declares MCP
    /// servers: the servers may have acted on a request that then failed.
    async fn transmit(
        &mut self,
        ctx: &mut StepContext<'_>,
        request: &MessagesRequest,
        eager: bool,
    ) -> Result<hands_models::Completed<Message>, hands_models::Error> {
        let client = if self.settings.mcp_servers.is_empty() {
            self.client.clone()
        } else {
            self.client
                .with_retry_policy(hands_models::RetryPolicy::disabled())
        };
        self.early_results.clear();
        self.early_stop = None;
        if self.settings.stream {
            match client.stream_message(request, ctx.cancel).await {
                Ok(stream) if eager => self.consume_eagerly(ctx, stream).await,
                Ok(stream) if ctx.on_event.is_some() => consume_told(ctx, stream).await,
                Ok(stream) => stream.finish().await,
                Err(e) => Err(e),
            }
        } else {
            client.create_message(request, ctx.cancel).await
        }
    }

    /// Whether `tool_use` calls an ordinary function (not a toolset member, the browser, bash or
    /// the editor).
    fn is_ordinary(&self, ctx: &StepContext<'_>, tool_use: &ToolUse) -> bool {
        let toolset = tool_use.toolset_name.is_some()
            || self.computer.as_ref().is_some_and(|c| c.owns(tool_use))
            || ctx
                .toolbox
                .claude_browser
                .as_ref()
                .is_some_and(|b| b.owns(tool_use))
            || ctx
                .toolbox
                .browser
                .as_ref()
                .is_some_and(|b| b.owns(&tool_use.name))
            || (tool_use.name == BASH_TOOL_NAME && ctx.toolbox.bash.is_some())
            || (tool_use.name == EDITOR_TOOL_NAME && ctx.toolbox.editor.is_some());
        !toolset && ctx.toolbox.functions.get(&tool_use.name).is_some()
    }

    /// Runs one turn's tool uses in order and answers them all in one `user` message: exactly
    /// one `tool_result` per `tool_use`, even when the run stops part-way.
    async fn execute(
        &mut self,
        ctx: &mut StepContext<'_>,
        uses: Vec<ToolUse>,
        mut supplied: std::collections::BTreeMap<String, ToolOutput>,
    ) -> Result<(), StopReason> {
        let mut turn = TurnUnderWay::with_capacity(uses.len());
        for tool_use in &uses {
            self.answer_one(ctx, &mut turn, tool_use, &mut supplied)
                .await;
        }
        self.finish_batches(ctx, &mut turn).await;
        let TurnUnderWay {
            mut results,
            browser_json,
            mut stop,
            ..
        } = turn;
        for (result, browser) in results.iter().zip(&browser_json) {
            if browser.is_none() {
                for image in result.images() {
                    ctx.journal_image(&result.tool_use_id, image);
                }
            }
        }
        // The run directory keeps every screenshot; the model is not sent the same one twice.
        if self.settings.context.unchanged_screenshots {
            self.dedupe_screenshots(&uses, &browser_json, &mut results);
        }
        if ctx.cancel.is_cancelled() && stop.is_none() {
            stop = Some(StopReason::Cancelled);
        }
        let blocks: Vec<Value> = results
            .iter()
            .zip(browser_json)
            .map(|(result, browser)| browser.unwrap_or_else(|| result.to_json()))
            .collect();
        let queued = ctx.take_queued();
        self.push_results(ctx, &uses, &blocks, queued);
        // Every call is answered, even when the run stops here: this ends a completed turn,
        // unless a call was interrupted during its effect (then the turn stays pending).
        if let Err(reason) = ctx.end_turn(|| self.snapshot())
            && stop.is_none()
        {
            stop = Some(reason);
        }
        match stop {
            Some(reason) => Err(reason),
            None => Ok(()),
        }
    }

    /// Answers one `tool_use` of the turn: with the result of its early run, as not executed
    /// once the run is stopping, with what the caller supplied, or by running it in the
    /// executor's frame (the checkpoint before its effect, the record and checkpoint after).
    async fn answer_one(
        &mut self,
        ctx: &mut StepContext<'_>,
        turn: &mut TurnUnderWay,
        tool_use: &ToolUse,
        supplied: &mut std::collections::BTreeMap<String, ToolOutput>,
    ) {
        let index = turn.results.len();
        turn.browser_json.push(None);
        // Run while the message streamed: its result is ready.
        if let Some(result) = self.early_results.remove(&tool_use.id) {
            turn.results.push(result);
            return;
        }
        if turn.stop.is_some() || ctx.cancel.is_cancelled() {
            // Answered without running, so the conversation stays valid for a resume.
            turn.results
                .push(WireResult::error(tool_use, cancelled_text()));
            return;
        }
        // Answered by the caller: nothing runs, and nobody is asked (nothing takes effect). A
        // call to a tool an edit removed is answered as a call to an unknown tool.
        let removed = self
            .controls
            .removed(&tool_use.name)
            .then(|| ToolOutput::Text(crate::session::unknown_tool_text(&tool_use.name)));
        if let Some(out) = supplied.remove(&tool_use.id).or(removed) {
            let result = tool_output_result(tool_use, &out);
            ctx.action_done(ActionDone {
                api: Api::Messages,
                call_id: &tool_use.id,
                member: &tool_use.name,
                reason: Reason::Completed,
                duration: Duration::ZERO,
                answer: Answered::Ok,
                summary: crate::control::SUPPLIED_SUMMARY,
            });
            let answer = result.to_json();
            if let Err(reason) = ctx.call_answered(&tool_use.id, || answer.clone(), None) {
                turn.stop_once(reason);
            }
            ctx.call_completed(&tool_use.id, &tool_use.name, || answer);
            turn.results.push(result);
            return;
        }
        let start = match self.begin_call(ctx, tool_use) {
            Ok(start) => start,
            Err(reason) => {
                turn.results
                    .push(WireResult::error(tool_use, cancelled_text()));
                turn.stop = Some(reason);
                return;
            }
        };
        // Claude's browser toolset answers with a `browser_state` block the wire type has no
        // room for: its JSON replaces the wire result at the same position.
        let mut browser_json = None;
        let ran = if let Some(browser) = ctx
            .toolbox
            .claude_browser
            .as_mut()
            .filter(|b| b.owns(tool_use))
        {
            let result = browser
                .run_block(&mut turn.browser_batch, tool_use, ctx.cancel)
                .await;
            browser_json = Some(result.to_json());
            let reason = if result.is_error() {
                Reason::Failed
            } else {
                Reason::Completed
            };
            Ok((result.result().clone(), reason))
        } else if self.computer.as_ref().is_some_and(|c| c.owns(tool_use)) {
            self.run_computer(ctx, &mut turn.batch, tool_use, index)
                .await
        } else {
            run_plain(ctx, &mut turn.browser_failed, tool_use).await
        };
        let faulted = turn.batch.has_fault() || turn.browser_batch.has_fault();
        let interruption = interruption(ctx.cancel.is_cancelled(), faulted);
        let (result, reason) = match ran {
            Ok(done) => done,
            Err(reason) => {
                // This call is the one that stopped the run: its answer says why.
                ctx.call_stopped(&tool_use.id, &reason);
                turn.results
                    .push(WireResult::error(tool_use, format!("Error: {reason}")));
                turn.stop = Some(reason);
                return;
            }
        };
        if browser_json.is_some() {
            for image in result.images() {
                ctx.journal_image(&tool_use.id, image);
            }
        }
        let finished = Finished {
            reason,
            summary: result.text().unwrap_or(""),
            wire: browser_json.clone().unwrap_or_else(|| result.to_json()),
            interruption,
        };
        if let Err(reason) =
            executor::finish(ctx, Api::Messages, call_site(tool_use), start, finished)
        {
            turn.stop_once(reason);
        }
        if let Some(slot) = turn.browser_json.get_mut(index) {
            *slot = browser_json;
        }
        turn.results.push(result);
        if turn.batch.has_fault() {
            turn.stop_once(StopReason::DriverFault(format!(
                "the desktop failed during `{}`",
                tool_use.name
            )));
        }
        if turn.browser_batch.has_fault() {
            turn.stop_once(StopReason::BrowserFault(format!(
                "the browser failed during `{}`",
                tool_use.name
            )));
        }
    }

    /// A block of the computer toolset (by `toolset_name`, or the legacy `computer` tool): read
    /// once — member and validated action — and only a block that will run is shown to the
    /// approver (nobody is asked about one after a failure, answered as not executed, or one
    /// that cannot be read, answered with what is wrong); the run uses the same reading.
    async fn run_computer(
        &mut self,
        ctx: &mut StepContext<'_>,
        batch: &mut Batch,
        tool_use: &ToolUse,
        index: usize,
    ) -> Result<(WireResult, Reason), StopReason> {
        let computer = self
            .computer
            .as_mut()
            .ok_or_else(|| StopReason::InvalidResponse("no desktop".into()))?;
        let parsed = computer.parse_block(tool_use);
        let refused_member = match &parsed {
            Ok(block) if !batch.failed() => {
                let confirm_required = computer.config().confirm_members.contains(&block.member);
                let decision = ctx
                    .approve(Effect::Computer(ActionContext {
                        call_id: tool_use.id.clone(),
                        index,
                        name: block.member.name().to_owned(),
                        action: tool_use.input.clone(),
                        parsed: block.action.clone(),
                        final_screenshot: false,
                        confirm_required,
                    }))
                    .await?;
                (decision == Decision::Deny).then_some(block.member)
            }
            _ => None,
        };
        let computer = self
            .computer
            .as_mut()
            .ok_or_else(|| StopReason::InvalidResponse("no desktop".into()))?;
        Ok(match refused_member {
            Some(member) => (
                computer.refuse_block(batch, tool_use, index, &refused_text(member.name())),
                Reason::Refused,
            ),
            None => {
                let result = computer
                    .run_parsed(batch, tool_use, parsed, index, ctx.cancel)
                    .await;
                let reason = if result.is_error {
                    Reason::Failed
                } else {
                    Reason::Completed
                };
                (result, reason)
            }
        })
    }

    /// The turn's batches end: the computer toolset's final screenshot joins the results, and a
    /// fault of either toolset stops the run (after this turn is answered).
    async fn finish_batches(&mut self, ctx: &mut StepContext<'_>, turn: &mut TurnUnderWay) {
        let batch = std::mem::take(&mut turn.batch);
        if let Some(computer) = self.computer.as_mut()
            && let Some(fault) = computer
                .finish_batch(batch, &mut turn.results, ctx.cancel)
                .await
        {
            turn.stop_once(match fault {
                DesktopError::Cancelled => StopReason::Cancelled,
                other => StopReason::DriverFault(other.to_string()),
            });
        }
        let browser_batch = std::mem::take(&mut turn.browser_batch);
        if let Some(browser) = ctx.toolbox.claude_browser.as_mut()
            && let Some(fault) = browser.finish_batch(browser_batch)
        {
            turn.stop_once(match fault {
                BrowserFault::Cancelled => StopReason::Cancelled,
                other => StopReason::BrowserFault(other.to_string()),
            });
        }
    }

    /// Replaces a screenshot the model has already seen unchanged with a note (the journal kept
    /// it); zoom and browser images are never replaced.
    fn dedupe_screenshots(
        &mut self,
        uses: &[ToolUse],
        browser_json: &[Option<Value>],
        results: &mut [WireResult],
    ) {
        let is_screenshot: Vec<bool> = uses
            .iter()
            .zip(browser_json)
            .map(|(tool_use, browser)| {
                browser.is_none()
                    && self.computer.as_ref().is_some_and(|c| {
                        c.owns(tool_use) && c.member(tool_use) != Some(Member::Zoom)
                    })
            })
            .collect();
        let visible_for = match &self.settings.context.management {
            ContextManagement::Native(native) => Some(native.keep_tool_uses),
            ContextManagement::Client(_) => None,
        };
        self.last_screenshot
            .dedupe(results, &is_screenshot, visible_for);
    }
    /// The client calls of a turn, as a paused turn shows them: suppliable when they call an
    /// ordinary function registered as suppliable (not a toolset's member, the browser, bash
    /// or the editor).
    fn turn_calls(&self, ctx: &StepContext<'_>, uses: &[ToolUse]) -> Vec<TurnCall> {
        uses.iter()
            .map(|tool_use| {
                let tried = ctx.executed.contains(&tool_use.id);
                TurnCall {
                    call_id: tool_use.id.clone(),
                    name: tool_use.name.clone(),
                    arguments: tool_use.input.clone(),
                    tried,
                    suppliable: !tried
                        && self.is_ordinary(ctx, tool_use)
                        && ctx
                            .toolbox
                            .functions
                            .get(&tool_use.name)
                            .is_some_and(crate::functions::Function::is_suppliable),
                }
            })
            .collect()
    }

    /// Answers, in the conversation, the `tool_use` blocks of a turn that runs nothing, so a
    /// later task can continue it (the API refuses a `tool_use` left unanswered).
    fn answer_unrun(&mut self, ctx: &mut StepContext<'_>, uses: &[ToolUse], text: &str) {
        if uses.is_empty() {
            return;
        }
        // A call run while the message streamed is answered with what it did.
        let results: Vec<Value> = uses
            .iter()
            .map(|tool_use| match self.early_results.remove(&tool_use.id) {
                Some(result) => result.to_json(),
                None => WireResult::error(tool_use, text).to_json(),
            })
            .collect();
        self.push_results(ctx, uses, &results, Vec::new());
    }

    /// Answers `uses` in one `user` message: each with its result (`results`, in the same
    /// order), then any text a person queued. A result that is not a valid `tool_result` for
    /// its call is answered with an error text instead and recorded
    /// ([`Stage::Output`], [`Reason::InvalidOutput`]): every call gets exactly one answer, and
    /// a result that answers no call is recorded as well, never dropped unseen.
    fn push_results(
        &mut self,
        ctx: &mut StepContext<'_>,
        uses: &[ToolUse],
        results: &[Value],
        queued: Vec<String>,
    ) {
        let (mut blocks, replaced, unpaired) = result_blocks(uses, results);
        if unpaired > 0 {
            tracing::warn!("{unpaired} result(s) answered no call of the turn and were not sent");
            ctx.record(Record::new(
                Api::Messages,
                Stage::Output,
                Reason::InvalidOutput,
                Duration::ZERO,
            ));
        }
        for tool_use in replaced {
            tracing::warn!(
                call_id = %tool_use.id,
                "the result of `{}` was not a valid tool_result: the model was told it was lost",
                tool_use.name
            );
            ctx.record(
                Record::new(
                    Api::Messages,
                    Stage::Output,
                    Reason::InvalidOutput,
                    Duration::ZERO,
                )
                .of_call(&tool_use.id, &tool_use.name),
            );
        }
        blocks.extend(queued.iter().map(|t| ContentBlock::text(t)));
        self.messages.push(MessageParam::user(blocks));
        self.unanswered = false;
    }
}

/// The answer to a call whose effect the approver refused: it did not run.
/// The calls of a turn under way: their results in order (a Claude browser member's JSON, with
/// its `browser_state`, beside it), the two toolsets' batches, and why the run stops, once
/// known.
#[derive(Default)]
struct TurnUnderWay {
    results: Vec<WireResult>,
    browser_json: Vec<Option<Value>>,
    batch: Batch,
    browser_batch: ClaudeBatch,
    /// An earlier browser function tool call of this turn was not ok.
    browser_failed: bool,
    stop: Option<StopReason>,
}

impl AnthropicSession {
    /// Records a block's call as started and attempted (proposed, with the conversation so
    /// far), before it runs; a ledger that refuses the record stops the run.
    fn begin_call(
        &self,
        ctx: &mut StepContext<'_>,
        tool_use: &ToolUse,
    ) -> Result<std::time::Instant, StopReason> {
        executor::begin(
            ctx,
            call_site(tool_use),
            Some(resume::proposed(tool_use)),
            || self.snapshot(),
        )
    }
}

/// A block's call as the ledger records it: its id and name.
fn call_site(tool_use: &ToolUse) -> CallSite<'_> {
    CallSite {
        call_id: &tool_use.id,
        name: &tool_use.name,
    }
}

impl TurnUnderWay {
    fn with_capacity(n: usize) -> TurnUnderWay {
        TurnUnderWay {
            results: Vec::with_capacity(n),
            browser_json: Vec::with_capacity(n),
            ..TurnUnderWay::default()
        }
    }

    /// The first reason the run stops wins.
    fn stop_once(&mut self, reason: StopReason) {
        if self.stop.is_none() {
            self.stop = Some(reason);
        }
    }
}

/// A plain `tool_use` (bash, the editor, a browser function tool, an ordinary function, or an
/// unknown name) through the shared executor, answered as a `tool_result`.
async fn run_plain(
    ctx: &mut StepContext<'_>,
    browser_failed: &mut bool,
    tool_use: &ToolUse,
) -> Result<(WireResult, Reason), StopReason> {
    let site = CallSite {
        call_id: &tool_use.id,
        name: &tool_use.name,
    };
    // A `toolset_name` no toolset of the run owns names nothing this run has.
    let call = if tool_use.toolset_name.is_some() {
        ToolCall::Unknown
    } else {
        let start = Instant::now();
        match executor::parse(
            ctx.toolbox,
            Api::Messages,
            &tool_use.name,
            Arguments::Json(&tool_use.input),
        ) {
            Ok(call) => call,
            Err(e) => {
                let answer = executor::failed(ctx, site, e, start)?;
                return Ok((claude_result(tool_use, &answer), answer.reason));
            }
        }
    };
    let answer = executor::run(ctx, site, call, browser_failed).await?;
    Ok((claude_result(tool_use, &answer), answer.reason))
}

/// An answer as a `tool_result`: text (never empty), or text and `image` blocks in order.
fn claude_result(tool_use: &ToolUse, answer: &CallAnswer) -> WireResult {
    match &answer.output {
        ToolOutput::Text(text) => text_result(tool_use, answer.is_error(), text),
        ToolOutput::Parts(parts) => WireResult {
            tool_use_id: tool_use.id.clone(),
            toolset_name: tool_use.toolset_name.clone(),
            is_error: answer.is_error(),
            content: parts
                .iter()
                .map(|part| match part {
                    OutputPart::Text(text) => ResultBlock::Text(text.clone()),
                    OutputPart::Image(image) => ResultBlock::Image(image.clone()),
                })
                .collect(),
        },
    }
}

/// A text result; an empty text still says something (an empty content is not useful).
/// A function's output as a `tool_result`: text, or text and `image` blocks in order.
fn tool_output_result(tool_use: &ToolUse, out: &ToolOutput) -> WireResult {
    match out {
        ToolOutput::Text(text) => text_result(tool_use, false, text),
        ToolOutput::Parts(parts) => WireResult::ok(
            tool_use,
            parts
                .iter()
                .map(|part| match part {
                    OutputPart::Text(text) => ResultBlock::Text(text.clone()),
                    OutputPart::Image(image) => ResultBlock::Image(image.clone()),
                })
                .collect(),
        ),
    }
}

/// Reads a stream whole, telling `on_event` each event (its own copy).
async fn consume_told(
    ctx: &mut StepContext<'_>,
    mut stream: hands_models::anthropic::MessageStream,
) -> Result<hands_models::Completed<Message>, hands_models::Error> {
    while let Some(event) = stream.next().await {
        let event = event?;
        ctx.event(|| RunEvent::ClaudeStream(event.clone()));
    }
    stream.finish().await
}

fn text_result(tool_use: &ToolUse, is_error: bool, text: &str) -> WireResult {
    let text = if text.is_empty() { "(no output)" } else { text };
    if is_error {
        WireResult::error(tool_use, text)
    } else {
        WireResult::ok(tool_use, vec![ResultBlock::Text(text.to_owned())])
    }
}

/// The answer, in the conversation kept, to a local call of a turn whose server result failed
/// or is pending: it did not run.
pub const NOT_EXECUTED_SERVER_RESULT: &str =
    "Not executed: a server tool's result in this turn failed or is still pending.";

/// The MCP connector's declarations as the API takes them: server names non-empty and unique,
/// each server referenced by exactly one `mcp_toolset`, each toolset naming a declared server.
fn check_mcp(servers: &[Value], toolsets: &[ClaudeToolset]) -> Result<(), RunError> {
    let invalid = |why: String| Err(RunError::InvalidTools(why));
    let mut names: Vec<&str> = Vec::new();
    for server in servers {
        let name = server.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() || names.contains(&name) {
            return invalid("MCP server names must be non-empty and unique".into());
        }
        let n = toolsets.iter().filter(|t| t.server == name).count();
        if n != 1 {
            return invalid(format!(
                "MCP server `{name}` must be referenced by exactly one mcp_toolset (found {n})"
            ));
        }
        names.push(name);
    }
    if let Some(orphan) = toolsets
        .iter()
        .find(|t| !names.contains(&t.server.as_str()))
    {
        return invalid(format!(
            "an mcp_toolset names MCP server `{}`, which mcp_servers does not declare",
            orphan.server
        ));
    }
    Ok(())
}

#[async_trait]
impl Session for AnthropicSession {
    fn add_person_note(&mut self, text: &str) -> Result<(), RunError> {
        self.append_to_user_turn(vec![ContentBlock::text(text)])
    }

    fn prepare(&mut self, toolbox: &crate::tools::Toolbox) -> Result<(), RunError> {
        self.settings.context.validate().map_err(RunError::Config)?;
        if self.settings.max_concurrent_calls == 0 {
            return Err(RunError::Config(
                crate::control::ZERO_CONCURRENT_CALLS.to_owned(),
            ));
        }
        if let Some(policy) = &self.settings.early_execution {
            if policy.computer {
                return Err(RunError::Config(EARLY_COMPUTER_ON_CLAUDE.to_owned()));
            }
            let mut named = std::collections::HashSet::new();
            for name in &policy.functions {
                if toolbox.functions.get(name).is_none() || !named.insert(name.as_str()) {
                    return Err(RunError::Config(crate::control::early_name_refused(name)));
                }
            }
        }
        let mut tools = Vec::new();
        if let Some(computer) = &self.computer {
            tools.push(computer.declaration());
        }
        if let Some(bash) = &toolbox.bash {
            tools.push(bash.declaration());
        }
        if let Some(editor) = &toolbox.editor {
            tools.push(editor.declaration());
        }
        if let Some(browser) = &toolbox.browser {
            tools.extend(browser.anthropic_declarations());
        }
        if let Some(browser) = &toolbox.claude_browser {
            tools.push(browser.declaration());
        }
        for f in toolbox.functions.iter() {
            if toolbox.browser.as_ref().is_some_and(|b| b.owns(f.name())) {
                return Err(RunError::Config(format!(
                    "function `{}` has the name of an enabled browser tool",
                    f.name()
                )));
            }
            tools.push(f.anthropic_declaration());
        }
        tools.extend(self.settings.extra_tools.iter().cloned());
        check_tools(&tools).map_err(|e| RunError::InvalidTools(e.to_string()))?;
        self.toolsets = tools.iter().filter_map(ClaudeToolset::parse).collect();
        check_mcp(&self.settings.mcp_servers, &self.toolsets)?;
        let has_server_tool = tools.iter().any(is_server_tool);
        match &self.settings.tool_choice {
            Some(ToolChoice::Any { .. }) if !has_server_tool => {
                return Err(RunError::ForcedLocalToolChoice("{\"type\":\"any\"}".into()));
            }
            Some(ToolChoice::Tool { name, .. })
                if !tools.iter().any(|t| {
                    is_server_tool(t) && t.get("name").and_then(Value::as_str) == Some(name)
                }) =>
            {
                return Err(RunError::ForcedLocalToolChoice(format!(
                    "{{\"type\":\"tool\",\"name\":{name:?}}}"
                )));
            }
            _ => {}
        }
        self.declared = tools
            .iter()
            .chain(&self.settings.mcp_servers)
            .cloned()
            .collect();
        self.tools = tools;
        Ok(())
    }

    fn api(&self) -> Api {
        Api::Messages
    }

    fn snapshot(&self) -> Value {
        serde_json::json!({"messages": self.messages, "unanswered": self.unanswered,
            "container": self.container, "paused": self.paused, "controls": self.controls})
    }

    fn restore(&mut self, conversation: &Value) -> Result<(), RunError> {
        let messages = conversation
            .get("messages")
            .cloned()
            .ok_or_else(|| RunError::Config("the checkpoint holds no messages".into()))?;
        self.messages = serde_json::from_value(messages).map_err(|e| {
            RunError::Config(format!("the checkpoint's messages do not parse: {e}"))
        })?;
        self.container = conversation
            .get("container")
            .and_then(Value::as_str)
            .map(str::to_owned);
        // A paused turn goes back as it is: nothing may follow it but the request that sends it.
        self.paused = conversation.get("paused").and_then(Value::as_bool) == Some(true);
        self.unanswered = self.paused;
        self.controls = Controls::restore(conversation).map_err(RunError::Config)?;
        self.projection = ProjectionState::default();
        self.last_screenshot.forget();
        Ok(())
    }

    fn add_task(&mut self, task: &str) -> Result<(), RunError> {
        if self.unanswered {
            return Err(RunError::Config(
                "the previous run stopped with tool calls unanswered, or on a paused turn: start a new runner".into(),
            ));
        }
        match self.messages.last_mut() {
            // After a finished run the last message is the assistant's: a new user turn follows.
            Some(last) if last.role == Role::User => {
                if let MessageContent::Blocks(blocks) = &mut last.content {
                    blocks.push(ContentBlock::text(task));
                }
            }
            _ => self.messages.push(MessageParam::user_text(task)),
        }
        Ok(())
    }

    async fn step(
        &mut self,
        ctx: &mut StepContext<'_>,
        last_allowed: bool,
    ) -> Result<StepResult, StopReason> {
        // A compaction an edit scheduled goes first: its summary replaces the conversation.
        if let Some(instructions) = self.controls.compaction.clone() {
            self.compact(ctx, instructions).await?;
            self.controls.compaction = None;
        }
        let message = self.send(ctx, last_allowed).await?;
        let text = message.text();
        let uses: Vec<ToolUse> = message
            .content
            .iter()
            .filter_map(|b| match b.view() {
                Block::ToolUse(t) => Some(ToolUse {
                    id: t.id.clone(),
                    name: t.name.clone(),
                    toolset_name: t.toolset_name.clone(),
                    input: t.input.clone(),
                }),
                _ => None,
            })
            .collect();
        let stop = ApiStop::messages(message.stop_reason.as_ref().map(MessagesStopReason::as_str));
        *ctx.api_stop = Some(stop.clone());
        let message_json = serde_json::to_value(&message).unwrap_or(Value::Null);
        let message_value = || message_json.clone();
        self.messages.push(message.to_param());
        self.paused = false;
        // A summary replaces the conversation before it: later requests and checkpoints carry
        // the compacted history (the journal keeps every request and answer whole).
        let n_compacted = compaction::drop_replaced(&mut self.messages);
        if n_compacted > 0 {
            tracing::info!(n_compacted, "the API compacted the conversation");
        }
        if let Some(reason) = self.early_stop.take() {
            // A call run early stopped the run. The message still arrived whole: its calls are
            // recorded with it (those run early keep their records), so a resume closes the
            // turn from its records instead of refusing a response it thinks never came.
            let proposed = uses.iter().map(resume::proposed).collect();
            if let Err(e) = ctx.begin_turn(proposed, || self.snapshot()) {
                tracing::warn!(error = %e, "could not record the turn an early call stopped");
            }
            // Every call is answered (the ones run with their results), so the conversation
            // stays valid.
            self.answer_unrun(ctx, &uses, cancelled_text());
            self.unanswered = false;
            return Err(reason);
        }
        if let Some(container) = server_blocks::container_id(&message.extra) {
            self.container = Some(container);
        }
        // Server blocks are checked before any local call: a server the run did not declare
        // stops it; a failed or pending server result stops the turn's local calls.
        let server_trouble = match server_blocks::check(&message.content, &self.toolsets) {
            Ok(trouble) => trouble,
            Err(reason) => {
                self.answer_unrun(ctx, &uses, NOT_EXECUTED_SERVER_RESULT);
                self.unanswered = false;
                return Err(reason);
            }
        };
        // Client tools run only on `tool_use`; every other stop runs nothing of the turn.
        // Spec: api-contracts A, `stop_reason`; the SDK's runner (`_STOP_REASON_STEPS`).
        match message.stop_reason {
            Some(MessagesStopReason::ToolUse) if !uses.is_empty() => {}
            // A compaction alone (`pause_after_compaction`): the turn goes on from it, and the
            // runner saves the compacted conversation before the next request.
            Some(MessagesStopReason::Compaction) => {
                self.unanswered = false;
                return Ok(StepResult::Paused);
            }
            Some(MessagesStopReason::PauseTurn) => {
                // The API asks for the paused turn back, last and unchanged, to let it go on:
                // nothing of it runs, and a later task cannot follow it.
                self.unanswered = true;
                self.paused = true;
                return Ok(StepResult::Paused);
            }
            Some(
                MessagesStopReason::ToolUse
                | MessagesStopReason::EndTurn
                | MessagesStopReason::StopSequence,
            ) => {
                self.answer_unrun(ctx, &uses, &not_executed_turn_ended(&stop));
                self.unanswered = false;
                ctx.inspect(true, message_value, self.turn_calls(ctx, &uses))
                    .await?;
                return Ok(StepResult::Finished(text));
            }
            // `max_tokens`, `refusal`, `model_context_window_exceeded`, and a reason this
            // runner does not know (or none): the turn is not a finish, and runs nothing.
            _ => {
                self.answer_unrun(ctx, &uses, &not_executed_turn_ended(&stop));
                self.unanswered = false;
                return Err(StopReason::ModelStopped(stop));
            }
        }
        if let Some(why) = server_trouble {
            // Spec: openai-browser-desktop-drivers, "Si los resultados del servidor indican un
            // fallo, están incompletos o siguen pendientes, el turno se detiene antes de las
            // acciones locales."
            self.answer_unrun(ctx, &uses, NOT_EXECUTED_SERVER_RESULT);
            self.unanswered = false;
            return Err(StopReason::ServerToolFailed(why));
        }
        self.unanswered = true;
        if last_allowed {
            // Sent with tool choice `none`: its calls never run.
            self.answer_unrun(ctx, &uses, NOT_EXECUTED_STEP_LIMIT);
            ctx.inspect(true, message_value, self.turn_calls(ctx, &uses))
                .await?;
            return Ok(StepResult::StepLimit(text));
        }
        let choices = ctx
            .inspect(false, message_value, self.turn_calls(ctx, &uses))
            .await?;
        ctx.begin_turn(uses.iter().map(resume::proposed).collect(), || {
            self.snapshot()
        })?;
        self.execute(ctx, uses, choices.supplied).await?;
        Ok(StepResult::Continue)
    }

    async fn before_first_request(
        &mut self,
        approver: &mut Option<Box<dyn Approver>>,
        cancel: &hands_core::CancellationToken,
    ) -> Result<(), StopReason> {
        if self.mcp_approved {
            return Ok(());
        }
        // The MCP connector has no approval requests: the API calls a declared server's tools
        // as the model chooses. A person approves each server once, before anything is sent.
        for server in &self.settings.mcp_servers {
            let text = |key: &str| server.get(key).and_then(Value::as_str).unwrap_or("");
            let label = text("name").to_owned();
            let tools = self
                .toolsets
                .iter()
                .find(|t| t.server == label)
                .and_then(ClaudeToolset::enabled_only);
            let Some(approver) = approver.as_mut() else {
                return Err(StopReason::ApprovalUnavailable(format!(
                    "MCP server `{label}` would be called without asking, and the run has no approver"
                )));
            };
            let effect = Effect::McpServer(McpServerEffect {
                server_label: label.clone(),
                server_url: shown_url(text("url")),
                tools,
            });
            if decide(approver.approve(effect, cancel), cancel).await != Decision::Approve {
                return Err(if cancel.is_cancelled() {
                    StopReason::Cancelled
                } else {
                    StopReason::McpServerRefused(label)
                });
            }
        }
        self.mcp_approved = true;
        Ok(())
    }

    fn apply_edit(&mut self, edit: &RunEdit) -> Result<(), String> {
        if matches!(edit, RunEdit::CompactBeforeNextTurn { .. })
            && matches!(&self.settings.context.management,
                ContextManagement::Native(n) if matches!(n.claude_edit, ClaudeEdit::Compact(_)))
        {
            return Err(COMPACTION_BESIDE_COMPACT_EDIT.to_owned());
        }
        self.controls.apply(edit, &self.tools)?;
        // A thread keeps the system prompt and tools it was created with.
        let changes_thread = match edit {
            RunEdit::Params(params) => params.instructions.is_some(),
            RunEdit::AddTools { .. } | RunEdit::RemoveTools { .. } => true,
            _ => false,
        };
        if changes_thread {
            self.thread.forget();
        }
        Ok(())
    }

    fn mid_turn(&self) -> bool {
        self.paused || compaction::ends_with_compaction(&self.messages)
    }

    fn needs_approver(&self) -> Option<String> {
        if let Some(server) = self.settings.mcp_servers.first() {
            return Some(format!(
                "the Messages API calls the tools of MCP server `{}` without asking: give the runner an approver (Runner::set_approver)",
                server.get("name").and_then(Value::as_str).unwrap_or("")
            ));
        }
        let computer = self.computer.as_ref()?;
        let members = &computer.config().confirm_members;
        if members.is_empty() {
            return None;
        }
        let names: Vec<&str> = members.iter().map(|m| m.name()).collect();
        Some(format!(
            "the computer toolset requires a confirmation before {}: give the runner an approver (Runner::set_approver)",
            names.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests;
