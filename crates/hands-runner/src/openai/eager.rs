//! Eager execution on OpenAI: each completed call item of an ordinary function (or a computer
//! call, when the policy says so) runs as the response streams in, in order, concurrently for
//! independent functions without a ledger.
//!
//! Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" (`eager`,
//! `early_execution`, `before_early_call`, `max_concurrent_calls`).

use super::*;
use crate::eager::{EagerCalls, EagerPass};

impl OpenAiSession {
    /// Which calls may run early: `None` lets every call run; otherwise the function names
    /// and whether computer calls may. A `before_early_call` hook without a policy makes every
    /// local call a candidate (the SDK's rule).
    pub(super) fn early_policy(&self, ctx: &StepContext<'_>) -> Option<(BTreeSet<String>, bool)> {
        match &self.settings.early_execution {
            Some(policy) => Some((policy.functions.iter().cloned().collect(), policy.computer)),
            None if ctx.before_early_call.is_some() => Some((
                self.tools
                    .iter()
                    .filter(|t| t.get("type").and_then(Value::as_str) == Some("function"))
                    .filter_map(|t| t.get("name").and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect(),
                self.computer.is_some(),
            )),
            None => None,
        }
    }

    /// Whether `item`, a completed streamed call, may run now: the policy allows it and the
    /// hook does not defer it. Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una
    /// ejecución" (`early_execution`, `before_early_call`: "No puede adelantar una llamada que esté
    /// fuera de la lista permitida").
    fn may_run_early_by(
        ctx: &mut StepContext<'_>,
        policy: Option<&(BTreeSet<String>, bool)>,
        item: &Item,
    ) -> bool {
        let name = match item.view() {
            ItemView::ComputerCall(_) => None,
            ItemView::FunctionCall(call) => Some(call.name.clone()),
            _ => return false,
        };
        let allowed = match (policy, &name) {
            (None, _) => true,
            (Some((_, computer)), None) => *computer,
            (Some((names, _)), Some(name)) => names.contains(name),
        };
        if !allowed {
            return false;
        }
        let Some(hook) = ctx.before_early_call.as_mut() else {
            return true;
        };
        let call = EarlyCall {
            call_id: call_id_of(item).unwrap_or_default(),
            name: name.unwrap_or_else(|| "computer".to_owned()),
            item: item.to_value(),
        };
        hook(&call) == EarlyDecision::Execute
    }

    /// Reads a stream, offering each completed call to eager execution as it arrives
    /// ([`EagerPass`]); returns the whole response. An action failure is kept for after the
    /// stream (the run stops then); a stream that fails or changes an executed item stops the
    /// run with the executions recorded — calls already started are waited for first, so their
    /// records stay whole.
    pub(super) async fn consume_eagerly(
        &mut self,
        ctx: &mut StepContext<'_>,
        mut stream: hands_models::openai::ResponseStream,
    ) -> Result<hands_models::Completed<Response>, hands_models::Error> {
        let mut seen = self.call_ids.clone();
        let mut pass = EagerPass::new(self.settings.max_concurrent_calls);
        let policy = self.early_policy(ctx);
        let mut calls = StreamCalls {
            session: self,
            policy,
            browser_failed: false,
        };
        while let Some(event) = stream.next().await {
            let event = match event {
                Ok(event) => event,
                Err(e) => {
                    pass.finish(&mut calls, ctx).await;
                    return Err(e);
                }
            };
            ctx.event(|| RunEvent::OpenAiStream(event.clone()));
            for (_, item) in stream.take_ready() {
                calls.session.items.push(item.clone());
                calls.session.appended_early += 1;
                if !pass.open(&calls, ctx) {
                    continue;
                }
                // Each item is checked as it completes, as the whole response is otherwise: a
                // call that is not `completed`, or an item the request did not declare, runs
                // nothing and nothing after it runs.
                let checked = check_item(&item, &calls.session.declared)
                    .and_then(|kind| note_call_id(&item, &mut seen).map(|()| kind));
                match checked {
                    Ok(ItemKind::Call) => pass.offer(&mut calls, ctx, &item).await,
                    Ok(_) => {}
                    Err(reason) => {
                        tracing::info!(%reason, "a streamed item stopped the run");
                        calls.session.early_stop = Some(reason);
                    }
                }
            }
        }
        pass.finish(&mut calls, ctx).await;
        stream.finish().await
    }

    /// Whether `item` calls an ordinary function marked independent, and may run concurrently:
    /// only when no ledger is kept (a ledger's checkpoints must follow the calls' order).
    /// Spec: openai-browser-desktop-drivers, "Las ejecuciones persistentes, las acciones del
    /// navegador y las acciones de la computadora mantienen el orden."
    fn is_independent_call(&self, ctx: &StepContext<'_>, item: &Item) -> bool {
        if ctx.checkpoints.is_some() {
            return false;
        }
        let ItemView::FunctionCall(call) = item.view() else {
            return false;
        };
        if ctx
            .toolbox
            .browser
            .as_ref()
            .is_some_and(|b| b.owns(&call.name))
        {
            return false;
        }
        ctx.toolbox
            .functions
            .get(&call.name)
            .is_some_and(crate::functions::Function::is_independent)
    }

    /// Approves and starts an independent function's call; its output is collected by
    /// [`OpenAiSession::settle_jobs`]. A refused call is answered at once (`Ok(None)`).
    async fn start_independent_call(
        &mut self,
        ctx: &mut StepContext<'_>,
        item: &Item,
    ) -> Result<Option<Job>, StopReason> {
        let ItemView::FunctionCall(call) = item.view() else {
            return Ok(None);
        };
        let (call_id, name, arguments) = (
            call.call_id.clone(),
            call.name.clone(),
            call.arguments.clone(),
        );
        let start = Instant::now();
        ctx.call_started(&call_id, &name);
        let args = match crate::functions::parse_arguments(&arguments) {
            Ok(args) => args,
            Err(why) => {
                let error = FunctionError::InvalidArguments(why);
                return self.failed_early(ctx, &call_id, &name, error, start);
            }
        };
        let effect = Effect::Function(FunctionEffect {
            call_id: call_id.clone(),
            name: name.clone(),
            arguments: args.clone(),
        });
        if ctx.approve(effect).await? == Decision::Deny {
            let text = refused_text(&name);
            ctx.action_done(ActionDone {
                api: Api::Responses,
                call_id: &call_id,
                member: &name,
                reason: Reason::Refused,
                duration: start.elapsed(),
                answer: Answered::Error,
                summary: &text,
            });
            let output = Item::function_call_output(&FunctionCallOutput {
                call_id: call_id.clone(),
                output: FunctionOutput::Text(text),
            });
            ctx.call_completed(&call_id, &name, || output.to_value());
            self.early_outputs.insert(call_id, output);
            return Ok(None);
        }
        let Some(function) = ctx.toolbox.functions.get(&name) else {
            return Ok(None);
        };
        match Job::spawn(function, &call_id, args, start) {
            Ok(job) => Ok(Some(job)),
            Err(e) => self.failed_early(ctx, &call_id, &name, e, start),
        }
    }

    /// An independent call that could not start: answered with the error (the run goes on),
    /// or the run's stop.
    fn failed_early(
        &mut self,
        ctx: &mut StepContext<'_>,
        call_id: &str,
        name: &str,
        error: FunctionError,
        start: Instant,
    ) -> Result<Option<Job>, StopReason> {
        match ctx.function_failed(call_id, name, error, start) {
            FunctionFailure::Stop(reason) => Err(reason),
            FunctionFailure::Answer(text) => {
                let output = Item::function_call_output(&FunctionCallOutput {
                    call_id: call_id.to_owned(),
                    output: FunctionOutput::Text(text),
                });
                ctx.call_completed(call_id, name, || output.to_value());
                self.early_outputs.insert(call_id.to_owned(), output);
                Ok(None)
            }
        }
    }

    /// Waits for every started independent call, in the order they started, and keeps their
    /// outputs (and the first stop one of them brings).
    async fn settle_jobs(&mut self, ctx: &mut StepContext<'_>, jobs: &mut Vec<Job>) {
        for mut job in jobs.drain(..) {
            let result = job.join().await;
            match result {
                Ok(out) => {
                    let output =
                        self.function_output(ctx, &job.call_id, &job.name, &out, job.start);
                    self.early_outputs.insert(job.call_id.clone(), output);
                }
                Err(e) => match ctx.function_failed(&job.call_id, &job.name, e, job.start) {
                    FunctionFailure::Stop(reason) => {
                        if self.early_stop.is_none() {
                            self.early_stop = Some(reason);
                        }
                    }
                    FunctionFailure::Answer(text) => {
                        let output = Item::function_call_output(&FunctionCallOutput {
                            call_id: job.call_id.clone(),
                            output: FunctionOutput::Text(text),
                        });
                        ctx.call_completed(&job.call_id, &job.name, || output.to_value());
                        self.early_outputs.insert(job.call_id.clone(), output);
                    }
                },
            }
        }
    }

    /// A function's output, recorded and told, as the item answering its call.
    pub(super) fn function_output(
        &mut self,
        ctx: &mut StepContext<'_>,
        call_id: &str,
        name: &str,
        out: &ToolOutput,
        start: Instant,
    ) -> Item {
        for image in out.images() {
            ctx.journal_image(call_id, image);
        }
        ctx.action_done(ActionDone {
            api: Api::Responses,
            call_id,
            member: name,
            reason: Reason::Completed,
            duration: start.elapsed(),
            answer: Answered::Ok,
            summary: &out.text(),
        });
        let output = Item::function_call_output(&FunctionCallOutput {
            call_id: call_id.to_owned(),
            output: openai_output(out, None),
        });
        ctx.call_completed(call_id, name, || output.to_value());
        output
    }
}

/// The calls of one streamed response, as eager execution sees them: the session, its
/// early-execution policy, and whether a browser action already failed in this response.
struct StreamCalls<'s> {
    session: &'s mut OpenAiSession,
    policy: Option<(BTreeSet<String>, bool)>,
    browser_failed: bool,
}

