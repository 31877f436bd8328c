//! Mid-run control: edits a caller queues on a runner ([`crate::Runner::edit`]) that change the
//! next requests — their parameters, the tools they declare, a compaction before the next turn
//! (the SDKs' `set_messages_params`, `add_tools`, `remove_tools`, `compact_before_next_turn`).
//!
//! Edits apply only between turns: before the next request, never while a turn is open (a
//! paused turn or a compaction alone is resumed first). Their effect is part of the session's
//! state ([`Controls`]): saved with every checkpoint, the first one right after they apply, so a
//! resumed run sends what the first run would have sent. A tool is added or removed by name among
//! the tools the runner was built with: a function's code cannot be saved in a ledger, so a tool
//! to add later is built in and removed before the run starts (edits queued before a run apply
//! before its first request); the run's identity stays the tools it was built with.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One mid-run edit. As JSON (`hands run --edits`): `{"type": "params", …}`,
/// `{"type": "add_tools", "names": […]}`, `{"type": "remove_tools", "names": […]}`,
/// `{"type": "compact_before_next_turn", "instructions": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum RunEdit {
    /// New request parameters; the fields left out keep their values.
    Params(ParamsEdit),
    /// Declares again tools removed before (by name; a tool without a name by its `type`).
    AddTools {
        /// The tools' names.
        names: Vec<String>,
    },
    /// Stops declaring tools (by name; a tool without a name by its `type`). A call the model
    /// still makes to one is answered as a call to an unknown tool on Claude; on OpenAI it is a
    /// call to an undeclared function, which stops the run with nothing of its response run.
    RemoveTools {
        /// The tools' names.
        names: Vec<String>,
    },
    /// Claude: before the next turn, a compaction request (the `compaction` parameter, beta
    /// [`COMPACTION_REQUEST_BETA`]) summarizes the conversation, and the summary replaces it.
    CompactBeforeNextTurn {
        /// Replaces the server's summarization prompt for that request.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        instructions: Option<String>,
    },
}

/// Request parameters an edit may change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamsEdit {
    /// Output token limit per request (Claude's `max_tokens`, OpenAI's `max_output_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// The system prompt (Claude's `system`, OpenAI's `instructions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Claude's `output_config.effort`, OpenAI's `reasoning.effort`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
}

/// The beta of Claude's `compaction` request parameter (anthropic 2.10's
/// `compact_before_next_turn()` requires it).
pub const COMPACTION_REQUEST_BETA: &str = "compact-2026-09-04";

/// Why an edit is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The edit changes nothing (no parameter, no tool name).
    #[error("the edit changes nothing: give it a parameter or a tool name")]
    Empty,
    /// `max_output_tokens` of 0.
    #[error("max_output_tokens must be at least 1")]
    ZeroMaxTokens,
    /// The runner is closed.
    #[error("the runner is closed: no edit can reach a run")]
    Closed,
    /// An edit scheduled before request 0 (requests count from 1).
    #[error("requests count from 1: an edit before step 0 can never apply")]
    ZeroStep,
}

impl RunEdit {
    /// Checks what can be checked without the run: refuses an edit that changes nothing.
    pub fn check(&self) -> Result<(), EditError> {
        match self {
            RunEdit::Params(params) => {
                if params == &ParamsEdit::default() {
                    return Err(EditError::Empty);
                }
                if params.max_output_tokens == Some(0) {
                    return Err(EditError::ZeroMaxTokens);
                }
                Ok(())
            }
            RunEdit::AddTools { names } | RunEdit::RemoveTools { names } if names.is_empty() => {
                Err(EditError::Empty)
            }
            _ => Ok(()),
        }
    }
}

/// One line of an edits file (`hands run --edits FILE`): the edit and the request it precedes,
/// `{"step": 3, "edit": {"type": "params", "max_output_tokens": 512}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduledEdit {
    /// The request it precedes, counted from 1 ([`crate::Runner::edit_before_step`]).
    pub step: u32,
    /// The edit.
    pub edit: RunEdit,
}

/// Reads an edits file: one [`ScheduledEdit`] per line (blank lines skipped). The error names
/// the line and what is wrong with it.
pub fn parse_edits(text: &str) -> Result<Vec<ScheduledEdit>, String> {
    let mut out = Vec::new();
    for (idx, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let scheduled: ScheduledEdit = serde_json::from_str(line)
            .map_err(|e| format!("line {}: not an edit ({e})", idx + 1))?;
        if scheduled.step == 0 {
            return Err(format!("line {}: {}", idx + 1, EditError::ZeroStep));
        }
        scheduled
            .edit
            .check()
            .map_err(|e| format!("line {}: {e}", idx + 1))?;
        out.push(scheduled);
    }
    Ok(out)
}

/// Why an edit naming a tool the run was not built with is refused (the run stops before its
/// next request).
pub fn unknown_tool_edit(name: &str) -> String {
    format!(
        "the edit names tool `{}`, which this run was not built with (an edit adds back a tool the runner holds; it cannot bring new code)",
        hands_toolset::errtext::name(name)
    )
}

/// Why a compaction is refused on OpenAI.
pub const COMPACTION_NOT_ON_OPENAI: &str = "compact_before_next_turn is Claude's: on OpenAI, use the API's compaction (context_management) or a compactor with a context budget";

/// Why a compaction is refused beside Claude's own compaction edit (the SDK refuses it too: the
/// API does not take a compaction block together with one).
pub const COMPACTION_BESIDE_COMPACT_EDIT: &str = "compact_before_next_turn cannot be used while the context is compacted by the API's compact_20260112 edit: choose one";

