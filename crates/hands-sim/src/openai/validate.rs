//! The rules of `POST /v1/responses`: fields, tool declarations, stored state, replayed
//! reasoning, call/output pairing, screenshots and safety-check acknowledgements.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::config::OpenAiConfig;
use crate::error::ApiError;
use crate::images::{ImageFormat, ImageMemo};
use crate::messages as m;
use crate::remote_mcp::Endpoint;
use crate::sign::Signer;
use crate::tokens::{self, Prompt};

use super::Memory;

type Result<T> = std::result::Result<T, ApiError>;

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::invalid(message)
}

fn missing(param: &str) -> ApiError {
    invalid(m::missing_parameter(param))
        .param(param)
        .code("missing_required_parameter")
}

fn unknown(param: &str) -> ApiError {
    invalid(m::unknown_parameter(param))
        .param(param)
        .code("unknown_parameter")
}

/// A declared remote MCP server (`{"type": "mcp", ...}`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct McpServer {
    pub(crate) label: String,
    /// How the API reaches it; `None` for a connector or tunnel, which the simulator cannot
    /// reach.
    pub(crate) endpoint: Option<Endpoint>,
    pub(crate) require_approval: Option<Value>,
    pub(crate) allowed_tools: Option<Value>,
}

/// What the request declares the model may call.
#[derive(Clone, Debug, Default)]
pub(crate) struct Declared {
    pub(crate) computer: bool,
    pub(crate) functions: HashSet<String>,
    /// The `mcp` tools.
    pub(crate) mcp: Vec<McpServer>,
    /// The server tools' families: `web_search`, `file_search`, `code_interpreter`,
    /// `image_generation`.
    pub(crate) server_tools: HashSet<&'static str>,
    /// The `container` of each `code_interpreter` tool (an id, or `{"type": "auto", …}`).
    pub(crate) containers: Vec<Value>,
}

impl Declared {
    /// The declared MCP server with this label.
    pub(crate) fn mcp_server(&self, label: &str) -> Option<&McpServer> {
        self.mcp.iter().find(|s| s.label == label)
    }
}

/// The server tool families and the output item each emits.
pub(crate) const SERVER_TOOL_ITEMS: [(&str, &str); 4] = [
    ("web_search", "web_search_call"),
    ("file_search", "file_search_call"),
    ("code_interpreter", "code_interpreter_call"),
    ("image_generation", "image_generation_call"),
];

/// Output item types of server tools (MCP included): what the server emitted it keeps, so a
/// replay can be compared.
pub(crate) const SERVER_ITEM_TYPES: [&str; 7] = [
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_list_tools",
    "mcp_call",
    "mcp_approval_request",
];

/// The fields of an `mcp` tool (openai 3.51 `tool_param.Mcp`).
const MCP_TOOL_FIELDS: [&str; 12] = [
    "type",
    "server_label",
    "server_url",
    "connector_id",
    "tunnel_id",
    "authorization",
    "headers",
    "require_approval",
    "allowed_tools",
    "server_description",
    "defer_loading",
    "allowed_callers",
];

/// A request that passed every rule.
#[derive(Debug)]
pub(crate) struct Checked {
    pub(crate) model: String,
    pub(crate) stream: bool,
    pub(crate) store: bool,
    pub(crate) include_encrypted: bool,
    pub(crate) parallel: bool,
    pub(crate) previous_response_id: Option<String>,
    pub(crate) declared: Declared,
    /// The whole conversation: the stored chain, then this request's items, references
    /// resolved.
    pub(crate) conversation: Vec<Value>,
    pub(crate) prompt: Prompt,
    /// `context_management` compaction: the prompt size above which the response compacts.
    pub(crate) compact_threshold: Option<u64>,
}

/// The compaction threshold when `context_management` names none (modelled).
pub(crate) const DEFAULT_COMPACT_THRESHOLD: u64 = 200_000;
/// The domain of sealed compaction items.
pub(crate) const COMPACTION_DOMAIN: &str = "compaction";

