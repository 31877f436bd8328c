//! The argument table: every member valid, and each invalid shape refused with the right error.

use super::*;
use hands_core::browser::ArgError;
use proptest::prelude::*;
use serde_json::json;

fn member(name: &str) -> BrowserMember {
    BrowserMember::from_name(name).expect(name)
}

/// Parses and returns the normalised arguments (what `confirm` would see).
fn ok(name: &str, args: Value) -> Value {
    match parse_call(member(name), &args) {
        Ok(call) => {
            assert_eq!(call.member(), member(name));
            call.arguments()
        }
        Err(e) => panic!("{name} {args} refused: {e}"),
    }
}

fn err(name: &str, args: Value) -> ArgumentError {
    match parse_call(member(name), &args) {
        Ok(call) => panic!("{name} {args} accepted as {call:?}"),
        Err(e) => e,
    }
}

fn wrong_field(e: &ArgumentError) -> &str {
    match e {
        ArgumentError::WrongType { field, .. } => field,
        other => panic!("not a WrongType: {other:?}"),
    }
}

fn invalid(e: ArgumentError) -> ArgError {
    match e {
        ArgumentError::Invalid { source, .. } => source,
        other => panic!("not an Invalid: {other:?}"),
    }
}

/// One valid call per member, with the arguments `confirm` receives.
fn valid_table() -> Vec<(&'static str, Value, Value)> {
    vec![
        (
            "navigate",
            json!({"url": "https://example.com/a?b#c", "tab_id": null}),
            json!({"url": "https://example.com/a?b#c", "tab_id": null}),
        ),
        (
            "read_page",
            json!({"filter": "interactive", "tab_id": "t1"}),
            json!({"filter": "interactive", "tab_id": "t1"}),
        ),
        (
            "get_page_text",
            json!({"tab_id": null}),
            json!({"tab_id": null}),
        ),
        (
            "find",
            json!({"query": "  Book now ", "tab_id": null}),
            json!({"query": "Book now", "tab_id": null}),
        ),
        (
            "click",
            json!({"target": "e1", "tab_id": null}),
            json!({"target": "e1", "tab_id": null}),
        ),
        (
            "type",
            json!({"text": "héllo", "target": null, "tab_id": null}),
            json!({"text": "héllo", "target": null, "tab_id": null}),
        ),
        (
            "key",
            json!({"keys": ["Control+a", "Enter"], "tab_id": null}),
            json!({"keys": ["Control+a", "Enter"], "tab_id": null}),
        ),
        (
            "scroll",
            json!({"direction": "down", "amount": 0, "tab_id": null}),
            json!({"direction": "down", "amount": 0, "tab_id": null}),
        ),
        (
            "scroll_to",
            json!({"target": "e2", "tab_id": "t1"}),
            json!({"target": "e2", "tab_id": "t1"}),
        ),
        (
            "wait_for",
            json!({"text": " Booking \n saved ", "timeout_ms": 3.0e3, "tab_id": null}),
            json!({"text": "Booking saved", "timeout_ms": 3000, "tab_id": null}),
        ),
        (
            "select_option",
            json!({"target": "e3", "values": ["s", "m"], "tab_id": null}),
            json!({"target": "e3", "values": ["s", "m"], "tab_id": null}),
        ),
        (
            "hover",
            json!({"target": "e4", "tab_id": null}),
            json!({"target": "e4", "tab_id": null}),
        ),
        (
            "screenshot",
            json!({"tab_id": null}),
            json!({"tab_id": null}),
        ),
        (
            "zoom",
            json!({"region": [0, 0, 100, 50], "tab_id": null}),
            json!({"region": [0, 0, 100, 50], "tab_id": null}),
        ),
        ("new_tab", json!({"url": null}), json!({"url": null})),
        ("list_tabs", json!({}), json!({})),
        (
            "switch_tab",
            json!({"tab_id": "t2"}),
            json!({"tab_id": "t2"}),
        ),
        (
            "close_tab",
            json!({"tab_id": "t2"}),
            json!({"tab_id": "t2"}),
        ),
        (
            "read_page_scoped",
            json!({"tab_id": null, "root": null, "depth": 32, "filter": "all"}),
            json!({"tab_id": null, "root": null, "depth": 32, "filter": "all"}),
        ),
        (
            "click_at",
            json!({"tab_id": null, "x": 0, "y": 9007199254740991u64, "button": "middle",
                   "click_count": 3, "keys": ["Shift", "Control"]}),
            json!({"tab_id": null, "x": 0, "y": 9007199254740991u64, "button": "middle",
                   "click_count": 3, "keys": ["Control", "Shift"]}),
        ),
        (
            "drag_path",
            json!({"tab_id": null, "path": [{"x": 1, "y": 2}, {"x": 3, "y": 4}], "keys": []}),
            json!({"tab_id": null, "path": [{"x": 1, "y": 2}, {"x": 3, "y": 4}], "keys": []}),
        ),
        (
            "hold_keys",
            json!({"tab_id": null, "keys": ["a", "b"], "duration_ms": 3000}),
            json!({"tab_id": null, "keys": ["a", "b"], "duration_ms": 3000}),
        ),
        (
            "hover_at",
            json!({"tab_id": "t1", "x": 5, "y": 6}),
            json!({"tab_id": "t1", "x": 5, "y": 6}),
        ),
        (
            "set_checked",
            json!({"tab_id": null, "target": "e5", "checked": false}),
            json!({"tab_id": null, "target": "e5", "checked": false}),
        ),
        (
            "read_diagnostics",
            json!({"tab_id": null, "source": "network", "limit": 100}),
            json!({"tab_id": null, "source": "network", "limit": 100}),
        ),
        (
            "run_script",
            json!({"tab_id": null, "source": "document.title", "timeout_ms": 1}),
            json!({"tab_id": null, "source": "document.title", "timeout_ms": 1}),
        ),
        (
            "upload_file",
            json!({"grant_id": "g-1"}),
            json!({"grant_id": "g-1"}),
        ),
        (
            "download_file",
            json!({"grant_id": "g-2"}),
            json!({"grant_id": "g-2"}),
        ),
    ]
}

