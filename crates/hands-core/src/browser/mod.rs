//! The browser driver contract: the 28 members a browser toolset may expose, their validated
//! arguments, what a driver returns (tab state, structured reads with refs, images, file
//! outcomes), and the [`Browser`] trait a driver implements.
//!
//! Surfaces (the function-tool browser toolset, Claude's browser toolset) parse model JSON into
//! [`BrowserCall`]s and apply consent, URL policy and privacy filtering; drivers (Chromium over
//! CDP) execute validated calls and report the raw truth. Neither side can build an argument or a
//! read that breaks the spec's limits: the constructors here refuse them.
//!
//! Spec: openai-browser-desktop-drivers, "Contrato del controlador de navegador" and the sections
//! after it up to "Contrato del controlador de computadora".

pub mod args;
pub mod changes;
pub mod driver;
pub mod read;
pub mod state;

use std::fmt;

pub use args::{ArgError, BrowserCall, PageUrl, ReadFilter};
pub use driver::{Browser, BrowserError, BrowserOutput, DriverError, FileOutcome};
pub use read::{BrowserRead, BrowserScopedRead, Kind, ReadElement, Role};
pub use state::{BrowserState, TabId, TabInfo};

/// A member (method) of the browser toolset.
///
/// Spec: openai-browser-desktop-drivers, "Seleccionar métodos", "Habilitar los métodos de lectura
/// por sección y de puntero", "Habilitar diagnósticos, scripts y transferencias de archivos".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BrowserMember {
    /// `navigate {url, tab_id}`.
    Navigate,
    /// `read_page {filter, tab_id}`.
    ReadPage,
    /// `get_page_text {tab_id}`.
    GetPageText,
    /// `find {query, tab_id}`.
    Find,
    /// `click {target, tab_id}`.
    Click,
    /// `type {text, target, tab_id}`.
    Type,
    /// `key {keys, tab_id}`.
    Key,
    /// `scroll {direction, amount, tab_id}`.
    Scroll,
    /// `scroll_to {target, tab_id}`.
    ScrollTo,
    /// `wait_for {text, timeout_ms, tab_id}`.
    WaitFor,
    /// `select_option {target, values, tab_id}`.
    SelectOption,
    /// `hover {target, tab_id}`.
    Hover,
    /// `screenshot {tab_id}`.
    Screenshot,
    /// `zoom {region, tab_id}`.
    Zoom,
    /// `new_tab {url}`.
    NewTab,
    /// `list_tabs {}`: derived from `state()`, never implemented by a driver.
    ListTabs,
    /// `switch_tab {tab_id}`.
    SwitchTab,
    /// `close_tab {tab_id}`.
    CloseTab,
    /// `read_page_scoped {tab_id, root, depth, filter}` (opt-in).
    ReadPageScoped,
    /// `click_at {tab_id, x, y, button, click_count, keys}` (opt-in).
    ClickAt,
    /// `drag_path {tab_id, path, keys}` (opt-in).
    DragPath,
    /// `hold_keys {tab_id, keys, duration_ms}` (opt-in).
    HoldKeys,
    /// `hover_at {tab_id, x, y}` (opt-in).
    HoverAt,
    /// `set_checked {tab_id, target, checked}` (opt-in).
    SetChecked,
    /// `read_diagnostics {tab_id, source, limit}` (opt-in).
    ReadDiagnostics,
    /// `run_script {tab_id, source, timeout_ms}` (opt-in).
    RunScript,
    /// `upload_file {grant_id}` (opt-in).
    UploadFile,
    /// `download_file {grant_id}` (opt-in).
    DownloadFile,
}

/// Which group a member belongs to: the 18 defaults, or one of the two opt-in groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemberGroup {
    /// Exposed by default when implemented.
    Default,
    /// Pointer and scoped-read members, off until selected.
    PointerScoped,
    /// Diagnostics, script and file members, off until selected.
    DiagnosticsScriptFile,
}

impl BrowserMember {
    /// All 28, in the toolset's fixed tool order: the defaults first, in the spec's table order,
    /// then the pointer/scoped group, then diagnostics/script/file.
    pub const ALL: [BrowserMember; 28] = [
        BrowserMember::Navigate,
        BrowserMember::ReadPage,
        BrowserMember::GetPageText,
        BrowserMember::Find,
        BrowserMember::Click,
        BrowserMember::Type,
        BrowserMember::Key,
        BrowserMember::Scroll,
        BrowserMember::ScrollTo,
        BrowserMember::WaitFor,
        BrowserMember::SelectOption,
        BrowserMember::Hover,
        BrowserMember::Screenshot,
        BrowserMember::Zoom,
        BrowserMember::NewTab,
        BrowserMember::ListTabs,
        BrowserMember::SwitchTab,
        BrowserMember::CloseTab,
        BrowserMember::ReadPageScoped,
        BrowserMember::ClickAt,
        BrowserMember::DragPath,
        BrowserMember::HoldKeys,
        BrowserMember::HoverAt,
        BrowserMember::SetChecked,
        BrowserMember::ReadDiagnostics,
        BrowserMember::RunScript,
        BrowserMember::UploadFile,
        BrowserMember::DownloadFile,
    ];

    /// The 18 members exposed by default (when the driver implements them).
    pub fn defaults() -> impl Iterator<Item = BrowserMember> {
        BrowserMember::ALL
            .into_iter()
            .filter(|m| m.group() == MemberGroup::Default)
    }

