//! The [`Browser`] trait for [`CdpBrowser`]: each member delegates to its family's module.
//!
//! Spec: openai-browser-desktop-drivers, "Contrato del controlador de navegador".

use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use hands_core::browser::args::ReadFilter;
use hands_core::browser::args::{
    CssPoint, CssRegion, DiagnosticsSource, GrantId, KeyPress, PageUrl, PointerButton, WaitText,
};
use hands_core::browser::driver::ReadResult;
use hands_core::browser::read::Ref;
use hands_core::browser::{
    Browser, BrowserMember, BrowserRead, BrowserScopedRead, BrowserState, DriverError, FileOutcome,
    MemberSet, TabId,
};
use hands_core::image::EncodedImage;
use hands_core::input::{Key, ModifierSet, ScrollDirection};

use crate::driver::CdpBrowser;
use crate::refs::rebound_note;

/// Runs a member unless the call was already cancelled.
fn not_cancelled(cancel: &CancellationToken) -> Result<(), DriverError> {
    if cancel.is_cancelled() {
        Err(DriverError::Cancelled)
    } else {
        Ok(())
    }
}

impl CdpBrowser {
    /// A ref member's answer, telling every ref that followed a re-render to its element's
    /// successor during it (a refusal after the re-bind tells it too).
    fn told(
        &mut self,
        result: Result<Option<String>, DriverError>,
    ) -> Result<Option<String>, DriverError> {
        if self.rebound.is_empty() {
            return result;
        }
        let notes: Vec<String> = self.rebound.drain(..).map(|r| rebound_note(&r)).collect();
        let notes = notes.join(" ");
        match result {
            Ok(Some(text)) => Ok(Some(format!("{text} {notes}"))),
            Ok(None) => Ok(Some(notes)),
            Err(DriverError::Refused(e)) => {
                Err(DriverError::refused(format!("{} {notes}", e.text())))
            }
            Err(e) => Err(e),
        }
    }
}

#[async_trait]
impl Browser for CdpBrowser {
    fn implemented(&self) -> MemberSet {
        let mut set = MemberSet::all();
        if self.config.grants.is_none() {
            set.remove(BrowserMember::UploadFile);
            set.remove(BrowserMember::DownloadFile);
        }
        set
    }

    async fn state(&mut self, cancel: &CancellationToken) -> Result<BrowserState, DriverError> {
        not_cancelled(cancel)?;
        self.state_impl().await
    }

    /// Spec: openai-browser-desktop-drivers, "navigate", with the request-level policy applied to
    /// every hop.
    async fn navigate(
        &mut self,
        url: &PageUrl,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.navigate_impl(url, tab, cancel).await
    }

    /// Spec: openai-browser-desktop-drivers, "read_page".
    async fn read_page(
        &mut self,
        filter: ReadFilter,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        not_cancelled(cancel)?;
        let read = self.read_page_impl(filter, tab, cancel).await?;
        Ok(Some(ReadResult::Structured(read)))
    }

    /// Spec: openai-browser-desktop-drivers, "get_page_text".
    async fn get_page_text(
        &mut self,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        not_cancelled(cancel)?;
        let read = self.page_text_impl(tab, cancel).await?;
        Ok(Some(ReadResult::Structured(read)))
    }

    /// Spec: openai-browser-desktop-drivers, "find".
    async fn find(
        &mut self,
        query: &str,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        not_cancelled(cancel)?;
        let read = self.find_impl(query, tab, cancel).await?;
        Ok(Some(ReadResult::Structured(read)))
    }

    /// Spec: openai-browser-desktop-drivers, "click".
    async fn click(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.rebound.clear();
        let result = self.click_impl(target, tab, cancel).await;
        self.told(result)
    }

    /// Spec: openai-browser-desktop-drivers, "type".
    async fn type_text(
        &mut self,
        text: &str,
        target: Option<&Ref>,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.rebound.clear();
        let result = self.type_impl(text, target, tab, cancel).await;
        self.told(result)
    }

    /// Spec: openai-browser-desktop-drivers, "key".
    async fn key(
        &mut self,
        keys: &[KeyPress],
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.key_impl(keys, tab, cancel).await
    }

    /// Spec: openai-browser-desktop-drivers, "scroll".
    async fn scroll(
        &mut self,
        direction: ScrollDirection,
        amount: u64,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.scroll_impl(None, direction, amount, tab, cancel).await
    }

    /// `scroll` with the wheel at a viewport point (Claude's browser toolset).
    async fn scroll_at(
        &mut self,
        at: CssPoint,
        direction: ScrollDirection,
        amount: u64,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.scroll_impl(Some(at), direction, amount, tab, cancel)
            .await
    }

    /// Spec: openai-browser-desktop-drivers, "scroll_to".
    async fn scroll_to(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.rebound.clear();
        let result = self.scroll_to_impl(target, tab, cancel).await;
        self.told(result)
    }

