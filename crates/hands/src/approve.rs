//! Approvals for `hands run`: ask a person on the terminal, approve everything the policies
//! allow (for scripts), or refuse every consequential effect. One type answers the runner's
//! approvals (computer actions and safety checks, bash, the text editor, ordinary functions) and
//! the browser toolsets' `confirm`.

use std::fmt::Write as _;
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::sync::Arc;

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_runner::approval::{
    ActionContext, Approver, BashEffect, Decision, EditorEffect, Effect, EffectKind,
    FunctionEffect, McpCallEffect, McpServerEffect, SafetyChecksContext,
};
use hands_sandbox::{BashInput, EditorCommand};
use hands_toolset::browser::consent::{Approval, CallbackError, Confirm, ConfirmContext};
use tokio::sync::Mutex;

use crate::cli::ApproveArg;

/// Asks a person one question and returns `Some(true)` for yes; `None` when nobody answered.
/// Blocking: it runs on a blocking thread.
pub type Ask = Arc<dyn Fn(&str) -> Option<bool> + Send + Sync>;

/// Where a question for a person goes.
#[derive(Clone)]
enum Asker {
    /// A blocking question (the terminal), run on a blocking thread.
    Blocking(Ask),
    /// The live page of `hands run --view`: Approve / Deny buttons.
    Page(hands_view::Live),
}

/// How a run's effects are decided.
#[derive(Clone)]
pub struct TerminalApprover {
    mode: ApproveArg,
    asker: Asker,
    /// One question at a time.
    one_at_a_time: Arc<Mutex<()>>,
    /// Where each decision is appended (`approvals.jsonl` of the run directory), if anywhere.
    record: Option<Arc<std::sync::Mutex<std::fs::File>>>,
}

impl TerminalApprover {
    /// An approver asking on the terminal; `ask` without a terminal on stdin refuses (nobody can
    /// answer).
    pub fn new(mode: ApproveArg) -> TerminalApprover {
        TerminalApprover::with_ask(terminal_mode(mode), Arc::new(ask_on_terminal))
    }

    /// Like [`TerminalApprover::new`], with `bar` hidden while a question waits for its answer
    /// (its ticks would otherwise clear the prompt's line).
    pub fn with_progress(mode: ApproveArg, bar: indicatif::ProgressBar) -> TerminalApprover {
        let ask: Ask = Arc::new(move |question: &str| bar.suspend(|| ask_on_terminal(question)));
        TerminalApprover::with_ask(terminal_mode(mode), ask)
    }

    /// An approver whose questions go to `ask`.
    pub fn with_ask(mode: ApproveArg, ask: Ask) -> TerminalApprover {
        TerminalApprover {
            mode,
            asker: Asker::Blocking(ask),
            one_at_a_time: Arc::new(Mutex::new(())),
            record: None,
        }
    }

    /// An approver that asks every question on the live page of `hands run --view` (the same
    /// questions, for every kind of effect, as on the terminal).
    pub fn on_page(live: hands_view::Live) -> TerminalApprover {
        TerminalApprover {
            mode: ApproveArg::Ask,
            asker: Asker::Page(live),
            one_at_a_time: Arc::new(Mutex::new(())),
            record: None,
        }
    }

    /// The same approver, appending each decision (the question, the answer, who decided) as
    /// one JSON line to `approvals.jsonl` in `run_dir`, for `hands view` and the run's trace.
    pub fn recording(mut self, run_dir: &std::path::Path) -> anyhow::Result<TerminalApprover> {
        let path = run_dir.join(hands_view::trace::APPROVALS);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| anyhow::anyhow!("opening {}: {e}", path.display()))?;
        self.record = Some(Arc::new(std::sync::Mutex::new(file)));
        Ok(self)
    }

    /// Appends one decision to the record, if any.
    fn note(&self, question: &str, approved: bool, by: &str) {
        let Some(record) = &self.record else { return };
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let Ok(mut file) = record.lock() else { return };
        let line = serde_json::json!({"question": question, "approved": approved, "by": by,
            "unix_ms": unix_ms});
        if let Err(e) = writeln!(file, "{line}") {
            tracing::warn!(error = %e, "could not record an approval");
        }
    }

    /// Asks `question` (the answer must be `y` or `yes`), unless the mode decides alone.
    async fn decide(&self, question: String, cancel: &CancellationToken) -> bool {
        let (approved, by) = match self.mode {
            ApproveArg::All => (true, "--approve all"),
            ApproveArg::None => (false, "--approve none"),
            ApproveArg::Ask => {
                let _one = self.one_at_a_time.lock().await;
                match &self.asker {
                    Asker::Blocking(ask) => {
                        let ask = Arc::clone(ask);
                        let asked_question = question.clone();
                        let asked = tokio::task::spawn_blocking(move || ask(&asked_question));
                        tokio::select! {
                            answer = asked => match answer {
                                Ok(Some(yes)) => (yes, "person (terminal)"),
                                _ => (false, "nobody answered"),
                            },
                            () = cancel.cancelled() => (false, "cancelled"),
                        }
                    }
                    Asker::Page(live) => {
                        let yes = live
                            .ask(question.clone(), serde_json::Value::Null, cancel)
                            .await;
                        (
                            yes,
                            if cancel.is_cancelled() {
                                "cancelled"
                            } else {
                                "person (page)"
                            },
                        )
                    }
                }
            }
        };
        self.note(&question, approved, by);
        approved
    }
}

