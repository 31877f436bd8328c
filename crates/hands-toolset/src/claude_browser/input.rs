//! Reading a browser member's `input` into a validated [`Action`]: the driver call(s) it means,
//! built through the `hands-core` constructors, or a clear refusal.
//!
//! The shapes are the API's, as anthropic 2.10's generated wire types declare them
//! (`anthropic/types/beta/beta_browser_<member>_input.py`, the targets in
//! `beta_browser_coordinate_target.py`, `beta_browser_ref_target.py`,
//! `beta_browser_click_target.py`, `beta_browser_form_input_value.py`); limits and defaults the
//! types state only in their docstrings (`scroll_amount` 1–10, default 3; `wait` at most 30 s;
//! `read_page.depth` default 15; `key.repeat` default 1) are enforced here. Spec: api-contracts A,
//! "Browser use" ("Inputs": a click `target` is a coordinate or a ref target, discriminated by
//! `type`; an absent `tab_id` means the active tab; viewport coordinates at device scale 1).
//!
//! | member | input (`?` optional) |
//! |---|---|
//! | `navigate` | `{url, tab_id?}`: a URL (no scheme: https), or `"back"`, `"forward"`, `"reload"` (any case) |
//! | `list_tabs`, `new_tab` | `{}` |
//! | `switch_tab`, `close_tab` | `{tab_id}` |
//! | `read_page` | `{depth?: ≥ 1 (15), filter?: "all" \| "interactive", ref?, tab_id?}` |
//! | `get_page_text`, `read_console`, `read_network`, `screenshot` | `{tab_id?}` |
//! | `find` | `{query, tab_id?}` |
//! | `form_input` | `{target: ref target, value: string \| number \| boolean, tab_id?}` |
//! | `file_upload` | `{target: ref target, document_ids?: [string], paths?: [string], tab_id?}` |
//! | `scroll_to` | `{target: ref target, tab_id?}` |
//! | `zoom` | `{region: [x0, y0, x1, y1], tab_id?}` |
//! | `left_click` … `triple_click` | `{target: click target, modifiers?: "ctrl+shift", tab_id?}` |
//! | `hover` | `{target: click target, tab_id?}` |
//! | `left_click_drag` | `{from: coordinate target, target: coordinate target, tab_id?}` |
//! | `left_mouse_down`, `left_mouse_up`, `mouse_move` | `{target: coordinate target, tab_id?}` |
//! | `scroll` | `{scroll_direction, target: coordinate target, scroll_amount?: 1..=10 (3), tab_id?}` |
//! | `type` | `{text, tab_id?}` |
//! | `key` | `{text: "ctrl+a Delete", repeat?: 1..=100 (1), tab_id?}` |
//! | `hold_key` | `{duration: seconds, text: "shift", tab_id?}` |
//! | `wait` | `{duration: seconds ≤ 30, tab_id?}` |
//! | `javascript_exec` | `{text: source, tab_id?}` |
//!
//! A coordinate target is `{"type": "coordinate", "x", "y"}` (viewport pixels), a ref target
//! `{"type": "ref", "ref"}`, a click target either. Numbers are safe integers, an integral float
//! such as `3.0` counting as that integer; a null stands for an absent optional field.
//!
//! Where hands is stricter than the SDK's pydantic models (each refusal says why):
//! - an undeclared field, at the top or inside a target, is refused (pydantic keeps it for the
//!   driver): hands' driver reads no extra field, and a misspelt optional one (`tab_ld`) would
//!   otherwise act on the wrong tab;
//! - a number sent as a string (`"3"`) or a boolean where a number belongs is refused (pydantic's
//!   lax mode converts them);
//! - negative coordinates, `key.repeat` outside 1–100, `read_page.depth` below 1,
//!   `scroll_amount` outside 1–10, `wait` beyond 30 s and `hold_key` beyond this driver's 3 s
//!   are refused (the types leave ranges to their docstrings).
//!
//! What the driver contract cannot do is refused with a clear text after the input parsed:
//! `navigate` back/forward, `left_mouse_down`/`up`, a ref target with modifiers or with a click
//! other than `left_click`, `file_upload` with `paths` (files reach the page only by grant: a
//! grant id goes in `document_ids`).

use crate::errtext::{SHOWN_CHARS, allowed_list, show};
use std::time::Duration;

