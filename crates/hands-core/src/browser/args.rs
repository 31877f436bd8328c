//! The validated arguments of each browser member: types whose constructors refuse every value
//! the spec refuses, so a driver never sees an out-of-range count, an empty ref or a repeated
//! modifier.
//!
//! JSON reading (unknown fields, booleans where numbers belong, safe integers) is the surface's
//! job; it builds these values through the constructors here.
//!
//! Spec: openai-browser-desktop-drivers, "Seleccionar métodos" (table and rules after it),
//! "Habilitar los métodos de lectura por sección y de puntero", "Leer dentro de una sección",
//! "Habilitar diagnósticos, scripts y transferencias de archivos".

use std::time::Duration;

use serde_json::{Value, json};

use super::BrowserMember;
use super::read::Ref;
use super::state::TabId;
use crate::input::{Button, Key, KeyChord, Modifier, ModifierSet, ScrollDirection};

/// The largest integer a JSON number holds exactly (2^53 − 1): coordinates must be at most this.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;
/// `wait_for.text`: at most 256 bytes after whitespace normalisation.
pub const MAX_WAIT_TEXT_BYTES: usize = 256;
/// `wait_for.timeout_ms` and `run_script.timeout_ms`: 1 to 30,000.
pub const MAX_TIMEOUT_MS: u64 = 30_000;
/// `read_page_scoped.depth`: 1 to 32.
pub const MAX_SCOPED_DEPTH: u8 = 32;
/// `drag_path.path`: 2 to 100 points.
pub const MIN_PATH_POINTS: usize = 2;
/// `drag_path.path`: at most 100 points.
pub const MAX_PATH_POINTS: usize = 100;
/// `hold_keys.keys`: 1 to 8 names.
pub const MAX_HOLD_KEYS: usize = 8;
/// `hold_keys.keys`: each name at most 64 bytes.
pub const MAX_KEY_NAME_BYTES: usize = 64;
/// `hold_keys.duration_ms`: 1 to 3,000.
pub const MAX_HOLD_MS: u64 = 3_000;
/// `read_diagnostics.limit`: 1 to 100.
pub const MAX_DIAGNOSTICS_LIMIT: u32 = 100;
/// File members' `grant_id`: 1 to 256 bytes.
pub const MAX_GRANT_ID_BYTES: usize = 256;
/// `key.keys`: at most this many presses in one call (ours; the spec sets no ceiling).
pub const MAX_KEY_PRESSES: usize = 32;
/// `find.query`: 1 to 256 bytes after trimming (ours; the spec sets no limit).
pub const MAX_QUERY_BYTES: usize = 256;
/// `select_option.values`: 1 to 64 values (ours; the spec sets no limit).
pub const MAX_SELECT_VALUES: usize = 64;
/// `type.text`: at most 100,000 bytes (ours; the spec sets no limit).
pub const MAX_TYPE_BYTES: usize = 100_000;

/// Why an argument was refused. Every message says what was wrong and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgError {
    /// A ref that is empty or longer than 256 bytes.
    #[error("`{field}` must be a ref of 1 to 256 bytes issued by a read")]
    Ref {
        /// The field.
        field: &'static str,
    },
    /// A tab id that is empty or too long.
    #[error("`{field}` must be a tab id from the browser state (1 to 256 bytes)")]
    TabId {
        /// The field.
        field: &'static str,
    },
    /// A number out of its range.
    #[error("`{field}` must be an integer from {min} to {max}, got {got}")]
    Range {
        /// The field.
        field: &'static str,
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
        /// What came.
        got: u64,
    },
    /// A text that is empty (after normalisation) or too long.
    #[error("`{field}` must be {min} to {max} bytes of text{after}, got {got} bytes")]
    TextLength {
        /// The field.
        field: &'static str,
        /// Fewest bytes.
        min: usize,
        /// Most bytes.
        max: usize,
        /// What came.
        got: usize,
        /// A note on normalisation, e.g. " after whitespace normalisation".
        after: &'static str,
    },
    /// A list with too few or too many items.
    #[error("`{field}` must hold {min} to {max} items, got {got}")]
    Count {
        /// The field.
        field: &'static str,
        /// Fewest.
        min: usize,
        /// Most.
        max: usize,
        /// What came.
        got: usize,
    },
    /// The same item twice where items must be unique.
    #[error("`{field}` lists {item:?} twice; items must be unique")]
    Repeated {
        /// The field.
        field: &'static str,
        /// The repeated item.
        item: String,
    },
    /// A modifier name other than Control, Alt, Meta, Shift.
    #[error(
        "`{field}` may only hold the modifiers \"Control\", \"Alt\", \"Meta\" and \"Shift\", got {got:?}"
    )]
    Modifier {
        /// The field.
        field: &'static str,
        /// What came.
        got: String,
    },
    /// A key name that does not parse.
    #[error("`{field}`: {why}")]
    Key {
        /// The field.
        field: &'static str,
        /// The key parser's explanation.
        why: String,
    },
    /// A region with no area.
    #[error("`region` [{left}, {top}, {right}, {bottom}] must have left < right and top < bottom")]
    EmptyRegion {
        /// Left.
        left: u64,
        /// Top.
        top: u64,
        /// Right.
        right: u64,
        /// Bottom.
        bottom: u64,
    },
    /// A URL that does not parse.
    #[error(
        "`{field}` is not a valid absolute URL ({why}): send e.g. \"https://example.com/path\""
    )]
    Url {
        /// The field.
        field: &'static str,
        /// The parser's explanation.
        why: String,
    },
    /// A value from a fixed set that is not in it.
    #[error("`{field}` must be one of {allowed}, got {got:?}")]
    OneOf {
        /// The field.
        field: &'static str,
        /// The accepted values.
        allowed: &'static str,
        /// What came.
        got: String,
    },
}

