//! The [`Browser`] trait a driver implements, what its members return, and how it fails.
//!
//! A driver implements [`Browser::state`] and only the members it wants to expose (the others
//! answer [`DriverError::Unsupported`]); [`Browser::implemented`] says which. Every method takes
//! validated arguments and the call's cancellation token, and returns a type that cannot break
//! the spec's result rules (a read with duplicate refs, a file outcome with an impossible
//! status/effect pair, a null script result).
//!
//! Spec: openai-browser-desktop-drivers, "Contrato del controlador de navegador", "Manejar
//! fallos", "Habilitar diagnósticos, scripts y transferencias de archivos".

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::args::{
    BrowserCall, CssPoint, CssRegion, DiagnosticsSource, GrantId, KeyPress, PageUrl, PointerButton,
    ReadFilter, WaitText,
};
use super::read::{BrowserRead, BrowserScopedRead, Ref};
use super::state::{BrowserState, TabId};
use super::{BrowserMember, MemberSet};
use crate::image::EncodedImage;
use crate::input::{Key, ModifierSet, ScrollDirection};

/// A recoverable failure whose text is safe to show the model (a stale ref, an element that is
/// not a checkbox, a timeout). The driver vouches that the text carries no private data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserError(String);

impl BrowserError {
    /// A failure with text that is safe to show the model.
    pub fn new(safe_text: impl Into<String>) -> BrowserError {
        BrowserError(safe_text.into())
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for BrowserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How a driver call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriverError {
    /// A recoverable failure, shown to the model as it is.
    #[error("{0}")]
    Refused(BrowserError),
    /// Any other failure of the operation: the model sees a generic message, the detail goes to
    /// the logs only.
    #[error("browser operation failed: {0}")]
    Failed(String),
    /// The driver does not implement this member.
    #[error("the driver does not implement `{0}`")]
    Unsupported(BrowserMember),
    /// The browser or its connection is gone: a harness fault that stops the run.
    #[error("the browser is unavailable: {0}")]
    Gone(String),
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
}

impl DriverError {
    /// A recoverable failure with safe text.
    pub fn refused(safe_text: impl Into<String>) -> DriverError {
        DriverError::Refused(BrowserError::new(safe_text))
    }
}

/// What `read_page`, `get_page_text` and `find` return: text, or a structured read. `None` from
/// the driver means "only the updated state"; an empty string means a read with no text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadResult {
    /// Plain text.
    Text(String),
    /// `BrowserReadV1`.
    Structured(BrowserRead),
}

/// `status` of a file outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileStatus {
    /// Done; the effect happened.
    Completed,
    /// Refused before any effect.
    Refused,
    /// Nobody knows whether it happened.
    Unknown,
    /// Stopped part-way.
    Interrupted,
}

/// `effect` of a file outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileEffect {
    /// The effect happened.
    Completed,
    /// No effect.
    None,
    /// Unknown whether the effect happened.
    Unknown,
}

/// `cleanup` of a file outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileCleanup {
    /// Cleanup has not started.
    NotStarted,
    /// Cleanup is under way.
    Pending,
    /// Cleanup is done.
    Completed,
}

/// `BrowserFileOutcome`: `{version: 1, status, effect, cleanup}` with only the valid
/// status/effect pairs: completed/completed, refused/none, unknown/unknown,
/// interrupted/none, interrupted/unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileOutcome {
    status: FileStatus,
    effect: FileEffect,
    cleanup: FileCleanup,
}

impl FileOutcome {
    /// An outcome; `None` for a status/effect pair the spec does not allow.
    pub fn new(
        status: FileStatus,
        effect: FileEffect,
        cleanup: FileCleanup,
    ) -> Option<FileOutcome> {
        let valid = matches!(
            (status, effect),
            (FileStatus::Completed, FileEffect::Completed)
                | (FileStatus::Refused, FileEffect::None)
                | (FileStatus::Unknown, FileEffect::Unknown)
                | (
                    FileStatus::Interrupted,
                    FileEffect::None | FileEffect::Unknown
                )
        );
        valid.then_some(FileOutcome {
            status,
            effect,
            cleanup,
        })
    }

    /// The status.
    pub fn status(self) -> FileStatus {
        self.status
    }

    /// The effect.
    pub fn effect(self) -> FileEffect {
        self.effect
    }

    /// The cleanup state.
    pub fn cleanup(self) -> FileCleanup {
        self.cleanup
    }

    /// Only `completed` counts as success (`ok: true` in the tool output).
    pub fn ok(self) -> bool {
        self.status == FileStatus::Completed
    }

