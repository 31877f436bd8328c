//! Member → driver call, every member.

use super::*;

#[tokio::test]
async fn navigation_and_tabs_map_onto_the_driver() {
    check(
        "navigate",
        json!({"url": "https://shop.example/a"}),
        vec![BrowserCall::Navigate {
            url: url("https://shop.example/a"),
            tab: None,
        }],
    )
    .await;
    // No scheme means https; a tab_id goes through.
    check(
        "navigate",
        json!({"url": "localhost:3000/x", "tab_id": "t2"}),
        vec![BrowserCall::Navigate {
            url: url("https://localhost:3000/x"),
            tab: Some(t("t2")),
        }],
    )
    .await;
    // Reload: the tab's own URL, fragment dropped.
    check(
        "navigate",
        json!({"url": "reload"}),
        vec![BrowserCall::Navigate {
            url: url("https://user:pw@shop.example:8443/cart?id=7"),
            tab: None,
        }],
    )
    .await;
    check("list_tabs", json!({}), vec![]).await;
    // History words in any case, as the SDK reads them.
    check(
        "navigate",
        json!({"url": " Reload "}),
        vec![BrowserCall::Navigate {
            url: url("https://user:pw@shop.example:8443/cart?id=7"),
            tab: None,
        }],
    )
    .await;
    check(
        "new_tab",
        json!({}),
        vec![BrowserCall::NewTab { url: None }],
    )
    .await;
    check(
        "switch_tab",
        json!({"tab_id": "t2"}),
        vec![BrowserCall::SwitchTab { tab: t("t2") }],
    )
    .await;
    check(
        "close_tab",
        json!({"tab_id": "t2"}),
        vec![BrowserCall::CloseTab { tab: t("t2") }],
    )
    .await;
}

#[tokio::test]
async fn reads_map_onto_the_driver() {
    check(
        "read_page",
        json!({}),
        vec![BrowserCall::ReadPage {
            filter: ReadFilter::All,
            tab: None,
        }],
    )
    .await;
    check(
        "read_page",
        json!({"filter": "interactive", "tab_id": "t1", "depth": 3}),
        vec![BrowserCall::ReadPage {
            filter: ReadFilter::Interactive,
            tab: Some(t("t1")),
        }],
    )
    .await;
    // From a ref: the subtree, 15 levels unless told, at most the driver's 32.
    check(
        "read_page",
        json!({"ref": "e6", "filter": "all"}),
        vec![BrowserCall::read_page_scoped(None, Some(r("e6")), 15, ReadFilter::All).unwrap()],
    )
    .await;
    check(
        "read_page",
        json!({"ref": "e6", "depth": 100, "tab_id": "t2"}),
        vec![
            BrowserCall::read_page_scoped(Some(t("t2")), Some(r("e6")), 32, ReadFilter::All)
                .unwrap(),
        ],
    )
    .await;
    check(
        "get_page_text",
        json!({}),
        vec![BrowserCall::GetPageText { tab: None }],
    )
    .await;
    check(
        "read_console",
        json!({}),
        vec![BrowserCall::read_diagnostics(None, DiagnosticsSource::Console, 100).unwrap()],
    )
    .await;
    check(
        "read_network",
        json!({"tab_id": "t2"}),
        vec![
            BrowserCall::read_diagnostics(Some(t("t2")), DiagnosticsSource::Network, 100).unwrap(),
        ],
    )
    .await;
    check(
        "find",
        json!({"query": "Pay"}),
        vec![BrowserCall::find("Pay", None).unwrap()],
    )
    .await;
    check(
        "screenshot",
        json!({"tab_id": "t2"}),
        vec![BrowserCall::Screenshot { tab: Some(t("t2")) }],
    )
    .await;
    check(
        "zoom",
        json!({"region": [0, 0, 640, 400]}),
        vec![BrowserCall::Zoom {
            region: CssRegion::new([0, 0, 640, 400]).unwrap(),
            tab: None,
        }],
    )
    .await;
    check(
        "scroll_to",
        json!({"target": ref_target("e6")}),
        vec![BrowserCall::ScrollTo {
            target: r("e6"),
            tab: None,
        }],
    )
    .await;
}