/// Checks `context_management`: a list of `{type: "compaction", compact_threshold?}`.
/// Spec: api-contracts B, "State and request fields"; the SDK's `ContextManagement`.
fn context_management(value: Option<&Value>) -> Result<Option<u64>> {
    let entries = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(entries)) => entries,
        Some(_) => {
            return Err(
                invalid("Invalid type for 'context_management': expected an array.")
                    .param("context_management")
                    .code("invalid_type"),
            );
        }
    };
    let mut threshold = None;
    for (idx, entry) in entries.iter().enumerate() {
        let param = format!("context_management[{idx}]");
        let Some(obj) = entry.as_object() else {
            return Err(
                invalid(format!("Invalid type for '{param}': expected an object."))
                    .param(&param)
                    .code("invalid_type"),
            );
        };
        if let Some(key) = obj
            .keys()
            .find(|k| !["type", "compact_threshold"].contains(&k.as_str()))
        {
            return Err(unknown(&format!("{param}.{key}")));
        }
        match obj.get("type").and_then(Value::as_str) {
            Some("compaction") => {}
            Some(other) => {
                return Err(invalid(m::unknown_context_management(idx, other))
                    .param(format!("{param}.type"))
                    .code("invalid_value"));
            }
            None => return Err(missing(&format!("{param}.type"))),
        }
        threshold = Some(match obj.get("compact_threshold") {
            None | Some(Value::Null) => DEFAULT_COMPACT_THRESHOLD,
            Some(v) => match v.as_u64() {
                Some(n) if n >= 1 => n,
                _ => {
                    return Err(invalid(format!(
                        "Invalid '{param}.compact_threshold': expected a positive integer."
                    ))
                    .param(format!("{param}.compact_threshold"))
                    .code("invalid_value"));
                }
            },
        });
    }
    Ok(threshold)
}

/// What a replayed compaction item stands for: its id and the tokens of its summary.
fn opened_compaction(signer: &Signer, item: &Value) -> Option<(String, u64)> {
    let blob = item.get("encrypted_content")?.as_str()?;
    let payload: Value = serde_json::from_slice(&signer.open(COMPACTION_DOMAIN, blob)?).ok()?;
    let id = payload.get("id")?.as_str()?.to_owned();
    if item
        .get("id")
        .and_then(Value::as_str)
        .is_some_and(|given| given != id)
    {
        return None;
    }
    Some((id, payload.get("tokens")?.as_u64()?))
}

/// The top-level parameters of a Responses request (api-contracts B, "State and request
/// fields", plus the sampling and text-format fields of the SDK).
const REQUEST_FIELDS: [&str; 29] = [
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "previous_response_id",
    "conversation",
    "store",
    "include",
    "truncation",
    "reasoning",
    "max_output_tokens",
    "max_tool_calls",
    "stream",
    "stream_options",
    "prompt_cache_key",
    "prompt_cache_retention",
    "context_management",
    "safety_identifier",
    "background",
    "metadata",
    "parallel_tool_calls",
    "temperature",
    "top_p",
    "top_logprobs",
    "text",
    "user",
    "service_tier",
    "prompt",
];

const CALL_KINDS: [(&str, &str); 2] = [
    ("computer_call", "computer_call_output"),
    ("function_call", "function_call_output"),
];

