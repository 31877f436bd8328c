//! Claude's compaction: a `compaction` block the API returns replaces everything before it. The
//! runner keeps the block (verbatim: it is signed) and drops what it replaces from the
//! conversation, so later requests and the ledger's checkpoints carry the compacted history.
//!
//! Spec: api-contracts A, "Context editing" (`compact_20260112`); anthropic 2.10's tool runner
//! (`stop_reason: "compaction"` resumes the turn; the compaction response replaces the history).

use std::time::Instant;

use hands_models::anthropic::{
    Block, ContentBlock, Message, MessageContent, MessageParam, Role, ToolChoice,
};
use serde_json::{Value, json};

use super::AnthropicSession;
use crate::diagnostics::{Api, Usage};
use crate::edits::COMPACTION_REQUEST_BETA;
use crate::outcome::StopReason;
use crate::session::StepContext;

/// The `type` of a compaction block.
pub(crate) const COMPACTION_BLOCK: &str = "compaction";

/// Whether `block` is a compaction with a summary (a null `content` is a failed compaction,
/// which replaces nothing).
fn is_summary(block: &ContentBlock) -> bool {
    match block.view() {
        Block::Other(value) => {
            value.get("type").and_then(Value::as_str) == Some(COMPACTION_BLOCK)
                && value.get("content").is_some_and(Value::is_string)
        }
        _ => false,
    }
}

fn is_compaction(block: &ContentBlock) -> bool {
    matches!(block.view(), Block::Other(value)
        if value.get("type").and_then(Value::as_str) == Some(COMPACTION_BLOCK))
}

/// After the model's message was appended last: when it holds a summary, drops every message
/// before it and the blocks before the summary in it. Returns how many messages went.
pub(crate) fn drop_replaced(messages: &mut Vec<MessageParam>) -> usize {
    let Some(last) = messages.last_mut() else {
        return 0;
    };
    let MessageContent::Blocks(blocks) = &mut last.content else {
        return 0;
    };
    let Some(at) = blocks.iter().rposition(is_summary) else {
        return 0;
    };
    blocks.drain(..at);
    let n_dropped = messages.len() - 1;
    messages.drain(..n_dropped);
    n_dropped
}

/// Whether the conversation ends with a compaction alone: the API continues the turn from it
/// (or takes a user message after it).
pub(crate) fn ends_with_compaction(messages: &[MessageParam]) -> bool {
    messages.last().is_some_and(|m| {
        m.role == Role::Assistant
            && matches!(&m.content, MessageContent::Blocks(blocks)
                if !blocks.is_empty() && blocks.iter().all(is_compaction))
    })
}

/// The usage record of one answer.
pub(super) fn usage_of(message: &Message) -> Usage {
    Usage {
        input_tokens: Some(message.usage.input_tokens),
        output_tokens: Some(message.usage.output_tokens),
        total_tokens: Some(message.usage.total_input_tokens() + message.usage.output_tokens),
        cache_read_input_tokens: message.usage.cache_read_input_tokens,
        cache_creation_input_tokens: message.usage.cache_creation_input_tokens,
    }
}

impl AnthropicSession {
    /// A compaction request (an edit's `compact_before_next_turn`): the whole conversation with
    /// the `compaction` parameter, without what only shapes a reply (`context_management`, stop
    /// sequences, a forcing tool choice), as anthropic 2.10's runner sends it. The answer's
    /// summary replaces the conversation; an answer without one leaves it as it is.
    pub(super) async fn compact(
        &mut self,
        ctx: &mut StepContext<'_>,
        instructions: Option<String>,
    ) -> Result<(), StopReason> {
        let (system, tools, messages) = self.manage_context()?;
        let mut request = self.base_request(system, tools, messages);
        request.tool_choice = match &self.settings.tool_choice {
            Some(choice @ (ToolChoice::Auto { .. } | ToolChoice::None)) => Some(choice.clone()),
            _ => None,
        };
        request.betas = self.betas();
        request.betas.push(COMPACTION_REQUEST_BETA.to_owned());
        let mut compaction = json!({"type": "summarize"});
        if let Some(instructions) = instructions {
            compaction["instructions"] = Value::String(instructions);
        }
        request.extra.insert("compaction".into(), compaction);
        ctx.journal_request(&request);
        let start = Instant::now();
        let sent = self.transmit(ctx, &request, false).await;
        let duration = start.elapsed();
        let done = match sent {
            Ok(done) => done,
            Err(e) => return Err(ctx.request_failed(Api::Messages, duration, &e)),
        };
        ctx.request_done(
            Api::Messages,
            duration,
            Some(usage_of(&done.value)),
            done.meta.attempts(),
        );
        ctx.journal_response(&done.value, duration, done.meta.attempts());
        let mut compacted = self.messages.clone();
        compacted.push(done.value.to_param());
        if drop_replaced(&mut compacted) == 0 {
            tracing::warn!("the compaction produced no summary: the conversation stays as it is");
            return Ok(());
        }
        self.messages = compacted;
        self.thread.forget();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn block(value: Value) -> ContentBlock {
        ContentBlock::from_value(&value).expect("block")
    }

    #[test]
    fn a_summary_replaces_what_came_before_it() {
        let summary = json!({"type": "compaction", "content": "S", "signature": "sig"});
        let mut messages = vec![
            MessageParam::user_text("task"),
            MessageParam::assistant(vec![block(json!({"type": "text", "text": "a"}))]),
            MessageParam::user_text("more"),
            MessageParam::assistant(vec![
                block(summary.clone()),
                block(json!({"type": "text", "text": "b"})),
            ]),
        ];
        assert_eq!(drop_replaced(&mut messages), 3);
        assert_eq!(messages.len(), 1);
        assert_eq!(
            serde_json::to_value(&messages[0]).unwrap()["content"][0],
            summary
        );
        assert!(!ends_with_compaction(&messages));
        // A failed compaction (null content) replaces nothing.
        let mut failed = vec![
            MessageParam::user_text("task"),
            MessageParam::assistant(vec![block(json!({"type": "compaction", "content": null}))]),
        ];
        assert_eq!(drop_replaced(&mut failed), 0);
        assert_eq!(failed.len(), 2);
        assert!(ends_with_compaction(&failed));
    }
}
