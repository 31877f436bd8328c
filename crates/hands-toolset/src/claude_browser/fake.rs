//! A recording fake [`Browser`] for the toolset's tests: a live tab model (navigate, new_tab,
//! switch_tab and close_tab change it; a click on a marked ref opens a pop-up), a fixed page read
//! with one element of each form role, and per-member scripted answers. It records every state
//! read and every call as the validated [`BrowserCall`] it received, so a test compares whole
//! calls, not a summary; the callbacks record into the same log, so order is checked too.
//!
//! (The function-tool surface's fake records one argument per call over a fixed state; this one
//! needs tabs that change and complete calls.)

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_core::browser::args::{
    BrowserCall, CssPoint, CssRegion, DiagnosticsSource, GrantId, KeyPress, PageUrl, PointerButton,
    ReadFilter, WaitText,
};
use hands_core::browser::driver::{FileCleanup, FileEffect, FileOutcome, FileStatus, ReadResult};
use hands_core::browser::read::{ReadOption, Ref, Role};
use hands_core::browser::{
    Browser, BrowserMember, BrowserOutput, BrowserRead, BrowserScopedRead, BrowserState,
    DriverError, MemberSet, ReadElement, TabId, TabInfo,
};
use hands_core::geometry::Size;
use hands_core::image::{EncodedImage, MediaType};
use hands_core::input::{Key, ModifierSet, ScrollDirection};
use serde_json::Value;

use crate::browser::consent::{
    Approval, CallbackError, Confirm, ConfirmContext, ConfirmFn, UrlPolicy, UrlPolicyFn, UrlVerdict,
};

/// What the fake driver and the callbacks saw, in order.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Event {
    /// `state()` was read.
    State,
    /// A driver member ran with these arguments.
    Call(BrowserCall),
    /// `confirm` was asked about this driver member, with these arguments.
    Confirm {
        member: BrowserMember,
        arguments: Value,
        with_state: bool,
    },
    /// The URL policy was asked about this URL.
    UrlPolicy(String),
}

pub(super) type Log = Arc<Mutex<Vec<Event>>>;

/// Takes the events recorded so far.
pub(super) fn take(log: &Log) -> Vec<Event> {
    std::mem::take(&mut *log.lock().unwrap())
}

/// The driver calls among `events`.
pub(super) fn calls(events: &[Event]) -> Vec<BrowserCall> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Call(call) => Some(call.clone()),
            _ => None,
        })
        .collect()
}

pub(super) fn r(text: &str) -> Ref {
    Ref::new(text).unwrap()
}

pub(super) fn t(text: &str) -> TabId {
    TabId::new(text).unwrap()
}

pub(super) fn png() -> EncodedImage {
    EncodedImage {
        size: Size::new(1280, 800).unwrap(),
        media_type: MediaType::Png,
        base64: "iVBORw0KGgo=".into(),
    }
}

/// The page every read returns: a text field (e1, with a value), a select (e2), a multi-select
/// list (e3), a checkbox (e4), a slider (e5), a button (e6), an editable combo box (e7).
pub(super) fn page_read() -> BrowserRead {
    let options = || {
        vec![
            ReadOption::new("Small".into(), "s".into()).unwrap(),
            ReadOption::new("Large".into(), "l".into()).unwrap(),
        ]
    };
    BrowserRead::new(
        "Order form".into(),
        vec![
            ReadElement::new(r("e1"), "Name".into(), Role::Textbox)
                .unwrap()
                .with_value("Ada".into())
                .unwrap(),
            ReadElement::new(r("e2"), "Size".into(), Role::Combobox)
                .unwrap()
                .with_options(options())
                .unwrap(),
            ReadElement::new(r("e3"), "Toppings".into(), Role::Listbox)
                .unwrap()
                .with_options(options())
                .unwrap(),
            ReadElement::new(r("e4"), "Gift".into(), Role::Checkbox)
                .unwrap()
                .with_checked(false)
                .unwrap(),
            ReadElement::new(r("e5"), "Volume".into(), Role::Slider).unwrap(),
            ReadElement::new(r("e6"), "Pay".into(), Role::Button).unwrap(),
            ReadElement::new(r("e7"), "City".into(), Role::Combobox).unwrap(),
        ],
        vec![],
    )
    .unwrap()
}

