//! Input parsing as pure logic: URL completion, targets, modifiers, key texts, durations, and
//! the shapes of anthropic 2.10's wire types.

use std::time::Duration;

use hands_core::browser::args::{BrowserCall, CssPoint, KeyPress, PointerButton, ReadFilter};
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
        json!({"target": {"type": "coordinate", "x": 3.0, "y": 4}, "modifiers": "cmd"}),
    )
    else {
        panic!("not a click_at")
    };
    assert_eq!(at, CssPoint::new(3, 4).unwrap());
    assert_eq!(button, PointerButton::Right);
    assert_eq!(keys, [Modifier::Super].into_iter().collect::<ModifierSet>());
    // Empty modifiers are none; a null field is an absent one.
    for modifiers in [json!(""), json!("  "), Value::Null] {
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
        "`left_click`: `target` must be {\"type\": \"coordinate\", \"x\": …, \"y\": …} or {\"type\": \"ref\", \"ref\": \"…\"}, got [1,2]"
    );
    assert_eq!(
        err("left_click", json!({"target": {"type": "coordinate"}})),
        "`left_click` requires `target.x` (a non-negative integer number of viewport pixels)"
    );
    assert_eq!(
        err(
            "left_click",
            json!({"target": {"type": "coordinate", "x": 1.5, "y": 2}})
        ),
        "`left_click`: `target.x` must be a non-negative integer number of viewport pixels, got 1.5"
    );
    assert_eq!(
        err(
            "left_click",
            json!({"target": {"type": "coordinate", "coordinate": [1, 2]}})
        ),
        "`left_click` does not take `target.coordinate`; it takes `type`, `x`, `y`"
    );
    assert!(
        err(
            "left_click",
            json!({"target": {"type": "coordinate", "x": 1, "y": 2}, "modifiers": ["ctrl"]})
        )
        .contains("`modifiers` must be the modifier keys held")
    );
    // Larger than a JSON number holds exactly.
    assert!(
        err(
            "mouse_move",
            json!({"target": {"type": "coordinate", "x": 9_007_199_254_740_992u64, "y": 0}})
        )
        .contains("`target.x` must be")
    );
    // A drag's two ends are coordinate targets named `from` and `target`, held without modifiers.
    assert_eq!(
        ok(
            "left_click_drag",
            json!({"from": {"type": "coordinate", "x": 1, "y": 2}, "target": {"type": "coordinate", "x": 3, "y": 4}})
        ),
        Action::Call(
            BrowserCall::drag_path(
                None,
                vec![CssPoint::new(1, 2).unwrap(), CssPoint::new(3, 4).unwrap()],
                ModifierSet::NONE
            )
            .unwrap()
        )
    );
    assert_eq!(
        err(
            "left_click_drag",
            json!({"from": {"type": "ref", "ref": "e1"}, "target": {"type": "coordinate", "x": 3, "y": 4}})
        ),
        "`left_click_drag`: `from.type` must be \"coordinate\", got \"ref\""
    );
}

#[test]
fn scroll_notches_default_to_three_at_the_target() {
    let at = json!({"type": "coordinate", "x": 10, "y": 20});
    assert_eq!(
        ok("scroll", json!({"scroll_direction": "down", "target": at})),
        Action::Call(
            BrowserCall::scroll_at(CssPoint::new(10, 20).unwrap(), "down", 300, None).unwrap()
        )
    );
    assert_eq!(
        ok(
            "scroll",
            json!({"scroll_direction": "right", "target": at, "scroll_amount": 10})
        ),
        Action::Call(
            BrowserCall::scroll_at(CssPoint::new(10, 20).unwrap(), "right", 1000, None).unwrap()
        )
    );
    for amount in [0, 11] {
        assert_eq!(
            err(
                "scroll",
                json!({"scroll_direction": "down", "target": at, "scroll_amount": amount})
            ),
            format!(
                "`scroll`: `scroll_amount` must be a number of scroll-wheel notches from 1 to 10, got {amount}"
            )
        );
    }
    assert!(
        err("scroll", json!({"scroll_direction": "Down", "target": at})).contains("one of \"up\"")
    );
}

