//! What the model sees, busy and close, and observation metadata.

use super::*;

#[tokio::test]
async fn reads_keep_text_structure_nothing_and_the_empty_string() {
    let log = Log::default();
    let read = BrowserRead::new(
        "Checkout".into(),
        vec![ReadElement::new(Ref::new("e1").unwrap(), "Pay".into(), Role::Button).unwrap()],
        vec![],
    )
    .unwrap();
    let fake = Fake::new(&log, MemberSet::all())
        .answer(
            BrowserMember::ReadPage,
            Ok(BrowserOutput::Read(Some(ReadResult::Text(String::new())))),
        )
        .answer(BrowserMember::ReadPage, Ok(BrowserOutput::Read(None)))
        .answer(
            BrowserMember::ReadPage,
            Ok(BrowserOutput::Read(Some(ReadResult::Structured(read)))),
        )
        .answer(
            BrowserMember::RunScript,
            Ok(BrowserOutput::Script(String::new())),
        );
    let toolset = everything(&log, fake);
    let args = json!({"filter": "all", "tab_id": null});
    let (out, _) = one(&toolset, "browser_read_page", args.clone()).await;
    assert_eq!(out.body()["result"], json!(""));
    let (out, _) = one(&toolset, "browser_read_page", args.clone()).await;
    assert!(out.body().get("result").is_none());
    let (out, _) = one(&toolset, "browser_read_page", args).await;
    assert_eq!(
        out.body()["result"],
        json!({"version": 1, "text": "Checkout", "elements": [{"ref": "e1", "label": "Pay",
               "role": "button"}], "omitted": []})
    );
    let (out, _) = one(
        &toolset,
        "browser_run_script",
        json!({"tab_id": null, "source": "''", "timeout_ms": 10}),
    )
    .await;
    assert_eq!(out.body()["result"], json!(""));
}

#[tokio::test]
async fn withheld_values_are_stripped_and_reported_as_omitted() {
    let log = Log::default();
    let name = ReadElement::new(Ref::new("e1").unwrap(), "Name".into(), Role::Textbox)
        .unwrap()
        .with_value("Alice".into())
        .unwrap();
    let size = ReadElement::new(Ref::new("e2").unwrap(), "Size".into(), Role::Combobox)
        .unwrap()
        .with_options(vec![ReadOption::new("Small".into(), "s".into()).unwrap()])
        .unwrap();
    let read = BrowserRead::new("Form".into(), vec![name, size], vec![]).unwrap();
    let scoped = BrowserScopedRead::new(
        read.clone(),
        vec![Scope::new(Ref::new("s1").unwrap(), "Form".into()).unwrap()],
    )
    .unwrap();
    let fake = Fake::new(&log, MemberSet::all())
        .answer(
            BrowserMember::Find,
            Ok(BrowserOutput::Read(Some(ReadResult::Structured(read)))),
        )
        .answer(
            BrowserMember::ReadPageScoped,
            Ok(BrowserOutput::ScopedRead(scoped)),
        );
    let toolset = BrowserToolset::new(
        fake,
        BrowserToolsetConfig {
            members: Some(strings(&["find", "read_page_scoped"])),
            read_values: ReadValues::Withheld,
            ..BrowserToolsetConfig::default()
        },
    )
    .unwrap();
    let (out, _) = one(
        &toolset,
        "browser_find",
        json!({"query": "x", "tab_id": null}),
    )
    .await;
    let stripped = json!([{"ref": "e1", "label": "Name", "role": "textbox"},
                          {"ref": "e2", "label": "Size", "role": "combobox"}]);
    assert_eq!(out.body()["result"]["elements"], stripped);
    assert_eq!(out.body()["result"]["omitted"], json!(["value"]));
    assert!(!out.text().contains("Alice"));
    let (out, _) = one(
        &toolset,
        "browser_read_page_scoped",
        json!({"tab_id": null, "root": null, "depth": 2, "filter": "all"}),
    )
    .await;
    assert_eq!(out.body()["result"]["elements"], stripped);
    assert_eq!(
        out.body()["result"]["scopes"],
        json!([{"ref": "s1", "label": "Form"}])
    );
    assert_eq!(out.body()["result"]["omitted"], json!(["value"]));
}