pub(crate) fn validate(
    body: &Value,
    config: &OpenAiConfig,
    signer: &Signer,
    memory: &Memory,
    memo: &mut ImageMemo,
) -> Result<Checked> {
    let Some(obj) = body.as_object() else {
        return Err(invalid("The request body must be a JSON object."));
    };
    if let Some(key) = obj.keys().find(|k| !REQUEST_FIELDS.contains(&k.as_str())) {
        return Err(unknown(key));
    }
    let model = match obj.get("model") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err(missing("model")),
    };
    let previous_response_id = obj
        .get("previous_response_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if previous_response_id.is_some() && obj.get("conversation").is_some_and(|c| !c.is_null()) {
        return Err(invalid(m::PREVIOUS_AND_CONVERSATION)
            .param("previous_response_id")
            .code("mutually_exclusive_parameters"));
    }
    let mut conversation: Vec<Value> = match &previous_response_id {
        None => Vec::new(),
        Some(id) => match memory.responses.get(id) {
            Some(items) => items.clone(),
            None => {
                return Err(invalid(m::previous_response_not_found(id))
                    .param("previous_response_id")
                    .code("previous_response_not_found"));
            }
        },
    };
    let declared = tools(obj.get("tools"))?;
    let compact_threshold = context_management(obj.get("context_management"))?;
    match obj.get("truncation") {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) if t == "auto" || t == "disabled" => {}
        Some(other) => {
            return Err(invalid(m::invalid_value(
                &other.to_string(),
                "'auto' and 'disabled'",
            ))
            .param("truncation")
            .code("invalid_value"));
        }
    }
    for container in &declared.containers {
        if let Value::String(id) = container
            && !memory.containers.contains(id)
        {
            return Err(invalid(m::openai_container_not_found(id))
                .param("tools")
                .code("not_found"));
        }
    }

    let input: Vec<Value> = match obj.get("input") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => {
            vec![json!({"type": "message", "role": "user", "content": text})]
        }
        Some(Value::Array(items)) => items.clone(),
        Some(_) => {
            return Err(invalid(
                "Invalid type for 'input': expected a string or an array of items.",
            )
            .param("input")
            .code("invalid_type"));
        }
    };
    let mut tally = ImageTally { memo, n_bytes: 0 };
    for (idx, item) in input.iter().enumerate() {
        let resolved = check_item(idx, item, signer, memory, &conversation, &input, &mut tally)?;
        if config.hands_contract {
            check_native_replay(idx, &resolved, memory)?;
        }
        conversation.push(resolved);
    }
    let image_bytes = tally.n_bytes;
    if image_bytes > config.max_image_bytes {
        return Err(invalid(m::bad_image_url(
            "input",
            &format!(
                "the images of this request hold {image_bytes} bytes, more than the {} allowed",
                config.max_image_bytes
            ),
        ))
        .param("input")
        .code("invalid_image"));
    }
    unique_ids(&conversation)?;
    reasoning_followers(&conversation, memory)?;
    pairing(&conversation, memory)?;
    mcp_approvals(&conversation, &declared)?;

    let include_encrypted = obj
        .get("include")
        .and_then(Value::as_array)
        .is_some_and(|inc| inc.iter().any(|i| i == "reasoning.encrypted_content"));
    let mut prompt = Prompt::new(&model);
    let head = json!({"instructions": obj.get("instructions"), "tools": obj.get("tools")});
    prompt.push(&head, tokens::value_tokens(&head), None);
    // A compaction item stands for everything before it: the model sees its summary instead.
    let last_compaction = conversation
        .iter()
        .rposition(|item| item.get("type").and_then(Value::as_str) == Some("compaction"));
    for (idx, item) in conversation.iter().enumerate() {
        match last_compaction {
            Some(at) if idx < at => continue,
            Some(at) if idx == at => {
                let summary = opened_compaction(signer, item).map_or(0, |(_, t)| t);
                prompt.push(item, summary, None);
            }
            _ => prompt.push(item, tokens::value_tokens(item), None),
        }
    }
    Ok(Checked {
        model,
        stream: obj.get("stream").and_then(Value::as_bool) == Some(true),
        store: obj.get("store").and_then(Value::as_bool) != Some(false),
        include_encrypted,
        parallel: obj.get("parallel_tool_calls").and_then(Value::as_bool) != Some(false),
        previous_response_id,
        declared,
        conversation,
        prompt,
        compact_threshold,
    })
}