#[test]
fn read_page_takes_depth_filter_and_ref() {
    assert_eq!(
        ok("read_page", json!({})),
        Action::Call(BrowserCall::ReadPage {
            filter: ReadFilter::All,
            tab: None
        })
    );
    assert_eq!(
        ok("read_page", json!({"ref": "e4", "filter": "interactive"})),
        Action::Call(
            BrowserCall::read_page_scoped(
                None,
                Some(Ref::new("e4").unwrap()),
                DEFAULT_READ_DEPTH,
                ReadFilter::Interactive
            )
            .unwrap()
        )
    );
    assert!(matches!(
        ok("read_page", json!({"ref": "e4", "depth": 1})),
        Action::Call(BrowserCall::ReadPageScoped { depth: 1, .. })
    ));
    assert!(matches!(
        ok("read_page", json!({"ref": "e4", "depth": 9000})),
        Action::Call(BrowserCall::ReadPageScoped { depth: 32, .. })
    ));
    assert!(err("read_page", json!({"depth": 0})).contains("at least 1"));
    assert!(err("read_page", json!({"depth": "3"})).contains("`depth` must be"));
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
        ok("wait", json!({"duration": 30, "tab_id": "t1"})),
        Action::Wait(Duration::from_secs(30))
    );
    assert_eq!(
        ok("wait", json!({"duration": 0.25})),
        Action::Wait(Duration::from_millis(250))
    );
    assert!(err("wait", json!({"duration": "1"})).contains("a number of seconds"));
    // A toolset may wait less than the API's 30 s, never more.
    let long = Limits {
        max_wait: Duration::from_secs(60),
        ..LIMITS
    };
    assert!(
        Action::parse(Member::Wait, &json!({"duration": 31}), long)
            .unwrap_err()
            .to_string()
            .contains("the limit is 30 seconds")
    );
    assert!(matches!(
        ok("hold_key", json!({"text": "ctrl+shift", "duration": 3})),
        Action::Call(BrowserCall::HoldKeys { ref keys, duration, .. })
            if keys.len() == 2 && duration == Duration::from_secs(3)
    ));
    assert!(err("hold_key", json!({"text": "a", "duration": 3.001})).contains("at most 3"));
    assert!(err("hold_key", json!({"text": "shift+shift", "duration": 1})).contains("twice"));
}

#[test]
fn refs_tabs_and_values() {
    assert_eq!(
        ok(
            "scroll_to",
            json!({"target": {"type": "ref", "ref": "e9"}, "tab_id": "t4"})
        ),
        Action::Call(BrowserCall::ScrollTo {
            target: Ref::new("e9").unwrap(),
            tab: hands_core::browser::TabId::new("t4"),
        })
    );
    assert!(err("close_tab", json!({"tab_id": null})).contains("requires `tab_id`"));
    assert_eq!(
        ok("navigate", json!({"url": "reload", "tab_id": "t2"})),
        Action::Reload {
            tab: hands_core::browser::TabId::new("t2")
        }
    );
    assert_eq!(
        ok("navigate", json!({"url": "BACK"})),
        Action::Refuse(crate::strings::BROWSER_HISTORY_UNSUPPORTED)
    );
    assert!(
        err("scroll_to", json!({"target": {"type": "ref", "ref": 7}}))
            .contains("`target.ref` must be an element ref")
    );
    assert!(err("switch_tab", json!({"tab_id": null})).contains("requires `tab_id`"));
    for (value, want) in [
        (json!("Ada"), FieldValue::Text("Ada".into())),
        (json!(12), FieldValue::Text("12".into())),
        (json!(1.5), FieldValue::Text("1.5".into())),
        (json!(false), FieldValue::Checked(false)),
    ] {
        assert_eq!(
            ok(
                "form_input",
                json!({"target": {"type": "ref", "ref": "e1"}, "value": value})
            ),
            Action::FormInput {
                target: Ref::new("e1").unwrap(),
                value: want,
                tab: None,
            }
        );
    }
    assert!(
        err(
            "form_input",
            json!({"target": {"type": "ref", "ref": "e1"}, "value": ["a"]})
        )
        .contains("`value` must be")
    );
    assert_eq!(
        ok(
            "file_upload",
            json!({"target": {"type": "ref", "ref": "e2"}, "document_ids": ["grant-1"], "paths": null})
        ),
        Action::Upload {
            target: Ref::new("e2").unwrap(),
            grant: GrantId::parse("grant-1").unwrap(),
            tab: None,
        }
    );
}

