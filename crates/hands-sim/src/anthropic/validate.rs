//! The rules of `POST /v1/messages`: request fields, tools and toolsets, tool_use/tool_result
//! pairing, toolset results, images, cache breakpoints and replayed thinking.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::context;
use crate::config::{AnthropicConfig, ImageTier};
use crate::error::ApiError;
use crate::images::{ImageFormat, ImageMemo};
use crate::messages as m;
use crate::sign::Signer;
use crate::tokens::{self, Prompt};
use crate::toolsets::{
    FINE_GRAINED_STREAMING_BETA, LEGACY_COMPUTER_TYPES, TOOLSET_FIELDS, ToolsetKind,
};

type Result<T> = std::result::Result<T, ApiError>;

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::invalid(message)
}

/// Tokens the computer toolset definition costs, and what disabling zoom saves
/// (api-contracts A, "Cost").
const COMPUTER_TOOLSET_TOKENS: u64 = 4500;
const ZOOM_TOKENS: u64 = 410;
/// Assumed cost of the browser toolset definition (not published).
const BROWSER_TOOLSET_TOKENS: u64 = 5000;
/// Legacy computer tool: system prompt plus definition (api-contracts A, "Earlier versions").
const LEGACY_COMPUTER_TOKENS: u64 = 499 + 735;

/// The top-level fields of a Messages request (api-contracts A, "Request fields", plus the
/// context-management and MCP betas, and `thread`, read first by [`super::thread`]).
const REQUEST_FIELDS: [&str; 22] = [
    "thread",
    "compaction",
    "model",
    "max_tokens",
    "messages",
    "system",
    "tools",
    "tool_choice",
    "stream",
    "thinking",
    "output_config",
    "stop_sequences",
    "temperature",
    "top_p",
    "top_k",
    "metadata",
    "service_tier",
    "cache_control",
    "container",
    "inference_geo",
    "context_management",
    "mcp_servers",
];

/// One declared client toolset.
#[derive(Clone, Debug)]
pub(crate) struct DeclaredToolset {
    pub(crate) kind: ToolsetKind,
    pub(crate) enabled: Vec<&'static str>,
}

/// What the request declares the model may call.
#[derive(Clone, Debug, Default)]
pub(crate) struct Declared {
    pub(crate) toolsets: Vec<DeclaredToolset>,
    /// Names of every other tool: custom, legacy `computer`, `bash`, the text editor, server
    /// tools, ….
    pub(crate) names: HashSet<String>,
    /// The `mcp_toolset` entries.
    pub(crate) mcp_toolsets: Vec<super::mcp::Toolset>,
    /// The `mcp_servers`, each with its toolset.
    pub(crate) mcp: Vec<super::mcp::Server>,
}

impl Declared {
    /// Whether the model may emit a `tool_use` with this `toolset_name` and `name`.
    pub(crate) fn allows(&self, toolset_name: Option<&str>, name: &str) -> bool {
        match toolset_name {
            Some(ts) => self
                .toolsets
                .iter()
                .any(|t| t.kind.toolset_name() == ts && t.enabled.contains(&name)),
            None => self.names.contains(name),
        }
    }
}

/// A request that passed every rule.
#[derive(Debug)]
pub(crate) struct Checked {
    pub(crate) model: String,
    pub(crate) stream: bool,
    pub(crate) declared: Declared,
    pub(crate) disable_parallel: bool,
    /// `any` or `tool`: the turn must call a tool.
    pub(crate) forced: bool,
    /// `none`: the turn must not call a tool.
    pub(crate) no_tools: bool,
    pub(crate) prompt: Prompt,
    /// `context_management.applied_edits` to report, when the request asked for context
    /// editing.
    pub(crate) applied_edits: Option<Vec<Value>>,
    /// The compaction this request makes, if any (the `compaction` parameter, or a
    /// `compact_20260112` edit over its trigger).
    pub(crate) compaction: Option<context::Due>,
}

/// Checks one request body against every rule, in the order the real API reports them as
/// far as it is known: fields, tools, tool_choice, thinking, messages, images, cache.
pub(crate) fn validate(
    body: &Value,
    betas: &[String],
    config: &AnthropicConfig,
    signer: &Signer,
    thinking_turns: &HashSet<String>,
    paused: &[Value],
    memo: &mut ImageMemo,
) -> Result<Checked> {
    let Some(obj) = body.as_object() else {
        return Err(invalid("Request body must be a JSON object"));
    };
    if let Some(key) = obj.keys().find(|k| !REQUEST_FIELDS.contains(&k.as_str())) {
        return Err(invalid(m::extra_input(key)));
    }
    let model = match obj.get("model") {
        None => return Err(invalid(m::field_required("model"))),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(invalid("model: Input should be a valid string")),
    };
    let max_tokens = match obj.get("max_tokens") {
        None => return Err(invalid(m::field_required("max_tokens"))),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => n,
            _ => {
                return Err(invalid(
                    "max_tokens: Input should be greater than or equal to 1",
                ));
            }
        },
    };
    let messages = match obj.get("messages") {
        None => return Err(invalid(m::field_required("messages"))),
        Some(Value::Array(messages)) => messages,
        Some(_) => return Err(invalid("messages: Input should be a valid list")),
    };
    let stream = match obj.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(invalid("stream: Input should be a valid boolean")),
    };

    let mut n_breakpoints = 0usize;
    let mut prompt = Prompt::new(&model);
    let mut declared = tools(
        obj.get("tools"),
        betas,
        &model,
        config,
        &mut n_breakpoints,
        &mut prompt,
    )?;
    declared.mcp = super::mcp::servers(obj.get("mcp_servers"), betas, &declared.mcp_toolsets)?;
    let choice = tool_choice(obj.get("tool_choice"), &declared)?;
    let thinking_on = thinking(obj.get("thinking"), max_tokens)?;
    if thinking_on && choice.forced {
        return Err(invalid(m::THINKING_FORCED_TOOL));
    }
    system(obj.get("system"), &mut n_breakpoints, &mut prompt)?;

    let walk = Walk {
        messages,
        declared: &declared,
        config,
        signer,
        thinking_turns,
        paused,
        thinking_on,
    };
    let images = walk.run()?;
    check_images(&images, config, memo)?;
    let request_compaction = context::compaction_param(obj, betas)?;
    if request_compaction.is_some() && walk.is_paused(messages.len() - 1) {
        return Err(invalid(m::COMPACTION_MID_TURN));
    }
    let edits = context::parse(obj.get("context_management"), betas)?;
    // The server drops what a compaction block summarizes: the model sees, and the request is
    // billed for, the conversation from the last summary on.
    let visible = context::visible(messages);
    let messages: &[Value] = &visible;
    let head = prompt.clone();
    push_messages(&mut prompt, messages, &mut n_breakpoints)?;
    if n_breakpoints > m::MAX_CACHE_BREAKPOINTS {
        return Err(invalid(m::too_many_cache_breakpoints(n_breakpoints)));
    }
    if let Some(output_config) = obj.get("output_config").filter(|v| !v.is_null()) {
        check_output_config(output_config)?;
    }
    // Server-side context editing changes what the model sees and what the cache hashes.
    let applied_edits = match &edits {
        None => None,
        Some(edits) => {
            let (edited, applied) = context::apply(edits, messages, prompt.total());
            if let Some(edited) = edited {
                prompt = head;
                push_messages(&mut prompt, &edited, &mut 0)?;
            }
            Some(applied)
        }
    };
    let summary = |instructions: Option<&str>| m::compaction_summary(messages.len(), instructions);
    let compaction = match (
        request_compaction,
        edits.as_ref().and_then(|e| e.compact.as_ref()),
    ) {
        (Some(instructions), _) => Some(context::Due {
            alone: true,
            summary: summary(instructions.as_deref()),
        }),
        (None, Some(compact)) if prompt.total() > compact.trigger => Some(context::Due {
            alone: compact.pause,
            summary: summary(compact.instructions.as_deref()),
        }),
        _ => None,
    };

    Ok(Checked {
        model,
        stream,
        declared,
        disable_parallel: choice.disable_parallel,
        forced: choice.forced,
        no_tools: choice.none,
        prompt,
        applied_edits,
        compaction,
    })
}

