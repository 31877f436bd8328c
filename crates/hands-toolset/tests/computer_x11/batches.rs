//! Batch semantics, malformed input, dispatch on (`toolset_name`, `name`), and the legacy shapes,
//! checked both in the answers and in what did (or did not) reach the recorder's window.

use hands_testkit::EventKind::{ButtonPress, ButtonRelease};
use hands_testkit::RecorderConfig;
use hands_toolset::computer::declaration::ToolsetDeclaration;
use hands_toolset::computer::members::Member;
use hands_toolset::computer::{ComputerConfig, ComputerToolset, Shape};
use hands_toolset::strings::NOT_EXECUTED;
use hands_x11::X11Desktop;
use serde_json::{Value, json};

use crate::support::{Rig, SIZING, config, presses};

/// The exact stop text of the spec ("Acciones por lotes").
const STOP_TEXT: &str = "Not executed: an earlier computer action in this turn failed.";

#[tokio::test]
async fn a_failing_block_stops_the_batch_with_the_exact_texts() {
    assert_eq!(NOT_EXECUTED, STOP_TEXT);
    // The default closing screenshot stays on: it must not disturb the stop texts.
    let mut rig = Rig::with(
        1280,
        800,
        ComputerConfig {
            sizing: SIZING,
            ..ComputerConfig::default()
        },
        &RecorderConfig::default(),
    );
    let blocks = vec![
        rig.call("left_click", json!({"coordinate": [10, 10]})),
        rig.call("type", json!({"text": "ok"})),
        rig.call("key", json!({"text": "ctrl+frobnicate"})),
        rig.call("left_click", json!({"coordinate": [30, 30]})),
        rig.call("type", json!({"text": "zzz"})),
        rig.call("screenshot", json!({})),
        rig.call("key", json!({"text": "Return"})),
    ];
    let ids: Vec<Value> = blocks.iter().map(|b| b["id"].clone()).collect();
    let answers = rig.turn(blocks).await;
    assert_eq!(answers.len(), 7, "every block answered once");
    answers[0].assert_ok();
    // The closing screenshot goes on the last success before the failure: an error result
    // may hold only text.
    assert!(!answers[1].is_error());
    assert_eq!(answers[1].text(), "OK");
    assert_eq!(answers[1].images().len(), 1, "{}", answers[1].summary());
    let failed = &answers[2];
    assert!(failed.is_error());
    assert!(failed.json["content"].is_string(), "{}", failed.summary());
    assert!(
        failed.text().contains("frobnicate") && failed.text().contains("key"),
        "says what was wrong: {}",
        failed.summary()
    );
    for (answer, id) in answers[3..].iter().zip(&ids[3..]) {
        assert_eq!(
            answer.json,
            json!({"type": "tool_result", "tool_use_id": id, "toolset_name": "computer",
                   "is_error": true, "content": STOP_TEXT})
        );
    }
    // Only the blocks before the failure reached the window.
    let events = rig.events();
    let at = rig.expected_screen(10, 10);
    let buttons: Vec<_> = presses(&events)
        .into_iter()
        .filter(|(kind, _, _)| matches!(kind, ButtonPress | ButtonRelease))
        .collect();
    assert_eq!(buttons, vec![(ButtonPress, 1, at), (ButtonRelease, 1, at)]);
    assert_eq!(rig.typed(), "ok");
}

#[tokio::test]
async fn an_out_of_bounds_coordinate_mid_batch_stops_the_rest() {
    let mut rig = Rig::new(1280, 800);
    let blocks = vec![
        rig.call("type", json!({"text": "ab"})),
        rig.call("left_click", json!({"coordinate": [5000, 5]})),
        rig.call("type", json!({"text": "cd"})),
        rig.call(
            "scroll",
            json!({"scroll_direction": "down", "scroll_amount": 3}),
        ),
    ];
    let answers = rig.turn(blocks).await;
    answers[0].assert_ok();
    assert!(answers[1].is_error());
    assert!(
        answers[1].text().contains("outside the screenshot")
            && answers[1].text().contains("1024x640"),
        "{}",
        answers[1].summary()
    );
    for answer in &answers[2..] {
        assert!(answer.is_error());
        assert_eq!(answer.json["content"], STOP_TEXT);
    }
    let events = rig.events();
    assert_eq!(rig.typed(), "ab");
    assert!(events.iter().all(|e| !e.is_button()), "{events:?}");
}

