//! The toolset against the recording fake driver: every member's driver calls, batches and the
//! halt text, `browser_state` rules, consent order, refusals and faults.

use std::time::Duration;

use hands_core::browser::args::{
    BrowserCall, CssPoint, CssRegion, DiagnosticsSource, GrantId, PageUrl, PointerButton,
    ReadFilter,
};
use hands_core::browser::driver::{FileCleanup, FileEffect, FileOutcome, FileStatus, ReadResult};
use hands_core::browser::{BrowserMember, BrowserOutput, DriverError, MemberSet};
use hands_core::input::{Modifier, ModifierSet};
use serde_json::{Value, json};

use super::fake::{
    Event, FakeBrowser, Log, calls, r, recording_confirm, recording_policy, t, take,
};
use super::*;
use crate::browser::consent::Approval;
use crate::strings::{
    BROWSER_ACTION_DENIED, BROWSER_BUTTON_HOLD_UNSUPPORTED, BROWSER_CANCELLED,
    BROWSER_FOCUS_INPUT_REFUSED, BROWSER_HISTORY_UNSUPPORTED, BROWSER_NOT_EXECUTED,
    BROWSER_STATE_UNAVAILABLE, BROWSER_UNSUPPORTED, BROWSER_URL_DENIED,
};

/// Every member enabled, recording callbacks that allow and approve.
fn config(log: &Log) -> ClaudeBrowserConfig {
    let mut declaration = BrowserToolsetDeclaration::new();
    for member in Member::ALL {
        declaration = declaration.enable(member);
    }
    ClaudeBrowserConfig {
        declaration,
        confirm: Some(recording_confirm(log, vec![])),
        url_policy: Some(recording_policy(log)),
        ..ClaudeBrowserConfig::default()
    }
}

fn toolset(log: &Log) -> ClaudeBrowserToolset<FakeBrowser> {
    ClaudeBrowserToolset::new(FakeBrowser::new(log), config(log)).unwrap()
}

fn block(id: &str, name: &str, input: Value) -> ToolUse {
    ToolUse {
        id: id.into(),
        name: name.into(),
        toolset_name: Some("browser".into()),
        input,
    }
}

async fn turn(toolset: &mut ClaudeBrowserToolset<FakeBrowser>, blocks: &[ToolUse]) -> TurnOutcome {
    toolset.run_turn(blocks, &CancellationToken::new()).await
}

/// Runs one block and returns its result and the driver calls it made.
async fn one(name: &str, input: Value) -> (BrowserResult, Vec<BrowserCall>) {
    let log = Log::default();
    let mut toolset = toolset(&log);
    let outcome = turn(&mut toolset, &[block("toolu_1", name, input)]).await;
    assert!(outcome.fault.is_none(), "{name}: {:?}", outcome.fault);
    let result = outcome.results.into_iter().next().unwrap();
    (result, calls(&take(&log)))
}

/// Checks that a member's input makes exactly these driver calls and succeeds.
async fn check(name: &str, input: Value, want: Vec<BrowserCall>) {
    let (result, got) = one(name, input.clone()).await;
    assert!(!result.is_error(), "{name} {input}: {:?}", result.text());
    assert_eq!(got, want, "{name} {input}");
}

/// Checks that a member's input is refused with a text containing `needle`, and that nothing
/// reached the driver.
async fn refused(name: &str, input: Value, needle: &str) {
    let (result, got) = one(name, input.clone()).await;
    assert!(result.is_error(), "{name} {input} succeeded");
    let text = result.text().unwrap_or_default();
    assert!(text.contains(needle), "{name} {input}: {text:?}");
    assert!(got.is_empty(), "{name} {input} reached the driver: {got:?}");
    assert!(result.state().is_none());
}

fn point(x: u64, y: u64) -> CssPoint {
    CssPoint::new(x, y).unwrap()
}

fn url(text: &str) -> PageUrl {
    PageUrl::parse("url", text).unwrap()
}

fn coordinate(x: u64, y: u64) -> Value {
    json!({"type": "coordinate", "coordinate": [x, y]})
}