/// The name an edit gives a tool declaration: its `name`, else its `type`.
pub(crate) fn tool_name(tool: &Value) -> Option<&str> {
    tool.get("name")
        .or_else(|| tool.get("type"))
        .and_then(Value::as_str)
}

/// The state the edits left: saved with every checkpoint and restored with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Controls {
    /// The parameters set by edits (the settings' values otherwise).
    #[serde(default)]
    pub(crate) params: ParamsEdit,
    /// Tools no longer declared.
    #[serde(default)]
    pub(crate) removed_tools: BTreeSet<String>,
    /// A compaction to make before the next turn, with its instructions.
    #[serde(default)]
    pub(crate) compaction: Option<Option<String>>,
}

impl Controls {
    /// Applies `edit` over the run's declared `tools`.
    pub(crate) fn apply(&mut self, edit: &RunEdit, tools: &[Value]) -> Result<(), String> {
        edit.check().map_err(|e| e.to_string())?;
        match edit {
            RunEdit::Params(params) => {
                let ParamsEdit {
                    max_output_tokens,
                    instructions,
                    effort,
                } = params.clone();
                if max_output_tokens.is_some() {
                    self.params.max_output_tokens = max_output_tokens;
                }
                if instructions.is_some() {
                    self.params.instructions = instructions;
                }
                if effort.is_some() {
                    self.params.effort = effort;
                }
            }
            RunEdit::AddTools { names } | RunEdit::RemoveTools { names } => {
                if let Some(unknown) = names
                    .iter()
                    .find(|n| !tools.iter().any(|t| tool_name(t) == Some(n.as_str())))
                {
                    return Err(unknown_tool_edit(unknown));
                }
                for name in names {
                    if matches!(edit, RunEdit::AddTools { .. }) {
                        self.removed_tools.remove(name);
                    } else {
                        self.removed_tools.insert(name.clone());
                    }
                }
            }
            RunEdit::CompactBeforeNextTurn { instructions } => {
                self.compaction = Some(instructions.clone());
            }
        }
        Ok(())
    }

    /// The tools the next request declares.
    pub(crate) fn declared(&self, tools: &[Value]) -> Vec<Value> {
        tools
            .iter()
            .filter(|t| tool_name(t).is_none_or(|n| !self.removed_tools.contains(n)))
            .cloned()
            .collect()
    }

    /// Whether a call to `name` is to a tool the edits removed.
    pub(crate) fn removed(&self, name: &str) -> bool {
        self.removed_tools.contains(name)
    }

    /// Reads the controls a checkpoint saved (none in checkpoints from before edits existed).
    pub(crate) fn restore(conversation: &Value) -> Result<Controls, String> {
        match conversation.get("controls") {
            None | Some(Value::Null) => Ok(Controls::default()),
            Some(saved) => serde_json::from_value(saved.clone())
                .map_err(|e| format!("the checkpoint's controls do not parse: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edits_parse_from_json_lines_and_apply_by_name() {
        let lines = [
            r#"{"type":"params","max_output_tokens":512,"effort":"low"}"#,
            r#"{"type":"remove_tools","names":["look_up"]}"#,
            r#"{"type":"add_tools","names":["look_up"]}"#,
            r#"{"type":"compact_before_next_turn","instructions":"Keep the URLs."}"#,
        ];
        let edits: Vec<RunEdit> = lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let tools = vec![
            json!({"name": "look_up", "input_schema": {}}),
            json!({"type": "web_search"}),
        ];
        let mut controls = Controls::default();
        controls.apply(&edits[0], &tools).unwrap();
        assert_eq!(controls.params.max_output_tokens, Some(512));
        controls.apply(&edits[1], &tools).unwrap();
        assert_eq!(controls.declared(&tools), vec![tools[1].clone()]);
        assert!(controls.removed("look_up"));
        controls.apply(&edits[2], &tools).unwrap();
        assert_eq!(controls.declared(&tools), tools);
        controls.apply(&edits[3], &tools).unwrap();
        assert_eq!(controls.compaction, Some(Some("Keep the URLs.".into())));
        let saved = json!({"controls": controls});
        assert_eq!(Controls::restore(&saved).unwrap(), controls);

        let unknown = RunEdit::RemoveTools {
            names: vec!["web_fetch".into()],
        };
        assert_eq!(
            controls.apply(&unknown, &tools),
            Err(unknown_tool_edit("web_fetch"))
        );
        assert_eq!(
            RunEdit::Params(ParamsEdit::default()).check(),
            Err(EditError::Empty)
        );
        assert!(serde_json::from_str::<RunEdit>(r#"{"type":"params","model":"x"}"#).is_err());

        let file = "{\"step\":2,\"edit\":{\"type\":\"compact_before_next_turn\"}}\n\n\
            {\"step\":3,\"edit\":{\"type\":\"params\",\"max_output_tokens\":5}}\n";
        let scheduled = parse_edits(file).unwrap();
        assert_eq!(scheduled.len(), 2);
        assert_eq!(scheduled[1].step, 3);
        assert_eq!(
            parse_edits("{\"step\":0,\"edit\":{\"type\":\"add_tools\",\"names\":[\"a\"]}}"),
            Err(format!("line 1: {}", EditError::ZeroStep))
        );
        assert!(
            parse_edits("\n{\"step\":1,\"edit\":{\"type\":\"params\"}}")
                .unwrap_err()
                .starts_with("line 2: ")
        );
    }
}
