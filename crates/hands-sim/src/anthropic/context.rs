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

/// The request's edits that this server applies (thinking clearing and compaction are checked
/// for shape only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Edits {
    clear: Vec<ClearToolUses>,
}

/// Checks `context_management`; `None` when the request has none.
pub(crate) fn parse(value: Option<&Value>, betas: &[String]) -> Result<Option<Edits>> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    if !betas.iter().any(|b| b == m::CONTEXT_MANAGEMENT_BETA) {
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
        match edit.get("type").and_then(Value::as_str) {
            Some(CLEAR_TOOL_USES) => out.clear.push(clear_tool_uses(edit, &path)?),
            Some(CLEAR_THINKING) => {
                only_fields(edit, &path, &["type", "keep"])?;
            }
            Some(COMPACT) => {}
            Some(other) => return Err(invalid(m::unknown_context_edit(idx, other))),
            None => return Err(invalid(m::field_required(&format!("{path}.type")))),
        }
    }
    Ok(Some(out))
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