fn state_blocks(result: &BrowserResult) -> Vec<Value> {
    result.to_json()["content"]
        .as_array()
        .map(|content| {
            content
                .iter()
                .filter(|b| b["type"] == "browser_state")
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Member → driver call, every member.

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
    check(
        "new_tab",
        json!({"url": "example.com"}),
        vec![BrowserCall::NewTab {
            url: Some(url("https://example.com/")),
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
    // Without a tab_id: the active tab, from the state.
    check(
        "close_tab",
        json!({}),
        vec![BrowserCall::CloseTab { tab: t("t1") }],
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
        json!({"filter": "interactive", "tab_id": "t1"}),
        vec![BrowserCall::ReadPage {
            filter: ReadFilter::Interactive,
            tab: Some(t("t1")),
        }],
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
        json!({"limit": 5, "tab_id": "t2"}),
        vec![BrowserCall::read_diagnostics(Some(t("t2")), DiagnosticsSource::Network, 5).unwrap()],
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
        json!({"ref": "e6"}),
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
        json!({"target": coordinate(10, 20), "modifiers": ["Control", "shift"]}),
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
        json!({"coordinate": [7, 8]}),
        vec![BrowserCall::HoverAt {
            tab: None,
            at: point(7, 8),
        }],
    )
    .await;
    check(
        "left_click_drag",
        json!({"start_coordinate": [1, 2], "coordinate": [30, 40], "modifiers": "alt"}),
        vec![
            BrowserCall::drag_path(
                None,
                vec![point(1, 2), point(30, 40)],
                [Modifier::Alt].into_iter().collect(),
            )
            .unwrap(),
        ],
    )
    .await;
    // Wheel clicks of 100 CSS pixels.
    check(
        "scroll",
        json!({"scroll_direction": "down", "scroll_amount": 3}),
        vec![BrowserCall::scroll("down", 300, None).unwrap()],
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
        json!({"text": "hello", "ref": "e1", "tab_id": "t1"}),
        vec![BrowserCall::type_text("hello", Some(r("e1")), Some(t("t1"))).unwrap()],
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
        json!({"text": "shift", "duration": 0.5}),
        vec![BrowserCall::hold_keys(None, &["Shift_L"], 500).unwrap()],
    )
    .await;
    check(
        "javascript_exec",
        json!({"text": "document.title", "tab_id": "t2"}),
        vec![BrowserCall::run_script(Some(t("t2")), "document.title", 10_000).unwrap()],
    )
    .await;
    check(
        "file_upload",
        json!({"grant_id": "grant-7"}),
        vec![BrowserCall::UploadFile {
            grant: GrantId::parse("grant-7").unwrap(),
        }],
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
        json!({"ref": "e1", "value": "Grace"}),
        vec![
            read.clone(),
            BrowserCall::type_text("Grace", Some(r("e1")), None).unwrap(),
        ],
    )
    .await;
    check(
        "form_input",
        json!({"ref": "e2", "value": "l"}),
        vec![
            read.clone(),
            BrowserCall::select_option(r("e2"), &["l"], None).unwrap(),
        ],
    )
    .await;
    check(
        "form_input",
        json!({"ref": "e3", "value": ["s", "l"]}),
        vec![
            read.clone(),
            BrowserCall::select_option(r("e3"), &["s", "l"], None).unwrap(),
        ],
    )
    .await;
    check(
        "form_input",
        json!({"ref": "e4", "value": true}),
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
        json!({"ref": "e7", "value": 12}),
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
                json!({"ref": "e4", "value": "off"}),
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
            json!({"ref": "e5", "value": "7"}),
            "cannot set the slider e5",
        ),
        (json!({"ref": "e6", "value": "x"}), "use left_click"),
        (
            json!({"ref": "e4", "value": "maybe"}),
            "must be true or false",
        ),
        (json!({"ref": "e99", "value": "x"}), "not a form field"),
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

// ---------------------------------------------------------------------------------------------
// Results.

#[tokio::test]
async fn results_are_short_acknowledgements_reads_or_images() {
    let (result, _) = one("left_click", json!({"target": coordinate(1, 1)})).await;
    assert_eq!(result.text(), Some("Clicked."));
    let (result, _) = one(
        "scroll",
        json!({"scroll_direction": "left", "scroll_amount": 1}),
    )
    .await;
    assert_eq!(result.text(), Some("Scrolled left."));
    let (result, _) = one(
        "navigate",
        json!({"url": "https://docs.example/a?q=secret"}),
    )
    .await;
    assert_eq!(
        result.text(),
        Some("Navigated to https://docs.example \u{2014} Page at docs.example")
    );
    let (result, _) = one("get_page_text", json!({})).await;
    assert_eq!(result.text(), Some("Order form"));
    let (result, _) = one("read_network", json!({})).await;
    assert_eq!(result.text(), Some("network log"));
    let (result, _) = one("javascript_exec", json!({"text": "6*7"})).await;
    assert_eq!(result.text(), Some("42"));
    // Reads come in the compact form, one line per element.
    let (result, _) = one("read_page", json!({})).await;
    assert_eq!(
        result.text(),
        Some(super::fake::page_read().to_compact().as_str())
    );
    assert!(
        result.text().unwrap().contains("[e1] textbox Name = Ada\n"),
        "{:?}",
        result.text()
    );
    let (result, _) = one("screenshot", json!({})).await;
    let content = result.to_json()["content"].clone();
    assert_eq!(content[0]["type"], "image");
    assert_eq!(content[0]["source"]["media_type"], "image/png");
    assert_eq!(content[1]["type"], "browser_state");
    assert_eq!(content.as_array().map(Vec::len), Some(2));
    let (result, _) = one("wait", json!({"duration": 0})).await;
    assert_eq!(result.text(), Some("Waited."));
}

#[tokio::test]
async fn withheld_values_never_reach_the_model() {
    let log = Log::default();
    let mut toolset = ClaudeBrowserToolset::new(
        FakeBrowser::new(&log),
        ClaudeBrowserConfig {
            read_values: ReadValues::Withheld,
            ..config(&log)
        },
    )
    .unwrap();
    let outcome = turn(&mut toolset, &[block("toolu_1", "read_page", json!({}))]).await;
    let text = outcome.results[0].text().unwrap();
    assert!(!text.contains("Ada"), "{text}");
    assert!(text.ends_with("\n(omitted: value)"), "{text}");
}

#[tokio::test]
async fn empty_texts_are_replaced_so_no_text_block_is_empty() {
    let log = Log::default();
    let fake = FakeBrowser::new(&log)
        .answer(
            BrowserMember::RunScript,
            Ok(BrowserOutput::Script(String::new())),
        )
        .answer(BrowserMember::Find, Ok(BrowserOutput::Read(None)));
    let mut toolset = ClaudeBrowserToolset::new(fake, config(&log)).unwrap();
    let outcome = turn(
        &mut toolset,
        &[
            block("toolu_1", "javascript_exec", json!({"text": "''"})),
            block("toolu_2", "find", json!({"query": "nothing"})),
        ],
    )
    .await;
    assert_eq!(
        outcome.results[0].text(),
        Some(crate::strings::BROWSER_SCRIPT_EMPTY)
    );
    assert_eq!(
        outcome.results[1].text(),
        Some(crate::strings::BROWSER_READ_EMPTY)
    );
}

// ---------------------------------------------------------------------------------------------
// browser_state.

#[tokio::test]
async fn every_success_has_one_state_block_and_no_error_has_one() {
    let log = Log::default();
    let fake = FakeBrowser::new(&log).answer(
        BrowserMember::Click,
        Err(DriverError::refused("That element is gone.")),
    );
    let mut toolset = ClaudeBrowserToolset::new(fake, config(&log)).unwrap();
    let outcome = turn(
        &mut toolset,
        &[
            block("toolu_1", "screenshot", json!({})),
            block("toolu_2", "list_tabs", json!({})),
            block(
                "toolu_3",
                "left_click",
                json!({"target": {"type": "ref", "ref": "e6"}}),
            ),
            block("toolu_4", "list_tabs", json!({})),
        ],
    )
    .await;
    let [shot, tabs, click, halted] = &outcome.results[..] else {
        panic!("{} results", outcome.results.len())
    };
    for ok in [shot, tabs] {
        let states = state_blocks(ok);
        assert_eq!(states.len(), 1);
        // Nothing changed: state_changes is left out, never [].
        assert!(states[0].get("state_changes").is_none());
        assert_eq!(
            states[0]["tabs"],
            json!([
                {"tab_id": "t1", "title": "Cart", "url": "https://shop.example:8443", "active": true},
                {"tab_id": "t2", "title": "Blank", "url": "about:blank", "active": false},
            ])
        );
    }
    // list_tabs is the state block alone.
    assert_eq!(tabs.to_json()["content"].as_array().map(Vec::len), Some(1));
    assert_eq!(click.text(), Some("That element is gone."));
    for failed in [click, halted] {
        assert!(failed.is_error());
        assert!(failed.state().is_none());
        assert!(failed.to_json()["content"].is_string());
    }
    assert!(outcome.fault.is_none());
}

#[tokio::test]
async fn new_tab_reports_the_opened_tab_as_the_only_active_one() {
    let log = Log::default();
    let mut toolset = toolset(&log);
    let outcome = turn(
        &mut toolset,
        &[block(
            "toolu_1",
            "new_tab",
            json!({"url": "https://docs.example/x"}),
        )],
    )
    .await;
    let result = &outcome.results[0];
    assert!(!result.is_error());
    let content = result.to_json()["content"].clone();
    // new_tab is the state block alone.
    assert_eq!(content.as_array().map(Vec::len), Some(1));
    let state = &content[0];
    assert_eq!(
        state["state_changes"],
        json!([{"type": "tab_opened", "tab_id": "t3"}])
    );
    let active: Vec<&Value> = state["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["active"] == true)
        .collect();
    assert_eq!(active.len(), 1);
    assert_eq!(active[0]["tab_id"], "t3");
    assert_eq!(active[0]["url"], "https://docs.example");
}

#[tokio::test]
async fn a_pop_up_is_reported_opened() {
    let log = Log::default();
    let mut fake = FakeBrowser::new(&log);
    fake.popup_ref = Some(r("e6"));
    let mut toolset = ClaudeBrowserToolset::new(fake, config(&log)).unwrap();
    let outcome = turn(
        &mut toolset,
        &[block(
            "toolu_1",
            "left_click",
            json!({"target": {"type": "ref", "ref": "e6"}}),
        )],
    )
    .await;
    let states = state_blocks(&outcome.results[0]);
    assert_eq!(
        states[0]["state_changes"],
        json!([{"type": "tab_opened", "tab_id": "t3"}])
    );
    // Its URL is an origin only: the token stays out.
    assert_eq!(states[0]["tabs"][2]["url"], "https://popup.example");
}

#[tokio::test]
async fn a_new_tab_that_is_not_active_is_a_driver_fault() {
    let log = Log::default();
    let mut fake = FakeBrowser::new(&log);
    fake.broken_new_tab = true;
    let mut toolset = ClaudeBrowserToolset::new(fake, config(&log)).unwrap();
    let outcome = turn(
        &mut toolset,
        &[
            block("toolu_1", "new_tab", json!({})),
            block("toolu_2", "list_tabs", json!({})),
        ],
    )
    .await;
    assert!(matches!(
        outcome.fault,
        Some(BrowserFault::InvalidResult {
            member: BrowserMember::NewTab,
            ..
        })
    ));
    assert!(outcome.results[0].is_error());
    assert_eq!(outcome.results[1].text(), Some(BROWSER_NOT_EXECUTED));
}

// ---------------------------------------------------------------------------------------------
// Batches.

#[tokio::test]
async fn a_failure_halts_the_rest_of_the_turn_with_the_exact_text() {
    let log = Log::default();
    let fake = FakeBrowser::new(&log).answer(
        BrowserMember::Type,
        Err(DriverError::refused("The field is read-only.")),
    );
    let mut toolset = ClaudeBrowserToolset::new(fake, config(&log)).unwrap();
    let blocks = [
        block("toolu_1", "left_click", json!({"target": coordinate(3, 4)})),
        block("toolu_2", "type", json!({"text": "hi", "ref": "e1"})),
        block("toolu_3", "key", json!({"text": "Return"})),
        // A block of another toolset is not this toolset's to answer.
        ToolUse {
            id: "toolu_x".into(),
            name: "screenshot".into(),
            toolset_name: Some("computer".into()),
            input: json!({}),
        },
        block("toolu_4", "screenshot", json!({})),
    ];
    let outcome = turn(&mut toolset, &blocks).await;
    let ids: Vec<&str> = outcome
        .results
        .iter()
        .map(BrowserResult::tool_use_id)
        .collect();
    assert_eq!(ids, ["toolu_1", "toolu_2", "toolu_3", "toolu_4"]);
    for result in &outcome.results {
        assert_eq!(result.to_json()["toolset_name"], "browser");
    }
    assert!(!outcome.results[0].is_error());
    assert_eq!(outcome.results[1].text(), Some("The field is read-only."));
    for halted in &outcome.results[2..] {
        assert_eq!(
            halted.to_json()["content"],
            json!("Not executed: an earlier action in this turn failed.")
        );
        assert_eq!(halted.to_json()["is_error"], true);
    }
    // Nothing after the failure reached the driver.
    let members: Vec<BrowserMember> = calls(&take(&log)).iter().map(BrowserCall::member).collect();
    assert_eq!(members, [BrowserMember::ClickAt, BrowserMember::Type]);
    assert!(outcome.fault.is_none());
}

#[tokio::test]
async fn a_refused_input_halts_the_turn_too() {
    let log = Log::default();
    let mut toolset = toolset(&log);
    let outcome = turn(
        &mut toolset,
        &[
            block("toolu_1", "zoom", json!({"region": [10, 10, 5, 20]})),
            block("toolu_2", "screenshot", json!({})),
        ],
    )
    .await;
    assert!(outcome.results[0].is_error());
    assert_eq!(outcome.results[1].text(), Some(BROWSER_NOT_EXECUTED));
    assert!(take(&log).is_empty(), "nothing was read or run");
}

#[tokio::test]
async fn refuse_block_stops_the_batch() {
    let log = Log::default();
    let mut toolset = toolset(&log);
    let mut batch = Batch::default();
    let cancel = CancellationToken::new();
    let first = block("toolu_1", "screenshot", json!({}));
    let second = block("toolu_2", "screenshot", json!({}));
    let refused = toolset.refuse_block(&mut batch, &first, "Refused by the approver.");
    assert_eq!(refused.text(), Some("Refused by the approver."));
    assert!(batch.failed());
    let halted = toolset.run_block(&mut batch, &second, &cancel).await;
    assert_eq!(halted.text(), Some(BROWSER_NOT_EXECUTED));
    assert!(toolset.finish_batch(batch).is_none());
    assert!(take(&log).is_empty());
}

// ---------------------------------------------------------------------------------------------
// Consent.

#[tokio::test]
async fn the_url_policy_is_asked_before_confirm() {
    let log = Log::default();
    let mut toolset = toolset(&log);
    let outcome = turn(
        &mut toolset,
        &[block(
            "toolu_1",
            "navigate",
            json!({"url": "docs.example/a"}),
        )],
    )
    .await;
    assert!(!outcome.results[0].is_error());
    let events = take(&log);
    assert_eq!(
        events,
        vec![
            Event::State,
            Event::UrlPolicy("https://docs.example/a".into()),
            Event::Confirm {
                member: BrowserMember::Navigate,
                arguments: json!({"url": "https://docs.example/a", "tab_id": null}),
                with_state: true,
            },
            Event::Call(BrowserCall::Navigate {
                url: url("https://docs.example/a"),
                tab: None
            }),
            Event::State,
        ]
    );
}

#[tokio::test]
async fn a_denied_url_is_never_confirmed_or_opened() {
    for (name, input) in [
        ("navigate", json!({"url": "https://www.evil.test/"})),
        ("new_tab", json!({"url": "evil.test"})),
    ] {
        let log = Log::default();
        let mut toolset = toolset(&log);
        let outcome = turn(&mut toolset, &[block("toolu_1", name, input)]).await;
        assert_eq!(outcome.results[0].text(), Some(BROWSER_URL_DENIED));
        assert!(outcome.results[0].state().is_none());
        let events = take(&log);
        assert!(
            matches!(events.as_slice(), [Event::State, Event::UrlPolicy(_)]),
            "{name}: {events:?}"
        );
    }
    // A blank new tab has no URL to check, but still needs confirm.
    let log = Log::default();
    let mut toolset = toolset(&log);
    turn(&mut toolset, &[block("toolu_1", "new_tab", json!({}))]).await;
    let events = take(&log);
    assert!(
        matches!(
            events.as_slice(),
            [
                Event::State,
                Event::Confirm {
                    member: BrowserMember::NewTab,
                    ..
                },
                Event::Call(_),
                Event::State
            ]
        ),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_denied_confirm_runs_nothing() {
    let log = Log::default();
    let mut toolset = ClaudeBrowserToolset::new(
        FakeBrowser::new(&log),
        ClaudeBrowserConfig {
            confirm: Some(recording_confirm(&log, vec![Approval::Deny])),
            ..config(&log)
        },
    )
    .unwrap();
    let outcome = turn(
        &mut toolset,
        &[
            block("toolu_1", "key", json!({"text": "ctrl+w", "repeat": 2})),
            block("toolu_2", "screenshot", json!({})),
        ],
    )
    .await;
    assert_eq!(outcome.results[0].text(), Some(BROWSER_ACTION_DENIED));
    assert_eq!(outcome.results[1].text(), Some(BROWSER_NOT_EXECUTED));
    let events = take(&log);
    // One confirmation for the whole repeated key, told how often it repeats.
    assert_eq!(
        events,
        vec![
            Event::State,
            Event::Confirm {
                member: BrowserMember::Key,
                arguments: json!({"keys": ["Control_L+w"], "tab_id": null, "repeat": 2}),
                with_state: true,
            },
        ]
    );
}

#[tokio::test]
async fn which_members_ask_confirm() {
    let asks = [
        ("type", json!({"text": "x"})),
        ("key", json!({"text": "a"})),
        ("hold_key", json!({"text": "a", "duration": 0.1})),
        ("left_click", json!({"target": coordinate(1, 1)})),
        ("hover", json!({"target": coordinate(1, 1)})),
        (
            "scroll",
            json!({"scroll_direction": "up", "scroll_amount": 1}),
        ),
        ("switch_tab", json!({"tab_id": "t2"})),
        ("close_tab", json!({})),
        ("form_input", json!({"ref": "e1", "value": "x"})),
        ("read_console", json!({})),
        ("javascript_exec", json!({"text": "1"})),
        ("file_upload", json!({"grant_id": "g"})),
    ];
    for (name, input) in asks {
        let log = Log::default();
        let mut toolset = toolset(&log);
        turn(&mut toolset, &[block("toolu_1", name, input)]).await;
        let n_confirm = take(&log)
            .iter()
            .filter(|e| matches!(e, Event::Confirm { .. }))
            .count();
        assert_eq!(n_confirm, 1, "{name}");
    }
    let silent = [
        ("read_page", json!({})),
        ("get_page_text", json!({})),
        ("find", json!({"query": "Pay"})),
        ("screenshot", json!({})),
        ("zoom", json!({"region": [0, 0, 1, 1]})),
        ("list_tabs", json!({})),
        ("wait", json!({"duration": 0})),
    ];
    for (name, input) in silent {
        let log = Log::default();
        let mut toolset = toolset(&log);
        turn(&mut toolset, &[block("toolu_1", name, input)]).await;
        assert!(
            !take(&log)
                .iter()
                .any(|e| matches!(e, Event::Confirm { .. } | Event::UrlPolicy(_))),
            "{name}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Refusals.

#[tokio::test]
async fn malformed_inputs_say_what_was_wrong() {
    let cases = [
        ("left_click", json!({}), "requires `target`"),
        (
            "left_click",
            json!({"coordinate": [1, 2]}),
            "does not take `coordinate`",
        ),
        (
            "left_click",
            json!({"target": {"type": "pixel", "coordinate": [1, 2]}}),
            "`target.type` must be \"coordinate\" or \"ref\"",
        ),
        (
            "left_click",
            json!({"target": {"type": "coordinate", "coordinate": [-1, 2]}}),
            "`target.coordinate` must be an array of two non-negative integers",
        ),
        (
            "left_click",
            json!({"target": {"type": "coordinate", "coordinate": [1, 2], "ref": "e1"}}),
            "does not take `target.ref`",
        ),
        (
            "left_click",
            json!({"target": {"type": "ref", "ref": ""}}),
            "ref of 1 to 256 bytes",
        ),
        (
            "left_click",
            json!({"target": coordinate(1, 1), "modifiers": "ctrl+q"}),
            "not a modifier",
        ),
        (
            "left_click",
            json!({"target": coordinate(1, 1), "modifiers": ["shift", "Shift"]}),
            "twice",
        ),
        ("navigate", json!({"url": 5}), "`url` must be a URL"),
        (
            "navigate",
            json!({"url": "https://"}),
            "not a valid absolute URL",
        ),
        ("navigate", json!({"url": "x", "tab_id": ""}), "tab id"),
        ("switch_tab", json!({}), "requires `tab_id`"),
        (
            "read_page",
            json!({"filter": "everything"}),
            "\"all\", \"interactive\"",
        ),
        ("read_console", json!({"limit": 101}), "1 to 100"),
        ("read_console", json!({"limit": true}), "`limit` must be"),
        (
            "find",
            json!({"query": "  "}),
            "`query` must be 1 to 256 bytes",
        ),
        ("form_input", json!({"ref": "e1"}), "requires `value`"),
        (
            "form_input",
            json!({"ref": "e1", "value": {"a": 1}}),
            "`value` must be",
        ),
        (
            "file_upload",
            json!({"path": "/etc/passwd"}),
            "does not take `path`",
        ),
        (
            "zoom",
            json!({"region": [0, 0, 10]}),
            "four non-negative integers",
        ),
        ("zoom", json!({"region": [10, 10, 5, 20]}), "left < right"),
        (
            "scroll",
            json!({"scroll_direction": "sideways", "scroll_amount": 1}),
            "\"up\"",
        ),
        (
            "scroll",
            json!({"scroll_direction": "up"}),
            "requires `scroll_amount`",
        ),
        (
            "scroll",
            json!({"scroll_direction": "up", "scroll_amount": 101}),
            "0 to 100",
        ),
        (
            "key",
            json!({"text": "ctrl+bogus"}),
            "unknown key name \"bogus\"",
        ),
        ("key", json!({"text": "a", "repeat": 0}), "1 to 100"),
        (
            "hold_key",
            json!({"text": "shift", "duration": 4}),
            "at most 3",
        ),
        (
            "hold_key",
            json!({"text": "shift", "duration": 0}),
            "more than 0",
        ),
        ("wait", json!({"duration": 31}), "the limit is 30 seconds"),
        ("wait", json!({"duration": -1}), "a number of seconds"),
        ("type", json!("hello"), "takes a JSON object"),
        ("javascript_exec", json!({"text": " "}), "`text` must be"),
        ("list_tabs", json!({"all": true}), "it takes no fields"),
    ];
    for (name, input, needle) in cases {
        refused(name, input, needle).await;
    }
}

#[tokio::test]
async fn what_the_driver_contract_cannot_do_is_refused_clearly() {
    refused(
        "navigate",
        json!({"url": "back"}),
        BROWSER_HISTORY_UNSUPPORTED,
    )
    .await;
    refused(
        "navigate",
        json!({"url": "forward"}),
        BROWSER_HISTORY_UNSUPPORTED,
    )
    .await;
    refused(
        "left_mouse_down",
        json!({}),
        BROWSER_BUTTON_HOLD_UNSUPPORTED,
    )
    .await;
    refused("left_mouse_up", json!({}), BROWSER_BUTTON_HOLD_UNSUPPORTED).await;
    refused(
        "double_click",
        json!({"target": {"type": "ref", "ref": "e6"}}),
        "use a coordinate target",
    )
    .await;
    refused(
        "left_click",
        json!({"target": {"type": "ref", "ref": "e6"}, "modifiers": "shift"}),
        "`modifiers` need a coordinate target",
    )
    .await;
    refused(
        "scroll",
        json!({"scroll_direction": "down", "scroll_amount": 2, "coordinate": [5, 5]}),
        "cannot scroll at a `coordinate`",
    )
    .await;
    refused(
        "scroll",
        json!({"scroll_direction": "down", "scroll_amount": 2, "modifiers": "ctrl"}),
        "cannot hold `modifiers` while scrolling",
    )
    .await;
    // A scroll with a null coordinate is a scroll without one.
    check(
        "scroll",
        json!({"scroll_direction": "up", "scroll_amount": 0, "coordinate": null}),
        vec![BrowserCall::scroll("up", 0, None).unwrap()],
    )
    .await;
}

#[tokio::test]
async fn unknown_and_disabled_members_are_refused_before_anything_is_read() {
    let log = Log::default();
    let mut toolset = ClaudeBrowserToolset::new(
        FakeBrowser::new(&log),
        ClaudeBrowserConfig {
            declaration: BrowserToolsetDeclaration::new(),
            ..config(&log)
        },
    )
    .unwrap();
    let outcome = turn(
        &mut toolset,
        &[block("toolu_1", "javascript_exec", json!({"text": "1"}))],
    )
    .await;
    assert_eq!(
        outcome.results[0].text(),
        Some("the `javascript_exec` member is disabled in this toolset's configs")
    );
    let outcome = turn(&mut toolset, &[block("toolu_2", "teleport", json!({}))]).await;
    assert!(
        outcome.results[0]
            .text()
            .unwrap()
            .starts_with("unknown browser member `teleport`: the toolset has navigate, list_tabs")
    );
    assert!(take(&log).is_empty());
}

/// Names the model sends come back one line, without control or bidi characters, cut to 200
/// characters; no error text is longer than 4,096 characters.
#[tokio::test]
async fn hostile_names_are_echoed_one_line_and_bounded() {
    let log = Log::default();
    let mut toolset = ClaudeBrowserToolset::new(FakeBrowser::new(&log), config(&log)).unwrap();
    let hostile = format!("a\n\u{202e}{}", "z".repeat(5000));
    let blocks = [
        block("toolu_1", &hostile, json!({})),
        block("toolu_2", "left_click", json!({ hostile.clone(): 1 })),
        block(
            "toolu_3",
            "left_click",
            json!({"target": {"type": "ref", "ref": "e1", hostile.clone(): 1}}),
        ),
        block("toolu_4", "key", json!({"text": hostile.clone()})),
    ];
    for b in blocks {
        let outcome = turn(&mut toolset, &[b]).await;
        let text = outcome.results[0].text().unwrap().to_owned();
        assert!(outcome.results[0].is_error());
        assert!(!text.chars().any(crate::errtext::is_line_unsafe), "{text}");
        assert!(!text.contains(&"z".repeat(201)), "{text}");
        assert!(text.chars().count() <= crate::errtext::MAX_ERROR_CHARS);
    }
}

#[tokio::test]
async fn driver_failures_become_safe_texts() {
    let log = Log::default();
    let fake = FakeBrowser::new(&log)
        .answer(
            BrowserMember::Screenshot,
            Err(DriverError::Failed("socket /tmp/x: secret detail".into())),
        )
        .answer(
            BrowserMember::Zoom,
            Err(DriverError::Unsupported(BrowserMember::Zoom)),
        )
        .answer(
            BrowserMember::UploadFile,
            Ok(BrowserOutput::File(
                FileOutcome::new(
                    FileStatus::Refused,
                    FileEffect::None,
                    FileCleanup::NotStarted,
                )
                .unwrap(),
            )),
        );
    let mut toolset = ClaudeBrowserToolset::new(fake, config(&log)).unwrap();
    for (name, input, want) in [
        ("screenshot", json!({}), crate::strings::BROWSER_FAILED.to_owned()),
        ("zoom", json!({"region": [0, 0, 2, 2]}), BROWSER_UNSUPPORTED.to_owned()),
        (
            "file_upload",
            json!({"grant_id": "g1"}),
            r#"The upload did not complete: {"cleanup":"not_started","effect":"none","status":"refused","version":1}"#.to_owned(),
        ),
    ] {
        let outcome = turn(&mut toolset, &[block("toolu_1", name, input)]).await;
        assert_eq!(outcome.results[0].text(), Some(want.as_str()), "{name}");
        assert!(outcome.fault.is_none());
    }
}

#[tokio::test]
async fn faults_stop_the_run_and_still_answer_every_block() {
    // The state after the call cannot be read.
    let log = Log::default();
    let fake = FakeBrowser::new(&log).fail_state(1, || DriverError::Failed("timeout".into()));
    let mut toolset = ClaudeBrowserToolset::new(fake, config(&log)).unwrap();
    let outcome = turn(
        &mut toolset,
        &[
            block("toolu_1", "screenshot", json!({})),
            block("toolu_2", "screenshot", json!({})),
        ],
    )
    .await;
    assert!(matches!(
        outcome.fault,
        Some(BrowserFault::StateUnavailable(_))
    ));
    assert_eq!(outcome.results[0].text(), Some(BROWSER_STATE_UNAVAILABLE));
    assert_eq!(outcome.results[1].text(), Some(BROWSER_NOT_EXECUTED));

    // The browser is gone.
    let log = Log::default();
    let fake = FakeBrowser::new(&log).answer(
        BrowserMember::ClickAt,
        Err(DriverError::Gone("websocket closed".into())),
    );
    let mut toolset = ClaudeBrowserToolset::new(fake, config(&log)).unwrap();
    let outcome = turn(
        &mut toolset,
        &[block(
            "toolu_1",
            "left_click",
            json!({"target": coordinate(1, 1)}),
        )],
    )
    .await;
    assert_eq!(
        outcome.fault,
        Some(BrowserFault::Gone("websocket closed".into()))
    );
    assert_eq!(
        outcome.results[0].text(),
        Some(crate::strings::BROWSER_FAILED)
    );

    // An invalid read (get_page_text with elements) is a fault, not a result.
    let log = Log::default();
    let fake = FakeBrowser::new(&log).answer(
        BrowserMember::GetPageText,
        Ok(BrowserOutput::Read(Some(ReadResult::Structured(
            super::fake::page_read(),
        )))),
    );
    let mut toolset = ClaudeBrowserToolset::new(fake, config(&log)).unwrap();
    let outcome = turn(
        &mut toolset,
        &[block("toolu_1", "get_page_text", json!({}))],
    )
    .await;
    assert!(matches!(
        outcome.fault,
        Some(BrowserFault::InvalidResult {
            member: BrowserMember::GetPageText,
            ..
        })
    ));
    assert!(outcome.results[0].state().is_none());
}

#[tokio::test]
async fn a_cancelled_run_answers_every_block() {
    let log = Log::default();
    let mut toolset = toolset(&log);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let outcome = toolset
        .run_turn(
            &[
                block("toolu_1", "screenshot", json!({})),
                block("toolu_2", "screenshot", json!({})),
            ],
            &cancel,
        )
        .await;
    assert_eq!(outcome.fault, Some(BrowserFault::Cancelled));
    assert_eq!(outcome.results[0].text(), Some(BROWSER_CANCELLED));
    assert_eq!(outcome.results[1].text(), Some(BROWSER_NOT_EXECUTED));
    assert!(take(&log).is_empty());
}

#[tokio::test(start_paused = true)]
async fn wait_sleeps_on_the_clock_and_can_be_cancelled() {
    let log = Log::default();
    let mut toolset = toolset(&log);
    let start = tokio::time::Instant::now();
    let outcome = turn(
        &mut toolset,
        &[block("toolu_1", "wait", json!({"duration": 2.5}))],
    )
    .await;
    assert_eq!(outcome.results[0].text(), Some("Waited."));
    assert_eq!(start.elapsed(), Duration::from_millis(2500));
    assert_eq!(calls(&take(&log)), vec![]);

    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        trigger.cancel();
    });
    let outcome = toolset
        .run_turn(
            &[block("toolu_2", "wait", json!({"duration": 20}))],
            &cancel,
        )
        .await;
    assert_eq!(outcome.fault, Some(BrowserFault::Cancelled));
    assert_eq!(outcome.results[0].text(), Some(BROWSER_CANCELLED));
}

#[tokio::test]
async fn focused_input_can_be_refused() {
    let log = Log::default();
    let mut declaration = config(&log).declaration;
    declaration = declaration.disable(Member::Key).disable(Member::HoldKey);
    let mut toolset = ClaudeBrowserToolset::new(
        FakeBrowser::new(&log),
        ClaudeBrowserConfig {
            declaration,
            focused_input: FocusedInput::Refused,
            ..config(&log)
        },
    )
    .unwrap();
    let outcome = turn(
        &mut toolset,
        &[
            block("toolu_1", "type", json!({"text": "hi", "ref": "e1"})),
            block("toolu_2", "type", json!({"text": "hi"})),
        ],
    )
    .await;
    assert!(!outcome.results[0].is_error());
    assert_eq!(outcome.results[1].text(), Some(BROWSER_FOCUS_INPUT_REFUSED));
}

// ---------------------------------------------------------------------------------------------
// Construction and routing.

#[test]
fn a_toolset_that_could_not_answer_is_refused() {
    let log = Log::default();
    let build = |config: ClaudeBrowserConfig| {
        ClaudeBrowserToolset::new(FakeBrowser::new(&log), config).map(|_| ())
    };
    assert_eq!(
        build(ClaudeBrowserConfig::default()),
        Err(ConfigError::MissingUrlPolicy(Member::Navigate))
    );
    assert_eq!(
        build(ClaudeBrowserConfig {
            url_policy: Some(recording_policy(&log)),
            ..ClaudeBrowserConfig::default()
        }),
        Err(ConfigError::MissingConfirm(Member::Navigate))
    );
    assert_eq!(
        build(ClaudeBrowserConfig {
            focused_input: FocusedInput::Refused,
            ..config(&log)
        }),
        Err(ConfigError::FocusedInput(Member::Key))
    );
    assert_eq!(
        build(ClaudeBrowserConfig {
            script_timeout: Duration::from_secs(31),
            ..config(&log)
        }),
        Err(ConfigError::Limit {
            field: "script_timeout",
            expected: "from 1 ms to 30 s"
        })
    );
    assert!(matches!(
        build(ClaudeBrowserConfig {
            declaration: BrowserToolsetDeclaration::new().defer_loading(true).member(
                Member::Zoom,
                crate::computer::declaration::MemberConfig {
                    enabled: true,
                    defer_loading: false
                }
            ),
            ..config(&log)
        }),
        Err(ConfigError::Declaration(
            declaration::DeclarationError::MixedDeferLoading
        ))
    ));
    // Reads only: no callbacks needed.
    let reads = BrowserToolsetDeclaration::new();
    let reads = Member::ALL
        .into_iter()
        .filter(|m| m.consent() != Consent::None)
        .fold(reads, BrowserToolsetDeclaration::disable);
    assert!(
        build(ClaudeBrowserConfig {
            declaration: reads,
            ..ClaudeBrowserConfig::default()
        })
        .is_ok()
    );
    // A member none of whose driver calls exist.
    let mut fake = FakeBrowser::new(&log);
    let mut implemented = MemberSet::all();
    implemented.remove(BrowserMember::Zoom);
    fake.implemented = implemented;
    assert!(matches!(
        ClaudeBrowserToolset::new(fake, config(&log)),
        Err(ConfigError::Unimplemented(Member::Zoom))
    ));
}

#[test]
fn routing_is_on_the_toolset_name() {
    let log = Log::default();
    let toolset = toolset(&log);
    assert!(toolset.owns(&block("toolu_1", "navigate", json!({}))));
    let custom = ToolUse {
        id: "toolu_2".into(),
        name: "navigate".into(),
        toolset_name: None,
        input: json!({}),
    };
    assert!(!toolset.owns(&custom));
    let computer = ToolUse {
        toolset_name: Some("computer".into()),
        ..custom
    };
    assert!(!toolset.owns(&computer));
    let declaration = toolset.declaration();
    assert_eq!(declaration["type"], "browser_toolset_20260801");
    assert_eq!(
        declaration["configs"]["javascript_exec"],
        json!({"enabled": true})
    );
}
