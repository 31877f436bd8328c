//! Remote MCP servers and server tools as a run declares them: typed declarations for both APIs
//! (the Responses `mcp` tool; the Messages MCP connector's `mcp_servers` entry and its
//! `mcp_toolset`), the server tools (web search, file search, code interpreter, image
//! generation), and the approval rule of an `mcp` tool read as the API applies it.
//!
//! The model's provider connects to a remote MCP server and runs its tools: hands never talks to
//! it. What hands owns is the boundary: which servers and tools are declared, which calls a
//! person approves (an `mcp_approval_request` is answered only by the run's
//! [`crate::approval::Approver`], bound to that request's id and server label), and that no
//! answer is acted on when a server's result failed.
//!
//! Spec: openai-browser-desktop-drivers, "Combinar acciones del navegador con otras
//! herramientas", "Transmitir y reanudar una ejecución"; api-contracts A ("MCP connector");
//! openai 3.51 `tool_param.Mcp`; anthropic 2.10 `BetaMCPToolsetParam`,
//! `BetaRequestMCPServerURLDefinitionParam`.

use serde_json::{Map, Value, json};

/// The beta header of Claude's MCP connector.
pub const MCP_CLIENT_BETA: &str = "mcp-client-2025-11-20";
/// The `type` of a Responses API remote MCP tool.
pub const MCP_TOOL_TYPE: &str = "mcp";
/// The `type` of a Messages API MCP toolset entry.
pub const MCP_TOOLSET_TYPE: &str = "mcp_toolset";
/// The Responses item asking a person to approve an MCP call.
pub const MCP_APPROVAL_REQUEST: &str = "mcp_approval_request";
/// The Responses item answering it.
pub const MCP_APPROVAL_RESPONSE: &str = "mcp_approval_response";
/// The Responses item of an MCP call the API made.
pub const MCP_CALL: &str = "mcp_call";
/// The Responses item listing a server's tools.
pub const MCP_LIST_TOOLS: &str = "mcp_list_tools";

/// Whether a person approves an MCP tool's calls first (OpenAI `require_approval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Every call waits for an `mcp_approval_request` to be approved.
    Always,
    /// Calls run without asking.
    Never,
}

/// A tool filter of `require_approval` (`{"tool_names": [...], "read_only": bool}`). An empty
/// filter covers every tool.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolFilter {
    /// `tool_names`, when given.
    pub tool_names: Option<Vec<String>>,
    /// `read_only`, when given: the server's `readOnlyHint`, which only the API sees.
    pub read_only: Option<bool>,
}

impl ToolFilter {
    fn parse(value: &Value) -> Option<ToolFilter> {
        let filter = value.as_object()?;
        if filter.keys().any(|k| k != "tool_names" && k != "read_only") {
            return None;
        }
        let tool_names = match filter.get("tool_names") {
            None => None,
            Some(Value::Array(names)) => Some(
                names
                    .iter()
                    .map(|n| n.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()?,
            ),
            Some(_) => return None,
        };
        let read_only = match filter.get("read_only") {
            None => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => return None,
        };
        Some(ToolFilter {
            tool_names,
            read_only,
        })
    }

    /// Whether it matches `tool`: `Some` when the runner can tell (a `read_only` filter depends
    /// on annotations only the API sees, so it cannot).
    fn matches(&self, tool: &str) -> Option<bool> {
        if self.read_only.is_some() {
            return None;
        }
        Some(
            self.tool_names
                .as_ref()
                .is_none_or(|names| names.iter().any(|n| n == tool)),
        )
    }

    fn to_value(&self) -> Value {
        let mut filter = Map::new();
        if let Some(names) = &self.tool_names {
            filter.insert("tool_names".into(), json!(names));
        }
        if let Some(read_only) = self.read_only {
            filter.insert("read_only".into(), json!(read_only));
        }
        Value::Object(filter)
    }
}

/// An `mcp` tool's `require_approval`, as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalRule {
    /// `"always"` (also what an absent field means).
    Always,
    /// `"never"`.
    Never,
    /// The object form: tools matched by `always` are asked, by `never` are not.
    Filters {
        /// `always`.
        always: Option<ToolFilter>,
        /// `never`.
        never: Option<ToolFilter>,
    },
    /// A value this runner cannot read (the API would refuse it).
    Unknown,
}