fn range(field: &'static str, min: u64, max: u64, got: u64) -> Result<u64, ArgError> {
    if (min..=max).contains(&got) {
        Ok(got)
    } else {
        Err(ArgError::Range {
            field,
            min,
            max,
            got,
        })
    }
}

/// A ref argument.
pub fn parse_ref(field: &'static str, text: &str) -> Result<Ref, ArgError> {
    Ref::new(text).ok_or(ArgError::Ref { field })
}

/// A tab id argument.
pub fn parse_tab_id(field: &'static str, text: &str) -> Result<TabId, ArgError> {
    TabId::new(text).ok_or(ArgError::TabId { field })
}

/// Which elements a read reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReadFilter {
    /// Every element with a role.
    All,
    /// Only controls a person can operate.
    Interactive,
}

impl ReadFilter {
    /// Parses `all` or `interactive`.
    pub fn parse(field: &'static str, text: &str) -> Result<ReadFilter, ArgError> {
        match text {
            "all" => Ok(ReadFilter::All),
            "interactive" => Ok(ReadFilter::Interactive),
            _ => Err(ArgError::OneOf {
                field,
                allowed: "\"all\", \"interactive\"",
                got: text.to_owned(),
            }),
        }
    }

    /// The wire name.
    pub const fn name(self) -> &'static str {
        match self {
            ReadFilter::All => "all",
            ReadFilter::Interactive => "interactive",
        }
    }
}

/// A URL to open: absolute, parsed by the WHATWG rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageUrl(url::Url);

impl PageUrl {
    /// Parses an absolute URL. A bare host such as `example.com/docs` (no scheme, no spaces) is
    /// read as `https://example.com/docs`, as models often omit the scheme; the URL policy and
    /// the person confirming see the completed URL, never the guess.
    pub fn parse(field: &'static str, text: &str) -> Result<PageUrl, ArgError> {
        match url::Url::parse(text) {
            Ok(url) => Ok(PageUrl(url)),
            Err(url::ParseError::RelativeUrlWithoutBase)
                if !text.is_empty()
                    && !text.starts_with('/')
                    && !text.contains(char::is_whitespace) =>
            {
                url::Url::parse(&format!("https://{text}"))
                    .map(PageUrl)
                    .map_err(|e| ArgError::Url {
                        field,
                        why: e.to_string(),
                    })
            }
            Err(e) => Err(ArgError::Url {
                field,
                why: e.to_string(),
            }),
        }
    }

    /// The parsed URL.
    pub fn url(&self) -> &url::Url {
        &self.0
    }

    /// The serialised URL.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

/// Text normalised the way `wait_for` compares it: runs of whitespace become one space, ends
/// trimmed; 1 to 256 bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitText(String);

impl WaitText {
    /// Normalises and checks the length.
    pub fn parse(text: &str) -> Result<WaitText, ArgError> {
        let normal = normalise_whitespace(text);
        if normal.is_empty() || normal.len() > MAX_WAIT_TEXT_BYTES {
            return Err(ArgError::TextLength {
                field: "text",
                min: 1,
                max: MAX_WAIT_TEXT_BYTES,
                got: normal.len(),
                after: " after whitespace normalisation",
            });
        }
        Ok(WaitText(normal))
    }

    /// The normalised text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Collapses runs of whitespace into one space and trims the ends.
pub fn normalise_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A timeout of 1 to 30,000 ms.
pub fn parse_timeout(field: &'static str, ms: u64) -> Result<Duration, ArgError> {
    range(field, 1, MAX_TIMEOUT_MS, ms).map(Duration::from_millis)
}

/// A point in CSS pixels of the page's full visible area (viewport), safe non-negative integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CssPoint {
    /// From the viewport's left edge.
    pub x: u64,
    /// From the viewport's top edge.
    pub y: u64,
}

impl CssPoint {
    /// A point; each coordinate at most [`MAX_SAFE_INTEGER`]. The driver checks the current
    /// viewport bounds when it acts.
    pub fn new(x: u64, y: u64) -> Result<CssPoint, ArgError> {
        Ok(CssPoint {
            x: range("x", 0, MAX_SAFE_INTEGER, x)?,
            y: range("y", 0, MAX_SAFE_INTEGER, y)?,
        })
    }
}

/// A region `[left, top, right, bottom]` in CSS pixels with positive width and height.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CssRegion {
    left: u64,
    top: u64,
    right: u64,
    bottom: u64,
}

