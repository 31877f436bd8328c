//! Reading a browser member's `input` into a validated [`Action`]: the driver call(s) it means,
//! built through the `hands-core` constructors, or a clear refusal.
//!
//! The spec fixes the member names, the click `target` (a coordinate target or a ref target,
//! discriminated by `type`), `modifiers?`, `tab_id?` ("an absent tab_id means the active tab"),
//! `navigate {url | "back" | "forward" | "reload"}` with https for a URL without a scheme, and
//! viewport coordinates at device scale factor 1 (api-contracts A, "Browser use", "Inputs"). The
//! per-member input schemas are not checked by the API; where the spec is silent these are our
//! shapes, chosen as a Claude model sends them, mirroring the computer toolset's fields
//! (`coordinate`, `start_coordinate`, `scroll_direction`, `scroll_amount`, `text`, `repeat`,
//! `duration` in seconds) and naming element refs `ref`:
//!
//! | member | input |
//! |---|---|
//! | `navigate` | `{url, tab_id?}`: an absolute URL, a bare host (`example.com/a` → `https://…`), or `"back"`, `"forward"`, `"reload"` |
//! | `list_tabs` | `{}` |
//! | `new_tab` | `{url?}` (absent: a blank tab) |
//! | `switch_tab` | `{tab_id}` |
//! | `close_tab` | `{tab_id?}` (absent: the active tab) |
//! | `read_page` | `{filter?: "all" \| "interactive", tab_id?}` (default `all`) |
//! | `get_page_text`, `screenshot` | `{tab_id?}` |
//! | `read_console`, `read_network` | `{limit?: 1..=100, tab_id?}` |
//! | `find` | `{query, tab_id?}` |
//! | `form_input` | `{ref, value: string \| number \| boolean \| [string], tab_id?}` |
//! | `file_upload` | `{grant_id}`: a file grant the application issued (never a path) |
//! | `scroll_to` | `{ref, tab_id?}` |
//! | `zoom` | `{region: [x0, y0, x1, y1], tab_id?}` |
//! | `left_click` … `triple_click` | `{target, modifiers?, tab_id?}` |
//! | `hover` | `{target, tab_id?}` |
//! | `left_click_drag` | `{start_coordinate: [x, y], coordinate: [x, y], modifiers?, tab_id?}` |
//! | `left_mouse_down`, `left_mouse_up` | `{}` |
//! | `mouse_move` | `{coordinate: [x, y], tab_id?}` |
//! | `scroll` | `{scroll_direction, scroll_amount: 0..=100 wheel clicks, coordinate?, modifiers?, tab_id?}` |
//! | `type` | `{text, ref?, tab_id?}` (no ref: the focused element) |
//! | `key` | `{text: "ctrl+a Delete", repeat?: 1..=100, tab_id?}` |
//! | `hold_key` | `{text: "shift", duration: seconds, tab_id?}` |
//! | `wait` | `{duration: seconds}` |
//! | `javascript_exec` | `{text: source, tab_id?}` |
//!
//! `modifiers` is a `+`-joined text as the computer toolset's (`"ctrl+shift"`) or an array of
//! names (`["ctrl", "shift"]`, DOM names such as `"Control"` and `"Meta"` included). Numbers are
//! non-negative safe integers, an integral float such as `3.0` counting as that integer.

use crate::errtext::{SHOWN_CHARS, allowed_list, show};
use std::time::Duration;

use hands_core::browser::args::{
    ArgError, BrowserCall, CssPoint, CssRegion, DiagnosticsSource, GrantId, MAX_HOLD_MS, PageUrl,
    PointerButton, ReadFilter, parse_ref, parse_tab_id,
};
use hands_core::browser::read::Ref;
use hands_core::browser::state::TabId;
use hands_core::input::{
    Key, KeyChord, KeyError, KeySequence, Modifier, ModifierSet, ScrollDirection,
};
use serde_json::{Map, Value};

use super::members::Member;
use crate::browser::parse::safe_integer;
use crate::computer::members::{MAX_KEY_REPEAT, MAX_SCROLL_AMOUNT};