#[tokio::test]
async fn pointer_members_map_coordinate_and_ref_targets() {
    let click_at = |button, count, keys| {
        vec![BrowserCall::click_at(None, point(10, 20), button, count, keys).unwrap()]
    };
    let none = ModifierSet::NONE;
    check(
        "left_click",
        json!({"target": coordinate(10, 20)}),
        click_at(PointerButton::Left, 1, none),
    )
    .await;
    check(
        "right_click",
        json!({"target": coordinate(10, 20)}),
        click_at(PointerButton::Right, 1, none),
    )
    .await;
    check(
        "middle_click",
        json!({"target": coordinate(10, 20)}),
        click_at(PointerButton::Middle, 1, none),
    )
    .await;
    check(
        "double_click",
        json!({"target": coordinate(10, 20)}),
        click_at(PointerButton::Left, 2, none),
    )
    .await;
    let ctrl_shift: ModifierSet = [Modifier::Control, Modifier::Shift].into_iter().collect();
    check(
        "triple_click",
        json!({"target": coordinate(10, 20), "modifiers": "ctrl+shift"}),
        click_at(PointerButton::Left, 3, ctrl_shift),
    )
    .await;
    check(
        "left_click",
        json!({"target": coordinate(10, 20), "modifiers": "Control+shift"}),
        click_at(PointerButton::Left, 1, ctrl_shift),
    )
    .await;
    // A ref target is the driver's element click.
    check(
        "left_click",
        json!({"target": {"type": "ref", "ref": "e6"}, "tab_id": "t1"}),
        vec![BrowserCall::Click {
            target: r("e6"),
            tab: Some(t("t1")),
        }],
    )
    .await;
    check(
        "hover",
        json!({"target": {"type": "ref", "ref": "e6"}}),
        vec![BrowserCall::Hover {
            target: r("e6"),
            tab: None,
        }],
    )
    .await;
    check(
        "hover",
        json!({"target": coordinate(5, 6)}),
        vec![BrowserCall::HoverAt {
            tab: None,
            at: point(5, 6),
        }],
    )
    .await;
    check(
        "mouse_move",
        json!({"target": coordinate(7, 8)}),
        vec![BrowserCall::HoverAt {
            tab: None,
            at: point(7, 8),
        }],
    )
    .await;
    check(
        "left_click_drag",
        json!({"from": coordinate(1, 2), "target": coordinate(30, 40)}),
        vec![
            BrowserCall::drag_path(None, vec![point(1, 2), point(30, 40)], ModifierSet::NONE)
                .unwrap(),
        ],
    )
    .await;
    // Wheel notches of 100 CSS pixels, at the target point; 3 unless told.
    check(
        "scroll",
        json!({"scroll_direction": "down", "target": coordinate(5, 6), "scroll_amount": 10}),
        vec![BrowserCall::scroll_at(point(5, 6), "down", 1000, None).unwrap()],
    )
    .await;
    check(
        "scroll",
        json!({"scroll_direction": "up", "target": coordinate(0, 0), "tab_id": "t2"}),
        vec![BrowserCall::scroll_at(point(0, 0), "up", 300, Some(t("t2"))).unwrap()],
    )
    .await;
}

#[tokio::test]
async fn keyboard_script_and_files_map_onto_the_driver() {
    check(
        "type",
        json!({"text": "hello"}),
        vec![BrowserCall::type_text("hello", None, None).unwrap()],
    )
    .await;
    check(
        "type",
        json!({"text": "hello", "tab_id": "t1"}),
        vec![BrowserCall::type_text("hello", None, Some(t("t1"))).unwrap()],
    )
    .await;
    // xdotool-like names and chords, several in one text.
    check(
        "key",
        json!({"text": "ctrl+a Delete"}),
        vec![BrowserCall::key(&["Control_L+a", "Delete"], None).unwrap()],
    )
    .await;
    let enter = BrowserCall::key(&["Return"], None).unwrap();
    check(
        "key",
        json!({"text": "Enter", "repeat": 3}),
        vec![enter.clone(), enter.clone(), enter],
    )
    .await;
    check(
        "hold_key",
        json!({"duration": 0.5, "text": "shift", "tab_id": null}),
        vec![BrowserCall::hold_keys(None, &["Shift_L"], 500).unwrap()],
    )
    .await;
    check(
        "javascript_exec",
        json!({"text": "document.title", "tab_id": "t2"}),
        vec![BrowserCall::run_script(Some(t("t2")), "document.title", 10_000).unwrap()],
    )
    .await;
    // The click opens the input's chooser; the grant (sent as a document id) fills it.
    check(
        "file_upload",
        json!({"target": ref_target("e6"), "document_ids": ["grant-7"], "paths": [], "tab_id": "t1"}),
        vec![
            BrowserCall::Click {
                target: r("e6"),
                tab: Some(t("t1")),
            },
            BrowserCall::UploadFile {
                grant: GrantId::parse("grant-7").unwrap(),
            },
        ],
    )
    .await;
}

