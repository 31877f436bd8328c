//! Reading a browser function call's `arguments` object into a validated [`BrowserCall`]: exact
//! fields, JSON types, safe integers; the ranges and byte limits are then applied by the
//! `hands-core` constructors.
//!
//! Rules (spec: openai-browser-desktop-drivers, "Seleccionar métodos", "Habilitar los métodos de
//! lectura por sección y de puntero", "Habilitar diagnósticos, scripts y transferencias de
//! archivos"):
//! - every field of a member is required, including `tab_id` (null for the active tab) and the
//!   other nullable fields (`type.target`, `new_tab.url`, `read_page_scoped.root`): "usa
//!   explícitamente null", and the declared schemas are strict, so a well-formed call always
//!   carries them;
//! - `switch_tab` and `close_tab` need a non-null `tab_id`;
//! - unknown fields are refused, including extra fields on a `drag_path` point;
//! - numbers must be finite, non-negative safe integers (at most 2^53 − 1). A JSON number with a
//!   zero fraction such as `3.0` or `1e3` counts as that integer, as it does for the Node SDK
//!   (`Number.isSafeInteger(3.0)` is true); `3.5` is refused. Booleans are never numbers, and
//!   strings are never numbers or booleans.

use crate::errtext::{SHOWN_CHARS, show};
use hands_core::browser::BrowserMember;
use hands_core::browser::args::{
    ArgError, BrowserCall, CssPoint, CssRegion, DiagnosticsSource, GrantId, MAX_SAFE_INTEGER,
    PageUrl, PointerButton, ReadFilter, parse_modifier_list, parse_ref, parse_tab_id,
};
use hands_core::browser::state::TabId;
use serde_json::{Map, Value};

use crate::strings::BROWSER_TOOL_PREFIX;

/// The fields of each member's arguments object, in the spec's order. Every one is required.
pub const fn fields(member: BrowserMember) -> &'static [&'static str] {
    use BrowserMember as M;
    match member {
        M::Navigate => &["url", "tab_id"],
        M::ReadPage => &["filter", "tab_id"],
        M::GetPageText | M::Screenshot => &["tab_id"],
        M::Find => &["query", "tab_id"],
        M::Click | M::ScrollTo | M::Hover => &["target", "tab_id"],
        M::Type => &["text", "target", "tab_id"],
        M::Key => &["keys", "tab_id"],
        M::Scroll => &["direction", "amount", "tab_id"],
        M::WaitFor => &["text", "timeout_ms", "tab_id"],
        M::SelectOption => &["target", "values", "tab_id"],
        M::Zoom => &["region", "tab_id"],
        M::NewTab => &["url"],
        M::ListTabs => &[],
        M::SwitchTab | M::CloseTab => &["tab_id"],
        M::ReadPageScoped => &["tab_id", "root", "depth", "filter"],
        M::ClickAt => &["tab_id", "x", "y", "button", "click_count", "keys"],
        M::DragPath => &["tab_id", "path", "keys"],
        M::HoldKeys => &["tab_id", "keys", "duration_ms"],
        M::HoverAt => &["tab_id", "x", "y"],
        M::SetChecked => &["tab_id", "target", "checked"],
        M::ReadDiagnostics => &["tab_id", "source", "limit"],
        M::RunScript => &["tab_id", "source", "timeout_ms"],
        M::UploadFile | M::DownloadFile => &["grant_id"],
    }
}

/// The fields of one `drag_path` point.
pub const POINT_FIELDS: &[&str] = &["x", "y"];

/// The function tool name of a member: `browser_<member>`.
pub fn tool_name(member: BrowserMember) -> String {
    format!("{BROWSER_TOOL_PREFIX}{}", member.name())
}

/// The member a function tool name means (`browser_click` → `click`), whether or not enabled.
pub fn member_of_tool(name: &str) -> Option<BrowserMember> {
    name.strip_prefix(BROWSER_TOOL_PREFIX)
        .and_then(BrowserMember::from_name)
}

const SAFE_INTEGER: &str = "a non-negative safe integer (0 to 9007199254740991, no fraction)";

