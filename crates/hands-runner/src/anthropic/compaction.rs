//! Claude's compaction: a `compaction` block the API returns replaces everything before it. The
//! runner keeps the block (verbatim: it is signed) and drops what it replaces from the
//! conversation, so later requests and the ledger's checkpoints carry the compacted history.
//!
//! Spec: api-contracts A, "Context editing" (`compact_20260112`); anthropic 2.10's tool runner
//! (`stop_reason: "compaction"` resumes the turn; the compaction response replaces the history).

use hands_models::anthropic::{Block, ContentBlock, MessageContent, MessageParam, Role};
use serde_json::Value;

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