/// The effort levels of `output_config.effort` (api-contracts A, "Request fields").
const EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];

fn check_output_config(value: &Value) -> Result<()> {
    let Some(obj) = value.as_object() else {
        return Err(invalid("output_config: Input should be a valid dictionary"));
    };
    if let Some(key) = obj
        .keys()
        .find(|k| !["effort", "format"].contains(&k.as_str()))
    {
        return Err(invalid(m::extra_input(&format!("output_config.{key}"))));
    }
    match obj.get("effort") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(e)) if EFFORTS.contains(&e.as_str()) => Ok(()),
        Some(other) => Err(invalid(format!(
            "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max' (got {other})"
        ))),
    }
}

/// Appends the messages' blocks to `prompt` in order, counting their cache breakpoints.
fn push_messages(prompt: &mut Prompt, messages: &[Value], n_breakpoints: &mut usize) -> Result<()> {
    for (msg_idx, message) in messages.iter().enumerate() {
        let role = message.get("role").cloned().unwrap_or(Value::Null);
        match message.get("content") {
            Some(Value::Array(blocks)) => {
                for (block_idx, block) in blocks.iter().enumerate() {
                    let path = format!("messages.{msg_idx}.content.{block_idx}");
                    let mut breakpoint = cache_mark(block, &path, n_breakpoints)?;
                    if let Some(Value::Array(inner)) = block.get("content") {
                        for (inner_idx, inner_block) in inner.iter().enumerate() {
                            let inner_path = format!("{path}.tool_result.content.{inner_idx}");
                            if let Some(ttl) = cache_mark(inner_block, &inner_path, n_breakpoints)?
                            {
                                breakpoint = Some(breakpoint.unwrap_or(false) || ttl);
                            }
                        }
                    }
                    let piece = serde_json::json!({"role": role, "block": block});
                    prompt.push(&piece, tokens::value_tokens(block), breakpoint);
                }
            }
            Some(content) => {
                let piece = serde_json::json!({"role": role, "content": content});
                prompt.push(&piece, tokens::value_tokens(content), None);
            }
            None => {}
        }
    }
    Ok(())
}

/// Reads a `cache_control` marker, checks its shape and counts it. `Some(true)` for a 1h ttl.
fn cache_mark(value: &Value, path: &str, count: &mut usize) -> Result<Option<bool>> {
    let Some(cc) = value.get("cache_control") else {
        return Ok(None);
    };
    if cc.is_null() {
        return Ok(None);
    }
    if cc.get("type").and_then(Value::as_str) != Some("ephemeral") {
        return Err(invalid(format!(
            "{path}.cache_control.type: Input should be 'ephemeral'"
        )));
    }
    let ttl_1h = match cc.get("ttl") {
        None => false,
        Some(Value::String(t)) if t == "5m" => false,
        Some(Value::String(t)) if t == "1h" => true,
        Some(_) => {
            return Err(invalid(format!(
                "{path}.cache_control.ttl: Input should be '5m' or '1h'"
            )));
        }
    };
    *count += 1;
    Ok(Some(ttl_1h))
}

fn is_versioned_type(tool_type: &str) -> bool {
    tool_type
        .rsplit_once('_')
        .is_some_and(|(_, date)| date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()))
}

fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn tools(
    tools: Option<&Value>,
    betas: &[String],
    model: &str,
    config: &AnthropicConfig,
    n_breakpoints: &mut usize,
    prompt: &mut Prompt,
) -> Result<Declared> {
    let mut declared = Declared::default();
    let tools = match tools {
        None | Some(Value::Null) => return Ok(declared),
        Some(Value::Array(tools)) => tools,
        Some(_) => return Err(invalid("tools: Input should be a valid list")),
    };
    let mut names_seen: Vec<String> = Vec::new();
    // Indexes of tools that are computer tools: the toolset, a legacy type, or named
    // `computer`.
    let mut computer_toolsets: Vec<usize> = Vec::new();
    let mut other_computers: Vec<usize> = Vec::new();
    let mut browser_toolsets: Vec<usize> = Vec::new();
    for (tool_idx, tool) in tools.iter().enumerate() {
        let Some(obj) = tool.as_object() else {
            return Err(invalid(format!(
                "tools.{tool_idx}: Input should be a valid dictionary"
            )));
        };
        let tool_type = obj.get("type").and_then(Value::as_str);
        let mut extra_tokens = 0;
        match tool_type {
            None | Some("custom") => {
                let path = format!("tools.{tool_idx}.custom");
                let name = required_str(obj, "name", &path)?;
                if !valid_tool_name(name) {
                    return Err(invalid(format!(
                        "{path}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
                    )));
                }
                if !obj.get("input_schema").is_some_and(Value::is_object) {
                    return Err(invalid(m::field_required(&format!("{path}.input_schema"))));
                }
                // `strict` (structured tool inputs) is a boolean when present.
                if obj.get("strict").is_some_and(|v| !v.is_boolean()) {
                    return Err(invalid(format!(
                        "{path}.strict: Input should be a valid boolean"
                    )));
                }
                if name == "computer" {
                    other_computers.push(tool_idx);
                }
                names_seen.push(name.to_owned());
            }
            Some(t) if ToolsetKind::from_type(t).is_some() => {
                let Some(kind) = ToolsetKind::from_type(t) else {
                    continue;
                };
                let toolset = toolset_entry(tool_idx, kind, obj)?;
                match kind {
                    ToolsetKind::Computer => {
                        computer_toolsets.push(tool_idx);
                        extra_tokens = COMPUTER_TOOLSET_TOKENS;
                        if !toolset.enabled.contains(&"zoom") {
                            extra_tokens -= ZOOM_TOKENS;
                        }
                    }
                    ToolsetKind::Browser => {
                        browser_toolsets.push(tool_idx);
                        extra_tokens = BROWSER_TOOLSET_TOKENS;
                    }
                }
                declared.toolsets.push(toolset);
            }
            Some(t) if LEGACY_COMPUTER_TYPES.iter().any(|(ty, _)| *ty == t) => {
                let beta = LEGACY_COMPUTER_TYPES
                    .iter()
                    .find(|(ty, _)| *ty == t)
                    .map(|(_, beta)| *beta)
                    .unwrap_or_default();
                if !betas.iter().any(|b| b == beta) {
                    return Err(invalid(m::unknown_tool_type(tool_idx, t)));
                }
                if config.toolset_only_models.iter().any(|m| m == model) {
                    return Err(invalid(m::unsupported_tool_types(model, t)));
                }
                legacy_computer_entry(tool_idx, t, obj)?;
                other_computers.push(tool_idx);
                names_seen.push("computer".to_owned());
                extra_tokens = LEGACY_COMPUTER_TOKENS;
            }
            Some("mcp_toolset") => {
                declared
                    .mcp_toolsets
                    .push(super::mcp::toolset_entry(tool_idx, obj, betas)?);
            }
            Some(t) if is_versioned_type(t) => {
                // bash, text editor, server tools: a name and the version's own fields.
                let path = format!("tools.{tool_idx}.{t}");
                let name = required_str(obj, "name", &path)?;
                if name == "computer" {
                    other_computers.push(tool_idx);
                }
                names_seen.push(name.to_owned());
            }
            Some(t) => return Err(invalid(m::unknown_tool_type(tool_idx, t))),
        }
        let breakpoint = cache_mark(tool, &format!("tools.{tool_idx}"), n_breakpoints)?;
        prompt.push(tool, tokens::value_tokens(tool) + extra_tokens, breakpoint);
    }

    let mut unique = HashSet::new();
    if !names_seen.iter().all(|n| unique.insert(n.as_str())) {
        return Err(invalid(m::TOOL_NAMES_UNIQUE));
    }
    if let Some(&toolset_idx) = computer_toolsets.first() {
        let mut others: Vec<usize> = computer_toolsets[1..].to_vec();
        others.extend(&other_computers);
        others.sort_unstable();
        if let Some(&other_idx) = others.first() {
            let (first, second) = (toolset_idx.min(other_idx), toolset_idx.max(other_idx));
            return Err(invalid(m::computer_tool_conflict(first, second)));
        }
    }
    if let [first, second, ..] = browser_toolsets[..] {
        return Err(invalid(m::browser_toolset_conflict(first, second)));
    }
    if !declared.toolsets.is_empty() && betas.iter().any(|b| b == FINE_GRAINED_STREAMING_BETA) {
        return Err(invalid(m::fine_grained_with_toolset()));
    }
    declared.names = names_seen.into_iter().collect();
    Ok(declared)
}

fn required_str<'a>(obj: &'a Map<String, Value>, field: &str, path: &str) -> Result<&'a str> {
    match obj.get(field) {
        None => Err(invalid(m::field_required(&format!("{path}.{field}")))),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(invalid(format!(
            "{path}.{field}: Input should be a valid string"
        ))),
    }
}

/// Spec: claude-computer-use-tool, "Parámetros de la herramienta"; api-contracts A,
/// "Computer use" and "Browser use".
fn toolset_entry(
    tool_idx: usize,
    kind: ToolsetKind,
    obj: &Map<String, Value>,
) -> Result<DeclaredToolset> {
    let path = format!("tools.{tool_idx}.{}", kind.entry_type());
    for key in obj.keys() {
        if !TOOLSET_FIELDS.contains(&key.as_str()) {
            return Err(invalid(m::extra_input(&format!("{path}.{key}"))));
        }
    }
    let mut enabled_of: HashMap<&str, bool> = HashMap::new();
    let mut defer_of: HashMap<&str, bool> = HashMap::new();
    match obj.get("configs") {
        None | Some(Value::Null) => {}
        Some(Value::Object(configs)) => {
            for (member, config) in configs {
                let member_path = format!("{path}.configs.{member}");
                let Some(&known) = kind.members().iter().find(|m| **m == member) else {
                    return Err(invalid(m::toolset_unknown_member(
                        &format!("{path}.configs"),
                        member,
                        kind.entry_type(),
                    )));
                };
                let Some(config) = config.as_object() else {
                    return Err(invalid(format!(
                        "{member_path}: Input should be a valid dictionary"
                    )));
                };
                for (key, value) in config {
                    let target = match key.as_str() {
                        "enabled" => &mut enabled_of,
                        "defer_loading" => &mut defer_of,
                        _ => return Err(invalid(m::extra_input(&format!("{member_path}.{key}")))),
                    };
                    let Some(b) = value.as_bool() else {
                        return Err(invalid(format!(
                            "{member_path}.{key}: Input should be a valid boolean"
                        )));
                    };
                    target.insert(known, b);
                }
            }
        }
        Some(_) => {
            return Err(invalid(format!(
                "{path}.configs: Input should be a valid dictionary"
            )));
        }
    }
    let enabled: Vec<&'static str> = kind
        .members()
        .iter()
        .copied()
        .filter(|m| {
            enabled_of
                .get(m)
                .copied()
                .unwrap_or(kind.enabled_by_default(m))
        })
        .collect();
    if enabled.is_empty() {
        return Err(invalid(m::toolset_all_disabled(&format!("{path}.configs"))));
    }
    let defers: HashSet<bool> = enabled
        .iter()
        .map(|m| defer_of.get(m).copied().unwrap_or(false))
        .collect();
    if defers.len() > 1 {
        return Err(invalid(m::toolset_mixed_defer(&format!("{path}.configs"))));
    }
    if let Some(callers) = obj.get("allowed_callers") {
        let direct_only = callers
            .as_array()
            .is_some_and(|c| c.len() == 1 && c[0] == "direct");
        if !direct_only {
            return Err(invalid(m::toolset_allowed_callers(&format!(
                "{path}.allowed_callers"
            ))));
        }
    }
    Ok(DeclaredToolset { kind, enabled })
}

