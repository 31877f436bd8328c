//! Recorded wire fixtures: parse → serialise gives the same JSON, every block and item keeps
//! its exact bytes, and each SSE fixture accumulates to the same message or response as the
//! whole answer.

#![allow(clippy::unwrap_used)]

mod support;

use hands_models::StreamErrorKind;
use hands_models::anthropic::{
    self, Block, CacheControl, ContentBlock, CustomTool, Message, MessageAccumulator,
    MessageContent, MessageParam, MessagesRequest, MessagesStopReason, Metadata, OutputConfig,
    StreamEvent, System, SystemBlock, ThinkingConfig, ThinkingDisplay, ToolChoice, ToolResult,
};
use hands_models::openai::{
    self, ActionShape, ComputerAction, ComputerCallOutput, FunctionCallOutput, FunctionOutput,
    FunctionOutputPart, FunctionTool, Input, Item, ItemView, MouseButton, PathPoint,
    ReasoningConfig, Response, ResponseAccumulator, ResponseStatus, ResponsesRequest, SafetyCheck,
    ScreenshotSource, Truncation,
};
use hands_models::sse::{SseEvent, SseParser};
use serde::Deserialize;
use serde_json::{Value, json};
use support::fixture;

/// Every SSE event of a body fed in `piece`-byte chunks.
fn sse_events(body: &str, piece: usize) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    for chunk in body.as_bytes().chunks(piece) {
        events.extend(parser.push(chunk).unwrap());
    }
    assert!(!parser.has_partial_event());
    events
}

fn value_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn anthropic_message_round_trips_with_exact_block_bytes() {
    let text = fixture("anthropic/message_toolset_turn.json");
    let message: Message = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_value(&message).unwrap(), value_of(&text));
    assert_eq!(message.content.len(), 7);
    for block in &message.content {
        assert!(
            text.contains(block.raw_json()),
            "block not verbatim: {}",
            block.raw_json()
        );
    }
    // Replaying the answer sends each block's bytes unchanged.
    let replay = serde_json::to_string(&message.to_param()).unwrap();
    for block in &message.content {
        assert!(replay.contains(block.raw_json()));
    }

    let Block::Thinking(thinking) = message.content[0].view() else {
        panic!("block 0 is {:?}", message.content[0]);
    };
    let fixture_value = value_of(&text);
    assert_eq!(
        thinking.signature,
        fixture_value["content"][0]["signature"].as_str().unwrap()
    );
    assert!(
        matches!(message.content[1].view(), Block::RedactedThinking(r) if r.data.starts_with("EmwKAhgB"))
    );
    assert!(matches!(message.content[5].view(), Block::Other(v) if v["type"] == "future_widget"));
    let tool_uses: Vec<_> = message.tool_uses().collect();
    assert_eq!(tool_uses.len(), 3);
    assert_eq!(tool_uses[0].toolset_name.as_deref(), Some("computer"));
    assert_eq!(tool_uses[0].input, json!({"coordinate":[512,742]}));
    assert_eq!(
        tool_uses[1].input,
        json!({"text":"Ada Lovelace é \"quoted\""})
    );
    assert_eq!(tool_uses[2].toolset_name, None);
    assert_eq!(message.stop_reason, Some(MessagesStopReason::ToolUse));
    assert_eq!(message.usage.cache_read_input_tokens, Some(4500));
    assert_eq!(
        message
            .usage
            .cache_creation
            .as_ref()
            .unwrap()
            .ephemeral_5m_input_tokens,
        1024
    );
    assert_eq!(
        message
            .usage
            .output_tokens_details
            .as_ref()
            .unwrap()
            .thinking_tokens,
        Some(310)
    );
    assert_eq!(message.usage.service_tier.as_deref(), Some("standard"));
    assert_eq!(message.usage.total_input_tokens(), 12 + 1024 + 4500);
    assert_eq!(
        message.context_management(),
        Some(&json!({"applied_edits": []}))
    );
    assert_eq!(message.text(), "I'll fill in the booking form.");
}

fn accumulate_anthropic(
    body: &str,
    piece: usize,
) -> (Result<Message, StreamErrorKind>, Vec<StreamEvent>) {
    let mut acc = MessageAccumulator::new();
    let mut seen = Vec::new();
    for sse in sse_events(body, piece) {
        let event = match anthropic::stream::parse_event(sse.event.as_deref(), &sse.data) {
            Ok(event) => event,
            Err(err) => return (Err(err), seen),
        };
        if let Err(err) = acc.apply(&event) {
            return (Err(err), seen);
        }
        seen.push(event);
    }
    (acc.finish(), seen)
}

