//! Approvals: every effect a run can start — a computer action, a bash command, a text-editor
//! command, an ordinary function — is described by a typed [`Effect`] and shown to the run's
//! [`Approver`] before it happens; the pending safety checks of OpenAI computer calls too.
//!
//! Only an explicit [`Decision::Approve`] approves. A run whose cancellation fires while the
//! approver decides counts as a denial. Neither the model's choice nor a message it writes can
//! grant approval: every [`Effect`] is an independent copy made by the runner from the validated
//! input, and decisions come only from the approver.
//!
//! A refused effect never runs: its call is answered with [`refused_text`], an error the model
//! reads (the SDK's `ConfirmDeclinedError` wording), and the run goes on — except in OpenAI's
//! computer tool, whose output must be a screenshot: a refusal there stops the run.
//!
//! Spec: openai-browser-desktop-drivers, "Aprobar acciones y administrar la sesión";
//! claude-computer-use-tool, "Acciones por lotes" (check before each block runs) and "Pedir a un
//! humano que confirme…"; api-contracts B, "Helpers" (`type`, `key` and `hold_key` require a
//! `confirm` callback).

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_sandbox::strings::{BASH_TOOL_NAME, EDITOR_TOOL_NAME};
use hands_sandbox::{BashInput, EditorCommand};
use hands_toolset::actions::DesktopAction;
use serde_json::Value;

/// An approval decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[must_use]
pub enum Decision {
    /// The effect may happen.
    Approve,
    /// It may not.
    Deny,
}

/// A safety check as the approver sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckView {
    /// The check's id.
    pub id: String,
    /// Its code (`malicious_instructions`, `irrelevant_domain`, …), when given.
    pub code: Option<String>,
    /// Its message, when given.
    pub message: Option<String>,
}

/// What `approve_safety_checks` receives: an independent copy of the call.
#[derive(Debug, Clone, PartialEq)]
pub struct SafetyChecksContext {
    /// The computer call.
    pub call_id: String,
    /// The pending checks (possibly empty when a modern call omitted them).
    pub checks: Vec<CheckView>,
    /// The call's actions as the model sent them.
    pub actions: Vec<Value>,
}

/// One computer action, just before it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionContext {
    /// The computer call or `tool_use` id.
    pub call_id: String,
    /// The position of the action in its call or batch.
    pub index: usize,
    /// The action's name: the member (`left_click`, `type`, `screenshot` …; for the legacy
    /// `computer` tool, its `action`) or the OpenAI action type (`click`, `keypress` …).
    pub name: String,
    /// The action as the model sent it (a copy: changing it changes nothing).
    pub action: Value,
    /// The action as it will run: read once from what the model sent, validated against the
    /// screenshot the model saw (the final screenshot of an OpenAI call is
    /// [`DesktopAction::Screenshot`]).
    pub parsed: DesktopAction,
    /// True for the screenshot the runner takes after an OpenAI call's actions.
    pub final_screenshot: bool,
    /// True when the toolset requires a confirmation for this member
    /// (`ComputerConfig::confirm_members`): it runs only on an explicit approval, whatever
    /// [`Approver::reviews`] says.
    pub confirm_required: bool,
}

/// One bash call, just before it runs: the parsed input (a command, or a restart).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashEffect {
    /// The `tool_use` id.
    pub call_id: String,
    /// What the shell is asked to do.
    pub input: BashInput,
}

/// One text-editor call, just before it runs: the parsed command with its path as the model
/// sent it (a `view` reads a file into the conversation, so it is an effect too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorEffect {
    /// The `tool_use` id.
    pub call_id: String,
    /// The command.
    pub command: EditorCommand,
}

/// One ordinary function call, just before it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionEffect {
    /// The `tool_use` id or `call_id`.
    pub call_id: String,
    /// The declared function's name.
    pub name: String,
    /// The arguments as the model sent them, parsed from JSON (a copy).
    pub arguments: Value,
}