    /// The wire name.
    pub const fn name(self) -> &'static str {
        match self {
            BrowserMember::Navigate => "navigate",
            BrowserMember::ReadPage => "read_page",
            BrowserMember::GetPageText => "get_page_text",
            BrowserMember::Find => "find",
            BrowserMember::Click => "click",
            BrowserMember::Type => "type",
            BrowserMember::Key => "key",
            BrowserMember::Scroll => "scroll",
            BrowserMember::ScrollTo => "scroll_to",
            BrowserMember::WaitFor => "wait_for",
            BrowserMember::SelectOption => "select_option",
            BrowserMember::Hover => "hover",
            BrowserMember::Screenshot => "screenshot",
            BrowserMember::Zoom => "zoom",
            BrowserMember::NewTab => "new_tab",
            BrowserMember::ListTabs => "list_tabs",
            BrowserMember::SwitchTab => "switch_tab",
            BrowserMember::CloseTab => "close_tab",
            BrowserMember::ReadPageScoped => "read_page_scoped",
            BrowserMember::ClickAt => "click_at",
            BrowserMember::DragPath => "drag_path",
            BrowserMember::HoldKeys => "hold_keys",
            BrowserMember::HoverAt => "hover_at",
            BrowserMember::SetChecked => "set_checked",
            BrowserMember::ReadDiagnostics => "read_diagnostics",
            BrowserMember::RunScript => "run_script",
            BrowserMember::UploadFile => "upload_file",
            BrowserMember::DownloadFile => "download_file",
        }
    }

    /// The member a wire name means.
    pub fn from_name(name: &str) -> Option<BrowserMember> {
        BrowserMember::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The member's group.
    pub const fn group(self) -> MemberGroup {
        match self {
            BrowserMember::ReadPageScoped
            | BrowserMember::ClickAt
            | BrowserMember::DragPath
            | BrowserMember::HoldKeys
            | BrowserMember::HoverAt
            | BrowserMember::SetChecked => MemberGroup::PointerScoped,
            BrowserMember::ReadDiagnostics
            | BrowserMember::RunScript
            | BrowserMember::UploadFile
            | BrowserMember::DownloadFile => MemberGroup::DiagnosticsScriptFile,
            _ => MemberGroup::Default,
        }
    }
}

impl fmt::Display for BrowserMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of members, e.g. those a driver implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MemberSet(u32);

impl MemberSet {
    /// No member.
    pub const EMPTY: MemberSet = MemberSet(0);

    /// Every member.
    pub fn all() -> MemberSet {
        BrowserMember::ALL.into_iter().collect()
    }

    fn bit(m: BrowserMember) -> u32 {
        1 << (m as u32)
    }

    /// Adds a member; false if it was there.
    pub fn insert(&mut self, m: BrowserMember) -> bool {
        let had = self.contains(m);
        self.0 |= MemberSet::bit(m);
        !had
    }

    /// Removes a member.
    pub fn remove(&mut self, m: BrowserMember) {
        self.0 &= !MemberSet::bit(m);
    }

    /// Whether `m` is in the set.
    pub fn contains(self, m: BrowserMember) -> bool {
        self.0 & MemberSet::bit(m) != 0
    }

    /// The members, in tool order.
    pub fn iter(self) -> impl Iterator<Item = BrowserMember> {
        BrowserMember::ALL
            .into_iter()
            .filter(move |m| self.contains(*m))
    }

    /// How many members.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl FromIterator<BrowserMember> for MemberSet {
    fn from_iter<I: IntoIterator<Item = BrowserMember>>(iter: I) -> MemberSet {
        let mut set = MemberSet::EMPTY;
        for m in iter {
            set.insert(m);
        }
        set
    }
}

/// The longest prefix of `text` that is at most `max_bytes` of UTF-8, cut on a character
/// boundary (a multi-byte character that would straddle the limit is dropped whole).
pub fn truncate_utf8(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_eight_members_eighteen_defaults() {
        assert_eq!(BrowserMember::ALL.len(), 28);
        assert_eq!(BrowserMember::defaults().count(), 18);
        let mut names: Vec<_> = BrowserMember::ALL.iter().map(|m| m.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 28);
        for m in BrowserMember::ALL {
            assert_eq!(BrowserMember::from_name(m.name()), Some(m));
        }
        assert_eq!(
            BrowserMember::ALL
                .iter()
                .filter(|m| m.group() == MemberGroup::PointerScoped)
                .count(),
            6
        );
        assert_eq!(
            BrowserMember::ALL
                .iter()
                .filter(|m| m.group() == MemberGroup::DiagnosticsScriptFile)
                .count(),
            4
        );
    }

    #[test]
    fn member_sets() {
        let mut set = MemberSet::EMPTY;
        assert!(set.insert(BrowserMember::Zoom));
        assert!(!set.insert(BrowserMember::Zoom));
        set.insert(BrowserMember::Navigate);
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            vec![BrowserMember::Navigate, BrowserMember::Zoom]
        );
        assert_eq!(MemberSet::all().len(), 28);
    }

    #[test]
    fn truncation_keeps_characters_whole() {
        assert_eq!(truncate_utf8("abc", 5), "abc");
        assert_eq!(truncate_utf8("abcdef", 3), "abc");
        // "é" is two bytes: cutting at 2 drops it whole.
        assert_eq!(truncate_utf8("aé", 2), "a");
        assert_eq!(truncate_utf8("日本", 5), "日");
        assert_eq!(truncate_utf8("日本", 0), "");
    }
}