#[tokio::test]
async fn screenshots_come_back_as_native_images_with_the_configured_detail() {
    let log = Log::default();
    let toolset = BrowserToolset::new(
        Fake::new(&log, MemberSet::all()),
        BrowserToolsetConfig {
            members: Some(strings(&["screenshot", "zoom"])),
            image_detail: Some(ImageDetail::High),
            ..BrowserToolsetConfig::default()
        },
    )
    .unwrap();
    for (tool, args) in [
        ("browser_screenshot", json!({"tab_id": null})),
        (
            "browser_zoom",
            json!({"region": [0, 0, 10, 10], "tab_id": null}),
        ),
    ] {
        let (out, _) = one(&toolset, tool, args).await;
        assert!(out.ok());
        assert_eq!(
            out.body(),
            &json!({"ok": true, "state": expected_state(),
                    "image": {"width": 1280, "height": 800, "media_type": "image/png"}})
        );
        let openai = out.to_openai();
        assert_eq!(
            openai["output"][1]["image_url"],
            "data:image/png;base64,iVBORw0KGgo="
        );
        assert_eq!(openai["output"][1]["detail"], "high");
        assert_eq!(out.to_anthropic()["content"][1]["type"], "image");
    }
}

#[tokio::test]
async fn state_is_filtered_and_sent_even_with_list_tabs_disabled() {
    let log = Log::default();
    let mut fake = Fake::new(&log, MemberSet::all());
    let long_title = "é".repeat(600);
    fake.state = BrowserState::new(vec![
        tab(
            "t1",
            &long_title,
            "https://a:b@bank.example/acct?n=1",
            false,
        ),
        tab("t2", "Doc", "file:///home/alice/taxes.pdf", true),
        tab("t3", "Data", "data:text/html,secret", false),
    ])
    .unwrap();
    let toolset = BrowserToolset::new(
        fake,
        BrowserToolsetConfig {
            members: Some(strings(&["get_page_text"])),
            ..BrowserToolsetConfig::default()
        },
    )
    .unwrap();
    let (out, _) = one(&toolset, "browser_get_page_text", json!({"tab_id": null})).await;
    assert_eq!(
        out.state(),
        Some(&json!({"tabs": [
            {"id": "t1", "title": "é".repeat(512), "url": "https://bank.example", "active": false},
            {"id": "t2", "title": "Doc", "url": "file:", "active": true},
            {"id": "t3", "title": "Data", "url": "data:", "active": false},
        ], "observation": {"version": 1, "sequence": 0, "dropped_changes": 0,
                           "title_truncated": true, "changes": []}}))
    );
    assert!(!out.text().contains("alice") && !out.text().contains("acct"));
}

#[tokio::test]
async fn typing_into_the_focused_element_can_be_refused() {
    let log = Log::default();
    let toolset = BrowserToolset::new(
        Fake::new(&log, MemberSet::all()),
        BrowserToolsetConfig {
            members: Some(strings(&["type"])),
            confirm: Some(recording_confirm(&log, vec![])),
            focused_input: FocusedInput::Refused,
            ..BrowserToolsetConfig::default()
        },
    )
    .unwrap();
    let (out, _) = one(
        &toolset,
        "browser_type",
        json!({"text": "hi", "target": null, "tab_id": null}),
    )
    .await;
    assert_eq!(
        out.body(),
        &json!({"ok": false, "error": BROWSER_FOCUS_INPUT_REFUSED, "state": expected_state()})
    );
    assert_eq!(take(&log), [Event::State], "nothing asked or run");
    let (out, _) = one(
        &toolset,
        "browser_type",
        json!({"text": "hi", "target": "e1", "tab_id": null}),
    )
    .await;
    assert!(out.ok());
}

// ---------------------------------------------------------------------------------------------
// Busy and close.

