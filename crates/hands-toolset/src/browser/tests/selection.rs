//! Selection: which members a toolset has, its declarations, and what construction refuses.

use super::*;

#[test]
fn defaults_are_the_eighteen_the_driver_implements() {
    let log = Log::default();
    let toolset = BrowserToolset::new(Fake::new(&log, MemberSet::all()), config(&log)).unwrap();
    assert_eq!(toolset.enabled().len(), 18);
    assert_eq!(
        toolset.enabled().iter().collect::<Vec<_>>(),
        BrowserMember::defaults().collect::<Vec<_>>()
    );
    // A driver implementing only read_page gets read_page and the derived list_tabs, and needs
    // no callbacks at all.
    let only_read: MemberSet = [BrowserMember::ReadPage].into_iter().collect();
    let toolset =
        BrowserToolset::new(Fake::new(&log, only_read), BrowserToolsetConfig::default()).unwrap();
    assert_eq!(names(toolset.enabled()), ["read_page", "list_tabs"]);
    // list_tabs is never required of the driver.
    let toolset = BrowserToolset::new(
        Fake::new(&log, MemberSet::EMPTY),
        BrowserToolsetConfig {
            members: Some(strings(&["list_tabs"])),
            ..BrowserToolsetConfig::default()
        },
    )
    .unwrap();
    assert_eq!(names(toolset.enabled()), ["list_tabs"]);
    assert!(take(&log).is_empty(), "construction reads nothing");
}

#[test]
fn members_lists_keep_the_tool_order_and_refuse_bad_names() {
    let implemented = MemberSet::all();
    let select = |members: &[&str]| select_members(Some(&strings(members)), None, implemented);
    assert_eq!(
        names(select(&["screenshot", "click_at", "read_page"]).unwrap()),
        ["read_page", "screenshot", "click_at"]
    );
    assert_eq!(select(&[]).unwrap(), MemberSet::EMPTY);
    assert_eq!(
        select(&["read_page", "teleport"]),
        Err(ConfigError::UnknownMember {
            list: "members",
            name: "teleport".into()
        })
    );
    assert_eq!(
        select(&["read_page", "read_page"]),
        Err(ConfigError::Duplicate {
            list: "members",
            name: "read_page".into()
        })
    );
    let no_zoom = {
        let mut set = MemberSet::all();
        set.remove(BrowserMember::Zoom);
        set
    };
    assert_eq!(
        select_members(Some(&strings(&["zoom"])), None, no_zoom),
        Err(ConfigError::Unimplemented(BrowserMember::Zoom))
    );
    // An empty list exposes nothing: no declarations, every call refused.
    let log = Log::default();
    let toolset = BrowserToolset::new(
        Fake::new(&log, implemented),
        BrowserToolsetConfig {
            members: Some(vec![]),
            ..BrowserToolsetConfig::default()
        },
    )
    .unwrap();
    assert!(toolset.declarations().is_empty());
    assert!(!toolset.owns("browser_read_page"));
}

#[test]
fn additional_members_extend_the_defaults_and_never_combine_with_members() {
    let implemented = MemberSet::all();
    let extra = strings(&["click_at", "read_diagnostics"]);
    let set = select_members(None, Some(&extra), implemented).unwrap();
    assert_eq!(set.len(), 20);
    assert!(set.contains(BrowserMember::ClickAt) && set.contains(BrowserMember::Navigate));
    assert_eq!(
        select_members(Some(&strings(&["read_page"])), Some(&extra), implemented),
        Err(ConfigError::BothLists)
    );
    assert_eq!(
        select_members(Some(&[]), Some(&[]), implemented),
        Err(ConfigError::BothLists)
    );
    let mut no_drag = MemberSet::all();
    no_drag.remove(BrowserMember::DragPath);
    assert_eq!(
        select_members(None, Some(&strings(&["drag_path"])), no_drag),
        Err(ConfigError::Unimplemented(BrowserMember::DragPath))
    );
    assert!(matches!(
        select_members(None, Some(&strings(&["hover_at", "hover_at"])), implemented),
        Err(ConfigError::Duplicate { .. })
    ));
    // Implementing the opt-in members is not enough to expose them.
    assert!(
        !select_members(None, None, implemented)
            .unwrap()
            .contains(BrowserMember::RunScript)
    );
}

