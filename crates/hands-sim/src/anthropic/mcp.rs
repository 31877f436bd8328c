//! The Messages API's MCP connector and server tools, played for real: `mcp_servers` and their
//! `mcp_toolset` entries are checked as the API checks them (beta header
//! `mcp-client-2025-11-20`, each server referenced by exactly one toolset), every declared
//! server is listed for each request, and a model's call ([`crate::policy::mcp_use`]) is made
//! on the server and answered in the turn as an `mcp_tool_use` block and its `mcp_tool_result`.
//! Server tools' blocks (`server_tool_use`, `*_tool_result`) get their ids paired, and a
//! code-execution result a `container`.
//!
//! Replays are checked: a server tool's use comes back with its result in the same assistant
//! message (unless that message is a paused turn), an `mcp_tool_use` names a declared server,
//! `container` names a live container, and (hands' contract) every block the simulator emitted
//! comes back unchanged.
//!
//! Spec: api-contracts A, "MCP connector"; anthropic 2.10 `BetaMCPToolsetParam`,
//! `BetaRequestMCPServerURLDefinitionParam`, `BetaMCPToolUseBlock`, `BetaMCPToolResultBlock`,
//! `BetaServerToolUseBlock`, `BetaContainer`.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::error::ApiError;
use crate::mcp::{self, Intent, Work};
use crate::messages as m;
use crate::remote_mcp::{CallOutcome, Endpoint, ListedTool};

type Result<T> = std::result::Result<T, ApiError>;

/// The beta header of the MCP connector.
pub(crate) const MCP_CLIENT_BETA: &str = "mcp-client-2025-11-20";

/// The fields of an `mcp_toolset` entry.
const TOOLSET_FIELDS: [&str; 6] = [
    "type",
    "mcp_server_name",
    "default_config",
    "configs",
    "cache_control",
    "tools",
];

/// The fields of an `mcp_servers` entry.
const SERVER_FIELDS: [&str; 4] = ["type", "url", "name", "authorization_token"];

/// Block types whose use must be answered in the same message, and the prefix of their
/// results' types.
const SERVER_USES: [&str; 2] = ["mcp_tool_use", "server_tool_use"];

/// A declared `mcp_toolset`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Toolset {
    pub(crate) tool_idx: usize,
    pub(crate) server: String,
    default_enabled: bool,
    configs: HashMap<String, bool>,
}

impl Toolset {
    /// Whether the toolset enables `tool`.
    fn enables(&self, tool: &str) -> bool {
        self.configs
            .get(tool)
            .copied()
            .unwrap_or(self.default_enabled)
    }
}

/// A declared MCP server with its toolset.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Server {
    pub(crate) name: String,
    pub(crate) endpoint: Endpoint,
    pub(crate) toolset: Toolset,
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::invalid(message)
}

fn enabled_of(value: Option<&Value>, path: &str) -> Result<Option<bool>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(config)) => {
            for (key, value) in config {
                match key.as_str() {
                    "enabled" | "defer_loading" if value.is_boolean() => {}
                    "enabled" | "defer_loading" => {
                        return Err(invalid(format!(
                            "{path}.{key}: Input should be a valid boolean"
                        )));
                    }
                    other => return Err(invalid(m::extra_input(&format!("{path}.{other}")))),
                }
            }
            Ok(config.get("enabled").and_then(Value::as_bool))
        }
        Some(_) => Err(invalid(format!(
            "{path}: Input should be a valid dictionary"
        ))),
    }
}