/// Why a call's arguments were refused. The text names the tool, the field, what was expected
/// and what came; it goes to the model as the call's error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgumentError {
    /// `arguments` is not valid JSON.
    #[error("`{}` arguments are not valid JSON ({why}); send one JSON object", tool_name(*.member))]
    Json {
        /// The member.
        member: BrowserMember,
        /// The parser's explanation.
        why: String,
    },
    /// `arguments` is JSON but not an object.
    #[error("`{}` takes a JSON object of arguments {}, got {got}", tool_name(*.member), shape(fields(*.member)))]
    NotAnObject {
        /// The member.
        member: BrowserMember,
        /// What came, abbreviated.
        got: String,
    },
    /// A field is absent.
    #[error("`{}` requires `{field}` ({expected}); send every field, with null where null is allowed", tool_name(*.member))]
    Missing {
        /// The member.
        member: BrowserMember,
        /// The field (`path[2].y` for a point's field).
        field: String,
        /// What it should hold.
        expected: &'static str,
    },
    /// A field the member does not take.
    #[error("`{}` does not take `{field}`; it takes exactly {}", tool_name(*.member), shape(allowed))]
    Unknown {
        /// The member.
        member: BrowserMember,
        /// The field (`path[2].z` for a point's field), as [`crate::errtext::name`] echoes it.
        field: String,
        /// The fields it takes there.
        allowed: &'static [&'static str],
    },
    /// A field of the wrong JSON type, or a number that is not a safe non-negative integer.
    #[error("`{}`: `{field}` must be {expected}, got {got}", tool_name(*.member))]
    WrongType {
        /// The member.
        member: BrowserMember,
        /// The field (`keys[1]` for an item).
        field: String,
        /// What it should hold.
        expected: &'static str,
        /// What came, abbreviated.
        got: String,
    },
    /// A value of the right type that breaks a range or limit.
    #[error("`{}`: {source}", tool_name(*.member))]
    Invalid {
        /// The member.
        member: BrowserMember,
        /// The rule it broke.
        source: ArgError,
    },
}

fn shape(fields: &[&str]) -> String {
    if fields.is_empty() {
        "{} (no fields)".to_owned()
    } else {
        let names: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
        format!("{{{}}}", names.join(", "))
    }
}

/// A JSON number as a safe non-negative integer: `3` and `3.0` are 3; `-1`, `3.5` and
/// 2^53 are not.
pub fn safe_integer(value: &Value) -> Option<u64> {
    let Value::Number(n) = value else {
        return None;
    };
    if let Some(u) = n.as_u64() {
        return (u <= MAX_SAFE_INTEGER).then_some(u);
    }
    if n.is_i64() {
        return None; // negative
    }
    let f = n.as_f64()?;
    // -0.0 is the integer 0, as `Number.isSafeInteger(-0)` says.
    let in_range =
        f.is_finite() && f.fract() == 0.0 && (0.0..=MAX_SAFE_INTEGER as f64).contains(&f);
    in_range.then_some(f as u64)
}

/// Parses a function call's `arguments` text for `member`.
pub fn parse_arguments_text(
    member: BrowserMember,
    text: &str,
) -> Result<BrowserCall, ArgumentError> {
    let value: Value = serde_json::from_str(text).map_err(|e| ArgumentError::Json {
        member,
        why: e.to_string(),
    })?;
    parse_call(member, &value)
}

/// Reads `arguments` for `member` into a validated call.
pub fn parse_call(member: BrowserMember, arguments: &Value) -> Result<BrowserCall, ArgumentError> {
    use BrowserMember as M;
    let a = Reader::new(member, arguments)?;
    let call = match member {
        M::Navigate => navigate(&a)?,
        M::ReadPage => BrowserCall::ReadPage {
            filter: a.filter()?,
            tab: a.tab()?,
        },
        M::GetPageText => BrowserCall::GetPageText { tab: a.tab()? },
        M::Find => {
            let query = a.string("query", "a non-empty search text")?;
            a.build(BrowserCall::find(query, a.tab()?))?
        }
        M::Click => BrowserCall::Click {
            target: a.target()?,
            tab: a.tab()?,
        },
        M::Type => type_text(&a)?,
        M::Key => {
            let keys = a.strings(
                "keys",
                "an array of key names such as [\"Enter\"] or [\"Control+a\"]",
            )?;
            a.build(BrowserCall::key(&keys, a.tab()?))?
        }
        M::Scroll => {
            let direction = a.string("direction", "\"up\", \"down\", \"left\" or \"right\"")?;
            let amount = a.integer("amount")?;
            a.build(BrowserCall::scroll(direction, amount, a.tab()?))?
        }
        M::ScrollTo => BrowserCall::ScrollTo {
            target: a.target()?,
            tab: a.tab()?,
        },
        M::WaitFor => {
            let text = a.string("text", "the text to wait for (1 to 256 bytes)")?;
            let timeout_ms = a.integer("timeout_ms")?;
            a.build(BrowserCall::wait_for(text, timeout_ms, a.tab()?))?
        }
        M::SelectOption => {
            let target = a.target()?;
            let values = a.strings("values", "an array of option values to select")?;
            a.build(BrowserCall::select_option(target, &values, a.tab()?))?
        }
        M::Hover => BrowserCall::Hover {
            target: a.target()?,
            tab: a.tab()?,
        },
        M::Screenshot => BrowserCall::Screenshot { tab: a.tab()? },
        M::Zoom => zoom(&a)?,
        M::NewTab => new_tab(&a)?,
        M::ListTabs => BrowserCall::ListTabs,
        M::SwitchTab => BrowserCall::SwitchTab {
            tab: a.required_tab()?,
        },
        M::CloseTab => BrowserCall::CloseTab {
            tab: a.required_tab()?,
        },
        M::ReadPageScoped => read_page_scoped(&a)?,
        M::ClickAt => click_at(&a)?,
        M::DragPath => drag_path(&a)?,
        M::HoldKeys => hold_keys(&a)?,
        M::HoverAt => {
            let tab = a.tab()?;
            BrowserCall::HoverAt {
                tab,
                at: a.point()?,
            }
        }
        M::SetChecked => set_checked(&a)?,
        M::ReadDiagnostics => read_diagnostics(&a)?,
        M::RunScript => run_script(&a)?,
        M::UploadFile => BrowserCall::UploadFile { grant: a.grant()? },
        M::DownloadFile => BrowserCall::DownloadFile { grant: a.grant()? },
    };
    Ok(call)
}