/// One call a remote MCP server will run once approved: an OpenAI `mcp_approval_request`, as
/// the API sent it (an independent copy). The answer is bound to `request_id` and
/// `server_label`: approving it lets the API run exactly this tool with exactly these arguments
/// on that server, once.
#[derive(Debug, Clone, PartialEq)]
pub struct McpCallEffect {
    /// The approval request's `id` (answered by `approval_request_id`).
    pub request_id: String,
    /// The declared server's label.
    pub server_label: String,
    /// The declared server's URL as a person may see it ([`crate::mcp::shown_url`]).
    pub server_url: Option<String>,
    /// The tool.
    pub tool: String,
    /// The arguments: the request's JSON text parsed, or the text itself when it is not JSON.
    pub arguments: Value,
    /// True when a run resumes and asks again for an approval given before it stopped, whose
    /// call no completed result shows.
    pub renewed: bool,
}

/// A remote MCP server whose tools the model's provider calls without asking anyone (Claude's
/// MCP connector has no approval requests): shown once, before the run's first request.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerEffect {
    /// The server's name.
    pub server_label: String,
    /// Its URL as a person may see it.
    pub server_url: String,
    /// The tools enabled (`None`: every tool the server lists).
    pub tools: Option<Vec<String>>,
}

/// An effect a run is about to start, as its approver sees it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Effect {
    /// A computer action (Claude's computer toolset or legacy tool, OpenAI's computer tool).
    Computer(ActionContext),
    /// A bash command or restart.
    Bash(BashEffect),
    /// A text-editor command.
    Editor(EditorEffect),
    /// An ordinary function.
    Function(FunctionEffect),
    /// A remote MCP call awaiting approval (OpenAI).
    McpCall(McpCallEffect),
    /// A remote MCP server the API calls unasked (Claude).
    McpServer(McpServerEffect),
}

impl Effect {
    /// Its kind.
    pub fn kind(&self) -> EffectKind {
        match self {
            Effect::Computer(_) => EffectKind::Computer,
            Effect::Bash(_) => EffectKind::Bash,
            Effect::Editor(_) => EffectKind::Editor,
            Effect::Function(_) => EffectKind::Function,
            Effect::McpCall(_) | Effect::McpServer(_) => EffectKind::Mcp,
        }
    }

    /// The call it belongs to.
    pub fn call_id(&self) -> &str {
        match self {
            Effect::Computer(c) => &c.call_id,
            Effect::Bash(b) => &b.call_id,
            Effect::Editor(e) => &e.call_id,
            Effect::Function(f) => &f.call_id,
            Effect::McpCall(m) => &m.request_id,
            Effect::McpServer(m) => &m.server_label,
        }
    }

    /// The name the refusal text gives: the computer member or action, `bash`,
    /// `str_replace_based_edit_tool`, or the function's name.
    pub fn name(&self) -> &str {
        match self {
            Effect::Computer(c) => &c.name,
            Effect::Bash(_) => BASH_TOOL_NAME,
            Effect::Editor(_) => EDITOR_TOOL_NAME,
            Effect::Function(f) => &f.name,
            Effect::McpCall(m) => &m.tool,
            Effect::McpServer(m) => &m.server_label,
        }
    }

    /// Whether the effect runs only on an explicit approval, whatever the approver reviews:
    /// computer members the toolset requires a confirmation for, and every MCP approval (the
    /// runner never answers an approval request for the person).
    pub fn confirm_required(&self) -> bool {
        match self {
            Effect::Computer(c) => c.confirm_required,
            Effect::McpCall(_) | Effect::McpServer(_) => true,
            _ => false,
        }
    }
}

/// The kinds of [`Effect`], for [`Approver::reviews`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EffectKind {
    /// Computer actions.
    Computer,
    /// bash.
    Bash,
    /// The text editor.
    Editor,
    /// Ordinary functions.
    Function,
    /// Remote MCP calls and servers.
    Mcp,
}

impl EffectKind {
    /// Every kind.
    pub const ALL: [EffectKind; 5] = [
        EffectKind::Computer,
        EffectKind::Bash,
        EffectKind::Editor,
        EffectKind::Function,
        EffectKind::Mcp,
    ];
}

