//! The browser tools: each call goes through `hands-toolset`'s browser toolset — argument rules,
//! the URL policy, `confirm` (answered through the call's consent), tab-state privacy — exactly
//! as in `hands run`, and its answer is turned into compact MCP content: reads as lines (paged at
//! the budget, with a cursor), actions as one line of what changed, images as `image` content.

use std::collections::VecDeque;
use std::sync::Arc;

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_core::browser::changes::ReadChanges;
use hands_core::browser::{Browser, BrowserMember, BrowserRead};
use hands_toolset::browser::consent::UrlPolicy;
use hands_toolset::browser::{
    BrowserFault, BrowserToolCall, BrowserToolset, BrowserToolsetConfig, CallOutput, ConfigError,
    TypedRead,
};
use rmcp::model::ContentBlock;
use serde_json::{Map, Value, json};

use crate::budget::{Budget, NOTE_RESERVE, text_tokens};
use crate::consent::{ConsentSlot, McpConfirm};
use crate::read_form::{
    Pager, read_from_json, render_read, render_scoped_read, render_typed, scoped_read_from_json,
};
use crate::tools::{
    BROWSER_MEMBERS, CURSOR_ARG, FULL_ARG, SNAPSHOT_ARG, browser_default, browser_is_action,
    browser_is_read,
};

/// A browser toolset with its driver type erased.
#[async_trait]
pub trait BrowserCalls: Send + Sync {
    /// Runs one call through the toolset.
    async fn call(
        &self,
        call: &BrowserToolCall,
        cancel: &CancellationToken,
    ) -> (CallOutput, Option<BrowserFault>);
}

#[async_trait]
impl<B: Browser + 'static> BrowserCalls for BrowserToolset<B> {
    async fn call(
        &self,
        call: &BrowserToolCall,
        cancel: &CancellationToken,
    ) -> (CallOutput, Option<BrowserFault>) {
        BrowserToolset::call(self, call, cancel).await
    }
}

/// Opens the browser of a surface made with [`BrowserSurface::lazy`]: called on the first
/// browser call, and again on the next call after a failure (so a start page that was down is
/// opened once it is served). `hands mcp` launches (or attaches to) Chromium and opens its
/// start page here, so the server answers `initialize` before any browser exists.
#[async_trait]
pub trait OpenBrowser: Send + Sync {
    /// The browser, ready: its toolset (made with [`BrowserSurface::toolset`]).
    async fn open(&self, cancel: &CancellationToken) -> Result<Box<dyn BrowserCalls>, OpenError>;
}

/// Why the browser could not be opened; the call is answered with it as a tool error, and the
/// next call tries again.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The browser did not start (or could not be attached to).
    #[error("the browser did not start: {why}. {what_to_do}")]
    Launch {
        /// What failed.
        why: String,
        /// What to do about it.
        what_to_do: String,
    },
    /// The browser started, but its start page did not load.
    #[error(
        "the start page {url} did not open: {why}. Check that it is served and reachable, then \
         call again: the next browser call opens it again"
    )]
    StartPage {
        /// The start URL.
        url: String,
        /// Why it did not open.
        why: String,
    },
    /// The toolset over the browser could not be made.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The call was cancelled while the browser was opening.
    #[error("cancelled while the browser was opening; call again to open it")]
    Cancelled,
}

/// The answer of one browser tool call, before the budget's last fit.
#[derive(Debug)]
pub struct Answer {
    /// The content.
    pub content: Vec<ContentBlock>,
    /// Whether it is a failure (`isError`).
    pub is_error: bool,
    /// Set when the browser is gone: the server cannot go on.
    pub fault: Option<BrowserFault>,
}

/// Reads kept for their cursors: the last few, each as its rendered lines.
#[derive(Debug, Default)]
struct ReadCache {
    next_id: u32,
    reads: VecDeque<(u32, Vec<String>)>,
}

/// How many cut reads keep their cursors.
const KEPT_READS: usize = 8;

