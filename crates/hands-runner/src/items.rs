//! What a Responses API answer may hold, checked before any of it runs: a response whose
//! `status` is not `completed`, a call item whose `status` is not `completed`, an item of a kind
//! the request did not declare, or an answer with neither a final message nor a call starts
//! nothing.
//!
//! Spec: api-contracts B ("Response object", "computer_call", "Function tools"); the rules of
//! the `openai` SDK's `responses_tool_runner.py` (`validate`, `preflight`, `finish`) and
//! `computer.py` (`_calls`), which hands follows; where hands differs, the item's doc says so.

use std::collections::HashSet;

use hands_models::openai::{Item, ItemView, Response, ResponseStatus};
use serde_json::Value;

use crate::mcp::{ApprovalRule, MCP_TOOL_TYPE};
use crate::outcome::{ApiStop, StopReason};
use crate::tools::is_server_tool;

/// `status` of a finished item or response.
const COMPLETED: &str = "completed";
/// `phase` of an assistant message that is commentary, not a final answer.
const COMMENTARY: &str = "commentary";
/// The item that stands for a compacted conversation.
const COMPACTION: &str = "compaction";
/// The item asking for a person's approval of an MCP call.
const MCP_APPROVAL_REQUEST: &str = crate::mcp::MCP_APPROVAL_REQUEST;

/// Output items of server tools, and the tool `type` prefixes whose declaration lets a response
/// hold them (the SDK's `_SERVER_ITEMS`).
const SERVER_ITEMS: [(&str, &[&str]); 7] = [
    ("web_search_call", &["web_search"]),
    ("file_search_call", &["file_search"]),
    ("code_interpreter_call", &["code_interpreter"]),
    ("image_generation_call", &["image_generation"]),
    ("mcp_call", &["mcp"]),
    ("mcp_list_tools", &["mcp"]),
    (MCP_APPROVAL_REQUEST, &["mcp"]),
];

/// A declared `mcp` tool, as its items are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeclaredMcp {
    pub(crate) label: String,
    /// `server_url`, when given.
    pub(crate) url: Option<String>,
    pub(crate) require_approval: ApprovalRule,
    /// `allowed_tools` as a list of names; `None` allows every tool (a filter object is read as
    /// allowing every tool: only the API can apply `read_only`).
    pub(crate) allowed_tools: Option<Vec<String>>,
}

/// What a request declared the answer may hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Declared {
    /// A computer tool.
    pub(crate) computer: bool,
    /// The `type` of every server tool declared.
    pub(crate) server_tools: Vec<String>,
    /// The request asks for compaction (`context_management`): a `compaction` item is kept and
    /// replayed unchanged.
    pub(crate) compaction: bool,
    /// The `name` of every function tool declared (browser tools and ordinary functions).
    pub(crate) functions: HashSet<String>,
    /// The `mcp` tools.
    pub(crate) mcp: Vec<DeclaredMcp>,
    /// The `container` of each `code_interpreter` tool.
    pub(crate) containers: Vec<Value>,
    /// The local tools `tool_choice` selects, when it selects some (a named function, the
    /// computer, or an `allowed_tools` list); `None` selects every declared tool.
    pub(crate) selection: Option<Selection>,
}

/// The local tools a `tool_choice` lets the model call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Selection {
    /// Function names.
    pub(crate) functions: HashSet<String>,
    /// The computer tool.
    pub(crate) computer: bool,
}

