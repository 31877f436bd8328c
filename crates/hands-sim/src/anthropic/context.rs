//! Server-side context editing on the Messages API (beta `context-management-2025-06-27`): the
//! request's `context_management.edits` are checked, and `clear_tool_uses_20250919` is applied
//! to the prompt the model sees — and the cache hashes, so a clearing breaks the cached prefix at
//! the first cleared result, as the real API warns.
//!
//! The client always sends its full history; the server decides each time, from that history,
//! what to clear: when the trigger is exceeded, every tool use but the most recent `keep` (and
//! the excluded tools) has its result replaced by a placeholder — provided that frees at least
//! `clear_at_least` tokens. `applied_edits` in the response says what was cleared.
//!
//! Spec: api-contracts A, "Context editing"; claude-computer-use-tool, "Gestionar el historial
//! de capturas de pantalla".

use serde_json::{Map, Value, json};

use crate::error::ApiError;
use crate::messages as m;
use crate::tokens;

type Result<T> = std::result::Result<T, ApiError>;

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::invalid(message)
}

/// The edit that clears old tool results.
pub(crate) const CLEAR_TOOL_USES: &str = "clear_tool_uses_20250919";
const CLEAR_THINKING: &str = "clear_thinking_20251015";
const COMPACT: &str = "compact_20260112";

/// The documented defaults of `clear_tool_uses_20250919`.
const DEFAULT_TRIGGER_TOKENS: u64 = 100_000;
const DEFAULT_KEEP: u64 = 3;

/// When clearing starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    InputTokens(u64),
    ToolUses(u64),
}

/// Which tool inputs are cleared with their results.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ClearInputs {
    No,
    All,
    Named(Vec<String>),
}

/// One `clear_tool_uses_20250919` edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClearToolUses {
    trigger: Trigger,
    keep: u64,
    clear_at_least: Option<u64>,
    exclude: Vec<String>,
    inputs: ClearInputs,
}

/// One `compact_20260112` edit: over `trigger` input tokens, the server summarizes the
/// conversation into a `compaction` block that opens its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Compact {
    pub(crate) trigger: u64,
    /// `pause_after_compaction`: the answer is the compaction block alone, with
    /// `stop_reason: "compaction"`, and the next request continues the turn.
    pub(crate) pause: bool,
    pub(crate) instructions: Option<String>,
}

/// A compaction this request makes: the summary block opens the answer, alone (a `compaction`
/// request, or `pause_after_compaction`) or before the model's turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Due {
    pub(crate) alone: bool,
    pub(crate) summary: String,
}

/// Where the conversation the model sees starts: at the last `compaction` block with a summary
/// (message index, block index). The server drops everything before it; a block whose `content`
/// is null (a failed compaction) is a no-op.
pub(crate) fn compacted_from(messages: &[Value]) -> Option<(usize, usize)> {
    messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(msg_idx, message)| {
            let blocks = message.get("content")?.as_array()?;
            let block_idx = blocks.iter().rposition(|b| {
                b.get("type").and_then(Value::as_str) == Some("compaction")
                    && b.get("content").is_some_and(Value::is_string)
            })?;
            Some((msg_idx, block_idx))
        })
}

/// The conversation the model sees: `messages` from the last compaction on.
pub(crate) fn visible(messages: &[Value]) -> std::borrow::Cow<'_, [Value]> {
    match compacted_from(messages) {
        None => std::borrow::Cow::Borrowed(messages),
        Some((msg_idx, 0)) => std::borrow::Cow::Borrowed(&messages[msg_idx..]),
        Some((msg_idx, block_idx)) => {
            let mut out = messages[msg_idx..].to_vec();
            if let Some(blocks) = out[0].get_mut("content").and_then(Value::as_array_mut) {
                blocks.drain(..block_idx);
            }
            std::borrow::Cow::Owned(out)
        }
    }
}