/// Spec: api-contracts B, "Computer tool declaration" and "Function tools".
fn tools(tools: Option<&Value>) -> Result<Declared> {
    let mut declared = Declared::default();
    let tools = match tools {
        None | Some(Value::Null) => return Ok(declared),
        Some(Value::Array(tools)) => tools,
        Some(_) => {
            return Err(invalid("Invalid type for 'tools': expected an array.")
                .param("tools")
                .code("invalid_type"));
        }
    };
    let mut n_computer = 0;
    for (idx, tool) in tools.iter().enumerate() {
        let Some(obj) = tool.as_object() else {
            return Err(invalid(format!(
                "Invalid type for 'tools[{idx}]': expected an object."
            ))
            .param(format!("tools[{idx}]"))
            .code("invalid_type"));
        };
        match obj.get("type").and_then(Value::as_str) {
            None => return Err(missing(&format!("tools[{idx}].type"))),
            Some("computer") => {
                n_computer += 1;
                if let Some(key) = obj.keys().find(|k| *k != "type") {
                    return Err(unknown(&format!("tools[{idx}].{key}")));
                }
            }
            Some("computer_use_preview") => {
                n_computer += 1;
                for field in ["display_width", "display_height", "environment"] {
                    if obj.get(field).is_none() {
                        return Err(missing(&format!("tools[{idx}].{field}")));
                    }
                }
                let environment = obj.get("environment").and_then(Value::as_str).unwrap_or("");
                if !["windows", "mac", "linux", "ubuntu", "browser"].contains(&environment) {
                    return Err(invalid(m::invalid_value(
                        environment,
                        "'windows', 'mac', 'linux', 'ubuntu' and 'browser'",
                    ))
                    .param(format!("tools[{idx}].environment"))
                    .code("invalid_value"));
                }
            }
            Some("function") => {
                let Some(name) = obj.get("name").and_then(Value::as_str) else {
                    return Err(missing(&format!("tools[{idx}].name")));
                };
                if !obj.get("parameters").is_some_and(Value::is_object) {
                    return Err(missing(&format!("tools[{idx}].parameters")));
                }
                if !declared.functions.insert(name.to_owned()) {
                    return Err(
                        invalid(format!("Duplicate function name '{name}' in 'tools'."))
                            .param(format!("tools[{idx}].name")),
                    );
                }
            }
            Some("mcp") => {
                let server = mcp_tool(idx, obj)?;
                if declared.mcp_server(&server.label).is_some() {
                    return Err(invalid(m::mcp_duplicate_label(&server.label))
                        .param(format!("tools[{idx}].server_label")));
                }
                declared.mcp.push(server);
            }
            Some("file_search") => {
                if !obj.get("vector_store_ids").is_some_and(Value::is_array) {
                    return Err(missing(&format!("tools[{idx}].vector_store_ids")));
                }
                declared.server_tools.insert("file_search");
            }
            Some("code_interpreter") => {
                match obj.get("container") {
                    Some(Value::String(id)) if !id.is_empty() => {}
                    Some(Value::Object(c))
                        if c.get("type").and_then(Value::as_str) == Some("auto") => {}
                    Some(_) => {
                        return Err(invalid(m::invalid_value(
                            "container",
                            "a container id, or an object with type 'auto'",
                        ))
                        .param(format!("tools[{idx}].container"))
                        .code("invalid_value"));
                    }
                    None => return Err(missing(&format!("tools[{idx}].container"))),
                }
                declared
                    .containers
                    .push(obj.get("container").cloned().unwrap_or(Value::Null));
                declared.server_tools.insert("code_interpreter");
            }
            Some("image_generation") => {
                declared.server_tools.insert("image_generation");
            }
            Some(t) if t.starts_with("web_search") => {
                declared.server_tools.insert("web_search");
            }
            Some(_) => {}
        }
    }
    if n_computer > 1 {
        return Err(invalid(m::OPENAI_TWO_COMPUTER_TOOLS).param("tools"));
    }
    declared.computer = n_computer == 1;
    Ok(declared)
}