    /// The wire form `{version, status, effect, cleanup}`.
    pub fn to_json(self) -> Value {
        let status = match self.status {
            FileStatus::Completed => "completed",
            FileStatus::Refused => "refused",
            FileStatus::Unknown => "unknown",
            FileStatus::Interrupted => "interrupted",
        };
        let effect = match self.effect {
            FileEffect::Completed => "completed",
            FileEffect::None => "none",
            FileEffect::Unknown => "unknown",
        };
        let cleanup = match self.cleanup {
            FileCleanup::NotStarted => "not_started",
            FileCleanup::Pending => "pending",
            FileCleanup::Completed => "completed",
        };
        json!({"version": 1, "status": status, "effect": effect, "cleanup": cleanup})
    }
}

/// What a member returned, by kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrowserOutput {
    /// An action's acknowledgement, or nothing.
    Text(Option<String>),
    /// A read: text, a structured read, or nothing (state only).
    Read(Option<ReadResult>),
    /// A scoped read.
    ScopedRead(BrowserScopedRead),
    /// An image (screenshot, zoom).
    Image(EncodedImage),
    /// A script's text result (may be empty, never null).
    Script(String),
    /// A file transfer's outcome.
    File(FileOutcome),
    /// `list_tabs`: only the state, which the surface adds.
    StateOnly,
}

fn unsupported<T>(member: BrowserMember) -> Result<T, DriverError> {
    Err(DriverError::Unsupported(member))
}

/// A browser a model can drive.
///
/// Implement [`Browser::state`], [`Browser::implemented`] and the members to expose. `tab`
/// arguments that are `None` mean the active tab. A driver checks refs at the moment it acts (a
/// person may have approved minutes earlier), refuses scope refs in every mutating member, and
/// never reports a password's value.
#[async_trait]
#[allow(unused_variables)]
pub trait Browser: Send {
    /// The members this driver implements (`list_tabs` needs only `state`).
    fn implemented(&self) -> MemberSet;

    /// Every tab, raw (the surface filters what the model sees).
    async fn state(&mut self, cancel: &CancellationToken) -> Result<BrowserState, DriverError>;