use hands_core::browser::args::{
    ArgError, BrowserCall, CssPoint, CssRegion, DiagnosticsSource, GrantId, MAX_HOLD_MS,
    MAX_SCOPED_DEPTH, PageUrl, PointerButton, ReadFilter, parse_ref, parse_tab_id,
};
use hands_core::browser::read::Ref;
use hands_core::browser::state::TabId;
use hands_core::input::{Key, KeyChord, KeyError, KeySequence, ModifierSet, ScrollDirection};
use serde_json::{Map, Value};

use super::members::Member;
use crate::browser::parse::safe_integer;
use crate::computer::members::MAX_KEY_REPEAT;

/// `scroll.scroll_amount`: wheel notches, 1 to 10 (`beta_browser_scroll_input.py`:
/// "Scroll-wheel notches (1–10). Default 3.").
pub const MAX_SCROLL_NOTCHES: u64 = 10;
/// `scroll.scroll_amount` when absent.
pub const DEFAULT_SCROLL_NOTCHES: u64 = 3;
/// `read_page.depth` when absent (`beta_browser_read_page_input.py`: "Maximum tree depth.
/// Default 15.").
pub const DEFAULT_READ_DEPTH: u64 = 15;
/// Longest `wait` the API's type allows (`beta_browser_wait_input.py`: "maximum 30"); the
/// toolset's own limit ([`Limits::max_wait`]) may be lower.
pub const MAX_WAIT: Duration = Duration::from_secs(30);

/// The limits of the members whose bounds are the toolset's own (see
/// [`super::ClaudeBrowserConfig`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest `wait` (at most [`MAX_WAIT`]).
    pub max_wait: Duration,
    /// The `run_script` timeout of `javascript_exec` (1 to 30,000 ms).
    pub script_timeout: Duration,
    /// How many entries `read_console` / `read_network` return (1 to 100).
    pub diagnostics_limit: u32,
    /// CSS pixels per `scroll_amount` notch.
    pub scroll_step: u64,
}

/// Why a member's input was refused. Every variant becomes an `is_error` result the model reads,
/// naming the member, the field, what was expected and what came.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// `input` is not a JSON object.
    #[error("`{member}` takes a JSON object as input, got {got}")]
    NotAnObject {
        /// The member.
        member: Member,
        /// What came instead, abbreviated.
        got: String,
    },
    /// A required field is absent.
    #[error("`{member}` requires `{field}` ({expected})")]
    Missing {
        /// The member.
        member: Member,
        /// The field (`target.x` for a nested one).
        field: String,
        /// What it should hold.
        expected: &'static str,
    },
    /// A field of the wrong shape.
    #[error("`{member}`: `{field}` must be {expected}, got {got}")]
    WrongType {
        /// The member.
        member: Member,
        /// The field (`target.x` for a nested one).
        field: String,
        /// What it should hold.
        expected: &'static str,
        /// What came, abbreviated.
        got: String,
    },
    /// A field the member (or its target) does not take.
    #[error("`{member}` does not take `{field}`; it takes {}", allowed_list(.allowed))]
    UnknownField {
        /// The member.
        member: Member,
        /// The field, as [`crate::errtext::name`] echoes it (`target.…` inside a target).
        field: String,
        /// The fields it takes there.
        allowed: &'static [&'static str],
    },
    /// A value of the right type that breaks a range or limit of the driver contract.
    #[error("`{member}`: {source}")]
    Invalid {
        /// The member.
        member: Member,
        /// The rule it broke.
        source: ArgError,
    },
    /// A key name or modifier that does not parse.
    #[error("`{member}`: `{field}`: {source}")]
    Key {
        /// The member.
        member: Member,
        /// The field.
        field: &'static str,
        /// The key failure.
        source: KeyError,
    },
    /// A well-formed input this driver contract cannot honour.
    #[error("`{member}`: {why}")]
    Unsupported {
        /// The member.
        member: Member,
        /// What cannot be done, and what to do instead.
        why: &'static str,
    },
}

/// Where a pointer member acts: a click target (`beta_browser_click_target.py`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `{"type": "coordinate", "x", "y"}`: viewport CSS pixels at scale 1.
    Coordinate(CssPoint),
    /// `{"type": "ref", "ref": "…"}`: an element ref from a read.
    Ref(Ref),
}

/// The value `form_input` sets (`beta_browser_form_input_value.py`: string, number or
/// boolean); which driver call sets it depends on the field's role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue {
    /// A string (or a number, written as the model sent it).
    Text(String),
    /// A boolean: checked or not.
    Checked(bool),
}