/// One `mcp` tool: a non-empty `server_label`, one way to reach the server, well-formed
/// `require_approval` and `allowed_tools`, no field the API does not know.
///
/// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" (an empty filter
/// covers all tools); openai 3.51 `tool_param.Mcp`.
fn mcp_tool(idx: usize, obj: &Map<String, Value>) -> Result<McpServer> {
    if let Some(key) = obj.keys().find(|k| !MCP_TOOL_FIELDS.contains(&k.as_str())) {
        return Err(unknown(&format!("tools[{idx}].{key}")));
    }
    let label = match obj.get("server_label") {
        Some(Value::String(label)) if !label.trim().is_empty() => label.clone(),
        _ => return Err(missing(&format!("tools[{idx}].server_label"))),
    };
    let url = obj.get("server_url").and_then(Value::as_str);
    if url.is_none() && obj.get("connector_id").is_none() && obj.get("tunnel_id").is_none() {
        return Err(invalid(m::MCP_NO_SERVER).param(format!("tools[{idx}]")));
    }
    if let Some(url) = url
        && !(url.starts_with("https://") || url.starts_with("http://"))
    {
        return Err(invalid(m::invalid_value(url, "an http(s) URL"))
            .param(format!("tools[{idx}].server_url"))
            .code("invalid_value"));
    }
    let filter_ok = |filter: &Value| {
        filter.as_object().is_some_and(|f| {
            f.keys().all(|k| k == "tool_names" || k == "read_only")
                && f.get("tool_names").is_none_or(|names| {
                    names
                        .as_array()
                        .is_some_and(|n| n.iter().all(Value::is_string))
                })
                && f.get("read_only").is_none_or(Value::is_boolean)
        })
    };
    let require_approval = obj
        .get("require_approval")
        .filter(|v| !v.is_null())
        .cloned();
    let approval_ok = match &require_approval {
        None => true,
        Some(Value::String(mode)) => mode == "always" || mode == "never",
        Some(Value::Object(filters)) => filters
            .iter()
            .all(|(k, f)| (k == "always" || k == "never") && filter_ok(f)),
        Some(_) => false,
    };
    if !approval_ok {
        return Err(invalid(m::invalid_value(
            &require_approval.map(|v| v.to_string()).unwrap_or_default(),
            "'always', 'never', or an object with 'always' and/or 'never' tool filters",
        ))
        .param(format!("tools[{idx}].require_approval"))
        .code("invalid_value"));
    }
    let allowed_tools = obj.get("allowed_tools").filter(|v| !v.is_null()).cloned();
    let allowed_ok = match &allowed_tools {
        None => true,
        Some(Value::Array(names)) => names.iter().all(Value::is_string),
        Some(filter) => filter_ok(filter),
    };
    if !allowed_ok {
        return Err(invalid(
            "Invalid 'allowed_tools': expected a list of tool names or a tool filter.",
        )
        .param(format!("tools[{idx}].allowed_tools"))
        .code("invalid_value"));
    }
    let endpoint = url.map(|url| Endpoint {
        url: url.to_owned(),
        bearer: obj
            .get("authorization")
            .and_then(Value::as_str)
            .map(str::to_owned),
        headers: obj
            .get("headers")
            .and_then(Value::as_object)
            .map(|h| {
                h.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                    .collect()
            })
            .unwrap_or_default(),
    });
    Ok(McpServer {
        label,
        endpoint,
        require_approval: obj
            .get("require_approval")
            .filter(|v| !v.is_null())
            .cloned(),
        allowed_tools,
    })
}

/// Checks one input item and returns it as the conversation holds it (references resolved).
fn check_item(
    idx: usize,
    item: &Value,
    signer: &Signer,
    memory: &Memory,
    earlier: &[Value],
    input: &[Value],
    images: &mut ImageTally<'_>,
) -> Result<Value> {
    let param = format!("input[{idx}]");
    let Some(obj) = item.as_object() else {
        return Err(
            invalid(format!("Invalid type for '{param}': expected an object."))
                .param(&param)
                .code("invalid_type"),
        );
    };
    let item_type = match obj.get("type").and_then(Value::as_str) {
        Some(t) => t,
        None if obj.contains_key("role") => "message",
        None => return Err(missing(&format!("{param}.type"))),
    };
    match item_type {
        "item_reference" => {
            let id = obj.get("id").and_then(Value::as_str).unwrap_or("");
            return memory
                .items
                .get(id)
                .cloned()
                .ok_or_else(|| invalid(m::item_not_found(id)).param("input"));
        }
        "reasoning" => {
            let id = obj.get("id").and_then(Value::as_str).unwrap_or("");
            match obj.get("encrypted_content").and_then(Value::as_str) {
                Some(blob) => {
                    let payload_id = signer
                        .decrypt(blob)
                        .and_then(|p| serde_json::from_slice::<Value>(&p).ok())
                        .and_then(|p| p.get("id").and_then(Value::as_str).map(str::to_owned));
                    if payload_id.as_deref() != Some(id) {
                        return Err(invalid(m::encrypted_content_unverified(blob))
                            .code("invalid_encrypted_content"));
                    }
                }
                None => {
                    if !memory.items.contains_key(id) {
                        return Err(invalid(m::item_not_persisted(id)).param("input"));
                    }
                }
            }
        }
        "compaction" if opened_compaction(signer, item).is_none() => {
            return Err(invalid(m::compaction_unverified(idx))
                .param(&param)
                .code("invalid_encrypted_content"));
        }
        "computer_call_output" => {
            let call_id = required_call_id(obj, &param)?;
            check_screenshot(obj, &param, images)?;
            check_acknowledgements(obj, &param, call_id, memory, earlier, input)?;
        }
        "function_call_output" => {
            required_call_id(obj, &param)?;
            match obj.get("output") {
                Some(Value::String(_)) => {}
                Some(Value::Array(parts)) => {
                    for (part_idx, part) in parts.iter().enumerate() {
                        if part.get("type").and_then(Value::as_str) != Some("input_image") {
                            continue;
                        }
                        if let Some(url) = part.get("image_url").and_then(Value::as_str) {
                            images.check(url, &format!("{param}.output[{part_idx}].image_url"))?;
                        }
                        check_detail(part, &format!("{param}.output[{part_idx}].detail"))?;
                    }
                }
                _ => return Err(missing(&format!("{param}.output"))),
            }
        }
        "computer_call" | "function_call" => {
            required_call_id(obj, &param)?;
        }
        // An image generation call can be continued from only when its response was stored
        // (the openai SDK's runner refuses `store: false` beside `image_generation` for this).
        "image_generation_call" => {
            let id = obj.get("id").and_then(Value::as_str).unwrap_or("");
            if !memory.items.contains_key(id) {
                return Err(invalid(m::item_not_persisted(id)).param("input"));
            }
        }
        "message" => {
            let role = obj.get("role").and_then(Value::as_str).unwrap_or("");
            if !["user", "assistant", "system", "developer"].contains(&role) {
                return Err(invalid(m::invalid_value(
                    role,
                    "'assistant', 'system', 'developer', and 'user'",
                ))
                .param(format!("{param}.role"))
                .code("invalid_value"));
            }
            if let Some(Value::Array(parts)) = obj.get("content") {
                for (part_idx, part) in parts.iter().enumerate() {
                    if part.get("type").and_then(Value::as_str) == Some("input_image")
                        && let Some(url) = part.get("image_url").and_then(Value::as_str)
                    {
                        images.check(url, &format!("{param}.content[{part_idx}].image_url"))?;
                    }
                }
            }
        }
        _ => {}
    }
    Ok(item.clone())
}