/// One `mcp_toolset` entry of `tools`.
pub(crate) fn toolset_entry(
    tool_idx: usize,
    obj: &Map<String, Value>,
    betas: &[String],
) -> Result<Toolset> {
    if !betas.iter().any(|b| b == MCP_CLIENT_BETA) {
        return Err(invalid(m::unknown_tool_type(tool_idx, "mcp_toolset")));
    }
    let path = format!("tools.{tool_idx}.mcp_toolset");
    if let Some(key) = obj.keys().find(|k| !TOOLSET_FIELDS.contains(&k.as_str())) {
        return Err(invalid(m::extra_input(&format!("{path}.{key}"))));
    }
    let server = match obj.get("mcp_server_name") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        _ => {
            return Err(invalid(m::field_required(&format!(
                "{path}.mcp_server_name"
            ))));
        }
    };
    let default_enabled =
        enabled_of(obj.get("default_config"), &format!("{path}.default_config"))?.unwrap_or(true);
    let mut configs = HashMap::new();
    match obj.get("configs") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (tool, config) in map {
                if let Some(enabled) = enabled_of(Some(config), &format!("{path}.configs.{tool}"))?
                {
                    configs.insert(tool.clone(), enabled);
                }
            }
        }
        Some(_) => {
            return Err(invalid(format!(
                "{path}.configs: Input should be a valid dictionary"
            )));
        }
    }
    Ok(Toolset {
        tool_idx,
        server,
        default_enabled,
        configs,
    })
}

/// Whether `url` is an MCP server URL the simulator takes: `https://`, or `http://` on
/// loopback (where fixture servers listen; the real API cannot reach loopback at all).
fn url_ok(url: &str) -> bool {
    if url.starts_with("https://") {
        return true;
    }
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
    matches!(host, "127.0.0.1" | "localhost" | "[::1]")
}

/// `mcp_servers`, checked against the toolsets that refer to them.
pub(crate) fn servers(
    value: Option<&Value>,
    betas: &[String],
    toolsets: &[Toolset],
) -> Result<Vec<Server>> {
    let entries = match value {
        None | Some(Value::Null) => {
            if let Some(toolset) = toolsets.first() {
                return Err(invalid(m::mcp_toolset_unknown_server(
                    toolset.tool_idx,
                    &toolset.server,
                )));
            }
            return Ok(Vec::new());
        }
        Some(Value::Array(entries)) => entries,
        Some(_) => return Err(invalid("mcp_servers: Input should be a valid list")),
    };
    if !betas.iter().any(|b| b == MCP_CLIENT_BETA) {
        return Err(invalid(m::MCP_BETA_REQUIRED));
    }
    let mut servers: Vec<Server> = Vec::new();
    for (idx, entry) in entries.iter().enumerate() {
        let path = format!("mcp_servers.{idx}");
        let Some(obj) = entry.as_object() else {
            return Err(invalid(format!(
                "{path}: Input should be a valid dictionary"
            )));
        };
        if let Some(key) = obj.keys().find(|k| !SERVER_FIELDS.contains(&k.as_str())) {
            return Err(invalid(m::extra_input(&format!("{path}.{key}"))));
        }
        if obj.get("type").and_then(Value::as_str) != Some("url") {
            return Err(invalid(format!("{path}.type: Input should be 'url'")));
        }
        let text = |key: &str| obj.get(key).and_then(Value::as_str).map(str::to_owned);
        let (Some(url), Some(name)) = (text("url"), text("name")) else {
            return Err(invalid(m::field_required(&format!("{path}.url"))));
        };
        if !url_ok(&url) {
            return Err(invalid(m::mcp_server_url(idx)));
        }
        if name.is_empty() {
            return Err(invalid(m::field_required(&format!("{path}.name"))));
        }
        if servers.iter().any(|s| s.name == name) {
            return Err(invalid(m::mcp_server_duplicate(&name)));
        }
        let referring: Vec<&Toolset> = toolsets.iter().filter(|t| t.server == name).collect();
        let [toolset] = referring[..] else {
            return Err(invalid(m::mcp_server_toolsets(&name, referring.len())));
        };
        servers.push(Server {
            name,
            endpoint: Endpoint {
                url,
                bearer: text("authorization_token"),
                headers: Vec::new(),
            },
            toolset: toolset.clone(),
        });
    }
    if let Some(orphan) = toolsets
        .iter()
        .find(|t| !servers.iter().any(|s| s.name == t.server))
    {
        return Err(invalid(m::mcp_toolset_unknown_server(
            orphan.tool_idx,
            &orphan.server,
        )));
    }
    Ok(servers)
}

