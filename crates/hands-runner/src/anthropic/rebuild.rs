//! What goes back to the API after a turn: the projected history rebuilt into messages, and
//! each call's `tool_result` paired with it (never a call left unanswered).

use super::*;

/// The messages to send: each kept message (`kept`, at `kept_at` in `originals`) as projected.
/// A user message is rebuilt from its projected JSON (screenshots pruned, breakpoints placed);
/// an assistant message goes verbatim. A projected user message that no longer parses stops
/// the run ([`StopReason::ProjectionFailed`]): sent unpruned instead, it would break the budget
/// and the cache prefix the projection made.
pub(super) fn rebuild_messages(
    originals: &[MessageParam],
    kept_at: Vec<usize>,
    kept: Vec<Value>,
) -> Result<Vec<MessageParam>, StopReason> {
    kept_at
        .into_iter()
        .zip(kept)
        .map(|(i, value)| {
            let original = originals
                .get(i)
                .ok_or_else(|| StopReason::ProjectionFailed {
                    what: format!("message {i}"),
                    why: "the projection kept a message the history does not have".into(),
                })?;
            if original.role != Role::User {
                return Ok(original.clone());
            }
            serde_json::from_value::<MessageParam>(value).map_err(|e| {
                StopReason::ProjectionFailed {
                    what: format!("message {i}"),
                    why: format!("the projected user message does not parse: {e}"),
                }
            })
        })
        .collect()
}

/// The system prompt to send, from its projected JSON (`null`: none). One that no longer parses
/// stops the run ([`StopReason::ProjectionFailed`]) rather than being left out.
pub(super) fn rebuild_system(system: Value) -> Result<Option<System>, StopReason> {
    match system {
        Value::Null => Ok(None),
        other => serde_json::from_value::<System>(other)
            .map(Some)
            .map_err(|e| StopReason::ProjectionFailed {
                what: "the system prompt".into(),
                why: format!("it does not parse once given its cache breakpoint: {e}"),
            }),
    }
}

/// What the model reads for a call whose result could not be sent.
pub(crate) const LOST_RESULT_TEXT: &str = "hands could not send this call's result (it was not a valid tool_result); whether the call took effect is not known from here: check before doing it again";

/// The `tool_result` blocks answering `uses`, one each and in order, from `results` (paired by
/// position). A result that does not parse as a `tool_result`, answers another call, or is
/// missing, is replaced by an `is_error` [`LOST_RESULT_TEXT`] answer for its call; the calls so
/// answered are returned with the blocks, and so is the number of results beyond `uses` (they
/// answer no call, and are left out).
pub(super) fn result_blocks<'u>(
    uses: &'u [ToolUse],
    results: &[Value],
) -> (Vec<ContentBlock>, Vec<&'u ToolUse>, usize) {
    let mut replaced = Vec::new();
    let blocks = uses
        .iter()
        .enumerate()
        .map(|(i, tool_use)| {
            let valid = results
                .get(i)
                .and_then(|r| ContentBlock::from_value(r).ok())
                .filter(|block| {
                    matches!(block.view(), Block::ToolResult(head) if head.tool_use_id == tool_use.id)
                });
            valid.unwrap_or_else(|| {
                replaced.push(tool_use);
                ContentBlock::tool_result(&ApiToolResult {
                    tool_use_id: tool_use.id.clone(),
                    toolset_name: tool_use.toolset_name.clone(),
                    content: MessageContent::Text(LOST_RESULT_TEXT.to_owned()),
                    is_error: true,
                    cache_control: None,
                })
            })
        })
        .collect();
    (blocks, replaced, results.len().saturating_sub(uses.len()))
}
