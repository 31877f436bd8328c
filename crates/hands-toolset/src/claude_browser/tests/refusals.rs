//! Refusals, driver failures and faults.

use super::*;

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
            json!({"target": {"type": "pixel", "x": 1, "y": 2}}),
            "`target.type` must be \"coordinate\" or \"ref\"",
        ),
        (
            "left_click",
            json!({"target": {"x": 1, "y": 2}}),
            "requires `target.type`",
        ),
        // hands' old guessed shape is refused, naming the field to use.
        (
            "left_click",
            json!({"target": {"type": "coordinate", "coordinate": [1, 2]}}),
            "does not take `target.coordinate`; it takes `type`, `x`, `y`",
        ),
        (
            "left_click",
            json!({"target": {"type": "coordinate", "x": -1, "y": 2}}),
            "`target.x` must be a non-negative integer",
        ),
        (
            "left_click",
            json!({"target": {"type": "coordinate", "x": 1.5, "y": 2}}),
            "`target.x` must be a non-negative integer",
        ),
        (
            "left_click",
            json!({"target": {"type": "coordinate", "x": "1", "y": 2}}),
            "`target.x` must be",
        ),
        (
            "left_click",
            json!({"target": {"type": "coordinate", "x": 1}}),
            "requires `target.y`",
        ),
        (
            "left_click",
            json!({"target": {"type": "coordinate", "x": 1, "y": 2, "ref": "e1"}}),
            "does not take `target.ref`",
        ),
        (
            "left_click",
            json!({"target": {"type": "ref", "ref": ""}}),
            "ref of 1 to 256 bytes",
        ),
        (
            "left_click",
            json!({"target": {"type": "ref", "ref": 7}}),
            "`target.ref` must be an element ref",
        ),
        (
            "left_click",
            json!({"target": coordinate(1, 1), "modifiers": "ctrl+q"}),
            "not a modifier",
        ),
        (
            "left_click",
            json!({"target": coordinate(1, 1), "modifiers": ["shift"]}),
            "`modifiers` must be the modifier keys held",
        ),
        (
            "left_click_drag",
            json!({"from": coordinate(1, 1), "target": ref_target("e1")}),
            "`target.type` must be \"coordinate\"",
        ),
        (
            "left_click_drag",
            json!({"from": coordinate(1, 1), "target": coordinate(2, 2), "modifiers": "alt"}),
            "does not take `modifiers`",
        ),
        (
            "left_click_drag",
            json!({"start_coordinate": [1, 2], "coordinate": [30, 40]}),
            "does not take `coordinate`",
        ),
        ("mouse_move", json!({}), "requires `target`"),
        (
            "mouse_move",
            json!({"target": ref_target("e1")}),
            "`target.type` must be \"coordinate\"",
        ),
        (
            "scroll_to",
            json!({"ref": "e9"}),
            "does not take `ref`; it takes `target`, `tab_id`",
        ),
        (
            "scroll_to",
            json!({"target": coordinate(1, 1)}),
            "`target.type` must be \"ref\"",
        ),
        ("navigate", json!({"url": 5}), "`url` must be a URL"),
        (
            "navigate",
            json!({"url": "https://"}),
            "not a valid absolute URL",
        ),
        ("navigate", json!({"url": "x", "tab_id": ""}), "tab id"),
        (
            "navigate",
            json!({"url": "x", "tab_id": 3}),
            "`tab_id` must be",
        ),
        ("switch_tab", json!({}), "requires `tab_id`"),
        ("close_tab", json!({}), "requires `tab_id`"),
        (
            "new_tab",
            json!({"url": "example.com"}),
            "does not take `url`",
        ),
        (
            "read_page",
            json!({"filter": "everything"}),
            "\"all\", \"interactive\"",
        ),
        ("read_page", json!({"depth": 0}), "at least 1"),
        ("read_page", json!({"depth": -2}), "`depth` must be"),
        (
            "read_page",
            json!({"ref": 5}),
            "`ref` must be an element ref",
        ),
        (
            "read_console",
            json!({"limit": 10}),
            "does not take `limit`",
        ),
        (
            "find",
            json!({"query": "  "}),
            "`query` must be 1 to 256 bytes",
        ),
        (
            "form_input",
            json!({"target": ref_target("e1")}),
            "requires `value`",
        ),
        (
            "form_input",
            json!({"ref": "e1", "value": "x"}),
            "does not take `ref`",
        ),
        (
            "form_input",
            json!({"target": ref_target("e1"), "value": {"a": 1}}),
            "`value` must be",
        ),
        (
            "form_input",
            json!({"target": ref_target("e3"), "value": ["s", "l"]}),
            "`value` must be",
        ),
        (
            "file_upload",
            json!({"path": "/etc/passwd"}),
            "does not take `path`",
        ),
        (
            "file_upload",
            json!({"document_ids": ["g"]}),
            "requires `target`",
        ),
        (
            "file_upload",
            json!({"target": ref_target("e6")}),
            "requires `document_ids`",
        ),
        (
            "file_upload",
            json!({"target": ref_target("e6"), "document_ids": []}),
            "requires `document_ids`",
        ),
        (
            "file_upload",
            json!({"target": ref_target("e6"), "paths": ["/etc/passwd"]}),
            "never a path",
        ),
        (
            "file_upload",
            json!({"target": ref_target("e6"), "paths": ["/etc/passwd"], "document_ids": ["g"]}),
            "never a path",
        ),
        (
            "file_upload",
            json!({"target": ref_target("e6"), "document_ids": ["g1", "g2"]}),
            "one file per call",
        ),
        (
            "file_upload",
            json!({"target": ref_target("e6"), "document_ids": [7]}),
            "`document_ids` must be an array of strings",
        ),
        (
            "zoom",
            json!({"region": [0, 0, 10]}),
            "four non-negative integers",
        ),
        ("zoom", json!({"region": [10, 10, 5, 20]}), "left < right"),
        (
            "scroll",
            json!({"scroll_direction": "sideways", "target": coordinate(1, 1)}),
            "\"up\"",
        ),
        (
            "scroll",
            json!({"scroll_direction": "up", "scroll_amount": 1}),
            "requires `target`",
        ),
        (
            "scroll",
            json!({"scroll_direction": "up", "target": coordinate(1, 1), "scroll_amount": 11}),
            "from 1 to 10",
        ),
        (
            "scroll",
            json!({"scroll_direction": "up", "target": coordinate(1, 1), "scroll_amount": 0}),
            "from 1 to 10",
        ),
        (
            "scroll",
            json!({"scroll_direction": "up", "target": coordinate(1, 1), "modifiers": "ctrl"}),
            "does not take `modifiers`",
        ),
        (
            "type",
            json!({"text": "x", "ref": "e1"}),
            "does not take `ref`",
        ),
        (
            "key",
            json!({"text": "ctrl+bogus"}),
            "unknown key name \"bogus\"",
        ),
        ("key", json!({"text": "a", "repeat": 0}), "1 to 100"),
        ("key", json!({"text": "a", "repeat": 101}), "1 to 100"),
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
        ("wait", json!({"duration": 1, "tab_id": ""}), "tab id"),
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
        json!({"url": "Forward"}),
        BROWSER_HISTORY_UNSUPPORTED,
    )
    .await;
    refused(
        "left_mouse_down",
        json!({"target": coordinate(1, 1)}),
        BROWSER_BUTTON_HOLD_UNSUPPORTED,
    )
    .await;
    refused(
        "left_mouse_up",
        json!({"target": coordinate(1, 1), "tab_id": "t1"}),
        BROWSER_BUTTON_HOLD_UNSUPPORTED,
    )
    .await;
    // The input is read first: a malformed one hears what was wrong with it.
    refused("left_mouse_down", json!({}), "requires `target`").await;
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
    // Null fields are absent ones, nested in a target too.
    check(
        "scroll",
        json!({"scroll_direction": "up", "target": {"type": "coordinate", "x": 2, "y": 3, "ref": null},
               "scroll_amount": null, "tab_id": null}),
        vec![BrowserCall::scroll_at(point(2, 3), "up", 300, None).unwrap()],
    )
    .await;
}