#[tokio::test]
async fn malformed_inputs_are_errors_that_say_what_was_wrong() {
    let mut rig = Rig::new(1280, 800);
    let cases: Vec<(&str, Value, &str)> = vec![
        ("left_click", json!({"coordinate": "100,200"}), "coordinate"),
        ("left_click", json!({"coordinate": [-1, 5]}), "coordinate"),
        ("left_click", json!({"coordinate": [1.5, 2]}), "coordinate"),
        ("left_click", json!({"coordinate": [10]}), "coordinate"),
        ("left_click", json!({"coordinate": [1024, 10]}), "outside"),
        ("double_click", json!({"coordinate": [10, 640]}), "outside"),
        ("left_click", json!({"text": "hyper"}), "modifier"),
        (
            "left_click",
            json!({"coordinate": [10, 10], "extra": 1}),
            "extra",
        ),
        (
            "left_click_drag",
            json!({"coordinate": [10, 10]}),
            "start_coordinate",
        ),
        ("mouse_move", json!({}), "coordinate"),
        ("type", json!({}), "text"),
        ("type", json!({"text": 42}), "text"),
        ("key", json!({"text": "ctrl+frobnicate"}), "frobnicate"),
        ("key", json!({"text": "a", "repeat": 0}), "repeat"),
        ("key", json!({"text": "a", "repeat": 101}), "repeat"),
        (
            "hold_key",
            json!({"text": "shift", "duration": 301}),
            "duration",
        ),
        ("hold_key", json!({"text": "shift"}), "duration"),
        ("wait", json!({"duration": -1}), "duration"),
        ("wait", json!({"duration": "1s"}), "duration"),
        (
            "scroll",
            json!({"scroll_direction": "diagonal", "scroll_amount": 1}),
            "scroll_direction",
        ),
        (
            "scroll",
            json!({"scroll_direction": "down"}),
            "scroll_amount",
        ),
        (
            "scroll",
            json!({"scroll_direction": "down", "scroll_amount": 101}),
            "scroll_amount",
        ),
        ("zoom", json!({"region": [10, 10, 5, 20]}), "x0 < x1"),
        ("zoom", json!({"region": [0, 0, 2000, 10]}), "outside"),
        ("zoom", json!({}), "region"),
        ("screenshot", json!("now"), "object"),
        ("cursor_position", json!([1, 2]), "object"),
        // The legacy `action` field does not belong in the toolset's members.
        ("screenshot", json!({"action": "screenshot"}), "action"),
        (
            "left_click",
            json!({"action": "left_click", "coordinate": [1, 1]}),
            "action",
        ),
        ("teleport", json!({}), "teleport"),
        ("computer", json!({"action": "screenshot"}), "computer"),
    ];
    for (name, input, says) in cases {
        let answer = rig.one(name, input.clone()).await;
        assert!(answer.is_error(), "{name} {input}: {}", answer.summary());
        assert_eq!(answer.json["toolset_name"], "computer");
        let text = answer.text();
        assert!(
            text.contains(says),
            "{name} {input}: {text:?} should mention {says:?}"
        );
        assert_ne!(text, STOP_TEXT);
    }
    // None of it reached the window.
    assert_eq!(rig.events(), vec![]);
}

#[tokio::test]
async fn a_disabled_member_is_an_error_and_the_rest_still_work() {
    let mut rig = Rig::new(1024, 768);
    let display = rig.display();
    // A second toolset on the same display, declared without zoom.
    let desktop = X11Desktop::connect(Some(&display)).expect("attach to the display");
    let mut toolset = ComputerToolset::new(
        desktop,
        ComputerConfig {
            shape: Shape::Toolset(ToolsetDeclaration::new().disable(Member::Zoom)),
            ..config()
        },
    )
    .expect("a valid declaration");
    std::mem::swap(&mut rig.toolset, &mut toolset);
    let blocks = vec![
        rig.call("left_click", json!({"coordinate": [20, 20]})),
        rig.call("zoom", json!({"region": [0, 0, 10, 10]})),
        rig.call("left_click", json!({"coordinate": [40, 40]})),
    ];
    let answers = rig.turn(blocks).await;
    answers[0].assert_ok();
    assert!(answers[1].is_error());
    assert!(
        answers[1].text().contains("disabled"),
        "{}",
        answers[1].summary()
    );
    assert_eq!(answers[2].json["content"], STOP_TEXT);
    let at = rig.expected_screen(20, 20);
    assert_eq!(
        presses(&rig.events()),
        vec![(ButtonPress, 1, at), (ButtonRelease, 1, at)]
    );
    assert!(!rig.one("screenshot", json!({})).await.is_error());
}