/// A validated member call.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// One driver call.
    Call(BrowserCall),
    /// The same driver call `times` times in a row (`key` with `repeat`).
    Repeat {
        /// The call.
        call: BrowserCall,
        /// 1 to 100.
        times: u32,
    },
    /// `navigate "reload"`: open the tab's current URL again, read from the state before the
    /// call, through the URL policy and `confirm` like any navigation.
    Reload {
        /// The tab, or the active one.
        tab: Option<TabId>,
    },
    /// `form_input`: the driver call is chosen from the field's role.
    FormInput {
        /// The field.
        target: Ref,
        /// The value.
        value: FieldValue,
        /// The tab, or the active one.
        tab: Option<TabId>,
    },
    /// `file_upload`: a click on the file input opens its chooser (driver `click`), then the
    /// grant fills it (driver `upload_file`).
    Upload {
        /// The file input.
        target: Ref,
        /// The file grant the application issued (sent in `document_ids`).
        grant: GrantId,
        /// The tab, or the active one.
        tab: Option<TabId>,
    },
    /// `wait`: no driver call.
    Wait(Duration),
    /// A member this driver contract cannot honour: answered with this text, nothing runs.
    Refuse(&'static str),
}

/// The schemes whose URLs have no `//` after the colon (`about:blank`, `data:…`): a text that
/// starts with one of these is not completed with `https://`.
pub const OPAQUE_SCHEMES: [&str; 9] = [
    "about:",
    "data:",
    "blob:",
    "javascript:",
    "mailto:",
    "tel:",
    "file:",
    "view-source:",
    "chrome:",
];

/// Completes a URL as the spec asks ("a URL with no scheme means https"): a text is taken as it
/// is when it starts with `scheme://` or one of [`OPAQUE_SCHEMES`]; anything else gets
/// `https://` in front. Unlike a plain WHATWG parse, `localhost:3000/a` and `example.com:8443`
/// are hosts with ports here, not URLs of the schemes `localhost:` and `example.com:`.
pub fn complete_url(field: &'static str, text: &str) -> Result<PageUrl, ArgError> {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    let has_scheme = match lower.find("://") {
        Some(end) => {
            let scheme = &lower[..end];
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    } || OPAQUE_SCHEMES.iter().any(|s| lower.starts_with(s));
    if has_scheme || text.is_empty() {
        PageUrl::parse(field, text)
    } else {
        PageUrl::parse(field, &format!("https://{text}"))
    }
}

impl Action {
    /// Parses and validates `input` for `member`.
    pub fn parse(member: Member, input: &Value, limits: Limits) -> Result<Action, InputError> {
        let a = Reader::new(member, input)?;
        Ok(match member {
            Member::Navigate => navigate(&a)?,
            Member::ListTabs => Action::Call(BrowserCall::ListTabs),
            Member::NewTab => Action::Call(BrowserCall::NewTab { url: None }),
            Member::SwitchTab => Action::Call(BrowserCall::SwitchTab {
                tab: a.required_tab()?,
            }),
            Member::CloseTab => Action::Call(BrowserCall::CloseTab {
                tab: a.required_tab()?,
            }),
            Member::ReadPage => read_page(&a)?,
            Member::GetPageText => Action::Call(BrowserCall::GetPageText { tab: a.tab()? }),
            Member::ReadConsole | Member::ReadNetwork => {
                let source = if member == Member::ReadConsole {
                    DiagnosticsSource::Console
                } else {
                    DiagnosticsSource::Network
                };
                a.call(BrowserCall::read_diagnostics(
                    a.tab()?,
                    source,
                    u64::from(limits.diagnostics_limit),
                ))?
            }
            Member::Find => {
                let query = a.required_string("query", "what to look for, such as \"Sign in\"")?;
                a.call(BrowserCall::find(query, a.tab()?))?
            }
            Member::FormInput => Action::FormInput {
                target: a.ref_target("target")?,
                value: a.field_value()?,
                tab: a.tab()?,
            },
            Member::FileUpload => file_upload(&a)?,
            Member::ScrollTo => Action::Call(BrowserCall::ScrollTo {
                target: a.ref_target("target")?,
                tab: a.tab()?,
            }),
            Member::Screenshot => Action::Call(BrowserCall::Screenshot { tab: a.tab()? }),
            Member::Zoom => {
                let region = a.region()?;
                Action::Call(BrowserCall::Zoom {
                    region: CssRegion::new(region).map_err(|e| a.invalid(e))?,
                    tab: a.tab()?,
                })
            }
            Member::LeftClick
            | Member::RightClick
            | Member::MiddleClick
            | Member::DoubleClick
            | Member::TripleClick => click(&a)?,
            Member::Hover => hover(&a)?,
            Member::LeftClickDrag => drag(&a)?,
            Member::LeftMouseDown | Member::LeftMouseUp => {
                let at = a.coordinate_target("target")?;
                Action::Call(BrowserCall::MouseButton {
                    tab: a.tab()?,
                    at,
                    press: member == Member::LeftMouseDown,
                })
            }
            Member::MouseMove => {
                let at = a.coordinate_target("target")?;
                Action::Call(BrowserCall::HoverAt { tab: a.tab()?, at })
            }
            Member::Scroll => scroll(&a, limits)?,
            Member::Type => {
                let text = a.required_string("text", "the text to type")?;
                a.call(BrowserCall::type_text(text, None, a.tab()?))?
            }
            Member::Key => key(&a)?,
            Member::HoldKey => hold_key(&a)?,
            Member::Wait => wait(&a, limits)?,
            Member::JavascriptExec => {
                const SOURCE: &str = "the JavaScript source to run (not empty)";
                let source = a.required_string("text", SOURCE)?;
                if source.trim().is_empty() {
                    return Err(a.wrong("text", SOURCE, &Value::from(source)));
                }
                a.call(BrowserCall::run_script(
                    a.tab()?,
                    source,
                    limits.script_timeout.as_millis() as u64,
                ))?
            }
        })
    }
}