#[tokio::test]
async fn a_read_from_a_ref_and_an_upload_answer_as_their_members() {
    let (result, calls) = one("read_page", json!({"ref": "e6", "depth": 2})).await;
    assert!(!result.is_error(), "{:?}", result.text());
    assert_eq!(calls.len(), 1);
    assert!(result.text().is_some_and(|t| t.contains("Ada")));
    let (result, _) = one(
        "file_upload",
        json!({"target": ref_target("e6"), "document_ids": ["g1"]}),
    )
    .await;
    assert!(!result.is_error(), "{:?}", result.text());
    assert_eq!(result.text(), Some(crate::strings::BROWSER_FILE_UPLOADED));
}

#[tokio::test]
async fn the_upload_is_what_confirm_sees() {
    let log = Log::default();
    let mut toolset = toolset(&log);
    let outcome = turn(
        &mut toolset,
        &[block(
            "toolu_1",
            "file_upload",
            json!({"target": ref_target("e6"), "document_ids": ["g1"]}),
        )],
    )
    .await;
    assert!(!outcome.results[0].is_error());
    let events = take(&log);
    let asked: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::Confirm { .. }))
        .collect();
    assert_eq!(
        asked,
        [&Event::Confirm {
            member: BrowserMember::UploadFile,
            arguments: json!({"grant_id": "g1"}),
            with_state: true,
        }]
    );
    // Asked before anything ran: the click comes after the answer.
    let first_call = events.iter().position(|e| matches!(e, Event::Call(_)));
    let confirm = events
        .iter()
        .position(|e| matches!(e, Event::Confirm { .. }));
    assert!(confirm < first_call, "{events:?}");
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
            json!({"target": ref_target("e6"), "document_ids": ["g1"]}),
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

