//! What a successful browser result says: a short fixed acknowledgement, the read's content as
//! text, or the image — the `browser_state` block is added by the toolset. A driver output the
//! spec does not allow (a `get_page_text` read with elements, an empty image) is reported as an
//! error string, which the toolset turns into a harness fault.
//!
//! Spec: api-contracts A, "Browser use", "SDK confirmations" ("fixed acknowledgments … Any short
//! text is acceptable"); "Results for toolset members … may contain only text and image".

use hands_core::browser::driver::ReadResult;
use hands_core::browser::{BrowserOutput, BrowserRead, BrowserState, TabId};
use hands_core::input::ScrollDirection;

use super::members::Member;
use crate::browser::state::reported_url;
use crate::browser::{ReadValues, withhold_values};
use crate::strings::{
    BROWSER_BUTTON_PRESSED, BROWSER_BUTTON_RELEASED, BROWSER_CLICKED, BROWSER_DOUBLE_CLICKED,
    BROWSER_DRAGGED, BROWSER_FIELD_SET, BROWSER_FILE_UPLOADED, BROWSER_HOVERED, BROWSER_KEYS_HELD,
    BROWSER_KEYS_PRESSED, BROWSER_MIDDLE_CLICKED, BROWSER_POINTER_MOVED, BROWSER_READ_EMPTY,
    BROWSER_RIGHT_CLICKED, BROWSER_SCRIPT_EMPTY, BROWSER_SCROLLED_INTO_VIEW, BROWSER_TAB_CLOSED,
    BROWSER_TRIPLE_CLICKED, BROWSER_TYPED, BROWSER_WAITED, browser_navigated_text,
    browser_scrolled_text,
};
use crate::wire::ResultBlock;

/// The name of a scroll direction, as `Scrolled <name>.` says it.
pub(crate) fn direction_name(direction: ScrollDirection) -> &'static str {
    match direction {
        ScrollDirection::Up => "up",
        ScrollDirection::Down => "down",
        ScrollDirection::Left => "left",
        ScrollDirection::Right => "right",
    }
}

/// What the toolset knows of the call beyond the driver's output.
pub(crate) struct Context<'a> {
    /// The member called.
    pub member: Member,
    /// The tab a `navigate` acted on (`None`: the active one).
    pub tab: Option<&'a TabId>,
    /// The direction of a `scroll`.
    pub direction: Option<ScrollDirection>,
    /// The state after the call, raw (only filtered values are shown).
    pub post: &'a BrowserState,
    /// Whether field values may reach the model.
    pub read_values: ReadValues,
}

fn text(text: impl Into<String>) -> Vec<ResultBlock> {
    let text = text.into();
    if text.is_empty() {
        vec![ResultBlock::Text(BROWSER_READ_EMPTY.to_owned())]
    } else {
        vec![ResultBlock::Text(text)]
    }
}

/// A read shown to the model: a structured read in the compact form
/// ([`BrowserRead::to_compact`]: the page text with one line per element — ref, kind such as
/// `link` or `clickable`, name, state, value — at about half the bytes of an accessibility
/// snapshot; values withheld as the application's privacy policy says), plain text as it is.
/// (The driver spec's function tools answer `BrowserReadV1` JSON instead; Claude's toolset
/// leaves the format to the client.)
fn read_blocks(
    member: Member,
    read: Option<ReadResult>,
    read_values: ReadValues,
) -> Result<Vec<ResultBlock>, String> {
    match read {
        None => Ok(text(String::new())),
        Some(ReadResult::Text(t)) => Ok(text(t)),
        Some(ReadResult::Structured(read)) => {
            if matches!(
                member,
                Member::GetPageText | Member::ReadConsole | Member::ReadNetwork
            ) {
                return text_only(member, read);
            }
            let read = withhold_values(read, read_values).map_err(|e| e.to_string())?;
            Ok(text(read.to_compact()))
        }
    }
}

/// A text-only read (`get_page_text`, the diagnostics): its text, after checking it has no
/// elements.
fn text_only(member: Member, read: BrowserRead) -> Result<Vec<ResultBlock>, String> {
    if !read.elements().is_empty() {
        return Err(format!(
            "a structured {member} result must have an empty elements array, got {}",
            read.elements().len()
        ));
    }
    Ok(text(read.text()))
}

