//! `POST /v1/messages`: authentication, validation, the turn, and the answer as one Message or
//! as an SSE stream (api-contracts A).

mod context;
mod mcp;
mod stream;
pub(crate) mod thread;
mod validate;

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use crate::error::{Api, ApiError};
use crate::faults::Fault;
use crate::messages as m;
use crate::policy::Turn;
use crate::record::Verdict;
use crate::server::{Outcome, Reply, Shared, State, header, request_id_header};
use crate::sse::Ending;
use crate::tokens::{PrefixCache, text_tokens};

use validate::Checked;

/// What the Messages side remembers between requests.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    /// Prompt prefixes written to the cache.
    pub(crate) cache: PrefixCache,
    /// Ids of tool_use blocks emitted in a turn that also held thinking: when such a turn is
    /// the last assistant turn and thinking is on, it must be replayed with its thinking.
    pub(crate) thinking_turns: HashSet<String>,
    /// The content of every turn answered with `stop_reason: "pause_turn"`: sent back last and
    /// unchanged, it is continued (not a prefill), and nothing but its continuation may follow.
    pub(crate) paused: Vec<Value>,
    /// Conversations held under `thread`.
    pub(crate) threads: thread::Threads,
    /// Every server tool block emitted (MCP included), by [`mcp::identity`], as emitted: a
    /// replay must match (hands' contract).
    pub(crate) issued: HashMap<String, Value>,
    /// Code-execution containers made.
    pub(crate) containers: Vec<String>,
}

/// One request, in three steps: checked and given its turn under the state's lock; the MCP
/// servers listed and called without it; the answer built under the lock again.
pub(crate) async fn handle(
    shared: &Shared,
    headers: &[(String, String)],
    body: &Value,
    body_hash: u64,
) -> Outcome {
    let (prepared, plan) = {
        let mut state = shared.lock();
        match prepare(&mut state, headers, body, body_hash) {
            Ok(prepared) => prepared,
            Err(outcome) => return *outcome,
        }
    };
    let done = if plan.is_idle() {
        Ok(Vec::new())
    } else {
        plan.run().await
    };
    let mut state = shared.lock();
    answer(&mut state, prepared, done, body_hash)
}

/// A request checked and given its turn.
struct Prepared {
    request_id: String,
    checked: Checked,
    turn: Turn,
    stream_fault: Option<Fault>,
    /// The request's `container`, when it names one.
    container: Option<String>,
    /// The request's `thread`, read and expanded, held with the answer.
    threaded: Option<thread::Prepared>,
    /// When the request arrived (a held thread's clock).
    now: std::time::Instant,
}

