//! Eager execution on Claude: each complete `tool_use` block of an ordinary function runs as
//! it streams in, in order (concurrently for independent functions without a ledger), and is
//! answered with its result whatever the message's end.
//!
//! Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" (`eager`,
//! `early_execution`, `max_concurrent_calls`).

use std::time::Instant;

use hands_models::anthropic::{Block, Message, StreamEvent};
use hands_toolset::wire::{ToolResult as WireResult, ToolUse};
use serde_json::Value;

use super::{AnthropicSession, call_site, run_plain, text_result, tool_output_result};
use crate::approval::{Decision, Effect, FunctionEffect, refused_text};
use crate::control::{EarlyCall, EarlyDecision, RunEvent};
use crate::diagnostics::{Api, Reason};
use crate::eager::{EagerCalls, EagerPass};
use crate::executor::{self, Finished};
use crate::functions::Job;
use crate::outcome::StopReason;
use crate::session::{ActionDone, Answered, FunctionFailure, StepContext};

/// A complete `tool_use` block as it streamed in: the call and the block (for the hook).
pub(crate) struct StreamedUse {
    tool_use: ToolUse,
    block: Value,
}

impl AnthropicSession {
    /// Reads a stream, offering each complete `tool_use` block to eager execution as it
    /// arrives ([`EagerPass`]). A call that stops the run is kept for after the stream; a
    /// stream that fails stops the run with the executions recorded.
    pub(super) async fn consume_eagerly(
        &mut self,
        ctx: &mut StepContext<'_>,
        mut stream: hands_models::anthropic::MessageStream,
    ) -> Result<hands_models::Completed<Message>, hands_models::Error> {
        let mut pass = EagerPass::new(self.settings.max_concurrent_calls);
        while let Some(event) = stream.next().await {
            let event = match event {
                Ok(event) => event,
                Err(e) => {
                    pass.finish(self, ctx).await;
                    return Err(e);
                }
            };
            ctx.event(|| RunEvent::ClaudeStream(event.clone()));
            let StreamEvent::ContentBlockStop { index } = event else {
                continue;
            };
            if !pass.open(self, ctx) {
                continue;
            }
            let Some(block) = stream.accumulator().completed_block(index) else {
                continue;
            };
            let Block::ToolUse(t) = block.view() else {
                continue;
            };
            let call = StreamedUse {
                tool_use: ToolUse {
                    id: t.id.clone(),
                    name: t.name.clone(),
                    toolset_name: t.toolset_name.clone(),
                    input: t.input.clone(),
                },
                block: block.to_value(),
            };
            pass.offer(self, ctx, &call).await;
        }
        pass.finish(self, ctx).await;
        stream.finish().await
    }

    /// Keeps `reason` as the run's stop, `tool_use` answered with it.
    fn stop_at(&mut self, ctx: &mut StepContext<'_>, tool_use: &ToolUse, reason: StopReason) {
        ctx.call_stopped(&tool_use.id, &reason);
        self.early_results.insert(
            tool_use.id.clone(),
            WireResult::error(tool_use, format!("Error: {reason}")),
        );
        self.early_stop = Some(reason);
    }

    /// Whether `tool_use` calls an ordinary function marked independent and may run
    /// concurrently: only when no ledger is kept (a ledger's checkpoints follow the calls'
    /// order). Spec: openai-browser-desktop-drivers, "Las ejecuciones persistentes, las acciones
    /// del navegador y las acciones de la computadora mantienen el orden."
    fn is_independent_use(&self, ctx: &StepContext<'_>, tool_use: &ToolUse) -> bool {
        ctx.checkpoints.is_none()
            && self.is_ordinary(ctx, tool_use)
            && ctx
                .toolbox
                .functions
                .get(&tool_use.name)
                .is_some_and(crate::functions::Function::is_independent)
    }

    /// Approves and starts an independent function's call; its result is collected by
    /// [`AnthropicSession::settle_jobs`]. A refused call is answered at once (`Ok(None)`).
    async fn start_independent_use(
        &mut self,
        ctx: &mut StepContext<'_>,
        tool_use: &ToolUse,
    ) -> Result<Option<Job>, StopReason> {
        let start = Instant::now();
        ctx.call_started(&tool_use.id, &tool_use.name);
        let effect = Effect::Function(FunctionEffect {
            call_id: tool_use.id.clone(),
            name: tool_use.name.clone(),
            arguments: tool_use.input.clone(),
        });
        if ctx.approve(effect).await? == Decision::Deny {
            let (result, reason) = (
                text_result(tool_use, true, &refused_text(&tool_use.name)),
                Reason::Refused,
            );
            let text = result.text().unwrap_or("").to_owned();
            ctx.action_done(ActionDone {
                api: Api::Messages,
                call_id: &tool_use.id,
                member: &tool_use.name,
                reason,
                duration: start.elapsed(),
                answer: Answered::Error,
                summary: &text,
            });
            let answer = result.to_json();
            ctx.call_completed(&tool_use.id, &tool_use.name, || answer);
            self.early_results.insert(tool_use.id.clone(), result);
            return Ok(None);
        }
        let Some(function) = ctx.toolbox.functions.get(&tool_use.name) else {
            return Ok(None);
        };
        match Job::spawn(function, &tool_use.id, tool_use.input.clone(), start) {
            Ok(job) => Ok(Some(job)),
            Err(e) => match ctx.function_failed(&tool_use.id, &tool_use.name, e, start) {
                FunctionFailure::Stop(reason) => Err(reason),
                FunctionFailure::Answer(text) => {
                    let result = WireResult::error(tool_use, text);
                    let answer = result.to_json();
                    ctx.call_completed(&tool_use.id, &tool_use.name, || answer);
                    self.early_results.insert(tool_use.id.clone(), result);
                    Ok(None)
                }
            },
        }
    }