/// Spec: api-contracts A, "Earlier versions (beta)".
fn legacy_computer_entry(tool_idx: usize, tool_type: &str, obj: &Map<String, Value>) -> Result<()> {
    let path = format!("tools.{tool_idx}.{tool_type}");
    let mut allowed = vec![
        "type",
        "name",
        "display_width_px",
        "display_height_px",
        "display_number",
        "cache_control",
    ];
    if tool_type == "computer_20251124" {
        allowed.push("enable_zoom");
    }
    for key in obj.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(invalid(m::extra_input(&format!("{path}.{key}"))));
        }
    }
    if required_str(obj, "name", &path)? != "computer" {
        return Err(invalid(format!("{path}.name: Input should be 'computer'")));
    }
    for field in ["display_width_px", "display_height_px"] {
        match obj.get(field) {
            None => return Err(invalid(m::field_required(&format!("{path}.{field}")))),
            Some(v) if v.as_u64().is_some_and(|n| n >= 1) => {}
            Some(_) => {
                return Err(invalid(format!(
                    "{path}.{field}: Input should be greater than or equal to 1"
                )));
            }
        }
    }
    Ok(())
}

struct Choice {
    disable_parallel: bool,
    forced: bool,
    none: bool,
}

fn tool_choice(choice: Option<&Value>, declared: &Declared) -> Result<Choice> {
    let mut out = Choice {
        disable_parallel: false,
        forced: false,
        none: false,
    };
    let Some(choice) = choice.filter(|c| !c.is_null()) else {
        return Ok(out);
    };
    let choice_type = choice.get("type").and_then(Value::as_str).unwrap_or("");
    match choice_type {
        "auto" => {}
        "none" => out.none = true,
        "any" => out.forced = true,
        "tool" => {
            out.forced = true;
            let Some(name) = choice.get("name").and_then(Value::as_str) else {
                return Err(invalid(m::field_required("tool_choice.tool.name")));
            };
            if !declared.names.contains(name) {
                let names_toolset = declared.toolsets.iter().any(|t| {
                    t.kind.toolset_name() == name
                        || t.kind.entry_type() == name
                        || t.kind.members().contains(&name)
                });
                return Err(invalid(if names_toolset {
                    m::tool_choice_names_toolset(name)
                } else {
                    m::tool_choice_unknown(name)
                }));
            }
        }
        other => {
            return Err(invalid(format!(
                "tool_choice: Input tag '{other}' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'"
            )));
        }
    }
    match choice.get("disable_parallel_tool_use") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(b)) => out.disable_parallel = *b,
        Some(_) => {
            return Err(invalid(
                "tool_choice.disable_parallel_tool_use: Input should be a valid boolean",
            ));
        }
    }
    Ok(out)
}

/// Returns whether thinking is on (`enabled` or `adaptive`).
fn thinking(thinking: Option<&Value>, max_tokens: u64) -> Result<bool> {
    let Some(thinking) = thinking.filter(|t| !t.is_null()) else {
        return Ok(false);
    };
    match thinking.get("type").and_then(Value::as_str).unwrap_or("") {
        "disabled" => Ok(false),
        "adaptive" => Ok(true),
        "enabled" => {
            let Some(budget) = thinking.get("budget_tokens") else {
                return Err(invalid(m::field_required("thinking.enabled.budget_tokens")));
            };
            match budget.as_u64() {
                Some(b) if b < 1024 => Err(invalid(
                    "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
                )),
                Some(b) if b >= max_tokens => Err(invalid(
                    "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size",
                )),
                Some(_) => Ok(true),
                None => Err(invalid(
                    "thinking.enabled.budget_tokens: Input should be a valid integer",
                )),
            }
        }
        other => Err(invalid(format!(
            "thinking: Input tag '{other}' found using 'type' does not match any of the expected tags: 'adaptive', 'disabled', 'enabled'"
        ))),
    }
}

fn system(system: Option<&Value>, n_breakpoints: &mut usize, prompt: &mut Prompt) -> Result<()> {
    match system {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(text)) => {
            prompt.push(
                &Value::String(text.clone()),
                tokens::text_tokens(text),
                None,
            );
            Ok(())
        }
        Some(Value::Array(blocks)) => {
            for (idx, block) in blocks.iter().enumerate() {
                let path = format!("system.{idx}");
                if block.get("type").and_then(Value::as_str) != Some("text")
                    || !block.get("text").is_some_and(Value::is_string)
                {
                    return Err(invalid(format!(
                        "{path}: system blocks must be text blocks with a `text` string"
                    )));
                }
                let breakpoint = cache_mark(block, &path, n_breakpoints)?;
                prompt.push(block, tokens::value_tokens(block), breakpoint);
            }
            Ok(())
        }
        Some(_) => Err(invalid(
            "system: Input should be a valid string or a list of text blocks",
        )),
    }
}

