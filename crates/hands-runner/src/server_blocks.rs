//! The server-run parts of a Claude answer, checked before any local tool runs: the MCP
//! connector's `mcp_tool_use` / `mcp_tool_result` blocks and server tools' `server_tool_use` /
//! `*_tool_result` blocks. They stay in the conversation exactly as received (the assistant
//! message is replayed verbatim, the message's `container` is sent back); what the runner
//! decides is whether their results let the turn's local calls run.
//!
//! An `mcp_tool_use` on a server the run did not declare, or of a tool its toolset does not
//! enable, stops the run. A use without its result in the message (pending), an
//! `mcp_tool_result` with `is_error`, or a server tool result whose content is an error object
//! (`web_search_tool_result_error`, `code_execution_tool_result_error`, …) stops the turn before
//! its local effects.
//!
//! Spec: openai-browser-desktop-drivers, "Combinar acciones del navegador con otras
//! herramientas" (the rule, applied to both APIs); api-contracts A ("MCP connector");
//! anthropic 2.10 `BetaMCPToolUseBlock`, `BetaMCPToolResultBlock`, `BetaServerToolUseBlock`,
//! `BetaWebSearchToolResultErrorObject`, `BetaCodeExecutionToolResultErrorObject`.

use hands_models::anthropic::ContentBlock;
use serde_json::Value;

use crate::mcp::MCP_TOOLSET_TYPE;
use crate::outcome::StopReason;

/// `mcp_tool_use`.
const MCP_TOOL_USE: &str = "mcp_tool_use";
/// `mcp_tool_result`.
const MCP_TOOL_RESULT: &str = "mcp_tool_result";
/// `server_tool_use`.
const SERVER_TOOL_USE: &str = "server_tool_use";

/// A declared MCP toolset: which tools of its server the model may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClaudeToolset {
    pub(crate) server: String,
    default_enabled: bool,
    configs: Vec<(String, bool)>,
}

impl ClaudeToolset {
    /// From an `mcp_toolset` entry.
    pub(crate) fn parse(entry: &Value) -> Option<ClaudeToolset> {
        if entry.get("type").and_then(Value::as_str) != Some(MCP_TOOLSET_TYPE) {
            return None;
        }
        let enabled = |config: Option<&Value>| {
            config
                .and_then(|c| c.get("enabled"))
                .and_then(Value::as_bool)
        };
        Some(ClaudeToolset {
            server: entry
                .get("mcp_server_name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            default_enabled: enabled(entry.get("default_config")).unwrap_or(true),
            configs: entry
                .get("configs")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(tool, config)| enabled(Some(config)).map(|e| (tool.clone(), e)))
                .collect(),
        })
    }

    /// The tools it enables when it enables only some (`default_config.enabled: false`).
    pub(crate) fn enabled_only(&self) -> Option<Vec<String>> {
        (!self.default_enabled).then(|| {
            self.configs
                .iter()
                .filter(|(_, enabled)| *enabled)
                .map(|(name, _)| name.clone())
                .collect()
        })
    }

    fn enables(&self, tool: &str) -> bool {
        self.configs
            .iter()
            .find(|(name, _)| name == tool)
            .map_or(self.default_enabled, |(_, enabled)| *enabled)
    }
}

fn text<'a>(block: &'a Value, key: &str) -> Option<&'a str> {
    block.get(key).and_then(Value::as_str)
}

fn shown(value: &str) -> String {
    value
        .chars()
        .filter(|c| c.is_ascii_graphic())
        .take(64)
        .collect()
}

