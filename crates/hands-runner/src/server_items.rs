//! A Responses answer's server tool items, checked before anything of it runs: each with its
//! native fields (so it can be sent back as it came), each MCP item on a declared server and a
//! tool the declaration allows, each `mcp_approval_request` one the declaration can ask, and
//! each `mcp_call` either allowed to run unasked or bound to an approval the run gave — same
//! request id, same server label, same tool, same arguments, used once.
//!
//! Spec: openai-browser-desktop-drivers, "Combinar acciones del navegador con otras
//! herramientas"; the rules of the `openai` SDK's `responses_tool_runner.py`
//! (`_validate_server_item`, `validate_mcp_selection`, `_validated_mcp_call`,
//! `_approved_mcp_requests`), which hands follows.

use std::collections::{HashMap, HashSet};

use hands_models::openai::{Item, ItemView};
use serde_json::Value;

use crate::items::Declared;
use crate::mcp::{
    ApprovalMode, MCP_APPROVAL_REQUEST, MCP_APPROVAL_RESPONSE, MCP_CALL, MCP_LIST_TOOLS,
};
use crate::outcome::StopReason;

/// The output items of server tools.
pub(crate) const SERVER_ITEM_TYPES: [&str; 7] = [
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    MCP_CALL,
    MCP_LIST_TOOLS,
    MCP_APPROVAL_REQUEST,
];

/// The JSON of an item the runner does not model (server items among them).
pub(crate) fn raw(item: &Item) -> Value {
    match item.view() {
        ItemView::Other(value) => value.clone(),
        _ => item.to_value(),
    }
}

fn text<'a>(item: &'a Value, key: &str) -> Option<&'a str> {
    item.get(key).and_then(Value::as_str)
}

fn invalid(why: impl Into<String>) -> StopReason {
    StopReason::InvalidResponse(why.into())
}

/// An approved request, as the run approved it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Approved {
    pub(crate) server_label: String,
    pub(crate) name: String,
    pub(crate) arguments: String,
}

/// The approvals the conversation gave that no `mcp_call` has used yet, by request id.
pub(crate) fn approved_requests<'a>(
    history: impl IntoIterator<Item = &'a Item>,
) -> HashMap<String, Approved> {
    let mut requests: HashMap<String, Option<Approved>> = HashMap::new();
    let mut approved = HashMap::new();
    for item in history {
        let value = raw(item);
        match item.item_type() {
            MCP_APPROVAL_REQUEST => {
                if let Some(id) = text(&value, "id") {
                    requests.entry(id.to_owned()).or_insert_with(|| {
                        Some(Approved {
                            server_label: text(&value, "server_label").unwrap_or("").into(),
                            name: text(&value, "name").unwrap_or("").into(),
                            arguments: text(&value, "arguments").unwrap_or("").into(),
                        })
                    });
                }
            }
            MCP_APPROVAL_RESPONSE => {
                let Some(id) = text(&value, "approval_request_id") else {
                    continue;
                };
                if let Some(slot) = requests.get_mut(id)
                    && let Some(request) = slot.take()
                    && value.get("approve").and_then(Value::as_bool) == Some(true)
                {
                    approved.insert(id.to_owned(), request);
                }
            }
            MCP_CALL => {
                if let Some(id) = text(&value, "approval_request_id") {
                    approved.remove(id);
                }
            }
            _ => {}
        }
    }
    approved
}

/// The `mcp_approval_request` items of `history` that no `mcp_approval_response` answers, in
/// order (a run stopped while its approver decided).
pub(crate) fn unanswered_requests(history: &[Item]) -> Vec<Value> {
    let answered: HashSet<String> = history
        .iter()
        .filter(|i| i.item_type() == MCP_APPROVAL_RESPONSE)
        .filter_map(|i| text(&raw(i), "approval_request_id").map(str::to_owned))
        .collect();
    history
        .iter()
        .filter(|i| i.item_type() == MCP_APPROVAL_REQUEST)
        .map(raw)
        .filter(|r| text(r, "id").is_some_and(|id| !answered.contains(id)))
        .collect()
}

/// Why a server item did not complete (`status` other than `completed`, or an `error`), if it
/// did not: its results cannot be relied on, so nothing local runs after it.
pub(crate) fn unfinished(item: &Item) -> Option<String> {
    let item_type = item.item_type();
    if !SERVER_ITEM_TYPES.contains(&item_type) || item_type == MCP_APPROVAL_REQUEST {
        return None;
    }
    let value = raw(item);
    let status = value.get("status").and_then(Value::as_str);
    let error = value.get("error").filter(|e| !e.is_null());
    match (status, error) {
        (None | Some("completed"), None) => None,
        (status, Some(_)) => Some(format!(
            "`{item_type}` {} has an error (status `{}`)",
            shown(text(&value, "id").unwrap_or("")),
            shown(status.unwrap_or(""))
        )),
        (Some(status), None) => Some(format!(
            "`{item_type}` {} has status `{}`",
            shown(text(&value, "id").unwrap_or("")),
            shown(status)
        )),
    }
}

