//! Call flow: the order of state reads, the URL policy, `confirm` and the action; refusals,
//! failures and faults.

use super::*;

#[tokio::test]
async fn a_disabled_or_unknown_call_is_refused_before_state_or_consent() {
    let log = Log::default();
    let toolset = BrowserToolset::new(
        Fake::new(&log, MemberSet::all()),
        BrowserToolsetConfig {
            members: Some(strings(&["read_page", "click"])),
            confirm: Some(recording_confirm(&log, vec![])),
            confirm_reads: strings(&["read_page"]),
            ..BrowserToolsetConfig::default()
        },
    )
    .unwrap();
    for name in [
        "browser_navigate",
        "browser_list_tabs",
        "browser_teleport",
        "click",
        "computer",
    ] {
        let (out, fault) = one(
            &toolset,
            name,
            json!({"url": "https://a.test", "tab_id": null}),
        )
        .await;
        assert_eq!(
            out.body(),
            &json!({"ok": false, "error": BROWSER_NOT_ENABLED}),
            "{name}"
        );
        assert!(fault.is_none());
    }
    assert!(take(&log).is_empty());
}

#[tokio::test]
async fn bad_arguments_are_refused_before_consent_with_the_current_state() {
    let log = Log::default();
    let toolset = everything(&log, Fake::new(&log, MemberSet::all()));
    let (out, fault) = one(&toolset, "browser_click", json!({"target": "e1"})).await;
    assert!(fault.is_none());
    assert_eq!(
        out.error(),
        Some(
            "`browser_click` requires `tab_id` (a tab id from the browser state, or null for the active tab); send every field, with null where null is allowed"
        )
    );
    // The SDK answers an ordinary call's bad arguments with the current state.
    assert_eq!(out.state(), Some(&expected_state()));
    for text in ["{\"target\": ", "not json", "", "{\"n\": 1e999}"] {
        let (out, _) = toolset
            .call(
                &BrowserToolCall::from_text("call_2", "browser_click", text),
                &CancellationToken::new(),
            )
            .await;
        let error = out.error().unwrap();
        assert!(error.contains("not valid JSON"), "{text}: {error}");
        assert!(!error.contains("takes a JSON object"), "{error}");
        assert!(out.state().is_some());
    }
    // Nothing was asked or run: the state was only read.
    assert!(take(&log).iter().all(|e| *e == Event::State));
}

#[tokio::test]
async fn navigate_asks_the_url_policy_then_confirm_then_acts_then_reads_state() {
    let log = Log::default();
    let toolset = everything(&log, Fake::new(&log, MemberSet::all()));
    let (out, fault) = one(
        &toolset,
        "browser_navigate",
        json!({"url": "shop.example/cart", "tab_id": null}),
    )
    .await;
    assert!(fault.is_none());
    assert_eq!(
        take(&log),
        [
            Event::State,
            Event::UrlPolicy("https://shop.example/cart".into()),
            Event::Confirm {
                member: BrowserMember::Navigate,
                phase: ConfirmPhase::BeforeAction,
                with_state: true
            },
            Event::Driver(BrowserMember::Navigate, json!("https://shop.example/cart")),
            Event::State,
        ]
    );
    assert_eq!(out.body(), &json!({"ok": true, "state": expected_state()}));
}

