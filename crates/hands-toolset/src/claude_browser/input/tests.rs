//! Input parsing as pure logic: URL completion, targets, modifiers, key texts, durations.

use std::time::Duration;

use hands_core::browser::args::{BrowserCall, CssPoint, KeyPress, PointerButton};
use hands_core::browser::read::Ref;
use hands_core::input::{Modifier, ModifierSet};
use serde_json::{Value, json};

use super::*;

const LIMITS: Limits = Limits {
    max_wait: Duration::from_secs(30),
    script_timeout: Duration::from_secs(10),
    diagnostics_limit: 100,
    scroll_step: 100,
};

fn ok(member: &str, input: Value) -> Action {
    let m = Member::from_name(member).unwrap();
    Action::parse(m, &input, LIMITS).unwrap_or_else(|e| panic!("{member} {input}: {e}"))
}

fn err(member: &str, input: Value) -> String {
    let m = Member::from_name(member).unwrap();
    match Action::parse(m, &input, LIMITS) {
        Ok(action) => panic!("{member} {input} parsed as {action:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn urls_without_a_scheme_are_https() {
    let cases = [
        ("example.com", "https://example.com/"),
        (
            "www.example.com/docs?q=1",
            "https://www.example.com/docs?q=1",
        ),
        ("localhost:3000/a", "https://localhost:3000/a"),
        ("example.com:8443", "https://example.com:8443/"),
        ("127.0.0.1:8080/x", "https://127.0.0.1:8080/x"),
        ("http://plain.test/", "http://plain.test/"),
        ("HTTPS://Upper.TEST", "https://upper.test/"),
        ("  https://trimmed.test  ", "https://trimmed.test/"),
        ("about:blank", "about:blank"),
        ("data:text/html,hi", "data:text/html,hi"),
        ("javascript:alert(1)", "javascript:alert(1)"),
    ];
    for (text, want) in cases {
        assert_eq!(
            complete_url("url", text).map(|u| u.as_str().to_owned()),
            Ok(want.to_owned()),
            "{text}"
        );
    }
    assert!(complete_url("url", "").is_err());
    assert!(complete_url("url", "not a url").is_err());
    assert!(complete_url("url", "https://").is_err());
}

#[test]
fn targets_and_modifiers() {
    let Action::Call(BrowserCall::ClickAt {
        at, button, keys, ..
    }) = ok(
        "right_click",
        json!({"target": {"type": "coordinate", "coordinate": [3.0, 4]}, "modifiers": "cmd"}),
    )
    else {
        panic!("not a click_at")
    };
    assert_eq!(at, CssPoint::new(3, 4).unwrap());
    assert_eq!(button, PointerButton::Right);
    assert_eq!(keys, [Modifier::Super].into_iter().collect::<ModifierSet>());
    // Empty modifiers are none; a null field is an absent one.
    for modifiers in [json!(""), json!([]), Value::Null] {
        assert!(matches!(
            ok(
                "left_click",
                json!({"target": {"type": "ref", "ref": "e1"}, "modifiers": modifiers})
            ),
            Action::Call(BrowserCall::Click { .. })
        ));
    }
    assert_eq!(
        err("left_click", json!({"target": [1, 2]})),
        "`left_click`: `target` must be {\"type\": \"coordinate\", \"coordinate\": [x, y]} or {\"type\": \"ref\", \"ref\": \"…\"}, got [1,2]"
    );
    assert_eq!(
        err("left_click", json!({"target": {"type": "coordinate"}})),
        "`left_click` requires `target.coordinate` ({\"type\": \"coordinate\", \"coordinate\": [x, y]} or {\"type\": \"ref\", \"ref\": \"…\"})"
    );
    assert!(
        err(
            "left_click",
            json!({"target": {"type": "coordinate", "coordinate": [1.5, 2]}})
        )
        .contains("non-negative integers")
    );
    assert!(
        err(
            "left_click",
            json!({"target": {"type": "coordinate", "coordinate": [1, 2]}, "modifiers": 3})
        )
        .contains("`modifiers` must be modifiers held")
    );
    // Larger than a JSON number holds exactly.
    assert!(
        err(
            "mouse_move",
            json!({"coordinate": [9_007_199_254_740_992u64, 0]})
        )
        .contains("`coordinate` must be")
    );
}

#[test]
fn key_texts_survive_the_driver_round_trip() {
    let keys = |text: &str| -> Vec<String> {
        match ok("key", json!({"text": text})) {
            Action::Call(BrowserCall::Key { keys, .. }) => {
                keys.iter().map(|k| k.text().to_owned()).collect()
            }
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(keys("ctrl++"), ["Control_L+plus"]);
    assert_eq!(keys(" "), ["0x20"]);
    assert_eq!(keys("alt+Tab Return"), ["Alt_L+Tab", "Return"]);
    assert_eq!(keys("Page_Down"), ["Next"]);
    // Each press means the same keys (keysyms) as the chord the model named.
    let keysyms = |chord: &hands_core::input::KeyChord| -> Vec<u32> {
        chord.keys().iter().map(|k| k.keysym()).collect()
    };
    for text in ["ctrl++", " ", "shift+ArrowDown", "F5", "é", "ctrl+a Delete"] {
        let model = hands_core::input::KeySequence::parse(text).unwrap();
        let driver: Vec<Vec<u32>> = keys(text)
            .iter()
            .map(|k| keysyms(KeyPress::parse(k).unwrap().chord()))
            .collect();
        let want: Vec<Vec<u32>> = model.chords().iter().map(keysyms).collect();
        assert_eq!(driver, want, "{text}");
    }
    assert!(matches!(
        ok("key", json!({"text": "a", "repeat": 100})),
        Action::Repeat { times: 100, .. }
    ));
}

#[test]
fn durations_are_seconds_within_their_limits() {
    assert_eq!(
        ok("wait", json!({"duration": 30})),
        Action::Wait(Duration::from_secs(30))
    );
    assert!(err("wait", json!({"duration": "1"})).contains("a number of seconds"));
    assert!(matches!(
        ok("hold_key", json!({"text": "ctrl+shift", "duration": 3})),
        Action::Call(BrowserCall::HoldKeys { ref keys, duration, .. })
            if keys.len() == 2 && duration == Duration::from_secs(3)
    ));
    assert!(err("hold_key", json!({"text": "a", "duration": 3.001})).contains("at most 3"));
    assert!(err("hold_key", json!({"text": "shift+shift", "duration": 1})).contains("twice"));
}

#[test]
fn refs_and_tabs() {
    assert_eq!(
        ok("scroll_to", json!({"ref": "e9", "tab_id": "t4"})),
        Action::Call(BrowserCall::ScrollTo {
            target: Ref::new("e9").unwrap(),
            tab: hands_core::browser::TabId::new("t4"),
        })
    );
    assert_eq!(
        ok("close_tab", json!({"tab_id": null})),
        Action::CloseActive
    );
    assert_eq!(
        ok("navigate", json!({"url": "reload", "tab_id": "t2"})),
        Action::Reload {
            tab: hands_core::browser::TabId::new("t2")
        }
    );
    assert!(err("scroll_to", json!({"ref": 7})).contains("`ref` must be an element ref"));
    assert!(err("switch_tab", json!({"tab_id": null})).contains("requires `tab_id`"));
    assert_eq!(
        ok("form_input", json!({"ref": "e1", "value": ["a", "b"]})),
        Action::FormInput {
            target: Ref::new("e1").unwrap(),
            value: FieldValue::Options(vec!["a".into(), "b".into()]),
            tab: None,
        }
    );
    assert!(err("form_input", json!({"ref": "e1", "value": [1]})).contains("`value` must be"));
}