/// hands' contract: a server tool's item the simulator emitted comes back as it was emitted
/// (its native content and container id kept).
fn check_native_replay(idx: usize, item: &Value, memory: &Memory) -> Result<()> {
    let item_type = item.get("type").and_then(Value::as_str).unwrap_or("");
    if !SERVER_ITEM_TYPES.contains(&item_type) {
        return Ok(());
    }
    let Some(id) = item.get("id").and_then(Value::as_str) else {
        return Ok(());
    };
    match memory.issued.get(id) {
        Some(issued) if issued != item => {
            Err(invalid(m::server_item_changed(&format!("input[{idx}]"), id)).param("input"))
        }
        _ => Ok(()),
    }
}

/// An `input_image`'s `detail`: absent, null, or one of the four values.
///
/// Spec: openai-browser-desktop-drivers, "Devolver imágenes del navegador" ("usa auto, low,
/// high u original").
fn check_detail(part: &Value, param: &str) -> Result<()> {
    match part.get("detail") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(d)) if ["auto", "low", "high", "original"].contains(&d.as_str()) => {
            Ok(())
        }
        Some(other) => Err(invalid(m::invalid_value(
            other.as_str().unwrap_or(&other.to_string()),
            "'low', 'high', 'auto', and 'original'",
        ))
        .param(param)
        .code("invalid_value")),
    }
}

fn required_call_id<'a>(obj: &'a Map<String, Value>, param: &str) -> Result<&'a str> {
    match obj.get("call_id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => Ok(id),
        _ => Err(missing(&format!("{param}.call_id"))),
    }
}

/// Spec: api-contracts B, "computer_call_output (input item)".
fn check_screenshot(
    obj: &Map<String, Value>,
    param: &str,
    images: &mut ImageTally<'_>,
) -> Result<()> {
    let Some(output) = obj.get("output").and_then(Value::as_object) else {
        return Err(missing(&format!("{param}.output")));
    };
    let output_type = output.get("type").and_then(Value::as_str).unwrap_or("");
    if output_type != "computer_screenshot" {
        return Err(
            invalid(m::invalid_value(output_type, "'computer_screenshot'"))
                .param(format!("{param}.output.type"))
                .code("invalid_value"),
        );
    }
    let image_url = output
        .get("image_url")
        .and_then(Value::as_str)
        .unwrap_or("");
    let file_id = output.get("file_id").and_then(Value::as_str).unwrap_or("");
    if !file_id.is_empty() {
        return Ok(());
    }
    if image_url.is_empty() {
        return Err(missing(&format!("{param}.output.image_url")));
    }
    images.check(image_url, &format!("{param}.output.image_url"))?;
    Ok(())
}

/// The images of one request: checked through the memo, their decoded bytes added up.
struct ImageTally<'m> {
    memo: &'m mut ImageMemo,
    n_bytes: usize,
}