/// Checks a message's server blocks. `Ok(Some(why))` when a server result failed or is still
/// pending: the turn's local calls must not run.
pub(crate) fn check(
    content: &[ContentBlock],
    toolsets: &[ClaudeToolset],
) -> Result<Option<String>, StopReason> {
    let blocks: Vec<Value> = content
        .iter()
        .map(ContentBlock::to_value)
        .filter(|b| {
            let ty = text(b, "type").unwrap_or("");
            ty == MCP_TOOL_USE || ty == SERVER_TOOL_USE || ty.ends_with("_tool_result")
        })
        .collect();
    let mut trouble = None;
    for block in &blocks {
        let ty = text(block, "type").unwrap_or("");
        let id = text(block, "id").unwrap_or("");
        if ty == MCP_TOOL_USE {
            let server = text(block, "server_name").unwrap_or("");
            let name = text(block, "name").unwrap_or("");
            let Some(toolset) = toolsets.iter().find(|t| t.server == server) else {
                return Err(StopReason::InvalidResponse(format!(
                    "an `mcp_tool_use` names MCP server `{}`, which this run did not declare",
                    shown(server)
                )));
            };
            if !toolset.enables(name) {
                return Err(StopReason::InvalidResponse(format!(
                    "an `mcp_tool_use` called tool `{}` of MCP server `{}`, which its toolset does not enable",
                    shown(name),
                    shown(server)
                )));
            }
        }
        if ty == MCP_TOOL_USE || ty == SERVER_TOOL_USE {
            let answered = blocks.iter().any(|r| {
                let rt = text(r, "type").unwrap_or("");
                let kind_ok = if ty == MCP_TOOL_USE {
                    rt == MCP_TOOL_RESULT
                } else {
                    rt.ends_with("_tool_result") && rt != MCP_TOOL_RESULT
                };
                kind_ok && text(r, "tool_use_id") == Some(id)
            });
            if !answered && trouble.is_none() {
                trouble = Some(format!(
                    "`{ty}` {} has no result in the message (still pending)",
                    shown(id)
                ));
            }
        }
        if ty.ends_with("_tool_result") && trouble.is_none() {
            let failed = if ty == MCP_TOOL_RESULT {
                block.get("is_error").and_then(Value::as_bool) == Some(true)
            } else {
                block
                    .get("content")
                    .and_then(|c| text(c, "type"))
                    .is_some_and(|t| t.ends_with("_error"))
            };
            if failed {
                trouble = Some(format!(
                    "`{ty}` for {} reports an error",
                    shown(text(block, "tool_use_id").unwrap_or(""))
                ));
            }
        }
    }
    Ok(trouble)
}

/// The message's `container` id, when a container tool ran.
pub(crate) fn container_id(extra: &serde_json::Map<String, Value>) -> Option<String> {
    extra
        .get("container")
        .and_then(|c| c.get("id"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn blocks(values: &[Value]) -> Vec<ContentBlock> {
        values
            .iter()
            .map(|v| ContentBlock::from_value(v).unwrap())
            .collect()
    }

    #[test]
    fn server_blocks() {
        let toolsets = vec![
            ClaudeToolset::parse(&json!({"type": "mcp_toolset", "mcp_server_name": "notes",
                "default_config": {"enabled": false}, "configs": {"add": {"enabled": true}}}))
            .unwrap(),
        ];
        let used = |name: &str, server: &str| {
            json!({"type": "mcp_tool_use", "id": "m1", "name": name, "server_name": server,
                "input": {}})
        };
        let result = |is_error: bool| {
            json!({"type": "mcp_tool_result", "tool_use_id": "m1", "is_error": is_error,
                "content": [{"type": "text", "text": "ok"}]})
        };
        assert_eq!(
            check(&blocks(&[used("add", "notes"), result(false)]), &toolsets),
            Ok(None)
        );
        assert!(matches!(
            check(&blocks(&[used("add", "notes"), result(true)]), &toolsets),
            Ok(Some(why)) if why.contains("error")
        ));
        assert!(matches!(
            check(&blocks(&[used("add", "notes")]), &toolsets),
            Ok(Some(why)) if why.contains("pending")
        ));
        for bad in [used("drop", "notes"), used("add", "other")] {
            assert!(matches!(
                check(&blocks(&[bad, result(false)]), &toolsets),
                Err(StopReason::InvalidResponse(_))
            ));
        }
        let search = json!({"type": "server_tool_use", "id": "s1", "name": "web_search",
            "input": {"query": "q"}});
        let search_error = json!({"type": "web_search_tool_result", "tool_use_id": "s1",
            "content": {"type": "web_search_tool_result_error", "error_code": "unavailable"}});
        let search_ok = json!({"type": "web_search_tool_result", "tool_use_id": "s1",
            "content": []});
        assert_eq!(
            check(&blocks(&[search.clone(), search_ok]), &toolsets),
            Ok(None)
        );
        assert!(
            check(&blocks(&[search, search_error]), &toolsets)
                .unwrap()
                .is_some()
        );
    }
}