/// An API value as it appears in an error text: printable ASCII, at most 64 characters.
fn shown(value: &str) -> String {
    value
        .chars()
        .filter(|c| c.is_ascii_graphic())
        .take(64)
        .collect()
}

/// Checks every server item of `output` against the declarations and the approvals `approved`
/// (taken from the history before this response; an `mcp_call` uses its approval up).
pub(crate) fn check(
    output: &[Item],
    declared: &Declared,
    mut approved: HashMap<String, Approved>,
) -> Result<(), StopReason> {
    for item in output {
        let item_type = item.item_type();
        if !SERVER_ITEM_TYPES.contains(&item_type) {
            continue;
        }
        let value = raw(item);
        native_fields(item_type, &value, declared)?;
        if !item_type.starts_with("mcp_") {
            continue;
        }
        let label = text(&value, "server_label").unwrap_or("");
        let Some(server) = declared.mcp_server(label) else {
            return Err(invalid(format!(
                "`{item_type}` names MCP server `{}`, which this run did not declare",
                shown(label)
            )));
        };
        if item_type == MCP_LIST_TOOLS {
            continue;
        }
        let name = text(&value, "name").unwrap_or("");
        if let Some(allowed) = &server.allowed_tools
            && !allowed.iter().any(|a| a == name)
        {
            return Err(invalid(format!(
                "`{item_type}` names tool `{}` of MCP server `{}`, which `allowed_tools` excludes",
                shown(name),
                shown(label)
            )));
        }
        let mode = server.require_approval.mode(name);
        if item_type == MCP_APPROVAL_REQUEST {
            if mode == Some(ApprovalMode::Never) {
                return Err(invalid(format!(
                    "an `mcp_approval_request` for tool `{}` contradicts the declaration's `require_approval` (never)",
                    shown(name)
                )));
            }
            continue;
        }
        // An `mcp_call`: bound to an approval the run gave, or allowed to run unasked.
        match text(&value, "approval_request_id") {
            Some(request_id) => {
                let matches = approved.get(request_id).is_some_and(|a| {
                    a.server_label == label
                        && a.name == name
                        && Some(a.arguments.as_str()) == text(&value, "arguments")
                });
                if !matches {
                    return Err(invalid(format!(
                        "an `mcp_call` claims approval `{}`, which this run did not give for this server, tool and arguments (or which was used already)",
                        shown(request_id)
                    )));
                }
                approved.remove(request_id);
            }
            None if mode == Some(ApprovalMode::Always) => {
                return Err(invalid(format!(
                    "an `mcp_call` of tool `{}` ran without the approval its declaration requires",
                    shown(name)
                )));
            }
            None => {}
        }
    }
    Ok(())
}