impl CssRegion {
    /// A region; every edge a safe integer, `left < right`, `top < bottom`.
    pub fn new([left, top, right, bottom]: [u64; 4]) -> Result<CssRegion, ArgError> {
        for v in [left, top, right, bottom] {
            range("region", 0, MAX_SAFE_INTEGER, v)?;
        }
        if left >= right || top >= bottom {
            return Err(ArgError::EmptyRegion {
                left,
                top,
                right,
                bottom,
            });
        }
        Ok(CssRegion {
            left,
            top,
            right,
            bottom,
        })
    }

    /// `[left, top, right, bottom]`.
    pub fn edges(self) -> [u64; 4] {
        [self.left, self.top, self.right, self.bottom]
    }
}

/// Modifiers named as the DOM names them, unique: `Control`, `Alt`, `Meta`, `Shift`.
pub fn parse_modifier_list(field: &'static str, names: &[&str]) -> Result<ModifierSet, ArgError> {
    let mut set = ModifierSet::NONE;
    for name in names {
        let m = match *name {
            "Control" => Modifier::Control,
            "Alt" => Modifier::Alt,
            "Meta" => Modifier::Super,
            "Shift" => Modifier::Shift,
            other => {
                return Err(ArgError::Modifier {
                    field,
                    got: other.to_owned(),
                });
            }
        };
        if !set.insert(m) {
            return Err(ArgError::Repeated {
                field,
                item: (*name).to_owned(),
            });
        }
    }
    Ok(set)
}

/// The DOM names of a modifier set, in press order.
pub fn modifier_names(set: ModifierSet) -> Vec<&'static str> {
    set.iter()
        .map(|m| match m {
            Modifier::Control => "Control",
            Modifier::Alt => "Alt",
            Modifier::Super => "Meta",
            Modifier::Shift => "Shift",
        })
        .collect()
}

/// A key press of the `key` member: one key or a `+`-joined chord (`Enter`, `Control+a`), kept
/// with the text it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPress {
    text: String,
    chord: KeyChord,
}

impl KeyPress {
    /// Parses one key or chord.
    pub fn parse(text: &str) -> Result<KeyPress, ArgError> {
        let chord = KeyChord::parse(text).map_err(|e| ArgError::Key {
            field: "keys",
            why: e.to_string(),
        })?;
        Ok(KeyPress {
            text: text.to_owned(),
            chord,
        })
    }

    /// The text as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The chord.
    pub fn chord(&self) -> &KeyChord {
        &self.chord
    }
}

/// A mouse button of `click_at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PointerButton {
    /// Left.
    Left,
    /// Right.
    Right,
    /// Middle.
    Middle,
}

impl PointerButton {
    /// Parses `left`, `right` or `middle`.
    pub fn parse(text: &str) -> Result<PointerButton, ArgError> {
        match text {
            "left" => Ok(PointerButton::Left),
            "right" => Ok(PointerButton::Right),
            "middle" => Ok(PointerButton::Middle),
            _ => Err(ArgError::OneOf {
                field: "button",
                allowed: "\"left\", \"right\", \"middle\"",
                got: text.to_owned(),
            }),
        }
    }

    /// The core button.
    pub fn button(self) -> Button {
        match self {
            PointerButton::Left => Button::Left,
            PointerButton::Right => Button::Right,
            PointerButton::Middle => Button::Middle,
        }
    }

    /// The wire name.
    pub const fn name(self) -> &'static str {
        match self {
            PointerButton::Left => "left",
            PointerButton::Right => "right",
            PointerButton::Middle => "middle",
        }
    }
}

/// Where `read_diagnostics` reads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DiagnosticsSource {
    /// Console messages.
    Console,
    /// Network requests.
    Network,
}

impl DiagnosticsSource {
    /// Parses `console` or `network`.
    pub fn parse(text: &str) -> Result<DiagnosticsSource, ArgError> {
        match text {
            "console" => Ok(DiagnosticsSource::Console),
            "network" => Ok(DiagnosticsSource::Network),
            _ => Err(ArgError::OneOf {
                field: "source",
                allowed: "\"console\", \"network\"",
                got: text.to_owned(),
            }),
        }
    }

    /// The wire name.
    pub const fn name(self) -> &'static str {
        match self {
            DiagnosticsSource::Console => "console",
            DiagnosticsSource::Network => "network",
        }
    }
}

/// A file grant issued by the caller: 1 to 256 bytes; not a path, not a URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GrantId(String);

