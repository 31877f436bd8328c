//! `POST /v1/responses`: authentication, validation against stored state, the turn, and the
//! answer as one Response object or as an SSE stream (api-contracts B).

mod mcp;
mod stream;
mod validate;

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::error::{Api, ApiError};
use crate::faults::Fault;
use crate::messages as m;
use crate::policy::Turn;
use crate::record::Verdict;
use crate::server::{Outcome, Reply, Shared, State, header, request_id_header};
use crate::sse::{Ending, Event};
use crate::tokens::{PrefixCache, text_tokens, value_tokens};

use validate::Checked;

/// The most tokens a compaction summary costs (modelled: a tenth of what it replaces, capped).
const COMPACTION_MAX_TOKENS: u64 = 2_000;

/// What the Responses side remembers between requests.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    /// Stored responses by id: the whole conversation they ended, their output included.
    pub(crate) responses: HashMap<String, Vec<Value>>,
    /// Stored items by id (outputs and inputs of stored responses).
    pub(crate) items: HashMap<String, Value>,
    /// The id of the item each emitted reasoning item preceded: a replayed reasoning item
    /// must come with it.
    pub(crate) follows: HashMap<String, String>,
    /// Safety-check ids issued with each computer call, by `call_id`.
    pub(crate) calls: HashMap<String, Vec<String>>,
    /// Calls emitted with a `status` other than `completed`, by `call_id`: they cannot be
    /// answered.
    pub(crate) unfinished: HashMap<String, String>,
    /// Prompt prefixes seen (OpenAI caches automatically).
    pub(crate) cache: PrefixCache,
    /// Every server tool item emitted (MCP included), by id, as emitted: a replay must match
    /// (hands' contract).
    pub(crate) issued: HashMap<String, Value>,
    /// Code interpreter containers made.
    pub(crate) containers: Vec<String>,
}

/// One request, in three steps: checked and given its turn under the state's lock; the MCP
/// servers' work done without it (listing, approved and unasked calls); the answer built under
/// the lock again.
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
    let expansion = if plan.is_idle() {
        Ok(mcp::Expansion::default())
    } else {
        plan.run().await
    };
    let mut state = shared.lock();
    answer(&mut state, prepared, expansion, body, body_hash)
}

/// A request checked and given its turn.
struct Prepared {
    request_id: String,
    checked: Checked,
    turn: Turn,
    stream_fault: Option<Fault>,
}