/// `navigate`: an absolute URL.
fn navigate(a: &Reader<'_>) -> Result<BrowserCall, ArgumentError> {
    let url = a.string(
        "url",
        "an absolute URL such as \"https://example.com/page\"",
    )?;
    let url = PageUrl::parse("url", url).map_err(|e| a.invalid(e))?;
    Ok(BrowserCall::Navigate { url, tab: a.tab()? })
}

/// `type`: text into an element, or into the focused one when `target` is null.
fn type_text(a: &Reader<'_>) -> Result<BrowserCall, ArgumentError> {
    let text = a.string("text", "the text to type")?;
    let target = a
        .nullable_string("target", REF_OR_NULL)?
        .map(|r| parse_ref("target", r))
        .transpose()
        .map_err(|e| a.invalid(e))?;
    a.build(BrowserCall::type_text(text, target, a.tab()?))
}

/// `zoom`: a region of the viewport.
fn zoom(a: &Reader<'_>) -> Result<BrowserCall, ArgumentError> {
    let region = a.region()?;
    Ok(BrowserCall::Zoom {
        region: CssRegion::new(region).map_err(|e| a.invalid(e))?,
        tab: a.tab()?,
    })
}

/// `new_tab`: a URL, or null for a blank tab.
fn new_tab(a: &Reader<'_>) -> Result<BrowserCall, ArgumentError> {
    let url = a
        .nullable_string("url", "an absolute URL, or null for a blank tab")?
        .map(|u| PageUrl::parse("url", u))
        .transpose()
        .map_err(|e| a.invalid(e))?;
    Ok(BrowserCall::NewTab { url })
}

/// `read_page_scoped`: the scopes, or the subtree under a scope ref.
fn read_page_scoped(a: &Reader<'_>) -> Result<BrowserCall, ArgumentError> {
    let tab = a.tab()?;
    let root = a
        .nullable_string(
            "root",
            "a scope ref from an earlier scoped read, or null to list the scopes",
        )?
        .map(|r| parse_ref("root", r))
        .transpose()
        .map_err(|e| a.invalid(e))?;
    let depth = a.integer("depth")?;
    let filter = a.filter()?;
    a.build(BrowserCall::read_page_scoped(tab, root, depth, filter))
}

/// `click_at`: a button clicked `click_count` times at a point, with modifiers held.
fn click_at(a: &Reader<'_>) -> Result<BrowserCall, ArgumentError> {
    let tab = a.tab()?;
    let at = a.point()?;
    let button = a.string("button", "\"left\", \"right\" or \"middle\"")?;
    let button = PointerButton::parse(button).map_err(|e| a.invalid(e))?;
    let click_count = a.integer("click_count")?;
    let keys = a.modifiers()?;
    a.build(BrowserCall::click_at(tab, at, button, click_count, keys))
}

/// `set_checked`: a checkbox or radio button set to `checked`.
fn set_checked(a: &Reader<'_>) -> Result<BrowserCall, ArgumentError> {
    let tab = a.tab()?;
    let target = a.target()?;
    Ok(BrowserCall::SetChecked {
        tab,
        target,
        checked: a.boolean("checked")?,
    })
}

