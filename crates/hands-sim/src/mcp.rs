//! What both APIs do with a declared remote MCP server, beside the wire shapes: the model's
//! decision to use one of its tools (a turn's [`MCP_INTENT`] entry, see
//! [`crate::policy::mcp_use`]), which tools a declaration allows, which need a person's
//! approval first (OpenAI `require_approval`), and the work one request does on the servers.
//!
//! Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" ("un filtro vacío
//! always: {} o never: {} se aplica a todas las herramientas"); the `openai` SDK's
//! `_mcp_approval_policy`, which reads `require_approval` the way the API applies it.

use serde_json::{Map, Value};

use crate::error::{Api, ApiError};
use crate::remote_mcp::{self, CallOutcome, Endpoint, ListedTool};
use crate::server::Outcome;

/// Why the MCP part of a request failed (either API).
#[derive(Debug)]
pub(crate) enum Failure {
    /// The API's own error answer (a server that cannot be listed).
    Api(ApiError),
    /// The turn asked for something the request does not allow (a bug of the script).
    Policy(String),
}

impl Failure {
    /// The answer the API gives for it.
    pub(crate) fn outcome(self, api: Api, request_id: &str) -> Outcome {
        match self {
            Failure::Api(error) => Outcome::rejected(api, error, request_id),
            Failure::Policy(message) => Outcome::policy_failed(api, message, request_id),
        }
    }
}

/// The `type` of a turn entry saying "the model calls this MCP tool": the simulator replaces it
/// with what the API emits (a listing, an approval request, a call and its result).
pub const MCP_INTENT: &str = "hands_sim_mcp";

/// One intent of a turn.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Intent {
    /// Its position in the turn.
    pub(crate) index: usize,
    /// The server's label (OpenAI) or name (Anthropic).
    pub(crate) server: String,
    /// The tool.
    pub(crate) name: String,
    /// Its arguments (an object).
    pub(crate) arguments: Map<String, Value>,
}

/// The intents of a turn, in order; `Err` names a malformed one.
pub(crate) fn intents(entries: &[Value]) -> Result<Vec<Intent>, String> {
    let mut found = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        if entry.get("type").and_then(Value::as_str) != Some(MCP_INTENT) {
            continue;
        }
        let text = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_owned);
        let (Some(server), Some(name)) = (text("server"), text("name")) else {
            return Err(format!(
                "hands-sim: MCP intent {index} needs `server` and `name`"
            ));
        };
        let arguments = match entry.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(_) => {
                return Err(format!(
                    "hands-sim: MCP intent {index} has arguments that are not an object"
                ));
            }
        };
        found.push(Intent {
            index,
            server,
            name,
            arguments,
        });
    }
    Ok(found)
}

/// Whether a tool filter (`{"tool_names": [...], "read_only": bool}`) matches `tool`. An empty
/// filter matches every tool.
fn filter_matches(filter: &Value, tool: &ListedTool) -> bool {
    let Some(filter) = filter.as_object() else {
        return false;
    };
    let names = filter.get("tool_names").and_then(Value::as_array);
    let by_name = names.is_none_or(|names| names.iter().any(|n| n == tool.name.as_str()));
    let by_read_only = filter
        .get("read_only")
        .and_then(Value::as_bool)
        .is_none_or(|wanted| tool.read_only() == wanted);
    by_name && by_read_only
}

/// Whether OpenAI's `allowed_tools` lets the model see `tool`: absent allows all; a list of
/// names or a filter object.
pub(crate) fn allowed(allowed_tools: Option<&Value>, tool: &ListedTool) -> bool {
    match allowed_tools {
        None | Some(Value::Null) => true,
        Some(Value::Array(names)) => names.iter().any(|n| n == tool.name.as_str()),
        Some(filter @ Value::Object(_)) => filter_matches(filter, tool),
        Some(_) => false,
    }
}