/// Checks the `compaction` request parameter (beta `compact-2026-09-04`): `{type: "summarize",
/// instructions?}`, alone of `context_management` and of the fields that only shape a reply.
/// Returns the instructions when the request compacts.
pub(crate) fn compaction_param(
    obj: &Map<String, Value>,
    betas: &[String],
) -> Result<Option<Option<String>>> {
    let Some(value) = obj.get("compaction").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    if !betas.iter().any(|b| b == m::COMPACTION_REQUEST_BETA) {
        return Err(invalid(m::compaction_needs_beta()));
    }
    let Some(config) = value.as_object() else {
        return Err(invalid("compaction: Input should be a valid dictionary"));
    };
    only_fields(config, "compaction", &["type", "instructions"])?;
    match config.get("type").and_then(Value::as_str) {
        Some("summarize") => {}
        Some(other) => {
            return Err(invalid(format!(
                "compaction: Input tag '{other}' found using 'type' does not match any of the expected tags: 'summarize'"
            )));
        }
        None => return Err(invalid(m::field_required("compaction.type"))),
    }
    if obj.get("context_management").is_some_and(|v| !v.is_null()) {
        return Err(invalid(m::COMPACTION_WITH_CONTEXT_MANAGEMENT));
    }
    if obj
        .get("stop_sequences")
        .and_then(Value::as_array)
        .is_some_and(|s| !s.is_empty())
    {
        return Err(invalid(m::compaction_with_reply_field("stop_sequences")));
    }
    if let Some(ty) = obj
        .get("tool_choice")
        .and_then(|c| c.get("type"))
        .and_then(Value::as_str)
        .filter(|t| matches!(*t, "any" | "tool"))
    {
        return Err(invalid(m::compaction_with_reply_field(&format!(
            "tool_choice: {ty}"
        ))));
    }
    if obj
        .get("output_config")
        .and_then(|c| c.get("format"))
        .is_some_and(|f| !f.is_null())
    {
        return Err(invalid(m::compaction_with_reply_field(
            "output_config.format",
        )));
    }
    Ok(Some(match config.get("instructions") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(invalid(
                "compaction.instructions: Input should be a valid string",
            ));
        }
    }))
}

/// The request's edits that this server applies (thinking clearing is checked for shape only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Edits {
    clear: Vec<ClearToolUses>,
    pub(crate) compact: Option<Compact>,
}

/// Checks `context_management`; `None` when the request has none.
pub(crate) fn parse(value: Option<&Value>, betas: &[String]) -> Result<Option<Edits>> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let has_beta = |beta: &str| betas.iter().any(|b| b == beta);
    if !has_beta(m::CONTEXT_MANAGEMENT_BETA) && !has_beta(m::COMPACT_BETA) {
        return Err(invalid(m::context_management_needs_beta()));
    }
    let Some(obj) = value.as_object() else {
        return Err(invalid(
            "context_management: Input should be a valid dictionary",
        ));
    };
    if let Some(key) = obj.keys().find(|k| *k != "edits") {
        return Err(invalid(m::extra_input(&format!(
            "context_management.{key}"
        ))));
    }
    let edits = match obj.get("edits") {
        None | Some(Value::Null) => return Ok(Some(Edits::default())),
        Some(Value::Array(edits)) => edits,
        Some(_) => {
            return Err(invalid(
                "context_management.edits: Input should be a valid list",
            ));
        }
    };
    let mut out = Edits::default();
    for (idx, edit) in edits.iter().enumerate() {
        let path = format!("context_management.edits.{idx}");
        let Some(edit) = edit.as_object() else {
            return Err(invalid(format!(
                "{path}: Input should be a valid dictionary"
            )));
        };
        let ty = edit.get("type").and_then(Value::as_str);
        if matches!(ty, Some(CLEAR_TOOL_USES | CLEAR_THINKING))
            && !has_beta(m::CONTEXT_MANAGEMENT_BETA)
        {
            return Err(invalid(m::context_management_needs_beta()));
        }
        match ty {
            Some(CLEAR_TOOL_USES) => out.clear.push(clear_tool_uses(edit, &path)?),
            Some(CLEAR_THINKING) => {
                only_fields(edit, &path, &["type", "keep"])?;
            }
            Some(COMPACT) => {
                if !has_beta(m::COMPACT_BETA) {
                    return Err(invalid(m::compact_edit_needs_beta(idx)));
                }
                if out.compact.is_some() {
                    return Err(invalid(m::compact_edit_twice(idx)));
                }
                out.compact = Some(compact(edit, &path)?);
            }
            Some(other) => return Err(invalid(m::unknown_context_edit(idx, other))),
            None => return Err(invalid(m::field_required(&format!("{path}.type")))),
        }
    }
    Ok(Some(out))
}

/// Spec: api-contracts A, "Context editing" (`compact_20260112`); the fields as anthropic 2.10's
/// `BetaCompact20260112EditParam` has them.
fn compact(edit: &Map<String, Value>, path: &str) -> Result<Compact> {
    only_fields(
        edit,
        path,
        &["type", "trigger", "pause_after_compaction", "instructions"],
    )?;
    let trigger = match edit.get("trigger").filter(|v| !v.is_null()) {
        None => m::DEFAULT_COMPACT_TRIGGER,
        Some(v) => {
            counted(
                v,
                &format!("{path}.trigger"),
                &["input_tokens"],
                m::MIN_COMPACT_TRIGGER,
            )?
            .1
        }
    };
    let pause = match edit.get("pause_after_compaction") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(invalid(format!(
                "{path}.pause_after_compaction: Input should be a valid boolean"
            )));
        }
    };
    let instructions = match edit.get("instructions") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(invalid(format!(
                "{path}.instructions: Input should be a valid string"
            )));
        }
    };
    Ok(Compact {
        trigger,
        pause,
        instructions,
    })
}