/// The limits of the members whose bounds are the toolset's own (see
/// [`super::ClaudeBrowserConfig`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest `wait`.
    pub max_wait: Duration,
    /// The `run_script` timeout of `javascript_exec` (1 to 30,000 ms).
    pub script_timeout: Duration,
    /// `limit` of `read_console` / `read_network` when absent (1 to 100).
    pub diagnostics_limit: u32,
    /// CSS pixels per `scroll_amount` click.
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
        /// The field.
        field: String,
        /// What it should hold.
        expected: &'static str,
    },
    /// A field of the wrong shape.
    #[error("`{member}`: `{field}` must be {expected}, got {got}")]
    WrongType {
        /// The member.
        member: Member,
        /// The field (`target.coordinate` for a nested one).
        field: String,
        /// What it should hold.
        expected: &'static str,
        /// What came, abbreviated.
        got: String,
    },
    /// A field the member does not take.
    #[error("`{member}` does not take `{field}`; it takes {}", allowed_list(.allowed))]
    UnknownField {
        /// The member.
        member: Member,
        /// The field, as [`crate::errtext::name`] echoes it.
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

/// Where a pointer member acts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `{"type": "coordinate", "coordinate": [x, y]}`: viewport CSS pixels at scale 1.
    Coordinate(CssPoint),
    /// `{"type": "ref", "ref": "…"}`: an element ref from a read.
    Ref(Ref),
}