fn prepare(
    state: &mut State,
    headers: &[(String, String)],
    body: &Value,
    body_hash: u64,
) -> Result<(Prepared, mcp::Plan), Box<Outcome>> {
    let request_id = state.ids.next("req_011C");
    let reject = |error: ApiError| Box::new(Outcome::rejected(Api::Anthropic, error, &request_id));

    // The key in `x-api-key`, else as `Authorization: Bearer` (anthropic 2.10 sends it there).
    let api_key = header(headers, "x-api-key")
        .filter(|k| !k.is_empty())
        .map(|k| (k, m::ANTHROPIC_KEY_INVALID))
        .or_else(|| {
            header(headers, "authorization")
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(|k| (k, m::ANTHROPIC_BEARER_INVALID))
        });
    match api_key {
        None => {
            return Err(reject(ApiError::new(
                401,
                "authentication_error",
                m::ANTHROPIC_KEY_REQUIRED,
            )));
        }
        Some((key, invalid))
            if state
                .anthropic_config
                .api_key
                .as_deref()
                .is_some_and(|k| k != key) =>
        {
            return Err(reject(ApiError::new(401, "authentication_error", invalid)));
        }
        Some(_) => {}
    }
    if header(headers, "anthropic-version").is_none_or(str::is_empty) {
        return Err(reject(ApiError::invalid(m::ANTHROPIC_VERSION_REQUIRED)));
    }
    let betas: Vec<String> = header(headers, "anthropic-beta")
        .map(|v| v.split(',').map(|b| b.trim().to_owned()).collect())
        .unwrap_or_default();

    // A `thread`: the held conversation goes in front, and the whole is checked.
    let now = std::time::Instant::now();
    let threaded = thread::prepare(
        body,
        &betas,
        &mut state.anthropic.threads,
        state.anthropic_config.thread_ttl,
        now,
    );
    let (threaded, thread_error) = match threaded {
        Ok(threaded) => (threaded, None),
        Err(error) => (None, Some(error)),
    };
    state.thread_conversation = threaded.as_ref().and_then(|p| p.conversation.clone());
    let body = threaded.as_ref().map_or(body, |p| &p.body);
    let checked = match thread_error {
        Some(error) => Err(error),
        None => validate::validate(
            body,
            &betas,
            &state.anthropic_config,
            &state.signer,
            &state.anthropic.thinking_turns,
            &state.anthropic.paused,
            &mut state.images,
        )
        .and_then(|checked| {
            mcp::check_replay(
                body,
                &checked.declared.mcp,
                &state.anthropic,
                state.anthropic_config.hands_contract,
            )
            .map(|()| checked)
        }),
    };
    let streaming = body.get("stream").and_then(Value::as_bool) == Some(true);
    let (checked, stream_fault) =
        state.fault_or_refusal(Api::Anthropic, streaming, checked, &request_id)?;

    // A compaction alone is the server's, not the model's turn: the script keeps its turn for
    // the request that continues.
    let alone = checked.compaction.as_ref().is_some_and(|c| c.alone);
    let next = if alone {
        Ok(Turn::Blocks(Vec::new()))
    } else {
        state.next_turn(body_hash, body)
    };
    let turn = match next {
        Ok(turn) => turn,
        Err(message) => {
            return Err(Box::new(Outcome::policy_failed(
                Api::Anthropic,
                message,
                &request_id,
            )));
        }
    };
    let blocks = match turn.clone().split_stop().0 {
        Turn::Blocks(blocks) => blocks,
        _ => Vec::new(),
    };
    let plan = match mcp::plan(&checked.declared.mcp, &blocks) {
        Ok(plan) => plan,
        Err(message) => {
            return Err(Box::new(Outcome::policy_failed(
                Api::Anthropic,
                message,
                &request_id,
            )));
        }
    };
    let container = match body.get("container") {
        Some(Value::String(id)) => Some(id.clone()),
        Some(Value::Object(c)) => c.get("id").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    };
    Ok((
        Prepared {
            request_id,
            checked,
            turn,
            stream_fault,
            container,
            threaded,
            now,
        },
        plan,
    ))
}

fn answer(
    state: &mut State,
    prepared: Prepared,
    done: Result<Vec<(usize, [Value; 2])>, mcp::Failure>,
    body_hash: u64,
) -> Outcome {
    let Prepared {
        request_id,
        checked,
        turn,
        stream_fault,
        container,
        threaded,
        now,
    } = prepared;
    let done = match done {
        Ok(done) => done,
        Err(failure) => return failure.outcome(Api::Anthropic, &request_id),
    };
    if let Some(fault @ Fault::ServerErrorAfterTools) = &stream_fault {
        state.stash(body_hash, turn);
        let error = Fault::ServerError
            .http_error(Api::Anthropic, checked.stream)
            .unwrap_or_else(|| ApiError::new(500, "api_error", "Internal server error"));
        return Outcome::error(
            Api::Anthropic,
            error,
            &request_id,
            Verdict::Faulted {
                fault: fault.clone(),
                violation: None,
            },
        );
    }
    let expanded = expand(turn.clone(), done);
    let message = match finalize(state, &checked, expanded, container) {
        Ok(message) => message,
        Err(message) => return Outcome::policy_failed(Api::Anthropic, message, &request_id),
    };
    // An answer a fault cuts short is not held: the server holds a whole reply or none.
    if stream_fault.is_none()
        && let Some(threaded) = threaded
    {
        thread::hold(&mut state.anthropic.threads, threaded, &message, now);
    }
    let headers = vec![(
        request_id_header(Api::Anthropic).to_owned(),
        request_id.clone(),
    )];
    if let Some(fault) = stream_fault {
        state.stash(body_hash, turn);
        if !checked.stream {
            return Outcome {
                reply: Reply::Drop,
                verdict: Verdict::Faulted {
                    fault,
                    violation: None,
                },
                response: None,
            };
        }
        let events = stream::events(&message, &state.stream);
        let (events, ending) = cut(events, &fault);
        return Outcome {
            reply: Reply::Events {
                headers,
                events,
                ending,
            },
            verdict: Verdict::Faulted {
                fault,
                violation: None,
            },
            response: Some(message),
        };
    }
    if checked.stream {
        let events = stream::events(&message, &state.stream);
        Outcome {
            reply: Reply::Events {
                headers,
                events,
                ending: Ending::Finish,
            },
            verdict: Verdict::Accepted { stream: true },
            response: Some(message),
        }
    } else {
        Outcome {
            reply: Reply::Json {
                status: 200,
                headers,
                body: message.clone(),
            },
            verdict: Verdict::Accepted { stream: false },
            response: Some(message),
        }
    }
}

