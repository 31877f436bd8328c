//! The 31 members of `browser_toolset_20260801`: names, which are on by default, the input fields
//! each takes, and the driver members each may use (which decide consent).
//!
//! Spec: api-contracts A, "Browser use: `browser_toolset_20260801`", "Members (31)".

use std::fmt;

use hands_core::browser::BrowserMember;

use crate::browser::consent::{Consent, consent};

/// A member tool of Claude's browser toolset. Inputs are anthropic 2.10's wire shapes (see
/// [`super::input`] for the whole table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Member {
    /// `navigate {url, tab_id?}`: a URL, or `"back"`, `"forward"`, `"reload"`.
    Navigate,
    /// `list_tabs {}`.
    ListTabs,
    /// `new_tab {}`.
    NewTab,
    /// `switch_tab {tab_id}`.
    SwitchTab,
    /// `close_tab {tab_id}`.
    CloseTab,
    /// `read_page {depth?, filter?, ref?, tab_id?}`.
    ReadPage,
    /// `get_page_text {tab_id?}`.
    GetPageText,
    /// `read_console {tab_id?}` (off until enabled).
    ReadConsole,
    /// `read_network {tab_id?}` (off until enabled).
    ReadNetwork,
    /// `find {query, tab_id?}`.
    Find,
    /// `form_input {target: ref target, value, tab_id?}`.
    FormInput,
    /// `file_upload {target: ref target, document_ids?, paths?, tab_id?}` (off until enabled).
    FileUpload,
    /// `scroll_to {target: ref target, tab_id?}`.
    ScrollTo,
    /// `screenshot {tab_id?}`.
    Screenshot,
    /// `zoom {region, tab_id?}`.
    Zoom,
    /// `left_click {target, modifiers?, tab_id?}`.
    LeftClick,
    /// `right_click {target, modifiers?, tab_id?}`.
    RightClick,
    /// `middle_click {target, modifiers?, tab_id?}`.
    MiddleClick,
    /// `double_click {target, modifiers?, tab_id?}`.
    DoubleClick,
    /// `triple_click {target, modifiers?, tab_id?}`.
    TripleClick,
    /// `hover {target, tab_id?}`.
    Hover,
    /// `left_click_drag {from, target, tab_id?}` (coordinate targets).
    LeftClickDrag,
    /// `left_mouse_down {target, tab_id?}` (a coordinate target): the button stays down until
    /// `left_mouse_up`; a driver without [`hands_core::browser::Browser::mouse_button`] answers
    /// [`crate::strings::BROWSER_BUTTON_HOLD_UNSUPPORTED`].
    LeftMouseDown,
    /// `left_mouse_up {target, tab_id?}` (a coordinate target), as `left_mouse_down`.
    LeftMouseUp,
    /// `mouse_move {target, tab_id?}` (a coordinate target).
    MouseMove,
    /// `scroll {scroll_direction, target, scroll_amount?, tab_id?}`.
    Scroll,
    /// `type {text, tab_id?}`.
    Type,
    /// `key {text, repeat?, tab_id?}`.
    Key,
    /// `hold_key {duration, text, tab_id?}`.
    HoldKey,
    /// `wait {duration, tab_id?}`.
    Wait,
    /// `javascript_exec {text, tab_id?}` (off until enabled).
    JavascriptExec,
}

impl Member {
    /// All 31, in the spec's order.
    pub const ALL: [Member; 31] = [
        Member::Navigate,
        Member::ListTabs,
        Member::NewTab,
        Member::SwitchTab,
        Member::CloseTab,
        Member::ReadPage,
        Member::GetPageText,
        Member::ReadConsole,
        Member::ReadNetwork,
        Member::Find,
        Member::FormInput,
        Member::FileUpload,
        Member::ScrollTo,
        Member::Screenshot,
        Member::Zoom,
        Member::LeftClick,
        Member::RightClick,
        Member::MiddleClick,
        Member::DoubleClick,
        Member::TripleClick,
        Member::Hover,
        Member::LeftClickDrag,
        Member::LeftMouseDown,
        Member::LeftMouseUp,
        Member::MouseMove,
        Member::Scroll,
        Member::Type,
        Member::Key,
        Member::HoldKey,
        Member::Wait,
        Member::JavascriptExec,
    ];