impl ApprovalRule {
    /// Reads `require_approval` (absent or null: [`ApprovalRule::Always`]).
    pub fn parse(value: Option<&Value>) -> ApprovalRule {
        match value {
            None | Some(Value::Null) => ApprovalRule::Always,
            Some(Value::String(mode)) if mode == "always" => ApprovalRule::Always,
            Some(Value::String(mode)) if mode == "never" => ApprovalRule::Never,
            Some(Value::Object(filters)) => {
                if filters.keys().any(|k| k != "always" && k != "never") {
                    return ApprovalRule::Unknown;
                }
                let read = |key: &str| match filters.get(key) {
                    None => Some(None),
                    Some(filter) => ToolFilter::parse(filter).map(Some),
                };
                match (read("always"), read("never")) {
                    (Some(always), Some(never)) => ApprovalRule::Filters { always, never },
                    _ => ApprovalRule::Unknown,
                }
            }
            Some(_) => ApprovalRule::Unknown,
        }
    }

    /// The declaration's value.
    pub fn to_value(&self) -> Value {
        match self {
            ApprovalRule::Always | ApprovalRule::Unknown => json!("always"),
            ApprovalRule::Never => json!("never"),
            ApprovalRule::Filters { always, never } => {
                let mut filters = Map::new();
                if let Some(always) = always {
                    filters.insert("always".into(), always.to_value());
                }
                if let Some(never) = never {
                    filters.insert("never".into(), never.to_value());
                }
                Value::Object(filters)
            }
        }
    }

    /// The mode for `tool`, or `None` when the runner cannot tell (a `read_only` filter, two
    /// filters that both match, a value it cannot read). An empty filter covers every tool; a
    /// tool matched by neither filter takes the opposite of the one given alone (only `never`
    /// listed: the others are asked), as the openai SDK reads it.
    ///
    /// Spec: openai-browser-desktop-drivers, "Para las aprobaciones de MCP, un filtro vacío always:
    /// {} o never: {} se aplica a todas las herramientas."
    pub fn mode(&self, tool: &str) -> Option<ApprovalMode> {
        match self {
            ApprovalRule::Always => Some(ApprovalMode::Always),
            ApprovalRule::Never => Some(ApprovalMode::Never),
            ApprovalRule::Unknown => None,
            ApprovalRule::Filters { always, never } => {
                let in_always = match always {
                    Some(filter) => filter.matches(tool)?,
                    None => false,
                };
                let in_never = match never {
                    Some(filter) => filter.matches(tool)?,
                    None => false,
                };
                match (in_always, in_never) {
                    (true, true) => None,
                    (true, false) => Some(ApprovalMode::Always),
                    (false, true) => Some(ApprovalMode::Never),
                    (false, false) => match (always.is_some(), never.is_some()) {
                        (true, false) => Some(ApprovalMode::Never),
                        (false, true) => Some(ApprovalMode::Always),
                        _ => None,
                    },
                }
            }
        }
    }

    /// Whether some call could need a person (every rule but `never`).
    pub fn may_ask(&self) -> bool {
        *self != ApprovalRule::Never
    }
}

/// A remote MCP server a run declares.
#[derive(Clone, PartialEq, Eq)]
pub struct McpServer {
    /// OpenAI `server_label`; Claude's server `name`. Non-empty and unique in a run.
    pub label: String,
    /// The server's URL (streamable HTTP or SSE, as the API connects).
    pub url: String,
    /// A bearer token for the server (OpenAI `authorization`, Claude `authorization_token`).
    /// Never saved in a checkpoint, never shown.
    pub authorization: Option<String>,
    /// Custom headers (OpenAI only). Never saved in a checkpoint.
    pub headers: Vec<(String, String)>,
    /// OpenAI `require_approval`. Claude's connector has no approvals.
    pub require_approval: ApprovalRule,
    /// The tools the model may use (all when `None`): OpenAI `allowed_tools`; on Claude the
    /// toolset enables only these.
    pub allowed_tools: Option<Vec<String>>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("label", &self.label)
            .field("url", &shown_url(&self.url))
            .field("authorization", &self.authorization.as_ref().map(|_| "***"))
            .field("headers", &self.headers.len())
            .field("require_approval", &self.require_approval)
            .field("allowed_tools", &self.allowed_tools)
            .finish()
    }
}

impl McpServer {
    /// A server every call of which a person approves (`require_approval: "always"`).
    pub fn new(label: impl Into<String>, url: impl Into<String>) -> McpServer {
        McpServer {
            label: label.into(),
            url: url.into(),
            authorization: None,
            headers: Vec::new(),
            require_approval: ApprovalRule::Always,
            allowed_tools: None,
        }
    }