/// The turn with each MCP intent replaced by its use and result blocks.
fn expand(turn: Turn, done: Vec<(usize, [Value; 2])>) -> Turn {
    if done.is_empty() {
        return turn;
    }
    match turn {
        Turn::Blocks(blocks) => Turn::Blocks(mcp::expand(blocks, done)),
        Turn::Stopped { turn, reason } => Turn::Stopped {
            turn: Box::new(expand(*turn, done)),
            reason,
        },
        other => other,
    }
}

/// Applies a stream fault to the events of a complete answer.
fn cut(mut events: Vec<crate::sse::Event>, fault: &Fault) -> (Vec<crate::sse::Event>, Ending) {
    match fault {
        Fault::DropConnection { after_events } => {
            events.truncate(*after_events);
            (events, Ending::Abort)
        }
        Fault::StreamError { after_events } => {
            events.truncate(*after_events);
            events.push(crate::sse::Event::new(
                "error",
                json!({"type": "error", "error": {"type": "overloaded_error", "message": m::OVERLOADED}}),
            ));
            (events, Ending::Finish)
        }
        _ => (events, Ending::Finish),
    }
}

/// The `stop_reason` of a turn the server paused (a long server-tool turn): the client sends it
/// back, last and unchanged, to let it go on (api-contracts A).
const PAUSE_TURN: &str = "pause_turn";
/// The `stop_reason` of an answer that is a compaction alone.
const COMPACTION_STOP: &str = "compaction";

/// What [`finalize`] counts over the blocks of a turn while it stamps them.
#[derive(Default)]
struct Tally {
    n_tool_uses: usize,
    has_thinking: bool,
    /// The id of the latest `mcp_tool_use` / `server_tool_use`, for the result after it.
    last_use: HashMap<&'static str, Value>,
    needs_container: bool,
    output_tokens: u64,
    thinking_tokens: u64,
}

/// Turns a policy's turn into a Message: ids, signatures, stop_reason, usage. Fails when the
/// turn could not come from a model given this request.
fn finalize(
    state: &mut State,
    checked: &Checked,
    turn: Turn,
    container: Option<String>,
) -> Result<Value, String> {
    let (turn, stopped) = turn.split_stop();
    let mut blocks = match turn {
        Turn::Text(text) => vec![json!({"type": "text", "text": text})],
        Turn::Blocks(blocks) => blocks,
        Turn::Items(_) | Turn::Stopped { .. } => {
            return Err(
                "hands-sim: the policy answered an Anthropic request with OpenAI output items (Turn::Items)"
                    .to_owned(),
            );
        }
    };
    let mut tally = Tally::default();
    for (idx, block) in blocks.iter_mut().enumerate() {
        let Some(obj) = block.as_object_mut() else {
            return Err(format!(
                "hands-sim: block {idx} of the policy's turn is not an object"
            ));
        };
        stamp_block(state, checked, idx, obj, &mut tally)?;
    }
    for block in &blocks {
        if let Some(key) = mcp::identity(block) {
            state.anthropic.issued.insert(key, block.clone());
        }
    }
    let container = if tally.needs_container {
        let id = match container {
            Some(id) => id,
            None => {
                let id = state.ids.next("container_011C");
                state.anthropic.containers.push(id.clone());
                id
            }
        };
        Some(json!({"id": id, "expires_at": "2099-01-01T00:00:00Z"}))
    } else {
        None
    };
    // The compaction opens the answer; alone, it is the whole answer.
    let compaction = checked.compaction.as_ref().map(|due| {
        json!({"type": "compaction", "content": due.summary,
            "signature": state.signer.compaction_signature(&due.summary)})
    });
    let alone = checked.compaction.as_ref().is_some_and(|c| c.alone);
    if let Some(block) = compaction {
        if let Some(due) = &checked.compaction {
            tally.output_tokens += text_tokens(&due.summary);
        }
        blocks.insert(0, block);
    }
    check_tool_choice(checked, tally.n_tool_uses, stopped.is_some() || alone)?;
    if tally.has_thinking {
        for block in &blocks {
            if let Some(id) = block
                .get("type")
                .filter(|t| *t == "tool_use")
                .and_then(|_| block.get("id"))
                .and_then(Value::as_str)
            {
                state.anthropic.thinking_turns.insert(id.to_owned());
            }
        }
    }
    let stop_reason = match &stopped {
        _ if alone => COMPACTION_STOP,
        Some(reason) => reason.as_str(),
        None if tally.n_tool_uses > 0 => "tool_use",
        None => "end_turn",
    };
    if stop_reason == PAUSE_TURN {
        state.anthropic.paused.push(Value::Array(blocks.clone()));
    }
    let mut message = message(state, checked, blocks, stop_reason, &tally);
    if let Some(applied) = &checked.applied_edits {
        message["context_management"] = json!({"applied_edits": applied});
    }
    if let Some(container) = container {
        message["container"] = container;
    }
    Ok(message)
}