#[tokio::test]
async fn a_denied_url_is_never_confirmed_or_opened() {
    let log = Log::default();
    let toolset = everything(&log, Fake::new(&log, MemberSet::all()));
    for (n_refused, url) in ["https://shop.example.evil.test/", "https://broken.test/"]
        .into_iter()
        .enumerate()
    {
        let n_refused = n_refused as u64;
        let (out, fault) = one(
            &toolset,
            "browser_navigate",
            json!({"url": url, "tab_id": null}),
        )
        .await;
        assert!(fault.is_none());
        // The refusal is in the observation, for the tab the navigation was meant for.
        let mut state = expected_state();
        state["observation"] = json!({"version": 1, "sequence": n_refused + 1,
            "dropped_changes": n_refused, "title_truncated": false, "changes": [
                {"type": "navigation_refused", "sequence": n_refused + 1, "tab_id": "t1",
                 "reason": "policy"}]});
        assert_eq!(
            out.body(),
            &json!({"ok": false, "error": BROWSER_URL_DENIED, "state": state})
        );
        assert_eq!(
            take(&log),
            [Event::State, Event::UrlPolicy(url.into())],
            "{url}"
        );
    }
    let (out, _) = one(
        &toolset,
        "browser_new_tab",
        json!({"url": "https://x.evil.test"}),
    )
    .await;
    assert_eq!(out.error(), Some(BROWSER_URL_DENIED));
    assert!(
        !take(&log)
            .iter()
            .any(|e| matches!(e, Event::Driver(..) | Event::Confirm { .. }))
    );
}

#[tokio::test]
async fn a_blank_new_tab_skips_the_url_policy_but_still_needs_confirm() {
    let log = Log::default();
    let toolset = everything(&log, Fake::new(&log, MemberSet::all()));
    let (out, _) = one(&toolset, "browser_new_tab", json!({"url": null})).await;
    assert!(out.ok());
    assert_eq!(
        take(&log),
        [
            Event::State,
            Event::Confirm {
                member: BrowserMember::NewTab,
                phase: ConfirmPhase::BeforeAction,
                with_state: true
            },
            Event::Driver(BrowserMember::NewTab, json!(null)),
            Event::State,
        ]
    );
}

#[tokio::test]
async fn only_an_explicit_approval_lets_an_action_run() {
    let log = Log::default();
    let confirm = recording_confirm(&log, vec![Ok(Approval::Deny), Err("the terminal closed")]);
    let toolset = BrowserToolset::new(
        Fake::new(&log, MemberSet::all()),
        BrowserToolsetConfig {
            members: Some(strings(&["click"])),
            confirm: Some(confirm),
            ..BrowserToolsetConfig::default()
        },
    )
    .unwrap();
    for _ in 0..2 {
        let (out, fault) = one(
            &toolset,
            "browser_click",
            json!({"target": "e1", "tab_id": null}),
        )
        .await;
        assert!(fault.is_none());
        assert_eq!(
            out.body(),
            &json!({"ok": false, "error": BROWSER_ACTION_DENIED, "state": expected_state()})
        );
        assert_eq!(
            take(&log),
            [
                Event::State,
                Event::Confirm {
                    member: BrowserMember::Click,
                    phase: ConfirmPhase::BeforeAction,
                    with_state: true
                }
            ]
        );
    }
    // The script is exhausted: the next answer approves.
    let (out, _) = one(
        &toolset,
        "browser_click",
        json!({"target": "e1", "tab_id": null}),
    )
    .await;
    assert!(out.ok());
    assert_eq!(
        take(&log)[2],
        Event::Driver(BrowserMember::Click, json!("e1"))
    );
}

#[tokio::test]
async fn callbacks_get_an_independent_copy_they_cannot_use_to_change_the_action() {
    let log = Log::default();
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen_by_confirm = Arc::clone(&seen);
    let confirm = ConfirmFn(move |mut context: ConfirmContext, _: CancellationToken| {
        seen_by_confirm.lock().unwrap().push(context.to_json());
        // Tampering with the copy changes nothing.
        context.arguments["url"] = json!("https://evil.test/");
        context.member = BrowserMember::CloseTab;
        async { Ok(Approval::Approve) }
    });
    let seen_by_policy = Arc::clone(&seen);
    let policy = UrlPolicyFn(
        move |mut context: ConfirmContext, url: url::Url, _: CancellationToken| {
            let mut entry = context.to_json();
            entry["url"] = json!(url.as_str());
            seen_by_policy.lock().unwrap().push(entry);
            context.arguments = json!({});
            async { Ok(UrlVerdict::Allow) }
        },
    );
    let toolset = BrowserToolset::new(
        Fake::new(&log, MemberSet::all()),
        BrowserToolsetConfig {
            members: Some(strings(&["navigate"])),
            confirm: Some(Arc::new(confirm)),
            url_policy: Some(Arc::new(policy)),
            ..BrowserToolsetConfig::default()
        },
    )
    .unwrap();
    let (out, _) = toolset
        .call(
            &call(
                "call_7",
                "browser_navigate",
                json!({"url": "https://shop.example/a", "tab_id": "t1"}),
            ),
            &CancellationToken::new(),
        )
        .await;
    assert!(out.ok());
    let context = json!({"member": "navigate",
        "arguments": {"url": "https://shop.example/a", "tab_id": "t1"},
        "state": expected_state(), "call_id": "call_7"});
    let mut policy_context = context.clone();
    policy_context["url"] = json!("https://shop.example/a");
    assert_eq!(*seen.lock().unwrap(), [policy_context, context]);
    assert!(take(&log).contains(&Event::Driver(
        BrowserMember::Navigate,
        json!("https://shop.example/a")
    )));
}