impl GrantId {
    /// A grant id; refused when empty or longer than 256 bytes.
    pub fn parse(text: &str) -> Result<GrantId, ArgError> {
        if text.is_empty() || text.len() > MAX_GRANT_ID_BYTES {
            return Err(ArgError::TextLength {
                field: "grant_id",
                min: 1,
                max: MAX_GRANT_ID_BYTES,
                got: text.len(),
                after: "",
            });
        }
        Ok(GrantId(text.to_owned()))
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn text_between(
    field: &'static str,
    text: &str,
    min: usize,
    max: usize,
) -> Result<String, ArgError> {
    if text.len() < min || text.len() > max {
        return Err(ArgError::TextLength {
            field,
            min,
            max,
            got: text.len(),
            after: "",
        });
    }
    Ok(text.to_owned())
}

fn count(field: &'static str, n: usize, min: usize, max: usize) -> Result<(), ArgError> {
    if n < min || n > max {
        return Err(ArgError::Count {
            field,
            min,
            max,
            got: n,
        });
    }
    Ok(())
}

/// A validated call of one member, ready for a driver.
///
/// `tab` is `None` for "the active tab" wherever the spec lets `tab_id` be null.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BrowserCall {
    /// Open `url` in the tab.
    Navigate {
        /// Where to go.
        url: PageUrl,
        /// Which tab.
        tab: Option<TabId>,
    },
    /// Read the page.
    ReadPage {
        /// All elements or interactive ones.
        filter: ReadFilter,
        /// Which tab.
        tab: Option<TabId>,
    },
    /// Read the page's text only.
    GetPageText {
        /// Which tab.
        tab: Option<TabId>,
    },
    /// Find elements matching a query.
    Find {
        /// The query, 1–256 bytes after trimming.
        query: String,
        /// Which tab.
        tab: Option<TabId>,
    },
    /// Click an element.
    Click {
        /// The element.
        target: Ref,
        /// Which tab.
        tab: Option<TabId>,
    },
    /// Type text into an element, or into the focused element when `target` is null.
    Type {
        /// The text.
        text: String,
        /// The element, or the focused one.
        target: Option<Ref>,
        /// Which tab.
        tab: Option<TabId>,
    },
    /// Press keys in order.
    Key {
        /// The presses.
        keys: Vec<KeyPress>,
        /// Which tab.
        tab: Option<TabId>,
    },
    /// Scroll the page, or what is under a viewport point.
    Scroll {
        /// Which way.
        direction: ScrollDirection,
        /// How far, in CSS pixels.
        amount: u64,
        /// Where the wheel turns: `None` is the middle of the viewport (the driver spec's
        /// `scroll`); a point is Claude's browser toolset's `scroll` `target`, so an inner
        /// scrollable area under it scrolls (see [`crate::browser::Browser::scroll_at`]).
        at: Option<CssPoint>,
        /// Which tab.
        tab: Option<TabId>,
    },
    /// Scroll an element into view.
    ScrollTo {
        /// The element.
        target: Ref,
        /// Which tab.
        tab: Option<TabId>,
    },
    /// Wait until text appears.
    WaitFor {
        /// The text.
        text: WaitText,
        /// How long at most.
        timeout: Duration,
        /// Which tab.
        tab: Option<TabId>,
    },
    /// Select options of a select element.
    SelectOption {
        /// The element.
        target: Ref,
        /// Option values (or labels) to select.
        values: Vec<String>,
        /// Which tab.
        tab: Option<TabId>,
    },
    /// Move the pointer over an element.
    Hover {
        /// The element.
        target: Ref,
        /// Which tab.
        tab: Option<TabId>,
    },
    /// Capture the viewport.
    Screenshot {
        /// Which tab.
        tab: Option<TabId>,
    },
    /// Capture a region of the viewport at full resolution.
    Zoom {
        /// The region.
        region: CssRegion,
        /// Which tab.
        tab: Option<TabId>,
    },
    /// Open a tab (blank when `url` is null) and make it active.
    NewTab {
        /// Where to go.
        url: Option<PageUrl>,
    },
    /// Report the tabs (derived from state; never reaches a driver).
    ListTabs,
    /// Make a tab active.
    SwitchTab {
        /// The tab.
        tab: TabId,
    },
    /// Close a tab.
    CloseTab {
        /// The tab.
        tab: TabId,
    },
    /// Read inside a scope, or discover scopes when `root` is null.
    ReadPageScoped {
        /// Which tab.
        tab: Option<TabId>,
        /// A scope ref, or discover.
        root: Option<Ref>,
        /// 1–32 DOM levels.
        depth: u8,
        /// All or interactive.
        filter: ReadFilter,
    },
    /// Click at viewport coordinates.
    ClickAt {
        /// Which tab.
        tab: Option<TabId>,
        /// Where.
        at: CssPoint,
        /// Which button.
        button: PointerButton,
        /// 1, 2 or 3.
        click_count: u8,
        /// Modifiers held.
        keys: ModifierSet,
    },
    /// Drag along a path.
    DragPath {
        /// Which tab.
        tab: Option<TabId>,
        /// 2–100 points.
        path: Vec<CssPoint>,
        /// Modifiers held.
        keys: ModifierSet,
    },
    /// Hold keys for a while.
    HoldKeys {
        /// Which tab.
        tab: Option<TabId>,
        /// 1–8 unique keys.
        keys: Vec<Key>,
        /// 1–3,000 ms.
        duration: Duration,
    },
    /// Move the pointer to viewport coordinates.
    HoverAt {
        /// Which tab.
        tab: Option<TabId>,
        /// Where.
        at: CssPoint,
    },
    /// Press or release the left mouse button at viewport coordinates, the button staying down
    /// between calls (Claude's browser toolset's `left_mouse_down` / `left_mouse_up`). Not a
    /// driver-spec member: it needs what `drag_path` needs, and its consent.
    MouseButton {
        /// Which tab.
        tab: Option<TabId>,
        /// Where.
        at: CssPoint,
        /// Press (`true`) or release (`false`).
        press: bool,
    },
    /// Set a checkbox's state.
    SetChecked {
        /// Which tab.
        tab: Option<TabId>,
        /// The checkbox.
        target: Ref,
        /// The state wanted.
        checked: bool,
    },
    /// Read console or network history.
    ReadDiagnostics {
        /// Which tab.
        tab: Option<TabId>,
        /// Console or network.
        source: DiagnosticsSource,
        /// 1–100 entries.
        limit: u32,
    },
    /// Run a script in the page.
    RunScript {
        /// Which tab.
        tab: Option<TabId>,
        /// Non-empty source.
        source: String,
        /// 1–30,000 ms.
        timeout: Duration,
    },
    /// Upload the file a grant names.
    UploadFile {
        /// The grant.
        grant: GrantId,
    },
    /// Download the file a grant names.
    DownloadFile {
        /// The grant.
        grant: GrantId,
    },
}

impl BrowserCall {
    /// `find`.
    pub fn find(query: &str, tab: Option<TabId>) -> Result<BrowserCall, ArgError> {
        let query = query.trim();
        Ok(BrowserCall::Find {
            query: text_between("query", query, 1, MAX_QUERY_BYTES)?,
            tab,
        })
    }