/// The result block type that answers a use.
fn answers(use_type: &str, result: &Value) -> bool {
    let result_type = result.get("type").and_then(Value::as_str).unwrap_or("");
    match use_type {
        "mcp_tool_use" => result_type == "mcp_tool_result",
        _ => result_type.ends_with("_tool_result") && result_type != "mcp_tool_result",
    }
}

/// Replayed server blocks: each use answered in its message (unless the message is a paused
/// turn sent back), each `mcp_tool_use` on a declared server, `container` live, and (with
/// `contract`) every emitted block unchanged.
pub(crate) fn check_replay(
    body: &Value,
    servers: &[Server],
    memory: &super::Memory,
    contract: bool,
) -> Result<()> {
    if let Some(container) = body.get("container") {
        let id = match container {
            Value::String(id) => Some(id.as_str()),
            Value::Object(c) => c.get("id").and_then(Value::as_str),
            _ => None,
        };
        if let Some(id) = id
            && !memory.containers.iter().any(|c| c == id)
        {
            return Err(invalid(m::container_not_found(id)));
        }
    }
    let empty = Vec::new();
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    for (msg_idx, message) in messages.iter().enumerate() {
        if message.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let Some(blocks) = message.get("content").and_then(Value::as_array) else {
            continue;
        };
        let paused = memory
            .paused
            .iter()
            .any(|p| Some(p) == message.get("content"));
        for (block_idx, block) in blocks.iter().enumerate() {
            let path = format!("messages.{msg_idx}.content.{block_idx}");
            let block_type = block.get("type").and_then(Value::as_str).unwrap_or("");
            if contract
                && let Some(key) = identity(block)
                && let Some(issued) = memory.issued.get(&key)
                && issued != block
            {
                return Err(invalid(m::server_item_changed(&path, &key)));
            }
            if block_type == "mcp_tool_use" {
                for field in ["id", "name", "server_name"] {
                    if !block.get(field).is_some_and(Value::is_string) {
                        return Err(invalid(m::field_required(&format!(
                            "{path}.mcp_tool_use.{field}"
                        ))));
                    }
                }
                let server = block
                    .get("server_name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if !servers.iter().any(|s| s.name == server) {
                    return Err(invalid(m::mcp_block_unknown_server(&path, server)));
                }
            }
        }
        if paused {
            continue;
        }
        for use_type in SERVER_USES {
            let missing: Vec<String> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some(use_type))
                .filter_map(|b| b.get("id").and_then(Value::as_str))
                .filter(|id| {
                    !blocks.iter().any(|r| {
                        answers(use_type, r)
                            && r.get("tool_use_id").and_then(Value::as_str) == Some(*id)
                    })
                })
                .map(str::to_owned)
                .collect();
            if !missing.is_empty() {
                return Err(invalid(m::server_use_without_result(
                    msg_idx, use_type, &missing,
                )));
            }
        }
    }
    Ok(())
}

/// The key an emitted server block is remembered by: a use's id, a result's `tool_use_id`
/// (prefixed, so the two differ).
pub(crate) fn identity(block: &Value) -> Option<String> {
    let block_type = block.get("type").and_then(Value::as_str)?;
    if SERVER_USES.contains(&block_type) {
        return block.get("id").and_then(Value::as_str).map(str::to_owned);
    }
    if block_type.ends_with("_tool_result") {
        return block
            .get("tool_use_id")
            .and_then(Value::as_str)
            .map(|id| format!("result:{id}"));
    }
    None
}

/// What one request asks of the declared servers.
#[derive(Debug)]
pub(crate) struct Plan {
    servers: Vec<Server>,
    intents: Vec<Intent>,
}

/// A turn's intents against the declared servers.
pub(crate) fn plan(servers: &[Server], blocks: &[Value]) -> std::result::Result<Plan, String> {
    let intents = mcp::intents(blocks)?;
    for intent in &intents {
        if !servers.iter().any(|s| s.name == intent.server) {
            return Err(format!(
                "hands-sim: the policy used MCP server `{}`, which the request does not declare in mcp_servers",
                intent.server
            ));
        }
    }
    Ok(Plan {
        servers: servers.to_vec(),
        intents,
    })
}

