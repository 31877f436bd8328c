//! The toolset's call flow against a scripted driver that records every call and state read, and
//! callbacks that record when they were asked: ordering, refusals, failures, lifecycle.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use hands_core::browser::args::{
    CssPoint, CssRegion, DiagnosticsSource, GrantId, KeyPress, PageUrl, PointerButton, ReadFilter,
    WaitText,
};
use hands_core::browser::driver::{FileCleanup, FileEffect, FileStatus};
use hands_core::browser::read::{ReadOption, Ref, Role, Scope};
use hands_core::browser::{BrowserState, ReadElement, TabId, TabInfo};
use hands_core::geometry::Size;
use hands_core::image::MediaType;
use hands_core::input::{Key, ModifierSet, ScrollDirection};
use serde_json::json;

use super::*;

/// What the fake driver and the callbacks saw, in order.
#[derive(Debug, Clone, PartialEq)]
enum Event {
    /// `state()` was read.
    State,
    /// A member ran on the driver, with its main argument.
    Driver(BrowserMember, Value),
    /// `confirm` was asked.
    Confirm {
        member: BrowserMember,
        phase: ConfirmPhase,
        with_state: bool,
    },
    /// The URL policy was asked about this URL.
    UrlPolicy(String),
}

type Log = Arc<Mutex<Vec<Event>>>;

fn take(log: &Log) -> Vec<Event> {
    std::mem::take(&mut *log.lock().unwrap())
}

/// A scripted driver: answers each member from a queue (default: an empty acknowledgement),
/// fails state reads when told, and records everything.
struct Fake {
    log: Log,
    implemented: MemberSet,
    state: BrowserState,
    answers: HashMap<BrowserMember, VecDeque<Result<BrowserOutput, DriverError>>>,
    /// The 0-based indexes of state reads that fail, with how.
    state_failures: HashMap<usize, fn() -> DriverError>,
    n_state: usize,
    /// The state after each driver call, in order (a page that opens a tab, a navigation).
    after_calls: VecDeque<BrowserState>,
}

fn tab(id: &str, title: &str, url: &str, active: bool) -> TabInfo {
    TabInfo {
        id: TabId::new(id).unwrap(),
        title: title.into(),
        url: url.into(),
        active,
    }
}

impl Fake {
    fn new(log: &Log, implemented: MemberSet) -> Fake {
        Fake {
            log: Arc::clone(log),
            implemented,
            state: BrowserState::new(vec![
                tab(
                    "t1",
                    "Cart",
                    "https://user:pw@shop.example:8443/cart?id=7#pay",
                    true,
                ),
                tab("t2", "Blank", "about:blank", false),
            ])
            .unwrap(),
            answers: HashMap::new(),
            state_failures: HashMap::new(),
            n_state: 0,
            after_calls: VecDeque::new(),
        }
    }

    fn then_state(mut self, state: BrowserState) -> Fake {
        self.after_calls.push_back(state);
        self
    }

    fn answer(mut self, member: BrowserMember, answer: Result<BrowserOutput, DriverError>) -> Fake {
        self.answers.entry(member).or_default().push_back(answer);
        self
    }

    fn fail_state(mut self, index: usize, error: fn() -> DriverError) -> Fake {
        self.state_failures.insert(index, error);
        self
    }

    fn run(&mut self, member: BrowserMember, arg: Value) -> Result<BrowserOutput, DriverError> {
        self.log.lock().unwrap().push(Event::Driver(member, arg));
        if let Some(state) = self.after_calls.pop_front() {
            self.state = state;
        }
        self.answers
            .get_mut(&member)
            .and_then(VecDeque::pop_front)
            .unwrap_or(Ok(BrowserOutput::Text(None)))
    }

    fn text(&mut self, member: BrowserMember, arg: Value) -> Result<Option<String>, DriverError> {
        match self.run(member, arg)? {
            BrowserOutput::Text(text) => Ok(text),
            other => panic!("scripted {other:?} for {member}"),
        }
    }

    fn read(
        &mut self,
        member: BrowserMember,
        arg: Value,
    ) -> Result<Option<ReadResult>, DriverError> {
        match self.run(member, arg)? {
            BrowserOutput::Read(read) => Ok(read),
            BrowserOutput::Text(None) => Ok(None),
            other => panic!("scripted {other:?} for {member}"),
        }
    }

    fn image(&mut self, member: BrowserMember) -> Result<EncodedImage, DriverError> {
        match self.run(member, Value::Null)? {
            BrowserOutput::Image(image) => Ok(image),
            BrowserOutput::Text(None) => Ok(png()),
            other => panic!("scripted {other:?} for {member}"),
        }
    }

