//! Unit tests of the Claude session's pure pieces: answers paired with their calls, the context projection.

use serde_json::json;

use super::*;

fn call(id: &str, toolset: Option<&str>) -> ToolUse {
    ToolUse {
        id: id.into(),
        name: "screenshot".into(),
        toolset_name: toolset.map(str::to_owned),
        input: json!({}),
    }
}

fn head(block: &ContentBlock) -> (String, bool) {
    match block.view() {
        Block::ToolResult(head) => (head.tool_use_id.clone(), head.is_error),
        other => panic!("not a tool_result: {other:?}"),
    }
}

/// A result that does not convert, one answering another call, and one missing: each call
/// is still answered exactly once, in order, and the replaced ones are named.
#[test]
fn every_call_gets_one_answer_even_when_its_result_does_not_convert() {
    let uses = [
        call("toolu_ok", Some("computer")),
        call("toolu_bad", Some("computer")),
        call("toolu_other", None),
        call("toolu_missing", None),
    ];
    let good = WireResult::error(&uses[0], "kept").to_json();
    let results = [
        good.clone(),
        // `tool_use_id` must be a string: this fails `ContentBlock::from_value`.
        json!({"type": "tool_result", "tool_use_id": 7, "content": "x"}),
        // A valid block, for a call of another turn.
        json!({"type": "tool_result", "tool_use_id": "toolu_elsewhere", "content": "x"}),
    ];
    assert!(ContentBlock::from_value(&results[1]).is_err());
    let (blocks, replaced, unpaired) = result_blocks(&uses, &results);
    assert_eq!(unpaired, 0);
    let ids: Vec<(String, bool)> = blocks.iter().map(head).collect();
    assert_eq!(
        ids,
        [
            ("toolu_ok".to_owned(), true),
            ("toolu_bad".to_owned(), true),
            ("toolu_other".to_owned(), true),
            ("toolu_missing".to_owned(), true),
        ]
    );
    assert_eq!(blocks[0].to_value(), good);
    let replaced: Vec<&str> = replaced.iter().map(|u| u.id.as_str()).collect();
    assert_eq!(replaced, ["toolu_bad", "toolu_other", "toolu_missing"]);
    for block in &blocks[1..] {
        assert_eq!(block.to_value()["content"], json!(LOST_RESULT_TEXT));
    }
    // A toolset member's answer echoes its toolset.
    assert_eq!(blocks[1].to_value()["toolset_name"], json!("computer"));
    assert!(blocks[2].to_value().get("toolset_name").is_none());
    // A result beyond the calls is counted, not sent.
    let extra = [good.clone(), good];
    let (blocks, replaced, unpaired) = result_blocks(&uses[..1], &extra);
    assert_eq!((blocks.len(), replaced.len(), unpaired), (1, 0, 1));
}

/// A projected user message or system prompt that does not parse stops the run, naming
/// it; an assistant message goes verbatim.
#[test]
fn a_projection_that_does_not_parse_stops_the_run() {
    let originals = [
        MessageParam::user_text("task"),
        MessageParam::assistant(vec![ContentBlock::text("ok")]),
        MessageParam::user_text("more"),
    ];
    let fine = rebuild_messages(
        &originals,
        vec![0, 1, 2],
        vec![
            json!({"role": "user", "content": "task, projected"}),
            json!("ignored: the assistant goes verbatim"),
            json!({"role": "user", "content": "more"}),
        ],
    )
    .unwrap();
    assert_eq!(fine[0], MessageParam::user_text("task, projected"));
    assert_eq!(fine[1], originals[1]);
    let broken = rebuild_messages(
        &originals,
        vec![0, 2],
        vec![
            json!({"role": "user", "content": "task"}),
            json!({"role": "user", "content": 42}),
        ],
    );
    assert!(
        matches!(&broken, Err(StopReason::ProjectionFailed { what, .. }) if what == "message 2"),
        "{broken:?}"
    );
    let outside = rebuild_messages(&originals, vec![9], vec![json!({})]);
    assert!(
        matches!(&outside, Err(StopReason::ProjectionFailed { what, .. }) if what == "message 9"),
        "{outside:?}"
    );
    assert_eq!(rebuild_system(Value::Null), Ok(None));
    assert_eq!(
        rebuild_system(json!("be brief")),
        Ok(Some(System::Text("be brief".into())))
    );
    let system = rebuild_system(json!([{"type": "text", "text": 3}]));
    assert!(
        matches!(&system, Err(StopReason::ProjectionFailed { what, .. }) if what == "the system prompt"),
        "{system:?}"
    );
}