/// The content of a successful call: `output` is the last driver output (`None` for `wait`).
pub(crate) fn content(
    context: &Context<'_>,
    output: Option<BrowserOutput>,
) -> Result<Vec<ResultBlock>, String> {
    let ack = |t: &str| Ok(vec![ResultBlock::Text(t.to_owned())]);
    let member = context.member;
    match (member, output) {
        (Member::ListTabs | Member::NewTab | Member::SwitchTab, _) => Ok(Vec::new()),
        (Member::Navigate, _) => {
            let tab = match context.tab {
                Some(id) => context.post.tab(id),
                None => context.post.active(),
            };
            let (url, title) = tab.map_or_else(
                || (String::new(), String::new()),
                |t| (reported_url(&t.url), t.title.clone()),
            );
            // The title as the state block shows it, cut on a character boundary.
            let title =
                hands_core::browser::truncate_utf8(&title, crate::browser::state::MAX_TITLE_BYTES);
            Ok(vec![ResultBlock::Text(browser_navigated_text(&url, title))])
        }
        (Member::CloseTab, _) => ack(BROWSER_TAB_CLOSED),
        (
            Member::ReadPage
            | Member::Find
            | Member::GetPageText
            | Member::ReadConsole
            | Member::ReadNetwork,
            Some(BrowserOutput::Read(read)),
        ) => read_blocks(member, read, context.read_values),
        // `read_page` from a `ref`: the subtree's read, shown as a page read is.
        (Member::ReadPage, Some(BrowserOutput::ScopedRead(scoped))) => read_blocks(
            member,
            Some(ReadResult::Structured(scoped.read().clone())),
            context.read_values,
        ),
        (Member::FormInput, _) => ack(BROWSER_FIELD_SET),
        (Member::FileUpload, Some(BrowserOutput::File(outcome))) if outcome.ok() => {
            ack(BROWSER_FILE_UPLOADED)
        }
        (Member::ScrollTo, _) => ack(BROWSER_SCROLLED_INTO_VIEW),
        (Member::Screenshot | Member::Zoom, Some(BrowserOutput::Image(image))) => {
            if image.base64.is_empty() {
                return Err("an image result needs a non-empty image source".into());
            }
            Ok(vec![ResultBlock::Image(image)])
        }
        (Member::LeftClick, _) => ack(BROWSER_CLICKED),
        (Member::RightClick, _) => ack(BROWSER_RIGHT_CLICKED),
        (Member::MiddleClick, _) => ack(BROWSER_MIDDLE_CLICKED),
        (Member::DoubleClick, _) => ack(BROWSER_DOUBLE_CLICKED),
        (Member::TripleClick, _) => ack(BROWSER_TRIPLE_CLICKED),
        (Member::Hover, _) => ack(BROWSER_HOVERED),
        (Member::MouseMove, _) => ack(BROWSER_POINTER_MOVED),
        (Member::LeftClickDrag, _) => ack(BROWSER_DRAGGED),
        (Member::LeftMouseDown, _) => ack(BROWSER_BUTTON_PRESSED),
        (Member::LeftMouseUp, _) => ack(BROWSER_BUTTON_RELEASED),
        (Member::Scroll, _) => Ok(vec![ResultBlock::Text(browser_scrolled_text(
            context.direction.map_or("", direction_name),
        ))]),
        (Member::Type, _) => ack(BROWSER_TYPED),
        (Member::Key, _) => ack(BROWSER_KEYS_PRESSED),
        (Member::HoldKey, _) => ack(BROWSER_KEYS_HELD),
        (Member::Wait, _) => ack(BROWSER_WAITED),
        (Member::JavascriptExec, Some(BrowserOutput::Script(result))) => {
            if result.is_empty() {
                ack(BROWSER_SCRIPT_EMPTY)
            } else {
                Ok(vec![ResultBlock::Text(result)])
            }
        }
        (member, output) => Err(format!(
            "`{member}` got a driver output of the wrong kind: {output:?}"
        )),
    }
}