/// `ask` without a terminal on stdin becomes `none`: nobody can answer.
fn terminal_mode(mode: ApproveArg) -> ApproveArg {
    if mode == ApproveArg::Ask && !std::io::stdin().is_terminal() {
        eprintln!("hands: stdin is not a terminal, so nobody can approve: --approve none");
        ApproveArg::None
    } else {
        mode
    }
}

/// Asks on stderr and reads one line from stdin.
fn ask_on_terminal(question: &str) -> Option<bool> {
    eprint!("\n{question}\nApprove? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok()?;
    Some(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Text of the model's, made safe to show on a terminal: every control character (newlines,
/// escape sequences, carriage returns), bidi override and invisible format character is written
/// as `\u{…}`, so what the person reads is what will run, on one line. Nothing is cut.
pub fn for_terminal(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        let hidden = c.is_control() || (c != '\\' && c.escape_debug().next() == Some('\\'));
        if hidden && c != '"' && c != '\'' {
            let _ = write!(shown, "\\u{{{:x}}}", u32::from(c));
        } else {
            shown.push(c);
        }
    }
    shown
}

fn json_for_terminal(value: &serde_json::Value) -> String {
    for_terminal(&value.to_string())
}

/// The question a person answers for an effect.
pub fn question(effect: &Effect) -> String {
    match effect {
        Effect::Computer(ActionContext {
            name,
            action,
            parsed,
            confirm_required,
            ..
        }) => format!(
            "Computer action `{}`{}: {} — as sent: {}",
            for_terminal(name),
            if *confirm_required {
                " (keyboard input goes to the focused window)"
            } else {
                ""
            },
            for_terminal(&parsed.to_string()),
            json_for_terminal(action)
        ),
        Effect::Bash(BashEffect { input, .. }) => match input {
            BashInput::Run { command } => format!("bash command: {}", for_terminal(command)),
            BashInput::Restart => "bash: restart the shell (its background jobs end)".to_owned(),
        },
        Effect::Editor(EditorEffect { command, .. }) => {
            let path = for_terminal(command.path());
            match command {
                EditorCommand::View { .. } => {
                    format!("Text editor: read {path} (its content goes to the model)")
                }
                EditorCommand::Create { file_text, .. } => format!(
                    "Text editor: create {path} with {} characters: {}",
                    file_text.chars().count(),
                    for_terminal(file_text)
                ),
                EditorCommand::StrReplace {
                    old_str, new_str, ..
                } => format!(
                    "Text editor: in {path}, replace {} with {}",
                    for_terminal(old_str),
                    for_terminal(new_str)
                ),
                EditorCommand::Insert {
                    insert_line,
                    insert_text,
                    ..
                } => format!(
                    "Text editor: in {path}, insert after line {insert_line}: {}",
                    for_terminal(insert_text)
                ),
            }
        }
        Effect::Function(FunctionEffect {
            name, arguments, ..
        }) => format!(
            "Function `{}`: {}",
            for_terminal(name),
            json_for_terminal(arguments)
        ),
        Effect::McpCall(McpCallEffect {
            server_label,
            server_url,
            tool,
            arguments,
            renewed,
            ..
        }) => format!(
            "MCP server `{}`{} will run tool `{}` with {}{}",
            for_terminal(server_label),
            server_url
                .as_deref()
                .map(|u| format!(" ({})", for_terminal(u)))
                .unwrap_or_default(),
            for_terminal(tool),
            json_for_terminal(arguments),
            if *renewed {
                " (approved before the run stopped, and not known to have run: asked again)"
            } else {
                ""
            }
        ),
        Effect::McpServer(McpServerEffect {
            server_label,
            server_url,
            tools,
        }) => format!(
            "The model's provider will call {} of MCP server `{}` ({}) without asking each time",
            match tools {
                Some(tools) => format!(
                    "the tools {}",
                    tools
                        .iter()
                        .map(|t| format!("`{}`", for_terminal(t)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => "any tool".to_owned(),
            },
            for_terminal(server_label),
            for_terminal(server_url)
        ),
        // Effects this binary does not know yet are described by their kind and name.
        other => format!("{:?} `{}`", other.kind(), for_terminal(other.name())),
    }
}

/// Computer actions that only observe: looking changes nothing, so they need no one.
const OBSERVATIONS: [&str; 4] = ["screenshot", "zoom", "cursor_position", "wait"];

fn observes(effect: &Effect) -> bool {
    matches!(effect, Effect::Computer(c)
        if c.final_screenshot || OBSERVATIONS.contains(&c.name.as_str()))
}

#[async_trait]
impl Approver for TerminalApprover {
    async fn approve_safety_checks(
        &mut self,
        context: SafetyChecksContext,
        cancel: &CancellationToken,
    ) -> Decision {
        let checks: Vec<String> = context
            .checks
            .iter()
            .map(|c| {
                for_terminal(&format!(
                    "  - {} ({}): {}",
                    c.id,
                    c.code.as_deref().unwrap_or("?"),
                    c.message.as_deref().unwrap_or("")
                ))
            })
            .collect();
        let question = format!(
            "The model's provider flagged computer call {}:\n{}\nIts actions: {}",
            for_terminal(&context.call_id),
            checks.join("\n"),
            json_for_terminal(&serde_json::Value::Array(context.actions))
        );
        if self.decide(question, cancel).await {
            Decision::Approve
        } else {
            Decision::Deny
        }
    }

    /// `ask` and `none` review every effect; `all` none (a computer member the toolset requires
    /// a confirmation for is still shown, and approved).
    fn reviews(&self, _: EffectKind) -> bool {
        self.mode != ApproveArg::All
    }

    async fn approve(&mut self, effect: Effect, cancel: &CancellationToken) -> Decision {
        if observes(&effect) {
            return Decision::Approve;
        }
        if self.decide(question(&effect), cancel).await {
            Decision::Approve
        } else {
            Decision::Deny
        }
    }
}

#[async_trait]
impl Confirm for TerminalApprover {
    async fn confirm(
        &self,
        context: ConfirmContext,
        cancel: CancellationToken,
    ) -> Result<Approval, CallbackError> {
        let question = format!(
            "Browser `{}` ({}): {}",
            context.member,
            for_terminal(&context.call_id),
            json_for_terminal(&context.arguments)
        );
        Ok(if self.decide(question, &cancel).await {
            Approval::Approve
        } else {
            Approval::Deny
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hands_toolset::actions::DesktopAction;
    use std::sync::Mutex as StdMutex;

    /// An approver in `mode` whose person answers `answer`, and the questions it was asked.
    fn scripted(
        mode: ApproveArg,
        answer: Option<bool>,
    ) -> (TerminalApprover, Arc<StdMutex<Vec<String>>>) {
        let asked = Arc::new(StdMutex::new(Vec::new()));
        let log = Arc::clone(&asked);
        let ask: Ask = Arc::new(move |q: &str| {
            log.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(q.to_owned());
            answer
        });
        (TerminalApprover::with_ask(mode, ask), asked)
    }

    fn bash(command: &str) -> Effect {
        Effect::Bash(BashEffect {
            call_id: "toolu_1".into(),
            input: BashInput::Run {
                command: command.into(),
            },
        })
    }

    fn computer(name: &str) -> Effect {
        Effect::Computer(ActionContext {
            call_id: "toolu_2".into(),
            index: 0,
            name: name.into(),
            action: serde_json::json!({"text": "hi"}),
            parsed: DesktopAction::Type { text: "hi".into() },
            final_screenshot: false,
            confirm_required: name == "type",
        })
    }

    fn editor(command: EditorCommand) -> Effect {
        Effect::Editor(EditorEffect {
            call_id: "toolu_3".into(),
            command,
        })
    }

    fn function() -> Effect {
        Effect::Function(FunctionEffect {
            call_id: "call_1".into(),
            name: "book_room".into(),
            arguments: serde_json::json!({"room": 12}),
        })
    }

    #[tokio::test]
    async fn ask_shows_the_command_or_path_and_takes_the_answer() {
        let cancel = CancellationToken::new();
        let (mut yes, asked) = scripted(ApproveArg::Ask, Some(true));
        assert!(yes.reviews(EffectKind::Bash) && yes.reviews(EffectKind::Function));
        assert_eq!(
            yes.approve(bash("touch /tmp/x"), &cancel).await,
            Decision::Approve
        );
        let view = editor(EditorCommand::View {
            path: "/home/me/.ssh/id_ed25519".into(),
            view_range: None,
        });
        assert_eq!(yes.approve(view, &cancel).await, Decision::Approve);
        assert_eq!(yes.approve(function(), &cancel).await, Decision::Approve);
        assert_eq!(
            yes.approve(computer("type"), &cancel).await,
            Decision::Approve
        );
        // Looking needs no one.
        assert_eq!(
            yes.approve(computer("screenshot"), &cancel).await,
            Decision::Approve
        );
        assert_eq!(
            *asked.lock().unwrap(),
            [
                "bash command: touch /tmp/x",
                "Text editor: read /home/me/.ssh/id_ed25519 (its content goes to the model)",
                "Function `book_room`: {\"room\":12}",
                "Computer action `type` (keyboard input goes to the focused window): type \"hi\" — as sent: {\"text\":\"hi\"}",
            ]
        );
        let (mut no, _) = scripted(ApproveArg::Ask, Some(false));
        assert_eq!(no.approve(bash("ls"), &cancel).await, Decision::Deny);
        let (mut nobody, _) = scripted(ApproveArg::Ask, None);
        assert_eq!(nobody.approve(bash("ls"), &cancel).await, Decision::Deny);
    }

    #[tokio::test]
    async fn none_refuses_every_effect_without_asking_and_all_approves() {
        let cancel = CancellationToken::new();
        let (mut none, asked) = scripted(ApproveArg::None, Some(true));
        for effect in [
            bash("rm -rf ~"),
            editor(EditorCommand::Create {
                path: "/tmp/x".into(),
                file_text: "x".into(),
            }),
            function(),
            computer("left_click"),
            computer("type"),
        ] {
            assert_eq!(none.approve(effect, &cancel).await, Decision::Deny);
        }
        assert!(EffectKind::ALL.iter().all(|k| none.reviews(*k)));
        assert!(asked.lock().unwrap().is_empty());
        let (mut all, asked) = scripted(ApproveArg::All, Some(false));
        assert!(!all.reviews(EffectKind::Bash));
        assert_eq!(all.approve(bash("ls"), &cancel).await, Decision::Approve);
        assert!(asked.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_command_cannot_hide_from_the_person() {
        let cancel = CancellationToken::new();
        let (mut yes, asked) = scripted(ApproveArg::Ask, Some(true));
        // A carriage return, an escape sequence clearing the screen, a bidi override and a
        // fake prompt line: all shown as escapes on one line.
        let command = "echo hi\r\u{1b}[2Jrm -rf ~ \u{202e}ecalper\nApprove? [y/N] y";
        let _ = yes.approve(bash(command), &cancel).await;
        let shown = asked.lock().unwrap()[0].clone();
        assert_eq!(
            shown,
            "bash command: echo hi\\u{d}\\u{1b}[2Jrm -rf ~ \\u{202e}ecalper\\u{a}Approve? [y/N] y"
        );
        assert!(!shown.chars().any(|c| c.is_control()));
    }

    #[tokio::test]
    async fn mcp_effects_are_asked_and_none_refuses_them() {
        let cancel = CancellationToken::new();
        let call = Effect::McpCall(McpCallEffect {
            request_id: "mcpr_1".into(),
            server_label: "notes".into(),
            server_url: Some("https://mcp.example.com/mcp".into()),
            tool: "add_note".into(),
            arguments: serde_json::json!({"text": "hi\u{1b}[2J"}),
            renewed: true,
        });
        let server = Effect::McpServer(McpServerEffect {
            server_label: "notes".into(),
            server_url: "https://mcp.example.com/mcp".into(),
            tools: Some(vec!["add_note".into()]),
        });
        let (mut yes, asked) = scripted(ApproveArg::Ask, Some(true));
        assert_eq!(yes.approve(call.clone(), &cancel).await, Decision::Approve);
        assert_eq!(
            yes.approve(server.clone(), &cancel).await,
            Decision::Approve
        );
        let asked = asked.lock().unwrap().clone();
        assert!(
            asked[0].starts_with(
                "MCP server `notes` (https://mcp.example.com/mcp) will run tool `add_note`"
            ),
            "{}",
            asked[0]
        );
        assert!(asked[0].contains("asked again") && !asked[0].chars().any(|c| c.is_control()));
        assert!(
            asked[1].contains("the tools `add_note` of MCP server `notes`"),
            "{}",
            asked[1]
        );
        let (mut none, _) = scripted(ApproveArg::None, Some(true));
        assert_eq!(none.approve(call.clone(), &cancel).await, Decision::Deny);
        let (mut all, _) = scripted(ApproveArg::All, Some(false));
        assert_eq!(all.approve(call, &cancel).await, Decision::Approve);
        assert_eq!(all.approve(server, &cancel).await, Decision::Approve);
    }

    #[test]
    fn plain_text_is_shown_as_is() {
        assert_eq!(
            for_terminal("grep -r \"a b\" 'c' C:\\x é"),
            "grep -r \"a b\" 'c' C:\\x é"
        );
    }
}
