//! Drivers that forward every call to a real driver and write down what reached it, so the
//! differential suite can say which model calls acted (the SDK side records the same thing with
//! its fake drivers).
//!
//! A state read, a screen-size query, a settle or a pointer query is bookkeeping, not an act:
//! only the calls a member makes to press, move, type, capture, read or navigate are written.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_core::browser::args::{
    CssPoint, CssRegion, DiagnosticsSource, GrantId, KeyPress, PageUrl, PointerButton, ReadFilter,
    WaitText,
};
use hands_core::browser::driver::ReadResult;
use hands_core::browser::read::Ref;
use hands_core::browser::{
    Browser, BrowserRead, BrowserScopedRead, BrowserState, DriverError, FileOutcome, MemberSet,
    TabId,
};
use hands_core::desktop::{Desktop, DesktopError, ScreenInfo, SettleBudget, SettleReport};
use hands_core::geometry::ScreenPoint;
use hands_core::image::{EncodedImage, Pixels};
use hands_core::input::{Button, Key, KeyChord, ModifierSet, ScrollDirection};

/// The driver calls that reached a driver, in order; shared between the recording driver and
/// whoever reads it.
#[derive(Debug, Clone, Default)]
pub struct Log(Arc<Mutex<Vec<&'static str>>>);

impl Log {
    fn push(&self, call: &'static str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(call);
    }

    /// Takes the calls written since the last take.
    pub fn take(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// A desktop that writes each act down before forwarding it.
pub struct RecordedDesktop<D> {
    inner: D,
    log: Log,
}

impl<D> RecordedDesktop<D> {
    /// Wraps `inner`, writing to `log`.
    pub fn new(inner: D, log: Log) -> RecordedDesktop<D> {
        RecordedDesktop { inner, log }
    }
}

#[async_trait]
impl<D: Desktop> Desktop for RecordedDesktop<D> {
    fn screen(&self) -> ScreenInfo {
        self.inner.screen()
    }
    async fn capture(&mut self) -> Result<Pixels, DesktopError> {
        self.log.push("capture");
        self.inner.capture().await
    }
    async fn settle(
        &mut self,
        budget: SettleBudget,
        cancel: &CancellationToken,
    ) -> Result<SettleReport, DesktopError> {
        self.inner.settle(budget, cancel).await
    }
    async fn move_pointer(&mut self, to: ScreenPoint) -> Result<(), DesktopError> {
        self.log.push("move_pointer");
        self.inner.move_pointer(to).await
    }
    async fn pointer(&mut self) -> Result<ScreenPoint, DesktopError> {
        self.log.push("pointer");
        self.inner.pointer().await
    }
    async fn click(
        &mut self,
        at: Option<ScreenPoint>,
        button: Button,
        count: u8,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError> {
        self.log.push("click");
        self.inner.click(at, button, count, modifiers).await
    }
    async fn button(&mut self, button: Button, pressed: bool) -> Result<(), DesktopError> {
        self.log.push("button");
        self.inner.button(button, pressed).await
    }
    async fn drag(
        &mut self,
        path: &[ScreenPoint],
        button: Button,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError> {
        self.log.push("drag");
        self.inner.drag(path, button, modifiers).await
    }
    async fn scroll(
        &mut self,
        at: Option<ScreenPoint>,
        direction: ScrollDirection,
        clicks: u32,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError> {
        self.log.push("scroll");
        self.inner.scroll(at, direction, clicks, modifiers).await
    }
    async fn key_chord(&mut self, chord: &KeyChord) -> Result<(), DesktopError> {
        self.log.push("key_chord");
        self.inner.key_chord(chord).await
    }
    async fn key_hold(&mut self, chord: &KeyChord, down: bool) -> Result<(), DesktopError> {
        self.log.push("key_hold");
        self.inner.key_hold(chord, down).await
    }
    async fn type_text(
        &mut self,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<(), DesktopError> {
        self.log.push("type_text");
        self.inner.type_text(text, cancel).await
    }
}

/// A browser that writes each member call down before forwarding it.
pub struct RecordedBrowser<B> {
    inner: B,
    log: Log,
}

impl<B> RecordedBrowser<B> {
    /// Wraps `inner`, writing to `log`.
    pub fn new(inner: B, log: Log) -> RecordedBrowser<B> {
        RecordedBrowser { inner, log }
    }

    /// The real driver back.
    pub fn into_inner(self) -> B {
        self.inner
    }
}

#[async_trait]
impl<B: Browser> Browser for RecordedBrowser<B> {
    fn implemented(&self) -> MemberSet {
        self.inner.implemented()
    }
    async fn state(&mut self, cancel: &CancellationToken) -> Result<BrowserState, DriverError> {
        self.inner.state(cancel).await
    }
    async fn navigate(
        &mut self,
        url: &PageUrl,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("navigate");
        self.inner.navigate(url, tab, cancel).await
    }
    async fn read_page(
        &mut self,
        filter: ReadFilter,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        self.log.push("read_page");
        self.inner.read_page(filter, tab, cancel).await
    }
    async fn get_page_text(
        &mut self,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        self.log.push("get_page_text");
        self.inner.get_page_text(tab, cancel).await
    }
    async fn find(
        &mut self,
        query: &str,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        self.log.push("find");
        self.inner.find(query, tab, cancel).await
    }
    async fn click(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("click");
        self.inner.click(target, tab, cancel).await
    }
    async fn type_text(
        &mut self,
        text: &str,
        target: Option<&Ref>,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("type");
        self.inner.type_text(text, target, tab, cancel).await
    }
    async fn key(
        &mut self,
        keys: &[KeyPress],
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("key");
        self.inner.key(keys, tab, cancel).await
    }
    async fn scroll(
        &mut self,
        direction: ScrollDirection,
        amount: u64,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("scroll");
        self.inner.scroll(direction, amount, tab, cancel).await
    }
    async fn scroll_at(
        &mut self,
        at: CssPoint,
        direction: ScrollDirection,
        amount: u64,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("scroll");
        self.inner
            .scroll_at(at, direction, amount, tab, cancel)
            .await
    }
    async fn scroll_to(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("scroll_to");
        self.inner.scroll_to(target, tab, cancel).await
    }
    async fn wait_for(
        &mut self,
        text: &WaitText,
        timeout: Duration,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("wait_for");
        self.inner.wait_for(text, timeout, tab, cancel).await
    }
    async fn select_option(
        &mut self,
        target: &Ref,
        values: &[String],
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("select_option");
        self.inner.select_option(target, values, tab, cancel).await
    }
    async fn hover(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("hover");
        self.inner.hover(target, tab, cancel).await
    }
    async fn screenshot(
        &mut self,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<EncodedImage, DriverError> {
        self.log.push("screenshot");
        self.inner.screenshot(tab, cancel).await
    }
    async fn zoom(
        &mut self,
        region: CssRegion,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<EncodedImage, DriverError> {
        self.log.push("zoom");
        self.inner.zoom(region, tab, cancel).await
    }
    async fn new_tab(
        &mut self,
        url: Option<&PageUrl>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("new_tab");
        self.inner.new_tab(url, cancel).await
    }
    async fn switch_tab(
        &mut self,
        tab: &TabId,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("switch_tab");
        self.inner.switch_tab(tab, cancel).await
    }
    async fn close_tab(
        &mut self,
        tab: &TabId,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("close_tab");
        self.inner.close_tab(tab, cancel).await
    }
    async fn read_page_scoped(
        &mut self,
        root: Option<&Ref>,
        depth: u8,
        filter: ReadFilter,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<BrowserScopedRead, DriverError> {
        self.log.push("read_page_scoped");
        self.inner
            .read_page_scoped(root, depth, filter, tab, cancel)
            .await
    }
    async fn click_at(
        &mut self,
        at: CssPoint,
        button: PointerButton,
        click_count: u8,
        keys: ModifierSet,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("click_at");
        self.inner
            .click_at(at, button, click_count, keys, tab, cancel)
            .await
    }
    async fn drag_path(
        &mut self,
        path: &[CssPoint],
        keys: ModifierSet,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("drag_path");
        self.inner.drag_path(path, keys, tab, cancel).await
    }
    async fn hold_keys(
        &mut self,
        keys: &[Key],
        duration: Duration,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("hold_keys");
        self.inner.hold_keys(keys, duration, tab, cancel).await
    }
    async fn hover_at(
        &mut self,
        at: CssPoint,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("hover_at");
        self.inner.hover_at(at, tab, cancel).await
    }
    async fn mouse_button(
        &mut self,
        at: CssPoint,
        press: bool,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push(if press {
            "left_mouse_down"
        } else {
            "left_mouse_up"
        });
        self.inner.mouse_button(at, press, tab, cancel).await
    }
    async fn set_checked(
        &mut self,
        target: &Ref,
        checked: bool,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        self.log.push("set_checked");
        self.inner.set_checked(target, checked, tab, cancel).await
    }
    async fn read_diagnostics(
        &mut self,
        source: DiagnosticsSource,
        limit: u32,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<BrowserRead, DriverError> {
        self.log.push("read_diagnostics");
        self.inner
            .read_diagnostics(source, limit, tab, cancel)
            .await
    }
    async fn run_script(
        &mut self,
        source: &str,
        timeout: Duration,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<String, DriverError> {
        self.log.push("run_script");
        self.inner.run_script(source, timeout, tab, cancel).await
    }
    async fn upload_file(
        &mut self,
        grant: &GrantId,
        cancel: &CancellationToken,
    ) -> Result<FileOutcome, DriverError> {
        self.log.push("upload_file");
        self.inner.upload_file(grant, cancel).await
    }
    async fn download_file(
        &mut self,
        grant: &GrantId,
        cancel: &CancellationToken,
    ) -> Result<FileOutcome, DriverError> {
        self.log.push("download_file");
        self.inner.download_file(grant, cancel).await
    }
}