/// `navigate`: a URL, or one of the history words (read trimmed and in any case, as the SDK's
/// pipeline does).
fn navigate(a: &Reader<'_>) -> Result<Action, InputError> {
    let url = a.required_string(
        "url",
        "a URL such as \"https://example.com/page\", or \"back\", \"forward\", \"reload\"",
    )?;
    let tab = a.tab()?;
    Ok(match url.trim().to_ascii_lowercase().as_str() {
        "back" | "forward" => Action::Refuse(crate::strings::BROWSER_HISTORY_UNSUPPORTED),
        "reload" => Action::Reload { tab },
        _ => Action::Call(BrowserCall::Navigate {
            url: complete_url("url", url).map_err(|e| a.invalid(e))?,
            tab,
        }),
    })
}

/// `read_page`: the whole page, or the subtree under `ref` down to `depth`.
fn read_page(a: &Reader<'_>) -> Result<Action, InputError> {
    let filter = match a.string("filter")? {
        // Omitted: the visible elements. The driver's read has no viewport filter, so it is the
        // whole read (within the read's size caps).
        None => ReadFilter::All,
        Some(f) => ReadFilter::parse("filter", f).map_err(|e| a.invalid(e))?,
    };
    const DEPTH: &str = "a maximum tree depth, an integer of at least 1";
    let depth = a.integer("depth", DEPTH)?.unwrap_or(DEFAULT_READ_DEPTH);
    if depth == 0 {
        return Err(a.wrong("depth", DEPTH, &Value::from(depth)));
    }
    let root = a.optional_ref("ref")?;
    let tab = a.tab()?;
    match root {
        // A whole-page read is bounded by the read's size caps, not by depth.
        None => Ok(Action::Call(BrowserCall::ReadPage { filter, tab })),
        // The driver reads at most 32 levels below a root: a deeper maximum reads all it can.
        Some(root) => a.call(BrowserCall::read_page_scoped(
            tab,
            Some(root),
            depth.min(u64::from(MAX_SCOPED_DEPTH)),
            filter,
        )),
    }
}

/// `file_upload`: one granted file (its id in `document_ids`), never a path.
fn file_upload(a: &Reader<'_>) -> Result<Action, InputError> {
    let target = a.ref_target("target")?;
    let paths = a.string_list("paths")?;
    let documents = a.string_list("document_ids")?;
    let tab = a.tab()?;
    if !paths.is_empty() {
        return Err(a.unsupported(
            "this browser uploads only files the application granted, never a path: send the grant's id in `document_ids` and no `paths`",
        ));
    }
    let grant = match documents.as_slice() {
        [] => return Err(a.missing("document_ids", DOCUMENT_IDS)),
        [one] => GrantId::parse(one).map_err(|e| a.invalid(e))?,
        _ => {
            return Err(a.unsupported(
                "this browser uploads one file per call: send one id in `document_ids`, and call file_upload again for the next file",
            ));
        }
    };
    Ok(Action::Upload { target, grant, tab })
}