    /// The wire name.
    pub const fn name(self) -> &'static str {
        match self {
            Member::Navigate => "navigate",
            Member::ListTabs => "list_tabs",
            Member::NewTab => "new_tab",
            Member::SwitchTab => "switch_tab",
            Member::CloseTab => "close_tab",
            Member::ReadPage => "read_page",
            Member::GetPageText => "get_page_text",
            Member::ReadConsole => "read_console",
            Member::ReadNetwork => "read_network",
            Member::Find => "find",
            Member::FormInput => "form_input",
            Member::FileUpload => "file_upload",
            Member::ScrollTo => "scroll_to",
            Member::Screenshot => "screenshot",
            Member::Zoom => "zoom",
            Member::LeftClick => "left_click",
            Member::RightClick => "right_click",
            Member::MiddleClick => "middle_click",
            Member::DoubleClick => "double_click",
            Member::TripleClick => "triple_click",
            Member::Hover => "hover",
            Member::LeftClickDrag => "left_click_drag",
            Member::LeftMouseDown => "left_mouse_down",
            Member::LeftMouseUp => "left_mouse_up",
            Member::MouseMove => "mouse_move",
            Member::Scroll => "scroll",
            Member::Type => "type",
            Member::Key => "key",
            Member::HoldKey => "hold_key",
            Member::Wait => "wait",
            Member::JavascriptExec => "javascript_exec",
        }
    }

    /// The member a wire name means.
    pub fn from_name(name: &str) -> Option<Member> {
        Member::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether the member is on when `configs` does not name it: all but `file_upload`,
    /// `read_console`, `read_network` and `javascript_exec`.
    pub const fn enabled_by_default(self) -> bool {
        !matches!(
            self,
            Member::FileUpload | Member::ReadConsole | Member::ReadNetwork | Member::JavascriptExec
        )
    }

    /// The input fields the member takes, as anthropic 2.10's `beta_browser_<member>_input.py`
    /// declares them; any other field is refused (a null stands for an absent optional field,
    /// as in the computer toolset).
    pub const fn fields(self) -> &'static [&'static str] {
        match self {
            Member::Navigate => &["url", "tab_id"],
            Member::ListTabs | Member::NewTab => &[],
            Member::SwitchTab | Member::CloseTab => &["tab_id"],
            Member::ReadPage => &["depth", "filter", "ref", "tab_id"],
            Member::GetPageText
            | Member::Screenshot
            | Member::ReadConsole
            | Member::ReadNetwork => &["tab_id"],
            Member::Find => &["query", "tab_id"],
            Member::FormInput => &["target", "value", "tab_id"],
            Member::FileUpload => &["target", "document_ids", "paths", "tab_id"],
            Member::ScrollTo
            | Member::Hover
            | Member::LeftMouseDown
            | Member::LeftMouseUp
            | Member::MouseMove => &["target", "tab_id"],
            Member::Zoom => &["region", "tab_id"],
            Member::LeftClick
            | Member::RightClick
            | Member::MiddleClick
            | Member::DoubleClick
            | Member::TripleClick => &["target", "modifiers", "tab_id"],
            Member::LeftClickDrag => &["from", "target", "tab_id"],
            Member::Scroll => &["scroll_direction", "target", "scroll_amount", "tab_id"],
            Member::Type | Member::JavascriptExec => &["text", "tab_id"],
            Member::Key => &["text", "repeat", "tab_id"],
            Member::HoldKey => &["duration", "text", "tab_id"],
            Member::Wait => &["duration", "tab_id"],
        }
    }

    /// The driver members this member may call, the one it needs most first. `form_input` also
    /// reads the page (`read_page`) when it has not seen the field's role yet; `read_page` with a
    /// `ref` reads that subtree (`read_page_scoped`); `file_upload` clicks the file input, then
    /// uploads; `wait` and the two button members call none.
    pub const fn driver_members(self) -> &'static [BrowserMember] {
        use BrowserMember as B;
        match self {
            Member::Navigate => &[B::Navigate],
            Member::ListTabs => &[B::ListTabs],
            Member::NewTab => &[B::NewTab],
            Member::SwitchTab => &[B::SwitchTab],
            Member::CloseTab => &[B::CloseTab],
            Member::ReadPage => &[B::ReadPage, B::ReadPageScoped],
            Member::GetPageText => &[B::GetPageText],
            Member::ReadConsole | Member::ReadNetwork => &[B::ReadDiagnostics],
            Member::Find => &[B::Find],
            Member::FormInput => &[B::Type, B::SelectOption, B::SetChecked],
            Member::FileUpload => &[B::UploadFile, B::Click],
            Member::ScrollTo => &[B::ScrollTo],
            Member::Screenshot => &[B::Screenshot],
            Member::Zoom => &[B::Zoom],
            Member::LeftClick => &[B::Click, B::ClickAt],
            Member::RightClick
            | Member::MiddleClick
            | Member::DoubleClick
            | Member::TripleClick => &[B::ClickAt],
            Member::Hover => &[B::Hover, B::HoverAt],
            Member::LeftClickDrag | Member::LeftMouseDown | Member::LeftMouseUp => &[B::DragPath],
            Member::MouseMove => &[B::HoverAt],
            Member::Scroll => &[B::Scroll],
            Member::Type => &[B::Type],
            Member::Key => &[B::Key],
            Member::HoldKey => &[B::HoldKeys],
            Member::JavascriptExec => &[B::RunScript],
            Member::Wait => &[],
        }
    }

    /// Whether the member needs every one of its [`Member::driver_members`] (`file_upload`: a
    /// click and an upload) rather than any one of them.
    pub const fn needs_all_driver_members(self) -> bool {
        matches!(self, Member::FileUpload)
    }

    /// What the member needs before it runs: the strictest need of its driver members, from the
    /// function-tool surface's table ([`consent`]), so one `confirm` and one URL policy serve
    /// both surfaces alike. `type`, `key` and `hold_key` need `confirm`, as the SDK requires.
    pub const fn consent(self) -> Consent {
        // The API's `new_tab` opens a blank tab: no URL for a policy to judge.
        if matches!(self, Member::NewTab) {
            return Consent::Confirm;
        }
        let members = self.driver_members();
        let mut need = Consent::None;
        let mut i = 0;
        while i < members.len() {
            match consent(members[i]) {
                Consent::UrlPolicyThenConfirm => return Consent::UrlPolicyThenConfirm,
                Consent::Confirm => need = Consent::Confirm,
                Consent::None => {}
            }
            i += 1;
        }
        need
    }
}