impl Selection {
    /// What `tool_choice` selects: a function or the computer by name, or the tools of an
    /// `allowed_tools` choice; `None` for `auto`, `required`, `none` and anything else (every
    /// declared tool).
    pub(crate) fn of(choice: Option<&hands_models::openai::ToolChoice>) -> Option<Selection> {
        use hands_models::openai::ToolChoice;
        let is_computer =
            |kind: &str| matches!(kind, "computer" | "computer_use" | "computer_use_preview");
        match choice? {
            ToolChoice::Function(name) => Some(Selection {
                functions: HashSet::from([name.clone()]),
                computer: false,
            }),
            ToolChoice::BuiltIn(kind) => Some(Selection {
                functions: HashSet::new(),
                computer: is_computer(kind),
            }),
            ToolChoice::Other(value)
                if value.get("type").and_then(Value::as_str) == Some("allowed_tools") =>
            {
                let tools = value.get("tools").and_then(Value::as_array)?;
                let mut selection = Selection::default();
                for tool in tools {
                    match tool.get("type").and_then(Value::as_str) {
                        Some("function") => {
                            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                                selection.functions.insert(name.to_owned());
                            }
                        }
                        Some(kind) if is_computer(kind) => selection.computer = true,
                        _ => {}
                    }
                }
                Some(selection)
            }
            _ => None,
        }
    }
}

impl Declared {
    /// From the request's `tools` and whether the run has a computer.
    pub(crate) fn new(computer: bool, tools: &[Value]) -> Declared {
        let of_type = |ty: &'static str| {
            tools
                .iter()
                .filter(move |t| t.get("type").and_then(Value::as_str) == Some(ty))
        };
        Declared {
            computer,
            server_tools: tools
                .iter()
                .filter(|t| is_server_tool(t))
                .filter_map(|t| t.get("type").and_then(Value::as_str).map(str::to_owned))
                .collect(),
            compaction: false,
            functions: tools
                .iter()
                .filter(|t| t.get("type").and_then(Value::as_str) == Some("function"))
                .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
                .collect(),
            mcp: of_type(MCP_TOOL_TYPE)
                .map(|t| DeclaredMcp {
                    label: t
                        .get("server_label")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    url: t
                        .get("server_url")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    require_approval: ApprovalRule::parse(t.get("require_approval")),
                    allowed_tools: allowed_names(t.get("allowed_tools")),
                })
                .collect(),
            containers: of_type("code_interpreter")
                .filter_map(|t| t.get("container").cloned())
                .collect(),
            selection: None,
        }
    }

    /// The declared MCP server with this label.
    pub(crate) fn mcp_server(&self, label: &str) -> Option<&DeclaredMcp> {
        self.mcp
            .iter()
            .find(|s| !label.is_empty() && s.label == label)
    }

    fn declares_server_item(&self, item_type: &str) -> bool {
        SERVER_ITEMS
            .iter()
            .find(|(item, _)| *item == item_type)
            .is_some_and(|(_, prefixes)| {
                self.server_tools
                    .iter()
                    .any(|tool| prefixes.iter().any(|p| tool.starts_with(p)))
            })
    }
}

/// `allowed_tools` as names: a list, or a filter's `tool_names` (other filters allow every
/// tool as far as the runner can tell).
fn allowed_names(value: Option<&Value>) -> Option<Vec<String>> {
    let names = match value? {
        Value::Array(names) => names,
        Value::Object(filter) if filter.get("read_only").is_none() => {
            filter.get("tool_names")?.as_array()?
        }
        _ => return None,
    };
    Some(
        names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
    )
}

/// What a checked output item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ItemKind {
    /// A `function_call` or `computer_call` to run.
    Call,
    /// A completed assistant message that is not commentary.
    FinalMessage,
    /// A declared server tool's item (its own result; it may still have failed).
    ServerItem,
    /// An `mcp_approval_request` of a declared MCP server: the run's approver answers it.
    ApprovalRequest,
    /// Anything else the runner keeps without acting on it (reasoning, commentary).
    Passive,
}

