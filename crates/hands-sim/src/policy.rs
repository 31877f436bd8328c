//! Where assistant turns come from: a script (a queue of turns) or a [`Policy`] that looks at
//! each request; plus small builders for the blocks and items a turn holds.
//!
//! A turn carries only what a model decides. The server fills in the rest: ids (`toolu_…`,
//! `call_…`, `cu_…`, `fc_…`, `rs_…`, `msg_…`), thinking signatures and encrypted reasoning,
//! safety-check ids, usage, `stop_reason` (`tool_use` when the turn calls a tool, else
//! `end_turn`; [`Turn::stopped`] sets another) and a call's `status` (`completed` unless the
//! turn sets one, see [`with_status`]).

use std::collections::VecDeque;

use serde_json::{Value, json};

/// One assistant turn.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Turn {
    /// Anthropic content blocks (`text`, `tool_use`, `thinking`, `redacted_thinking`).
    /// Answering an OpenAI request with this is a policy error.
    Blocks(Vec<Value>),
    /// OpenAI output items (`message`, `reasoning`, `computer_call`, `function_call`).
    /// Answering an Anthropic request with this is a policy error.
    Items(Vec<Value>),
    /// A text-only answer that ends the run, rendered in whichever protocol was called.
    Text(String),
    /// A turn that stopped for another reason than its own end: Anthropic `stop_reason`
    /// (`max_tokens`, `pause_turn`, `refusal`, `model_context_window_exceeded`, …); OpenAI
    /// `status: "incomplete"` with `incomplete_details.reason` (`max_output_tokens`,
    /// `content_filter`) and a `response.incomplete` terminal event.
    Stopped {
        /// What the model produced before it stopped.
        turn: Box<Turn>,
        /// The reason, as the API spells it.
        reason: String,
    },
}

impl Turn {
    /// A text-only turn.
    pub fn text(text: impl Into<String>) -> Turn {
        Turn::Text(text.into())
    }

    /// `turn`, stopped for `reason` (see [`Turn::Stopped`]).
    pub fn stopped(turn: Turn, reason: &str) -> Turn {
        Turn::Stopped {
            turn: Box::new(turn),
            reason: reason.to_owned(),
        }
    }

    /// The turn without its stop reason, and the reason.
    pub(crate) fn split_stop(self) -> (Turn, Option<String>) {
        match self {
            Turn::Stopped { turn, reason } => (turn.split_stop().0, Some(reason)),
            other => (other, None),
        }
    }
}

/// Decides the next assistant turn from the request, the way a model would.
///
/// `request` is the body exactly as the client sent it (an OpenAI request chained with
/// `previous_response_id` holds only the new items). [`crate::Api::of_request`] tells the
/// protocol. A policy is called with the server's lock held: keep it quick and never call the
/// server from inside it.
pub trait Policy: Send {
    /// The next turn.
    fn next_turn(&mut self, request: &Value) -> Turn;
}

impl<F> Policy for F
where
    F: FnMut(&Value) -> Turn + Send,
{
    fn next_turn(&mut self, request: &Value) -> Turn {
        self(request)
    }
}

/// The source of turns: a script, consumed front first, then (when set) a policy.
#[derive(Default)]
pub(crate) struct TurnSource {
    pub(crate) script: VecDeque<Turn>,
    pub(crate) policy: Option<Box<dyn Policy>>,
}

impl TurnSource {
    /// The next turn, or `None` when the script is empty and no policy is set.
    pub(crate) fn next(&mut self, request: &Value) -> Option<Turn> {
        if let Some(turn) = self.script.pop_front() {
            return Some(turn);
        }
        self.policy.as_mut().map(|p| p.next_turn(request))
    }
}

/// Anthropic `text` block.
pub fn text(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// Anthropic `tool_use` block for a custom or legacy tool (id filled by the server).
pub fn tool_use(name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "name": name, "input": input})
}

/// Anthropic `tool_use` block for a toolset member, e.g.
/// `toolset_use("computer", "left_click", json!({"coordinate": [10, 20]}))`.
pub fn toolset_use(toolset_name: &str, member: &str, input: Value) -> Value {
    json!({"type": "tool_use", "name": member, "toolset_name": toolset_name, "input": input})
}

/// Anthropic `thinking` block (signature filled by the server).
pub fn thinking(text: &str) -> Value {
    json!({"type": "thinking", "thinking": text})
}