#[tokio::test]
async fn confirm_reads_asks_before_anything_is_read_and_a_refusal_has_no_state() {
    let log = Log::default();
    let confirm = recording_confirm(
        &log,
        vec![Ok(Approval::Approve), Ok(Approval::Deny), Err("boom")],
    );
    let toolset = BrowserToolset::new(
        Fake::new(&log, MemberSet::all()).answer(
            BrowserMember::ReadPage,
            Ok(BrowserOutput::Read(Some(ReadResult::Text("Hello".into())))),
        ),
        BrowserToolsetConfig {
            members: Some(strings(&["read_page", "list_tabs", "screenshot"])),
            confirm: Some(confirm),
            confirm_reads: strings(&["read_page", "list_tabs"]),
            ..BrowserToolsetConfig::default()
        },
    )
    .unwrap();
    let before_read = |member| Event::Confirm {
        member,
        phase: ConfirmPhase::BeforeRead,
        with_state: false,
    };
    let (out, _) = one(
        &toolset,
        "browser_read_page",
        json!({"filter": "all", "tab_id": null}),
    )
    .await;
    assert_eq!(
        out.body(),
        &json!({"ok": true, "result": "Hello", "state": expected_state()})
    );
    assert_eq!(
        take(&log),
        [
            before_read(BrowserMember::ReadPage),
            Event::Driver(BrowserMember::ReadPage, json!("all")),
            Event::State
        ]
    );
    for member in ["read_page", "list_tabs"] {
        let args = if member == "list_tabs" {
            json!({})
        } else {
            json!({"filter": "all", "tab_id": null})
        };
        let (out, fault) = one(&toolset, &format!("browser_{member}"), args).await;
        assert!(fault.is_none());
        assert_eq!(
            out.body(),
            &json!({"ok": false, "error": BROWSER_READ_REFUSED})
        );
        assert_eq!(
            take(&log),
            [before_read(BrowserMember::from_name(member).unwrap())]
        );
    }
    // A read not under confirm_reads reads without asking.
    let (out, _) = one(&toolset, "browser_screenshot", json!({"tab_id": null})).await;
    assert!(out.ok());
    assert_eq!(
        take(&log),
        [
            Event::Driver(BrowserMember::Screenshot, Value::Null),
            Event::State
        ]
    );
}

#[tokio::test]
async fn diagnostics_under_confirm_reads_are_confirmed_once_before_reading() {
    let log = Log::default();
    let toolset = BrowserToolset::new(
        Fake::new(&log, MemberSet::all()),
        BrowserToolsetConfig {
            members: Some(strings(&["read_diagnostics"])),
            confirm: Some(recording_confirm(&log, vec![])),
            confirm_reads: strings(&["read_diagnostics"]),
            ..BrowserToolsetConfig::default()
        },
    )
    .unwrap();
    let (out, _) = one(
        &toolset,
        "browser_read_diagnostics",
        json!({"tab_id": null, "source": "console", "limit": 5}),
    )
    .await;
    assert_eq!(
        out.body()["result"],
        json!({"version": 1, "text": "no messages", "elements": [], "omitted": []})
    );
    assert_eq!(
        take(&log),
        [
            Event::Confirm {
                member: BrowserMember::ReadDiagnostics,
                phase: ConfirmPhase::BeforeRead,
                with_state: false
            },
            Event::Driver(BrowserMember::ReadDiagnostics, json!("console")),
            Event::State
        ]
    );
}

