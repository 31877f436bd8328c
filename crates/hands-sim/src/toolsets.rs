//! The client toolsets the Anthropic side knows: their entry types, `toolset_name`s and members.

/// The computer toolset entry type.
///
/// Spec: claude-computer-use-tool, "Parámetros de la herramienta".
pub const COMPUTER_TOOLSET_TYPE: &str = "computer_toolset_20260801";
/// The `toolset_name` of computer members.
pub const COMPUTER_TOOLSET_NAME: &str = "computer";
/// The browser toolset entry type (api-contracts A, "Browser use").
pub const BROWSER_TOOLSET_TYPE: &str = "browser_toolset_20260801";
/// The `toolset_name` of browser members.
pub const BROWSER_TOOLSET_NAME: &str = "browser";

/// Legacy computer tool types and the beta header each needs.
///
/// Spec: api-contracts A, "Earlier versions (beta)".
pub const LEGACY_COMPUTER_TYPES: [(&str, &str); 2] = [
    ("computer_20251124", "computer-use-2025-11-24"),
    ("computer_20250124", "computer-use-2025-01-24"),
];

/// The legacy header that cannot be combined with a client toolset.
pub const FINE_GRAINED_STREAMING_BETA: &str = "fine-grained-tool-streaming-2025-05-14";

/// The 17 members of `computer_toolset_20260801`, all enabled by default.
///
/// Spec: claude-computer-use-tool, "Acciones disponibles".
pub const COMPUTER_MEMBERS: [&str; 17] = [
    "screenshot",
    "zoom",
    "left_click",
    "right_click",
    "middle_click",
    "double_click",
    "triple_click",
    "left_click_drag",
    "mouse_move",
    "left_mouse_down",
    "left_mouse_up",
    "cursor_position",
    "scroll",
    "type",
    "key",
    "hold_key",
    "wait",
];

/// The 31 members of `browser_toolset_20260801` (api-contracts A, "Browser use").
pub const BROWSER_MEMBERS: [&str; 31] = [
    "navigate",
    "list_tabs",
    "new_tab",
    "switch_tab",
    "close_tab",
    "read_page",
    "get_page_text",
    "read_console",
    "read_network",
    "find",
    "form_input",
    "file_upload",
    "scroll_to",
    "screenshot",
    "zoom",
    "left_click",
    "right_click",
    "middle_click",
    "double_click",
    "triple_click",
    "hover",
    "left_click_drag",
    "left_mouse_down",
    "left_mouse_up",
    "mouse_move",
    "scroll",
    "type",
    "key",
    "hold_key",
    "wait",
    "javascript_exec",
];

/// Browser members that are off until a `configs` entry enables them.
pub const BROWSER_DEFAULT_OFF: [&str; 4] = [
    "file_upload",
    "read_console",
    "read_network",
    "javascript_exec",
];

/// Fields the computer toolset entry rejects, left over from the earlier tool versions.
///
/// Spec: claude-computer-use-tool, "Parámetros de la herramienta"; api-contracts A.
pub const TOOLSET_REJECTED_FIELDS: [&str; 8] = [
    "name",
    "display_width_px",
    "display_height_px",
    "display_number",
    "enable_zoom",
    "strict",
    "input_examples",
    "defer_loading",
];

/// Fields a toolset entry accepts.
pub const TOOLSET_FIELDS: [&str; 4] = ["type", "configs", "cache_control", "allowed_callers"];

/// One client toolset kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolsetKind {
    /// `computer_toolset_20260801`
    Computer,
    /// `browser_toolset_20260801`
    Browser,
}

impl ToolsetKind {
    /// The kind an entry `type` names.
    pub fn from_type(tool_type: &str) -> Option<ToolsetKind> {
        match tool_type {
            COMPUTER_TOOLSET_TYPE => Some(ToolsetKind::Computer),
            BROWSER_TOOLSET_TYPE => Some(ToolsetKind::Browser),
            _ => None,
        }
    }

    /// The entry `type`.
    pub fn entry_type(self) -> &'static str {
        match self {
            ToolsetKind::Computer => COMPUTER_TOOLSET_TYPE,
            ToolsetKind::Browser => BROWSER_TOOLSET_TYPE,
        }
    }

    /// The `toolset_name` its blocks carry.
    pub fn toolset_name(self) -> &'static str {
        match self {
            ToolsetKind::Computer => COMPUTER_TOOLSET_NAME,
            ToolsetKind::Browser => BROWSER_TOOLSET_NAME,
        }
    }

    /// All members.
    pub fn members(self) -> &'static [&'static str] {
        match self {
            ToolsetKind::Computer => &COMPUTER_MEMBERS,
            ToolsetKind::Browser => &BROWSER_MEMBERS,
        }
    }

    /// Whether a member is on when `configs` does not name it.
    pub fn enabled_by_default(self, member: &str) -> bool {
        match self {
            ToolsetKind::Computer => true,
            ToolsetKind::Browser => !BROWSER_DEFAULT_OFF.contains(&member),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_lists() {
        assert_eq!(COMPUTER_MEMBERS.len(), 17);
        assert_eq!(BROWSER_MEMBERS.len(), 31);
        let on = BROWSER_MEMBERS
            .iter()
            .filter(|m| ToolsetKind::Browser.enabled_by_default(m))
            .count();
        assert_eq!(on, 27);
        assert_eq!(COMPUTER_TOOLSET_TYPE, "computer_toolset_20260801");
        assert_eq!(
            ToolsetKind::from_type("browser_toolset_20260801"),
            Some(ToolsetKind::Browser)
        );
    }
}