#[test]
fn anthropic_sse_accumulates_to_the_whole_message() {
    let whole: Message =
        serde_json::from_str(&fixture("anthropic/message_toolset_turn.json")).unwrap();
    let body = fixture("anthropic/message_toolset_turn.sse");
    for piece in [1, 7, 64, 4096] {
        let (message, events) = accumulate_anthropic(&body, piece);
        let message = message.unwrap();
        assert_eq!(
            serde_json::to_value(&message).unwrap(),
            serde_json::to_value(&whole).unwrap(),
            "piece {piece}"
        );
        // Thinking text, signature and redacted data are the very strings of the whole answer.
        assert_eq!(message.content[0].view(), whole.content[0].view());
        assert_eq!(message.content[1].view(), whole.content[1].view());
        let n_unknown = events
            .iter()
            .filter(|e| matches!(e, StreamEvent::Unknown { event_type, .. } if event_type == "message_annotation"))
            .count();
        assert_eq!(n_unknown, 1);
        assert!(events.contains(&StreamEvent::Ping));
    }
}

#[test]
fn anthropic_sse_error_event_midway_is_typed() {
    let (result, events) = accumulate_anthropic(&fixture("anthropic/stream_error_midway.sse"), 16);
    match result {
        Err(StreamErrorKind::ErrorEvent {
            error_type,
            message,
            ..
        }) => {
            assert_eq!(error_type.as_deref(), Some("overloaded_error"));
            assert_eq!(message.as_deref(), Some("Overloaded"));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(events.len(), 14);
}

#[derive(Deserialize)]
struct AnthropicMessages {
    messages: Vec<MessageParam>,
}

#[test]
fn anthropic_request_is_built_as_recorded() {
    let text = fixture("anthropic/request_toolset_turn.json");
    let recorded = value_of(&text);
    let messages = serde_json::from_str::<AnthropicMessages>(&text)
        .unwrap()
        .messages;
    let mut request = MessagesRequest::new("claude-opus-5-5", 4096, messages);
    request.system = Some(System::Blocks(vec![SystemBlock {
        text: "You operate a Linux desktop. Take a screenshot before acting.".into(),
        cache_control: Some(CacheControl::EPHEMERAL),
    }]));
    let mut note = CustomTool::new(
        "record_note",
        "Record a note about the booking",
        json!({"type": "object", "properties": {"note": {"type": "string"}, "priority": {"type": "integer"}}, "required": ["note"]}),
    );
    note.cache_control = None;
    request.tools = vec![
        json!({"type": "computer_toolset_20260801", "configs": {"zoom": {"enabled": false}}}),
        json!({"type": "bash_20250124", "name": "bash"}),
        note.to_value(),
    ];
    request.tool_choice = Some(ToolChoice::Auto {
        disable_parallel_tool_use: Some(false),
    });
    request.thinking = Some(ThinkingConfig::Adaptive {
        display: Some(ThinkingDisplay::Summarized),
    });
    request.output_config = Some(OutputConfig {
        effort: Some("high".into()),
        format: None,
    });
    request.context_management = Some(recorded["context_management"].clone());
    request.metadata = Some(Metadata {
        user_id: Some("hands-drill".into()),
    });
    request.extra.insert("inference_geo".into(), json!("us"));
    assert_eq!(serde_json::to_value(&request).unwrap(), recorded);

    // The replayed assistant blocks (signature, redacted data, unknown block) keep their bytes.
    let body = serde_json::to_string(&request).unwrap();
    for param in &request.messages {
        if let MessageContent::Blocks(blocks) = &param.content {
            for block in blocks {
                assert!(text.contains(block.raw_json()));
                assert!(body.contains(block.raw_json()));
            }
        }
    }

    // The tool result the runner would build is the recorded one.
    let built = ContentBlock::tool_result(&ToolResult {
        tool_use_id: "toolu_01A09q90qw90lq917835lq9".into(),
        toolset_name: Some("computer".into()),
        content: MessageContent::Blocks(vec![
            ContentBlock::text("Took a screenshot."),
            ContentBlock::image_base64(
                "image/png",
                recorded["messages"][2]["content"][0]["content"][1]["source"]["data"]
                    .as_str()
                    .unwrap(),
            ),
        ]),
        is_error: false,
        cache_control: Some(CacheControl::EPHEMERAL),
    });
    assert_eq!(built.to_value(), recorded["messages"][2]["content"][0]);
}

#[test]
fn anthropic_error_bodies_parse() {
    for (file, error_type) in [
        ("anthropic/error_overloaded.json", "overloaded_error"),
        ("anthropic/error_rate_limit.json", "rate_limit_error"),
        ("anthropic/error_spend_limit.json", "rate_limit_error"),
        (
            "anthropic/error_invalid_request.json",
            "invalid_request_error",
        ),
    ] {
        let body = value_of(&fixture(file));
        assert_eq!(body["error"]["type"], error_type, "{file}");
        assert!(body["request_id"].as_str().unwrap().starts_with("req_"));
    }
}

#[test]
fn openai_response_round_trips_with_exact_item_bytes() {
    let text = fixture("openai/response_computer_turn.json");
    let response: Response = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_value(&response).unwrap(), value_of(&text));
    for item in &response.output {
        assert!(text.contains(item.raw_json()), "item not verbatim");
    }
    assert_eq!(response.status, Some(ResponseStatus::Completed));
    let kinds: Vec<&str> = response.output.iter().map(Item::item_type).collect();
    assert_eq!(
        kinds,
        [
            "reasoning",
            "web_search_call",
            "computer_call",
            "function_call",
            "message"
        ]
    );

    let ItemView::Reasoning(reasoning) = response.output[0].view() else {
        panic!("item 0 is {:?}", response.output[0]);
    };
    assert!(
        reasoning
            .encrypted_content
            .as_deref()
            .unwrap()
            .starts_with("gAAAAAB")
    );
    assert_eq!(reasoning.summary.len(), 1);
    assert!(
        matches!(response.output[1].view(), ItemView::Other(v) if v["action"]["query"] == "Harbour Hotel check-in time")
    );

    let call = response.output[2].as_computer_call().unwrap();
    assert_eq!(call.shape(), ActionShape::Batch);
    assert_eq!(
        call.pending_safety_checks[0].code.as_deref(),
        Some("malicious_instructions")
    );
    let expect = vec![
        ComputerAction::Click {
            button: MouseButton::Left,
            x: 512,
            y: 342,
            keys: vec![],
        },
        ComputerAction::DoubleClick {
            x: 600,
            y: 400,
            keys: vec!["SHIFT".into()],
        },
        ComputerAction::Drag {
            path: vec![
                PathPoint { x: 10, y: 20 },
                PathPoint { x: 30, y: 40 },
                PathPoint { x: 50, y: 60 },
            ],
            keys: vec![],
        },
        ComputerAction::Keypress {
            keys: vec!["CTRL".into(), "A".into()],
        },
        ComputerAction::Move {
            x: 700,
            y: 500,
            keys: vec![],
        },
        ComputerAction::Scroll {
            x: 640,
            y: 400,
            scroll_x: 0,
            scroll_y: 300,
            keys: vec!["SHIFT".into()],
        },
        ComputerAction::Type {
            text: "Ada Lovelace é".into(),
        },
        ComputerAction::Wait,
        ComputerAction::Screenshot,
    ];
    assert_eq!(call.actions(), expect.as_slice());

    let function = response.output[3].as_function_call().unwrap();
    assert_eq!(function.name, "browser_read_page");
    assert_eq!(
        value_of(&function.arguments),
        json!({"mode":"interactive","tab_id":null})
    );
    assert_eq!(response.output_text(), "I'll fill in the booking form now.");
    assert_eq!(response.calls().count(), 2);
    let usage = response.usage.as_ref().unwrap();
    assert_eq!(
        usage.input_tokens_details.as_ref().unwrap().cached_tokens,
        800
    );
    assert_eq!(
        usage
            .input_tokens_details
            .as_ref()
            .unwrap()
            .cache_write_tokens,
        Some(0)
    );
    assert_eq!(
        usage
            .output_tokens_details
            .as_ref()
            .unwrap()
            .reasoning_tokens,
        30
    );
    assert_eq!(usage.total_tokens, 1050);
}

fn accumulate_openai(
    body: &str,
    piece: usize,
) -> (Result<Response, StreamErrorKind>, Vec<(usize, Item)>) {
    let mut acc = ResponseAccumulator::new();
    let mut taken = Vec::new();
    for sse in sse_events(body, piece) {
        let event = match openai::stream::parse_event(sse.event.as_deref(), &sse.data) {
            Ok(Some(event)) => event,
            Ok(None) => continue,
            Err(err) => return (Err(err), taken),
        };
        if let Err(err) = acc.apply(&event) {
            return (Err(err), taken);
        }
        taken.extend(acc.take_ready());
    }
    (acc.finish(), taken)
}

#[test]
fn openai_sse_hands_out_items_in_order_and_ends_with_the_whole_response() {
    let whole: Response =
        serde_json::from_str(&fixture("openai/response_computer_turn.json")).unwrap();
    let body = fixture("openai/response_computer_turn.sse");
    for piece in [1, 13, 4096] {
        let (response, taken) = accumulate_openai(&body, piece);
        let response = response.unwrap();
        assert_eq!(
            serde_json::to_value(&response).unwrap(),
            serde_json::to_value(&whole).unwrap()
        );
        let indexes: Vec<usize> = taken.iter().map(|(i, _)| *i).collect();
        assert_eq!(indexes, [0, 1, 2, 3, 4]);
        for (idx, item) in &taken {
            assert_eq!(item.to_value(), whole.output[*idx].to_value());
        }
        // The reasoning blob handed out early is the one to replay.
        assert!(
            matches!(taken[0].1.view(), ItemView::Reasoning(r) if r.encrypted_content.is_some())
        );
    }
}

#[test]
fn openai_sse_failed_response_is_a_response_not_an_error() {
    let (response, taken) = accumulate_openai(&fixture("openai/stream_failed.sse"), 50);
    let response = response.unwrap();
    assert_eq!(response.status, Some(ResponseStatus::Failed));
    assert_eq!(
        response.error.unwrap().code.as_deref(),
        Some("server_error")
    );
    assert!(taken.is_empty());
}

#[test]
fn openai_sse_error_event_midway_is_typed_after_delivered_items() {
    let (result, taken) = accumulate_openai(&fixture("openai/stream_error_midway.sse"), 50);
    match result {
        Err(StreamErrorKind::ErrorEvent { code, message, .. }) => {
            assert_eq!(code.as_deref(), Some("server_error"));
            assert!(message.unwrap().contains("server had an error"));
        }
        other => panic!("unexpected {other:?}"),
    }
    // The reasoning item was complete and handed out before the failure.
    assert_eq!(taken.len(), 1);
}

#[derive(Deserialize)]
struct OpenAiInput {
    input: Input,
}

#[test]
fn openai_request_is_built_as_recorded() {
    let text = fixture("openai/request_stateless_turn.json");
    let recorded = value_of(&text);
    let input = serde_json::from_str::<OpenAiInput>(&text).unwrap().input;
    let Input::Items(items) = &input else {
        panic!("input is not items");
    };
    for item in items {
        assert!(text.contains(item.raw_json()));
    }
    let mut request = ResponsesRequest::new("computer-use-2026-08", input.clone());
    request.instructions =
        Some("You operate a booking web app. Verify each field before submitting.".into());
    let mut read_page = FunctionTool::new(
        "browser_read_page",
        "Read the page",
        json!({"type": "object", "properties": {"mode": {"type": "string"}, "tab_id": {"type": ["string", "null"]}}, "required": ["mode", "tab_id"], "additionalProperties": false}),
    );
    read_page.strict = Some(true);
    request.tools = vec![openai::computer_tool(), read_page.to_value()];
    request.tool_choice = Some(openai::ToolChoice::Auto);
    request.store = Some(false);
    request.include = vec![openai::INCLUDE_REASONING_ENCRYPTED_CONTENT.into()];
    request.truncation = Some(Truncation::Auto);
    request.reasoning = Some(ReasoningConfig {
        effort: Some("medium".into()),
        summary: Some("auto".into()),
    });
    request.max_output_tokens = Some(4096);
    request.parallel_tool_calls = Some(true);
    request.prompt_cache_key = Some("hands-run-7".into());
    request
        .extra
        .insert("safety_identifier".into(), json!("hands-drill"));
    assert_eq!(serde_json::to_value(&request).unwrap(), recorded);

    // The outputs the runner would build are the recorded ones.
    let check: SafetyCheck =
        serde_json::from_value(recorded["input"][2]["pending_safety_checks"][0].clone()).unwrap();
    let screenshot = Item::computer_call_output(&ComputerCallOutput {
        call_id: "call_Zx8yW7vU6tS5rQ4pO3nM2lK1".into(),
        screenshot: ScreenshotSource::data_url(
            "image/png",
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
        ),
        acknowledged_safety_checks: vec![check],
    });
    assert_eq!(screenshot.to_value(), recorded["input"][4]);
    let read = Item::function_call_output(&FunctionCallOutput {
        call_id: "call_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8".into(),
        output: FunctionOutput::Parts(vec![
            FunctionOutputPart::InputText {
                text: "form \"Booking\": textbox \"Guest name\" [ref=e12]".into(),
            },
            FunctionOutputPart::InputImage {
                image_url: Some("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==".into()),
                file_id: None,
                detail: Some("high".into()),
            },
        ]),
    });
    assert_eq!(read.to_value(), recorded["input"][5]);
    assert_eq!(
        Item::user_text("Book a room for Ada Lovelace on 2026-12-24.").to_value(),
        recorded["input"][0]
    );
}

#[test]
fn openai_error_bodies_parse() {
    let quota = value_of(&fixture("openai/error_insufficient_quota.json"));
    assert_eq!(quota["error"]["code"], "insufficient_quota");
    let rate = value_of(&fixture("openai/error_rate_limit.json"));
    assert_eq!(rate["error"]["code"], "rate_limit_exceeded");
}