#[test]
fn every_member_parses_a_valid_call() {
    let table = valid_table();
    assert_eq!(table.len(), 28);
    for (name, args, want) in table {
        assert_eq!(ok(name, args), want, "{name}");
    }
}

#[test]
fn every_member_refuses_unknown_and_missing_fields_and_non_objects() {
    for (name, args, _) in valid_table() {
        let m = member(name);
        // Each declared field, removed.
        for field in fields(m) {
            let mut without = args.clone();
            without.as_object_mut().unwrap().remove(*field);
            match err(name, without) {
                ArgumentError::Missing {
                    field: f,
                    member: mm,
                    ..
                } => {
                    assert_eq!((f.as_str(), mm), (*field, m), "{name}");
                }
                other => panic!("{name} without {field}: {other:?}"),
            }
        }
        // One field too many (a null one too: null is not "absent").
        for extra in [json!(1), json!(null)] {
            let mut with = args.clone();
            with["teleport"] = extra;
            assert!(
                matches!(err(name, with), ArgumentError::Unknown { ref field, .. } if field == "teleport"),
                "{name}"
            );
        }
        for not_object in [json!([]), json!("{}"), json!(null), json!(5), json!(true)] {
            assert!(
                matches!(err(name, not_object), ArgumentError::NotAnObject { .. }),
                "{name}"
            );
        }
    }
}