/// A cancellation the driver reports while it runs a block (a held key, a click whose page is
/// settling) may come after its input was sent: the block is answered as interrupted, never as
/// "not executed".
#[tokio::test]
async fn a_block_the_driver_was_running_when_cancelled_is_interrupted_not_unexecuted() {
    let log = Log::default();
    let fake = FakeBrowser::new(&log).answer(BrowserMember::ClickAt, Err(DriverError::Cancelled));
    let mut toolset = ClaudeBrowserToolset::new(fake, config(&log)).unwrap();
    let outcome = turn(
        &mut toolset,
        &[
            block("toolu_1", "left_click", json!({"target": coordinate(1, 1)})),
            block("toolu_2", "screenshot", json!({})),
        ],
    )
    .await;
    assert_eq!(outcome.fault, Some(BrowserFault::Cancelled));
    assert_eq!(
        outcome.results[0].text(),
        Some(crate::strings::BROWSER_INTERRUPTED)
    );
    assert_eq!(outcome.results[1].text(), Some(BROWSER_NOT_EXECUTED));
}

#[test]
fn refused_focused_input_needs_the_keyboard_members_disabled() {
    // The API's `type` has no target: it always types into the focused element.
    let log = Log::default();
    let build = |declaration: BrowserToolsetDeclaration| {
        ClaudeBrowserToolset::new(
            FakeBrowser::new(&log),
            ClaudeBrowserConfig {
                declaration,
                focused_input: FocusedInput::Refused,
                ..config(&log)
            },
        )
        .map(|_| ())
    };
    let all = config(&log).declaration;
    assert_eq!(
        build(all.clone().disable(Member::Key).disable(Member::HoldKey)),
        Err(ConfigError::FocusedInput(Member::Type))
    );
    assert!(
        build(
            all.disable(Member::Key)
                .disable(Member::HoldKey)
                .disable(Member::Type)
        )
        .is_ok()
    );
}
