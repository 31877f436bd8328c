//! The Responses API's remote MCP tool, played for real: each declared server is listed once
//! per conversation (`mcp_list_tools`, filtered by `allowed_tools`); an approved
//! `mcp_approval_request` is executed at the start of the next response (`mcp_call` with its
//! `approval_request_id`); a model's call ([`crate::policy::mcp_use`]) becomes an
//! `mcp_approval_request` when `require_approval` wants one, else an `mcp_call` made now.
//!
//! Spec: openai-browser-desktop-drivers, "Combinar acciones del navegador con otras
//! herramientas"; openai 3.51 `McpListTools`, `McpApprovalRequest`, `McpCall`,
//! `McpToolCallError`.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::error::ApiError;
use crate::mcp::{self, Intent, Work};
use crate::messages as m;
use crate::remote_mcp::{CallOutcome, ListedTool, openai_listing};

use super::validate::{Checked, McpServer};

/// What one request asks of the declared MCP servers.
#[derive(Debug)]
pub(crate) struct Plan {
    servers: Vec<McpServer>,
    /// Listings already in the conversation, by label.
    listed: HashMap<String, Vec<ListedTool>>,
    /// Approved requests not yet executed: (request id, label, tool, arguments text).
    approved: Vec<(String, String, String, String)>,
    intents: Vec<Intent>,
}

pub(crate) use crate::mcp::Failure;

/// What the servers' answers add to the output: listings and executed approvals first, then
/// the turn with each intent replaced.
#[derive(Debug, Default)]
pub(crate) struct Expansion {
    pub(crate) head: Vec<Value>,
    pub(crate) replaced: Vec<(usize, Value)>,
}

impl Expansion {
    /// The turn's items with the expansion applied.
    pub(crate) fn apply(self, items: Vec<Value>) -> Vec<Value> {
        let mut replaced: HashMap<usize, Value> = self.replaced.into_iter().collect();
        let mut out = self.head;
        for (index, item) in items.into_iter().enumerate() {
            out.push(replaced.remove(&index).unwrap_or(item));
        }
        out
    }
}

fn listed_tools(item: &Value) -> Vec<ListedTool> {
    item.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            Some(ListedTool {
                name: t.get("name")?.as_str()?.to_owned(),
                description: t
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                input_schema: t.get("input_schema").cloned().unwrap_or(Value::Null),
                annotations: t.get("annotations").cloned().filter(|a| !a.is_null()),
            })
        })
        .collect()
}