/// Stamps block `idx` of a turn (ids, signatures, the use a result answers) and counts it in
/// `tally`. Fails when the block could not come from a model given this request.
fn stamp_block(
    state: &mut State,
    checked: &Checked,
    idx: usize,
    obj: &mut serde_json::Map<String, Value>,
    tally: &mut Tally,
) -> Result<(), String> {
    let block_type = obj
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    match block_type.as_str() {
        "text" => {
            let Some(text) = obj.get("text").and_then(Value::as_str) else {
                return Err(format!("hands-sim: text block {idx} has no `text`"));
            };
            tally.output_tokens += text_tokens(text);
        }
        "tool_use" => {
            tally.n_tool_uses += 1;
            tally.output_tokens += stamp_tool_use(state, checked, idx, obj)?;
        }
        "thinking" => {
            tally.has_thinking = true;
            let Some(text) = obj
                .get("thinking")
                .and_then(Value::as_str)
                .map(str::to_owned)
            else {
                return Err(format!("hands-sim: thinking block {idx} has no `thinking`"));
            };
            obj.insert(
                "signature".into(),
                json!(state.signer.thinking_signature(&text)),
            );
            tally.thinking_tokens += text_tokens(&text);
        }
        "redacted_thinking" => {
            tally.has_thinking = true;
            let payload = obj
                .get("data")
                .and_then(Value::as_str)
                .unwrap_or("redacted")
                .to_owned();
            obj.insert(
                "data".into(),
                json!(state.signer.seal("redacted_thinking", payload.as_bytes())),
            );
            tally.thinking_tokens += text_tokens(&payload);
        }
        "mcp_tool_use" => {
            if !obj.get("id").is_some_and(Value::is_string) {
                obj.insert("id".into(), json!(state.ids.next("mcptoolu_01")));
            }
            tally.last_use.insert(
                "mcp_tool_use",
                obj.get("id").cloned().unwrap_or(Value::Null),
            );
            tally.output_tokens += text_tokens(&obj_to_string(obj));
        }
        "server_tool_use" => {
            let name = obj.get("name").and_then(Value::as_str).unwrap_or("");
            if !checked.declared.names.contains(name) {
                return Err(format!(
                    "hands-sim: the policy used server tool `{name}`, which the request does not declare"
                ));
            }
            if !obj.get("id").is_some_and(Value::is_string) {
                obj.insert("id".into(), json!(state.ids.next("srvtoolu_01")));
            }
            tally.last_use.insert(
                "server_tool_use",
                obj.get("id").cloned().unwrap_or(Value::Null),
            );
            tally.output_tokens += text_tokens(&obj_to_string(obj));
        }
        result_type if result_type.ends_with("_tool_result") => {
            let use_type = if result_type == "mcp_tool_result" {
                "mcp_tool_use"
            } else {
                "server_tool_use"
            };
            if !obj.contains_key("tool_use_id") {
                let Some(id) = tally.last_use.get(use_type).cloned() else {
                    return Err(format!(
                        "hands-sim: `{result_type}` block {idx} follows no `{use_type}`"
                    ));
                };
                obj.insert("tool_use_id".into(), id);
            }
            if mcp::CONTAINER_RESULTS.contains(&result_type) {
                tally.needs_container = true;
            }
            tally.output_tokens += text_tokens(&obj_to_string(obj));
        }
        _ => tally.output_tokens += text_tokens(&obj_to_string(obj)),
    }
    Ok(())
}