/// A scripted driver with a live tab model.
pub(super) struct FakeBrowser {
    log: Log,
    pub implemented: MemberSet,
    pub tabs: Vec<TabInfo>,
    next_id: u32,
    answers: HashMap<BrowserMember, VecDeque<Result<BrowserOutput, DriverError>>>,
    /// Clicking this ref opens a pop-up tab (not active).
    pub popup_ref: Option<Ref>,
    /// `new_tab` leaves the old tab active, as a broken driver would.
    pub broken_new_tab: bool,
    /// The 0-based indexes of state reads that fail, with how.
    state_failures: HashMap<usize, fn() -> DriverError>,
    n_state: usize,
}

fn tab(id: &str, title: &str, url: &str, active: bool) -> TabInfo {
    TabInfo {
        id: t(id),
        title: title.into(),
        url: url.into(),
        active,
    }
}

impl FakeBrowser {
    /// Two tabs: `t1` (active, a URL with secrets in it) and `t2` (blank).
    pub fn new(log: &Log) -> FakeBrowser {
        FakeBrowser {
            log: Arc::clone(log),
            implemented: MemberSet::all(),
            tabs: vec![
                tab(
                    "t1",
                    "Cart",
                    "https://user:pw@shop.example:8443/cart?id=7#pay",
                    true,
                ),
                tab("t2", "Blank", "about:blank", false),
            ],
            next_id: 3,
            answers: HashMap::new(),
            popup_ref: None,
            broken_new_tab: false,
            state_failures: HashMap::new(),
            n_state: 0,
        }
    }

    /// Answers the next call of `member` with `answer` instead of the default behaviour.
    pub fn answer(
        mut self,
        member: BrowserMember,
        answer: Result<BrowserOutput, DriverError>,
    ) -> FakeBrowser {
        self.answers.entry(member).or_default().push_back(answer);
        self
    }

    /// Makes the state read of index `index` (0-based) fail with `error()`.
    pub fn fail_state(mut self, index: usize, error: fn() -> DriverError) -> FakeBrowser {
        self.state_failures.insert(index, error);
        self
    }

    fn record(&mut self, call: BrowserCall) -> Option<Result<BrowserOutput, DriverError>> {
        let member = call.member();
        self.log.lock().unwrap().push(Event::Call(call));
        self.answers.get_mut(&member).and_then(VecDeque::pop_front)
    }

    fn text(&mut self, call: BrowserCall) -> Result<Option<String>, DriverError> {
        match self.record(call) {
            None => Ok(Some("driver text".into())),
            Some(Ok(BrowserOutput::Text(text))) => Ok(text),
            Some(Ok(other)) => panic!("scripted {other:?} for a text member"),
            Some(Err(e)) => Err(e),
        }
    }

    fn read(&mut self, call: BrowserCall) -> Result<Option<ReadResult>, DriverError> {
        let default = match call {
            BrowserCall::GetPageText { .. } => {
                BrowserRead::text_only("Order form".into(), vec![]).unwrap()
            }
            _ => page_read(),
        };
        match self.record(call) {
            None => Ok(Some(ReadResult::Structured(default))),
            Some(Ok(BrowserOutput::Read(read))) => Ok(read),
            Some(Ok(other)) => panic!("scripted {other:?} for a read"),
            Some(Err(e)) => Err(e),
        }
    }

    fn image(&mut self, call: BrowserCall) -> Result<EncodedImage, DriverError> {
        match self.record(call) {
            None => Ok(png()),
            Some(Ok(BrowserOutput::Image(image))) => Ok(image),
            Some(Ok(other)) => panic!("scripted {other:?} for an image"),
            Some(Err(e)) => Err(e),
        }
    }

    fn active_index(&self) -> Option<usize> {
        self.tabs.iter().position(|t| t.active)
    }

    fn activate(&mut self, index: usize) {
        for (i, tab) in self.tabs.iter_mut().enumerate() {
            tab.active = i == index;
        }
    }

    fn open(&mut self, url: &str, active: bool) -> TabId {
        let id = t(&format!("t{}", self.next_id));
        self.next_id += 1;
        self.tabs.push(TabInfo {
            id: id.clone(),
            title: String::new(),
            url: url.into(),
            active: false,
        });
        if active {
            self.activate(self.tabs.len() - 1);
        }
        id
    }

    fn tab_index(&self, tab: Option<&TabId>) -> Result<usize, DriverError> {
        match tab {
            None => self
                .active_index()
                .ok_or_else(|| DriverError::refused("no tab is open")),
            Some(id) => self
                .tabs
                .iter()
                .position(|t| &t.id == id)
                .ok_or_else(|| DriverError::refused("No such tab.")),
        }
    }
}

#[async_trait]
impl Browser for FakeBrowser {
    fn implemented(&self) -> MemberSet {
        self.implemented
    }