fn only_fields(obj: &Map<String, Value>, path: &str, allowed: &[&str]) -> Result<()> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(invalid(m::extra_input(&format!("{path}.{key}")))),
        None => Ok(()),
    }
}

/// `{type, value}` with `type` one of `types`; returns the type and the value.
fn counted<'a>(
    value: &'a Value,
    path: &str,
    types: &[&'a str],
    min: u64,
) -> Result<(&'a str, u64)> {
    let Some(obj) = value.as_object() else {
        return Err(invalid(format!(
            "{path}: Input should be a valid dictionary"
        )));
    };
    only_fields(obj, path, &["type", "value"])?;
    let ty = match obj.get("type").and_then(Value::as_str) {
        Some(t) if types.contains(&t) => types.iter().copied().find(|k| *k == t).unwrap_or(t),
        Some(t) => {
            return Err(invalid(format!(
                "{path}: Input tag '{t}' found using 'type' does not match any of the expected tags: {}",
                types
                    .iter()
                    .map(|t| format!("'{t}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        None => return Err(invalid(m::field_required(&format!("{path}.type")))),
    };
    match obj.get("value").map(Value::as_u64) {
        Some(Some(n)) if n >= min => Ok((ty, n)),
        Some(_) => Err(invalid(format!(
            "{path}.value: Input should be an integer greater than or equal to {min}"
        ))),
        None => Err(invalid(m::field_required(&format!("{path}.value")))),
    }
}

fn names(value: &Value, path: &str) -> Result<Vec<String>> {
    value
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .map(|i| i.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| invalid(format!("{path}: Input should be a valid list of strings")))
}

fn clear_tool_uses(edit: &Map<String, Value>, path: &str) -> Result<ClearToolUses> {
    only_fields(
        edit,
        path,
        &[
            "type",
            "trigger",
            "keep",
            "clear_at_least",
            "exclude_tools",
            "clear_tool_inputs",
        ],
    )?;
    let trigger = match edit.get("trigger").filter(|v| !v.is_null()) {
        None => Trigger::InputTokens(DEFAULT_TRIGGER_TOKENS),
        Some(v) => match counted(
            v,
            &format!("{path}.trigger"),
            &["input_tokens", "tool_uses"],
            1,
        )? {
            ("input_tokens", n) => Trigger::InputTokens(n),
            (_, n) => Trigger::ToolUses(n),
        },
    };
    let keep = match edit.get("keep").filter(|v| !v.is_null()) {
        None => DEFAULT_KEEP,
        Some(v) => counted(v, &format!("{path}.keep"), &["tool_uses"], 0)?.1,
    };
    let clear_at_least = match edit.get("clear_at_least").filter(|v| !v.is_null()) {
        None => None,
        Some(v) => Some(counted(v, &format!("{path}.clear_at_least"), &["input_tokens"], 0)?.1),
    };
    let exclude = match edit.get("exclude_tools").filter(|v| !v.is_null()) {
        None => Vec::new(),
        Some(v) => names(v, &format!("{path}.exclude_tools"))?,
    };
    let inputs = match edit.get("clear_tool_inputs") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => ClearInputs::No,
        Some(Value::Bool(true)) => ClearInputs::All,
        Some(v) => ClearInputs::Named(names(v, &format!("{path}.clear_tool_inputs"))?),
    };
    Ok(ClearToolUses {
        trigger,
        keep,
        clear_at_least,
        exclude,
        inputs,
    })
}

/// Where a `tool_use` sits and where its `tool_result` sits.
#[derive(Debug, Clone)]
struct Use {
    at: (usize, usize),
    result: Option<(usize, usize)>,
    names: Vec<String>,
}

fn tool_uses(messages: &[Value]) -> Vec<Use> {
    let mut uses = Vec::new();
    for (m, message) in messages.iter().enumerate() {
        if message.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let Some(blocks) = message.get("content").and_then(Value::as_array) else {
            continue;
        };
        for (b, block) in blocks.iter().enumerate() {
            if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                continue;
            }
            let id = block.get("id").and_then(Value::as_str).unwrap_or("");
            let result = messages
                .get(m + 1)
                .and_then(|next| next.get("content"))
                .and_then(Value::as_array)
                .and_then(|results| {
                    results.iter().position(|r| {
                        r.get("type").and_then(Value::as_str) == Some("tool_result")
                            && r.get("tool_use_id").and_then(Value::as_str) == Some(id)
                    })
                })
                .map(|r| (m + 1, r));
            let names = ["name", "toolset_name"]
                .iter()
                .filter_map(|k| block.get(*k).and_then(Value::as_str).map(str::to_owned))
                .collect();
            uses.push(Use {
                at: (m, b),
                result,
                names,
            });
        }
    }
    uses
}

/// Applies the edits to a copy of `messages` whose prompt costs `input_tokens`. Returns the
/// edited messages (`None` when nothing was cleared) and the `applied_edits` to report.
pub(crate) fn apply(
    edits: &Edits,
    messages: &[Value],
    input_tokens: u64,
) -> (Option<Vec<Value>>, Vec<Value>) {
    let mut edited: Option<Vec<Value>> = None;
    let mut applied = Vec::new();
    for edit in &edits.clear {
        let current = edited.as_deref().unwrap_or(messages);
        let uses = tool_uses(current);
        let fires = match edit.trigger {
            Trigger::InputTokens(n) => input_tokens > n,
            Trigger::ToolUses(n) => uses.len() as u64 > n,
        };
        if !fires {
            continue;
        }
        let keep_from = uses
            .len()
            .saturating_sub(usize::try_from(edit.keep).unwrap_or(usize::MAX));
        let placeholder = Value::String(m::CLEARED_TOOL_RESULT.to_owned());
        let mut next = current.to_vec();
        let mut n_cleared = 0u64;
        let mut tokens_cleared = 0u64;
        for tool_use in &uses[..keep_from] {
            if tool_use.names.iter().any(|n| edit.exclude.contains(n)) {
                continue;
            }
            let Some((rm, rb)) = tool_use.result else {
                continue;
            };
            let result = &mut next[rm]["content"][rb];
            let Some(content) = result.get("content") else {
                continue;
            };
            if *content == placeholder {
                continue;
            }
            tokens_cleared +=
                tokens::value_tokens(content).saturating_sub(tokens::value_tokens(&placeholder));
            result["content"] = placeholder.clone();
            let clear_input = match &edit.inputs {
                ClearInputs::No => false,
                ClearInputs::All => true,
                ClearInputs::Named(names) => tool_use.names.iter().any(|n| names.contains(n)),
            };
            if clear_input {
                let (um, ub) = tool_use.at;
                let input = &next[um]["content"][ub]["input"];
                tokens_cleared += tokens::value_tokens(input).saturating_sub(1);
                next[um]["content"][ub]["input"] = json!({});
            }
            n_cleared += 1;
        }
        if n_cleared == 0 || edit.clear_at_least.is_some_and(|min| tokens_cleared < min) {
            continue;
        }
        applied.push(
            json!({"type": CLEAR_TOOL_USES, "cleared_tool_uses": n_cleared,
            "cleared_input_tokens": tokens_cleared}),
        );
        edited = Some(next);
    }
    (edited, applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conversation(turns: usize) -> Vec<Value> {
        let mut messages = vec![json!({"role": "user", "content": "task"})];
        for i in 0..turns {
            messages.push(json!({"role": "assistant", "content": [{"type": "tool_use",
                "id": format!("t{i}"), "name": "screenshot", "toolset_name": "computer", "input": {}}]}));
            messages.push(json!({"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": format!("t{i}"), "toolset_name": "computer",
                "content": [{"type": "text", "text": "x".repeat(4000)}]}]}));
        }
        messages
    }

    fn edits(edit: Value) -> Edits {
        let betas = vec![m::CONTEXT_MANAGEMENT_BETA.to_owned()];
        parse(Some(&json!({"edits": [edit]})), &betas)
            .unwrap()
            .unwrap()
    }

    #[test]
    fn compaction_edit_needs_its_beta_and_valid_shapes() {
        let value = json!({"edits": [{"type": COMPACT, "trigger": {"type": "input_tokens", "value": 60_000},
            "pause_after_compaction": true, "instructions": "Keep the URLs."}]});
        let cm = vec![m::CONTEXT_MANAGEMENT_BETA.to_owned()];
        let compact_beta = vec![m::COMPACT_BETA.to_owned()];
        let err = parse(Some(&value), &cm).unwrap_err();
        assert_eq!(err.message, m::compact_edit_needs_beta(0));
        let edits = parse(Some(&value), &compact_beta).unwrap().unwrap();
        assert_eq!(
            edits.compact,
            Some(Compact {
                trigger: 60_000,
                pause: true,
                instructions: Some("Keep the URLs.".into())
            })
        );
        let default = parse(Some(&json!({"edits": [{"type": COMPACT}]})), &compact_beta)
            .unwrap()
            .unwrap();
        assert_eq!(
            default.compact.map(|c| c.trigger),
            Some(m::DEFAULT_COMPACT_TRIGGER)
        );
        // Clearing tool results still needs its own beta.
        let clear = json!({"edits": [{"type": CLEAR_TOOL_USES}]});
        assert_eq!(
            parse(Some(&clear), &compact_beta).unwrap_err().message,
            m::context_management_needs_beta()
        );
        for (bad, why) in [
            (json!({"edits": [{"type": COMPACT}, {"type": COMPACT}]}), m::compact_edit_twice(1)),
            (json!({"edits": [{"type": COMPACT, "trigger": {"type": "input_tokens", "value": 49_999}}]}),
             "context_management.edits.0.trigger.value: Input should be an integer greater than or equal to 50000".into()),
            (json!({"edits": [{"type": COMPACT, "trigger": {"type": "tool_uses", "value": 60_000}}]}),
             "context_management.edits.0.trigger: Input tag 'tool_uses' found using 'type' does not match any of the expected tags: 'input_tokens'".into()),
            (json!({"edits": [{"type": COMPACT, "pause_after_compaction": "yes"}]}),
             "context_management.edits.0.pause_after_compaction: Input should be a valid boolean".into()),
            (json!({"edits": [{"type": COMPACT, "keep": {"type": "tool_uses", "value": 1}}]}),
             m::extra_input("context_management.edits.0.keep")),
        ] {
            assert_eq!(parse(Some(&bad), &compact_beta).unwrap_err().message, why, "{bad}");
        }
    }

    #[test]
    fn needs_the_beta_and_valid_shapes() {
        let value = json!({"edits": [{"type": CLEAR_TOOL_USES}]});
        assert!(parse(Some(&value), &[]).is_err());
        let betas = vec![m::CONTEXT_MANAGEMENT_BETA.to_owned()];
        assert!(parse(Some(&value), &betas).is_ok());
        for bad in [
            json!({"edits": [{"type": "clear_everything"}]}),
            json!({"edits": [{"type": CLEAR_TOOL_USES, "trigger": {"type": "turns", "value": 3}}]}),
            json!({"edits": [{"type": CLEAR_TOOL_USES, "keep": {"type": "input_tokens", "value": 3}}]}),
            json!({"edits": [{"type": CLEAR_TOOL_USES, "trigger": {"type": "input_tokens", "value": 0}}]}),
            json!({"edits": [{"type": CLEAR_TOOL_USES, "surprise": true}]}),
            json!({"edits": {"type": CLEAR_TOOL_USES}}),
        ] {
            assert!(parse(Some(&bad), &betas).is_err(), "{bad}");
        }
    }

    #[test]
    fn clears_all_but_the_last_kept_once_triggered() {
        let messages = conversation(6);
        let edit = edits(json!({"type": CLEAR_TOOL_USES,
            "trigger": {"type": "input_tokens", "value": 5000},
            "keep": {"type": "tool_uses", "value": 2}}));
        let (none, applied) = apply(&edit, &messages, 4000);
        assert!(none.is_none() && applied.is_empty());
        let (cleared, applied) = apply(&edit, &messages, 7000);
        let cleared = cleared.unwrap();
        assert_eq!(applied[0]["cleared_tool_uses"], 4);
        assert!(applied[0]["cleared_input_tokens"].as_u64().unwrap() > 3000);
        assert_eq!(cleared[2]["content"][0]["content"], m::CLEARED_TOOL_RESULT);
        assert_eq!(
            cleared[12]["content"][0]["content"],
            messages[12]["content"][0]["content"]
        );
        // Not enough to clear: nothing is.
        let edit = edits(json!({"type": CLEAR_TOOL_USES,
            "trigger": {"type": "tool_uses", "value": 1},
            "clear_at_least": {"type": "input_tokens", "value": 1_000_000}}));
        assert!(apply(&edit, &messages, 0).0.is_none());
        // Excluded tools keep their results.
        let edit = edits(json!({"type": CLEAR_TOOL_USES,
            "trigger": {"type": "tool_uses", "value": 1}, "exclude_tools": ["computer"]}));
        assert!(apply(&edit, &messages, 0).0.is_none());
    }
}