#[test]
fn construction_requires_confirm_and_url_policy_where_the_spec_does() {
    let log = Log::default();
    let build = |config: BrowserToolsetConfig| {
        BrowserToolset::new(Fake::new(&log, MemberSet::all()), config).map(|t| names(t.enabled()))
    };
    let confirm = || Some(recording_confirm(&log, vec![]));
    let members = |m: &[&str]| Some(strings(m));
    assert_eq!(
        build(BrowserToolsetConfig::default()),
        Err(ConfigError::MissingConfirm(BrowserMember::Navigate))
    );
    assert_eq!(
        build(BrowserToolsetConfig {
            confirm: confirm(),
            ..BrowserToolsetConfig::default()
        }),
        Err(ConfigError::MissingUrlPolicy(BrowserMember::Navigate))
    );
    assert_eq!(
        build(BrowserToolsetConfig {
            members: members(&["new_tab"]),
            confirm: confirm(),
            ..BrowserToolsetConfig::default()
        }),
        Err(ConfigError::MissingUrlPolicy(BrowserMember::NewTab))
    );
    for member in [
        "click",
        "switch_tab",
        "hover_at",
        "set_checked",
        "read_diagnostics",
        "run_script",
        "upload_file",
    ] {
        assert_eq!(
            build(BrowserToolsetConfig {
                members: members(&["read_page", member]),
                ..BrowserToolsetConfig::default()
            }),
            Err(ConfigError::MissingConfirm(
                BrowserMember::from_name(member).unwrap()
            )),
            "{member}"
        );
    }
    // Reads need nothing, unless put under confirm_reads.
    assert!(
        build(BrowserToolsetConfig {
            members: members(&["read_page", "screenshot", "read_page_scoped", "wait_for"]),
            ..BrowserToolsetConfig::default()
        })
        .is_ok()
    );
    assert_eq!(
        build(BrowserToolsetConfig {
            members: members(&["read_page"]),
            confirm_reads: strings(&["read_page"]),
            ..BrowserToolsetConfig::default()
        }),
        Err(ConfigError::MissingConfirm(BrowserMember::ReadPage))
    );
    assert_eq!(
        build(BrowserToolsetConfig {
            members: members(&["read_page", "click"]),
            confirm: confirm(),
            confirm_reads: strings(&["click"]),
            ..BrowserToolsetConfig::default()
        }),
        Err(ConfigError::NotARead(BrowserMember::Click))
    );
    // A read that is not selected: refused, as the SDK refuses it (D10).
    assert_eq!(
        build(BrowserToolsetConfig {
            members: members(&["read_page"]),
            confirm: confirm(),
            confirm_reads: strings(&["screenshot"]),
            ..BrowserToolsetConfig::default()
        }),
        Err(ConfigError::ReadNotSelected(BrowserMember::Screenshot))
    );
    assert!(matches!(
        build(BrowserToolsetConfig {
            members: members(&["read_page"]),
            confirm_reads: strings(&["reed_page"]),
            ..BrowserToolsetConfig::default()
        }),
        Err(ConfigError::UnknownMember {
            list: "confirm_reads",
            ..
        })
    ));
    // A read under confirm_reads that is not enabled is refused, confirm or not.
    assert_eq!(
        build(BrowserToolsetConfig {
            members: members(&["read_page"]),
            confirm_reads: strings(&["screenshot"]),
            ..BrowserToolsetConfig::default()
        }),
        Err(ConfigError::ReadNotSelected(BrowserMember::Screenshot))
    );
    assert_eq!(
        build(BrowserToolsetConfig {
            members: members(&["key", "type"]),
            confirm: confirm(),
            focused_input: FocusedInput::Refused,
            ..BrowserToolsetConfig::default()
        }),
        Err(ConfigError::KeyWithoutFocus)
    );
    assert!(take(&log).is_empty(), "construction asks nobody");
}

#[test]
fn declarations_follow_the_tool_order() {
    let log = Log::default();
    let toolset = everything(&log, Fake::new(&log, MemberSet::all()));
    let openai = toolset.openai_tools();
    let names: Vec<&str> = openai.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let want: Vec<String> = BrowserMember::ALL
        .iter()
        .map(|m| format!("browser_{m}"))
        .collect();
    assert_eq!(names, want);
    assert!(
        openai
            .iter()
            .all(|t| t["strict"] == json!(true) && t["type"] == "function")
    );
    let anthropic = toolset.anthropic_tools();
    assert_eq!(anthropic.len(), 28);
    assert_eq!(anthropic[4]["name"], "browser_click");
    assert_eq!(
        anthropic[4]["input_schema"]["additionalProperties"],
        json!(false)
    );
    // Ordinary functions may start with browser_ but not shadow an enabled tool.
    assert_eq!(toolset.name_clash(["browser_helper", "lookup"]), None);
    assert_eq!(
        toolset.name_clash(["lookup", "browser_click"]),
        Some("browser_click")
    );
}