    /// `navigate`.
    async fn navigate(
        &mut self,
        url: &PageUrl,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::Navigate)
    }

    /// `read_page`.
    async fn read_page(
        &mut self,
        filter: ReadFilter,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        unsupported(BrowserMember::ReadPage)
    }

    /// `get_page_text`: a structured result must have no elements.
    async fn get_page_text(
        &mut self,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        unsupported(BrowserMember::GetPageText)
    }

    /// `find`.
    async fn find(
        &mut self,
        query: &str,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<ReadResult>, DriverError> {
        unsupported(BrowserMember::Find)
    }

    /// `click`.
    async fn click(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::Click)
    }

    /// `type`: into `target`, or the focused element when `None`.
    async fn type_text(
        &mut self,
        text: &str,
        target: Option<&Ref>,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::Type)
    }

    /// `key`: presses in order, each a key or a chord.
    async fn key(
        &mut self,
        keys: &[KeyPress],
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::Key)
    }

    /// `scroll` by `amount` CSS pixels.
    async fn scroll(
        &mut self,
        direction: ScrollDirection,
        amount: u64,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::Scroll)
    }

    /// `scroll` with the wheel at viewport CSS coordinates instead of the middle of the
    /// viewport, so the area under the point scrolls (Claude's browser toolset's `scroll`
    /// `target`). Not in the driver spec: a driver without it answers `Unsupported`.
    async fn scroll_at(
        &mut self,
        at: CssPoint,
        direction: ScrollDirection,
        amount: u64,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::Scroll)
    }

    /// `scroll_to`.
    async fn scroll_to(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::ScrollTo)
    }

    /// `wait_for`: until the normalised text is visible, or the timeout.
    async fn wait_for(
        &mut self,
        text: &WaitText,
        timeout: Duration,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::WaitFor)
    }

    /// `select_option`.
    async fn select_option(
        &mut self,
        target: &Ref,
        values: &[String],
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::SelectOption)
    }

    /// `hover`.
    async fn hover(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::Hover)
    }

    /// `screenshot` of the viewport.
    async fn screenshot(
        &mut self,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<EncodedImage, DriverError> {
        unsupported(BrowserMember::Screenshot)
    }

    /// `zoom` on a viewport region.
    async fn zoom(
        &mut self,
        region: CssRegion,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<EncodedImage, DriverError> {
        unsupported(BrowserMember::Zoom)
    }

    /// `new_tab`: opens a tab (blank for `None`) and makes it the only active one.
    async fn new_tab(
        &mut self,
        url: Option<&PageUrl>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::NewTab)
    }

    /// `switch_tab`.
    async fn switch_tab(
        &mut self,
        tab: &TabId,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::SwitchTab)
    }

    /// `close_tab`.
    async fn close_tab(
        &mut self,
        tab: &TabId,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::CloseTab)
    }

    /// `read_page_scoped`.
    async fn read_page_scoped(
        &mut self,
        root: Option<&Ref>,
        depth: u8,
        filter: ReadFilter,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<BrowserScopedRead, DriverError> {
        unsupported(BrowserMember::ReadPageScoped)
    }

    /// `click_at` viewport CSS coordinates.
    async fn click_at(
        &mut self,
        at: CssPoint,
        button: PointerButton,
        click_count: u8,
        keys: ModifierSet,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::ClickAt)
    }

    /// `drag_path` through viewport CSS coordinates.
    async fn drag_path(
        &mut self,
        path: &[CssPoint],
        keys: ModifierSet,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::DragPath)
    }

    /// `hold_keys`.
    async fn hold_keys(
        &mut self,
        keys: &[Key],
        duration: Duration,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::HoldKeys)
    }

    /// `hover_at`.
    async fn hover_at(
        &mut self,
        at: CssPoint,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::HoverAt)
    }

    /// Presses (`press`) or releases the left mouse button at viewport coordinates; a pressed
    /// button stays down until released, and pointer moves in between drag. Not in the driver
    /// spec (Claude's browser toolset's `left_mouse_down` / `left_mouse_up`): a driver without
    /// it answers `Unsupported`.
    async fn mouse_button(
        &mut self,
        at: CssPoint,
        press: bool,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::DragPath)
    }

    /// `set_checked`: idempotent, on the original target only.
    async fn set_checked(
        &mut self,
        target: &Ref,
        checked: bool,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        unsupported(BrowserMember::SetChecked)
    }

    /// `read_diagnostics`: a text-only read, private data filtered.
    async fn read_diagnostics(
        &mut self,
        source: DiagnosticsSource,
        limit: u32,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<BrowserRead, DriverError> {
        unsupported(BrowserMember::ReadDiagnostics)
    }

    /// `run_script`: the script's text result.
    async fn run_script(
        &mut self,
        source: &str,
        timeout: Duration,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<String, DriverError> {
        unsupported(BrowserMember::RunScript)
    }

    /// `upload_file`.
    async fn upload_file(
        &mut self,
        grant: &GrantId,
        cancel: &CancellationToken,
    ) -> Result<FileOutcome, DriverError> {
        unsupported(BrowserMember::UploadFile)
    }

    /// `download_file`.
    async fn download_file(
        &mut self,
        grant: &GrantId,
        cancel: &CancellationToken,
    ) -> Result<FileOutcome, DriverError> {
        unsupported(BrowserMember::DownloadFile)
    }
}

/// Runs a validated call on a driver. `list_tabs` never reaches the driver: it is the state.
pub async fn dispatch<B: Browser + ?Sized>(
    browser: &mut B,
    call: &BrowserCall,
    cancel: &CancellationToken,
) -> Result<BrowserOutput, DriverError> {
    use BrowserCall as C;
    use BrowserOutput as O;
    Ok(match call {
        C::Navigate { url, tab } => O::Text(browser.navigate(url, tab.as_ref(), cancel).await?),
        C::ReadPage { filter, tab } => {
            O::Read(browser.read_page(*filter, tab.as_ref(), cancel).await?)
        }
        C::GetPageText { tab } => O::Read(browser.get_page_text(tab.as_ref(), cancel).await?),
        C::Find { query, tab } => O::Read(browser.find(query, tab.as_ref(), cancel).await?),
        C::Click { target, tab } => O::Text(browser.click(target, tab.as_ref(), cancel).await?),
        C::Type { text, target, tab } => O::Text(
            browser
                .type_text(text, target.as_ref(), tab.as_ref(), cancel)
                .await?,
        ),
        C::Key { keys, tab } => O::Text(browser.key(keys, tab.as_ref(), cancel).await?),
        C::Scroll {
            direction,
            amount,
            at: None,
            tab,
        } => O::Text(
            browser
                .scroll(*direction, *amount, tab.as_ref(), cancel)
                .await?,
        ),
        C::Scroll {
            direction,
            amount,
            at: Some(at),
            tab,
        } => O::Text(
            browser
                .scroll_at(*at, *direction, *amount, tab.as_ref(), cancel)
                .await?,
        ),
        C::ScrollTo { target, tab } => {
            O::Text(browser.scroll_to(target, tab.as_ref(), cancel).await?)
        }
        C::WaitFor { text, timeout, tab } => O::Text(
            browser
                .wait_for(text, *timeout, tab.as_ref(), cancel)
                .await?,
        ),
        C::SelectOption {
            target,
            values,
            tab,
        } => O::Text(
            browser
                .select_option(target, values, tab.as_ref(), cancel)
                .await?,
        ),
        C::Hover { target, tab } => O::Text(browser.hover(target, tab.as_ref(), cancel).await?),
        C::Screenshot { tab } => O::Image(browser.screenshot(tab.as_ref(), cancel).await?),
        C::Zoom { region, tab } => O::Image(browser.zoom(*region, tab.as_ref(), cancel).await?),
        C::NewTab { url } => O::Text(browser.new_tab(url.as_ref(), cancel).await?),
        C::ListTabs => O::StateOnly,
        C::SwitchTab { tab } => O::Text(browser.switch_tab(tab, cancel).await?),
        C::CloseTab { tab } => O::Text(browser.close_tab(tab, cancel).await?),
        C::ReadPageScoped {
            tab,
            root,
            depth,
            filter,
        } => O::ScopedRead(
            browser
                .read_page_scoped(root.as_ref(), *depth, *filter, tab.as_ref(), cancel)
                .await?,
        ),
        C::ClickAt {
            tab,
            at,
            button,
            click_count,
            keys,
        } => O::Text(
            browser
                .click_at(*at, *button, *click_count, *keys, tab.as_ref(), cancel)
                .await?,
        ),
        C::DragPath { tab, path, keys } => {
            O::Text(browser.drag_path(path, *keys, tab.as_ref(), cancel).await?)
        }
        C::HoldKeys {
            tab,
            keys,
            duration,
        } => O::Text(
            browser
                .hold_keys(keys, *duration, tab.as_ref(), cancel)
                .await?,
        ),
        C::HoverAt { tab, at } => O::Text(browser.hover_at(*at, tab.as_ref(), cancel).await?),
        C::MouseButton { tab, at, press } => O::Text(
            browser
                .mouse_button(*at, *press, tab.as_ref(), cancel)
                .await?,
        ),
        C::SetChecked {
            tab,
            target,
            checked,
        } => O::Text(
            browser
                .set_checked(target, *checked, tab.as_ref(), cancel)
                .await?,
        ),
        C::ReadDiagnostics { tab, source, limit } => O::Read(Some(ReadResult::Structured(
            browser
                .read_diagnostics(*source, *limit, tab.as_ref(), cancel)
                .await?,
        ))),
        C::RunScript {
            tab,
            source,
            timeout,
        } => O::Script(
            browser
                .run_script(source, *timeout, tab.as_ref(), cancel)
                .await?,
        ),
        C::UploadFile { grant } => O::File(browser.upload_file(grant, cancel).await?),
        C::DownloadFile { grant } => O::File(browser.download_file(grant, cancel).await?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_outcomes_allow_only_the_spec_pairs() {
        use FileCleanup::NotStarted as N;
        use FileEffect as E;
        use FileStatus as S;
        let valid = [
            (S::Completed, E::Completed),
            (S::Refused, E::None),
            (S::Unknown, E::Unknown),
            (S::Interrupted, E::None),
            (S::Interrupted, E::Unknown),
        ];
        for s in [S::Completed, S::Refused, S::Unknown, S::Interrupted] {
            for e in [E::Completed, E::None, E::Unknown] {
                assert_eq!(
                    FileOutcome::new(s, e, N).is_some(),
                    valid.contains(&(s, e)),
                    "{s:?} {e:?}"
                );
            }
        }
        let done = FileOutcome::new(S::Completed, E::Completed, FileCleanup::Completed).unwrap();
        assert!(done.ok());
        assert_eq!(
            done.to_json(),
            json!({"version": 1, "status": "completed", "effect": "completed", "cleanup": "completed"})
        );
        assert!(
            !FileOutcome::new(S::Unknown, E::Unknown, FileCleanup::Pending)
                .unwrap()
                .ok()
        );
    }

    struct StateOnly;

    #[async_trait]
    impl Browser for StateOnly {
        fn implemented(&self) -> MemberSet {
            MemberSet::EMPTY
        }
        async fn state(&mut self, _: &CancellationToken) -> Result<BrowserState, DriverError> {
            Ok(BrowserState::default())
        }
    }

    #[tokio::test]
    async fn unimplemented_members_say_so() {
        let cancel = CancellationToken::new();
        let mut b = StateOnly;
        let call = BrowserCall::GetPageText { tab: None };
        assert!(matches!(
            dispatch(&mut b, &call, &cancel).await,
            Err(DriverError::Unsupported(BrowserMember::GetPageText))
        ));
        assert_eq!(
            dispatch(&mut b, &BrowserCall::ListTabs, &cancel)
                .await
                .unwrap(),
            BrowserOutput::StateOnly
        );
    }
}