/// The value `form_input` sets; which driver call sets it depends on the field's role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue {
    /// A string (or a number, written as the model sent it).
    Text(String),
    /// A boolean: checked or not.
    Checked(bool),
    /// Several option values (a multi-select list).
    Options(Vec<String>),
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
    /// `close_tab` without `tab_id`: the active tab, read from the state before the call.
    CloseActive,
    /// `form_input`: the driver call is chosen from the field's role.
    FormInput {
        /// The field.
        target: Ref,
        /// The value.
        value: FieldValue,
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
        let call = |built: Result<BrowserCall, ArgError>| -> Result<Action, InputError> {
            built.map(Action::Call).map_err(|e| a.invalid(e))
        };
        Ok(match member {
            Member::Navigate => {
                let url = a.required_string(
                    "url",
                    "a URL such as \"https://example.com/page\", or \"back\", \"forward\", \"reload\"",
                )?;
                let tab = a.tab()?;
                match url {
                    "back" | "forward" => {
                        Action::Refuse(crate::strings::BROWSER_HISTORY_UNSUPPORTED)
                    }
                    "reload" => Action::Reload { tab },
                    url => Action::Call(BrowserCall::Navigate {
                        url: complete_url("url", url).map_err(|e| a.invalid(e))?,
                        tab,
                    }),
                }
            }
            Member::ListTabs => Action::Call(BrowserCall::ListTabs),
            Member::NewTab => {
                let url = a
                    .string("url")?
                    .map(|u| complete_url("url", u))
                    .transpose()
                    .map_err(|e| a.invalid(e))?;
                Action::Call(BrowserCall::NewTab { url })
            }
            Member::SwitchTab => Action::Call(BrowserCall::SwitchTab {
                tab: a.required_tab()?,
            }),
            Member::CloseTab => match a.tab()? {
                Some(tab) => Action::Call(BrowserCall::CloseTab { tab }),
                None => Action::CloseActive,
            },
            Member::ReadPage => {
                let filter = match a.string("filter")? {
                    None => ReadFilter::All,
                    Some(f) => ReadFilter::parse("filter", f).map_err(|e| a.invalid(e))?,
                };
                Action::Call(BrowserCall::ReadPage {
                    filter,
                    tab: a.tab()?,
                })
            }
            Member::GetPageText => Action::Call(BrowserCall::GetPageText { tab: a.tab()? }),
            Member::ReadConsole | Member::ReadNetwork => {
                let source = if member == Member::ReadConsole {
                    DiagnosticsSource::Console
                } else {
                    DiagnosticsSource::Network
                };
                let limit = a
                    .integer("limit", "an integer from 1 to 100")?
                    .unwrap_or(u64::from(limits.diagnostics_limit));
                call(BrowserCall::read_diagnostics(a.tab()?, source, limit))?
            }
            Member::Find => {
                let query = a.required_string("query", "what to look for, such as \"Sign in\"")?;
                call(BrowserCall::find(query, a.tab()?))?
            }
            Member::FormInput => Action::FormInput {
                target: a.required_ref("ref")?,
                value: a.field_value()?,
                tab: a.tab()?,
            },
            Member::FileUpload => {
                let grant = a.required_string(
                    "grant_id",
                    "the file grant id the task gave you (file paths are not accepted)",
                )?;
                Action::Call(BrowserCall::UploadFile {
                    grant: GrantId::parse(grant).map_err(|e| a.invalid(e))?,
                })
            }
            Member::ScrollTo => Action::Call(BrowserCall::ScrollTo {
                target: a.required_ref("ref")?,
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
            | Member::TripleClick => {
                let (button, count) = match member {
                    Member::RightClick => (PointerButton::Right, 1),
                    Member::MiddleClick => (PointerButton::Middle, 1),
                    Member::DoubleClick => (PointerButton::Left, 2),
                    Member::TripleClick => (PointerButton::Left, 3),
                    _ => (PointerButton::Left, 1),
                };
                let target = a.target()?;
                let keys = a.modifiers()?;
                let tab = a.tab()?;
                match target {
                    Target::Coordinate(at) => {
                        call(BrowserCall::click_at(tab, at, button, count, keys))?
                    }
                    Target::Ref(_) if member != Member::LeftClick => {
                        return Err(a.unsupported(
                            "a ref target is only clicked with left_click by this browser driver; use a coordinate target (from a screenshot) for other clicks",
                        ));
                    }
                    Target::Ref(_) if !keys.is_empty() => {
                        return Err(a.unsupported(
                            "`modifiers` need a coordinate target: this browser driver clicks a ref target without modifiers",
                        ));
                    }
                    Target::Ref(target) => Action::Call(BrowserCall::Click { target, tab }),
                }
            }
            Member::Hover => {
                let target = a.target()?;
                let tab = a.tab()?;
                Action::Call(match target {
                    Target::Coordinate(at) => BrowserCall::HoverAt { tab, at },
                    Target::Ref(target) => BrowserCall::Hover { target, tab },
                })
            }
            Member::LeftClickDrag => {
                let from = a.required_point("start_coordinate")?;
                let to = a.required_point("coordinate")?;
                let keys = a.modifiers()?;
                call(BrowserCall::drag_path(a.tab()?, vec![from, to], keys))?
            }
            Member::LeftMouseDown | Member::LeftMouseUp => {
                Action::Refuse(crate::strings::BROWSER_BUTTON_HOLD_UNSUPPORTED)
            }
            Member::MouseMove => {
                let at = a.required_point("coordinate")?;
                Action::Call(BrowserCall::HoverAt { tab: a.tab()?, at })
            }
            Member::Scroll => {
                const DIRECTION: &str = "one of \"up\", \"down\", \"left\", \"right\"";
                let raw = a.required_string("scroll_direction", DIRECTION)?;
                if ScrollDirection::parse(raw).is_none() {
                    return Err(a.wrong("scroll_direction", DIRECTION, &Value::from(raw)));
                }
                const AMOUNT: &str = "an integer number of wheel clicks, 0 to 100";
                let amount = a
                    .integer("scroll_amount", AMOUNT)?
                    .ok_or_else(|| a.missing("scroll_amount", AMOUNT))?;
                if amount > MAX_SCROLL_AMOUNT {
                    return Err(a.wrong("scroll_amount", AMOUNT, &Value::from(amount)));
                }
                if a.get("coordinate").is_some() {
                    return Err(a.unsupported(
                        "this browser driver scrolls the page at the centre of the viewport and cannot scroll at a `coordinate`; send scroll without it, or scroll_to an element's ref",
                    ));
                }
                if !a.modifiers()?.is_empty() {
                    return Err(a.unsupported(
                        "this browser driver cannot hold `modifiers` while scrolling; send scroll without them",
                    ));
                }
                call(BrowserCall::scroll(
                    raw,
                    amount.saturating_mul(limits.scroll_step),
                    a.tab()?,
                ))?
            }
            Member::Type => {
                let text = a.required_string("text", "the text to type")?;
                let target = a.optional_ref("ref")?;
                call(BrowserCall::type_text(text, target, a.tab()?))?
            }
            Member::Key => {
                let text = a.required_string(
                    "text",
                    "a key or chord such as \"Return\" or \"ctrl+s\", several separated by spaces",
                )?;
                let sequence = KeySequence::parse(text).map_err(|e| a.key_error("text", e))?;
                let chords: Vec<String> = sequence.chords().iter().map(chord_text).collect();
                let chords: Vec<&str> = chords.iter().map(String::as_str).collect();
                let repeat = a
                    .integer("repeat", "an integer from 1 to 100")?
                    .unwrap_or(1);
                if !(1..=MAX_KEY_REPEAT).contains(&repeat) {
                    return Err(a.wrong(
                        "repeat",
                        "an integer from 1 to 100",
                        &Value::from(repeat),
                    ));
                }
                let call = BrowserCall::key(&chords, a.tab()?).map_err(|e| a.invalid(e))?;
                if repeat == 1 {
                    Action::Call(call)
                } else {
                    Action::Repeat {
                        call,
                        times: repeat as u32,
                    }
                }
            }
            Member::HoldKey => {
                let text = a.required_string("text", "a key or chord such as \"shift\"")?;
                let chord = KeyChord::parse(text).map_err(|e| a.key_error("text", e))?;
                const DURATION: &str = "a number of seconds, more than 0 and at most 3";
                let duration = a.seconds("duration", DURATION)?;
                let ms = (duration.as_secs_f64() * 1000.0).round() as u64;
                if !(1..=MAX_HOLD_MS).contains(&ms) {
                    return Err(a.wrong(
                        "duration",
                        DURATION,
                        &Value::from(duration.as_secs_f64()),
                    ));
                }
                let names: Vec<String> = chord.keys().iter().map(key_text).collect();
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                call(BrowserCall::hold_keys(a.tab()?, &names, ms))?
            }
            Member::Wait => {
                const DURATION: &str = "a number of seconds, from 0 to the toolset's limit";
                let duration = a.seconds("duration", DURATION)?;
                if duration > limits.max_wait {
                    return Err(InputError::WrongType {
                        member,
                        field: "duration".into(),
                        expected: DURATION,
                        got: format!(
                            "{} (the limit is {} seconds)",
                            duration.as_secs_f64(),
                            limits.max_wait.as_secs_f64()
                        ),
                    });
                }
                Action::Wait(duration)
            }
            Member::JavascriptExec => {
                const SOURCE: &str = "the JavaScript source to run (not empty)";
                let source = a.required_string("text", SOURCE)?;
                if source.trim().is_empty() {
                    return Err(a.wrong("text", SOURCE, &Value::from(source)));
                }
                call(BrowserCall::run_script(
                    a.tab()?,
                    source,
                    limits.script_timeout.as_millis() as u64,
                ))?
            }
        })
    }
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

const COORDINATE: &str = "an array of two non-negative integers [x, y] in viewport CSS pixels";
const TARGET: &str =
    "{\"type\": \"coordinate\", \"coordinate\": [x, y]} or {\"type\": \"ref\", \"ref\": \"…\"}";
const REF: &str = "an element ref from read_page or find";

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

    fn optional_ref(&self, field: &'static str) -> Result<Option<Ref>, InputError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => parse_ref(field, s).map(Some).map_err(|e| self.invalid(e)),
            Some(other) => Err(self.wrong(field, REF, other)),
        }
    }

    fn required_ref(&self, field: &'static str) -> Result<Ref, InputError> {
        self.optional_ref(field)?
            .ok_or_else(|| self.missing(field, REF))
    }

    /// `[x, y]` at `path` (for messages) from `value`.
    fn point_of(&self, path: &str, value: &Value) -> Result<CssPoint, InputError> {
        let pair = value
            .as_array()
            .filter(|a| a.len() == 2)
            .and_then(|a| Some((safe_integer(&a[0])?, safe_integer(&a[1])?)))
            .ok_or_else(|| self.wrong(path, COORDINATE, value))?;
        CssPoint::new(pair.0, pair.1).map_err(|e| self.invalid(e))
    }

    fn required_point(&self, field: &'static str) -> Result<CssPoint, InputError> {
        let value = self
            .get(field)
            .ok_or_else(|| self.missing(field, COORDINATE))?;
        self.point_of(field, value)
    }

    fn region(&self) -> Result<[u64; 4], InputError> {
        const EXPECTED: &str = "[x0, y0, x1, y1]: four non-negative integers in viewport CSS pixels (top-left, bottom-right)";
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

    /// The click `target`: a coordinate target or a ref target, discriminated by `type`.
    fn target(&self) -> Result<Target, InputError> {
        let value = self
            .get("target")
            .ok_or_else(|| self.missing("target", TARGET))?;
        let Value::Object(target) = value else {
            return Err(self.wrong("target", TARGET, value));
        };
        const COORDINATE_FIELDS: &[&str] = &["type", "coordinate"];
        const REF_FIELDS: &[&str] = &["type", "ref"];
        let (kind, allowed) = match target.get("type").and_then(Value::as_str) {
            Some("coordinate") => ("coordinate", COORDINATE_FIELDS),
            Some("ref") => ("ref", REF_FIELDS),
            _ => {
                return Err(self.wrong(
                    "target.type",
                    "\"coordinate\" or \"ref\"",
                    target.get("type").unwrap_or(&Value::Null),
                ));
            }
        };
        if let Some(field) = target.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(InputError::UnknownField {
                member: self.member,
                field: format!("target.{}", crate::errtext::name(field)),
                allowed,
            });
        }
        let field = target
            .get(kind)
            .ok_or_else(|| self.missing(format!("target.{kind}"), TARGET))?;
        if kind == "coordinate" {
            return self
                .point_of("target.coordinate", field)
                .map(Target::Coordinate);
        }
        match field {
            Value::String(s) => parse_ref("ref", s)
                .map(Target::Ref)
                .map_err(|e| self.invalid(e)),
            other => Err(self.wrong("target.ref", REF, other)),
        }
    }

    /// `modifiers`: `"ctrl+shift"`, or `["ctrl", "shift"]`; absent or empty means none.
    fn modifiers(&self) -> Result<ModifierSet, InputError> {
        const EXPECTED: &str = "modifiers held during the action: a text such as \"ctrl+shift\" or an array such as [\"ctrl\", \"shift\"]";
        match self.get("modifiers") {
            None => Ok(ModifierSet::NONE),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(ModifierSet::NONE),
            Some(Value::String(s)) => {
                ModifierSet::parse(s).map_err(|e| self.key_error("modifiers", e))
            }
            Some(Value::Array(items)) => {
                let mut set = ModifierSet::NONE;
                for item in items {
                    let name = item
                        .as_str()
                        .ok_or_else(|| self.wrong("modifiers", EXPECTED, item))?;
                    let modifier = Modifier::from_name(name).ok_or_else(|| {
                        self.key_error(
                            "modifiers",
                            KeyError::NotAModifier {
                                name: name.to_owned(),
                            },
                        )
                    })?;
                    if !set.insert(modifier) {
                        return Err(self.invalid(ArgError::Repeated {
                            field: "modifiers",
                            item: name.to_owned(),
                        }));
                    }
                }
                Ok(set)
            }
            Some(other) => Err(self.wrong("modifiers", EXPECTED, other)),
        }
    }

    /// `form_input.value`.
    fn field_value(&self) -> Result<FieldValue, InputError> {
        const EXPECTED: &str = "the value to set: a string (or number) for a text field or a select, true or false for a checkbox or radio, an array of strings for a multi-select list";
        let value = self
            .get("value")
            .ok_or_else(|| self.missing("value", EXPECTED))?;
        Ok(match value {
            Value::String(s) => FieldValue::Text(s.clone()),
            Value::Number(n) => FieldValue::Text(n.to_string()),
            Value::Bool(b) => FieldValue::Checked(*b),
            Value::Array(items) => FieldValue::Options(
                items
                    .iter()
                    .map(|item| match item {
                        Value::String(s) => Ok(s.clone()),
                        other => Err(self.wrong("value", EXPECTED, other)),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            other => return Err(self.wrong("value", EXPECTED, other)),
        })
    }
}

#[cfg(test)]
mod tests;