#[tokio::test]
async fn reads_without_consent_read_no_prior_state() {
    let log = Log::default();
    let toolset = everything(&log, Fake::new(&log, MemberSet::all()));
    let (out, _) = one(
        &toolset,
        "browser_find",
        json!({"query": "Pay", "tab_id": null}),
    )
    .await;
    assert_eq!(out.body(), &json!({"ok": true, "state": expected_state()}));
    assert_eq!(
        take(&log),
        [
            Event::Driver(BrowserMember::Find, json!("Pay")),
            Event::State
        ]
    );
    // list_tabs never reaches the driver: it is the state.
    let (out, _) = one(&toolset, "browser_list_tabs", json!({})).await;
    assert_eq!(out.body(), &json!({"ok": true, "state": expected_state()}));
    assert_eq!(take(&log), [Event::State]);
}

#[tokio::test]
async fn failed_calls_still_carry_the_state() {
    let log = Log::default();
    let fake = Fake::new(&log, MemberSet::all())
        .answer(
            BrowserMember::Click,
            Err(DriverError::refused(
                "The ref e9 is stale: read the page again.",
            )),
        )
        .answer(
            BrowserMember::Click,
            Err(DriverError::Failed(
                "CDP -32000 at /home/alice/secret".into(),
            )),
        )
        .answer(
            BrowserMember::Click,
            Err(DriverError::Unsupported(BrowserMember::Click)),
        );
    let toolset = everything(&log, fake);
    let mut errors = vec![];
    for _ in 0..3 {
        let (out, fault) = one(
            &toolset,
            "browser_click",
            json!({"target": "e9", "tab_id": null}),
        )
        .await;
        assert!(fault.is_none());
        assert!(!out.ok());
        assert_eq!(out.state(), Some(&expected_state()));
        assert!(!out.text().contains("alice") && !out.text().contains("-32000"));
        assert_eq!(take(&log).last(), Some(&Event::State));
        errors.push(out.error().unwrap().to_owned());
    }
    assert_eq!(
        errors,
        [
            "The ref e9 is stale: read the page again.",
            BROWSER_FAILED,
            BROWSER_UNSUPPORTED
        ]
    );
}