/// Every member accepts the input anthropic 2.10 builds from its generated types with every
/// optional field set, and its required fields alone.
#[test]
fn every_member_takes_the_sdk_shapes() {
    let at = json!({"type": "coordinate", "x": 4, "y": 5});
    let el = json!({"type": "ref", "ref": "e1"});
    let full = [
        (
            "navigate",
            json!({"url": "https://a.test/", "tab_id": "t1"}),
        ),
        ("list_tabs", json!({})),
        ("new_tab", json!({})),
        ("switch_tab", json!({"tab_id": "t1"})),
        ("close_tab", json!({"tab_id": "t1"})),
        (
            "read_page",
            json!({"depth": 4, "filter": "all", "ref": "e1", "tab_id": "t1"}),
        ),
        ("get_page_text", json!({"tab_id": "t1"})),
        ("read_console", json!({"tab_id": "t1"})),
        ("read_network", json!({"tab_id": "t1"})),
        ("find", json!({"query": "Pay", "tab_id": "t1"})),
        (
            "form_input",
            json!({"target": el, "value": true, "tab_id": "t1"}),
        ),
        (
            "file_upload",
            json!({"target": el, "document_ids": ["g"], "paths": [], "tab_id": "t1"}),
        ),
        ("scroll_to", json!({"target": el, "tab_id": "t1"})),
        ("screenshot", json!({"tab_id": "t1"})),
        ("zoom", json!({"region": [0, 0, 10, 10], "tab_id": "t1"})),
        (
            "left_click",
            json!({"target": at, "modifiers": "shift", "tab_id": "t1"}),
        ),
        (
            "right_click",
            json!({"target": at, "modifiers": "ctrl+shift", "tab_id": "t1"}),
        ),
        (
            "middle_click",
            json!({"target": at, "modifiers": "alt", "tab_id": "t1"}),
        ),
        (
            "double_click",
            json!({"target": at, "modifiers": "cmd+alt", "tab_id": "t1"}),
        ),
        (
            "triple_click",
            json!({"target": at, "modifiers": "shift", "tab_id": "t1"}),
        ),
        ("hover", json!({"target": el, "tab_id": "t1"})),
        (
            "left_click_drag",
            json!({"from": at, "target": at, "tab_id": "t1"}),
        ),
        ("left_mouse_down", json!({"target": at, "tab_id": "t1"})),
        ("left_mouse_up", json!({"target": at, "tab_id": "t1"})),
        ("mouse_move", json!({"target": at, "tab_id": "t1"})),
        (
            "scroll",
            json!({"scroll_direction": "down", "target": at, "scroll_amount": 3, "tab_id": "t1"}),
        ),
        ("type", json!({"text": "hi", "tab_id": "t1"})),
        (
            "key",
            json!({"text": "Return", "repeat": 2, "tab_id": "t1"}),
        ),
        (
            "hold_key",
            json!({"duration": 1.5, "text": "shift", "tab_id": "t1"}),
        ),
        ("wait", json!({"duration": 1.5, "tab_id": "t1"})),
        ("javascript_exec", json!({"text": "1", "tab_id": "t1"})),
    ];
    assert_eq!(full.len(), Member::ALL.len());
    for (name, input) in &full {
        let member = Member::from_name(name).unwrap();
        let mut declared: Vec<&str> = input
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        declared.sort_unstable();
        let mut fields = member.fields().to_vec();
        fields.sort_unstable();
        assert_eq!(
            declared, fields,
            "{name}: every field of the type, and no other"
        );
        ok(name, input.clone());
        // Each optional field may be left out.
        for field in member.fields() {
            let mut less = input.clone();
            less.as_object_mut().unwrap().remove(*field);
            let required = match *name {
                "file_upload" => ["target", "document_ids"].contains(field),
                _ => Action::parse(member, &less, LIMITS).is_err(),
            };
            let optional = matches!(
                *field,
                "tab_id"
                    | "modifiers"
                    | "depth"
                    | "filter"
                    | "ref"
                    | "scroll_amount"
                    | "repeat"
                    | "paths"
            ) && !(*name == "switch_tab" || *name == "close_tab");
            assert_eq!(!required, optional, "{name}.{field}");
        }
    }
}