impl EagerCalls for StreamCalls<'_> {
    type Call = Item;

    fn has_stopped(&self) -> bool {
        self.session.early_stop.is_some()
    }

    fn may_run_early(&mut self, ctx: &mut StepContext<'_>, item: &Item) -> bool {
        OpenAiSession::may_run_early_by(ctx, self.policy.as_ref(), item)
    }

    fn is_independent(&self, ctx: &StepContext<'_>, item: &Item) -> bool {
        self.session.is_independent_call(ctx, item)
    }

    async fn start_independent(
        &mut self,
        ctx: &mut StepContext<'_>,
        item: &Item,
    ) -> Result<Option<Job>, StopReason> {
        self.session.start_independent_call(ctx, item).await
    }

    fn stopped_at(&mut self, _: &mut StepContext<'_>, _: &Item, reason: StopReason) {
        self.session.early_stop = Some(reason);
    }

    async fn settle(&mut self, ctx: &mut StepContext<'_>, jobs: &mut Vec<Job>) {
        self.session.settle_jobs(ctx, jobs).await;
    }

    async fn run_in_order(&mut self, ctx: &mut StepContext<'_>, item: &Item) {
        match self
            .session
            .run_call(ctx, item, &mut self.browser_failed)
            .await
        {
            Ok(Some(output)) => {
                if let Some(id) = call_id_of(item) {
                    self.session.early_outputs.insert(id, output);
                }
            }
            Ok(None) => {}
            Err(reason) => {
                tracing::info!(%reason, "an eagerly executed call stopped the run");
                self.session.early_stop = Some(reason);
            }
        }
    }
}