impl ReadCache {
    fn keep(&mut self, lines: Vec<String>) -> u32 {
        self.next_id += 1;
        if self.reads.len() == KEPT_READS {
            self.reads.pop_front();
        }
        self.reads.push_back((self.next_id, lines));
        self.next_id
    }

    fn get(&self, id: u32) -> Option<&[String]> {
        self.reads
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, lines)| lines.as_slice())
    }
}

/// The last whole read of each (tab, filter), to answer the next read with what changed.
#[derive(Debug, Default)]
struct Baselines {
    reads: VecDeque<((String, String), BrowserRead)>,
}

/// How many (tab, filter) pairs keep their last read.
const KEPT_BASELINES: usize = 8;

impl Baselines {
    /// The lines to send for `read` of (`tab`, `filter`): the changes since the last read of the
    /// same pair when it showed the same document and they are under half the size of the whole
    /// read (a re-read after a few changes), else the whole read. `read` becomes the pair's last.
    fn lines(
        &mut self,
        tab: String,
        filter: String,
        read: &BrowserRead,
        full: bool,
    ) -> Vec<String> {
        let key = (tab, filter);
        let whole = render_read(read);
        let last = self.reads.iter().position(|(k, _)| *k == key);
        let before = last.and_then(|i| self.reads.remove(i)).map(|(_, r)| r);
        if self.reads.len() == KEPT_BASELINES {
            self.reads.pop_front();
        }
        self.reads.push_back((key, read.clone()));
        let Some(before) = before.filter(|b| !full && ReadChanges::same_document(b, read)) else {
            return whole;
        };
        let changes = ReadChanges::between(&before, read).to_lines();
        let cost = |lines: &[String]| lines.iter().map(|l| text_tokens(l) + 1).sum::<u32>();
        if 2 * cost(&changes) < cost(&whole) {
            changes
        } else {
            whole
        }
    }

    /// Forgets every read (the browser was opened anew).
    fn clear(&mut self) {
        self.reads.clear();
    }
}

/// The tab a read was of: its `tab_id`, else the active tab of the state after it.
fn read_tab(arguments: &Value, state: Option<&Value>) -> String {
    if let Some(tab) = arguments["tab_id"].as_str() {
        return tab.to_owned();
    }
    state
        .and_then(|s| s["tabs"].as_array())
        .and_then(|tabs| tabs.iter().find(|t| t["active"] == Value::Bool(true)))
        .and_then(|t| t["id"].as_str())
        .unwrap_or("")
        .to_owned()
}

/// A cursor: `r<read>:<line>`.
fn cursor_text(read: u32, line: usize) -> String {
    format!("r{read}:{line}")
}

fn parse_cursor(text: &str) -> Option<(u32, usize)> {
    let (read, line) = text.strip_prefix('r')?.split_once(':')?;
    Some((read.parse().ok()?, line.parse().ok()?))
}

/// The browser surface of the server.
pub struct BrowserSurface {
    /// The toolset, once the browser is open.
    toolset: Option<Box<dyn BrowserCalls>>,
    /// What opens the browser on the first call (a lazy surface).
    opener: Option<Box<dyn OpenBrowser>>,
    reads: ReadCache,
    /// The last read of each tab, for reads that send what changed.
    baselines: Baselines,
    /// The tab state the client saw last, to say what an action changed.
    last_state: Option<Value>,
}

impl std::fmt::Debug for BrowserSurface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrowserSurface").finish_non_exhaustive()
    }
}

