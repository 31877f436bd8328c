//! What a run can execute besides the computer: the browser toolset (behind [`BrowserTools`]),
//! the sandbox's bash and text editor, and ordinary functions.

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_core::browser::Browser;
use hands_core::image::EncodedImage;
use hands_sandbox::{BashTool, EditorTool};
use hands_toolset::browser::output::CallOutput;
use hands_toolset::browser::{BrowserFault, BrowserToolCall, BrowserToolset, ImageDetail};
use hands_toolset::claude_browser::{Batch as ClaudeBatch, BrowserResult, ClaudeBrowserToolset};
use hands_toolset::wire::ToolUse;
use serde_json::Value;

use crate::functions::Functions;

/// The answer to one browser call.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowserCallOutcome {
    /// False for a refused, failed or skipped call (later browser calls of the same response are
    /// then skipped).
    pub ok: bool,
    /// The text the model reads (JSON for structured results).
    pub text: String,
    /// Images (screenshot, zoom).
    pub images: Vec<EncodedImage>,
    /// The `detail` the toolset gives its images (`image_detail`), for an OpenAI
    /// `input_image`.
    pub detail: Option<ImageDetail>,
}

/// A browser toolset as the runner drives it: declarations for both APIs, and one call at a time
/// in response order. The toolset applies its own consent, URL policy and privacy rules.
#[async_trait]
pub trait BrowserTools: Send {
    /// The tool names it answers (e.g. `browser_click`).
    fn owns(&self, name: &str) -> bool;

    /// OpenAI function tool declarations, in the toolset's order.
    fn openai_declarations(&self) -> Vec<Value>;

    /// Anthropic custom tool declarations, in the toolset's order.
    fn anthropic_declarations(&self) -> Vec<Value>;

    /// Runs one call. `skip` is set after an earlier browser call of the same response failed:
    /// the toolset answers it as skipped without acting. An `Err` stops the run.
    async fn call(
        &mut self,
        call_id: &str,
        name: &str,
        arguments: &Value,
        skip: bool,
        cancel: &CancellationToken,
    ) -> Result<BrowserCallOutcome, BrowserStop>;

    /// Runs one call whose arguments arrive as JSON text (an OpenAI `function_call`): text that
    /// is not JSON is answered "not valid JSON" and nothing runs. The default parses, then
    /// [`BrowserTools::call`]s.
    async fn call_text(
        &mut self,
        call_id: &str,
        name: &str,
        arguments: &str,
        skip: bool,
        cancel: &CancellationToken,
    ) -> Result<BrowserCallOutcome, BrowserStop> {
        match serde_json::from_str::<Value>(arguments) {
            Ok(value) => self.call(call_id, name, &value, skip, cancel).await,
            Err(why) => Ok(BrowserCallOutcome {
                ok: false,
                text: serde_json::json!({"ok": false, "error": not_json(name, &why)}).to_string(),
                images: Vec::new(),
                detail: None,
            }),
        }
    }
}

/// The answer to arguments that are not JSON.
fn not_json(name: &str, why: &serde_json::Error) -> String {
    hands_toolset::errtext::error_line(&format!(
        "`{}` arguments are not valid JSON ({why}); send one JSON object",
        hands_toolset::errtext::name(name)
    ))
}

/// Why a browser call stops the run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BrowserStop {
    /// The run was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// The browser is gone, its state could not be read, or it returned an invalid result.
    #[error("{0}")]
    Fault(String),
}

#[async_trait]
impl<B: Browser + 'static> BrowserTools for BrowserToolset<B> {
    fn owns(&self, name: &str) -> bool {
        BrowserToolset::owns(self, name)
    }

    fn openai_declarations(&self) -> Vec<Value> {
        self.openai_tools()
    }

    fn anthropic_declarations(&self) -> Vec<Value> {
        self.anthropic_tools()
    }

    async fn call(
        &mut self,
        call_id: &str,
        name: &str,
        arguments: &Value,
        skip: bool,
        cancel: &CancellationToken,
    ) -> Result<BrowserCallOutcome, BrowserStop> {
        let call = BrowserToolCall::from_value(call_id, name, arguments.clone());
        run_call(self, call, skip, cancel).await
    }

    async fn call_text(
        &mut self,
        call_id: &str,
        name: &str,
        arguments: &str,
        skip: bool,
        cancel: &CancellationToken,
    ) -> Result<BrowserCallOutcome, BrowserStop> {
        let call = BrowserToolCall::from_text(call_id, name, arguments);
        run_call(self, call, skip, cancel).await
    }
}

