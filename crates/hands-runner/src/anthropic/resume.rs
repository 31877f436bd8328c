//! Resuming a Messages run: an interrupted turn answered from its records (exactly one
//! `tool_result` per `tool_use`, nothing run again), and the note that the run resumed, with a
//! fresh screenshot when the run has a desktop.

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_models::anthropic::{ContentBlock, MessageContent, MessageParam, Role};
use hands_toolset::computer::Shape;
use hands_toolset::wire::{ResultBlock, ToolResult as WireResult, ToolUse};
use serde_json::{Value, json};

use super::AnthropicSession;
use crate::checkpoint::{Proposed, Resumable};
use crate::ledger::{
    CallState, NOT_STARTED_ANSWER, PendingTurn, RESUMED_NOTE, closing_text, mcp_request_note,
};
use crate::outcome::RunError;

/// A `tool_use` block as the turn log records it.
pub(super) fn proposed(tool_use: &ToolUse) -> Proposed {
    Proposed {
        call_id: tool_use.id.clone(),
        name: tool_use.name.clone(),
        input: tool_use.input.clone(),
    }
}

/// The answer to `tool_use` from its record.
fn closing_answer(tool_use: &ToolUse, state: Option<&CallState>) -> Value {
    if let Some(CallState::Answered { answer }) = state {
        return answer.clone();
    }
    let (text, is_error) = state
        .and_then(closing_text)
        .unwrap_or_else(|| (NOT_STARTED_ANSWER.to_owned(), true));
    if is_error {
        WireResult::error(tool_use, text).to_json()
    } else {
        WireResult::ok(tool_use, vec![ResultBlock::Text(text)]).to_json()
    }
}

#[async_trait]
impl Resumable for AnthropicSession {
    fn model(&self) -> &str {
        &self.settings.model
    }

    fn declared_tools(&self) -> &[Value] {
        &self.declared
    }

    fn awaits_request(&self) -> bool {
        self.paused
            || self.messages.last().is_some_and(|m| m.role == Role::User)
            || super::compaction::ends_with_compaction(&self.messages)
    }

    async fn close_turn(
        &mut self,
        turn: &PendingTurn,
        _cancel: &CancellationToken,
    ) -> Result<(), RunError> {
        if turn.only_mcp_request() {
            // The request's response never came: the conversation ends with the user's turn,
            // and the model is told what a person found.
            let notes: Vec<ContentBlock> = turn
                .calls
                .iter()
                .filter_map(mcp_request_note)
                .map(|n| ContentBlock::text(&n))
                .collect();
            return self.append_to_user_turn(notes);
        }
        let Some(last) = self.messages.last().filter(|m| m.role == Role::Assistant) else {
            return Err(RunError::Ledger(
                "the pending turn's checkpoint does not end with the model's turn".into(),
            ));
        };
        let MessageContent::Blocks(blocks) = &last.content else {
            return Err(RunError::Ledger(
                "the pending turn's checkpoint has no tool uses".into(),
            ));
        };
        let uses: Vec<ToolUse> = blocks
            .iter()
            .filter_map(ContentBlock::as_tool_use)
            .map(|t| ToolUse {
                id: t.id.clone(),
                name: t.name.clone(),
                toolset_name: t.toolset_name.clone(),
                input: t.input.clone(),
            })
            .collect();
        let answers: Vec<Value> = uses
            .iter()
            .map(|tool_use| {
                let state = turn
                    .calls
                    .iter()
                    .find(|c| c.call_id == tool_use.id)
                    .map(|c| &c.state);
                closing_answer(tool_use, state)
            })
            .collect();
        // No diagnostics observer here: an answer that cannot be sent refuses the resume,
        // naming its call, rather than being replaced unseen.
        let (answer_blocks, replaced, _) = super::result_blocks(&uses, &answers);
        if let Some(tool_use) = replaced.first() {
            return Err(RunError::Ledger(format!(
                "the closing answer to call {} (`{}`) of the pending turn is not a valid tool_result",
                tool_use.id, tool_use.name
            )));
        }
        self.messages.push(MessageParam::user(answer_blocks));
        self.unanswered = false;
        Ok(())
    }

    async fn note_resumed(&mut self, cancel: &CancellationToken) -> Result<(), RunError> {
        // A paused turn goes back last and unchanged: no note can follow it.
        if self.paused {
            return Ok(());
        }
        let mut blocks = vec![ContentBlock::text(RESUMED_NOTE)];
        if let Some(computer) = self.computer.as_mut() {
            let shot = match computer.config().shape {
                Shape::Toolset(_) => ToolUse {
                    id: "resume_screenshot".into(),
                    name: "screenshot".into(),
                    toolset_name: Some("computer".into()),
                    input: json!({}),
                },
                Shape::Legacy20251124 { .. } | Shape::Legacy20250124 => ToolUse {
                    id: "resume_screenshot".into(),
                    name: "computer".into(),
                    toolset_name: None,
                    input: json!({"action": "screenshot"}),
                },
            };
            let outcome = computer.run_turn(std::slice::from_ref(&shot), cancel).await;
            if let Some(fault) = outcome.fault {
                return Err(RunError::Config(format!(
                    "the desktop could not be captured to resume: {fault}"
                )));
            }
            for image in outcome.results.iter().flat_map(WireResult::images) {
                blocks.push(ContentBlock::image_base64(
                    image.media_type.mime(),
                    &image.base64,
                ));
            }
        }
        self.append_to_user_turn(blocks)
    }
}

impl AnthropicSession {
    /// Adds `blocks` to the user turn the conversation ends with.
    pub(super) fn append_to_user_turn(
        &mut self,
        blocks: Vec<ContentBlock>,
    ) -> Result<(), RunError> {
        if blocks.is_empty() {
            return Ok(());
        }
        let after_compaction = super::compaction::ends_with_compaction(&self.messages);
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User => match &mut last.content {
                MessageContent::Blocks(existing) => existing.extend(blocks),
                MessageContent::Text(text) => {
                    let mut all = vec![ContentBlock::text(text)];
                    all.extend(blocks);
                    last.content = MessageContent::Blocks(all);
                }
            },
            // A compaction alone may be followed by the user (the API takes it).
            _ if after_compaction => {
                self.messages.push(MessageParam::user(blocks));
            }
            _ => {
                return Err(RunError::Ledger(
                    "the resumed conversation does not end with a user turn".into(),
                ));
            }
        }
        Ok(())
    }
}