#[tokio::test]
async fn an_overlapping_call_is_refused_as_busy() {
    let log = Log::default();
    let entered = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Notify::new());
    let (entered_cb, release_cb) = (Arc::clone(&entered), Arc::clone(&release));
    let confirm = ConfirmFn(move |_: ConfirmContext, _: CancellationToken| {
        let (entered, release) = (Arc::clone(&entered_cb), Arc::clone(&release_cb));
        async move {
            entered.notify_one();
            release.notified().await;
            Ok(Approval::Approve)
        }
    });
    let toolset = BrowserToolset::new(
        Fake::new(&log, MemberSet::all()),
        BrowserToolsetConfig {
            members: Some(strings(&["click", "screenshot"])),
            confirm: Some(Arc::new(confirm)),
            ..BrowserToolsetConfig::default()
        },
    )
    .unwrap();
    let cancel = CancellationToken::new();
    let first_calls = [call(
        "c1",
        "browser_click",
        json!({"target": "e1", "tab_id": null}),
    )];
    let first = toolset.run_calls(&first_calls, &cancel);
    let second = async {
        entered.notified().await;
        let outcome = toolset
            .run_calls(
                &[call("c2", "browser_screenshot", json!({"tab_id": null}))],
                &cancel,
            )
            .await;
        release.notify_one();
        outcome
    };
    let (first, second) = tokio::join!(first, second);
    assert!(first.outputs[0].ok());
    assert_eq!(
        second.outputs[0].body(),
        &json!({"ok": false, "error": BROWSER_BUSY})
    );
    assert!(second.fault.is_none());
    assert!(!take(&log).contains(&Event::Driver(BrowserMember::Screenshot, Value::Null)));
    // Once the first call is over, the toolset takes calls again.
    let (out, _) = one(&toolset, "browser_screenshot", json!({"tab_id": null})).await;
    assert!(out.ok());
}

#[tokio::test]
async fn close_reports_closed_when_idle_and_refuses_new_calls() {
    let log = Log::default();
    let toolset = everything(&log, Fake::new(&log, MemberSet::all()));
    assert_eq!(toolset.status(), None);
    assert_eq!(toolset.close(), CloseStatus::Closed);
    assert_eq!(toolset.status(), Some(CloseStatus::Closed));
    let outcome = toolset
        .run_calls(
            &[
                call("c1", "browser_screenshot", json!({"tab_id": null})),
                call("c2", "browser_list_tabs", json!({})),
            ],
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.fault, Some(BrowserFault::Closed));
    for out in &outcome.outputs {
        assert_eq!(out.body(), &json!({"ok": false, "error": BROWSER_CLOSED}));
    }
    assert!(take(&log).is_empty());
    // The toolset never closed the driver: its owner gets it back.
    let driver = toolset.into_driver();
    assert_eq!(driver.n_state, 0);
}