#[test]
fn numbers_must_be_safe_non_negative_integers() {
    let click_at = |x: Value| json!({"tab_id": null, "x": x, "y": 1, "button": "left", "click_count": 1, "keys": []});
    // `3.0` and `1e3` are integers; -0 is 0.
    assert_eq!(ok("click_at", click_at(json!(3.0)))["x"], json!(3));
    assert_eq!(ok("click_at", click_at(json!(1e3)))["x"], json!(1000));
    assert_eq!(ok("click_at", click_at(json!(-0.0)))["x"], json!(0));
    for bad in [
        json!(true),
        json!(false),
        json!(1.5),
        json!(-1),
        json!(-0.5),
        json!(9007199254740992u64),
        json!(9007199254740993.0),
        json!(1e300),
        json!("5"),
        json!(null),
        json!([5]),
    ] {
        let e = err("click_at", click_at(bad.clone()));
        assert_eq!(wrong_field(&e), "x", "{bad}");
    }
    let e = err("click_at", click_at(json!(true)));
    assert_eq!(
        e.to_string(),
        "`browser_click_at`: `x` must be a non-negative safe integer (0 to 9007199254740991, \
         no fraction), got true"
    );
    // Every numeric field of every member refuses a boolean.
    let numeric = [
        ("scroll", "amount"),
        ("wait_for", "timeout_ms"),
        ("read_page_scoped", "depth"),
        ("click_at", "y"),
        ("click_at", "click_count"),
        ("hold_keys", "duration_ms"),
        ("hover_at", "x"),
        ("hover_at", "y"),
        ("read_diagnostics", "limit"),
        ("run_script", "timeout_ms"),
    ];
    let table = valid_table();
    for (name, field) in numeric {
        let (_, args, _) = table.iter().find(|(n, _, _)| *n == name).unwrap();
        let mut args = args.clone();
        args[field] = json!(true);
        assert_eq!(wrong_field(&err(name, args)), field, "{name}");
    }
}

#[test]
fn ranges_and_limits_come_from_the_core_constructors() {
    let range = |name: &str, args: Value| match invalid(err(name, args)) {
        ArgError::Range { field, .. } => field,
        other => panic!("{name}: {other:?}"),
    };
    let click_at = |count: u64| json!({"tab_id": null, "x": 1, "y": 1, "button": "left", "click_count": count, "keys": []});
    assert_eq!(range("click_at", click_at(0)), "click_count");
    assert_eq!(range("click_at", click_at(4)), "click_count");
    let wait = |ms: u64| json!({"text": "x", "timeout_ms": ms, "tab_id": null});
    assert_eq!(range("wait_for", wait(0)), "timeout_ms");
    assert_eq!(range("wait_for", wait(30_001)), "timeout_ms");
    ok("wait_for", wait(30_000));
    let hold = |ms: u64| json!({"tab_id": null, "keys": ["a"], "duration_ms": ms});
    assert_eq!(range("hold_keys", hold(0)), "duration_ms");
    assert_eq!(range("hold_keys", hold(3001)), "duration_ms");
    let scoped =
        |depth: u64| json!({"tab_id": null, "root": null, "depth": depth, "filter": "all"});
    assert_eq!(range("read_page_scoped", scoped(0)), "depth");
    assert_eq!(range("read_page_scoped", scoped(33)), "depth");
    let diag = |limit: u64| json!({"tab_id": null, "source": "console", "limit": limit});
    assert_eq!(range("read_diagnostics", diag(0)), "limit");
    assert_eq!(range("read_diagnostics", diag(101)), "limit");
    ok("read_diagnostics", diag(1));
    let script = |ms: u64| json!({"tab_id": null, "source": "1", "timeout_ms": ms});
    assert_eq!(range("run_script", script(0)), "timeout_ms");
    assert_eq!(range("run_script", script(30_001)), "timeout_ms");
}

#[test]
fn enumerations_refuse_other_values() {
    let one_of = |name: &str, args: Value| match invalid(err(name, args)) {
        ArgError::OneOf { field, .. } => field,
        other => panic!("{name}: {other:?}"),
    };
    assert_eq!(
        one_of("read_page", json!({"filter": "visible", "tab_id": null})),
        "filter"
    );
    assert_eq!(
        one_of(
            "scroll",
            json!({"direction": "sideways", "amount": 1, "tab_id": null})
        ),
        "direction"
    );
    assert_eq!(
        one_of(
            "click_at",
            json!({"tab_id": null, "x": 1, "y": 1, "button": "back", "click_count": 1, "keys": []})
        ),
        "button"
    );
    assert_eq!(
        one_of(
            "read_diagnostics",
            json!({"tab_id": null, "source": "dom", "limit": 1})
        ),
        "source"
    );
    assert_eq!(
        one_of(
            "read_page_scoped",
            json!({"tab_id": null, "root": null, "depth": 1, "filter": "All"})
        ),
        "filter"
    );
    // A wrong JSON type for an enumerated field is a type error, not an enum error.
    assert_eq!(
        wrong_field(&err("read_page", json!({"filter": 1, "tab_id": null}))),
        "filter"
    );
}