pub(crate) use crate::mcp::Failure;

impl Plan {
    /// Whether no server is declared.
    pub(crate) fn is_idle(&self) -> bool {
        self.servers.is_empty()
    }

    /// Lists every declared server (the API does, to give the model its tools), makes the
    /// turn's calls, and returns each intent's two blocks by position.
    pub(crate) async fn run(self) -> std::result::Result<Vec<(usize, [Value; 2])>, Failure> {
        let mut listing = Work::default();
        for server in &self.servers {
            listing
                .listings
                .push((server.name.clone(), server.endpoint.clone()));
        }
        let listed = listing.perform().await;
        let mut known: HashMap<String, Vec<ListedTool>> = HashMap::new();
        for (name, result) in listed.listings {
            let tools = result.map_err(|why| {
                Failure::Api(invalid(format!(
                    "mcp_servers: could not list the tools of MCP server '{name}': {why}"
                )))
            })?;
            known.insert(name, tools);
        }
        let mut calls = Work::default();
        for intent in &self.intents {
            let Some(server) = self.servers.iter().find(|s| s.name == intent.server) else {
                continue;
            };
            let listed = known
                .get(&intent.server)
                .is_some_and(|tools| tools.iter().any(|t| t.name == intent.name));
            if !listed || !server.toolset.enables(&intent.name) {
                return Err(Failure::Policy(format!(
                    "hands-sim: the policy called MCP tool `{}`, which server `{}` does not list or its mcp_toolset does not enable",
                    intent.name, intent.server
                )));
            }
            calls.calls.push((
                intent.index.to_string(),
                server.endpoint.clone(),
                intent.name.clone(),
                intent.arguments.clone(),
            ));
        }
        let done = calls.perform().await;
        let mut out = Vec::new();
        for intent in &self.intents {
            let outcome = done.call(&intent.index.to_string());
            out.push((intent.index, blocks(intent, outcome)));
        }
        Ok(out)
    }
}

/// The `mcp_tool_use` and `mcp_tool_result` of one call (ids filled later).
fn blocks(
    intent: &Intent,
    outcome: Option<&std::result::Result<CallOutcome, String>>,
) -> [Value; 2] {
    let (is_error, text) = match outcome {
        Some(Ok(done)) => (done.is_error, done.text.clone()),
        Some(Err(why)) => (true, format!("Error calling the MCP tool: {why}")),
        None => (true, "Error: the MCP tool was not called".to_owned()),
    };
    let text = if text.is_empty() {
        "(no output)".to_owned()
    } else {
        text
    };
    [
        json!({"type": "mcp_tool_use", "name": intent.name, "server_name": intent.server,
            "input": Value::Object(intent.arguments.clone())}),
        json!({"type": "mcp_tool_result", "is_error": is_error,
            "content": [{"type": "text", "text": text}]}),
    ]
}

/// Replaces each intent of `blocks` by its two blocks.
pub(crate) fn expand(blocks: Vec<Value>, done: Vec<(usize, [Value; 2])>) -> Vec<Value> {
    let mut by_index: HashMap<usize, [Value; 2]> = done.into_iter().collect();
    let mut out = Vec::with_capacity(blocks.len() + by_index.len());
    for (index, block) in blocks.into_iter().enumerate() {
        match by_index.remove(&index) {
            Some([tool_use, result]) => {
                out.push(tool_use);
                out.push(result);
            }
            None => out.push(block),
        }
    }
    out
}

/// Server block types that put a container in the answer.
pub(crate) const CONTAINER_RESULTS: [&str; 3] = [
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_http_only() {
        assert!(url_ok("https://mcp.example.com/sse"));
        assert!(url_ok("http://127.0.0.1:8931/mcp"));
        assert!(url_ok("http://localhost/mcp"));
        assert!(!url_ok("http://mcp.example.com/mcp"));
        assert!(!url_ok("http://127.0.0.1.evil.example/mcp"));
        assert!(!url_ok("ftp://127.0.0.1/mcp"));
    }
}
