//! The MCP tools: the browser toolset's members (`browser_*`, schemas from `hands-toolset` with
//! nullable fields made optional) and the computer toolset's members (`computer_*`), each with
//! annotations and the two arguments this server adds: `cursor` on reads (the next page of a read
//! cut at the budget) and `snapshot` / `screenshot` on actions (nothing is returned after an
//! action unless asked).
//!
//! Spec: api-contracts C (MCP `2025-11-25` / `2026-07-28`), the tools' `inputSchema` and
//! `annotations` (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`).

use std::sync::Arc;

use hands_core::browser::BrowserMember;
use hands_toolset::actions::EffectClass;
use hands_toolset::browser::consent::{Consent, consent};
use hands_toolset::browser::declaration::{description, parameters};
use hands_toolset::browser::tool_name;
use hands_toolset::computer::members::Member;
use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

/// The prefix of the desktop tools.
pub const COMPUTER_TOOL_PREFIX: &str = "computer_";
/// The argument that continues a cut read.
pub const CURSOR_ARG: &str = "cursor";
/// The argument that asks for a read of the page after a browser action.
pub const SNAPSHOT_ARG: &str = "snapshot";
/// The argument that asks `browser_read_page` for the whole read rather than the changes
/// since the tab's last read.
pub const FULL_ARG: &str = "full";
/// The argument that asks for a screenshot after a desktop action.
pub const SCREENSHOT_ARG: &str = "screenshot";

/// The browser members served: the toolset's defaults, scoped reads, `set_checked` and the
/// console/network reads. Pointer members at coordinates, scripts and files are left out: the
/// desktop tools cover coordinates, and scripts and files need grants MCP has no way to give.
pub const BROWSER_MEMBERS: [BrowserMember; 21] = [
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
    BrowserMember::SetChecked,
    BrowserMember::ReadDiagnostics,
];

/// The computer members served: all but `left_mouse_down` / `left_mouse_up`, which leave a
/// button held between calls (a client that stops in between leaves the desktop in a drag).
pub const COMPUTER_MEMBERS: [Member; 15] = [
    Member::Screenshot,
    Member::Zoom,
    Member::LeftClick,
    Member::RightClick,
    Member::MiddleClick,
    Member::DoubleClick,
    Member::TripleClick,
    Member::LeftClickDrag,
    Member::MouseMove,
    Member::CursorPosition,
    Member::Scroll,
    Member::Type,
    Member::Key,
    Member::HoldKey,
    Member::Wait,
];

/// Browser members whose answer is a read (and so take `cursor`).
pub fn browser_is_read(member: BrowserMember) -> bool {
    matches!(
        member,
        BrowserMember::ReadPage
            | BrowserMember::GetPageText
            | BrowserMember::Find
            | BrowserMember::ReadPageScoped
            | BrowserMember::ReadDiagnostics
    )
}

/// Browser members that change the page (and so take `snapshot`).
pub fn browser_is_action(member: BrowserMember) -> bool {
    consent(member) != Consent::None && member != BrowserMember::ReadDiagnostics
}

/// Computer members that only look (no consent, no `screenshot` argument).
pub fn computer_is_observation(member: Member) -> bool {
    member.effect() == EffectClass::Observe
}

/// Which surface a tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// A browser member.
    Browser(BrowserMember),
    /// A computer member.
    Computer(Member),
}

/// The tool a name means, among those served.
pub fn kind_of(name: &str) -> Option<ToolKind> {
    if let Some(member) = hands_toolset::browser::member_of_tool(name)
        && BROWSER_MEMBERS.contains(&member)
    {
        return Some(ToolKind::Browser(member));
    }
    name.strip_prefix(COMPUTER_TOOL_PREFIX)
        .and_then(Member::from_name)
        .filter(|m| COMPUTER_MEMBERS.contains(m))
        .map(ToolKind::Computer)
}