#[test]
fn modifier_lists_are_exact_and_unique() {
    let click_at = |keys: Value| json!({"tab_id": null, "x": 1, "y": 1, "button": "left", "click_count": 1, "keys": keys});
    assert!(matches!(
        invalid(err("click_at", click_at(json!(["Control", "Control"])))),
        ArgError::Repeated { .. }
    ));
    assert!(matches!(
        invalid(err("click_at", click_at(json!(["ctrl"])))),
        ArgError::Modifier { .. }
    ));
    assert_eq!(
        wrong_field(&err("click_at", click_at(json!("Shift")))),
        "keys"
    );
    assert_eq!(
        wrong_field(&err("click_at", click_at(json!([1])))),
        "keys[0]"
    );
    assert_eq!(
        ok(
            "click_at",
            click_at(json!(["Meta", "Alt", "Shift", "Control"]))
        )["keys"],
        json!(["Control", "Alt", "Shift", "Meta"])
    );
    let drag = |keys: Value| json!({"tab_id": null, "path": [{"x": 1, "y": 2}, {"x": 3, "y": 4}], "keys": keys});
    assert!(matches!(
        invalid(err("drag_path", drag(json!(["Shift", "Shift"])))),
        ArgError::Repeated { .. }
    ));
}

#[test]
fn drag_points_are_exactly_x_and_y() {
    let drag = |path: Value| json!({"tab_id": null, "path": path, "keys": []});
    let p = json!({"x": 1, "y": 1});
    match err("drag_path", drag(json!([p, {"x": 1, "y": 2, "z": 3}]))) {
        ArgumentError::Unknown { field, allowed, .. } => {
            assert_eq!(field, "path[1].z");
            assert_eq!(allowed, POINT_FIELDS);
        }
        other => panic!("{other:?}"),
    }
    match err("drag_path", drag(json!([{"x": 1}, p]))) {
        ArgumentError::Missing { field, .. } => assert_eq!(field, "path[0].y"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        wrong_field(&err("drag_path", drag(json!([{"x": true, "y": 1}, p])))),
        "path[0].x"
    );
    assert_eq!(
        wrong_field(&err("drag_path", drag(json!([p, {"x": 1, "y": 0.5}])))),
        "path[1].y"
    );
    assert_eq!(
        wrong_field(&err("drag_path", drag(json!([[1, 2], [3, 4]])))),
        "path[0]"
    );
    assert_eq!(wrong_field(&err("drag_path", drag(json!(p)))), "path");
    let count = |n: usize| match invalid(err("drag_path", drag(json!(vec![p.clone(); n])))) {
        ArgError::Count { field, got, .. } => (field, got),
        other => panic!("{other:?}"),
    };
    assert_eq!(count(1), ("path", 1));
    assert_eq!(count(101), ("path", 101));
    assert_eq!(
        ok("drag_path", drag(json!(vec![p.clone(); 100])))["path"]
            .as_array()
            .unwrap()
            .len(),
        100
    );
}

#[test]
fn tab_ids_are_nullable_except_for_switch_and_close() {
    for name in ["switch_tab", "close_tab"] {
        assert_eq!(wrong_field(&err(name, json!({"tab_id": null}))), "tab_id");
        assert!(matches!(
            invalid(err(name, json!({"tab_id": ""}))),
            ArgError::TabId { .. }
        ));
    }
    assert_eq!(
        wrong_field(&err("screenshot", json!({"tab_id": 1}))),
        "tab_id"
    );
    assert!(matches!(
        invalid(err("screenshot", json!({"tab_id": "t".repeat(257)}))),
        ArgError::TabId { .. }
    ));
    ok("screenshot", json!({"tab_id": "t".repeat(256)}));
    // Nullable fields must still be present.
    match err("type", json!({"text": "x", "tab_id": null})) {
        ArgumentError::Missing { field, .. } => assert_eq!(field, "target"),
        other => panic!("{other:?}"),
    }
    match err("new_tab", json!({})) {
        ArgumentError::Missing { field, .. } => assert_eq!(field, "url"),
        other => panic!("{other:?}"),
    }
    // A non-nullable string refuses null.
    assert_eq!(
        wrong_field(&err("navigate", json!({"url": null, "tab_id": null}))),
        "url"
    );
    assert_eq!(
        wrong_field(&err("click", json!({"target": null, "tab_id": null}))),
        "target"
    );
}

#[test]
fn byte_limits_count_utf8_and_never_split_a_character() {
    // wait_for: 256 bytes after normalisation, "é" is two bytes.
    let wait = |text: String| json!({"text": text, "timeout_ms": 10, "tab_id": null});
    ok("wait_for", wait("é".repeat(128)));
    ok("wait_for", wait(format!("  {}\n\t", "é".repeat(128))));
    match invalid(err("wait_for", wait("é".repeat(128) + "a"))) {
        ArgError::TextLength { got, max, .. } => assert_eq!((got, max), (257, 256)),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        invalid(err("wait_for", wait(" \n\t ".into()))),
        ArgError::TextLength { got: 0, .. }
    ));
    // Scope roots: 1 to 256 bytes.
    let scoped = |root: Value| json!({"tab_id": null, "root": root, "depth": 1, "filter": "all"});
    ok("read_page_scoped", scoped(json!("é".repeat(128))));
    assert!(matches!(
        invalid(err(
            "read_page_scoped",
            scoped(json!("é".repeat(128) + "a"))
        )),
        ArgError::Ref { field: "root" }
    ));
    assert!(matches!(
        invalid(err("read_page_scoped", scoped(json!("")))),
        ArgError::Ref { field: "root" }
    ));
    // Targets: 1 to 256 bytes.
    assert!(matches!(
        invalid(err(
            "click",
            json!({"target": "日".repeat(86), "tab_id": null})
        )),
        ArgError::Ref { field: "target" }
    ));
    assert!(matches!(
        invalid(err(
            "type",
            json!({"text": "x", "target": "", "tab_id": null})
        )),
        ArgError::Ref { field: "target" }
    ));
    // Grant ids: 1 to 256 bytes ("日" is three bytes: 85 of them are 255).
    ok("upload_file", json!({"grant_id": "日".repeat(85)}));
    for grant in [String::new(), "日".repeat(85) + "é"] {
        assert!(matches!(
            invalid(err("download_file", json!({"grant_id": grant}))),
            ArgError::TextLength {
                field: "grant_id",
                ..
            }
        ));
    }
    // hold_keys names: at most 64 bytes; a 64-byte name is measured, then parsed as a key.
    let hold = |keys: Value| json!({"tab_id": null, "keys": keys, "duration_ms": 10});
    assert!(matches!(
        invalid(err("hold_keys", hold(json!(["é".repeat(32) + "a"])))),
        ArgError::TextLength { field: "keys", .. }
    ));
    assert!(matches!(
        invalid(err("hold_keys", hold(json!(["é".repeat(32)])))),
        ArgError::Key { .. }
    ));
    assert!(matches!(
        invalid(err("hold_keys", hold(json!([])))),
        ArgError::Count { .. }
    ));
    assert!(matches!(
        invalid(err("hold_keys", hold(json!(vec!["a"; 9])))),
        ArgError::Count { got: 9, .. }
    ));
    assert!(matches!(
        invalid(err("hold_keys", hold(json!(["a", "b", "a"])))),
        ArgError::Repeated { .. }
    ));
    assert!(matches!(
        invalid(err("hold_keys", hold(json!([""])))),
        ArgError::TextLength { .. }
    ));
}