#[tokio::test]
async fn close_during_a_call_reports_draining_and_refuses_the_rest_of_the_response() {
    let log = Log::default();
    let handle: Arc<Mutex<Option<CloseHandle>>> = Arc::default();
    let statuses: Arc<Mutex<Vec<CloseStatus>>> = Arc::default();
    let (handle_cb, statuses_cb) = (Arc::clone(&handle), Arc::clone(&statuses));
    let confirm = ConfirmFn(move |_: ConfirmContext, _: CancellationToken| {
        // Closing from inside a callback does not wait for that callback.
        if let Some(handle) = handle_cb.lock().unwrap().as_ref() {
            statuses_cb.lock().unwrap().push(handle.close());
        }
        async { Ok(Approval::Approve) }
    });
    let toolset = BrowserToolset::new(
        Fake::new(&log, MemberSet::all()),
        BrowserToolsetConfig {
            members: Some(strings(&["click", "screenshot"])),
            confirm: Some(Arc::new(confirm)),
            ..BrowserToolsetConfig::default()
        },
    )
    .unwrap();
    *handle.lock().unwrap() = Some(toolset.close_handle());
    let outcome = toolset
        .run_calls(
            &[
                call(
                    "c1",
                    "browser_click",
                    json!({"target": "e1", "tab_id": null}),
                ),
                call("c2", "browser_screenshot", json!({"tab_id": null})),
            ],
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(*statuses.lock().unwrap(), [CloseStatus::Draining]);
    // The call already approved finishes; the next one is refused.
    assert!(outcome.outputs[0].ok());
    assert_eq!(outcome.outputs[1].error(), Some(BROWSER_CLOSED));
    assert_eq!(outcome.fault, Some(BrowserFault::Closed));
    assert_eq!(toolset.status(), Some(CloseStatus::Closed));
    toolset.drained().await;
}

// ---------------------------------------------------------------------------------------------
// Observation metadata.

/// Every state carries what changed since the last result, numbered in one sequence the model
/// can follow; a state for `confirm` shows the changes without using them up; a failed call's
/// answer carries them too.
#[tokio::test]
async fn results_carry_the_changes_since_the_last_result() {
    let log = Log::default();
    let opened = BrowserState::new(vec![
        tab("t1", "Cart", "https://shop.example:8443/pay", false),
        tab("t2", "Blank", "about:blank", false),
        tab("t3", "Popup", "https://ads.example/", true),
    ])
    .unwrap();
    let closed = BrowserState::new(vec![
        tab("t1", "Cart", "https://shop.example:8443/pay", true),
        tab("t2", "Blank", "about:blank", false),
    ])
    .unwrap();
    let fake = Fake::new(&log, MemberSet::all())
        .then_state(opened)
        .then_state(closed)
        .answer(BrowserMember::Hover, Err(DriverError::refused("Gone.")));
    let toolset = everything(&log, fake);
    let (out, _) = one(
        &toolset,
        "browser_click",
        json!({"target": "e1", "tab_id": null}),
    )
    .await;
    assert!(out.ok());
    assert_eq!(
        out.state().unwrap()["observation"],
        json!({"version": 1, "sequence": 3, "dropped_changes": 0, "title_truncated": false,
               "changes": [
            {"type": "navigation", "sequence": 1, "tab_id": "t1"},
            {"type": "tab_opened", "sequence": 2, "tab_id": "t3"},
            {"type": "tab_switched", "sequence": 3, "tab_id": "t3"},
        ]})
    );
    // The pop-up closed during a call that then failed: the failure's answer says so.
    let (out, _) = one(
        &toolset,
        "browser_hover",
        json!({"target": "e1", "tab_id": null}),
    )
    .await;
    assert!(!out.ok());
    assert_eq!(
        out.state().unwrap()["observation"],
        json!({"version": 1, "sequence": 5, "dropped_changes": 3, "title_truncated": false,
               "changes": [
            {"type": "tab_closed", "sequence": 4, "tab_id": "t3"},
            {"type": "tab_switched", "sequence": 5, "tab_id": "t1"},
        ]})
    );
    // Nothing since.
    let (out, _) = one(&toolset, "browser_list_tabs", json!({})).await;
    assert_eq!(out.state().unwrap()["observation"], no_changes(5));
}

/// A field name the model invents comes back one line and cut short.
#[tokio::test]
async fn hostile_field_names_are_echoed_one_line_and_bounded() {
    let log = Log::default();
    let toolset = everything(&log, Fake::new(&log, MemberSet::all()));
    let hostile = format!("f\n\u{202e}{}", "q".repeat(5000));
    for args in [
        json!({"target": "e1", "tab_id": null, hostile.clone(): 1}),
        json!({"tab_id": null, "path": [{"x": 1, "y": 1, hostile.clone(): 1}, {"x": 2, "y": 2}],
               "keys": []}),
    ] {
        let tool = if args.get("path").is_some() {
            "browser_drag_path"
        } else {
            "browser_click"
        };
        let (out, _) = one(&toolset, tool, args).await;
        let error = out.error().unwrap();
        assert!(
            !error.chars().any(crate::errtext::is_line_unsafe),
            "{error}"
        );
        assert!(!error.contains(&"q".repeat(201)), "{error}");
        assert!(!out.text().chars().any(crate::errtext::is_line_unsafe));
    }
}
