//! Results, `browser_state` blocks, batches and consent.

use super::*;

#[tokio::test]
async fn results_are_short_acknowledgements_reads_or_images() {
    let (result, _) = one("left_click", json!({"target": coordinate(1, 1)})).await;
    assert_eq!(result.text(), Some("Clicked."));
    let (result, _) = one(
        "scroll",
        json!({"scroll_direction": "left", "target": coordinate(1, 1), "scroll_amount": 1}),
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
    let outcome = turn(&mut toolset, &[block("toolu_1", "new_tab", json!({}))]).await;
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
    assert_eq!(active[0]["url"], "about:blank");
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
        block("toolu_2", "type", json!({"text": "hi"})),
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
        ("navigate", json!({"url": "evil.test", "tab_id": "t2"})),
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
            json!({"scroll_direction": "up", "target": coordinate(1, 1)}),
        ),
        ("mouse_move", json!({"target": coordinate(1, 1)})),
        ("scroll_to", json!({"target": ref_target("e6")})),
        ("switch_tab", json!({"tab_id": "t2"})),
        ("close_tab", json!({"tab_id": "t2"})),
        (
            "form_input",
            json!({"target": {"type": "ref", "ref": "e1"}, "value": "x"}),
        ),
        ("read_console", json!({})),
        ("javascript_exec", json!({"text": "1"})),
        (
            "file_upload",
            json!({"target": ref_target("e6"), "document_ids": ["g"]}),
        ),
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
