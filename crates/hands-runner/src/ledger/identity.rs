//! A run's identity: what a checkpoint must be resumed with, and what changed when it is not.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::sanitize::sanitize_tools;

/// What a run is: a checkpoint resumes only under the same identity.
///
/// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución": the step limit
/// and the remaining requests carry over; a changed MCP URL is a new identity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunIdentity {
    /// The run's id, chosen when it started.
    pub run_id: String,
    /// `messages` or `responses`.
    pub api: String,
    /// The model.
    pub model: String,
    /// The step limit.
    pub max_steps: u32,
    /// The tool declarations as saved ([`sanitize_tools`]: no credentials, MCP URLs as
    /// fingerprints).
    pub tools: Vec<Value>,
}

impl RunIdentity {
    /// The identity of a run declaring `tools` (sanitised here).
    pub fn new(
        run_id: impl Into<String>,
        api: impl Into<String>,
        model: impl Into<String>,
        max_steps: u32,
        tools: &[Value],
    ) -> RunIdentity {
        RunIdentity {
            run_id: run_id.into(),
            api: api.into(),
            model: model.into(),
            max_steps,
            tools: sanitize_tools(tools),
        }
    }

    /// `sha256:<hex>` of the saved declarations (keys sorted, no spaces).
    pub fn tools_fingerprint(&self) -> String {
        let canonical = Value::Array(self.tools.clone()).to_string();
        format!("sha256:{}", hex(&Sha256::digest(canonical.as_bytes())))
    }

    /// What differs in `self` (the run about to resume) from `saved` (the checkpoint's).
    pub fn changes_from(&self, saved: &RunIdentity) -> Vec<IdentityChange> {
        let mut changes = Vec::new();
        let mut field = |what: &'static str, saved: String, now: String| {
            if saved != now {
                changes.push(IdentityChange::Field { what, saved, now });
            }
        };
        field("run id", saved.run_id.clone(), self.run_id.clone());
        field("API", saved.api.clone(), self.api.clone());
        field("model", saved.model.clone(), self.model.clone());
        field(
            "step limit",
            saved.max_steps.to_string(),
            self.max_steps.to_string(),
        );
        if self.tools != saved.tools {
            let names = |tools: &[Value]| -> Vec<String> { tools.iter().map(tool_name).collect() };
            let (before, after) = (names(&saved.tools), names(&self.tools));
            let added = after
                .iter()
                .filter(|n| !before.contains(n))
                .cloned()
                .collect();
            let removed = before
                .iter()
                .filter(|n| !after.contains(n))
                .cloned()
                .collect();
            let changed = saved
                .tools
                .iter()
                .filter_map(|old| {
                    let name = tool_name(old);
                    let new = self.tools.iter().find(|t| tool_name(t) == name)?;
                    (new != old).then_some(name)
                })
                .collect();
            changes.push(IdentityChange::Tools {
                saved_fingerprint: saved.tools_fingerprint(),
                now_fingerprint: self.tools_fingerprint(),
                added,
                removed,
                changed,
            });
        }
        changes
    }
}

/// One difference between a checkpoint's identity and the run resuming it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdentityChange {
    /// The run id, API, model or step limit.
    Field {
        /// Which (`model`, `step limit` …).
        what: &'static str,
        /// The checkpoint's value.
        saved: String,
        /// The value now.
        now: String,
    },
    /// The tool declarations.
    Tools {
        /// The checkpoint's fingerprint.
        saved_fingerprint: String,
        /// The fingerprint now.
        now_fingerprint: String,
        /// Tools declared now but not then.
        added: Vec<String>,
        /// Tools declared then but not now.
        removed: Vec<String>,
        /// Tools declared both times, differently.
        changed: Vec<String>,
    },
}

impl fmt::Display for IdentityChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdentityChange::Field { what, saved, now } => {
                write!(f, "the {what} changed: {saved} → {now}")
            }
            IdentityChange::Tools {
                saved_fingerprint,
                now_fingerprint,
                added,
                removed,
                changed,
            } => {
                write!(f, "the tool declarations changed")?;
                let mut parts = Vec::new();
                for (label, names) in [("added", added), ("removed", removed), ("changed", changed)]
                {
                    if !names.is_empty() {
                        parts.push(format!("{label} {}", names.join(", ")));
                    }
                }
                if !parts.is_empty() {
                    write!(f, " ({})", parts.join("; "))?;
                }
                write!(f, ": {saved_fingerprint} → {now_fingerprint}")
            }
        }
    }
}

/// How a declaration is named in messages: its name, MCP server label, or type.
fn tool_name(tool: &Value) -> String {
    let get = |key: &str| tool.get(key).and_then(Value::as_str);
    match (get("name"), get("server_label"), get("type")) {
        (Some(name), _, _) => name.to_owned(),
        (None, Some(label), _) => format!("mcp server {label}"),
        (None, None, Some(ty)) => ty.to_owned(),
        _ => "(unnamed tool)".to_owned(),
    }
}

/// Lower-case hexadecimal.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut text = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(text, "{b:02x}");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn identity(model: &str, max_steps: u32, tools: &[Value]) -> RunIdentity {
        RunIdentity::new("run-1", "messages", model, max_steps, tools)
    }

    #[test]
    fn each_change_is_named_with_both_values() {
        let bash = json!({"type": "bash_20250124", "name": "bash"});
        let editor = json!({"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"});
        let computer = |w: u32| json!({"type": "computer_toolset_20260801", "name": "computer", "display_width_px": w});
        let saved = identity("claude-a", 20, &[computer(1280), bash.clone()]);
        assert!(saved.changes_from(&saved).is_empty());
        let now = identity("claude-b", 30, &[computer(1024), editor]);
        let text: Vec<String> = now
            .changes_from(&saved)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(text[0], "the model changed: claude-a → claude-b");
        assert_eq!(text[1], "the step limit changed: 20 → 30");
        assert!(
            text[2].starts_with(
                "the tool declarations changed (added str_replace_based_edit_tool; removed bash; changed computer): sha256:"
            ),
            "{}",
            text[2]
        );
        assert_eq!(text.len(), 3);
    }

    #[test]
    fn the_fingerprint_ignores_key_order_and_credentials() {
        let a = identity(
            "m",
            1,
            &[
                json!({"type": "mcp", "server_label": "crm", "server_url": "https://mcp.example/x",
                "authorization": "Bearer one", "headers": {"X-Key": "1"}}),
            ],
        );
        let b = identity(
            "m",
            1,
            &[
                json!({"server_url": "https://mcp.example/x", "server_label": "crm", "type": "mcp",
                "authorization": "Bearer two"}),
            ],
        );
        assert_eq!(a.tools_fingerprint(), b.tools_fingerprint());
        assert!(a.tools_fingerprint().starts_with("sha256:"));
        assert_eq!(a.tools_fingerprint().len(), "sha256:".len() + 64);
        let moved = identity(
            "m",
            1,
            &[json!({"type": "mcp", "server_label": "crm", "server_url": "https://mcp.example/y"})],
        );
        let change = moved.changes_from(&a);
        assert_eq!(change.len(), 1);
        assert!(change[0].to_string().contains("(changed mcp server crm)"));
    }
}