impl ImageTally<'_> {
    /// Checks a data URL (an http(s) URL is accepted unseen) and counts its decoded size.
    fn check(&mut self, url: &str, param: &str) -> Result<()> {
        if url.starts_with("https://") || url.starts_with("http://") {
            return Ok(());
        }
        let bad = |why: &str| {
            invalid(m::bad_image_url(param, why))
                .param(param)
                .code("invalid_image_url")
        };
        let Some(rest) = url.strip_prefix("data:") else {
            return Err(bad("expected a base64 data URL or an http(s) URL"));
        };
        let Some((media_type, data)) = rest.split_once(";base64,") else {
            return Err(bad("expected `data:<media type>;base64,<data>`"));
        };
        let Some(format) = ImageFormat::from_media_type(media_type) else {
            return Err(bad(&format!(
                "unsupported image type '{media_type}'; use image/png, image/jpeg, image/gif or image/webp"
            )));
        };
        let read = self.memo.read(data);
        if !read.decoded {
            return Err(bad("the data is not valid base64"));
        }
        match (read.format, read.info) {
            (Some(found), _) if found != format => Err(bad(&format!(
                "the data is a {} image, not {media_type}",
                found.media_type()
            ))),
            (Some(_), Some(_)) => {
                self.n_bytes += read.n_bytes;
                Ok(())
            }
            _ => Err(bad("the data is not a readable image")),
        }
    }
}