impl fmt::Display for Member {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The member names, comma-separated, for error messages.
pub(crate) fn member_list() -> String {
    Member::ALL
        .iter()
        .map(|m| m.name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_one_members_twenty_seven_on_by_default() {
        let mut names: Vec<_> = Member::ALL.iter().map(|m| m.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 31);
        for m in Member::ALL {
            assert_eq!(Member::from_name(m.name()), Some(m));
        }
        let off: Vec<&str> = Member::ALL
            .into_iter()
            .filter(|m| !m.enabled_by_default())
            .map(Member::name)
            .collect();
        assert_eq!(
            off,
            [
                "read_console",
                "read_network",
                "file_upload",
                "javascript_exec"
            ]
        );
        assert_eq!(Member::from_name("cursor_position"), None);
    }

    #[test]
    fn consent_follows_the_driver_members() {
        use Consent as C;
        let table = [
            ("navigate", C::UrlPolicyThenConfirm),
            ("new_tab", C::Confirm),
            ("list_tabs", C::None),
            ("read_page", C::None),
            ("get_page_text", C::None),
            ("find", C::None),
            ("screenshot", C::None),
            ("zoom", C::None),
            ("wait", C::None),
            ("left_mouse_down", C::Confirm),
            ("left_mouse_up", C::Confirm),
            ("read_console", C::Confirm),
            ("read_network", C::Confirm),
            ("form_input", C::Confirm),
            ("file_upload", C::Confirm),
            ("switch_tab", C::Confirm),
            ("close_tab", C::Confirm),
            ("left_click", C::Confirm),
            ("triple_click", C::Confirm),
            ("hover", C::Confirm),
            ("mouse_move", C::Confirm),
            ("scroll", C::Confirm),
            ("scroll_to", C::Confirm),
            ("type", C::Confirm),
            ("key", C::Confirm),
            ("hold_key", C::Confirm),
            ("javascript_exec", C::Confirm),
        ];
        for (name, want) in table {
            assert_eq!(Member::from_name(name).unwrap().consent(), want, "{name}");
        }
    }
}