    /// The Responses API `tools` entry.
    pub fn openai_tool(&self) -> Value {
        let mut tool = json!({"type": MCP_TOOL_TYPE, "server_label": self.label,
            "server_url": self.url, "require_approval": self.require_approval.to_value()});
        if let Some(token) = &self.authorization {
            tool["authorization"] = json!(token);
        }
        if !self.headers.is_empty() {
            let headers: Map<String, Value> = self
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            tool["headers"] = Value::Object(headers);
        }
        if let Some(allowed) = &self.allowed_tools {
            tool["allowed_tools"] = json!(allowed);
        }
        tool
    }

    /// The Messages API `mcp_servers` entry.
    pub fn claude_server(&self) -> Value {
        let mut server = json!({"type": "url", "url": self.url, "name": self.label});
        if let Some(token) = &self.authorization {
            server["authorization_token"] = json!(token);
        }
        server
    }

    /// The Messages API `mcp_toolset` entry of `tools` for this server: every tool, or only
    /// [`McpServer::allowed_tools`].
    pub fn claude_toolset(&self) -> Value {
        let mut toolset = json!({"type": MCP_TOOLSET_TYPE, "mcp_server_name": self.label});
        if let Some(allowed) = &self.allowed_tools {
            toolset["default_config"] = json!({"enabled": false});
            let configs: Map<String, Value> = allowed
                .iter()
                .map(|name| (name.clone(), json!({"enabled": true})))
                .collect();
            toolset["configs"] = Value::Object(configs);
        }
        toolset
    }
}

/// A URL as a person may see it: scheme, host, port and path, without credentials, query or
/// fragment (a token can hide in any of them).
pub fn shown_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    if scheme.is_empty() {
        rest.to_owned()
    } else {
        format!("{scheme}://{rest}")
    }
}

/// What replaces a credential in a copy of a request or response kept for people to read.
pub const REDACTED: &str = "[redacted]";