#[test]
fn other_member_rules() {
    assert!(matches!(
        invalid(err("navigate", json!({"url": "not a url", "tab_id": null}))),
        ArgError::Url { .. }
    ));
    assert_eq!(
        ok(
            "navigate",
            json!({"url": "example.com/docs", "tab_id": null})
        )["url"],
        json!("https://example.com/docs")
    );
    assert_eq!(wrong_field(&err("new_tab", json!({"url": 5}))), "url");
    assert_eq!(
        ok("new_tab", json!({"url": "https://example.com"}))["url"],
        json!("https://example.com/")
    );
    assert!(matches!(
        invalid(err("find", json!({"query": "   ", "tab_id": null}))),
        ArgError::TextLength { .. }
    ));
    assert!(matches!(
        invalid(err("key", json!({"keys": [], "tab_id": null}))),
        ArgError::Count { .. }
    ));
    assert!(matches!(
        invalid(err("key", json!({"keys": ["NoSuchKey"], "tab_id": null}))),
        ArgError::Key { .. }
    ));
    assert!(matches!(
        invalid(err(
            "select_option",
            json!({"target": "e1", "values": [], "tab_id": null})
        )),
        ArgError::Count { .. }
    ));
    assert_eq!(
        wrong_field(&err(
            "select_option",
            json!({"target": "e1", "values": ["a", 1], "tab_id": null})
        )),
        "values[1]"
    );
    assert!(matches!(
        invalid(err(
            "run_script",
            json!({"tab_id": null, "source": "", "timeout_ms": 1})
        )),
        ArgError::TextLength {
            field: "source",
            ..
        }
    ));
    for checked in [json!("true"), json!(1), json!(null)] {
        assert_eq!(
            wrong_field(&err(
                "set_checked",
                json!({"tab_id": null, "target": "e1", "checked": checked})
            )),
            "checked"
        );
    }
    assert_eq!(
        wrong_field(&err(
            "type",
            json!({"text": 5, "target": null, "tab_id": null})
        )),
        "text"
    );
    // zoom regions.
    let zoom = |region: Value| json!({"region": region, "tab_id": null});
    assert_eq!(wrong_field(&err("zoom", zoom(json!([0, 0, 10])))), "region");
    assert_eq!(
        wrong_field(&err("zoom", zoom(json!([0, 0, 10, 10.5])))),
        "region[3]"
    );
    assert_eq!(
        wrong_field(&err("zoom", zoom(json!([0, -1, 10, 10])))),
        "region[1]"
    );
    assert_eq!(
        wrong_field(&err("zoom", zoom(json!([0, 0, 10, true])))),
        "region[3]"
    );
    assert!(matches!(
        invalid(err("zoom", zoom(json!([10, 0, 10, 10])))),
        ArgError::EmptyRegion { .. }
    ));
    ok("zoom", zoom(json!([0.0, 0, 9007199254740991u64, 1])));
    // list_tabs takes nothing at all.
    assert!(matches!(
        err("list_tabs", json!({"tab_id": null})),
        ArgumentError::Unknown { .. }
    ));
}