    /// Waits for every started independent call, in the order they started, and keeps their
    /// results; the first that stops the run is kept as the stop.
    async fn settle_jobs(&mut self, ctx: &mut StepContext<'_>, jobs: &mut Vec<Job>) {
        for mut job in jobs.drain(..) {
            let tool_use = ToolUse {
                id: job.call_id.clone(),
                name: job.name.clone(),
                toolset_name: None,
                input: Value::Null,
            };
            let outcome = job.join().await;
            match outcome {
                Ok(out) => {
                    let result = tool_output_result(&tool_use, &out);
                    ctx.action_done(ActionDone {
                        api: Api::Messages,
                        call_id: &job.call_id,
                        member: &job.name,
                        reason: Reason::Completed,
                        duration: job.start.elapsed(),
                        answer: Answered::Ok,
                        summary: result.text().unwrap_or(""),
                    });
                    let answer = result.to_json();
                    if let Err(reason) = ctx.call_answered(&job.call_id, || answer.clone(), None)
                        && self.early_stop.is_none()
                    {
                        self.early_stop = Some(reason);
                    }
                    ctx.call_completed(&job.call_id, &job.name, || answer);
                    self.early_results.insert(job.call_id.clone(), result);
                }
                Err(e) => match ctx.function_failed(&job.call_id, &job.name, e, job.start) {
                    FunctionFailure::Stop(reason) => {
                        self.early_results.insert(
                            job.call_id.clone(),
                            WireResult::error(&tool_use, format!("Error: {reason}")),
                        );
                        if self.early_stop.is_none() {
                            self.early_stop = Some(reason);
                        }
                    }
                    FunctionFailure::Answer(text) => {
                        let result = WireResult::error(&tool_use, text);
                        let answer = result.to_json();
                        if let Err(reason) =
                            ctx.call_answered(&job.call_id, || answer.clone(), None)
                            && self.early_stop.is_none()
                        {
                            self.early_stop = Some(reason);
                        }
                        ctx.call_completed(&job.call_id, &job.name, || answer);
                        self.early_results.insert(job.call_id.clone(), result);
                    }
                },
            }
        }
    }
}

impl EagerCalls for AnthropicSession {
    type Call = StreamedUse;

    fn has_stopped(&self) -> bool {
        self.early_stop.is_some()
    }

    /// An ordinary function the policy names (every one without a policy) that
    /// `before_early_call` does not defer.
    fn may_run_early(&mut self, ctx: &mut StepContext<'_>, call: &StreamedUse) -> bool {
        let tool_use = &call.tool_use;
        if !self.is_ordinary(ctx, tool_use) {
            return false;
        }
        if let Some(policy) = &self.settings.early_execution
            && !policy.functions.contains(&tool_use.name)
        {
            return false;
        }
        match ctx.before_early_call.as_mut() {
            Some(hook) => {
                hook(&EarlyCall {
                    call_id: tool_use.id.clone(),
                    name: tool_use.name.clone(),
                    item: call.block.clone(),
                }) == EarlyDecision::Execute
            }
            None => true,
        }
    }

    fn is_independent(&self, ctx: &StepContext<'_>, call: &StreamedUse) -> bool {
        self.is_independent_use(ctx, &call.tool_use)
    }

    async fn start_independent(
        &mut self,
        ctx: &mut StepContext<'_>,
        call: &StreamedUse,
    ) -> Result<Option<Job>, StopReason> {
        self.start_independent_use(ctx, &call.tool_use).await
    }

    fn stopped_at(&mut self, ctx: &mut StepContext<'_>, call: &StreamedUse, reason: StopReason) {
        self.stop_at(ctx, &call.tool_use, reason);
    }

    async fn settle(&mut self, ctx: &mut StepContext<'_>, jobs: &mut Vec<Job>) {
        self.settle_jobs(ctx, jobs).await;
    }

    /// Only ordinary functions run early: never a toolset's block.
    async fn run_in_order(&mut self, ctx: &mut StepContext<'_>, call: &StreamedUse) {
        let tool_use = &call.tool_use;
        let start = match self.begin_call(ctx, tool_use) {
            Ok(start) => start,
            Err(reason) => {
                self.early_stop = Some(reason);
                return;
            }
        };
        let mut browser_failed = false;
        match run_plain(ctx, &mut browser_failed, tool_use).await {
            Ok((result, reason)) => {
                let finished = Finished {
                    reason,
                    summary: result.text().unwrap_or(""),
                    wire: result.to_json(),
                    interruption: None,
                };
                if let Err(reason) =
                    executor::finish(ctx, Api::Messages, call_site(tool_use), start, finished)
                {
                    self.early_stop = Some(reason);
                }
                self.early_results.insert(tool_use.id.clone(), result);
            }
            Err(reason) => self.stop_at(ctx, tool_use, reason),
        }
    }
}