/// Fields whose JSON type admits null: optional in MCP, filled with null before parsing.
fn nullable(schema: &Value) -> bool {
    schema["type"]
        .as_array()
        .is_some_and(|types| types.iter().any(|t| t == "null"))
}

/// Defaults the MCP schemas add for fields the driver spec requires.
pub fn browser_default(member: BrowserMember, field: &str) -> Option<Value> {
    match (member, field) {
        (BrowserMember::ReadPage | BrowserMember::ReadPageScoped, "filter") => Some(json!("all")),
        (BrowserMember::WaitFor, "timeout_ms") => Some(json!(5000)),
        (BrowserMember::ReadDiagnostics, "limit") => Some(json!(20)),
        (BrowserMember::ReadPageScoped, "depth") => Some(json!(6)),
        _ => None,
    }
}

/// The MCP input schema of a browser member.
pub fn browser_schema(member: BrowserMember) -> Value {
    let strict = parameters(member);
    let mut properties = strict["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut required = Vec::new();
    for (name, schema) in properties.iter_mut() {
        if let Some(default) = browser_default(member, name) {
            schema["default"] = default;
        } else if !nullable(schema) {
            required.push(Value::String(name.clone()));
        }
    }
    if browser_is_read(member) {
        properties.insert(
            CURSOR_ARG.to_owned(),
            json!({"type": "string", "description": "To continue a read that was cut to fit \
                   the response budget: the cursor its last line gave. The other arguments are \
                   then ignored."}),
        );
    }
    if member == BrowserMember::ReadPage {
        properties.insert(
            FULL_ARG.to_owned(),
            json!({"type": "boolean", "default": false, "description": "Send the whole read. \
                   By default a read of the document the tab's last read (with the same filter) \
                   showed sends only what changed since, a line each: an element added \
                   (`+[e9] button Delete`), removed (`-[e3] Delete milk`: ref and name) or \
                   changed (`*[e4] [x]`, `*[e1] = \"\"`: ref and only what changed); lines of \
                   page text added or removed (`+ text`, `- text`, under `Changes:`). Refs stay \
                   the same. A new document always gets the whole read."}),
        );
    }
    if browser_is_action(member) {
        properties.insert(
            SNAPSHOT_ARG.to_owned(),
            json!({"type": "boolean", "default": false, "description": "Also return the page's \
                   controls after the action (a read with filter \"interactive\": what changed \
                   since the last one). Off by default: the answer is one line of what changed."}),
        );
    }
    json!({"type": "object", "properties": properties, "required": required,
           "additionalProperties": false})
}

fn point(description: &str) -> Value {
    json!({"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 2,
           "maxItems": 2, "description": description})
}

fn modifiers_text() -> Value {
    json!({"type": "string", "description": "Modifier keys held during the action, joined with \
           +, e.g. \"shift\" or \"ctrl+shift\"."})
}

/// The MCP input schema of a computer member (the fields of `computer_toolset_20260801`).
///
/// Spec: claude-computer-use-tool, "Acciones disponibles".
pub fn computer_schema(member: Member) -> Value {
    let at = "[x, y] in pixels of the latest screenshot.";
    let mut properties = Map::new();
    let mut required: Vec<&str> = Vec::new();
    for field in member.fields() {
        let schema = match (member, *field) {
            (Member::Zoom, "region") => json!({"type": "array",
                "items": {"type": "integer", "minimum": 0}, "minItems": 4, "maxItems": 4,
                "description": "[x0, y0, x1, y1] in pixels of the latest screenshot."}),
            (Member::LeftClickDrag, "start_coordinate") => point("Where the drag starts, [x, y]."),
            (Member::LeftClickDrag, "coordinate") => point("Where the drag ends, [x, y]."),
            (Member::MouseMove, "coordinate") => point(at),
            (_, "coordinate") => point(&format!("{at} Default: where the pointer is.")),
            (Member::Type, "text") => json!({"type": "string", "description": "The text to type."}),
            (Member::Key | Member::HoldKey, "text") => json!({"type": "string",
                "description": "A key or chord in xdotool syntax, e.g. \"Return\", \"ctrl+s\"; \
                several separated by spaces."}),
            (_, "text") => modifiers_text(),
            (_, "repeat") => json!({"type": "integer", "minimum": 1, "maximum": 100,
                "description": "How many times to press it (default 1)."}),
            (_, "duration") => json!({"type": "integer", "minimum": 0, "maximum": 300,
                "description": "Whole seconds."}),
            (_, "scroll_direction") => json!({"type": "string",
                "enum": ["up", "down", "left", "right"]}),
            (_, "scroll_amount") => json!({"type": "integer", "minimum": 0, "maximum": 100,
                "description": "Wheel clicks."}),
            _ => json!({}),
        };
        let optional = matches!(
            (member, *field),
            (
                Member::LeftClick
                    | Member::RightClick
                    | Member::MiddleClick
                    | Member::DoubleClick
                    | Member::TripleClick
                    | Member::Scroll,
                "coordinate"
            ) | (_, "repeat")
        ) || (*field == "text"
            && !matches!(member, Member::Type | Member::Key | Member::HoldKey));
        if !optional {
            required.push(field);
        }
        properties.insert((*field).to_owned(), schema);
    }
    if !computer_is_observation(member) {
        properties.insert(
            SCREENSHOT_ARG.to_owned(),
            json!({"type": "boolean", "default": false, "description": "Also return a \
                   screenshot after the action. Off by default: the answer is one line of what \
                   changed on the screen."}),
        );
    }
    json!({"type": "object", "properties": properties, "required": required,
           "additionalProperties": false})
}

fn computer_description(member: Member) -> &'static str {
    match member {
        Member::Screenshot => {
            "Capture the screen. Coordinates of the other tools are pixels of this image."
        }
        Member::Zoom => "Capture a region of the screen at full resolution.",
        Member::LeftClick => "Click the left button at a point.",
        Member::RightClick => "Click the right button at a point.",
        Member::MiddleClick => "Click the middle button at a point.",
        Member::DoubleClick => "Double-click at a point.",
        Member::TripleClick => "Triple-click at a point (selects a line).",
        Member::LeftClickDrag => "Press the left button at one point, move to another, release.",
        Member::MouseMove => "Move the pointer to a point.",
        Member::CursorPosition => "Say where the pointer is, in screenshot pixels.",
        Member::Scroll => "Turn the mouse wheel at a point.",
        Member::Type => "Type text into the focused window.",
        Member::Key => "Press a key or chord (xdotool syntax).",
        Member::HoldKey => "Hold a key or chord down for a duration.",
        Member::Wait => "Wait a number of seconds.",
        Member::LeftMouseDown | Member::LeftMouseUp => "Press or release the left button.",
    }
}