    async fn state(&mut self, _: &CancellationToken) -> Result<BrowserState, DriverError> {
        self.log.lock().unwrap().push(Event::State);
        let index = self.n_state;
        self.n_state += 1;
        if let Some(error) = self.state_failures.get(&index) {
            return Err(error());
        }
        Ok(BrowserState::new(self.tabs.clone()).unwrap())
    }

    async fn navigate(
        &mut self,
        url: &PageUrl,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let answer = self.text(BrowserCall::Navigate {
            url: url.clone(),
            tab: tab.cloned(),
        })?;
        let index = self.tab_index(tab)?;
        self.tabs[index].url = url.as_str().to_owned();
        self.tabs[index].title = format!("Page at {}", url.url().host_str().unwrap_or("?"));
        Ok(answer)
    }

    async fn read_page(
        &mut self,
        filter: ReadFilter,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        self.read(BrowserCall::ReadPage {
            filter,
            tab: tab.cloned(),
        })
    }

    async fn get_page_text(
        &mut self,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        self.read(BrowserCall::GetPageText { tab: tab.cloned() })
    }

    async fn find(
        &mut self,
        query: &str,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        self.read(BrowserCall::find(query, tab.cloned()).unwrap())
    }

    async fn click(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let answer = self.text(BrowserCall::Click {
            target: target.clone(),
            tab: tab.cloned(),
        })?;
        if self.popup_ref.as_ref() == Some(target) {
            self.open("https://popup.example/offer?token=secret", false);
        }
        Ok(answer)
    }