#[tokio::test]
async fn a_custom_tool_sharing_a_member_name_is_not_routed_to_the_desktop() {
    let mut rig = Rig::new(1024, 768);
    let blocks = vec![
        rig.plain("left_click", json!({"coordinate": [100, 100]})),
        rig.call("type", json!({"text": "x"})),
        rig.plain("type", json!({"text": "custom"})),
        rig.plain("screenshot", json!({})),
    ];
    let answers = rig.turn(blocks).await;
    assert_eq!(answers.len(), 1, "only the toolset member is answered");
    answers[0].assert_ok();
    let events = rig.events();
    assert_eq!(rig.typed(), "x");
    assert!(events.iter().all(|e| !e.is_button()), "{events:?}");

    // A turn of custom tools only leaves the desktop alone and answers nothing.
    let blocks = vec![rig.plain("left_click", json!({"coordinate": [5, 5]}))];
    assert!(rig.turn(blocks).await.is_empty());
    assert!(rig.events().iter().all(|e| !e.is_button()));
}

#[tokio::test]
async fn the_legacy_20251124_shape_drives_the_same_executor() {
    let mut rig = Rig::with(
        1280,
        800,
        ComputerConfig {
            shape: Shape::Legacy20251124 { enable_zoom: true },
            ..config()
        },
        &RecorderConfig::default(),
    );
    let declaration = rig.toolset.declaration();
    assert_eq!(declaration["type"], "computer_20251124");
    assert_eq!(declaration["name"], "computer");
    assert_eq!(declaration["display_width_px"], 1024);
    assert_eq!(declaration["display_height_px"], 640);
    assert_eq!(rig.toolset.beta_header(), Some("computer-use-2025-11-24"));

    let blocks = vec![
        rig.plain(
            "computer",
            json!({"action": "left_click", "coordinate": [100, 100]}),
        ),
        rig.plain("computer", json!({"action": "type", "text": "hé\n"})),
        rig.plain(
            "computer",
            json!({"action": "scroll", "scroll_direction": "up", "scroll_amount": 2}),
        ),
        rig.plain(
            "computer",
            json!({"action": "mouse_move", "coordinate": [512, 320]}),
        ),
        rig.plain("computer", json!({"action": "cursor_position"})),
        rig.plain(
            "computer",
            json!({"action": "zoom", "region": [0, 0, 64, 40]}),
        ),
        rig.plain("computer", json!({"action": "screenshot"})),
        // A toolset-shaped block is not the legacy tool's.
        rig.call("left_click", json!({"coordinate": [1, 1]})),
    ];
    let answers = rig.turn(blocks).await;
    assert_eq!(answers.len(), 7);
    for answer in &answers[..4] {
        answer.assert_ok();
        assert!(answer.json.get("toolset_name").is_none());
    }
    assert_eq!(answers[4].text(), "X=512, Y=320");
    let zoom = answers[5].image();
    assert_eq!((zoom.width, zoom.height), (1024, 640));
    let screenshot = answers[6].image();
    assert_eq!((screenshot.width, screenshot.height), (1024, 640));

    let events = rig.events();
    let at = rig.expected_screen(100, 100);
    let pointer: Vec<_> = presses(&events)
        .into_iter()
        .filter(|(kind, _, _)| matches!(kind, ButtonPress | ButtonRelease))
        .collect();
    assert_eq!(
        pointer,
        vec![
            (ButtonPress, 1, at),
            (ButtonRelease, 1, at),
            (ButtonPress, 4, at),
            (ButtonRelease, 4, at),
            (ButtonPress, 4, at),
            (ButtonRelease, 4, at),
        ]
    );
    assert_eq!(rig.typed(), "hé\n");

    // A legacy block without `action` is an error that lists the actions.
    let block = rig.plain("computer", json!({"coordinate": [1, 1]}));
    let answers = rig.turn(vec![block]).await;
    assert!(answers[0].is_error());
    assert!(
        answers[0].text().contains("action"),
        "{}",
        answers[0].summary()
    );
}