/// `read_diagnostics`: the newest console or network entries.
fn read_diagnostics(a: &Reader<'_>) -> Result<BrowserCall, ArgumentError> {
    let tab = a.tab()?;
    let source = a.string("source", "\"console\" or \"network\"")?;
    let source = DiagnosticsSource::parse(source).map_err(|e| a.invalid(e))?;
    let limit = a.integer("limit")?;
    a.build(BrowserCall::read_diagnostics(tab, source, limit))
}

/// `drag_path`: the left button held along a path of points, with modifiers held.
fn drag_path(a: &Reader<'_>) -> Result<BrowserCall, ArgumentError> {
    let tab = a.tab()?;
    let path = a.path()?;
    let keys = a.modifiers()?;
    a.build(BrowserCall::drag_path(tab, path, keys))
}

/// `hold_keys`: up to 8 keys held down together for `duration_ms`.
fn hold_keys(a: &Reader<'_>) -> Result<BrowserCall, ArgumentError> {
    let tab = a.tab()?;
    let keys = a.strings("keys", "an array of 1 to 8 unique key names")?;
    let duration_ms = a.integer("duration_ms")?;
    a.build(BrowserCall::hold_keys(tab, &keys, duration_ms))
}

/// `run_script`: a script's source, run with a timeout.
fn run_script(a: &Reader<'_>) -> Result<BrowserCall, ArgumentError> {
    let tab = a.tab()?;
    let source = a.string("source", "the script's source code")?;
    let timeout_ms = a.integer("timeout_ms")?;
    a.build(BrowserCall::run_script(tab, source, timeout_ms))
}

const REF_OR_NULL: &str = "an element ref from a read, or null for the focused element";

/// One member's arguments object, checked for unknown fields up front.
struct Reader<'a> {
    member: BrowserMember,
    map: &'a Map<String, Value>,
}

impl<'a> Reader<'a> {
    fn new(member: BrowserMember, value: &'a Value) -> Result<Reader<'a>, ArgumentError> {
        let Value::Object(map) = value else {
            return Err(ArgumentError::NotAnObject {
                member,
                got: show(value, SHOWN_CHARS),
            });
        };
        let allowed = fields(member);
        if let Some(field) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(ArgumentError::Unknown {
                member,
                field: crate::errtext::name(field),
                allowed,
            });
        }
        Ok(Reader { member, map })
    }

    fn invalid(&self, source: ArgError) -> ArgumentError {
        ArgumentError::Invalid {
            member: self.member,
            source,
        }
    }

    fn build(&self, built: Result<BrowserCall, ArgError>) -> Result<BrowserCall, ArgumentError> {
        built.map_err(|e| self.invalid(e))
    }

    fn wrong(
        &self,
        field: impl Into<String>,
        expected: &'static str,
        got: &Value,
    ) -> ArgumentError {
        ArgumentError::WrongType {
            member: self.member,
            field: field.into(),
            expected,
            got: show(got, SHOWN_CHARS),
        }
    }