fn prepare(
    state: &mut State,
    headers: &[(String, String)],
    body: &Value,
    body_hash: u64,
) -> Result<(Prepared, mcp::Plan), Box<Outcome>> {
    let request_id = state.ids.next("req_");
    let reject = |error: ApiError| Box::new(Outcome::rejected(Api::OpenAi, error, &request_id));

    let key = header(headers, "authorization")
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|k| !k.is_empty());
    match key {
        None => {
            return Err(reject(ApiError::new(
                401,
                "invalid_request_error",
                m::OPENAI_KEY_REQUIRED,
            )));
        }
        Some(key)
            if state
                .openai_config
                .api_key
                .as_deref()
                .is_some_and(|k| k != key) =>
        {
            return Err(reject(
                ApiError::new(401, "invalid_request_error", m::openai_key_invalid(key))
                    .code("invalid_api_key"),
            ));
        }
        Some(_) => {}
    }

    let checked = validate::validate(
        body,
        &state.openai_config,
        &state.signer,
        &state.openai,
        &mut state.images,
    );
    let streaming = body.get("stream").and_then(Value::as_bool) == Some(true);
    let (checked, stream_fault) =
        state.fault_or_refusal(Api::OpenAi, streaming, checked, &request_id)?;
    let turn = match state.next_turn(body_hash, body) {
        Ok(turn) => turn,
        Err(message) => {
            return Err(Box::new(Outcome::policy_failed(
                Api::OpenAi,
                message,
                &request_id,
            )));
        }
    };
    let items = match &turn {
        Turn::Items(items) => items.clone(),
        Turn::Stopped { turn, .. } => match turn.as_ref() {
            Turn::Items(items) => items.clone(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    let plan = match mcp::plan(&checked, &items) {
        Ok(plan) => plan,
        Err(message) => {
            return Err(Box::new(Outcome::policy_failed(
                Api::OpenAi,
                message,
                &request_id,
            )));
        }
    };
    Ok((
        Prepared {
            request_id,
            checked,
            turn,
            stream_fault,
        },
        plan,
    ))
}

fn answer(
    state: &mut State,
    prepared: Prepared,
    expansion: Result<mcp::Expansion, mcp::Failure>,
    body: &Value,
    body_hash: u64,
) -> Outcome {
    let Prepared {
        request_id,
        checked,
        turn,
        stream_fault,
    } = prepared;
    let expansion = match expansion {
        Ok(expansion) => expansion,
        Err(failure) => return failure.outcome(Api::OpenAi, &request_id),
    };
    if let Some(fault @ Fault::ServerErrorAfterTools) = &stream_fault {
        // The server's work is done; the answer is lost. A retry of this body gets the turn
        // again, and does the work again.
        state.stash(body_hash, turn);
        let error = Fault::ServerError
            .http_error(Api::OpenAi, checked.stream)
            .unwrap_or_else(|| ApiError::new(500, "server_error", m::OPENAI_SERVER_ERROR));
        return Outcome::error(
            Api::OpenAi,
            error,
            &request_id,
            Verdict::Faulted {
                fault: fault.clone(),
                violation: None,
            },
        );
    }
    // A response cut short by a fault is neither stored nor chained to.
    let persist = stream_fault.is_none();
    let expanded = expand(turn.clone(), expansion);
    let response = match finalize(state, &checked, body, expanded, persist) {
        Ok(response) => response,
        Err(message) => return Outcome::policy_failed(Api::OpenAi, message, &request_id),
    };
    let headers = vec![(
        request_id_header(Api::OpenAi).to_owned(),
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
        let (events, ending) = cut(stream::events(&response, &state.stream), &fault);
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
            response: Some(response),
        };
    }
    if checked.stream {
        Outcome {
            reply: Reply::Events {
                headers,
                events: stream::events(&response, &state.stream),
                ending: Ending::Finish,
            },
            verdict: Verdict::Accepted { stream: true },
            response: Some(response),
        }
    } else {
        Outcome {
            reply: Reply::Json {
                status: 200,
                headers,
                body: response.clone(),
            },
            verdict: Verdict::Accepted { stream: false },
            response: Some(response),
        }
    }
}

/// The turn with the MCP servers' items in place of the model's intents.
fn expand(turn: Turn, expansion: mcp::Expansion) -> Turn {
    match turn {
        Turn::Items(items) => Turn::Items(expansion.apply(items)),
        Turn::Stopped { turn, reason } => Turn::Stopped {
            turn: Box::new(expand(*turn, expansion)),
            reason,
        },
        Turn::Text(text) if !expansion.head.is_empty() => {
            Turn::Items(expansion.apply(vec![crate::policy::message(&text)]))
        }
        other => other,
    }
}

fn cut(mut events: Vec<Event>, fault: &Fault) -> (Vec<Event>, Ending) {
    match fault {
        Fault::DropConnection { after_events } => {
            events.truncate(*after_events);
            (events, Ending::Abort)
        }
        Fault::StreamError { after_events } => {
            events.truncate(*after_events);
            let sequence_number = events.len();
            events.push(Event::new(
                "error",
                json!({"type": "error", "code": "server_error", "message": m::OPENAI_SERVER_ERROR,
                    "param": null, "sequence_number": sequence_number}),
            ));
            (events, Ending::Finish)
        }
        _ => (events, Ending::Finish),
    }
}

/// A call's `call_id`, filled in when the turn left it out.
fn fill_call_id(state: &mut State, obj: &mut serde_json::Map<String, Value>) -> String {
    obj.entry("call_id")
        .or_insert_with(|| json!(state.ids.next("call_")))
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// A call's `status`: `completed` unless the turn set another (`in_progress`, `incomplete`),
/// which is remembered: such a call cannot be answered.
fn note_status(state: &mut State, obj: &mut serde_json::Map<String, Value>, call_id: &str) {
    let status = obj
        .entry("status")
        .or_insert_with(|| json!("completed"))
        .as_str()
        .unwrap_or("")
        .to_owned();
    if status != "completed" {
        state.openai.unfinished.insert(call_id.to_owned(), status);
    }
}

/// The container of a code interpreter call: the declared one, else (`{"type": "auto"}`) the
/// one the conversation already uses, else a new one.
fn container_for(state: &mut State, checked: &Checked) -> String {
    if let Some(Value::String(id)) = checked.declared.containers.first() {
        return id.clone();
    }
    let used = checked.conversation.iter().rev().find_map(|item| {
        (item.get("type").and_then(Value::as_str) == Some("code_interpreter_call"))
            .then(|| item.get("container_id").and_then(Value::as_str))
            .flatten()
            .map(str::to_owned)
    });
    match used {
        Some(id) => id,
        None => {
            let id = state.ids.next("cntr_");
            state.openai.containers.push(id.clone());
            id
        }
    }
}

/// What [`finalize`] counts over the items of a turn while it stamps them.
#[derive(Default)]
struct Tally {
    n_calls: usize,
    reasoning_tokens: u64,
}

/// Turns a policy's turn into a Response object: ids, safety-check ids, encrypted reasoning,
/// usage; stores it when `store` is on and `persist` holds.
fn finalize(
    state: &mut State,
    checked: &Checked,
    body: &Value,
    turn: Turn,
    persist: bool,
) -> Result<Value, String> {
    let (turn, stopped) = turn.split_stop();
    let mut output = match turn {
        Turn::Text(text) => vec![crate::policy::message(&text)],
        Turn::Items(items) => items,
        Turn::Blocks(_) | Turn::Stopped { .. } => {
            return Err(
                "hands-sim: the policy answered an OpenAI request with Anthropic content blocks (Turn::Blocks)"
                    .to_owned(),
            );
        }
    };
    let mut tally = Tally::default();
    for (idx, item) in output.iter_mut().enumerate() {
        let Some(obj) = item.as_object_mut() else {
            return Err(format!(
                "hands-sim: item {idx} of the policy's turn is not an object"
            ));
        };
        stamp_item(state, checked, idx, obj, &mut tally)?;
    }
    remember_items(state, &output);
    if !checked.parallel && tally.n_calls > 1 {
        return Err(format!(
            "hands-sim: the policy's turn has {} calls but parallel_tool_calls is false",
            tally.n_calls
        ));
    }
    compact(state, checked, &mut output);
    let cache = state
        .openai
        .cache
        .automatic(&checked.prompt, state.openai_config.min_cacheable_tokens);
    let output_tokens = value_tokens(&json!(output)).max(1) + tally.reasoning_tokens;
    let input_tokens = cache.input + cache.read;
    let id = state.ids.next("resp_");
    let created_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let response = json!({
        "id": id,
        "object": "response",
        "created_at": created_at,
        "status": if stopped.is_some() { "incomplete" } else { "completed" },
        "error": null,
        "incomplete_details": stopped.as_ref().map(|reason| json!({"reason": reason})),
        "model": checked.model,
        "output": output,
        "parallel_tool_calls": checked.parallel,
        "previous_response_id": checked.previous_response_id,
        "store": checked.store,
        "tool_choice": body.get("tool_choice").cloned().unwrap_or(json!("auto")),
        "tools": body.get("tools").cloned().unwrap_or(json!([])),
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": cache.read, "cache_write_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": tally.reasoning_tokens},
            "total_tokens": input_tokens + output_tokens,
        },
    });
    if checked.store && persist {
        let mut chain = checked.conversation.clone();
        chain.extend(output.iter().cloned());
        for item in &chain {
            if let Some(item_id) = item.get("id").and_then(Value::as_str) {
                state.openai.items.insert(item_id.to_owned(), item.clone());
            }
        }
        state.openai.responses.insert(id, chain);
    }
    Ok(response)
}

/// Stamps item `idx` of a turn (ids, statuses, encrypted reasoning, call ids) and counts it in
/// `tally`. Fails when the item could not come from a model given this request.
fn stamp_item(
    state: &mut State,
    checked: &Checked,
    idx: usize,
    obj: &mut serde_json::Map<String, Value>,
    tally: &mut Tally,
) -> Result<(), String> {
    let item_type = obj
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    match item_type.as_str() {
        "message" => {
            obj.entry("id")
                .or_insert_with(|| json!(state.ids.next("msg_")));
            obj.insert("status".into(), json!("completed"));
            obj.insert("role".into(), json!("assistant"));
            if let Some(Value::String(text)) = obj.get("content") {
                let parts = json!([{"type": "output_text", "text": text, "annotations": []}]);
                obj.insert("content".into(), parts);
            }
        }
        "reasoning" => {
            obj.entry("id")
                .or_insert_with(|| json!(state.ids.next("rs_")));
            let summary = obj.entry("summary").or_insert_with(|| json!([])).clone();
            for part in summary.as_array().into_iter().flatten() {
                tally.reasoning_tokens +=
                    text_tokens(part.get("text").and_then(Value::as_str).unwrap_or(""));
            }
            tally.reasoning_tokens += 16;
            if checked.include_encrypted {
                let payload = json!({"id": obj.get("id"), "summary": summary}).to_string();
                obj.insert(
                    "encrypted_content".into(),
                    json!(state.signer.encrypt(payload.as_bytes())),
                );
            }
        }
        "computer_call" => {
            tally.n_calls += 1;
            stamp_computer_call(state, checked, idx, obj)?;
        }
        "function_call" => {
            tally.n_calls += 1;
            let name = obj.get("name").and_then(Value::as_str).unwrap_or("");
            if !checked.declared.functions.contains(name) {
                return Err(format!(
                    "hands-sim: the policy called function `{name}`, which the request does not declare"
                ));
            }
            obj.entry("id")
                .or_insert_with(|| json!(state.ids.next("fc_")));
            let call_id = fill_call_id(state, obj);
            note_status(state, obj, &call_id);
            let arguments = obj.entry("arguments").or_insert_with(|| json!("{}"));
            if !arguments.is_string() {
                *arguments = json!(arguments.to_string());
            }
        }
        // Passed through even when the request declares no MCP tool, so a test can check
        // that the client stops on it; so are scripted `mcp_call`s (a forged approval id,
        // a call the declaration forbids).
        "mcp_approval_request" => {
            obj.entry("id")
                .or_insert_with(|| json!(state.ids.next("mcpr_")));
        }
        "mcp_list_tools" => {
            obj.entry("id")
                .or_insert_with(|| json!(state.ids.next("mcpl_")));
        }
        "mcp_call" => {
            obj.entry("id")
                .or_insert_with(|| json!(state.ids.next("mcp_")));
            obj.entry("status").or_insert_with(|| json!("completed"));
        }
        server_item
            if let Some((family, _)) = validate::SERVER_TOOL_ITEMS
                .iter()
                .find(|(_, item)| *item == server_item) =>
        {
            stamp_server_item(state, checked, family, obj);
        }
        _ => {}
    }
    Ok(())
}

/// Checks a `computer_call` against the declared tools and gives it (and its pending safety
/// checks) ids, remembering the check ids its output must acknowledge.
fn stamp_computer_call(
    state: &mut State,
    checked: &Checked,
    idx: usize,
    obj: &mut serde_json::Map<String, Value>,
) -> Result<(), String> {
    if !checked.declared.computer {
        return Err(
            "hands-sim: the policy emitted a computer_call but the request declares no computer tool"
                .to_owned(),
        );
    }
    if obj.get("action").is_none() && obj.get("actions").is_none() {
        return Err(format!(
            "hands-sim: computer_call item {idx} has neither `action` nor `actions`"
        ));
    }
    obj.entry("id")
        .or_insert_with(|| json!(state.ids.next("cu_")));
    let call_id = fill_call_id(state, obj);
    let checks = obj
        .entry("pending_safety_checks")
        .or_insert_with(|| json!([]));
    let mut check_ids = Vec::new();
    for check in checks.as_array_mut().into_iter().flatten() {
        let Some(check) = check.as_object_mut() else {
            return Err("hands-sim: a pending safety check is not an object".to_owned());
        };
        let id = check
            .entry("id")
            .or_insert_with(|| json!(state.ids.next("cu_sc_")))
            .as_str()
            .unwrap_or("")
            .to_owned();
        check_ids.push(id);
    }
    state.openai.calls.insert(call_id.clone(), check_ids);
    note_status(state, obj, &call_id);
    Ok(())
}

/// Gives a server tool's item (of tool `family`) its id and status, and a code interpreter's
/// item its container.
fn stamp_server_item(
    state: &mut State,
    checked: &Checked,
    family: &str,
    obj: &mut serde_json::Map<String, Value>,
) {
    // An undeclared server tool's item is passed through (the real API would not emit it), so
    // a test can check that the client stops on it.
    let declared = checked.declared.server_tools.contains(family);
    let prefix = match family {
        "web_search" => "ws_",
        "file_search" => "fs_",
        "code_interpreter" => "ci_",
        _ => "ig_",
    };
    obj.entry("id")
        .or_insert_with(|| json!(state.ids.next(prefix)));
    obj.entry("status").or_insert_with(|| json!("completed"));
    if declared && family == "code_interpreter" && !obj.contains_key("container_id") {
        let container = container_for(state, checked);
        obj.insert("container_id".into(), json!(container));
    }
}

/// Remembers the server items a later request may send back, and which item follows each
/// reasoning item.
fn remember_items(state: &mut State, output: &[Value]) {
    for item in output {
        let item_type = item.get("type").and_then(Value::as_str).unwrap_or("");
        if validate::SERVER_ITEM_TYPES.contains(&item_type)
            && let Some(id) = item.get("id").and_then(Value::as_str)
        {
            state.openai.issued.insert(id.to_owned(), item.clone());
        }
    }
    for pair in output.windows(2) {
        if pair[0].get("type").and_then(Value::as_str) == Some("reasoning")
            && let (Some(rs), Some(next)) = (
                pair[0].get("id").and_then(Value::as_str),
                pair[1].get("id").and_then(Value::as_str),
            )
        {
            state.openai.follows.insert(rs.to_owned(), next.to_owned());
        }
    }
}

/// Over its threshold, a request with `context_management` compacts: the response opens with
/// a compaction item that stands for the conversation so far.
fn compact(state: &mut State, checked: &Checked, output: &mut Vec<Value>) {
    if let Some(threshold) = checked.compact_threshold
        && checked.prompt.total() > threshold
    {
        let id = state.ids.next("cmp_");
        let tokens = (checked.prompt.total() / 10).clamp(1, COMPACTION_MAX_TOKENS);
        let payload = json!({"id": id, "tokens": tokens}).to_string();
        let sealed = state
            .signer
            .seal(validate::COMPACTION_DOMAIN, payload.as_bytes());
        output.insert(
            0,
            json!({"type": "compaction", "id": id, "encrypted_content": sealed}),
        );
    }
}