fn browser_annotations(member: BrowserMember) -> ToolAnnotations {
    use BrowserMember as M;
    // `read_diagnostics` needs consent but changes nothing.
    let read_only = !browser_is_action(member);
    // Clicks, typing, keys, options and checkboxes may submit or delete; closing a tab loses it.
    let destructive = matches!(
        member,
        M::Click | M::Type | M::Key | M::SelectOption | M::SetChecked | M::CloseTab
    );
    let idempotent = matches!(
        member,
        M::ScrollTo | M::SwitchTab | M::SetChecked | M::Hover | M::Navigate
    ) || read_only;
    ToolAnnotations::with_title(format!("Browser: {}", member.name().replace('_', " ")))
        .read_only(read_only)
        .destructive(!read_only && destructive)
        .idempotent(idempotent)
        .open_world(true)
}

fn computer_annotations(member: Member) -> ToolAnnotations {
    let read_only = computer_is_observation(member);
    let destructive = !read_only && !matches!(member, Member::MouseMove | Member::Scroll);
    ToolAnnotations::with_title(format!("Desktop: {}", member.name().replace('_', " ")))
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(read_only)
        .open_world(false)
}

const BROWSER_NOTE: &str = "Answers are compact text within the client's token budget; \
    actions answer one line of what changed (ask `snapshot` for the controls).";