/// Checks one output item: a call must be `completed` (a `function_call` may leave `status`
/// out, as the SDK allows; a `computer_call` may not), a `computer_call` needs a computer, a
/// server tool's item needs that tool declared, and any other type stops the run with its name.
///
/// An `mcp_approval_request` needs an MCP tool declared (it is then the approver's to answer).
/// Where hands is stricter than the SDK: a `compaction` item stops the run unless the run asked
/// for compaction (then, as the SDK, it needs its `encrypted_content`, and is kept and replayed
/// unchanged).
///
/// A `function_call` of a function the request did not declare stops the run before any effect,
/// as the SDK's (`Response calls an undeclared function`): the response is not an answer to the
/// request that was sent.
pub(crate) fn check_item(item: &Item, declared: &Declared) -> Result<ItemKind, StopReason> {
    match item.view() {
        ItemView::FunctionCall(call) if !declared.functions.contains(&call.name) => {
            Err(StopReason::undeclared_function(&call.name))
        }
        ItemView::FunctionCall(call)
            if declared
                .selection
                .as_ref()
                .is_some_and(|s| !s.functions.contains(&call.name)) =>
        {
            Err(StopReason::excluded_by_tool_choice(&call.name))
        }
        ItemView::ComputerCall(_)
            if declared.computer && declared.selection.as_ref().is_some_and(|s| !s.computer) =>
        {
            Err(StopReason::excluded_by_tool_choice("computer"))
        }
        ItemView::FunctionCall(call) => match call.status.as_deref() {
            None | Some(COMPLETED) => Ok(ItemKind::Call),
            other => Err(StopReason::item_not_completed(
                item.item_type(),
                &call.call_id,
                other,
            )),
        },
        ItemView::ComputerCall(call) => {
            if !declared.computer {
                return Err(StopReason::undeclared_item(item.item_type()));
            }
            match call.status.as_deref() {
                Some(COMPLETED) => Ok(ItemKind::Call),
                other => Err(StopReason::item_not_completed(
                    item.item_type(),
                    &call.call_id,
                    other,
                )),
            }
        }
        // An assistant message still being written makes the whole answer unfinished (the
        // SDK: "Response message did not complete").
        ItemView::Message(message) if message.role == "assistant" => {
            if message.status.as_deref() != Some(COMPLETED) {
                return Err(StopReason::item_not_completed(
                    item.item_type(),
                    message.id.as_deref().unwrap_or(""),
                    message.status.as_deref(),
                ));
            }
            let commentary =
                item.to_value().get("phase").and_then(Value::as_str) == Some(COMMENTARY);
            Ok(if commentary {
                ItemKind::Passive
            } else {
                ItemKind::FinalMessage
            })
        }
        ItemView::Message(_) => Ok(ItemKind::Passive),
        ItemView::Reasoning(_) => Ok(ItemKind::Passive),
        _ => {
            let item_type = item.item_type();
            if item_type == COMPACTION && declared.compaction {
                let sealed = item
                    .to_value()
                    .get("encrypted_content")
                    .is_some_and(Value::is_string);
                return if sealed {
                    Ok(ItemKind::Passive)
                } else {
                    Err(StopReason::InvalidResponse(
                        "a compaction item without its encrypted_content cannot be replayed".into(),
                    ))
                };
            }
            if item_type == MCP_APPROVAL_REQUEST && declared.declares_server_item(item_type) {
                return Ok(ItemKind::ApprovalRequest);
            }
            if declared.declares_server_item(item_type) {
                return Ok(ItemKind::ServerItem);
            }
            Err(StopReason::undeclared_item(item_type))
        }
    }
}

/// The `call_id` of a call item.
pub(crate) fn call_id(item: &Item) -> Option<&str> {
    match item.view() {
        ItemView::FunctionCall(call) => Some(&call.call_id),
        ItemView::ComputerCall(call) => Some(&call.call_id),
        _ => None,
    }
}

/// The id a run answers an item by: a call's `call_id`, an `mcp_approval_request`'s `id`.
pub(crate) fn answer_id(item: &Item) -> Option<String> {
    match call_id(item) {
        Some(id) => Some(id.to_owned()),
        None if item.item_type() == MCP_APPROVAL_REQUEST => match item.view() {
            ItemView::Other(value) => value.get("id").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        },
        None => None,
    }
}