#[tokio::test]
async fn the_legacy_20250124_shape_has_no_zoom() {
    let mut rig = Rig::with(
        1024,
        768,
        ComputerConfig {
            shape: Shape::Legacy20250124,
            ..config()
        },
        &RecorderConfig::default(),
    );
    assert!(rig.toolset.declaration().get("enable_zoom").is_none());
    let blocks = vec![
        rig.plain("computer", json!({"action": "key", "text": "ctrl+s"})),
        rig.plain(
            "computer",
            json!({"action": "zoom", "region": [0, 0, 10, 10]}),
        ),
        rig.plain("computer", json!({"action": "type", "text": "never"})),
    ];
    let answers = rig.turn(blocks).await;
    answers[0].assert_ok();
    assert!(answers[1].is_error());
    assert!(
        answers[1].text().contains("zoom"),
        "{}",
        answers[1].summary()
    );
    assert_eq!(
        answers[2].json,
        json!({"type": "tool_result", "tool_use_id": answers[2].json["tool_use_id"],
               "is_error": true, "content": STOP_TEXT})
    );
    assert_eq!(rig.typed(), "s");
}

/// The batch's closing screenshot is never put on an `is_error` result (the Messages API answers
/// that with a 400): after a failure it goes on the last success, or is not taken when the first
/// block failed; and a disabled `screenshot` member means no screenshot at all.
#[tokio::test]
async fn the_closing_screenshot_never_goes_on_an_error_result() {
    let closing = ComputerConfig {
        sizing: SIZING,
        ..ComputerConfig::default()
    };
    let mut rig = Rig::with(640, 400, closing.clone(), &RecorderConfig::default());
    // The first block fails: nothing succeeded, so no screenshot is taken.
    let blocks = vec![
        rig.call("left_click", json!({"coordinate": [9999, 1]})),
        rig.call("type", json!({"text": "never"})),
    ];
    let answers = rig.turn(blocks).await;
    assert!(
        answers
            .iter()
            .all(|a| a.is_error() && a.images().is_empty())
    );
    assert!(answers.iter().all(|a| a.json["content"].is_string()));
    // A batch that succeeds ends with it on its last result.
    let blocks = vec![
        rig.call("left_click", json!({"coordinate": [5, 5]})),
        rig.call("type", json!({"text": "ok"})),
    ];
    let answers = rig.turn(blocks).await;
    answers[0].assert_ok();
    assert_eq!(answers[1].images().len(), 1);
    // A screenshot before a failure that could not act is current: nothing is added.
    let blocks = vec![
        rig.call("screenshot", json!({})),
        rig.call("key", json!({"text": "ctrl+nonsense"})),
    ];
    let answers = rig.turn(blocks).await;
    assert_eq!(answers[0].images().len(), 1, "{}", answers[0].summary());
    assert!(answers[1].is_error() && answers[1].json["content"].is_string());

    // `screenshot` disabled: never an image, closing or otherwise.
    let no_shots = ComputerConfig {
        shape: Shape::Toolset(ToolsetDeclaration::new().disable(Member::Screenshot)),
        ..closing
    };
    let mut rig = Rig::with(640, 400, no_shots, &RecorderConfig::default());
    for blocks in [
        vec![rig.call("left_click", json!({"coordinate": [5, 5]}))],
        vec![
            rig.call("type", json!({"text": "a"})),
            rig.call("left_click", json!({"coordinate": [9999, 1]})),
        ],
    ] {
        let answers = rig.turn(blocks).await;
        for answer in &answers {
            assert!(answer.images().is_empty(), "{}", answer.summary());
        }
    }
}

/// Names a model sends come back on one line, without control or bidi characters, cut to 200
/// characters, inside error texts of at most 4,096 characters.
#[tokio::test]
async fn hostile_names_are_echoed_one_line_and_bounded() {
    let mut rig = Rig::new(640, 400);
    let hostile = format!("n\n\u{202e}{}\r\u{2066}", "x".repeat(5000));
    let cases = vec![
        rig.call(&hostile, json!({})),
        rig.call("left_click", json!({ hostile.clone(): 1 })),
        rig.call("key", json!({ "text": hostile.clone() })),
        rig.call("key", json!({ "text": format!("ctrl+{hostile}") })),
        rig.call("type", json!({ "text": 5, hostile.clone(): null })),
    ];
    for block in cases {
        let answers = rig.turn(vec![block]).await;
        let text = answers[0].text();
        assert!(answers[0].is_error(), "{}", answers[0].summary());
        assert!(
            !text.chars().any(hands_toolset::errtext::is_line_unsafe),
            "{text}"
        );
        assert!(text.chars().count() <= 4096);
        assert!(!text.contains(&"x".repeat(201)), "{text}");
    }
}