/// Approves a run's effects. By default it reviews nothing: every effect runs, except a
/// computer member the toolset requires a confirmation for, which is always shown to
/// [`Approver::approve`] (whose default approves). A runner without an approver refuses to start
/// when its computer toolset requires confirmations, and denies every pending safety check.
#[async_trait]
pub trait Approver: Send {
    /// Approves the pending safety checks of an OpenAI computer call before any of its actions
    /// run.
    async fn approve_safety_checks(
        &mut self,
        context: SafetyChecksContext,
        cancel: &CancellationToken,
    ) -> Decision;

    /// Whether every effect of `kind` is shown to [`Approver::approve`] before it runs (for
    /// computer actions of OpenAI calls, the final screenshot included).
    fn reviews(&self, kind: EffectKind) -> bool {
        let _ = kind;
        false
    }

    /// Approves one effect immediately before it runs.
    async fn approve(&mut self, effect: Effect, cancel: &CancellationToken) -> Decision {
        let _ = (effect, cancel);
        Decision::Approve
    }
}

/// Approves everything (for scripts and drills: the policies that apply still apply).
#[derive(Debug, Clone, Copy, Default)]
pub struct ApproveAll;

#[async_trait]
impl Approver for ApproveAll {
    async fn approve_safety_checks(
        &mut self,
        _: SafetyChecksContext,
        _: &CancellationToken,
    ) -> Decision {
        Decision::Approve
    }
}

/// Reviews and refuses every safety check and every effect.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAll;

#[async_trait]
impl Approver for DenyAll {
    async fn approve_safety_checks(
        &mut self,
        _: SafetyChecksContext,
        _: &CancellationToken,
    ) -> Decision {
        Decision::Deny
    }

    fn reviews(&self, _: EffectKind) -> bool {
        true
    }

    async fn approve(&mut self, _: Effect, _: &CancellationToken) -> Decision {
        Decision::Deny
    }
}

/// The start of the text answering a refused call (the SDK's `ConfirmDeclinedError`).
pub const REFUSED_PREFIX: &str = "The user did not grant permission to run '";
/// The end of the text answering a refused call.
pub const REFUSED_SUFFIX: &str = "'. Do not retry it unless the user asks you to.";

/// The error the model reads for a call whose effect the approver refused: the wording of the
/// Anthropic SDK's `ConfirmDeclinedError`. `name` is a member, tool or declared function name,
/// never free text of the model's.
pub fn refused_text(name: &str) -> String {
    format!("{REFUSED_PREFIX}{name}{REFUSED_SUFFIX}")
}

/// Asks an approver, treating cancellation during the decision as a denial.
pub(crate) async fn decide<F>(decision: F, cancel: &CancellationToken) -> Decision
where
    F: std::future::Future<Output = Decision>,
{
    tokio::select! {
        d = decision => d,
        () = cancel.cancelled() => Decision::Deny,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_is_the_sdk_wording() {
        assert_eq!(
            refused_text("bash"),
            "The user did not grant permission to run 'bash'. Do not retry it unless the user asks you to."
        );
    }

    #[tokio::test]
    async fn cancellation_while_deciding_denies() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let never = std::future::pending::<Decision>();
        assert_eq!(decide(never, &cancel).await, Decision::Deny);
    }

    #[test]
    fn effects_name_what_they_run() {
        let bash = Effect::Bash(BashEffect {
            call_id: "toolu_1".into(),
            input: BashInput::Restart,
        });
        assert_eq!(
            (bash.kind(), bash.name(), bash.call_id()),
            (EffectKind::Bash, "bash", "toolu_1")
        );
        let editor = Effect::Editor(EditorEffect {
            call_id: "toolu_2".into(),
            command: EditorCommand::View {
                path: "/etc/hostname".into(),
                view_range: None,
            },
        });
        assert_eq!(editor.name(), "str_replace_based_edit_tool");
        assert!(!editor.confirm_required());
        let typing = Effect::Computer(ActionContext {
            call_id: "toolu_3".into(),
            index: 0,
            name: "type".into(),
            action: serde_json::json!({"text": "hi"}),
            parsed: DesktopAction::Type { text: "hi".into() },
            final_screenshot: false,
            confirm_required: true,
        });
        assert!(typing.confirm_required());
        assert_eq!(typing.name(), "type");
    }
}