    /// `type`.
    pub fn type_text(
        text: &str,
        target: Option<Ref>,
        tab: Option<TabId>,
    ) -> Result<BrowserCall, ArgError> {
        Ok(BrowserCall::Type {
            text: text_between("text", text, 0, MAX_TYPE_BYTES)?,
            target,
            tab,
        })
    }

    /// `key`.
    pub fn key(keys: &[&str], tab: Option<TabId>) -> Result<BrowserCall, ArgError> {
        count("keys", keys.len(), 1, MAX_KEY_PRESSES)?;
        Ok(BrowserCall::Key {
            keys: keys
                .iter()
                .map(|k| KeyPress::parse(k))
                .collect::<Result<_, _>>()?,
            tab,
        })
    }

    /// `scroll`.
    pub fn scroll(
        direction: &str,
        amount: u64,
        tab: Option<TabId>,
    ) -> Result<BrowserCall, ArgError> {
        let direction = ScrollDirection::parse(direction).ok_or_else(|| ArgError::OneOf {
            field: "direction",
            allowed: "\"up\", \"down\", \"left\", \"right\"",
            got: direction.to_owned(),
        })?;
        Ok(BrowserCall::Scroll {
            direction,
            amount: range("amount", 0, MAX_SAFE_INTEGER, amount)?,
            at: None,
            tab,
        })
    }

    /// `scroll` with the wheel at a viewport point (Claude's browser toolset).
    pub fn scroll_at(
        at: CssPoint,
        direction: &str,
        amount: u64,
        tab: Option<TabId>,
    ) -> Result<BrowserCall, ArgError> {
        match BrowserCall::scroll(direction, amount, tab)? {
            BrowserCall::Scroll {
                direction,
                amount,
                tab,
                ..
            } => Ok(BrowserCall::Scroll {
                direction,
                amount,
                at: Some(at),
                tab,
            }),
            other => Ok(other),
        }
    }

    /// `wait_for`.
    pub fn wait_for(
        text: &str,
        timeout_ms: u64,
        tab: Option<TabId>,
    ) -> Result<BrowserCall, ArgError> {
        Ok(BrowserCall::WaitFor {
            text: WaitText::parse(text)?,
            timeout: parse_timeout("timeout_ms", timeout_ms)?,
            tab,
        })
    }

    /// `select_option`.
    pub fn select_option(
        target: Ref,
        values: &[&str],
        tab: Option<TabId>,
    ) -> Result<BrowserCall, ArgError> {
        count("values", values.len(), 1, MAX_SELECT_VALUES)?;
        let values = values
            .iter()
            .map(|v| text_between("values", v, 0, super::read::MAX_VALUE_BYTES))
            .collect::<Result<_, _>>()?;
        Ok(BrowserCall::SelectOption {
            target,
            values,
            tab,
        })
    }

    /// `read_page_scoped`.
    pub fn read_page_scoped(
        tab: Option<TabId>,
        root: Option<Ref>,
        depth: u64,
        filter: ReadFilter,
    ) -> Result<BrowserCall, ArgError> {
        Ok(BrowserCall::ReadPageScoped {
            tab,
            root,
            depth: range("depth", 1, u64::from(MAX_SCOPED_DEPTH), depth)? as u8,
            filter,
        })
    }