    async fn type_text(
        &mut self,
        text: &str,
        target: Option<&Ref>,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserCall::type_text(text, target.cloned(), tab.cloned()).unwrap())
    }

    async fn key(
        &mut self,
        keys: &[KeyPress],
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserCall::Key {
            keys: keys.to_vec(),
            tab: tab.cloned(),
        })
    }

    async fn scroll(
        &mut self,
        direction: ScrollDirection,
        amount: u64,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserCall::Scroll {
            direction,
            amount,
            at: None,
            tab: tab.cloned(),
        })
    }

    async fn scroll_at(
        &mut self,
        at: CssPoint,
        direction: ScrollDirection,
        amount: u64,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserCall::Scroll {
            direction,
            amount,
            at: Some(at),
            tab: tab.cloned(),
        })
    }

    async fn scroll_to(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserCall::ScrollTo {
            target: target.clone(),
            tab: tab.cloned(),
        })
    }

    async fn wait_for(
        &mut self,
        text: &WaitText,
        timeout: Duration,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserCall::WaitFor {
            text: text.clone(),
            timeout,
            tab: tab.cloned(),
        })
    }

    async fn select_option(
        &mut self,
        target: &Ref,
        values: &[String],
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserCall::SelectOption {
            target: target.clone(),
            values: values.to_vec(),
            tab: tab.cloned(),
        })
    }

    async fn hover(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserCall::Hover {
            target: target.clone(),
            tab: tab.cloned(),
        })
    }

    async fn screenshot(
        &mut self,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<EncodedImage, DriverError> {
        self.image(BrowserCall::Screenshot { tab: tab.cloned() })
    }

    async fn zoom(
        &mut self,
        region: CssRegion,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<EncodedImage, DriverError> {
        self.image(BrowserCall::Zoom {
            region,
            tab: tab.cloned(),
        })
    }

    async fn new_tab(
        &mut self,
        url: Option<&PageUrl>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let answer = self.text(BrowserCall::NewTab { url: url.cloned() })?;
        let active = !self.broken_new_tab;
        self.open(url.map_or("about:blank", PageUrl::as_str), active);
        Ok(answer)
    }

    async fn switch_tab(
        &mut self,
        tab: &TabId,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let answer = self.text(BrowserCall::SwitchTab { tab: tab.clone() })?;
        let index = self.tab_index(Some(tab))?;
        self.activate(index);
        Ok(answer)
    }

    async fn close_tab(
        &mut self,
        tab: &TabId,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let answer = self.text(BrowserCall::CloseTab { tab: tab.clone() })?;
        let index = self.tab_index(Some(tab))?;
        let was_active = self.tabs.remove(index).active;
        if was_active && !self.tabs.is_empty() {
            self.activate(0);
        }
        Ok(answer)
    }

    async fn read_page_scoped(
        &mut self,
        root: Option<&Ref>,
        depth: u8,
        filter: ReadFilter,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<BrowserScopedRead, DriverError> {
        self.record(BrowserCall::ReadPageScoped {
            tab: tab.cloned(),
            root: root.cloned(),
            depth,
            filter,
        });
        Ok(BrowserScopedRead::new(page_read(), vec![]).unwrap())
    }

    async fn click_at(
        &mut self,
        at: CssPoint,
        button: PointerButton,
        click_count: u8,
        keys: ModifierSet,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserCall::ClickAt {
            tab: tab.cloned(),
            at,
            button,
            click_count,
            keys,
        })
    }

    async fn drag_path(
        &mut self,
        path: &[CssPoint],
        keys: ModifierSet,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserCall::DragPath {
            tab: tab.cloned(),
            path: path.to_vec(),
            keys,
        })
    }

    async fn hold_keys(
        &mut self,
        keys: &[Key],
        duration: Duration,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserCall::HoldKeys {
            tab: tab.cloned(),
            keys: keys.to_vec(),
            duration,
        })
    }

    async fn hover_at(
        &mut self,
        at: CssPoint,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserCall::HoverAt {
            tab: tab.cloned(),
            at,
        })
    }

    async fn set_checked(
        &mut self,
        target: &Ref,
        checked: bool,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.text(BrowserCall::SetChecked {
            tab: tab.cloned(),
            target: target.clone(),
            checked,
        })
    }

    async fn read_diagnostics(
        &mut self,
        source: DiagnosticsSource,
        limit: u32,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<BrowserRead, DriverError> {
        let call = BrowserCall::read_diagnostics(tab.cloned(), source, u64::from(limit)).unwrap();
        match self.record(call) {
            None => Ok(BrowserRead::text_only(format!("{} log", source.name()), vec![]).unwrap()),
            Some(Ok(BrowserOutput::Read(Some(ReadResult::Structured(read))))) => Ok(read),
            Some(Ok(other)) => panic!("scripted {other:?} for diagnostics"),
            Some(Err(e)) => Err(e),
        }
    }

    async fn run_script(
        &mut self,
        source: &str,
        timeout: Duration,
        tab: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<String, DriverError> {
        let call = BrowserCall::RunScript {
            tab: tab.cloned(),
            source: source.to_owned(),
            timeout,
        };
        match self.record(call) {
            None => Ok("42".into()),
            Some(Ok(BrowserOutput::Script(text))) => Ok(text),
            Some(Ok(other)) => panic!("scripted {other:?} for a script"),
            Some(Err(e)) => Err(e),
        }
    }

    async fn upload_file(
        &mut self,
        grant: &GrantId,
        _: &CancellationToken,
    ) -> Result<FileOutcome, DriverError> {
        match self.record(BrowserCall::UploadFile {
            grant: grant.clone(),
        }) {
            None => Ok(FileOutcome::new(
                FileStatus::Completed,
                FileEffect::Completed,
                FileCleanup::Completed,
            )
            .unwrap()),
            Some(Ok(BrowserOutput::File(outcome))) => Ok(outcome),
            Some(Ok(other)) => panic!("scripted {other:?} for an upload"),
            Some(Err(e)) => Err(e),
        }
    }
}

/// A `confirm` that records what it was asked and answers from a script (default: approve).
pub(super) fn recording_confirm(log: &Log, answers: Vec<Approval>) -> Arc<dyn Confirm> {
    let log = Arc::clone(log);
    let answers = Arc::new(Mutex::new(VecDeque::from(answers)));
    Arc::new(ConfirmFn(
        move |context: ConfirmContext, _cancel: CancellationToken| {
            log.lock().unwrap().push(Event::Confirm {
                member: context.member,
                arguments: context.arguments.clone(),
                with_state: context.state.is_some(),
            });
            let answer = answers
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or(Approval::Approve);
            async move { Ok::<_, CallbackError>(answer) }
        },
    ))
}

/// A URL policy that records what it was asked and allows everything but `*.evil.test`.
pub(super) fn recording_policy(log: &Log) -> Arc<dyn UrlPolicy> {
    let log = Arc::clone(log);
    Arc::new(UrlPolicyFn(
        move |_context: ConfirmContext, url: url::Url, _cancel: CancellationToken| {
            log.lock().unwrap().push(Event::UrlPolicy(url.to_string()));
            let verdict = if url.host_str().is_some_and(|h| h.ends_with("evil.test")) {
                UrlVerdict::Deny {
                    reason: "evil".into(),
                }
            } else {
                UrlVerdict::Allow
            };
            async move { Ok::<_, CallbackError>(verdict) }
        },
    ))
}