#[tokio::test]
async fn after_a_failure_the_rest_of_the_response_is_skipped() {
    let log = Log::default();
    let fake = Fake::new(&log, MemberSet::all()).answer(
        BrowserMember::Click,
        Err(DriverError::refused("Not clickable.")),
    );
    let toolset = everything(&log, fake);
    let calls = [
        call(
            "c1",
            "browser_scroll",
            json!({"direction": "down", "amount": 100, "tab_id": null}),
        ),
        call(
            "c2",
            "browser_click",
            json!({"target": "e1", "tab_id": null}),
        ),
        call(
            "c3",
            "browser_type",
            json!({"text": "x", "target": "e2", "tab_id": null}),
        ),
        call("c4", "browser_screenshot", json!({"tab_id": null})),
    ];
    let outcome = toolset.run_calls(&calls, &CancellationToken::new()).await;
    assert!(outcome.fault.is_none());
    let ids: Vec<&str> = outcome.outputs.iter().map(|o| o.call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
    assert!(outcome.outputs[0].ok());
    assert_eq!(outcome.outputs[1].error(), Some("Not clickable."));
    // Skipped calls carry the current state, as the SDK's do.
    for skipped in &outcome.outputs[2..] {
        assert_eq!(
            skipped.body(),
            &json!({"ok": false, "error": BROWSER_CALL_SKIPPED, "state": expected_state()})
        );
    }
    let driver_calls: Vec<BrowserMember> = take(&log)
        .into_iter()
        .filter_map(|e| match e {
            Event::Driver(m, _) => Some(m),
            _ => None,
        })
        .collect();
    assert_eq!(driver_calls, [BrowserMember::Scroll, BrowserMember::Click]);
    // A refused argument or a denial counts as a failure too.
    let calls = [
        call("c1", "browser_click", json!({"target": "", "tab_id": null})),
        call("c2", "browser_screenshot", json!({"tab_id": null})),
    ];
    let outcome = toolset.run_calls(&calls, &CancellationToken::new()).await;
    assert_eq!(outcome.outputs[1].error(), Some(BROWSER_CALL_SKIPPED));
    assert!(take(&log).iter().all(|e| *e == Event::State));
}

#[tokio::test]
async fn a_file_outcome_other_than_completed_is_not_ok_and_skips_the_rest() {
    let log = Log::default();
    let unknown = FileOutcome::new(
        FileStatus::Unknown,
        FileEffect::Unknown,
        FileCleanup::Pending,
    )
    .unwrap();
    let fake = Fake::new(&log, MemberSet::all())
        .answer(
            BrowserMember::UploadFile,
            Ok(BrowserOutput::File(completed())),
        )
        .answer(BrowserMember::UploadFile, Ok(BrowserOutput::File(unknown)));
    let toolset = everything(&log, fake);
    let calls = [
        call("c1", "browser_upload_file", json!({"grant_id": "g1"})),
        call("c2", "browser_upload_file", json!({"grant_id": "g2"})),
        call(
            "c3",
            "browser_click",
            json!({"target": "e1", "tab_id": null}),
        ),
    ];
    let outcome = toolset.run_calls(&calls, &CancellationToken::new()).await;
    assert!(outcome.fault.is_none());
    assert_eq!(
        outcome.outputs[0].body(),
        &json!({"ok": true, "result": {"version": 1, "status": "completed", "effect": "completed",
                "cleanup": "completed"}, "state": expected_state()})
    );
    assert_eq!(
        outcome.outputs[1].body(),
        &json!({"ok": false, "result": {"version": 1, "status": "unknown", "effect": "unknown",
                "cleanup": "pending"}, "state": expected_state()})
    );
    assert_eq!(outcome.outputs[2].error(), Some(BROWSER_CALL_SKIPPED));
    assert!(!take(&log).contains(&Event::Driver(BrowserMember::Click, json!("e1"))));
}

#[tokio::test]
async fn a_failed_state_read_stops_the_run() {
    // After the action.
    let log = Log::default();
    let fake =
        Fake::new(&log, MemberSet::all()).fail_state(0, || DriverError::Failed("timeout".into()));
    let toolset = everything(&log, fake);
    let calls = [
        call(
            "c1",
            "browser_read_page",
            json!({"filter": "all", "tab_id": null}),
        ),
        call("c2", "browser_screenshot", json!({"tab_id": null})),
    ];
    let outcome = toolset.run_calls(&calls, &CancellationToken::new()).await;
    assert_eq!(
        outcome.fault,
        Some(BrowserFault::StateUnavailable(
            "browser operation failed: timeout".into()
        ))
    );
    assert_eq!(
        outcome.outputs[0].body(),
        &json!({"ok": false, "error": BROWSER_STATE_UNAVAILABLE})
    );
    assert_eq!(outcome.outputs[1].error(), Some(BROWSER_CALL_SKIPPED));
    assert_eq!(
        take(&log),
        [
            Event::Driver(BrowserMember::ReadPage, json!("all")),
            Event::State
        ]
    );
    // Before the action (the context for confirm): nothing is asked, nothing runs.
    let fake = Fake::new(&log, MemberSet::all())
        .fail_state(0, || DriverError::Gone("socket closed".into()));
    let toolset = everything(&log, fake);
    let (out, fault) = one(
        &toolset,
        "browser_click",
        json!({"target": "e1", "tab_id": null}),
    )
    .await;
    assert_eq!(fault, Some(BrowserFault::Gone("socket closed".into())));
    assert_eq!(out.error(), Some(BROWSER_STATE_UNAVAILABLE));
    assert_eq!(take(&log), [Event::State]);
}

#[tokio::test]
async fn a_vanished_browser_or_an_invalid_result_stops_the_run() {
    let log = Log::default();
    let with_elements = BrowserRead::new(
        "text".into(),
        vec![ReadElement::new(Ref::new("e1").unwrap(), "Pay".into(), Role::Button).unwrap()],
        vec![],
    )
    .unwrap();
    let empty_image = EncodedImage {
        base64: String::new(),
        ..png()
    };
    type Case = (
        BrowserMember,
        Result<BrowserOutput, DriverError>,
        Value,
        fn(&BrowserFault) -> bool,
    );
    let cases: Vec<Case> = vec![
        (
            BrowserMember::Click,
            Err(DriverError::Gone("Chromium exited".into())),
            json!({"target": "e1", "tab_id": null}),
            |f| matches!(f, BrowserFault::Gone(_)),
        ),
        (
            BrowserMember::GetPageText,
            Ok(BrowserOutput::Read(Some(ReadResult::Structured(
                with_elements.clone(),
            )))),
            json!({"tab_id": null}),
            |f| {
                matches!(
                    f,
                    BrowserFault::InvalidResult {
                        member: BrowserMember::GetPageText,
                        ..
                    }
                )
            },
        ),
        (
            BrowserMember::ReadDiagnostics,
            Ok(BrowserOutput::Read(Some(ReadResult::Structured(
                with_elements,
            )))),
            json!({"tab_id": null, "source": "network", "limit": 3}),
            |f| {
                matches!(
                    f,
                    BrowserFault::InvalidResult {
                        member: BrowserMember::ReadDiagnostics,
                        ..
                    }
                )
            },
        ),
        (
            BrowserMember::Screenshot,
            Ok(BrowserOutput::Image(empty_image)),
            json!({"tab_id": null}),
            |f| {
                matches!(
                    f,
                    BrowserFault::InvalidResult {
                        member: BrowserMember::Screenshot,
                        ..
                    }
                )
            },
        ),
        (
            BrowserMember::Click,
            Err(DriverError::Cancelled),
            json!({"target": "e1", "tab_id": null}),
            |f| *f == BrowserFault::Cancelled,
        ),
    ];
    for (member, answer, args, want) in cases {
        let toolset = everything(
            &log,
            Fake::new(&log, MemberSet::all()).answer(member, answer),
        );
        let calls = [
            call("c1", &format!("browser_{member}"), args),
            call("c2", "browser_list_tabs", json!({})),
        ];
        let outcome = toolset.run_calls(&calls, &CancellationToken::new()).await;
        let fault = outcome.fault.expect("a fault");
        assert!(want(&fault), "{member}: {fault:?}");
        assert!(outcome.outputs[0].state().is_none(), "{member}");
        assert!(!outcome.outputs[0].ok());
        if fault == BrowserFault::Cancelled {
            // The driver was running the click: not "not executed".
            assert_eq!(outcome.outputs[0].error(), Some(BROWSER_INTERRUPTED));
        }
        assert_eq!(outcome.outputs[1].error(), Some(BROWSER_CALL_SKIPPED));
        // No state read after the fault.
        assert_ne!(take(&log).last(), Some(&Event::State), "{member}");
    }
}

#[tokio::test]
async fn a_cancelled_run_starts_nothing() {
    let log = Log::default();
    let toolset = everything(&log, Fake::new(&log, MemberSet::all()));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let outcome = toolset
        .run_calls(
            &[call("c1", "browser_screenshot", json!({"tab_id": null}))],
            &cancel,
        )
        .await;
    assert_eq!(outcome.fault, Some(BrowserFault::Cancelled));
    assert_eq!(outcome.outputs[0].error(), Some(BROWSER_CANCELLED));
    assert!(take(&log).is_empty());
}