    /// A field that must be present (it may be null).
    fn field(
        &self,
        field: &'static str,
        expected: &'static str,
    ) -> Result<&'a Value, ArgumentError> {
        debug_assert!(fields(self.member).contains(&field), "{field} not declared");
        self.map.get(field).ok_or_else(|| ArgumentError::Missing {
            member: self.member,
            field: field.to_owned(),
            expected,
        })
    }

    fn string(
        &self,
        field: &'static str,
        expected: &'static str,
    ) -> Result<&'a str, ArgumentError> {
        match self.field(field, expected)? {
            Value::String(s) => Ok(s),
            other => Err(self.wrong(field, expected, other)),
        }
    }

    fn nullable_string(
        &self,
        field: &'static str,
        expected: &'static str,
    ) -> Result<Option<&'a str>, ArgumentError> {
        match self.field(field, expected)? {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s)),
            other => Err(self.wrong(field, expected, other)),
        }
    }

    fn integer(&self, field: &'static str) -> Result<u64, ArgumentError> {
        let value = self.field(field, SAFE_INTEGER)?;
        safe_integer(value).ok_or_else(|| self.wrong(field, SAFE_INTEGER, value))
    }

    fn boolean(&self, field: &'static str) -> Result<bool, ArgumentError> {
        const EXPECTED: &str = "true or false";
        match self.field(field, EXPECTED)? {
            Value::Bool(b) => Ok(*b),
            other => Err(self.wrong(field, EXPECTED, other)),
        }
    }

    fn strings(
        &self,
        field: &'static str,
        expected: &'static str,
    ) -> Result<Vec<&'a str>, ArgumentError> {
        let value = self.field(field, expected)?;
        let Value::Array(items) = value else {
            return Err(self.wrong(field, expected, value));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(s.as_str()),
                other => Err(self.wrong(format!("{field}[{i}]"), "a string", other)),
            })
            .collect()
    }

    fn tab(&self) -> Result<Option<TabId>, ArgumentError> {
        const EXPECTED: &str = "a tab id from the browser state, or null for the active tab";
        match self.field("tab_id", EXPECTED)? {
            Value::Null => Ok(None),
            Value::String(s) => parse_tab_id("tab_id", s)
                .map(Some)
                .map_err(|e| self.invalid(e)),
            other => Err(self.wrong("tab_id", EXPECTED, other)),
        }
    }

    fn required_tab(&self) -> Result<TabId, ArgumentError> {
        const EXPECTED: &str = "a tab id from the browser state (not null)";
        let id = self.string("tab_id", EXPECTED)?;
        parse_tab_id("tab_id", id).map_err(|e| self.invalid(e))
    }

    fn target(&self) -> Result<hands_core::browser::read::Ref, ArgumentError> {
        let target = self.string(
            "target",
            "an element ref from a read such as read_page or find",
        )?;
        parse_ref("target", target).map_err(|e| self.invalid(e))
    }

    fn filter(&self) -> Result<ReadFilter, ArgumentError> {
        let filter = self.string("filter", "\"all\" or \"interactive\"")?;
        ReadFilter::parse("filter", filter).map_err(|e| self.invalid(e))
    }

    fn grant(&self) -> Result<GrantId, ArgumentError> {
        let grant = self.string("grant_id", "the file grant id the task gave you")?;
        GrantId::parse(grant).map_err(|e| self.invalid(e))
    }

    fn point(&self) -> Result<CssPoint, ArgumentError> {
        let x = self.integer("x")?;
        let y = self.integer("y")?;
        CssPoint::new(x, y).map_err(|e| self.invalid(e))
    }

    fn modifiers(&self) -> Result<hands_core::input::ModifierSet, ArgumentError> {
        let names = self.strings(
            "keys",
            "an array of modifiers held, each \"Control\", \"Alt\", \"Meta\" or \"Shift\" (may be empty)",
        )?;
        parse_modifier_list("keys", &names).map_err(|e| self.invalid(e))
    }

    fn region(&self) -> Result<[u64; 4], ArgumentError> {
        const EXPECTED: &str = "[left, top, right, bottom]: four non-negative safe integers";
        let value = self.field("region", EXPECTED)?;
        let Some(items) = value.as_array().filter(|a| a.len() == 4) else {
            return Err(self.wrong("region", EXPECTED, value));
        };
        let mut edges = [0; 4];
        for (i, item) in items.iter().enumerate() {
            edges[i] = safe_integer(item)
                .ok_or_else(|| self.wrong(format!("region[{i}]"), SAFE_INTEGER, item))?;
        }
        Ok(edges)
    }

    fn path(&self) -> Result<Vec<CssPoint>, ArgumentError> {
        const EXPECTED: &str = "an array of 2 to 100 points, each exactly {\"x\": …, \"y\": …}";
        let value = self.field("path", EXPECTED)?;
        let Value::Array(items) = value else {
            return Err(self.wrong("path", EXPECTED, value));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let Value::Object(point) = item else {
                    return Err(self.wrong(
                        format!("path[{i}]"),
                        "an object {\"x\": …, \"y\": …}",
                        item,
                    ));
                };
                if let Some(field) = point.keys().find(|k| !POINT_FIELDS.contains(&k.as_str())) {
                    return Err(ArgumentError::Unknown {
                        member: self.member,
                        field: format!("path[{i}].{}", crate::errtext::name(field)),
                        allowed: POINT_FIELDS,
                    });
                }
                let coordinate = |name: &str| {
                    let value = point.get(name).ok_or_else(|| ArgumentError::Missing {
                        member: self.member,
                        field: format!("path[{i}].{name}"),
                        expected: SAFE_INTEGER,
                    })?;
                    safe_integer(value)
                        .ok_or_else(|| self.wrong(format!("path[{i}].{name}"), SAFE_INTEGER, value))
                };
                let (x, y) = (coordinate("x")?, coordinate("y")?);
                CssPoint::new(x, y).map_err(|e| self.invalid(e))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