/// The check ids a computer call was issued with: from the server's memory, else from the
/// call as replayed in this conversation.
fn issued_checks(
    call_id: &str,
    memory: &Memory,
    earlier: &[Value],
    input: &[Value],
) -> Vec<String> {
    if let Some(ids) = memory.calls.get(call_id) {
        return ids.clone();
    }
    earlier
        .iter()
        .chain(input)
        .find(|item| {
            item.get("type").and_then(Value::as_str) == Some("computer_call")
                && item.get("call_id").and_then(Value::as_str) == Some(call_id)
        })
        .and_then(|call| call.get("pending_safety_checks"))
        .and_then(Value::as_array)
        .map(|checks| {
            checks
                .iter()
                .filter_map(|c| c.get("id").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Spec: api-contracts B: acknowledge only checks issued for this call, and every one of
/// them (a check left unacknowledged means the human did not approve: the run must stop
/// rather than answer).
fn check_acknowledgements(
    obj: &Map<String, Value>,
    param: &str,
    call_id: &str,
    memory: &Memory,
    earlier: &[Value],
    input: &[Value],
) -> Result<()> {
    let issued = issued_checks(call_id, memory, earlier, input);
    let acks_param = format!("{param}.acknowledged_safety_checks");
    let acked: Vec<&str> = match obj.get("acknowledged_safety_checks") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(acks)) => {
            let mut ids = Vec::new();
            for ack in acks {
                let Some(id) = ack.get("id").and_then(Value::as_str) else {
                    return Err(missing(&format!("{acks_param}[].id")));
                };
                ids.push(id);
            }
            ids
        }
        Some(_) => {
            return Err(invalid(format!(
                "Invalid type for '{acks_param}': expected an array."
            ))
            .param(&acks_param)
            .code("invalid_type"));
        }
    };
    if let Some(foreign) = acked.iter().find(|id| !issued.iter().any(|i| i == *id)) {
        return Err(invalid(m::safety_check_not_issued(foreign, call_id)).param(&acks_param));
    }
    let pending: Vec<String> = issued
        .iter()
        .filter(|id| !acked.contains(&id.as_str()))
        .cloned()
        .collect();
    if !pending.is_empty() {
        return Err(invalid(m::safety_checks_unacknowledged(call_id, &pending)).param(&acks_param));
    }
    Ok(())
}

/// No item appears twice (a common slip: chaining with `previous_response_id` and replaying
/// the previous output too).
fn unique_ids(conversation: &[Value]) -> Result<()> {
    let mut seen = HashSet::new();
    for item in conversation {
        if let Some(id) = item.get("id").and_then(Value::as_str)
            && !seen.insert(id)
        {
            return Err(invalid(m::duplicate_item(id)).param("input"));
        }
    }
    Ok(())
}

/// A reasoning item the server emitted before another item is replayed with that item next.
fn reasoning_followers(conversation: &[Value], memory: &Memory) -> Result<()> {
    for (idx, item) in conversation.iter().enumerate() {
        if item.get("type").and_then(Value::as_str) != Some("reasoning") {
            continue;
        }
        let Some(id) = item.get("id").and_then(Value::as_str) else {
            continue;
        };
        let Some(expected) = memory.follows.get(id) else {
            continue;
        };
        let next = conversation.get(idx + 1);
        let followed = next.is_some_and(|next| match next.get("id").and_then(Value::as_str) {
            Some(next_id) => next_id == expected,
            None => next.get("type").and_then(Value::as_str) != Some("reasoning"),
        });
        if !followed {
            return Err(invalid(m::reasoning_without_follower(id)).param("input"));
        }
    }
    Ok(())
}

/// The status a call was emitted with, when it was not `completed`.
fn unfinished_status(call: &Value, call_id: &str, memory: &Memory) -> Option<String> {
    match call.get("status").and_then(Value::as_str) {
        Some("completed") => None,
        Some(other) => Some(other.to_owned()),
        None => memory.unfinished.get(call_id).cloned(),
    }
}

/// Every output answers an earlier completed call of its kind; every completed call is
/// answered later. A call that did not complete (`in_progress`, `incomplete`) needs no answer
/// and takes none.
fn pairing(conversation: &[Value], memory: &Memory) -> Result<()> {
    let kind_of = |item: &Value| {
        item.get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let call_id_of = |item: &Value| {
        item.get("call_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    for (idx, item) in conversation.iter().enumerate() {
        let kind = kind_of(item);
        let call_id = call_id_of(item);
        for (call_kind, output_kind) in CALL_KINDS {
            if kind == output_kind {
                let call = conversation[..idx]
                    .iter()
                    .find(|c| kind_of(c) == call_kind && call_id_of(c) == call_id);
                if let Some(status) = call.and_then(|c| unfinished_status(c, &call_id, memory)) {
                    return Err(
                        invalid(m::output_for_unfinished_call(&call_id, &status)).param("input")
                    );
                }
                if call.is_none() {
                    let message = if call_kind == "computer_call" {
                        m::no_computer_call(&call_id)
                    } else {
                        m::no_function_call(&call_id)
                    };
                    return Err(invalid(message).param("input"));
                }
            }
            if kind == call_kind && unfinished_status(item, &call_id, memory).is_none() {
                let answered = conversation[idx + 1..]
                    .iter()
                    .any(|o| kind_of(o) == output_kind && call_id_of(o) == call_id);
                if !answered {
                    let message = if call_kind == "computer_call" {
                        m::no_computer_output(&call_id)
                    } else {
                        m::no_function_output(&call_id)
                    };
                    return Err(invalid(message).param("input"));
                }
            }
        }
    }
    Ok(())
}

/// An `mcp_approval_response` answers, once, an `mcp_approval_request` of the conversation
/// whose server is declared in this request; approval request ids are unique.
fn mcp_approvals(conversation: &[Value], declared: &Declared) -> Result<()> {
    let mut requests: HashSet<&str> = HashSet::new();
    let mut answered: HashSet<&str> = HashSet::new();
    for (idx, item) in conversation.iter().enumerate() {
        match item.get("type").and_then(Value::as_str) {
            Some("mcp_approval_request") => {
                let id = item.get("id").and_then(Value::as_str).unwrap_or("");
                if !requests.insert(id) {
                    return Err(invalid(m::duplicate_item(id)).param("input"));
                }
            }
            Some("mcp_approval_response") => {
                let request_id = item
                    .get("approval_request_id")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if !item.get("approve").is_some_and(Value::is_boolean) {
                    return Err(missing(&format!("input[{idx}].approve")));
                }
                let request = conversation[..idx].iter().find(|c| {
                    c.get("type").and_then(Value::as_str) == Some("mcp_approval_request")
                        && c.get("id").and_then(Value::as_str) == Some(request_id)
                });
                let declared_server = request
                    .and_then(|r| r.get("server_label"))
                    .and_then(Value::as_str)
                    .is_some_and(|label| declared.mcp_server(label).is_some());
                if !declared_server {
                    return Err(invalid(m::mcp_approval_unexpected(request_id)).param("input"));
                }
                if !answered.insert(request_id) {
                    return Err(invalid(m::mcp_approval_answered_twice(request_id)).param("input"));
                }
            }
            _ => {}
        }
    }
    Ok(())
}
