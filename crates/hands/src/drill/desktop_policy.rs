//! The deterministic "model" of the desktop drill: a policy served by the simulated API that
//! writes a note in the editor and saves it, the way a careful model would (a screenshot before
//! each decision that depends on the screen).
//!
//! It sees only what a model sees — the requests the runner sends — and decides from them; the
//! drill then verifies the file on disk, never this policy's claim.

use hands_sim::Turn;
use hands_sim::policy::{computer_call, message, text, toolset_use};
use serde_json::{Value, json};

/// What the drill asks for.
#[derive(Debug, Clone)]
pub struct NoteTask {
    /// The note's text.
    pub note: String,
    /// Where to save it (an absolute path).
    pub path: String,
    /// A point inside the editor's text area, in screenshot pixels.
    pub editor_point: (u32, u32),
}

impl NoteTask {
    /// The task as the user states it to the model.
    pub fn prompt(&self) -> String {
        format!(
            "In the text editor on screen, write this note exactly:\n{}\nthen save it as {}.",
            self.note, self.path
        )
    }
}

/// Which step a request is at: the number of assistant turns in an Anthropic request, or the
/// number of calls answered in an OpenAI request. `None` when the last results report a failure
/// (the policy then ends the run, and the drill's verification fails).
fn anthropic_progress(request: &Value) -> Result<usize, String> {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    if let Some(last) = messages.last()
        && let Some(blocks) = last["content"].as_array()
    {
        for block in blocks {
            if block["type"] == "tool_result" && block["is_error"] == json!(true) {
                return Err(error_text(&block["content"]));
            }
        }
    }
    Ok(messages.iter().filter(|m| m["role"] == "assistant").count())
}

fn error_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// The Anthropic policy: the computer toolset's members, one decision per turn.
pub fn anthropic(task: NoteTask) -> impl FnMut(&Value) -> Turn + Send {
    move |request: &Value| {
        let step = match anthropic_progress(request) {
            Ok(step) => step,
            Err(why) => {
                return Turn::text(format!("I could not finish: an action failed ({why})."));
            }
        };
        let c = |member: &str, input: Value| toolset_use("computer", member, input);
        let (x, y) = task.editor_point;
        Turn::Blocks(match step {
            0 => vec![
                text("I'll look at the screen first."),
                c("screenshot", json!({})),
            ],
            1 => vec![
                text("The editor is open. I'll write the note and open the save dialog."),
                c("left_click", json!({"coordinate": [x, y]})),
                c("type", json!({"text": task.note})),
                c("key", json!({"text": "ctrl+s"})),
                c("wait", json!({"duration": 1})),
                c("screenshot", json!({})),
            ],
            2 => vec![
                text("The save dialog is open with the name field focused."),
                c("key", json!({"text": "ctrl+a"})),
                c("type", json!({"text": task.path})),
                c("screenshot", json!({})),
            ],
            // GTK's file chooser ignores Return for a moment after a path is typed (it is still
            // loading the folder): a careful model lets the dialog catch up first.
            3 => vec![
                c("wait", json!({"duration": 1})),
                c("key", json!({"text": "Return"})),
                c("wait", json!({"duration": 1})),
                c("screenshot", json!({})),
            ],
            _ => return Turn::text(format!("The note is saved as {}.", task.path)),
        })
    }
}

/// The OpenAI policy: `computer_call` batches, one per turn, the step counted by the policy
/// (a chained request holds only the new items).
pub fn openai(task: NoteTask) -> impl FnMut(&Value) -> Turn + Send {
    let mut step = 0usize;
    move |_request: &Value| {
        let (x, y) = task.editor_point;
        let turn = match step {
            0 => vec![computer_call(vec![json!({"type": "screenshot"})])],
            1 => vec![computer_call(vec![
                json!({"type": "click", "button": "left", "x": x, "y": y}),
                json!({"type": "type", "text": task.note}),
                json!({"type": "keypress", "keys": ["CTRL", "S"]}),
                json!({"type": "wait"}),
            ])],
            2 => vec![computer_call(vec![
                json!({"type": "keypress", "keys": ["CTRL", "A"]}),
                json!({"type": "type", "text": task.path}),
                json!({"type": "wait"}),
            ])],
            // As for Claude: the file chooser is let catch up before Return.
            3 => vec![computer_call(vec![
                json!({"type": "wait"}),
                json!({"type": "keypress", "keys": ["ENTER"]}),
                json!({"type": "wait"}),
            ])],
            _ => vec![message(&format!("The note is saved as {}.", task.path))],
        };
        step += 1;
        Turn::Items(turn)
    }
}