/// Reads what the request and the turn ask of the MCP servers.
pub(crate) fn plan(checked: &Checked, items: &[Value]) -> Result<Plan, String> {
    let conversation = &checked.conversation;
    let kind = |item: &Value| item.get("type").and_then(Value::as_str).map(str::to_owned);
    let text = |item: &Value, key: &str| {
        item.get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let mut listed = HashMap::new();
    for item in conversation {
        if kind(item).as_deref() == Some("mcp_list_tools") {
            listed.insert(text(item, "server_label"), listed_tools(item));
        }
    }
    let mut approved = Vec::new();
    for item in conversation {
        if kind(item).as_deref() != Some("mcp_approval_response")
            || item.get("approve").and_then(Value::as_bool) != Some(true)
        {
            continue;
        }
        let request_id = text(item, "approval_request_id");
        let executed = conversation.iter().any(|c| {
            kind(c).as_deref() == Some("mcp_call")
                && c.get("approval_request_id").and_then(Value::as_str) == Some(&request_id)
        });
        if executed {
            continue;
        }
        if let Some(request) = conversation.iter().find(|c| {
            kind(c).as_deref() == Some("mcp_approval_request")
                && c.get("id").and_then(Value::as_str) == Some(&request_id)
        }) {
            approved.push((
                request_id,
                text(request, "server_label"),
                text(request, "name"),
                text(request, "arguments"),
            ));
        }
    }
    let intents = mcp::intents(items)?;
    for intent in &intents {
        if checked.declared.mcp_server(&intent.server).is_none() {
            return Err(format!(
                "hands-sim: the policy used MCP server `{}`, which the request does not declare",
                intent.server
            ));
        }
    }
    Ok(Plan {
        servers: checked.declared.mcp.clone(),
        listed,
        approved,
        intents,
    })
}

impl Plan {
    /// Whether the request needs no MCP server at all.
    pub(crate) fn is_idle(&self) -> bool {
        self.approved.is_empty()
            && self.intents.is_empty()
            && self
                .servers
                .iter()
                .all(|s| self.listed.contains_key(&s.label))
    }

    /// Lists, executes the approved requests and the turn's calls, and builds the items.
    pub(crate) async fn run(self) -> Result<Expansion, Failure> {
        let mut expansion = Expansion::default();
        let mut known = self.listed.clone();
        let server = |label: &str| self.servers.iter().find(|s| s.label == label);
        // 1. Servers without a listing in the conversation are listed.
        let mut work = Work::default();
        for s in &self.servers {
            if known.contains_key(&s.label) {
                continue;
            }
            match &s.endpoint {
                Some(endpoint) => work.listings.push((s.label.clone(), endpoint.clone())),
                None => {
                    return Err(Failure::Api(unreachable(
                        &s.label,
                        "connectors and tunnels are not reachable from the simulator",
                    )));
                }
            }
        }
        let listed = work.perform().await;
        for (label, result) in listed.listings {
            let tools = result.map_err(|why| Failure::Api(unreachable(&label, &why)))?;
            let allowed_tools = server(&label).and_then(|s| s.allowed_tools.as_ref());
            let tools: Vec<ListedTool> = tools
                .into_iter()
                .filter(|t| mcp::allowed(allowed_tools, t))
                .collect();
            expansion
                .head
                .push(json!({"type": "mcp_list_tools", "server_label": label,
                "tools": tools.iter().map(openai_listing).collect::<Vec<_>>()}));
            known.insert(label, tools);
        }
        // 2. What needs a call now: approved requests, and calls the policy lets run unasked.
        let mut calls = Work::default();
        for (request_id, label, name, arguments) in &self.approved {
            let Some(endpoint) = server(label).and_then(|s| s.endpoint.clone()) else {
                return Err(Failure::Api(unreachable(label, "not reachable")));
            };
            let arguments: Map<String, Value> = serde_json::from_str(arguments).unwrap_or_default();
            calls.calls.push((
                format!("approved:{request_id}"),
                endpoint,
                name.clone(),
                arguments,
            ));
        }
        let mut asked = Vec::new();
        for intent in &self.intents {
            let Some(s) = server(&intent.server) else {
                return Err(Failure::Policy(format!(
                    "hands-sim: MCP server `{}` is not declared",
                    intent.server
                )));
            };
            let Some(tool) = known
                .get(&intent.server)
                .and_then(|tools| tools.iter().find(|t| t.name == intent.name))
            else {
                return Err(Failure::Policy(format!(
                    "hands-sim: the policy called MCP tool `{}`, which server `{}` does not list (or `allowed_tools` hides)",
                    intent.name, intent.server
                )));
            };
            if mcp::requires_approval(s.require_approval.as_ref(), tool) {
                asked.push(intent.index);
            } else if let Some(endpoint) = &s.endpoint {
                calls.calls.push((
                    format!("intent:{}", intent.index),
                    endpoint.clone(),
                    intent.name.clone(),
                    intent.arguments.clone(),
                ));
            }
        }
        let done = calls.perform().await;
        for (request_id, label, name, arguments) in &self.approved {
            let outcome = done.call(&format!("approved:{request_id}"));
            expansion
                .head
                .push(call_item(label, name, arguments, Some(request_id), outcome));
        }
        for intent in &self.intents {
            let arguments = Value::Object(intent.arguments.clone()).to_string();
            let item = if asked.contains(&intent.index) {
                json!({"type": "mcp_approval_request", "server_label": intent.server,
                    "name": intent.name, "arguments": arguments})
            } else {
                let outcome = done.call(&format!("intent:{}", intent.index));
                call_item(&intent.server, &intent.name, &arguments, None, outcome)
            };
            expansion.replaced.push((intent.index, item));
        }
        Ok(expansion)
    }
}

/// The 424 the API answers when a declared server cannot be listed.
fn unreachable(label: &str, why: &str) -> ApiError {
    ApiError::new(
        424,
        "external_connector_error",
        m::mcp_list_failed(label, why),
    )
    .code("http_error")
}

/// An `mcp_call` item for a call's outcome.
fn call_item(
    label: &str,
    name: &str,
    arguments: &str,
    approval_request_id: Option<&String>,
    outcome: Option<&Result<CallOutcome, String>>,
) -> Value {
    let (output, error, status) = match outcome {
        Some(Ok(done)) if !done.is_error => (json!(done.text), Value::Null, "completed"),
        Some(Ok(done)) => (
            Value::Null,
            json!({"type": "mcp_tool_execution_error", "content": done.content}),
            "failed",
        ),
        Some(Err(why)) => (
            Value::Null,
            json!({"type": "mcp_protocol_error", "code": -32603, "message": why}),
            "failed",
        ),
        None => (
            Value::Null,
            json!({"type": "mcp_protocol_error", "code": -32603, "message": "not called"}),
            "failed",
        ),
    };
    json!({"type": "mcp_call", "server_label": label, "name": name, "arguments": arguments,
        "approval_request_id": approval_request_id, "output": output, "error": error,
        "status": status})
}