/// The five clicks: a coordinate target takes any button, count and modifiers; a ref target
/// only a plain `left_click`.
fn click(a: &Reader<'_>) -> Result<Action, InputError> {
    let member = a.member;
    let target = a.click_target("target")?;
    let keys = a.modifiers()?;
    let tab = a.tab()?;
    let (button, count) = match member {
        Member::RightClick => (PointerButton::Right, 1),
        Member::MiddleClick => (PointerButton::Middle, 1),
        Member::DoubleClick => (PointerButton::Left, 2),
        Member::TripleClick => (PointerButton::Left, 3),
        _ => (PointerButton::Left, 1),
    };
    match target {
        Target::Coordinate(at) => a.call(BrowserCall::click_at(tab, at, button, count, keys)),
        Target::Ref(_) if member != Member::LeftClick => Err(a.unsupported(
            "a ref target is only clicked with left_click by this browser driver; use a coordinate target (from a screenshot) for other clicks",
        )),
        Target::Ref(_) if !keys.is_empty() => Err(a.unsupported(
            "`modifiers` need a coordinate target: this browser driver clicks a ref target without modifiers",
        )),
        Target::Ref(target) => Ok(Action::Call(BrowserCall::Click { target, tab })),
    }
}

/// `hover`: over a coordinate or a ref target.
fn hover(a: &Reader<'_>) -> Result<Action, InputError> {
    let target = a.click_target("target")?;
    let tab = a.tab()?;
    Ok(Action::Call(match target {
        Target::Coordinate(at) => BrowserCall::HoverAt { tab, at },
        Target::Ref(target) => BrowserCall::Hover { target, tab },
    }))
}

/// `left_click_drag`: from one coordinate target to another.
fn drag(a: &Reader<'_>) -> Result<Action, InputError> {
    let from = a.coordinate_target("from")?;
    let to = a.coordinate_target("target")?;
    a.call(BrowserCall::drag_path(
        a.tab()?,
        vec![from, to],
        ModifierSet::NONE,
    ))
}

/// `scroll`: a direction and a number of notches (1 to 10, default 3) at a coordinate target.
fn scroll(a: &Reader<'_>, limits: Limits) -> Result<Action, InputError> {
    const DIRECTION: &str = "one of \"up\", \"down\", \"left\", \"right\"";
    let raw = a.required_string("scroll_direction", DIRECTION)?;
    if ScrollDirection::parse(raw).is_none() {
        return Err(a.wrong("scroll_direction", DIRECTION, &Value::from(raw)));
    }
    let at = a.coordinate_target("target")?;
    const AMOUNT: &str = "a number of scroll-wheel notches from 1 to 10";
    let amount = a
        .integer("scroll_amount", AMOUNT)?
        .unwrap_or(DEFAULT_SCROLL_NOTCHES);
    if !(1..=MAX_SCROLL_NOTCHES).contains(&amount) {
        return Err(a.wrong("scroll_amount", AMOUNT, &Value::from(amount)));
    }
    a.call(BrowserCall::scroll_at(
        at,
        raw,
        amount.saturating_mul(limits.scroll_step),
        a.tab()?,
    ))
}

/// `key`: a sequence of chords, pressed `repeat` times (1 to 100, default 1).
fn key(a: &Reader<'_>) -> Result<Action, InputError> {
    let text = a.required_string(
        "text",
        "a key or chord such as \"Return\" or \"ctrl+s\", several separated by spaces",
    )?;
    let sequence = KeySequence::parse(text).map_err(|e| a.key_error("text", e))?;
    let chords: Vec<String> = sequence.chords().iter().map(chord_text).collect();
    let chords: Vec<&str> = chords.iter().map(String::as_str).collect();
    const REPEAT: &str = "an integer from 1 to 100";
    let repeat = a.integer("repeat", REPEAT)?.unwrap_or(1);
    if !(1..=MAX_KEY_REPEAT).contains(&repeat) {
        return Err(a.wrong("repeat", REPEAT, &Value::from(repeat)));
    }
    let call = BrowserCall::key(&chords, a.tab()?).map_err(|e| a.invalid(e))?;
    Ok(if repeat == 1 {
        Action::Call(call)
    } else {
        Action::Repeat {
            call,
            times: repeat as u32,
        }
    })
}

