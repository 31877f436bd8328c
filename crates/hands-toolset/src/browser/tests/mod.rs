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

mod answers;
mod call_flow;
mod selection;