    fn file(&mut self, member: BrowserMember, grant: &GrantId) -> Result<FileOutcome, DriverError> {
        match self.run(member, json!(grant.as_str()))? {
            BrowserOutput::File(outcome) => Ok(outcome),
            BrowserOutput::Text(None) => Ok(completed()),
            other => panic!("scripted {other:?} for {member}"),
        }
    }
}

fn png() -> EncodedImage {
    EncodedImage {
        size: Size::new(1280, 800).unwrap(),
        media_type: MediaType::Png,
        base64: "iVBORw0KGgo=".into(),
    }
}

fn completed() -> FileOutcome {
    FileOutcome::new(
        FileStatus::Completed,
        FileEffect::Completed,
        FileCleanup::Completed,
    )
    .unwrap()
}

fn tab_arg(tab: Option<&TabId>) -> Value {
    json!(tab.map(TabId::as_str))
}

#[async_trait]
impl Browser for Fake {
    fn implemented(&self) -> MemberSet {
        self.implemented
    }

    async fn state(&mut self, _: &CancellationToken) -> Result<BrowserState, DriverError> {
        self.log.lock().unwrap().push(Event::State);
        let index = self.n_state;
        self.n_state += 1;
        match self.state_failures.get(&index) {
            Some(error) => Err(error()),
            None => Ok(self.state.clone()),
        }
    }