/// Checks a `tool_use` block against the declared tools (and, when configured, its input
/// against the API's member type), gives it an id when it has none, and returns its output
/// tokens.
fn stamp_tool_use(
    state: &mut State,
    checked: &Checked,
    idx: usize,
    obj: &mut serde_json::Map<String, Value>,
) -> Result<u64, String> {
    let Some(name) = obj.get("name").and_then(Value::as_str).map(str::to_owned) else {
        return Err(format!("hands-sim: tool_use block {idx} has no `name`"));
    };
    let toolset_name = obj.get("toolset_name").and_then(Value::as_str);
    if !checked.declared.allows(toolset_name, &name) {
        let what = match toolset_name {
            Some(ts) => format!("member `{name}` of toolset `{ts}`"),
            None => format!("tool `{name}`"),
        };
        return Err(format!(
            "hands-sim: the policy called {what}, which the request does not declare or enable"
        ));
    }
    if state.anthropic_config.member_input_schemas
        && let Some(kind) = toolset_name.and_then(|ts| {
            checked
                .declared
                .toolsets
                .iter()
                .find(|t| t.kind.toolset_name() == ts)
                .map(|t| t.kind)
        })
    {
        let input = obj.get("input").cloned().unwrap_or_else(|| json!({}));
        if let Err(why) = crate::member_inputs::check(kind, &name, &input) {
            return Err(format!(
                "hands-sim: the policy called member `{name}` of toolset `{}` with an input the API's type refuses ({why}); a model sends the shapes of anthropic's beta_{}_{name}_input",
                kind.toolset_name(),
                kind.toolset_name()
            ));
        }
    }
    if !obj.get("id").is_some_and(Value::is_string) {
        obj.insert("id".into(), json!(state.ids.next("toolu_01")));
    }
    let input = obj.entry("input").or_insert_with(|| json!({}));
    if !input.is_object() {
        return Err(format!(
            "hands-sim: tool_use block {idx} input is not an object"
        ));
    }
    Ok(text_tokens(&input.to_string()) + 8)
}

/// Refuses a turn whose number of tool calls the request's `tool_choice` forbids.
fn check_tool_choice(checked: &Checked, n_tool_uses: usize, stopped: bool) -> Result<(), String> {
    if checked.disable_parallel && n_tool_uses > 1 {
        return Err(format!(
            "hands-sim: the policy's turn has {n_tool_uses} tool_use blocks but tool_choice.disable_parallel_tool_use is true"
        ));
    }
    if checked.forced && n_tool_uses == 0 && !stopped {
        return Err(
            "hands-sim: tool_choice forces a tool call but the policy's turn has none".to_owned(),
        );
    }
    if checked.no_tools && n_tool_uses > 0 {
        return Err(
            "hands-sim: tool_choice is `none` but the policy's turn calls a tool".to_owned(),
        );
    }
    Ok(())
}

/// The Message of a finalized turn, with its usage (the prompt cache read and written now).
fn message(
    state: &mut State,
    checked: &Checked,
    blocks: Vec<Value>,
    stop_reason: &str,
    tally: &Tally,
) -> Value {
    let cache = state
        .anthropic
        .cache
        .explicit(&checked.prompt, state.anthropic_config.min_cacheable_tokens);
    let output_tokens = (tally.output_tokens + tally.thinking_tokens).max(1);
    json!({
        "id": state.ids.next("msg_01"),
        "type": "message",
        "role": "assistant",
        "model": checked.model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {
            "input_tokens": cache.input,
            "cache_creation_input_tokens": cache.written_5m + cache.written_1h,
            "cache_read_input_tokens": cache.read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": cache.written_5m,
                "ephemeral_1h_input_tokens": cache.written_1h,
            },
            "output_tokens": output_tokens,
            "output_tokens_details": {"thinking_tokens": tally.thinking_tokens},
            "service_tier": "standard",
        },
    })
}

fn obj_to_string(obj: &serde_json::Map<String, Value>) -> String {
    Value::Object(obj.clone()).to_string()
}