/// `hold_key`: one chord held for more than 0 and at most 3 seconds.
fn hold_key(a: &Reader<'_>) -> Result<Action, InputError> {
    let text = a.required_string("text", "a key or chord such as \"shift\"")?;
    let chord = KeyChord::parse(text).map_err(|e| a.key_error("text", e))?;
    const DURATION: &str =
        "a number of seconds, more than 0 and at most 3 (this browser's longest hold)";
    let duration = a.seconds("duration", DURATION)?;
    let ms = (duration.as_secs_f64() * 1000.0).round() as u64;
    if !(1..=MAX_HOLD_MS).contains(&ms) {
        return Err(a.wrong("duration", DURATION, &Value::from(duration.as_secs_f64())));
    }
    let names: Vec<String> = chord.keys().iter().map(key_text).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    a.call(BrowserCall::hold_keys(a.tab()?, &names, ms))
}

/// `wait`: a duration up to the toolset's limit (itself at most [`MAX_WAIT`]).
fn wait(a: &Reader<'_>, limits: Limits) -> Result<Action, InputError> {
    const DURATION: &str = "a number of seconds, from 0 to the toolset's limit";
    let duration = a.seconds("duration", DURATION)?;
    // `tab_id` is in the type; a wait acts on no tab, but a malformed id is still the model's
    // mistake to hear about.
    a.tab()?;
    let max = limits.max_wait.min(MAX_WAIT);
    if duration > max {
        return Err(InputError::WrongType {
            member: a.member,
            field: "duration".into(),
            expected: DURATION,
            got: format!(
                "{} (the limit is {} seconds)",
                duration.as_secs_f64(),
                max.as_secs_f64()
            ),
        });
    }
    Ok(Action::Wait(duration))
}

/// A key's name as `Key::parse` reads it back to the same key: its canonical name, except `+`
/// (which `+`-joined chords cannot hold: `plus`) and a whitespace character (a hexadecimal
/// keysym, as a blank name would be trimmed away).
fn key_text(key: &Key) -> String {
    match key.name() {
        "+" => "plus".to_owned(),
        name if name.chars().all(char::is_whitespace) => format!("0x{:x}", key.keysym()),
        name => name.to_owned(),
    }
}

/// A chord as the text `KeyPress::parse` reads back: key names joined by `+`.
fn chord_text(chord: &KeyChord) -> String {
    chord
        .keys()
        .iter()
        .map(key_text)
        .collect::<Vec<_>>()
        .join("+")
}

/// One member's input object, checked for unknown fields up front.
struct Reader<'a> {
    member: Member,
    map: &'a Map<String, Value>,
}

const COORDINATE_TARGET: &str =
    "a coordinate target {\"type\": \"coordinate\", \"x\": …, \"y\": …} in viewport pixels";
const REF_TARGET: &str =
    "a ref target {\"type\": \"ref\", \"ref\": \"…\"} naming an element from read_page or find";
const CLICK_TARGET: &str =
    "{\"type\": \"coordinate\", \"x\": …, \"y\": …} or {\"type\": \"ref\", \"ref\": \"…\"}";
const PIXEL: &str = "a non-negative integer number of viewport pixels";
const REF: &str = "an element ref from read_page or find";
const DOCUMENT_IDS: &str = "an array holding the id of a file grant the application gave you";
/// The fields of the two target kinds.
const COORDINATE_FIELDS: &[&str] = &["type", "x", "y"];
const REF_FIELDS: &[&str] = &["type", "ref"];

/// Which target kinds a field takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kinds {
    Coordinate,
    Ref,
    Either,
}

impl<'a> Reader<'a> {
    fn new(member: Member, input: &'a Value) -> Result<Reader<'a>, InputError> {
        let Value::Object(map) = input else {
            return Err(InputError::NotAnObject {
                member,
                got: show(input, SHOWN_CHARS),
            });
        };
        let allowed = member.fields();
        // A null stands for an absent optional field.
        if let Some(field) = map
            .iter()
            .find_map(|(k, v)| (!allowed.contains(&k.as_str()) && !v.is_null()).then_some(k))
        {
            return Err(InputError::UnknownField {
                member,
                field: crate::errtext::name(field),
                allowed,
            });
        }
        Ok(Reader { member, map })
    }

    fn get(&self, field: &'static str) -> Option<&'a Value> {
        debug_assert!(
            self.member.fields().contains(&field),
            "{field} not declared"
        );
        self.map.get(field).filter(|v| !v.is_null())
    }

    /// A built driver call as the action, or its rule's refusal.
    fn call(&self, built: Result<BrowserCall, ArgError>) -> Result<Action, InputError> {
        built.map(Action::Call).map_err(|e| self.invalid(e))
    }

    fn invalid(&self, source: ArgError) -> InputError {
        InputError::Invalid {
            member: self.member,
            source,
        }
    }

    fn unsupported(&self, why: &'static str) -> InputError {
        InputError::Unsupported {
            member: self.member,
            why,
        }
    }

    fn key_error(&self, field: &'static str, source: KeyError) -> InputError {
        InputError::Key {
            member: self.member,
            field,
            source,
        }
    }

    fn wrong(&self, field: impl Into<String>, expected: &'static str, got: &Value) -> InputError {
        InputError::WrongType {
            member: self.member,
            field: field.into(),
            expected,
            got: show(got, SHOWN_CHARS),
        }
    }

    fn missing(&self, field: impl Into<String>, expected: &'static str) -> InputError {
        InputError::Missing {
            member: self.member,
            field: field.into(),
            expected,
        }
    }

    fn string(&self, field: &'static str) -> Result<Option<&'a str>, InputError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong(field, "a string", other)),
        }
    }