    /// Spec: openai-browser-desktop-drivers, "wait_for".
    async fn wait_for(
        &mut self,
        text: &WaitText,
        timeout: Duration,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.wait_for_impl(text, timeout, tab, cancel).await
    }

    /// Spec: openai-browser-desktop-drivers, "select_option".
    async fn select_option(
        &mut self,
        target: &Ref,
        values: &[String],
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.rebound.clear();
        let result = self.select_option_impl(target, values, tab, cancel).await;
        self.told(result)
    }

    /// Spec: openai-browser-desktop-drivers, "hover".
    async fn hover(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.rebound.clear();
        let result = self.hover_impl(target, tab, cancel).await;
        self.told(result)
    }

    /// Spec: openai-browser-desktop-drivers, "screenshot".
    async fn screenshot(
        &mut self,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<EncodedImage, DriverError> {
        not_cancelled(cancel)?;
        self.screenshot_impl(tab, cancel).await
    }

    /// Spec: openai-browser-desktop-drivers, "zoom".
    async fn zoom(
        &mut self,
        region: CssRegion,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<EncodedImage, DriverError> {
        not_cancelled(cancel)?;
        self.zoom_impl(region, tab, cancel).await
    }

    /// Spec: openai-browser-desktop-drivers, "new_tab".
    async fn new_tab(
        &mut self,
        url: Option<&PageUrl>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.new_tab_impl(url, cancel).await
    }

    /// Spec: openai-browser-desktop-drivers, "switch_tab".
    async fn switch_tab(
        &mut self,
        tab: &TabId,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.switch_tab_impl(tab, cancel).await
    }

    /// Spec: openai-browser-desktop-drivers, "close_tab".
    async fn close_tab(
        &mut self,
        tab: &TabId,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.close_tab_impl(tab, cancel).await
    }

    /// Spec: openai-browser-desktop-drivers, "Leer dentro de una sección".
    async fn read_page_scoped(
        &mut self,
        root: Option<&Ref>,
        depth: u8,
        filter: ReadFilter,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<BrowserScopedRead, DriverError> {
        not_cancelled(cancel)?;
        self.scoped_impl(root, depth, filter, tab, cancel).await
    }

    /// Spec: openai-browser-desktop-drivers, "click_at".
    async fn click_at(
        &mut self,
        at: CssPoint,
        button: PointerButton,
        click_count: u8,
        keys: ModifierSet,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.click_at_impl(at, button, click_count, keys, tab, cancel)
            .await
    }

    /// Spec: openai-browser-desktop-drivers, "drag_path".
    async fn drag_path(
        &mut self,
        path: &[CssPoint],
        keys: ModifierSet,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.drag_path_impl(path, keys, tab, cancel).await
    }

    /// Spec: openai-browser-desktop-drivers, "hold_keys".
    async fn hold_keys(
        &mut self,
        keys: &[Key],
        duration: Duration,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.hold_keys_impl(keys, duration, tab, cancel).await
    }

    /// Spec: openai-browser-desktop-drivers, "hover_at".
    async fn hover_at(
        &mut self,
        at: CssPoint,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.hover_at_impl(at, tab, cancel).await
    }

    /// Claude's `left_mouse_down` / `left_mouse_up`: the button stays down between calls.
    async fn mouse_button(
        &mut self,
        at: CssPoint,
        press: bool,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.mouse_button_impl(at, press, tab, cancel).await
    }

    /// Spec: openai-browser-desktop-drivers, "set_checked".
    async fn set_checked(
        &mut self,
        target: &Ref,
        checked: bool,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        not_cancelled(cancel)?;
        self.rebound.clear();
        let result = self.set_checked_impl(target, checked, tab, cancel).await;
        self.told(result)
    }

    /// Spec: openai-browser-desktop-drivers, "read_diagnostics".
    async fn read_diagnostics(
        &mut self,
        source: DiagnosticsSource,
        limit: u32,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<BrowserRead, DriverError> {
        not_cancelled(cancel)?;
        self.read_diagnostics_impl(source, limit, tab).await
    }

    /// Spec: openai-browser-desktop-drivers, "run_script".
    async fn run_script(
        &mut self,
        source: &str,
        timeout: Duration,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<String, DriverError> {
        not_cancelled(cancel)?;
        self.run_script_impl(source, timeout, tab, cancel).await
    }

    /// Spec: openai-browser-desktop-drivers, "upload_file".
    async fn upload_file(
        &mut self,
        grant: &GrantId,
        cancel: &CancellationToken,
    ) -> Result<FileOutcome, DriverError> {
        not_cancelled(cancel)?;
        self.upload_impl(grant, cancel).await
    }

    /// Spec: openai-browser-desktop-drivers, "download_file".
    async fn download_file(
        &mut self,
        grant: &GrantId,
        cancel: &CancellationToken,
    ) -> Result<FileOutcome, DriverError> {
        not_cancelled(cancel)?;
        self.download_impl(grant, cancel).await
    }
}