    /// `click_at`.
    pub fn click_at(
        tab: Option<TabId>,
        at: CssPoint,
        button: PointerButton,
        click_count: u64,
        keys: ModifierSet,
    ) -> Result<BrowserCall, ArgError> {
        Ok(BrowserCall::ClickAt {
            tab,
            at,
            button,
            click_count: range("click_count", 1, 3, click_count)? as u8,
            keys,
        })
    }

    /// `drag_path`.
    pub fn drag_path(
        tab: Option<TabId>,
        path: Vec<CssPoint>,
        keys: ModifierSet,
    ) -> Result<BrowserCall, ArgError> {
        count("path", path.len(), MIN_PATH_POINTS, MAX_PATH_POINTS)?;
        Ok(BrowserCall::DragPath { tab, path, keys })
    }

    /// `hold_keys`.
    pub fn hold_keys(
        tab: Option<TabId>,
        names: &[&str],
        duration_ms: u64,
    ) -> Result<BrowserCall, ArgError> {
        count("keys", names.len(), 1, MAX_HOLD_KEYS)?;
        let mut keys: Vec<Key> = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            text_between("keys", name, 1, MAX_KEY_NAME_BYTES)?;
            if names[..i].contains(name) {
                return Err(ArgError::Repeated {
                    field: "keys",
                    item: (*name).to_owned(),
                });
            }
            let key = Key::parse(name).map_err(|e| ArgError::Key {
                field: "keys",
                why: e.to_string(),
            })?;
            if keys.iter().any(|k| k.keysym() == key.keysym()) {
                return Err(ArgError::Repeated {
                    field: "keys",
                    item: (*name).to_owned(),
                });
            }
            keys.push(key);
        }
        Ok(BrowserCall::HoldKeys {
            tab,
            keys,
            duration: Duration::from_millis(range("duration_ms", 1, MAX_HOLD_MS, duration_ms)?),
        })
    }

    /// `read_diagnostics`.
    pub fn read_diagnostics(
        tab: Option<TabId>,
        source: DiagnosticsSource,
        limit: u64,
    ) -> Result<BrowserCall, ArgError> {
        Ok(BrowserCall::ReadDiagnostics {
            tab,
            source,
            limit: range("limit", 1, u64::from(MAX_DIAGNOSTICS_LIMIT), limit)? as u32,
        })
    }

    /// `run_script`.
    pub fn run_script(
        tab: Option<TabId>,
        source: &str,
        timeout_ms: u64,
    ) -> Result<BrowserCall, ArgError> {
        if source.is_empty() {
            return Err(ArgError::TextLength {
                field: "source",
                min: 1,
                max: usize::MAX,
                got: 0,
                after: "",
            });
        }
        Ok(BrowserCall::RunScript {
            tab,
            source: source.to_owned(),
            timeout: parse_timeout("timeout_ms", timeout_ms)?,
        })
    }

    /// The member this call invokes.
    pub fn member(&self) -> BrowserMember {
        match self {
            BrowserCall::Navigate { .. } => BrowserMember::Navigate,
            BrowserCall::ReadPage { .. } => BrowserMember::ReadPage,
            BrowserCall::GetPageText { .. } => BrowserMember::GetPageText,
            BrowserCall::Find { .. } => BrowserMember::Find,
            BrowserCall::Click { .. } => BrowserMember::Click,
            BrowserCall::Type { .. } => BrowserMember::Type,
            BrowserCall::Key { .. } => BrowserMember::Key,
            BrowserCall::Scroll { .. } => BrowserMember::Scroll,
            BrowserCall::ScrollTo { .. } => BrowserMember::ScrollTo,
            BrowserCall::WaitFor { .. } => BrowserMember::WaitFor,
            BrowserCall::SelectOption { .. } => BrowserMember::SelectOption,
            BrowserCall::Hover { .. } => BrowserMember::Hover,
            BrowserCall::Screenshot { .. } => BrowserMember::Screenshot,
            BrowserCall::Zoom { .. } => BrowserMember::Zoom,
            BrowserCall::NewTab { .. } => BrowserMember::NewTab,
            BrowserCall::ListTabs => BrowserMember::ListTabs,
            BrowserCall::SwitchTab { .. } => BrowserMember::SwitchTab,
            BrowserCall::CloseTab { .. } => BrowserMember::CloseTab,
            BrowserCall::ReadPageScoped { .. } => BrowserMember::ReadPageScoped,
            BrowserCall::ClickAt { .. } => BrowserMember::ClickAt,
            BrowserCall::DragPath { .. } => BrowserMember::DragPath,
            BrowserCall::HoldKeys { .. } => BrowserMember::HoldKeys,
            BrowserCall::HoverAt { .. } => BrowserMember::HoverAt,
            BrowserCall::MouseButton { .. } => BrowserMember::DragPath,
            BrowserCall::SetChecked { .. } => BrowserMember::SetChecked,
            BrowserCall::ReadDiagnostics { .. } => BrowserMember::ReadDiagnostics,
            BrowserCall::RunScript { .. } => BrowserMember::RunScript,
            BrowserCall::UploadFile { .. } => BrowserMember::UploadFile,
            BrowserCall::DownloadFile { .. } => BrowserMember::DownloadFile,
        }
    }