    fn required_string(
        &self,
        field: &'static str,
        expected: &'static str,
    ) -> Result<&'a str, InputError> {
        match self.get(field) {
            None => Err(self.missing(field, expected)),
            Some(Value::String(s)) => Ok(s),
            Some(other) => Err(self.wrong(field, expected, other)),
        }
    }

    /// An optional array of strings; absent is empty.
    fn string_list(&self, field: &'static str) -> Result<Vec<&'a str>, InputError> {
        const EXPECTED: &str = "an array of strings";
        match self.get(field) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str()
                        .ok_or_else(|| self.wrong(field, EXPECTED, item))
                })
                .collect(),
            Some(other) => Err(self.wrong(field, EXPECTED, other)),
        }
    }

    fn integer(
        &self,
        field: &'static str,
        expected: &'static str,
    ) -> Result<Option<u64>, InputError> {
        match self.get(field) {
            None => Ok(None),
            Some(value) => safe_integer(value)
                .map(Some)
                .ok_or_else(|| self.wrong(field, expected, value)),
        }
    }

    /// A duration in seconds: a finite, non-negative number.
    fn seconds(&self, field: &'static str, expected: &'static str) -> Result<Duration, InputError> {
        let value = self
            .get(field)
            .ok_or_else(|| self.missing(field, expected))?;
        match value.as_f64() {
            Some(s) if (0.0..=1.0e9).contains(&s) => Ok(Duration::from_secs_f64(s)),
            _ => Err(self.wrong(field, expected, value)),
        }
    }

    fn tab(&self) -> Result<Option<TabId>, InputError> {
        const EXPECTED: &str = "a tab id from browser_state, or absent for the active tab";
        match self.get("tab_id") {
            None => Ok(None),
            Some(Value::String(s)) => parse_tab_id("tab_id", s)
                .map(Some)
                .map_err(|e| self.invalid(e)),
            Some(other) => Err(self.wrong("tab_id", EXPECTED, other)),
        }
    }

    fn required_tab(&self) -> Result<TabId, InputError> {
        let id = self.required_string("tab_id", "a tab id from browser_state")?;
        parse_tab_id("tab_id", id).map_err(|e| self.invalid(e))
    }

    /// `read_page.ref`: a plain ref string.
    fn optional_ref(&self, field: &'static str) -> Result<Option<Ref>, InputError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => parse_ref(field, s).map(Some).map_err(|e| self.invalid(e)),
            Some(other) => Err(self.wrong(field, REF, other)),
        }
    }

    fn region(&self) -> Result<[u64; 4], InputError> {
        const EXPECTED: &str = "[x0, y0, x1, y1]: four non-negative integers in viewport pixels (top-left, bottom-right)";
        let value = self
            .get("region")
            .ok_or_else(|| self.missing("region", EXPECTED))?;
        let items = value
            .as_array()
            .filter(|a| a.len() == 4)
            .ok_or_else(|| self.wrong("region", EXPECTED, value))?;
        let mut edges = [0; 4];
        for (edge, item) in edges.iter_mut().zip(items) {
            *edge = safe_integer(item).ok_or_else(|| self.wrong("region", EXPECTED, value))?;
        }
        Ok(edges)
    }

    /// A coordinate target (`beta_browser_coordinate_target.py`).
    fn coordinate_target(&self, field: &'static str) -> Result<CssPoint, InputError> {
        match self.target(field, Kinds::Coordinate)? {
            Target::Coordinate(at) => Ok(at),
            // `target` reads only a coordinate target here.
            Target::Ref(_) => Err(self.wrong(field, COORDINATE_TARGET, &Value::Null)),
        }
    }

    /// A ref target (`beta_browser_ref_target.py`).
    fn ref_target(&self, field: &'static str) -> Result<Ref, InputError> {
        match self.target(field, Kinds::Ref)? {
            Target::Ref(r) => Ok(r),
            // `target` reads only a ref target here.
            Target::Coordinate(_) => Err(self.wrong(field, REF_TARGET, &Value::Null)),
        }
    }

    /// A click target (`beta_browser_click_target.py`): either kind, discriminated by `type`.
    fn click_target(&self, field: &'static str) -> Result<Target, InputError> {
        self.target(field, Kinds::Either)
    }

    fn target(&self, field: &'static str, kinds: Kinds) -> Result<Target, InputError> {
        let expected = match kinds {
            Kinds::Coordinate => COORDINATE_TARGET,
            Kinds::Ref => REF_TARGET,
            Kinds::Either => CLICK_TARGET,
        };
        let value = self
            .get(field)
            .ok_or_else(|| self.missing(field, expected))?;
        let Value::Object(target) = value else {
            return Err(self.wrong(field, expected, value));
        };
        let kind = target.get("type").and_then(Value::as_str);
        let allowed = match (kind, kinds) {
            (Some("coordinate"), Kinds::Coordinate | Kinds::Either) => COORDINATE_FIELDS,
            (Some("ref"), Kinds::Ref | Kinds::Either) => REF_FIELDS,
            _ => {
                let kinds_text = match kinds {
                    Kinds::Coordinate => "\"coordinate\"",
                    Kinds::Ref => "\"ref\"",
                    Kinds::Either => "\"coordinate\" or \"ref\"",
                };
                return Err(match target.get("type") {
                    None | Some(Value::Null) => self.missing(format!("{field}.type"), kinds_text),
                    Some(other) => self.wrong(format!("{field}.type"), kinds_text, other),
                });
            }
        };
        if let Some(key) = target
            .iter()
            .find_map(|(k, v)| (!allowed.contains(&k.as_str()) && !v.is_null()).then_some(k))
        {
            return Err(InputError::UnknownField {
                member: self.member,
                field: format!("{field}.{}", crate::errtext::name(key)),
                allowed,
            });
        }
        let part = |name: &'static str, what: &'static str| {
            target
                .get(name)
                .filter(|v| !v.is_null())
                .ok_or_else(|| self.missing(format!("{field}.{name}"), what))
        };
        if allowed == REF_FIELDS {
            return match part("ref", REF)? {
                Value::String(s) => parse_ref("ref", s)
                    .map(Target::Ref)
                    .map_err(|e| self.invalid(e)),
                other => Err(self.wrong(format!("{field}.ref"), REF, other)),
            };
        }
        let pixel = |name: &'static str| -> Result<u64, InputError> {
            let value = part(name, PIXEL)?;
            safe_integer(value).ok_or_else(|| self.wrong(format!("{field}.{name}"), PIXEL, value))
        };
        let (x, y) = (pixel("x")?, pixel("y")?);
        CssPoint::new(x, y)
            .map(Target::Coordinate)
            .map_err(|e| self.invalid(e))
    }

    /// `modifiers`: a `+`-joined chord of modifier names (`"ctrl+shift"`); absent or empty
    /// means none.
    fn modifiers(&self) -> Result<ModifierSet, InputError> {
        const EXPECTED: &str =
            "the modifier keys held during the action, as one text such as \"ctrl+shift\"";
        match self.get("modifiers") {
            None => Ok(ModifierSet::NONE),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(ModifierSet::NONE),
            Some(Value::String(s)) => {
                ModifierSet::parse(s).map_err(|e| self.key_error("modifiers", e))
            }
            Some(other) => Err(self.wrong("modifiers", EXPECTED, other)),
        }
    }

    /// `form_input.value`: a string, a number or a boolean.
    fn field_value(&self) -> Result<FieldValue, InputError> {
        const EXPECTED: &str = "the value to set: a string (or number) for a text field or a select, true or false for a checkbox or radio";
        let value = self
            .get("value")
            .ok_or_else(|| self.missing("value", EXPECTED))?;
        Ok(match value {
            Value::String(s) => FieldValue::Text(s.clone()),
            Value::Number(n) => FieldValue::Text(n.to_string()),
            Value::Bool(b) => FieldValue::Checked(*b),
            other => return Err(self.wrong("value", EXPECTED, other)),
        })
    }
}

#[cfg(test)]
mod tests;