/// One image found in the messages, with where it sits.
struct ImageRef<'a> {
    path: String,
    block: &'a Value,
    /// Set for images in a result of the computer toolset: the model's tier applies.
    computer_result: bool,
}

/// A `tool_use` of an assistant message.
struct ToolUse<'a> {
    id: &'a str,
    name: &'a str,
    toolset_name: Option<&'a str>,
}

const USER_BLOCKS: [&str; 5] = ["text", "image", "document", "tool_result", "search_result"];
const ASSISTANT_ONLY_BLOCKS: [&str; 4] = [
    "tool_use",
    "thinking",
    "redacted_thinking",
    "server_tool_use",
];

/// The walk over `messages`: structure, pairing, toolset results and thinking.
struct Walk<'a> {
    messages: &'a [Value],
    declared: &'a Declared,
    config: &'a AnthropicConfig,
    signer: &'a Signer,
    thinking_turns: &'a HashSet<String>,
    /// The content of every turn this server ended with `pause_turn`.
    paused: &'a [Value],
    thinking_on: bool,
}

impl<'a> Walk<'a> {
    fn run(&self) -> Result<Vec<ImageRef<'a>>> {
        let messages = self.messages;
        if messages.is_empty() {
            return Err(invalid("messages: at least one message is required"));
        }
        let mut images = Vec::new();
        let mut prev_role = "";
        let last_assistant = messages
            .iter()
            .rposition(|msg| msg.get("role").and_then(Value::as_str) == Some("assistant"));
        for (msg_idx, message) in messages.iter().enumerate() {
            let role = match message.get("role").and_then(Value::as_str) {
                Some(r @ ("user" | "assistant")) => r,
                Some(_) => {
                    return Err(invalid(format!(
                        "messages.{msg_idx}.role: Input should be 'user' or 'assistant'"
                    )));
                }
                None => {
                    return Err(invalid(m::field_required(&format!(
                        "messages.{msg_idx}.role"
                    ))));
                }
            };
            // A conversation may open with the compaction that replaced its start.
            if msg_idx == 0 && role != "user" && !self.opens_with_compaction(0) {
                return Err(invalid(m::FIRST_MESSAGE_USER));
            }
            // A compaction alone (a paused compaction, or a compaction request's answer) is
            // continued by the next answer, or followed by the user.
            let after_compaction = msg_idx > 0 && self.is_compaction_only(msg_idx - 1);
            let after_paused = msg_idx > 0 && self.is_paused(msg_idx - 1);
            // A paused turn is continued by the next answer, which the client appends as an
            // assistant message of its own; nothing else may follow it.
            if after_paused && role == "user" {
                return Err(invalid(m::paused_turn_not_last(msg_idx - 1)));
            }
            if role == prev_role && !((after_paused || after_compaction) && role == "assistant") {
                return Err(invalid(m::roles_must_alternate(role)));
            }
            prev_role = role;
            let is_last = msg_idx + 1 == messages.len();
            let paused = self.is_paused(msg_idx);
            if is_last
                && role == "assistant"
                && !self.config.allow_prefill
                && !paused
                && !self.is_compaction_only(msg_idx)
            {
                return Err(invalid(m::PREFILL_UNSUPPORTED));
            }
            let blocks = self.blocks(msg_idx, message, is_last)?;
            if role == "assistant" && paused {
                // The turn goes on: its calls are answered after its continuation.
            } else if role == "assistant" {
                self.assistant(msg_idx, &blocks, Some(msg_idx) == last_assistant)?;
            } else {
                self.user(msg_idx, &blocks, &mut images)?;
            }
        }
        Ok(images)
    }

    /// The content blocks of a message (a string is one text block), with their shapes
    /// checked.
    fn blocks(&self, msg_idx: usize, message: &'a Value, is_last: bool) -> Result<Vec<&'a Value>> {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        let blocks: Vec<&Value> = match message.get("content") {
            None => {
                return Err(invalid(m::field_required(&format!(
                    "messages.{msg_idx}.content"
                ))));
            }
            Some(Value::String(s)) => {
                if s.is_empty() && !(is_last && role == "assistant") {
                    return Err(invalid(m::empty_message(msg_idx)));
                }
                return Ok(Vec::new());
            }
            Some(Value::Array(blocks)) => blocks.iter().collect(),
            Some(_) => {
                return Err(invalid(format!(
                    "messages.{msg_idx}.content: Input should be a valid string or a list of content blocks"
                )));
            }
        };
        if blocks.is_empty() && !(is_last && role == "assistant") {
            return Err(invalid(m::empty_message(msg_idx)));
        }
        for (block_idx, block) in blocks.iter().enumerate() {
            let path = format!("messages.{msg_idx}.content.{block_idx}");
            let Some(block_type) = block.get("type").and_then(Value::as_str) else {
                return Err(invalid(m::field_required(&format!("{path}.type"))));
            };
            let allowed = if role == "user" {
                USER_BLOCKS.contains(&block_type)
            } else {
                block_type != "tool_result" && block_type != "image" && block_type != "document"
            };
            let misplaced = role == "user" && ASSISTANT_ONLY_BLOCKS.contains(&block_type);
            if !allowed || misplaced {
                return Err(invalid(format!(
                    "{path}: `{block_type}` blocks are not allowed in `{role}` messages"
                )));
            }
            match block_type {
                "text" => match block.get("text") {
                    Some(Value::String(t)) if t.is_empty() => {
                        return Err(invalid(m::TEXT_NON_EMPTY));
                    }
                    Some(Value::String(_)) => {}
                    _ => return Err(invalid(m::field_required(&format!("{path}.text.text")))),
                },
                "tool_use" => {
                    for field in ["id", "name"] {
                        if !block.get(field).is_some_and(Value::is_string) {
                            return Err(invalid(m::field_required(&format!(
                                "{path}.tool_use.{field}"
                            ))));
                        }
                    }
                    if !block.get("input").is_some_and(Value::is_object) {
                        return Err(invalid(m::field_required(&format!(
                            "{path}.tool_use.input"
                        ))));
                    }
                }
                "tool_result" => {
                    if !block.get("tool_use_id").is_some_and(Value::is_string) {
                        return Err(invalid(m::field_required(&format!(
                            "{path}.tool_result.tool_use_id"
                        ))));
                    }
                    match block.get("content") {
                        None | Some(Value::String(_) | Value::Array(_)) => {}
                        Some(_) => {
                            return Err(invalid(format!(
                                "{path}.tool_result.content: Input should be a valid string or a list of content blocks"
                            )));
                        }
                    }
                    if let Some(ts) = block.get("toolset_name")
                        && !ts.is_string()
                    {
                        return Err(invalid(format!(
                            "{path}.tool_result.toolset_name: Input should be a valid string"
                        )));
                    }
                }
                _ => {}
            }
        }
        Ok(blocks)
    }

    /// Whether message `msg_idx` is a turn this server ended with `pause_turn`, sent back
    /// unchanged.
    fn is_paused(&self, msg_idx: usize) -> bool {
        let Some(message) = self.messages.get(msg_idx) else {
            return false;
        };
        message.get("role").and_then(Value::as_str) == Some("assistant")
            && message
                .get("content")
                .is_some_and(|content| self.paused.contains(content))
    }

    /// Whether message `msg_idx` is an assistant message that opens with a `compaction` block.
    fn opens_with_compaction(&self, msg_idx: usize) -> bool {
        let blocks = self.message_blocks(msg_idx);
        self.messages[msg_idx].get("role").and_then(Value::as_str) == Some("assistant")
            && blocks
                .first()
                .is_some_and(|b| b.get("type").and_then(Value::as_str) == Some("compaction"))
    }

    /// Whether message `msg_idx` is an assistant message of `compaction` blocks only.
    fn is_compaction_only(&self, msg_idx: usize) -> bool {
        let blocks = self.message_blocks(msg_idx);
        self.messages
            .get(msg_idx)
            .and_then(|m| m.get("role"))
            .and_then(Value::as_str)
            == Some("assistant")
            && !blocks.is_empty()
            && blocks
                .iter()
                .all(|b| b.get("type").and_then(Value::as_str) == Some("compaction"))
    }

    fn tool_uses(blocks: &[&'a Value]) -> Vec<ToolUse<'a>> {
        blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
            .map(|b| ToolUse {
                id: b.get("id").and_then(Value::as_str).unwrap_or(""),
                name: b.get("name").and_then(Value::as_str).unwrap_or(""),
                toolset_name: b.get("toolset_name").and_then(Value::as_str),
            })
            .collect()
    }

    fn message_blocks(&self, msg_idx: usize) -> Vec<&'a Value> {
        match self.messages.get(msg_idx).and_then(|m| m.get("content")) {
            Some(Value::Array(blocks)) => blocks.iter().collect(),
            _ => Vec::new(),
        }
    }

    /// An assistant message: its tool_use blocks must be answered in the next message, its
    /// thinking must be ours and unmodified.
    fn assistant(
        &self,
        msg_idx: usize,
        blocks: &[&'a Value],
        is_last_assistant: bool,
    ) -> Result<()> {
        for (block_idx, block) in blocks.iter().enumerate() {
            match block.get("type").and_then(Value::as_str) {
                Some("thinking") => {
                    let text = block.get("thinking").and_then(Value::as_str).unwrap_or("");
                    let signature = block.get("signature").and_then(Value::as_str).unwrap_or("");
                    if !self.signer.verify_thinking(text, signature) {
                        return Err(invalid(m::invalid_thinking_signature(msg_idx, block_idx)));
                    }
                }
                Some("redacted_thinking") => {
                    let data = block.get("data").and_then(Value::as_str).unwrap_or("");
                    if self.signer.open("redacted_thinking", data).is_none() {
                        return Err(invalid(m::invalid_redacted_thinking(msg_idx, block_idx)));
                    }
                }
                // A summary goes back as this server wrote it; a null one (a failed
                // compaction) is a no-op.
                Some("compaction") => match block.get("content") {
                    None | Some(Value::Null) => {}
                    Some(Value::String(summary)) => {
                        let signature =
                            block.get("signature").and_then(Value::as_str).unwrap_or("");
                        if signature != self.signer.compaction_signature(summary) {
                            return Err(invalid(m::invalid_compaction_signature(
                                msg_idx, block_idx,
                            )));
                        }
                    }
                    Some(_) => {
                        return Err(invalid(format!(
                            "messages.{msg_idx}.content.{block_idx}.compaction.content: Input should be a valid string"
                        )));
                    }
                },
                _ => {}
            }
        }
        let uses = Self::tool_uses(blocks);
        if uses.is_empty() {
            return Ok(());
        }
        if self.thinking_on
            && is_last_assistant
            && uses.iter().any(|u| self.thinking_turns.contains(u.id))
        {
            let first = blocks
                .first()
                .and_then(|b| b.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if first != "thinking" && first != "redacted_thinking" {
                return Err(invalid(m::thinking_block_required(msg_idx, first)));
            }
        }
        let next_is_user = self
            .messages
            .get(msg_idx + 1)
            .and_then(|m| m.get("role"))
            .and_then(Value::as_str)
            == Some("user");
        let answered: HashSet<&str> = if next_is_user {
            self.message_blocks(msg_idx + 1)
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str))
                .collect()
        } else {
            HashSet::new()
        };
        let missing: Vec<String> = uses
            .iter()
            .filter(|u| !answered.contains(u.id))
            .map(|u| u.id.to_owned())
            .collect();
        if !missing.is_empty() {
            return Err(invalid(m::tool_use_without_result(msg_idx, &missing)));
        }
        Ok(())
    }

    /// A user message: every tool_result answers a tool_use of the previous message, echoes
    /// its toolset, and holds only what a toolset result may hold.
    fn user(
        &self,
        msg_idx: usize,
        blocks: &[&'a Value],
        images: &mut Vec<ImageRef<'a>>,
    ) -> Result<()> {
        let prev_blocks = if msg_idx > 0 {
            self.message_blocks(msg_idx - 1)
        } else {
            Vec::new()
        };
        let uses = Self::tool_uses(&prev_blocks);
        let n_leading_results = blocks
            .iter()
            .take_while(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .count();
        if n_leading_results < uses.len() {
            return Err(invalid(m::tool_results_not_first(
                msg_idx,
                uses.len() - n_leading_results,
            )));
        }
        for (block_idx, block) in blocks.iter().enumerate() {
            let path = format!("messages.{msg_idx}.content.{block_idx}");
            match block.get("type").and_then(Value::as_str) {
                Some("image") => images.push(ImageRef {
                    path: format!("{path}.image"),
                    block,
                    computer_result: false,
                }),
                Some("tool_result") => {
                    let id = block
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let Some(tool_use) = uses.iter().find(|u| u.id == id) else {
                        return Err(invalid(m::unexpected_tool_result(msg_idx, block_idx, id)));
                    };
                    let echoed = block.get("toolset_name").and_then(Value::as_str);
                    match (tool_use.toolset_name, echoed) {
                        (Some(expected), None) => {
                            return Err(invalid(m::toolset_name_missing(
                                msg_idx, block_idx, id, expected,
                            )));
                        }
                        (expected, Some(found)) if expected != Some(found) => {
                            return Err(invalid(m::toolset_name_mismatch(
                                msg_idx, block_idx, id, found, expected,
                            )));
                        }
                        _ => {}
                    }
                    let kind = tool_use.toolset_name.and_then(|ts| {
                        [ToolsetKind::Computer, ToolsetKind::Browser]
                            .into_iter()
                            .find(|k| k.toolset_name() == ts)
                    });
                    self.result_content(&path, block, tool_use, kind, images)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The content of one `tool_result`: what its toolset allows, only non-empty text on an
    /// error, a well-formed `browser_state`, and (with `hands_contract`) hands' own rules.
    fn result_content(
        &self,
        path: &str,
        block: &'a Value,
        tool_use: &ToolUse<'a>,
        toolset: Option<ToolsetKind>,
        images: &mut Vec<ImageRef<'a>>,
    ) -> Result<()> {
        let is_error = block.get("is_error").and_then(Value::as_bool) == Some(true);
        let content = match block.get("content") {
            None | Some(Value::Null) => {
                if is_error {
                    return Err(invalid(m::error_result_empty(path)));
                }
                return Ok(());
            }
            Some(Value::String(text)) => {
                if is_error && text.is_empty() {
                    return Err(invalid(m::error_result_empty(path)));
                }
                if is_error && toolset.is_some() {
                    self.contract_error_text(path, text)?;
                }
                return Ok(());
            }
            Some(Value::Array(content)) => content,
            Some(_) => return Ok(()),
        };
        if is_error {
            if content.is_empty() {
                return Err(invalid(m::error_result_empty(path)));
            }
            // The Messages API: "all content must be type 'text' if 'is_error' is true".
            if content
                .iter()
                .any(|inner| inner.get("type").and_then(Value::as_str) != Some("text"))
            {
                return Err(invalid(m::error_result_not_text(path)));
            }
        }
        let mut n_states = 0;
        for (inner_idx, inner) in content.iter().enumerate() {
            let inner_path = format!("{path}.tool_result.content.{inner_idx}");
            let inner_type = inner.get("type").and_then(Value::as_str).unwrap_or("");
            match (toolset, inner_type) {
                (_, "image") => {
                    if toolset == Some(ToolsetKind::Computer)
                        && tool_use.name != "zoom"
                        && !self.computer_screenshots_enabled()
                    {
                        self.contract(
                            &inner_path,
                            "an image in a computer toolset result while its `screenshot` member is disabled",
                        )?;
                    }
                    images.push(ImageRef {
                        path: format!("{inner_path}.image"),
                        block: inner,
                        computer_result: toolset == Some(ToolsetKind::Computer),
                    });
                }
                (_, "text") => match inner.get("text") {
                    Some(Value::String(text)) if text.is_empty() => {
                        return Err(invalid(m::TEXT_NON_EMPTY));
                    }
                    Some(Value::String(text)) => {
                        if is_error && toolset.is_some() {
                            self.contract_error_text(&inner_path, text)?;
                        }
                    }
                    _ => {
                        return Err(invalid(m::field_required(&format!(
                            "{inner_path}.text.text"
                        ))));
                    }
                },
                // api-contracts A, "browser_state block": at most one, never on an error.
                (Some(ToolsetKind::Browser), "browser_state") => {
                    n_states += 1;
                    if is_error || n_states > 1 {
                        return Err(invalid(format!(
                            "{inner_path}: a browser toolset result carries at most one `browser_state` block, and none when `is_error` is true"
                        )));
                    }
                    check_browser_state(&inner_path, inner, tool_use.name)?;
                }
                (Some(_), other) => {
                    return Err(invalid(m::toolset_result_content(&inner_path, other)));
                }
                (None, "document" | "search_result") => {}
                (None, other) => {
                    return Err(invalid(format!(
                        "{inner_path}: Input tag '{other}' found using 'type' does not match any of the expected tags: 'text', 'image', 'search_result', 'document'"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Whether the declared computer toolset (if any) has `screenshot` enabled.
    fn computer_screenshots_enabled(&self) -> bool {
        self.declared
            .toolsets
            .iter()
            .find(|t| t.kind == ToolsetKind::Computer)
            .is_none_or(|t| t.enabled.contains(&"screenshot"))
    }

    /// A breach of hands' own contract, when it is checked.
    fn contract(&self, path: &str, rule: &str) -> Result<()> {
        if self.config.hands_contract {
            Err(invalid(m::hands_contract(path, rule)))
        } else {
            Ok(())
        }
    }

    /// hands' contract for a toolset member's error text: one line, no control or bidi
    /// characters, at most 4,096 characters.
    fn contract_error_text(&self, path: &str, text: &str) -> Result<()> {
        if text.chars().any(line_unsafe) {
            self.contract(
                path,
                "a toolset error text must be one line without control or bidi characters",
            )?;
        }
        if text.chars().count() > m::MAX_TOOLSET_ERROR_CHARS {
            self.contract(path, "a toolset error text must be at most 4096 characters")?;
        }
        Ok(())
    }
}

/// Control (C0, DEL, C1), line-separator and bidi characters: what breaks or reorders a line.
fn line_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{2028}'
        | '\u{2029}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// The change kinds of a `browser_state` block (api-contracts A).
const STATE_CHANGE_KINDS: [&str; 4] = [
    "tab_opened",
    "download_started",
    "download_completed",
    "download_failed",
];

/// A `browser_state` block: every tab `{tab_id, title, url, active}` with `url` and `title` of
/// at most 4,096 characters, exactly one active tab when there is any, `state_changes` absent
/// rather than empty, known change kinds, a `tab_opened` only for a listed tab, and after
/// `new_tab` a `tab_opened` for the active tab.
///
/// Spec: api-contracts A, "`browser_state` block"; the Anthropic SDK's `_pipeline.py`
/// (`NEW_TAB_NOT_ACTIVE`, `merge_pending_changes`) and `_sanitize.py` (`FIELD_MAX`).
fn check_browser_state(path: &str, block: &Value, member: &str) -> Result<()> {
    let bad = |why: &str| Err(invalid(m::browser_state_invalid(path, why)));
    let Some(tabs) = block.get("tabs").and_then(Value::as_array) else {
        return bad("`tabs` must be a list");
    };
    let mut ids = Vec::with_capacity(tabs.len());
    let mut active = Vec::new();
    for (tab_idx, tab) in tabs.iter().enumerate() {
        let tab_path = format!("{path}.tabs.{tab_idx}");
        for field in ["tab_id", "title", "url"] {
            match tab.get(field) {
                Some(Value::String(text)) => {
                    if field != "tab_id" && text.chars().count() > m::MAX_BROWSER_STATE_FIELD_CHARS
                    {
                        return Err(invalid(m::browser_state_field_too_long(&format!(
                            "{tab_path}.{field}"
                        ))));
                    }
                }
                None => return Err(invalid(m::field_required(&format!("{tab_path}.{field}")))),
                Some(_) => {
                    return Err(invalid(format!(
                        "{tab_path}.{field}: Input should be a valid string"
                    )));
                }
            }
        }
        let id = tab.get("tab_id").and_then(Value::as_str).unwrap_or("");
        match tab.get("active") {
            Some(Value::Bool(true)) => active.push(id),
            Some(Value::Bool(false)) => {}
            _ => {
                return Err(invalid(format!(
                    "{tab_path}.active: Input should be a valid boolean"
                )));
            }
        }
        ids.push(id);
    }
    if !tabs.is_empty() && active.len() != 1 {
        return bad("exactly one tab must be active when any tab is listed");
    }
    let mut opened = Vec::new();
    match block.get("state_changes") {
        None => {}
        Some(Value::Array(changes)) if changes.is_empty() => {
            return bad("`state_changes` must be left out when there is nothing to report");
        }
        Some(Value::Array(changes)) => {
            for change in changes {
                let kind = change.get("type").and_then(Value::as_str).unwrap_or("");
                if !STATE_CHANGE_KINDS.contains(&kind) {
                    return bad(&format!("unknown state change type '{kind}'"));
                }
                if kind == "tab_opened" {
                    let tab = change.get("tab_id").and_then(Value::as_str).unwrap_or("");
                    if !ids.contains(&tab) {
                        return bad("a `tab_opened` change must name a tab of `tabs`");
                    }
                    opened.push(tab);
                }
            }
        }
        Some(_) => return bad("`state_changes` must be a list"),
    }
    if member == "new_tab" && !active.first().is_some_and(|a| opened.contains(a)) {
        return bad(
            "after `new_tab` the opened tab must be the only active tab, reported `tab_opened`",
        );
    }
    Ok(())
}

fn check_images(
    images: &[ImageRef<'_>],
    config: &AnthropicConfig,
    memo: &mut ImageMemo,
) -> Result<()> {
    if images.len() > config.max_images {
        return Err(invalid(m::too_many_images(images.len(), config.max_images)));
    }
    let many = images.len() > m::MANY_IMAGES;
    for image in images {
        let tier = image.computer_result.then_some(&config.image_tier);
        check_image(&image.path, image.block, many, tier, memo)?;
    }
    Ok(())
}

/// Spec: api-contracts A, "Image limits"; claude-computer-use-tool, "Dimensiona las capturas
/// de pantalla…" and "Gestionar el historial de capturas de pantalla".
fn check_image(
    path: &str,
    block: &Value,
    many: bool,
    tier: Option<&ImageTier>,
    memo: &mut ImageMemo,
) -> Result<()> {
    let Some(source) = block.get("source") else {
        return Err(invalid(m::field_required(&format!("{path}.source"))));
    };
    match source.get("type").and_then(Value::as_str).unwrap_or("") {
        "base64" => {}
        "url" | "file" => return Ok(()),
        other => {
            return Err(invalid(format!(
                "{path}.source: Input tag '{other}' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'"
            )));
        }
    }
    let media_type = source
        .get("media_type")
        .and_then(Value::as_str)
        .unwrap_or("");
    let Some(declared) = ImageFormat::from_media_type(media_type) else {
        return Err(invalid(m::image_media_type_invalid(path)));
    };
    let Some(data) = source.get("data").and_then(Value::as_str) else {
        return Err(invalid(m::field_required(&format!(
            "{path}.source.base64.data"
        ))));
    };
    if data.is_empty() {
        return Err(invalid(m::image_empty(path)));
    }
    if data.len() > m::MAX_IMAGE_BASE64_BYTES {
        return Err(invalid(m::image_too_large(path, data.len())));
    }
    let read = memo.read(data);
    if !read.decoded {
        return Err(invalid(m::image_unreadable(path)));
    }
    match read.format {
        None => return Err(invalid(m::image_unreadable(path))),
        Some(format) if format != declared => {
            return Err(invalid(m::image_media_type_mismatch(path, media_type)));
        }
        Some(_) => {}
    }
    let Some(info) = read.info else {
        return Err(invalid(m::image_unreadable(path)));
    };
    if info.long_edge() > m::MAX_IMAGE_SIDE {
        return Err(invalid(m::image_side_too_large(path)));
    }
    if many && info.long_edge() > m::MAX_IMAGE_SIDE_MANY {
        return Err(invalid(m::image_side_too_large_many(path)));
    }
    if let Some(tier) = tier {
        let over = info.long_edge() > tier.max_long_edge
            || tier
                .max_visual_tokens
                .is_some_and(|t| info.visual_tokens() > t)
            || tier
                .max_pixels
                .is_some_and(|p| u64::from(info.width) * u64::from(info.height) > p);
        if over {
            return Err(invalid(m::image_over_tier(
                path,
                info.width,
                info.height,
                &tier.describe(),
            )));
        }
    }
    Ok(())
}