    /// The element ref the call acts on, if any (`type` with a null target has none).
    pub fn target(&self) -> Option<&Ref> {
        match self {
            BrowserCall::Click { target, .. }
            | BrowserCall::ScrollTo { target, .. }
            | BrowserCall::SelectOption { target, .. }
            | BrowserCall::Hover { target, .. }
            | BrowserCall::SetChecked { target, .. } => Some(target),
            BrowserCall::Type { target, .. } => target.as_ref(),
            _ => None,
        }
    }

    /// The validated arguments as the JSON object a `confirm` callback, a URL policy or a
    /// ledger receives: the spec's field names, normalised values (completed URLs, normalised
    /// wait text, durations in ms).
    pub fn arguments(&self) -> Value {
        fn tab(t: &Option<TabId>) -> Option<&str> {
            t.as_ref().map(TabId::as_str)
        }
        let point = |p: &CssPoint| json!({"x": p.x, "y": p.y});
        match self {
            BrowserCall::Navigate { url, tab: t } => json!({"url": url.as_str(), "tab_id": tab(t)}),
            BrowserCall::ReadPage { filter, tab: t } => {
                json!({"filter": filter.name(), "tab_id": tab(t)})
            }
            BrowserCall::GetPageText { tab: t } | BrowserCall::Screenshot { tab: t } => {
                json!({"tab_id": tab(t)})
            }
            BrowserCall::Find { query, tab: t } => json!({"query": query, "tab_id": tab(t)}),
            BrowserCall::Click { target, tab: t }
            | BrowserCall::ScrollTo { target, tab: t }
            | BrowserCall::Hover { target, tab: t } => {
                json!({"target": target.as_str(), "tab_id": tab(t)})
            }
            BrowserCall::Type {
                text,
                target,
                tab: t,
            } => {
                json!({"text": text, "target": target.as_ref().map(Ref::as_str), "tab_id": tab(t)})
            }
            BrowserCall::Key { keys, tab: t } => json!({
                "keys": keys.iter().map(KeyPress::text).collect::<Vec<_>>(), "tab_id": tab(t)
            }),
            BrowserCall::Scroll {
                direction,
                amount,
                at,
                tab: t,
            } => {
                let mut args = json!({"direction": direction_name(*direction), "amount": amount, "tab_id": tab(t)});
                if let Some(at) = at {
                    args["x"] = json!(at.x);
                    args["y"] = json!(at.y);
                }
                args
            }
            BrowserCall::WaitFor {
                text,
                timeout,
                tab: t,
            } => {
                json!({"text": text.as_str(), "timeout_ms": timeout.as_millis() as u64, "tab_id": tab(t)})
            }
            BrowserCall::SelectOption {
                target,
                values,
                tab: t,
            } => json!({"target": target.as_str(), "values": values, "tab_id": tab(t)}),
            BrowserCall::Zoom { region, tab: t } => {
                json!({"region": region.edges(), "tab_id": tab(t)})
            }
            BrowserCall::NewTab { url } => json!({"url": url.as_ref().map(PageUrl::as_str)}),
            BrowserCall::ListTabs => json!({}),
            BrowserCall::SwitchTab { tab: t } | BrowserCall::CloseTab { tab: t } => {
                json!({"tab_id": t.as_str()})
            }
            BrowserCall::ReadPageScoped {
                tab: t,
                root,
                depth,
                filter,
            } => json!({"tab_id": tab(t), "root": root.as_ref().map(Ref::as_str), "depth": depth,
                        "filter": filter.name()}),
            BrowserCall::ClickAt {
                tab: t,
                at,
                button,
                click_count,
                keys,
            } => json!({"tab_id": tab(t), "x": at.x, "y": at.y, "button": button.name(),
                        "click_count": click_count, "keys": modifier_names(*keys)}),
            BrowserCall::DragPath { tab: t, path, keys } => json!({"tab_id": tab(t),
                "path": path.iter().map(point).collect::<Vec<_>>(), "keys": modifier_names(*keys)}),
            BrowserCall::HoldKeys {
                tab: t,
                keys,
                duration,
            } => json!({"tab_id": tab(t), "keys": keys.iter().map(Key::name).collect::<Vec<_>>(),
                        "duration_ms": duration.as_millis() as u64}),
            BrowserCall::HoverAt { tab: t, at } => json!({"tab_id": tab(t), "x": at.x, "y": at.y}),
            BrowserCall::MouseButton { tab: t, at, press } => json!({"tab_id": tab(t), "x": at.x,
                "y": at.y, "button": "left", "action": if *press { "press" } else { "release" }}),
            BrowserCall::SetChecked {
                tab: t,
                target,
                checked,
            } => json!({"tab_id": tab(t), "target": target.as_str(), "checked": checked}),
            BrowserCall::ReadDiagnostics {
                tab: t,
                source,
                limit,
            } => json!({"tab_id": tab(t), "source": source.name(), "limit": limit}),
            BrowserCall::RunScript {
                tab: t,
                source,
                timeout,
            } => {
                json!({"tab_id": tab(t), "source": source, "timeout_ms": timeout.as_millis() as u64})
            }
            BrowserCall::UploadFile { grant } | BrowserCall::DownloadFile { grant } => {
                json!({"grant_id": grant.as_str()})
            }
        }
    }
}