/// Removes credentials from a request or response body before it is journaled: an `mcp` tool's
/// `authorization` and custom `headers` values, an `mcp_servers` entry's
/// `authorization_token`, a code interpreter's domain secret values; a server URL is kept as
/// [`shown_url`] shows it (no userinfo, query or fragment). The request itself is sent with
/// them.
pub fn redact_credentials(body: &mut Value) {
    if let Some(Value::Array(tools)) = body.get_mut("tools") {
        for tool in tools {
            let Some(tool) = tool.as_object_mut() else {
                continue;
            };
            match tool.get("type").and_then(Value::as_str) {
                Some(MCP_TOOL_TYPE) => {
                    if let Some(Value::String(url)) = tool.get_mut("server_url") {
                        *url = shown_url(url);
                    }
                    if tool.contains_key("authorization") {
                        tool.insert("authorization".into(), json!(REDACTED));
                    }
                    if let Some(Value::Object(headers)) = tool.get_mut("headers") {
                        for value in headers.values_mut() {
                            *value = json!(REDACTED);
                        }
                    }
                }
                Some("code_interpreter") => {
                    if let Some(Value::Array(secrets)) = tool
                        .get_mut("container")
                        .and_then(|c| c.get_mut("network_policy"))
                        .and_then(|p| p.get_mut("domain_secrets"))
                    {
                        for secret in secrets.iter_mut().filter_map(Value::as_object_mut) {
                            if secret.contains_key("value") {
                                secret.insert("value".into(), json!(REDACTED));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(Value::Array(servers)) = body.get_mut("mcp_servers") {
        for server in servers.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(Value::String(url)) = server.get_mut("url") {
                *url = shown_url(url);
            }
            if server.contains_key("authorization_token") {
                server.insert("authorization_token".into(), json!(REDACTED));
            }
        }
    }
}

/// A server tool the API runs itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerTool {
    /// Web search.
    WebSearch,
    /// File search over vector stores.
    FileSearch,
    /// Code interpreter (OpenAI) / code execution (Claude), in a container.
    CodeInterpreter,
    /// Image generation (OpenAI).
    ImageGeneration,
}

impl ServerTool {
    /// Every server tool.
    pub const ALL: [ServerTool; 4] = [
        ServerTool::WebSearch,
        ServerTool::FileSearch,
        ServerTool::CodeInterpreter,
        ServerTool::ImageGeneration,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ServerTool::WebSearch => "web_search",
            ServerTool::FileSearch => "file_search",
            ServerTool::CodeInterpreter => "code_interpreter",
            ServerTool::ImageGeneration => "image_generation",
        }
    }

    /// By name (`web_search`, `file_search`, `code_interpreter`, `image_generation`).
    pub fn from_name(name: &str) -> Option<ServerTool> {
        ServerTool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The Responses API `tools` entry; `vector_store_ids` for file search.
    pub fn openai_tool(self, vector_store_ids: &[String]) -> Value {
        match self {
            ServerTool::WebSearch => json!({"type": "web_search"}),
            ServerTool::FileSearch => {
                json!({"type": "file_search", "vector_store_ids": vector_store_ids})
            }
            ServerTool::CodeInterpreter => {
                json!({"type": "code_interpreter", "container": {"type": "auto"}})
            }
            ServerTool::ImageGeneration => json!({"type": "image_generation"}),
        }
    }

    /// The Messages API `tools` entry, when Claude has this server tool.
    pub fn claude_tool(self) -> Option<Value> {
        match self {
            ServerTool::WebSearch => {
                Some(json!({"type": "web_search_20250305", "name": "web_search"}))
            }
            ServerTool::CodeInterpreter => {
                Some(json!({"type": "code_execution_20250825", "name": "code_execution"}))
            }
            ServerTool::FileSearch | ServerTool::ImageGeneration => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_rules_as_the_sdk_reads_them() {
        use ApprovalMode::{Always, Never};
        let cases = [
            (None, Some(Always), Some(Always)),
            (Some(json!("never")), Some(Never), Some(Never)),
            (Some(json!({"always": {}})), Some(Always), Some(Always)),
            (Some(json!({"never": {}})), Some(Never), Some(Never)),
            (
                Some(json!({"never": {"tool_names": ["list"]}})),
                Some(Always),
                Some(Never),
            ),
            (
                Some(json!({"always": {"tool_names": ["add"]}})),
                Some(Always),
                Some(Never),
            ),
            (Some(json!({"never": {"read_only": true}})), None, None),
            (
                Some(json!({"always": {"tool_names": ["add"]}, "never": {}})),
                None,
                Some(Never),
            ),
            (Some(json!({"sometimes": {}})), None, None),
            (Some(json!(7)), None, None),
        ];
        for (value, add, list) in cases {
            let rule = ApprovalRule::parse(value.as_ref());
            assert_eq!(
                (rule.mode("add"), rule.mode("list")),
                (add, list),
                "{value:?}"
            );
        }
        assert!(!ApprovalRule::Never.may_ask());
        let rule = ApprovalRule::parse(Some(&json!({"never": {"tool_names": ["a"]}})));
        assert_eq!(rule.to_value(), json!({"never": {"tool_names": ["a"]}}));
    }

    #[test]
    fn declarations_for_both_apis() {
        let mut server = McpServer::new("notes", "https://u:p@mcp.example.com/mcp?key=s#f");
        server.authorization = Some("tok".into());
        server.allowed_tools = Some(vec!["add".into()]);
        let tool = server.openai_tool();
        assert_eq!(tool["authorization"], "tok");
        assert_eq!(tool["allowed_tools"], json!(["add"]));
        assert_eq!(server.claude_server()["authorization_token"], "tok");
        assert_eq!(
            server.claude_toolset(),
            json!({"type": "mcp_toolset", "mcp_server_name": "notes",
                "default_config": {"enabled": false}, "configs": {"add": {"enabled": true}}})
        );
        let mut body = json!({"tools": [server.openai_tool(),
            {"type": "code_interpreter", "container": {"type": "auto", "network_policy": {
                "type": "allowlist", "domain_secrets": [{"domain": "d", "name": "n", "value": "v"}]}}}],
            "mcp_servers": [server.claude_server()]});
        redact_credentials(&mut body);
        let text = body.to_string();
        assert!(
            !text.contains("\"tok\"")
                && !text.contains("\"v\"")
                && !text.contains("key=s")
                && !text.contains("u:p"),
            "{text}"
        );
        assert!(text.contains("\"name\":\"n\""));
        let debug = format!("{server:?}");
        assert!(!debug.contains("tok") && !debug.contains("key=s") && !debug.contains("u:p"));
        assert_eq!(shown_url(&server.url), "https://mcp.example.com/mcp");
    }
}