/// OpenAI assistant `message` item with one `output_text` part.
pub fn message(text: &str) -> Value {
    json!({"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

/// OpenAI `computer_call` item with an `actions` batch.
pub fn computer_call(actions: Vec<Value>) -> Value {
    json!({"type": "computer_call", "actions": actions, "pending_safety_checks": []})
}

/// OpenAI `computer_call` item whose safety checks (`{"code","message"}`; ids filled by the
/// server) must be acknowledged before it is answered.
pub fn computer_call_with_checks(actions: Vec<Value>, checks: Vec<Value>) -> Value {
    json!({"type": "computer_call", "actions": actions, "pending_safety_checks": checks})
}

/// OpenAI `function_call` item; `arguments` is serialized to the JSON string the API sends.
pub fn function_call(name: &str, arguments: Value) -> Value {
    json!({"type": "function_call", "name": name, "arguments": arguments.to_string()})
}

/// `item` (an OpenAI call) with the `status` a model left it in: `in_progress` or `incomplete`
/// for a call cut short (the server keeps a status it is given; otherwise `completed`).
pub fn with_status(mut item: Value, status: &str) -> Value {
    item["status"] = json!(status);
    item
}

/// OpenAI `mcp_approval_request` item (id filled by the server), asking to approve an MCP call.
/// The server emits it even when the request declares no MCP tool, so a client's refusal can be
/// tested.
pub fn mcp_approval_request(server_label: &str, name: &str, arguments: Value) -> Value {
    json!({"type": "mcp_approval_request", "server_label": server_label, "name": name,
        "arguments": arguments.to_string()})
}

/// The model calls `tool` of the declared MCP server `server` (OpenAI: its `server_label`;
/// Anthropic: its `mcp_servers` name), in either API. The simulator does the API's part for real:
/// it lists the server's tools, and on OpenAI asks for approval (`mcp_approval_request`) when
/// `require_approval` wants one, else calls the tool (`mcp_call`); on Anthropic it calls the
/// tool (`mcp_tool_use` and `mcp_tool_result`). A tool the server does not list, or the
/// declaration does not allow, is a policy error.
pub fn mcp_use(server: &str, tool: &str, arguments: Value) -> Value {
    json!({"type": crate::mcp::MCP_INTENT, "server": server, "name": tool, "arguments": arguments})
}

/// OpenAI `web_search_call` item (id filled by the server; `status` `completed` unless set with
/// [`with_status`]).
pub fn web_search_call(query: &str) -> Value {
    json!({"type": "web_search_call", "action": {"type": "search", "query": query,
        "sources": [{"type": "url", "url": "https://example.com/"}]}})
}

/// OpenAI `file_search_call` item.
pub fn file_search_call(query: &str) -> Value {
    json!({"type": "file_search_call", "queries": [query], "results": [
        {"file_id": "file_sim", "filename": "notes.txt", "score": 0.9, "text": "a note"}]})
}

/// OpenAI `code_interpreter_call` item (the server fills `container_id` from the declared
/// container, or a new one for `{"type": "auto"}`).
pub fn code_interpreter_call(code: &str, logs: &str) -> Value {
    json!({"type": "code_interpreter_call", "code": code,
        "outputs": [{"type": "logs", "logs": logs}]})
}

/// OpenAI `image_generation_call` item with a tiny generated image.
pub fn image_generation_call(prompt: &str) -> Value {
    json!({"type": "image_generation_call", "revised_prompt": prompt, "output_format": "png",
        "result": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="})
}

/// Anthropic `server_tool_use` block of a server tool (`web_search`, `code_execution`, …; id
/// filled by the server).
pub fn server_tool_use(name: &str, input: Value) -> Value {
    json!({"type": "server_tool_use", "name": name, "input": input})
}

/// Anthropic server tool result block (`web_search_tool_result`,
/// `code_execution_tool_result`, …) answering the `server_tool_use` before it (its
/// `tool_use_id` filled by the server). A code-execution result puts the message's
/// `container` in the answer.
pub fn server_tool_result(result_type: &str, content: Value) -> Value {
    json!({"type": result_type, "content": content})
}

/// OpenAI `reasoning` item with one summary text.
pub fn reasoning(summary: &str) -> Value {
    json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": summary}]})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_first_then_policy() {
        let mut source = TurnSource {
            script: VecDeque::from([Turn::text("scripted")]),
            policy: Some(Box::new(|_: &Value| Turn::text("from policy"))),
        };
        assert_eq!(source.next(&json!({})), Some(Turn::text("scripted")));
        assert_eq!(source.next(&json!({})), Some(Turn::text("from policy")));
        let mut empty = TurnSource::default();
        assert_eq!(empty.next(&json!({})), None);
    }

    #[test]
    fn builders() {
        assert_eq!(
            toolset_use("computer", "left_click", json!({"coordinate": [1, 2]})),
            json!({"type": "tool_use", "name": "left_click", "toolset_name": "computer",
                "input": {"coordinate": [1, 2]}})
        );
        assert_eq!(
            function_call("browser_click", json!({"x": 1}))["arguments"],
            json!("{\"x\":1}")
        );
    }
}