/// The fields an item needs to be replayed as it came (the SDK's "A server tool requires its
/// native fields before replay").
fn native_fields(item_type: &str, value: &Value, declared: &Declared) -> Result<(), StopReason> {
    let missing = |what: &str| {
        Err(invalid(format!(
            "a `{item_type}` item lacks {what}, so it could not be sent back as it came"
        )))
    };
    if text(value, "id").is_none_or(str::is_empty) {
        return missing("its `id`");
    }
    let optional_text = |key: &str| value.get(key).is_none_or(|v| v.is_null() || v.is_string());
    match item_type {
        MCP_LIST_TOOLS => {
            let tools_ok = value
                .get("tools")
                .and_then(Value::as_array)
                .is_some_and(|tools| {
                    tools.iter().all(|t| {
                        t.get("name").is_some_and(Value::is_string)
                            && t.get("input_schema").is_some()
                    })
                });
            if !tools_ok {
                return missing("a list of tools with names and input schemas");
            }
        }
        MCP_CALL | MCP_APPROVAL_REQUEST => {
            if text(value, "name").is_none() || text(value, "arguments").is_none() {
                return missing("its tool `name` and `arguments` text");
            }
            if item_type == MCP_CALL && !optional_text("output") {
                return missing("a text `output`");
            }
        }
        "code_interpreter_call" => {
            let Some(container) = text(value, "container_id") else {
                return missing("its `container_id`");
            };
            let declared_container = declared.containers.iter().any(|c| match c {
                Value::String(id) => id == container,
                Value::Object(auto) => auto.get("type").and_then(Value::as_str) == Some("auto"),
                _ => false,
            });
            if !declared_container {
                return Err(invalid(format!(
                    "a `code_interpreter_call` ran in container `{}`, which this run did not declare",
                    shown(container)
                )));
            }
        }
        "image_generation_call" if !optional_text("result") => {
            return missing("a text `result`");
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(value: Value) -> Item {
        Item::from_value(&value).unwrap()
    }

    fn declared() -> Declared {
        Declared::new(
            false,
            &[
                json!({"type": "mcp", "server_label": "notes", "server_url": "https://x/mcp",
                    "require_approval": {"never": {"tool_names": ["list"]}},
                    "allowed_tools": ["add", "list"]}),
                json!({"type": "code_interpreter", "container": "cntr_1"}),
            ],
        )
    }

    fn request(id: &str, args: &str) -> Value {
        json!({"type": "mcp_approval_request", "id": id, "server_label": "notes", "name": "add",
            "arguments": args})
    }

    fn call(approval: Option<&str>, name: &str, args: &str) -> Value {
        json!({"type": "mcp_call", "id": "mcp_1", "server_label": "notes", "name": name,
            "arguments": args, "output": "ok", "status": "completed",
            "approval_request_id": approval})
    }

    #[test]
    fn an_mcp_call_is_bound_to_the_approval_the_run_gave() {
        let history = vec![
            item(request("r1", r#"{"a":1}"#)),
            item(
                json!({"type": "mcp_approval_response", "approval_request_id": "r1",
                "approve": true}),
            ),
            item(request("r2", "{}")),
            item(
                json!({"type": "mcp_approval_response", "approval_request_id": "r2",
                "approve": false}),
            ),
        ];
        let approved = approved_requests(&history);
        assert_eq!(approved.keys().collect::<Vec<_>>(), ["r1"]);
        let d = declared();
        let ok = |output: Vec<Value>| {
            check(
                &output.into_iter().map(item).collect::<Vec<_>>(),
                &d,
                approved.clone(),
            )
        };
        assert_eq!(ok(vec![call(Some("r1"), "add", r#"{"a":1}"#)]), Ok(()));
        // Other arguments, a refused request, an unknown id, twice: refused.
        for bad in [
            vec![call(Some("r1"), "add", r#"{"a":2}"#)],
            vec![call(Some("r2"), "add", "{}")],
            vec![call(Some("forged"), "add", "{}")],
            vec![
                call(Some("r1"), "add", r#"{"a":1}"#),
                call(Some("r1"), "add", r#"{"a":1}"#),
            ],
            // `add` needs approval; `list` does not.
            vec![call(None, "add", "{}")],
            // Excluded by allowed_tools.
            vec![call(None, "drop", "{}")],
            // A request the declaration says never to ask.
            vec![
                json!({"type": "mcp_approval_request", "id": "r9", "server_label": "notes",
                "name": "list", "arguments": "{}"}),
            ],
            // Another server.
            vec![
                json!({"type": "mcp_list_tools", "id": "l1", "server_label": "other",
                "tools": []}),
            ],
            // No id.
            vec![json!({"type": "web_search_call", "status": "completed"})],
            // A container never declared.
            vec![
                json!({"type": "code_interpreter_call", "id": "ci_1", "status": "completed",
                "container_id": "cntr_2", "code": "", "outputs": []}),
            ],
        ] {
            assert!(
                matches!(ok(bad.clone()), Err(StopReason::InvalidResponse(_))),
                "{bad:?}"
            );
        }
        assert_eq!(ok(vec![call(None, "list", "{}")]), Ok(()));
        // A call uses its approval up.
        let mut used = history.clone();
        used.push(item(call(Some("r1"), "add", r#"{"a":1}"#)));
        assert!(approved_requests(&used).is_empty());
    }

    #[test]
    fn unfinished_server_items() {
        let cases = [
            (
                json!({"type": "web_search_call", "id": "ws", "status": "completed"}),
                false,
            ),
            (
                json!({"type": "web_search_call", "id": "ws", "status": "failed"}),
                true,
            ),
            (
                json!({"type": "code_interpreter_call", "id": "c", "status": "in_progress"}),
                true,
            ),
            (
                json!({"type": "image_generation_call", "id": "i", "status": "generating"}),
                true,
            ),
            (
                json!({"type": "mcp_call", "id": "m", "status": "completed",
                "error": {"type": "mcp_tool_execution_error", "content": []}}),
                true,
            ),
            (
                json!({"type": "mcp_list_tools", "id": "l", "tools": [], "error": "down"}),
                true,
            ),
            (json!({"type": "mcp_approval_request", "id": "r"}), false),
            (
                json!({"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}",
                "status": "incomplete"}),
                false,
            ),
        ];
        for (value, want) in cases {
            assert_eq!(unfinished(&item(value.clone())).is_some(), want, "{value}");
        }
    }
}
