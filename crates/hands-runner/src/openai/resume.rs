//! Resuming a Responses run: an interrupted turn answered from its records (one output per
//! call; a computer call not answered before gets a fresh screenshot, never an action; an MCP
//! approval keeps its recorded answer, or is asked again), and the note that the run resumed,
//! with a screenshot when the run has a desktop.

use std::collections::HashSet;

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_models::openai::{FunctionCallOutput, FunctionOutput, Item, ItemView};
use hands_toolset::computer_call::{call_output, parse_call};
use serde_json::{Value, json};

use super::OpenAiSession;
use crate::checkpoint::{Proposed, Resumable};
use crate::ledger::{
    CallRecord, CallState, MCP_APPROVAL_RECORD, NOT_STARTED_ANSWER, PendingTurn, RESUMED_NOTE,
    closing_text, mcp_request_note,
};
use crate::mcp::MCP_APPROVAL_REQUEST;
use crate::outcome::RunError;
use crate::server_items::raw;

/// The name a turn log gives computer calls.
const COMPUTER_CALL: &str = "computer_call";

/// A call item as the turn log records it: its actions, or its parsed arguments.
pub(super) fn proposed(item: &Item) -> Option<Proposed> {
    match item.view() {
        ItemView::ComputerCall(call) => {
            let raw = item.to_value();
            let input = raw
                .get("actions")
                .or_else(|| raw.get("action"))
                .cloned()
                .unwrap_or(Value::Null);
            Some(Proposed {
                call_id: call.call_id.clone(),
                name: COMPUTER_CALL.to_owned(),
                input,
            })
        }
        ItemView::FunctionCall(call) => Some(Proposed {
            call_id: call.call_id.clone(),
            name: call.name.clone(),
            input: serde_json::from_str(&call.arguments)
                .unwrap_or_else(|_| Value::String(call.arguments.clone())),
        }),
        _ if item.item_type() == MCP_APPROVAL_REQUEST => {
            let raw = raw(item);
            let text = |key: &str| raw.get(key).cloned().unwrap_or(Value::Null);
            Some(Proposed {
                call_id: raw.get("id").and_then(Value::as_str)?.to_owned(),
                name: MCP_APPROVAL_RECORD.to_owned(),
                input: json!({"server_label": text("server_label"), "name": text("name"),
                    "arguments": text("arguments")}),
            })
        }
        _ => None,
    }
}

/// The id of the call an output item answers.
fn answered_call(item: &Item) -> Option<String> {
    match item.view() {
        ItemView::FunctionCallOutput(_) | ItemView::ComputerCallOutput(_) => item
            .to_value()
            .get("call_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    }
}

impl OpenAiSession {
    /// The answer to a computer call that was not answered before the run was interrupted: a
    /// fresh screenshot (the output must be one), acknowledging the call's safety checks only
    /// when the call took effect (so they had been approved).
    async fn closing_screenshot(
        &mut self,
        record: &CallRecord,
        cancel: &CancellationToken,
    ) -> Result<Item, RunError> {
        let raw = self
            .items
            .iter()
            .find(|i| {
                i.as_computer_call()
                    .is_some_and(|c| c.call_id == record.call_id)
            })
            .map(Item::to_value)
            .ok_or_else(|| {
                RunError::Ledger(format!(
                    "computer call {} is not in the checkpoint's conversation",
                    record.call_id
                ))
            })?;
        let executor = self.computer.as_mut().ok_or_else(|| {
            RunError::Config(format!(
                "computer call {} must be answered with a screenshot, and this run has no desktop",
                record.call_id
            ))
        })?;
        let call = parse_call(&raw, executor.frame())
            .map_err(|e| RunError::Ledger(format!("computer call {}: {e}", record.call_id)))?;
        let acknowledged = if record.state.may_have_taken_effect() {
            call.pending_safety_checks.as_slice()
        } else {
            &[]
        };
        if acknowledged.is_empty() && !call.pending_safety_checks.is_empty() {
            return Err(RunError::Ledger(format!(
                "computer call {} has safety checks nobody approved, and other calls of its turn took effect: it cannot be answered without an approval; start a new run from what the environment shows now",
                record.call_id
            )));
        }
        let image = executor
            .screenshot(cancel)
            .await
            .map_err(|e| RunError::Config(format!("the desktop could not be captured: {e}")))?;
        Item::from_value(&call_output(&record.call_id, &image, acknowledged))
            .map_err(|e| RunError::Ledger(e.to_string()))
    }
}

#[async_trait]
impl Resumable for OpenAiSession {
    fn model(&self) -> &str {
        &self.settings.model
    }

    fn declared_tools(&self) -> &[Value] {
        &self.tools
    }

    fn awaits_request(&self) -> bool {
        match self.items.last().map(Item::view) {
            None | Some(ItemView::Reasoning(_)) => false,
            Some(ItemView::Message(message)) => message.role != "assistant",
            Some(_) => true,
        }
    }

    async fn close_turn(
        &mut self,
        turn: &PendingTurn,
        cancel: &CancellationToken,
    ) -> Result<(), RunError> {
        let ids: HashSet<&str> = turn.calls.iter().map(|c| c.call_id.as_str()).collect();
        let answers_turn =
            |item: &Item| answered_call(item).is_some_and(|id| ids.contains(id.as_str()));
        self.items.retain(|i| !answers_turn(i));
        self.pending.retain(|i| !answers_turn(i));
        let mut notes = Vec::new();
        for record in &turn.calls {
            // A request to MCP servers has no answer item: its response is in the
            // conversation, or was lost (then a person's finding is told).
            if record.is_mcp_request() {
                notes.extend(mcp_request_note(record));
                continue;
            }
            // An approval never answered is asked again before the first request
            // (`before_first_request`); one answered keeps its answer.
            if record.is_mcp_approval() && !matches!(record.state, CallState::Answered { .. }) {
                continue;
            }
            let (text, _) = closing_text(&record.state)
                .unwrap_or_else(|| (NOT_STARTED_ANSWER.to_owned(), true));
            let item = match &record.state {
                CallState::Answered { answer } => {
                    Item::from_value(answer).map_err(|e| RunError::Ledger(e.to_string()))?
                }
                _ if record.name == COMPUTER_CALL => {
                    notes.push(format!("Computer call {}: {text}", record.call_id));
                    self.closing_screenshot(record, cancel).await?
                }
                _ => Item::function_call_output(&FunctionCallOutput {
                    call_id: record.call_id.clone(),
                    output: FunctionOutput::Text(text),
                }),
            };
            self.push_input(item);
        }
        for note in notes {
            self.push_input(Item::user_text(&note));
        }
        self.unanswered = false;
        Ok(())
    }

    async fn note_resumed(&mut self, cancel: &CancellationToken) -> Result<(), RunError> {
        let mut content = vec![json!({"type": "input_text", "text": RESUMED_NOTE})];
        if let Some(executor) = self.computer.as_mut() {
            let image = executor.screenshot(cancel).await.map_err(|e| {
                RunError::Config(format!("the desktop could not be captured to resume: {e}"))
            })?;
            content.push(json!({"type": "input_image", "image_url": image.data_url()}));
        }
        let note =
            Item::from_value(&json!({"type": "message", "role": "user", "content": content}))
                .map_err(|e| RunError::Ledger(e.to_string()))?;
        self.push_input(note);
        Ok(())
    }
}