const CONSENT_NOTE: &str = "A person approves it first (or the server's --approve policy).";

fn object(schema: Value) -> Arc<Map<String, Value>> {
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Map::new()),
    }
}

/// The MCP tool of a browser member.
pub fn browser_tool(member: BrowserMember) -> Tool {
    let mut text = format!("{} {BROWSER_NOTE}", description(member));
    if consent(member) != Consent::None {
        text.push(' ');
        text.push_str(CONSENT_NOTE);
    }
    Tool::new(tool_name(member), text, object(browser_schema(member)))
        .with_annotations(browser_annotations(member))
}

/// The MCP tool of a computer member.
pub fn computer_tool(member: Member) -> Tool {
    let mut text = computer_description(member).to_owned();
    if !computer_is_observation(member) {
        text.push(' ');
        text.push_str(CONSENT_NOTE);
    }
    Tool::new(
        format!("{COMPUTER_TOOL_PREFIX}{}", member.name()),
        text,
        object(computer_schema(member)),
    )
    .with_annotations(computer_annotations(member))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_back_to_their_members() {
        for member in BROWSER_MEMBERS {
            let tool = browser_tool(member);
            assert_eq!(kind_of(&tool.name), Some(ToolKind::Browser(member)));
        }
        for member in COMPUTER_MEMBERS {
            let tool = computer_tool(member);
            assert_eq!(kind_of(&tool.name), Some(ToolKind::Computer(member)));
        }
        assert_eq!(kind_of("browser_run_script"), None);
        assert_eq!(kind_of("computer_left_mouse_down"), None);
        assert_eq!(kind_of("bash"), None);
    }

    #[test]
    fn nullable_fields_are_optional_and_the_rest_required() {
        let schema = browser_schema(BrowserMember::Type);
        assert_eq!(schema["required"], json!(["text"]));
        assert!(schema["properties"][SNAPSHOT_ARG].is_object());
        let read = browser_schema(BrowserMember::ReadPage);
        assert_eq!(read["required"], json!([]));
        assert_eq!(read["properties"]["filter"]["default"], "all");
        assert!(read["properties"][CURSOR_ARG].is_object());
        assert_eq!(
            browser_schema(BrowserMember::SwitchTab)["required"],
            json!(["tab_id"])
        );
    }

    #[test]
    fn annotations_say_what_each_tool_does() {
        let read = browser_tool(BrowserMember::ReadPage).annotations.unwrap();
        assert_eq!(read.read_only_hint, Some(true));
        assert_eq!(read.open_world_hint, Some(true));
        let click = browser_tool(BrowserMember::Click).annotations.unwrap();
        assert_eq!(click.read_only_hint, Some(false));
        assert_eq!(click.destructive_hint, Some(true));
        let shot = computer_tool(Member::Screenshot).annotations.unwrap();
        assert_eq!(shot.read_only_hint, Some(true));
        assert_eq!(shot.open_world_hint, Some(false));
        let typing = computer_tool(Member::Type).annotations.unwrap();
        assert_eq!(typing.destructive_hint, Some(true));
        let diagnostics = browser_tool(BrowserMember::ReadDiagnostics)
            .annotations
            .unwrap();
        assert_eq!(diagnostics.read_only_hint, Some(true));
    }

    #[test]
    fn computer_schemas_require_what_the_toolset_requires() {
        assert_eq!(
            computer_schema(Member::LeftClickDrag)["required"],
            json!(["start_coordinate", "coordinate"])
        );
        assert_eq!(computer_schema(Member::LeftClick)["required"], json!([]));
        assert_eq!(computer_schema(Member::Key)["required"], json!(["text"]));
        assert!(computer_schema(Member::Screenshot)["properties"][SCREENSHOT_ARG].is_null());
    }
}