/// How the runner drives the function-tool toolset: one call, or its skip (with the current
/// state, as the SDK answers it).
async fn run_call<B: Browser + 'static>(
    toolset: &BrowserToolset<B>,
    call: BrowserToolCall,
    skip: bool,
    cancel: &CancellationToken,
) -> Result<BrowserCallOutcome, BrowserStop> {
    let (output, fault) = if skip {
        toolset.skip(&call, cancel).await
    } else {
        toolset.call(&call, cancel).await
    };
    match fault {
        None => Ok(outcome_of(&output, toolset.image_detail())),
        Some(BrowserFault::Cancelled) => Err(BrowserStop::Cancelled),
        Some(other) => Err(BrowserStop::Fault(other.to_string())),
    }
}

/// A call's output as the runner sends it.
fn outcome_of(output: &CallOutput, detail: Option<ImageDetail>) -> BrowserCallOutcome {
    BrowserCallOutcome {
        ok: output.ok(),
        text: output.text(),
        images: output.image().cloned().into_iter().collect(),
        detail: output.image().and(detail),
    }
}

/// Claude's browser toolset (`browser_toolset_20260801`, blocks with `toolset_name: "browser"`)
/// as a run drives it: a batch per turn, its own halt text, `browser_state` blocks.
#[async_trait]
pub trait ClaudeBrowserTools: Send {
    /// The `tools` entry.
    fn declaration(&self) -> Value;
    /// Whether a block is this toolset's.
    fn owns(&self, tool_use: &ToolUse) -> bool;
    /// Runs one block of the turn's browser batch.
    async fn run_block(
        &mut self,
        batch: &mut ClaudeBatch,
        tool_use: &ToolUse,
        cancel: &CancellationToken,
    ) -> BrowserResult;
    /// Ends the batch; a fault stops the run.
    fn finish_batch(&mut self, batch: ClaudeBatch) -> Option<BrowserFault>;
}

#[async_trait]
impl<B: Browser + Sync + 'static> ClaudeBrowserTools for ClaudeBrowserToolset<B> {
    fn declaration(&self) -> Value {
        ClaudeBrowserToolset::declaration(self)
    }

    fn owns(&self, tool_use: &ToolUse) -> bool {
        ClaudeBrowserToolset::owns(self, tool_use)
    }

    async fn run_block(
        &mut self,
        batch: &mut ClaudeBatch,
        tool_use: &ToolUse,
        cancel: &CancellationToken,
    ) -> BrowserResult {
        ClaudeBrowserToolset::run_block(self, batch, tool_use, cancel).await
    }

    fn finish_batch(&mut self, batch: ClaudeBatch) -> Option<BrowserFault> {
        ClaudeBrowserToolset::finish_batch(self, batch)
    }
}

/// The non-computer tools of a run.
#[derive(Default)]
pub struct Toolbox {
    /// The browser toolset as function (custom) tools.
    pub browser: Option<Box<dyn BrowserTools>>,
    /// Claude's browser toolset (Anthropic runs).
    pub claude_browser: Option<Box<dyn ClaudeBrowserTools>>,
    /// Claude's bash tool (`bash_20250124`).
    pub bash: Option<BashTool>,
    /// Claude's text editor (`text_editor_20250728`).
    pub editor: Option<EditorTool>,
    /// Ordinary functions.
    pub functions: Functions,
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolbox")
            .field("browser", &self.browser.is_some())
            .field("claude_browser", &self.claude_browser.is_some())
            .field("bash", &self.bash.is_some())
            .field("editor", &self.editor.is_some())
            .field("functions", &self.functions)
            .finish()
    }
}

/// What a request asks remote servers to do, named for its pending record: each MCP server's
/// label, then `server tool <type>` for each server tool (`mcp` entries aside, named by their
/// servers). Empty when the request can have no remote effect.
pub(crate) fn remote_actors(mcp_servers: Vec<String>, tools: &[Value]) -> Vec<String> {
    let mut actors = mcp_servers;
    actors.extend(
        tools
            .iter()
            .filter(|t| is_server_tool(t))
            .filter_map(|t| t.get("type").and_then(Value::as_str))
            .filter(|ty| *ty != "mcp")
            .map(|ty| format!("server tool {ty}")),
    );
    actors
}

/// Tool types the API runs itself (server tools): a forced `tool_choice` that allows one of them
/// can still end.
pub fn is_server_tool(tool: &Value) -> bool {
    let ty = tool.get("type").and_then(Value::as_str).unwrap_or("");
    [
        "web_search",
        "web_fetch",
        "code_execution",
        "file_search",
        "image_generation",
        "mcp",
        "code_interpreter",
    ]
    .iter()
    .any(|prefix| ty.starts_with(prefix))
}