    async fn navigate(
        &mut self,
        url: &PageUrl,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::Navigate, json!(url.as_str()))
    }
    async fn read_page(
        &mut self,
        filter: ReadFilter,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        self.read(BrowserMember::ReadPage, json!(filter.name()))
    }
    async fn get_page_text(
        &mut self,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        self.read(BrowserMember::GetPageText, tab_arg(tab))
    }
    async fn find(
        &mut self,
        query: &str,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        self.read(BrowserMember::Find, json!(query))
    }
    async fn click(
        &mut self,
        target: &Ref,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::Click, json!(target.as_str()))
    }
    async fn type_text(
        &mut self,
        text: &str,
        _: Option<&Ref>,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::Type, json!(text))
    }
    async fn key(
        &mut self,
        keys: &[KeyPress],
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::Key, json!(keys.len()))
    }
    async fn scroll(
        &mut self,
        _: ScrollDirection,
        amount: u64,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::Scroll, json!(amount))
    }
    async fn scroll_to(
        &mut self,
        target: &Ref,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::ScrollTo, json!(target.as_str()))
    }
    async fn wait_for(
        &mut self,
        text: &WaitText,
        _: Duration,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::WaitFor, json!(text.as_str()))
    }
    async fn select_option(
        &mut self,
        target: &Ref,
        _: &[String],
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::SelectOption, json!(target.as_str()))
    }
    async fn hover(
        &mut self,
        target: &Ref,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::Hover, json!(target.as_str()))
    }
    async fn screenshot(
        &mut self,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<EncodedImage, DriverError> {
        self.image(BrowserMember::Screenshot)
    }
    async fn zoom(
        &mut self,
        _: CssRegion,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<EncodedImage, DriverError> {
        self.image(BrowserMember::Zoom)
    }
    async fn new_tab(
        &mut self,
        url: Option<&PageUrl>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::NewTab, json!(url.map(PageUrl::as_str)))
    }
    async fn switch_tab(
        &mut self,
        tab: &TabId,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::SwitchTab, json!(tab.as_str()))
    }
    async fn close_tab(
        &mut self,
        tab: &TabId,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::CloseTab, json!(tab.as_str()))
    }
    async fn read_page_scoped(
        &mut self,
        _: Option<&Ref>,
        depth: u8,
        _: ReadFilter,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<BrowserScopedRead, DriverError> {
        match self.run(BrowserMember::ReadPageScoped, json!(depth))? {
            BrowserOutput::ScopedRead(read) => Ok(read),
            other => panic!("scripted {other:?}"),
        }
    }
    async fn click_at(
        &mut self,
        at: CssPoint,
        _: PointerButton,
        _: u8,
        _: ModifierSet,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::ClickAt, json!([at.x, at.y]))
    }
    async fn drag_path(
        &mut self,
        path: &[CssPoint],
        _: ModifierSet,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::DragPath, json!(path.len()))
    }
    async fn hold_keys(
        &mut self,
        keys: &[Key],
        _: Duration,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::HoldKeys, json!(keys.len()))
    }
    async fn hover_at(
        &mut self,
        at: CssPoint,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::HoverAt, json!([at.x, at.y]))
    }
    async fn set_checked(
        &mut self,
        _: &Ref,
        checked: bool,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserMember::SetChecked, json!(checked))
    }
    async fn read_diagnostics(
        &mut self,
        source: DiagnosticsSource,
        _: u32,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<BrowserRead, DriverError> {
        match self.run(BrowserMember::ReadDiagnostics, json!(source.name()))? {
            BrowserOutput::Read(Some(ReadResult::Structured(read))) => Ok(read),
            BrowserOutput::Text(None) => {
                Ok(BrowserRead::text_only("no messages".into(), vec![]).unwrap())
            }
            other => panic!("scripted {other:?}"),
        }
    }
    async fn run_script(
        &mut self,
        source: &str,
        _: Duration,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<String, DriverError> {
        match self.run(BrowserMember::RunScript, json!(source))? {
            BrowserOutput::Script(text) => Ok(text),
            BrowserOutput::Text(None) => Ok(String::new()),
            other => panic!("scripted {other:?}"),
        }
    }
    async fn upload_file(
        &mut self,
        grant: &GrantId,
        _: &CancellationToken,
    ) -> Result<FileOutcome, DriverError> {
        self.file(BrowserMember::UploadFile, grant)
    }
    async fn download_file(
        &mut self,
        grant: &GrantId,
        _: &CancellationToken,
    ) -> Result<FileOutcome, DriverError> {
        self.file(BrowserMember::DownloadFile, grant)
    }
}

/// A `confirm` that records what it was asked and answers from a script (default: approve).
fn recording_confirm(log: &Log, answers: Vec<Result<Approval, &'static str>>) -> Arc<dyn Confirm> {
    let log = Arc::clone(log);
    let answers = Arc::new(Mutex::new(VecDeque::from(answers)));
    Arc::new(ConfirmFn(
        move |context: ConfirmContext, _cancel: CancellationToken| {
            log.lock().unwrap().push(Event::Confirm {
                member: context.member,
                phase: context.phase,
                with_state: context.state.is_some(),
            });
            let answer = answers
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or(Ok(Approval::Approve));
            async move { answer.map_err(CallbackError::from) }
        },
    ))
}

/// A URL policy that records what it was asked and allows everything but `*.evil.test`.
fn recording_policy(log: &Log) -> Arc<dyn UrlPolicy> {
    let log = Arc::clone(log);
    Arc::new(UrlPolicyFn(
        move |_context: ConfirmContext, url: url::Url, _cancel: CancellationToken| {
            log.lock().unwrap().push(Event::UrlPolicy(url.to_string()));
            let verdict = if url.host_str().is_some_and(|h| h.ends_with("evil.test")) {
                Ok(UrlVerdict::Deny {
                    reason: "evil".into(),
                })
            } else if url.host_str() == Some("broken.test") {
                Err(CallbackError::from("the policy service is down"))
            } else {
                Ok(UrlVerdict::Allow)
            };
            async move { verdict }
        },
    ))
}

/// A toolset with every member enabled and recording callbacks.
fn everything(log: &Log, fake: Fake) -> BrowserToolset<Fake> {
    let all: Vec<String> = BrowserMember::ALL
        .iter()
        .map(|m| m.name().to_owned())
        .collect();
    BrowserToolset::new(
        fake,
        BrowserToolsetConfig {
            members: Some(all),
            confirm: Some(recording_confirm(log, vec![])),
            url_policy: Some(recording_policy(log)),
            ..BrowserToolsetConfig::default()
        },
    )
    .unwrap()
}

fn call(id: &str, tool: &str, args: Value) -> BrowserToolCall {
    BrowserToolCall::from_value(id, tool, args)
}

async fn one(
    toolset: &BrowserToolset<Fake>,
    tool: &str,
    args: Value,
) -> (CallOutput, Option<BrowserFault>) {
    toolset
        .call(&call("call_1", tool, args), &CancellationToken::new())
        .await
}

fn names(set: MemberSet) -> Vec<&'static str> {
    set.iter().map(BrowserMember::name).collect()
}

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

fn config(log: &Log) -> BrowserToolsetConfig {
    BrowserToolsetConfig {
        confirm: Some(recording_confirm(log, vec![])),
        url_policy: Some(recording_policy(log)),
        ..BrowserToolsetConfig::default()
    }
}

/// The fake's state as the model sees it, with an observation block of no changes.
fn expected_state() -> Value {
    json!({"tabs": [
        {"id": "t1", "title": "Cart", "url": "https://shop.example:8443", "active": true},
        {"id": "t2", "title": "Blank", "url": "about:blank", "active": false},
    ], "observation": no_changes(0)})
}

/// An observation block carrying no change, after `sequence` changes in all.
fn no_changes(sequence: u64) -> Value {
    json!({"version": 1, "sequence": sequence, "dropped_changes": sequence,
           "title_truncated": false, "changes": []})
}

// ---------------------------------------------------------------------------------------------
// Selection.

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

// ---------------------------------------------------------------------------------------------
// Call flow.

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

// ---------------------------------------------------------------------------------------------
// What the model sees.

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