/// Records the id an item is answered by in `seen`, refusing one already there: two calls (or
/// approval requests) with one id could not be answered apart (the SDK: "Tool call ID is
/// missing or duplicate", "MCP approval request ID is missing or duplicate").
pub(crate) fn note_call_id(item: &Item, seen: &mut HashSet<String>) -> Result<(), StopReason> {
    match answer_id(item) {
        Some(id) if id.is_empty() || !seen.insert(id.clone()) => {
            Err(StopReason::duplicate_call_id(&id))
        }
        None if item.item_type() == MCP_APPROVAL_REQUEST => Err(StopReason::duplicate_call_id("")),
        _ => Ok(()),
    }
}

/// Checks a whole response before anything of it runs: `status` must be `completed`, every item
/// must pass [`check_item`], no `call_id` may repeat one of the response or of `earlier` calls,
/// and there must be a final message, a call or a server tool's item.
pub(crate) fn check_response(
    response: &Response,
    declared: &Declared,
    earlier: &HashSet<String>,
) -> Result<Vec<ItemKind>, StopReason> {
    if response.status != Some(ResponseStatus::Completed) {
        return Err(StopReason::ModelStopped(api_stop(response)));
    }
    let mut seen = earlier.clone();
    let kinds = response
        .output
        .iter()
        .map(|item| {
            let kind = check_item(item, declared)?;
            note_call_id(item, &mut seen)?;
            Ok(kind)
        })
        .collect::<Result<Vec<_>, StopReason>>()?;
    if !kinds.iter().any(|k| *k != ItemKind::Passive) {
        return Err(StopReason::EmptyResponse);
    }
    Ok(kinds)
}