impl BrowserSurface {
    /// A surface over `driver`: the members of [`BROWSER_MEMBERS`], `confirm` answered through
    /// `slot`, navigation allowed by `url_policy` (the same allow-list the driver enforces on
    /// every request).
    pub fn new<B: Browser + 'static>(
        driver: B,
        url_policy: Arc<dyn UrlPolicy>,
        slot: ConsentSlot,
    ) -> Result<BrowserSurface, ConfigError> {
        Ok(BrowserSurface::from_calls(BrowserSurface::toolset(
            driver, url_policy, slot,
        )?))
    }

    /// A surface whose browser is opened by `opener` on the first browser call (not before):
    /// the server starts at once, and a browser that fails to open is a tool error on the call
    /// that needed it, tried again on the next.
    pub fn lazy(opener: Box<dyn OpenBrowser>) -> BrowserSurface {
        BrowserSurface {
            toolset: None,
            opener: Some(opener),
            reads: ReadCache::default(),
            baselines: Baselines::default(),
            last_state: None,
        }
    }

    /// The toolset [`BrowserSurface::new`] serves over `driver`: for an [`OpenBrowser`].
    pub fn toolset<B: Browser + 'static>(
        driver: B,
        url_policy: Arc<dyn UrlPolicy>,
        slot: ConsentSlot,
    ) -> Result<Box<dyn BrowserCalls>, ConfigError> {
        let toolset = BrowserToolset::new(
            driver,
            BrowserToolsetConfig {
                members: Some(
                    BROWSER_MEMBERS
                        .iter()
                        .map(|m| m.name().to_owned())
                        .collect(),
                ),
                confirm: Some(Arc::new(McpConfirm { slot })),
                url_policy: Some(url_policy),
                ..BrowserToolsetConfig::default()
            },
        )?;
        Ok(Box::new(toolset))
    }

    /// A surface over any toolset.
    pub fn from_calls(toolset: Box<dyn BrowserCalls>) -> BrowserSurface {
        BrowserSurface {
            toolset: Some(toolset),
            opener: None,
            reads: ReadCache::default(),
            baselines: Baselines::default(),
            last_state: None,
        }
    }

    /// Runs `member` with the client's `arguments`, within `budget`. `call_id` names the
    /// client's request (the MCP request id): it is what `confirm` and the answer are bound to.
    /// `decided` is filled in by the caller after the call (who approved), so it is not known
    /// here.
    pub async fn call(
        &mut self,
        call_id: &str,
        member: BrowserMember,
        arguments: &Map<String, Value>,
        budget: Budget,
        cancel: &CancellationToken,
    ) -> Answer {
        let mut arguments = arguments.clone();
        let cursor = arguments.remove(CURSOR_ARG);
        let snapshot = arguments.remove(SNAPSHOT_ARG);
        let full = arguments.remove(FULL_ARG);
        if let Some(cursor) = cursor {
            return self.continue_read(member, &cursor, budget);
        }
        let snapshot = match snapshot {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) if browser_is_action(member) => b,
            Some(other) => {
                return error_answer(format!(
                    "`{SNAPSHOT_ARG}` must be true or false on an action, got {other}"
                ));
            }
        };
        let full = match full {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) if member == BrowserMember::ReadPage => b,
            Some(other) => {
                return error_answer(format!(
                    "`{FULL_ARG}` must be true or false on browser_read_page, got {other}"
                ));
            }
        };
        if let Err(e) = self.open(cancel).await {
            return error_answer(format!("The browser is not open: {e}"));
        }
        // MCP leaves nullable fields out; the driver spec wants them as explicit nulls.
        for field in hands_toolset::browser::parse::fields(member) {
            if !arguments.contains_key(*field) {
                let value = browser_default(member, field).unwrap_or(Value::Null);
                arguments.insert((*field).to_owned(), value);
            }
        }
        let arguments = Value::Object(arguments);
        let (output, fault) = self.run(call_id, member, arguments.clone(), cancel).await;
        let lines = (member == BrowserMember::ReadPage)
            .then(|| self.read_lines(&arguments, &output, full))
            .flatten();
        let mut answer = self.present(member, &output, lines, budget);
        answer.fault = fault;
        if snapshot && output.ok() && answer.fault.is_none() {
            let used = Budget::cost(&answer.content);
            let arguments = json!({"filter": "interactive", "tab_id": null});
            let (read, fault) = self
                .run(call_id, BrowserMember::ReadPage, arguments.clone(), cancel)
                .await;
            answer.fault = fault;
            let room = budget.max_tokens().saturating_sub(used);
            let changes = self.read_lines(&arguments, &read, false);
            match read.body().get("result") {
                Some(result) if read.ok() => {
                    let lines = match (changes, read.read(), read_from_json(result)) {
                        (Some(lines), _, _) => lines,
                        (None, Some(typed), _) => render_typed(typed),
                        (None, None, Ok(read)) => render_read(&read),
                        (None, None, Err(e)) => vec![e.to_string()],
                    };
                    answer
                        .content
                        .push(ContentBlock::text(self.page_of(lines, 0, room)));
                }
                _ => answer.content.push(ContentBlock::text(format!(
                    "(the snapshot failed: {})",
                    read.error().unwrap_or("no result")
                ))),
            }
        }
        answer
    }

    /// The lines of a successful `read_page`'s typed read: the changes since the tab's last
    /// read, or the whole read (`full`, a new document, or changes as large as the read).
    fn read_lines(
        &mut self,
        arguments: &Value,
        output: &CallOutput,
        full: bool,
    ) -> Option<Vec<String>> {
        let Some(TypedRead::Page(read)) = output.read().filter(|_| output.ok()) else {
            return None;
        };
        let tab = read_tab(arguments, output.state());
        let filter = arguments["filter"].as_str().unwrap_or("all").to_owned();
        Some(self.baselines.lines(tab, filter, read, full))
    }

    /// Opens the browser of a lazy surface if it is not open yet.
    async fn open(&mut self, cancel: &CancellationToken) -> Result<(), OpenError> {
        if self.toolset.is_some() {
            return Ok(());
        }
        let Some(opener) = &self.opener else {
            return Err(OpenError::Launch {
                why: "the surface has no browser and nothing to open one".to_owned(),
                what_to_do: "Restart the server".to_owned(),
            });
        };
        let started = std::time::Instant::now();
        let toolset = tokio::select! {
            opened = opener.open(cancel) => opened?,
            () = cancel.cancelled() => return Err(OpenError::Cancelled),
        };
        tracing::info!(target: "hands::mcp", ms = started.elapsed().as_millis() as u64, "browser opened");
        self.toolset = Some(toolset);
        self.baselines.clear();
        Ok(())
    }

    async fn run(
        &mut self,
        call_id: &str,
        member: BrowserMember,
        arguments: Value,
        cancel: &CancellationToken,
    ) -> (CallOutput, Option<BrowserFault>) {
        let call = BrowserToolCall::for_member(call_id, member, arguments);
        match &self.toolset {
            Some(toolset) => toolset.call(&call, cancel).await,
            // `call` opens the browser before running anything.
            None => (CallOutput::skipped(call_id), None),
        }
    }

    /// The next page of a kept read.
    fn continue_read(&mut self, member: BrowserMember, cursor: &Value, budget: Budget) -> Answer {
        if !browser_is_read(member) {
            return error_answer(format!("`{CURSOR_ARG}` applies only to reads"));
        }
        let Some((read, line)) = cursor.as_str().and_then(parse_cursor) else {
            return error_answer(format!(
                "`{CURSOR_ARG}` must be the cursor a cut read gave, like \"r3:120\""
            ));
        };
        let Some(lines) = self.reads.get(read).map(<[String]>::to_vec) else {
            return error_answer(
                "that read is no longer kept (only the last 8 cut reads are): read again"
                    .to_owned(),
            );
        };
        if line >= lines.len() {
            return error_answer(format!("the read has {} lines", lines.len()));
        }
        let text = self.page_of_kept(read, &lines, line, budget.max_tokens());
        Answer {
            content: vec![ContentBlock::text(text)],
            is_error: false,
            fault: None,
        }
    }

    /// One page of `lines` from `start` within `tokens`, with a closing cursor line when cut.
    fn page_of(&mut self, lines: Vec<String>, start: usize, tokens: u32) -> String {
        let pager = Pager {
            tokens: tokens.saturating_sub(NOTE_RESERVE),
        };
        let page = pager.page(&lines, start);
        match page.next {
            None => page.text,
            Some(next) => {
                let id = self.reads.keep(lines);
                format!("{}\n{}", page.text, cut_note(id, next, page.n_lines))
            }
        }
    }

    fn page_of_kept(&self, id: u32, lines: &[String], start: usize, tokens: u32) -> String {
        let pager = Pager {
            tokens: tokens.saturating_sub(NOTE_RESERVE),
        };
        let page = pager.page(lines, start);
        match page.next {
            None => page.text,
            Some(next) => format!("{}\n{}", page.text, cut_note(id, next, page.n_lines)),
        }
    }

    /// Turns the toolset's answer into content.
    /// `lines`: the read's lines when the caller made them (a read that sends what changed).
    fn present(
        &mut self,
        member: BrowserMember,
        output: &CallOutput,
        lines: Option<Vec<String>>,
        budget: Budget,
    ) -> Answer {
        let state = output.state().cloned();
        let changed = self.state_change(state.as_ref());
        if let Some(state) = &state {
            self.last_state = Some(state.clone());
        }
        let state_line = state.as_ref().map(state_text);
        if !output.ok() {
            let mut text = output.error().unwrap_or("the call failed").to_owned();
            if let Some(line) = state_line {
                text.push('\n');
                text.push_str(&line);
            }
            // A file outcome that did not complete has a result but no error.
            if let Some(result) = output.body().get("result") {
                text.push('\n');
                text.push_str(&result.to_string());
            }
            return Answer {
                content: vec![ContentBlock::text(text)],
                is_error: true,
                fault: None,
            };
        }
        let result = output.body().get("result");
        let mut content = Vec::new();
        if let Some(image) = output.image() {
            content.push(ContentBlock::image(
                image.base64.clone(),
                image.media_type.mime(),
            ));
            content.push(ContentBlock::text(format!(
                "{} {}x{} (CSS pixels of the viewport)",
                member, image.size.width, image.size.height
            )));
            return Answer {
                content,
                is_error: false,
                fault: None,
            };
        }
        // An action that changed no tab answers with the driver's word alone ("Clicked."); what
        // changed in the tabs follows it.
        if browser_is_action(member)
            && let Some(Value::String(said)) = result
        {
            content.push(ContentBlock::text(action_text(said, changed)));
            return Answer {
                content,
                is_error: false,
                fault: None,
            };
        }
        let header = match member {
            BrowserMember::ListTabs
            | BrowserMember::NewTab
            | BrowserMember::SwitchTab
            | BrowserMember::CloseTab => state_line.clone(),
            m if browser_is_action(m) => Some(changed.unwrap_or_else(|| "Done.".to_owned())),
            _ => None,
        };
        let header_tokens = header.as_deref().map(text_tokens).unwrap_or(0) + 2;
        let room = budget.max_tokens().saturating_sub(header_tokens);
        let body = match (member, result) {
            (_, None) => None,
            (_, Some(_)) if output.read().is_some() => {
                let lines = lines
                    .or_else(|| output.read().map(render_typed))
                    .unwrap_or_default();
                Some(self.page_of(lines, 0, room))
            }
            (BrowserMember::ReadPageScoped, Some(result)) => {
                Some(match scoped_read_from_json(result) {
                    Ok(read) => self.page_of(render_scoped_read(&read), 0, room),
                    Err(e) => e.to_string(),
                })
            }
            (_, Some(result @ Value::Object(_))) if result.get("elements").is_some() => {
                Some(match read_from_json(result) {
                    Ok(read) => self.page_of(render_read(&read), 0, room),
                    Err(e) => e.to_string(),
                })
            }
            (_, Some(Value::String(text))) => {
                let lines = text.lines().map(str::to_owned).collect();
                Some(self.page_of(lines, 0, room))
            }
            (_, Some(other)) => Some(other.to_string()),
        };
        let text = match (header, body) {
            (Some(h), Some(b)) => format!("{h}\n{b}"),
            (Some(h), None) => h,
            (None, Some(b)) => b,
            (None, None) => "Done.".to_owned(),
        };
        content.push(ContentBlock::text(text));
        Answer {
            content,
            is_error: false,
            fault: None,
        }
    }

    /// What changed in the tab state since the client last saw it, in one line; `None` when
    /// nothing did.
    fn state_change(&self, state: Option<&Value>) -> Option<String> {
        let new = state?.get("tabs")?.as_array()?;
        let old: Vec<Value> = self
            .last_state
            .as_ref()
            .and_then(|s| s.get("tabs"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let id = |t: &Value| t["id"].as_str().unwrap_or("").to_owned();
        let mut parts = Vec::new();
        for tab in new {
            match old.iter().find(|o| id(o) == id(tab)) {
                None => parts.push(format!("new tab {}", tab_text(tab))),
                Some(before) => {
                    if before["url"] != tab["url"] {
                        parts.push(format!(
                            "tab {} went from {} to {}",
                            id(tab),
                            before["url"].as_str().unwrap_or("?"),
                            tab["url"].as_str().unwrap_or("?")
                        ));
                    }
                    if before["title"] != tab["title"] {
                        parts.push(format!("tab {} is now titled {}", id(tab), tab["title"]));
                    }
                    if before["active"] != tab["active"] && tab["active"] == Value::Bool(true) {
                        parts.push(format!("tab {} is active", id(tab)));
                    }
                }
            }
        }
        for tab in &old {
            if !new.iter().any(|n| id(n) == id(tab)) {
                parts.push(format!("tab {} closed", id(tab)));
            }
        }
        let mut text = parts.join("; ");
        if let Some(first) = text.get(..1) {
            text.replace_range(..1, &first.to_uppercase());
        }
        (!text.is_empty()).then(|| format!("{text}."))
    }
}

/// An action's answer: the driver's word ("Clicked."), then what changed in the tabs, if
/// anything did.
fn action_text(said: &str, changed: Option<String>) -> String {
    match changed {
        Some(changed) => format!("{said} {changed}"),
        None => said.to_owned(),
    }
}

fn cut_note(id: u32, next: usize, n_lines: usize) -> String {
    format!(
        "# cut to fit the response budget: lines {next}–{} of {n_lines} not sent. Call again with \
         cursor \"{}\" for the next part, or narrow with browser_find / browser_read_page_scoped.",
        n_lines - 1,
        cursor_text(id, next)
    )
}

fn tab_text(tab: &Value) -> String {
    format!(
        "{}{} {} {}",
        tab["id"].as_str().unwrap_or("?"),
        if tab["active"] == Value::Bool(true) {
            "*"
        } else {
            ""
        },
        tab["title"],
        tab["url"].as_str().unwrap_or("")
    )
}

/// The tabs in one line: `tabs: t1* "Title" https://origin | t2 …` (`*` is the active one).
pub fn state_text(state: &Value) -> String {
    let tabs: Vec<String> = state["tabs"]
        .as_array()
        .map(|tabs| tabs.iter().map(tab_text).collect())
        .unwrap_or_default();
    format!("tabs: {}", tabs.join(" | "))
}

fn error_answer(text: String) -> Answer {
    Answer {
        content: vec![ContentBlock::text(text)],
        is_error: true,
        fault: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip() {
        assert_eq!(parse_cursor(&cursor_text(3, 120)), Some((3, 120)));
        assert_eq!(parse_cursor("3:120"), None);
        assert_eq!(parse_cursor("r3"), None);
        assert_eq!(parse_cursor("r-1:2"), None);
    }

    #[test]
    fn the_state_line_marks_the_active_tab() {
        let state = json!({"tabs": [
            {"id": "t1", "title": "A", "url": "https://a.test", "active": true},
            {"id": "t2", "title": "B \"q\"", "url": "https://b.test", "active": false}]});
        assert_eq!(
            state_text(&state),
            "tabs: t1* \"A\" https://a.test | t2 \"B \\\"q\\\"\" https://b.test"
        );
    }

    /// A toolset that counts its calls (and answers each as skipped).
    struct Counted(Arc<std::sync::atomic::AtomicU32>);

    #[async_trait]
    impl BrowserCalls for Counted {
        async fn call(
            &self,
            call: &BrowserToolCall,
            _: &CancellationToken,
        ) -> (CallOutput, Option<BrowserFault>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            (CallOutput::skipped(&call.call_id), None)
        }
    }

    /// Fails its first `fail` opens, then opens a [`Counted`].
    struct Flaky {
        opens: Arc<std::sync::atomic::AtomicU32>,
        fail: u32,
        calls: Arc<std::sync::atomic::AtomicU32>,
    }

    #[async_trait]
    impl OpenBrowser for Flaky {
        async fn open(&self, _: &CancellationToken) -> Result<Box<dyn BrowserCalls>, OpenError> {
            let n = self.opens.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if n < self.fail {
                return Err(OpenError::StartPage {
                    url: "http://127.0.0.1:9/".to_owned(),
                    why: "refused".to_owned(),
                });
            }
            Ok(Box::new(Counted(Arc::clone(&self.calls))))
        }
    }

    #[tokio::test]
    async fn a_lazy_surface_opens_on_the_first_call_and_again_after_a_failure() {
        use std::sync::atomic::Ordering::SeqCst;
        let opens = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let calls = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let mut surface = BrowserSurface::lazy(Box::new(Flaky {
            opens: Arc::clone(&opens),
            fail: 1,
            calls: Arc::clone(&calls),
        }));
        assert_eq!(opens.load(SeqCst), 0, "nothing is opened before a call");
        let cancel = CancellationToken::new();
        let args = Map::new();
        let read = BrowserMember::ReadPage;
        let first = surface
            .call("c1", read, &args, Budget::default(), &cancel)
            .await;
        assert!(first.is_error);
        let text = format!("{:?}", first.content);
        assert!(
            text.contains("http://127.0.0.1:9/") && text.contains("call again"),
            "{text}"
        );
        assert_eq!((opens.load(SeqCst), calls.load(SeqCst)), (1, 0));
        surface
            .call("c2", read, &args, Budget::default(), &cancel)
            .await;
        surface
            .call("c3", read, &args, Budget::default(), &cancel)
            .await;
        assert_eq!((opens.load(SeqCst), calls.load(SeqCst)), (2, 2));
    }

    fn tabs_titled(title: &str) -> Value {
        json!({"tabs": [{"id": "t1", "title": title, "url": "https://a.test", "active": true}]})
    }

    /// An action that changed no tab answers with the driver's word alone (issue 21: at most 8
    /// tokens); a tab that changed is said after it.
    #[test]
    fn an_action_that_changed_no_tab_answers_its_word_alone() {
        let mut surface = BrowserSurface::lazy(Box::new(Flaky {
            opens: Arc::default(),
            fail: 0,
            calls: Arc::default(),
        }));
        let first = action_text("Clicked.", surface.state_change(Some(&tabs_titled("A"))));
        assert_eq!(first, "Clicked. New tab t1* \"A\" https://a.test.");
        surface.last_state = Some(tabs_titled("A"));
        let same = action_text("Clicked.", surface.state_change(Some(&tabs_titled("A"))));
        assert_eq!(same, "Clicked.");
        assert!(text_tokens(&same) <= 8, "{same}");
        let retitled = action_text("Clicked.", surface.state_change(Some(&tabs_titled("B"))));
        assert_eq!(retitled, "Clicked. Tab t1 is now titled \"B\".");
    }

    #[test]
    fn kept_reads_are_bounded() {
        let mut cache = ReadCache::default();
        let first = cache.keep(vec!["a".into()]);
        for _ in 0..KEPT_READS {
            cache.keep(vec!["b".into()]);
        }
        assert!(cache.get(first).is_none());
        assert!(cache.get(first + KEPT_READS as u32).is_some());
    }
}