fn direction_name(d: ScrollDirection) -> &'static str {
    match d {
        ScrollDirection::Up => "up",
        ScrollDirection::Down => "down",
        ScrollDirection::Left => "left",
        ScrollDirection::Right => "right",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_for_normalises_then_limits() {
        let call = BrowserCall::wait_for("  Booking \n\t saved ", 500, None).unwrap();
        assert_eq!(
            call.arguments(),
            json!({"text": "Booking saved", "timeout_ms": 500, "tab_id": null})
        );
        assert!(matches!(
            BrowserCall::wait_for(" \n ", 500, None),
            Err(ArgError::TextLength { got: 0, .. })
        ));
        assert!(BrowserCall::wait_for(&"a".repeat(256), 1, None).is_ok());
        assert!(BrowserCall::wait_for(&"a".repeat(257), 1, None).is_err());
        assert!(matches!(
            BrowserCall::wait_for("x", 0, None),
            Err(ArgError::Range {
                min: 1,
                max: 30_000,
                ..
            })
        ));
        assert!(BrowserCall::wait_for("x", 30_001, None).is_err());
    }

    #[test]
    fn pointer_members_follow_the_limits() {
        let p = CssPoint::new(1, 2).unwrap();
        assert!(CssPoint::new(MAX_SAFE_INTEGER + 1, 0).is_err());
        assert!(BrowserCall::click_at(None, p, PointerButton::Left, 3, ModifierSet::NONE).is_ok());
        assert!(BrowserCall::click_at(None, p, PointerButton::Left, 4, ModifierSet::NONE).is_err());
        assert!(BrowserCall::click_at(None, p, PointerButton::Left, 0, ModifierSet::NONE).is_err());
        assert!(BrowserCall::drag_path(None, vec![p], ModifierSet::NONE).is_err());
        assert!(BrowserCall::drag_path(None, vec![p; 100], ModifierSet::NONE).is_ok());
        assert!(BrowserCall::drag_path(None, vec![p; 101], ModifierSet::NONE).is_err());
        assert!(BrowserCall::hold_keys(None, &["Shift"], 3000).is_ok());
        assert!(BrowserCall::hold_keys(None, &["Shift"], 3001).is_err());
        assert!(BrowserCall::hold_keys(None, &[], 10).is_err());
        assert!(matches!(
            BrowserCall::hold_keys(None, &["a", "a"], 10),
            Err(ArgError::Repeated { .. })
        ));
        assert!(BrowserCall::hold_keys(None, &["a"; 9], 10).is_err());
        assert!(BrowserCall::hold_keys(None, &[&"x".repeat(65)], 10).is_err());
        assert!(BrowserCall::read_page_scoped(None, None, 0, ReadFilter::All).is_err());
        assert!(BrowserCall::read_page_scoped(None, None, 33, ReadFilter::All).is_err());
        assert!(BrowserCall::read_diagnostics(None, DiagnosticsSource::Console, 101).is_err());
        assert!(BrowserCall::run_script(None, "", 10).is_err());
        assert!(GrantId::parse(&"g".repeat(257)).is_err());
        assert!(CssRegion::new([10, 10, 10, 20]).is_err());
    }

    #[test]
    fn modifier_lists_are_exact_and_unique() {
        let set = parse_modifier_list("keys", &["Control", "Meta"]).unwrap();
        assert_eq!(modifier_names(set), vec!["Control", "Meta"]);
        assert!(parse_modifier_list("keys", &[]).unwrap().is_empty());
        assert!(matches!(
            parse_modifier_list("keys", &["Shift", "Shift"]),
            Err(ArgError::Repeated { .. })
        ));
        assert!(matches!(
            parse_modifier_list("keys", &["ctrl"]),
            Err(ArgError::Modifier { .. })
        ));
    }

    #[test]
    fn urls_are_completed_before_anyone_sees_them() {
        assert_eq!(
            PageUrl::parse("url", "example.com/docs").unwrap().as_str(),
            "https://example.com/docs"
        );
        assert_eq!(
            PageUrl::parse("url", "http://127.0.0.1:8080")
                .unwrap()
                .as_str(),
            "http://127.0.0.1:8080/"
        );
        assert!(PageUrl::parse("url", "not a url").is_err());
        assert!(PageUrl::parse("url", "/relative").is_err());
    }

    #[test]
    fn keys_parse_dom_names() {
        let BrowserCall::Key { keys, .. } =
            BrowserCall::key(&["Control+a", "Enter"], None).unwrap()
        else {
            panic!("not a key call")
        };
        assert_eq!(keys[0].chord().keys().len(), 2);
        assert!(BrowserCall::key(&[], None).is_err());
        assert!(BrowserCall::key(&["NoSuchKey"], None).is_err());
    }
}