/// How the Responses API said the answer ended.
pub(crate) fn api_stop(response: &Response) -> ApiStop {
    ApiStop::responses(
        response.status.as_ref().map(ResponseStatus::as_str),
        response
            .incomplete_details
            .as_ref()
            .and_then(|d| d.reason.as_deref()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(value: Value) -> Item {
        Item::from_value(&value).unwrap_or_else(|e| panic!("{value}: {e}"))
    }

    fn check(value: Value, declared: &Declared) -> Result<ItemKind, StopReason> {
        check_item(&item(value), declared)
    }

    #[test]
    fn items() {
        let computer = Declared::new(true, &[json!({"type": "computer"})]);
        let mcp = Declared::new(false, &[json!({"type": "mcp", "server_label": "x"})]);
        let none = Declared::default();
        let f = Declared::new(false, &[json!({"type": "function", "name": "f"})]);
        let function = |status: Value| {
            json!({"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}",
                "status": status})
        };
        let computer_call = |status: Value| {
            json!({"type": "computer_call", "call_id": "call_2", "status": status,
                "actions": [{"type": "screenshot"}], "pending_safety_checks": []})
        };
        let message = |status: &str, phase: Option<&str>| {
            let mut m = json!({"type": "message", "role": "assistant", "status": status,
                "content": [{"type": "output_text", "text": "hi", "annotations": []}]});
            if let Some(phase) = phase {
                m["phase"] = json!(phase);
            }
            m
        };
        let not_completed = |ty: &str, id: &str, status: &str| {
            Err(StopReason::ItemNotCompleted {
                item_type: ty.into(),
                id: id.into(),
                status: status.into(),
            })
        };
        let cases: Vec<(Value, &Declared, Result<ItemKind, StopReason>)> = vec![
            (function(json!("completed")), &f, Ok(ItemKind::Call)),
            (function(Value::Null), &f, Ok(ItemKind::Call)),
            (
                function(json!("completed")),
                &none,
                Err(StopReason::undeclared_function("f")),
            ),
            (
                function(json!("incomplete")),
                &f,
                not_completed("function_call", "call_1", "incomplete"),
            ),
            (
                function(json!("in_progress")),
                &f,
                not_completed("function_call", "call_1", "in_progress"),
            ),
            (
                computer_call(json!("completed")),
                &computer,
                Ok(ItemKind::Call),
            ),
            (
                computer_call(json!("incomplete")),
                &computer,
                not_completed("computer_call", "call_2", "incomplete"),
            ),
            (
                computer_call(Value::Null),
                &computer,
                not_completed("computer_call", "call_2", ""),
            ),
            (
                computer_call(json!("completed")),
                &none,
                Err(StopReason::undeclared_item("computer_call")),
            ),
            (
                message("completed", None),
                &none,
                Ok(ItemKind::FinalMessage),
            ),
            (
                message("completed", Some("commentary")),
                &none,
                Ok(ItemKind::Passive),
            ),
            (
                message("incomplete", None),
                &none,
                not_completed("message", "", "incomplete"),
            ),
            (
                json!({"type": "reasoning", "id": "rs_1", "summary": []}),
                &none,
                Ok(ItemKind::Passive),
            ),
            (
                json!({"type": "mcp_approval_request", "id": "mcpr_1", "server_label": "x",
                    "name": "delete", "arguments": "{}"}),
                &none,
                Err(StopReason::undeclared_item("mcp_approval_request")),
            ),
            (
                json!({"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "x", "tools": []}),
                &mcp,
                Ok(ItemKind::ServerItem),
            ),
            (
                json!({"type": "web_search_call", "id": "ws_1", "status": "completed"}),
                &none,
                Err(StopReason::undeclared_item("web_search_call")),
            ),
            (
                json!({"type": "frobnicate_call\u{202e}\n", "id": "x"}),
                &none,
                Err(StopReason::undeclared_item("frobnicate_call")),
            ),
        ];
        for (value, declared, want) in cases {
            assert_eq!(check(value.clone(), declared), want, "{value}");
        }
        let approval = check(
            json!({"type": "mcp_approval_request", "id": "mcpr_1", "server_label": "x",
                "name": "delete", "arguments": "{}"}),
            &mcp,
        );
        assert_eq!(approval, Ok(ItemKind::ApprovalRequest));
    }

    #[test]
    fn an_undeclared_type_is_named_bounded() {
        let long = "x".repeat(500);
        let err = check(json!({"type": long}), &Declared::default()).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains(&"x".repeat(64)) && !text.contains(&"x".repeat(65)),
            "{text}"
        );
    }

    fn response(value: Value) -> Response {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn responses() {
        let none = Declared::default();
        let message = json!({"type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "hi", "annotations": []}]});
        let incomplete = response(json!({"id": "resp_1", "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"}, "output": [message]}));
        assert_eq!(
            check_response(&incomplete, &none, &HashSet::new()),
            Err(StopReason::ModelStopped(ApiStop::Responses {
                status: "incomplete".into(),
                reason: Some("max_output_tokens".into())
            }))
        );
        let empty = response(json!({"id": "resp_2", "status": "completed",
            "output": [{"type": "reasoning", "id": "rs_1", "summary": []}]}));
        assert_eq!(
            check_response(&empty, &none, &HashSet::new()),
            Err(StopReason::EmptyResponse)
        );
        let done = response(json!({"id": "resp_3", "status": "completed", "output": [message]}));
        assert_eq!(
            check_response(&done, &none, &HashSet::new()),
            Ok(vec![ItemKind::FinalMessage])
        );
        let call = |id: &str| {
            json!({"type": "function_call", "call_id": id, "name": "f", "arguments": "{}",
                "status": "completed"})
        };
        let f = Declared::new(false, &[json!({"type": "function", "name": "f"})]);
        let twice = response(json!({"id": "resp_4", "status": "completed",
            "output": [call("call_1"), call("call_1")]}));
        assert_eq!(
            check_response(&twice, &f, &HashSet::new()),
            Err(StopReason::duplicate_call_id("call_1"))
        );
        let again = response(json!({"id": "resp_5", "status": "completed",
            "output": [call("call_1")]}));
        let earlier = HashSet::from(["call_1".to_owned()]);
        assert_eq!(
            check_response(&again, &f, &earlier),
            Err(StopReason::duplicate_call_id("call_1"))
        );
    }
}