/// Whether OpenAI's `require_approval` asks a person before `tool` runs. Absent means
/// `always`. In the object form a tool matched by `never` runs unasked, one matched by `always`
/// is asked; a tool matched by neither takes the opposite of the filter given alone (only
/// `never` listed: the others are asked; only `always`: the others are not), and is asked when
/// both are given. A tool matched by both is asked.
pub(crate) fn requires_approval(require_approval: Option<&Value>, tool: &ListedTool) -> bool {
    match require_approval {
        None | Some(Value::Null) => true,
        Some(Value::String(mode)) => mode != "never",
        Some(Value::Object(filters)) => {
            let always = filters.get("always");
            let never = filters.get("never");
            let in_always = always.is_some_and(|f| filter_matches(f, tool));
            let in_never = never.is_some_and(|f| filter_matches(f, tool));
            match (in_always, in_never) {
                (true, _) => true,
                (false, true) => false,
                (false, false) => !(always.is_some() && never.is_none()),
            }
        }
        Some(_) => true,
    }
}

/// What one request asks of the servers, decided under the lock and done without it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Work {
    /// Servers to list, by label/name.
    pub(crate) listings: Vec<(String, Endpoint)>,
    /// Calls to make now: (key of the caller's choosing, endpoint, tool, arguments).
    pub(crate) calls: Vec<(String, Endpoint, String, Map<String, Value>)>,
}

/// What the servers answered.
#[derive(Clone, Debug, Default)]
pub(crate) struct Done {
    /// Listings by server; `Err` when the server could not be listed.
    pub(crate) listings: Vec<(String, Result<Vec<ListedTool>, String>)>,
    /// Call outcomes by key; `Err` for a protocol or transport failure.
    pub(crate) calls: Vec<(String, Result<CallOutcome, String>)>,
}

impl Done {
    pub(crate) fn call(&self, key: &str) -> Option<&Result<CallOutcome, String>> {
        self.calls.iter().find(|(k, _)| k == key).map(|(_, c)| c)
    }
}

impl Work {
    /// Lists, then calls, in order: the remote servers see what the API would do.
    pub(crate) async fn perform(self) -> Done {
        let mut done = Done::default();
        for (server, endpoint) in self.listings {
            let listed = remote_mcp::list_tools(&endpoint).await;
            done.listings.push((server, listed));
        }
        for (key, endpoint, name, arguments) in self.calls {
            let outcome = remote_mcp::call_tool(&endpoint, &name, arguments).await;
            done.calls.push((key, outcome));
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, read_only: bool) -> ListedTool {
        ListedTool {
            name: name.into(),
            description: None,
            input_schema: json!({"type": "object"}),
            annotations: Some(json!({"readOnlyHint": read_only})),
        }
    }

    #[test]
    fn approval_policy_as_the_api_applies_it() {
        let add = tool("add_note", false);
        let list = tool("list_notes", true);
        let cases = [
            (None, true, true),
            (Some(json!("always")), true, true),
            (Some(json!("never")), false, false),
            // An empty filter covers every tool.
            (Some(json!({"never": {}})), false, false),
            (Some(json!({"always": {}})), true, true),
            (
                Some(json!({"never": {"tool_names": ["list_notes"]}})),
                true,
                false,
            ),
            (
                Some(json!({"always": {"tool_names": ["add_note"]}})),
                true,
                false,
            ),
            (Some(json!({"never": {"read_only": true}})), true, false),
            (
                Some(json!({"always": {"tool_names": ["add_note"]}, "never": {}})),
                true,
                false,
            ),
        ];
        for (policy, want_add, want_list) in cases {
            assert_eq!(
                (
                    requires_approval(policy.as_ref(), &add),
                    requires_approval(policy.as_ref(), &list)
                ),
                (want_add, want_list),
                "{policy:?}"
            );
        }
    }

    #[test]
    fn allowed_tools_forms() {
        let add = tool("add_note", false);
        assert!(allowed(None, &add));
        assert!(allowed(Some(&json!(["add_note"])), &add));
        assert!(!allowed(Some(&json!(["list_notes"])), &add));
        assert!(allowed(Some(&json!({"tool_names": ["add_note"]})), &add));
        assert!(!allowed(Some(&json!({"read_only": true})), &add));
    }

    #[test]
    fn intents_are_read_in_order() {
        let entries = vec![
            json!({"type": "message"}),
            crate::policy::mcp_use("notes", "add_note", json!({"text": "hi"})),
            json!({"type": MCP_INTENT, "server": "notes"}),
        ];
        assert!(intents(&entries).is_err());
        let found = intents(&entries[..2]).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(
            (
                found[0].index,
                found[0].server.as_str(),
                found[0].name.as_str()
            ),
            (1, "notes", "add_note")
        );
    }
}