#[test]
fn arguments_text_must_be_json() {
    let m = member("click");
    for text in [
        "",
        "{",
        "{\"target\": \"e1\", \"tab_id\": null",
        "{\"x\": 1e400}",
        "\"\\ud800\"",
    ] {
        assert!(
            matches!(
                parse_arguments_text(m, text),
                Err(ArgumentError::Json { .. })
            ),
            "{text:?}"
        );
    }
    assert!(parse_arguments_text(m, r#"{"target": "e1", "tab_id": null}"#).is_ok());
    let e = parse_arguments_text(m, "[1]").unwrap_err();
    assert_eq!(
        e.to_string(),
        "`browser_click` takes a JSON object of arguments {`target`, `tab_id`}, got [1]"
    );
}

#[test]
fn tool_names_map_to_members() {
    assert_eq!(tool_name(BrowserMember::Click), "browser_click");
    assert_eq!(
        member_of_tool("browser_read_page_scoped"),
        Some(BrowserMember::ReadPageScoped)
    );
    assert_eq!(member_of_tool("click"), None);
    assert_eq!(member_of_tool("browser_teleport"), None);
    assert_eq!(member_of_tool("browser_"), None);
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,8}".prop_map(Value::String),
        prop::sample::select(vec![
            "e1",
            "t1",
            "all",
            "left",
            "Control",
            "x",
            "y",
            "https://a.test"
        ])
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "tab_id", "target", "x", "y", "keys", "path", "url", "text", "region", "depth",
                    "root", "filter", "z",
                ])
                .prop_map(str::to_owned),
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// No JSON value makes the parser panic, for any member.
    #[test]
    fn never_panics_on_any_json(value in any_json(), idx in 0usize..28) {
        let m = BrowserMember::ALL[idx];
        let _ = parse_call(m, &value);
        let _ = parse_arguments_text(m, &value.to_string());
    }
}