#[tokio::test]
async fn form_input_chooses_the_call_from_the_role() {
    // The role is unknown at first: one interactive read of the tab, then the call.
    let read = BrowserCall::ReadPage {
        filter: ReadFilter::Interactive,
        tab: None,
    };
    check(
        "form_input",
        json!({"target": {"type": "ref", "ref": "e1"}, "value": "Grace"}),
        vec![
            read.clone(),
            BrowserCall::type_text("Grace", Some(r("e1")), None).unwrap(),
        ],
    )
    .await;
    check(
        "form_input",
        json!({"target": {"type": "ref", "ref": "e2"}, "value": "l"}),
        vec![
            read.clone(),
            BrowserCall::select_option(r("e2"), &["l"], None).unwrap(),
        ],
    )
    .await;
    // A multi-select list gets one option per call (the API's value is one string).
    check(
        "form_input",
        json!({"target": {"type": "ref", "ref": "e3"}, "value": "l"}),
        vec![
            read.clone(),
            BrowserCall::select_option(r("e3"), &["l"], None).unwrap(),
        ],
    )
    .await;
    check(
        "form_input",
        json!({"target": {"type": "ref", "ref": "e4"}, "value": true}),
        vec![
            read.clone(),
            BrowserCall::SetChecked {
                tab: None,
                target: r("e4"),
                checked: true,
            },
        ],
    )
    .await;
    // An editable combo box (no options) is typed into; a number is its text.
    check(
        "form_input",
        json!({"target": {"type": "ref", "ref": "e7"}, "value": 12}),
        vec![
            read.clone(),
            BrowserCall::type_text("12", Some(r("e7")), None).unwrap(),
        ],
    )
    .await;

    // After a read_page, the role is known: no second read.
    let log = Log::default();
    let mut toolset = toolset(&log);
    let outcome = turn(
        &mut toolset,
        &[
            block("toolu_1", "read_page", json!({})),
            block(
                "toolu_2",
                "form_input",
                json!({"target": {"type": "ref", "ref": "e4"}, "value": "off"}),
            ),
        ],
    )
    .await;
    assert!(outcome.results.iter().all(|r| !r.is_error()));
    assert_eq!(
        calls(&take(&log)),
        vec![
            BrowserCall::ReadPage {
                filter: ReadFilter::All,
                tab: None
            },
            BrowserCall::SetChecked {
                tab: None,
                target: r("e4"),
                checked: false
            },
        ]
    );
    assert_eq!(outcome.results[1].text(), Some("Set the field."));
}

#[tokio::test]
async fn form_input_refuses_what_it_cannot_set() {
    for (input, needle) in [
        (
            json!({"target": {"type": "ref", "ref": "e5"}, "value": "7"}),
            "cannot set the slider e5",
        ),
        (
            json!({"target": {"type": "ref", "ref": "e6"}, "value": "x"}),
            "use left_click",
        ),
        (
            json!({"target": {"type": "ref", "ref": "e4"}, "value": "maybe"}),
            "must be true or false",
        ),
        (
            json!({"target": {"type": "ref", "ref": "e99"}, "value": "x"}),
            "not a form field",
        ),
    ] {
        let (result, got) = one("form_input", input.clone()).await;
        assert!(result.is_error(), "{input}");
        assert!(
            result.text().unwrap_or_default().contains(needle),
            "{input}: {:?}",
            result.text()
        );
        // Only the lookup read reached the driver.
        assert_eq!(got.len(), 1, "{input}: {got:?}");
        assert_eq!(got[0].member(), BrowserMember::ReadPage);
    }
}
