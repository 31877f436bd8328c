//! Structured page reads: `BrowserReadV1` (visible text, elements with refs, omitted codes) and
//! `BrowserScopedReadV1` (the same plus scopes), built only through constructors that keep every
//! limit of the spec.
//!
//! Spec: openai-browser-desktop-drivers, "Devolver lecturas estructuradas" and "Leer dentro de una
//! sección".

use std::fmt;

use serde::Serialize;

/// Most bytes of a ref (element or scope).
pub const MAX_REF_BYTES: usize = 256;
/// Most bytes of a label (element, option or scope).
pub const MAX_LABEL_BYTES: usize = 256;
/// Most bytes of a field value or option value.
pub const MAX_VALUE_BYTES: usize = 512;

/// A ref the driver issued for an element or a scope: 1 to [`MAX_REF_BYTES`] bytes of UTF-8.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Ref(String);

impl Ref {
    /// A ref; `None` when empty or longer than [`MAX_REF_BYTES`].
    pub fn new(text: impl Into<String>) -> Option<Ref> {
        let text = text.into();
        (!text.is_empty() && text.len() <= MAX_REF_BYTES).then_some(Ref(text))
    }

    /// The ref text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Ref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The seven roles an element of a read may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A button (or a link acting as one).
    Button,
    /// A text field.
    Textbox,
    /// A drop-down or editable combo box.
    Combobox,
    /// A checkbox.
    Checkbox,
    /// A radio button.
    Radio,
    /// A range control.
    Slider,
    /// A list of selectable options.
    Listbox,
}

impl Role {
    /// All seven.
    pub const ALL: [Role; 7] = [
        Role::Button,
        Role::Textbox,
        Role::Combobox,
        Role::Checkbox,
        Role::Radio,
        Role::Slider,
        Role::Listbox,
    ];

    /// The wire name.
    pub const fn name(self) -> &'static str {
        match self {
            Role::Button => "button",
            Role::Textbox => "textbox",
            Role::Combobox => "combobox",
            Role::Checkbox => "checkbox",
            Role::Radio => "radio",
            Role::Slider => "slider",
            Role::Listbox => "listbox",
        }
    }

    /// The role a wire name means.
    pub fn from_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == name)
    }

    /// Whether `checked` applies.
    pub const fn has_checked(self) -> bool {
        matches!(self, Role::Checkbox | Role::Radio)
    }

    /// Whether options may carry `selected`.
    pub const fn has_selected_options(self) -> bool {
        matches!(self, Role::Listbox)
    }

    /// Whether the role is a choice among options.
    pub const fn has_options(self) -> bool {
        matches!(self, Role::Combobox | Role::Listbox)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What an element is, in more detail than the spec's seven roles: what the compact form and
/// Claude's browser toolset show. Each kind maps onto one [`Role`] for `BrowserReadV1`
/// ([`Kind::role`]), so a read with any kind still passes the SDK's validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A button.
    Button,
    /// A link (`<a href>`, `role=link`, or an `<a>` without `href` that has a click handler).
    Link,
    /// A tab of a tab list.
    Tab,
    /// An item of a menu.
    Menuitem,
    /// An on/off switch.
    Switch,
    /// A checkbox.
    Checkbox,
    /// A radio button.
    Radio,
    /// A text field.
    Textbox,
    /// A drop-down or editable combo box.
    Combobox,
    /// A list of selectable options.
    Listbox,
    /// A range control (native or custom).
    Slider,
    /// Anything else a person can operate: an element with its own or a delegated click, pointer
    /// or key handler, a focusable element, a pointer-cursor target.
    Clickable,
}

impl Kind {
    /// All twelve.
    pub const ALL: [Kind; 12] = [
        Kind::Button,
        Kind::Link,
        Kind::Tab,
        Kind::Menuitem,
        Kind::Switch,
        Kind::Checkbox,
        Kind::Radio,
        Kind::Textbox,
        Kind::Combobox,
        Kind::Listbox,
        Kind::Slider,
        Kind::Clickable,
    ];

    /// The name the compact form uses.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Button => "button",
            Kind::Link => "link",
            Kind::Tab => "tab",
            Kind::Menuitem => "menuitem",
            Kind::Switch => "switch",
            Kind::Checkbox => "checkbox",
            Kind::Radio => "radio",
            Kind::Textbox => "textbox",
            Kind::Combobox => "combobox",
            Kind::Listbox => "listbox",
            Kind::Slider => "slider",
            Kind::Clickable => "clickable",
        }
    }

    /// The kind a name means.
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The spec's role for `BrowserReadV1`: links, tabs, menu items and other clickable
    /// elements are buttons (something to click); a switch is a checkbox.
    pub const fn role(self) -> Role {
        match self {
            Kind::Button | Kind::Link | Kind::Tab | Kind::Menuitem | Kind::Clickable => {
                Role::Button
            }
            Kind::Switch | Kind::Checkbox => Role::Checkbox,
            Kind::Radio => Role::Radio,
            Kind::Textbox => Role::Textbox,
            Kind::Combobox => Role::Combobox,
            Kind::Listbox => Role::Listbox,
            Kind::Slider => Role::Slider,
        }
    }

    /// The plain kind of a role (the kind of an element built without one).
    pub const fn of_role(role: Role) -> Kind {
        match role {
            Role::Button => Kind::Button,
            Role::Textbox => Kind::Textbox,
            Role::Combobox => Kind::Combobox,
            Role::Checkbox => Kind::Checkbox,
            Role::Radio => Kind::Radio,
            Role::Slider => Kind::Slider,
            Role::Listbox => Kind::Listbox,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a read is partial: each code appears at most once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Omitted {
    /// The whole report hit its size cap.
    ReportLimit,
    /// The visible text was cut.
    TextLimit,
    /// Not every target got an element.
    TargetLimit,
    /// The walk hit its work budget.
    WorkLimit,
    /// Some frames could not be read.
    FrameLimit,
    /// The requested root cannot be read.
    UnsupportedRoot,
    /// Some controls are of a kind the driver does not report.
    UnsupportedControl,
    /// Some controls act remotely (outside the page) and are left out.
    RemoteAction,
    /// Some content is private and was left out.
    Private,
    /// Some values were withheld.
    Value,
    /// Some labels were cut to the label limit.
    NameLimit,
}

impl Omitted {
    /// All eleven codes.
    pub const ALL: [Omitted; 11] = [
        Omitted::ReportLimit,
        Omitted::TextLimit,
        Omitted::TargetLimit,
        Omitted::WorkLimit,
        Omitted::FrameLimit,
        Omitted::UnsupportedRoot,
        Omitted::UnsupportedControl,
        Omitted::RemoteAction,
        Omitted::Private,
        Omitted::Value,
        Omitted::NameLimit,
    ];

    /// The wire code.
    pub const fn code(self) -> &'static str {
        match self {
            Omitted::ReportLimit => "report_limit",
            Omitted::TextLimit => "text_limit",
            Omitted::TargetLimit => "target_limit",
            Omitted::WorkLimit => "work_limit",
            Omitted::FrameLimit => "frame_limit",
            Omitted::UnsupportedRoot => "unsupported_root",
            Omitted::UnsupportedControl => "unsupported_control",
            Omitted::RemoteAction => "remote_action",
            Omitted::Private => "private",
            Omitted::Value => "value",
            Omitted::NameLimit => "name_limit",
        }
    }

    /// The code a wire string means.
    pub fn from_code(code: &str) -> Option<Omitted> {
        Omitted::ALL.into_iter().find(|o| o.code() == code)
    }
}

/// Why a read could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// A label that is empty or longer than [`MAX_LABEL_BYTES`].
    #[error("labels must be 1 to {MAX_LABEL_BYTES} bytes, got {len}")]
    Label {
        /// Its length in bytes.
        len: usize,
    },
    /// A value longer than [`MAX_VALUE_BYTES`].
    #[error("values must be at most {MAX_VALUE_BYTES} bytes, got {len}")]
    Value {
        /// Its length in bytes.
        len: usize,
    },
    /// `checked` on a role other than checkbox or radio.
    #[error("`checked` applies only to checkbox and radio, not {0}")]
    CheckedOnRole(Role),
    /// `options` on a role that has none, or `selected` on options of a role other than listbox.
    #[error("options (or selected options) do not apply to {0}")]
    OptionsOnRole(Role),
    /// Two elements or scopes share a ref, or a scope ref equals an element ref.
    #[error("the ref {0} appears twice in one read")]
    DuplicateRef(Ref),
    /// An omitted code repeated.
    #[error("the omitted code {} appears twice", .0.code())]
    DuplicateOmitted(Omitted),
    /// `get_page_text` returned elements.
    #[error("get_page_text must return an empty elements array")]
    TextReadWithElements,
    /// A kind whose role is not the element's role.
    #[error("the kind {kind} is a {}, not a {role}", kind.role())]
    KindOfOtherRole {
        /// The kind given.
        kind: Kind,
        /// The element's role.
        role: Role,
    },
}

fn label(text: String) -> Result<String, ReadError> {
    if text.is_empty() || text.len() > MAX_LABEL_BYTES {
        return Err(ReadError::Label { len: text.len() });
    }
    Ok(text)
}

fn value(text: String) -> Result<String, ReadError> {
    if text.len() > MAX_VALUE_BYTES {
        return Err(ReadError::Value { len: text.len() });
    }
    Ok(text)
}

/// One option of a combobox or listbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadOption {
    label: String,
    value: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    selected: Option<bool>,
}

impl ReadOption {
    /// An option with a 1–256 byte label and a value of at most 512 bytes.
    pub fn new(label_text: String, value_text: String) -> Result<ReadOption, ReadError> {
        Ok(ReadOption {
            label: label(label_text)?,
            value: value(value_text)?,
            selected: None,
        })
    }

    /// Marks whether the option is selected (listbox options only; checked when added).
    pub fn selected(mut self, selected: bool) -> ReadOption {
        self.selected = Some(selected);
        self
    }

    /// The label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The value.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Whether it is selected, when reported.
    pub fn is_selected(&self) -> Option<bool> {
        self.selected
    }
}

/// One element of a read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadElement {
    #[serde(rename = "ref")]
    reference: Ref,
    label: String,
    role: Role,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    options: Option<Vec<ReadOption>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    checked: Option<bool>,
    /// Not part of `BrowserReadV1` (the SDK admits only the seven roles): the compact form's.
    #[serde(skip)]
    kind: Kind,
    /// Not part of `BrowserReadV1`: where in the read's text the element stands (a byte offset
    /// on a character boundary), so the compact form can show it among the text around it.
    #[serde(skip)]
    at: Option<usize>,
    /// Not part of `BrowserReadV1`: a control of zero size the keyboard reaches (a skip link),
    /// shown as `(off-screen)` in the compact form.
    #[serde(skip)]
    offscreen: bool,
}

impl ReadElement {
    /// An element with a ref, a 1–256 byte label and a role (its kind is the role's own).
    pub fn new(reference: Ref, label_text: String, role: Role) -> Result<ReadElement, ReadError> {
        Ok(ReadElement {
            reference,
            label: label(label_text)?,
            role,
            value: None,
            options: None,
            checked: None,
            kind: Kind::of_role(role),
            at: None,
            offscreen: false,
        })
    }

    /// Says what the element is in more detail; the kind must map onto the element's role.
    pub fn with_kind(mut self, kind: Kind) -> Result<ReadElement, ReadError> {
        if kind.role() != self.role {
            return Err(ReadError::KindOfOtherRole {
                kind,
                role: self.role,
            });
        }
        self.kind = kind;
        Ok(self)
    }

    /// Places the element in the read's text, at byte offset `at` (checked against the text
    /// when the read is built: past its end means at its end).
    pub fn at_text_offset(mut self, at: usize) -> ReadElement {
        self.at = Some(at);
        self
    }

    /// Marks a control of zero size that the keyboard reaches (Tab, then Enter or typing):
    /// a pointer cannot land on it.
    pub fn off_screen(mut self) -> ReadElement {
        self.offscreen = true;
        self
    }

    /// Whether it is a zero-size control reached by the keyboard only.
    pub fn is_off_screen(&self) -> bool {
        self.offscreen
    }

    /// What the element is (its role's kind unless the driver said more).
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Where it stands in the read's text, when the driver said.
    pub fn text_offset(&self) -> Option<usize> {
        self.at
    }

    /// Adds the field's value (at most 512 bytes). Only for values the application's privacy
    /// policy lets the model see, never a password.
    pub fn with_value(mut self, value_text: String) -> Result<ReadElement, ReadError> {
        self.value = Some(value(value_text)?);
        Ok(self)
    }

    /// Adds `checked` (checkbox and radio only).
    pub fn with_checked(mut self, checked: bool) -> Result<ReadElement, ReadError> {
        if !self.role.has_checked() {
            return Err(ReadError::CheckedOnRole(self.role));
        }
        self.checked = Some(checked);
        Ok(self)
    }

    /// Adds options (combobox and listbox; `selected` only on listbox options).
    pub fn with_options(mut self, options: Vec<ReadOption>) -> Result<ReadElement, ReadError> {
        if !self.role.has_options()
            || (!self.role.has_selected_options() && options.iter().any(|o| o.selected.is_some()))
        {
            return Err(ReadError::OptionsOnRole(self.role));
        }
        self.options = Some(options);
        Ok(self)
    }

    /// The ref.
    pub fn reference(&self) -> &Ref {
        &self.reference
    }

    /// The label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The value, when reported.
    pub fn value(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// The options, when reported.
    pub fn options(&self) -> Option<&[ReadOption]> {
        self.options.as_deref()
    }

    /// Whether it is checked, when reported.
    pub fn checked(&self) -> Option<bool> {
        self.checked
    }

    /// The same element without its value and options (for a surface whose privacy policy is
    /// stricter than the driver's).
    pub fn without_value(mut self) -> ReadElement {
        self.value = None;
        self.options = None;
        self
    }
}

/// `BrowserReadV1`: the visible text, the elements, and why anything was left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BrowserRead {
    version: u8,
    text: String,
    elements: Vec<ReadElement>,
    omitted: Vec<Omitted>,
}

fn check_unique<'a>(refs: impl Iterator<Item = &'a Ref>) -> Result<(), ReadError> {
    let mut seen = std::collections::HashSet::new();
    for r in refs {
        if !seen.insert(r) {
            return Err(ReadError::DuplicateRef(r.clone()));
        }
    }
    Ok(())
}

impl BrowserRead {
    /// A read; refused when refs or omitted codes repeat.
    pub fn new(
        text: String,
        elements: Vec<ReadElement>,
        omitted: Vec<Omitted>,
    ) -> Result<BrowserRead, ReadError> {
        check_unique(elements.iter().map(|e| &e.reference))?;
        for (i, o) in omitted.iter().enumerate() {
            if omitted[..i].contains(o) {
                return Err(ReadError::DuplicateOmitted(*o));
            }
        }
        let mut elements = elements;
        for e in &mut elements {
            if let Some(at) = e.at {
                let mut at = at.min(text.len());
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                e.at = Some(at);
            }
        }
        Ok(BrowserRead {
            version: 1,
            text,
            elements,
            omitted,
        })
    }

    /// A text-only read (`get_page_text`, `read_diagnostics`): no elements.
    pub fn text_only(text: String, omitted: Vec<Omitted>) -> Result<BrowserRead, ReadError> {
        BrowserRead::new(text, Vec::new(), omitted)
    }

    /// Always 1.
    pub fn version(&self) -> u8 {
        self.version
    }

    /// The visible text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The elements.
    pub fn elements(&self) -> &[ReadElement] {
        &self.elements
    }

    /// The omitted codes.
    pub fn omitted(&self) -> &[Omitted] {
        &self.omitted
    }

    /// Takes the parts apart (for a surface that filters elements).
    pub fn into_parts(self) -> (String, Vec<ReadElement>, Vec<Omitted>) {
        (self.text, self.elements, self.omitted)
    }
}

/// A name, value or option in the compact form: as it is when nothing in it can pass for the
/// form's syntax, else a JSON string literal (quotes and escapes), so any text reads back
/// exactly. Quoted: the empty string, text with surrounding spaces or control characters, or
/// with any of `"` `=` `{` `}` `[` `]`, and inside braces `,` and `*` too.
pub(crate) fn text_item(out: &mut String, text: &str, in_braces: bool) {
    let bare = !text.is_empty()
        && text.trim() == text
        && !text.chars().any(|c| {
            c.is_control()
                || matches!(c, '"' | '=' | '{' | '}' | '[' | ']')
                || (in_braces && matches!(c, ',' | '*'))
        });
    if bare {
        out.push_str(text);
    } else {
        match serde_json::to_string(text) {
            Ok(q) => out.push_str(&q),
            Err(_) => out.push_str("\"\""),
        }
    }
}

/// The options of `e` as the compact form lists them, for telling repeated lists apart.
fn same_options(a: &[ReadOption], b: &[ReadOption]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.label == y.label && x.value == y.value && x.selected.is_none() && y.selected.is_none()
        })
}

/// One element as the compact form shows it, on one line: `[ref] kind`, then `[x]` / `[ ]` for
/// a checked or unchecked checkbox, radio or switch, the name, ` = value` when a value is
/// reported, and the options in braces — `label` alone when its value is the label, else
/// `label=value` — with `*` after the selected ones (a combo box's value is its starred option,
/// so ` = value` is left out when an option has it). Names and values are bare unless they
/// could pass for syntax ([`text_item`]'s rule), then JSON string literals.
///
/// ```
/// use hands_core::browser::read::{compact_line, Kind, ReadElement, ReadOption, Ref, Role};
/// let size = ReadElement::new(Ref::new("e4").unwrap(), "Size".into(), Role::Combobox)
///     .unwrap()
///     .with_value("m".into())
///     .unwrap()
///     .with_options(vec![
///         ReadOption::new("Small".into(), "s".into()).unwrap(),
///         ReadOption::new("Medium".into(), "m".into()).unwrap(),
///     ])
///     .unwrap();
/// assert_eq!(compact_line(&size), "[e4] combobox Size {Small=s, Medium=m*}");
/// let more = ReadElement::new(Ref::new("e5").unwrap(), "Read \"more\"".into(), Role::Button)
///     .unwrap()
///     .with_kind(Kind::Link)
///     .unwrap();
/// assert_eq!(compact_line(&more), r#"[e5] link "Read \"more\"""#);
/// ```
pub fn compact_line(e: &ReadElement) -> String {
    compact_line_with(e, None)
}

/// [`compact_line`], with the options written as ` {options as e8}` when `like` (an earlier
/// element of the same read) has the very same list.
fn compact_line_with(e: &ReadElement, like: Option<&Ref>) -> String {
    let mut out = String::with_capacity(24 + e.label.len());
    out.push('[');
    out.push_str(e.reference.as_str());
    out.push_str("] ");
    out.push_str(e.kind.name());
    match e.checked {
        Some(true) => out.push_str(" [x]"),
        Some(false) => out.push_str(" [ ]"),
        None => {}
    }
    out.push(' ');
    text_item(&mut out, &e.label, false);
    let options = e.options.as_deref().unwrap_or_default();
    // The value is shown by a star when an option holds it and the list is written out.
    let starred = e.value.as_deref().filter(|_| like.is_none()).and_then(|v| {
        options
            .iter()
            .position(|o| o.value == v && o.selected.is_none())
    });
    if let Some(value) = &e.value
        && starred.is_none()
    {
        out.push_str(" = ");
        text_item(&mut out, value, false);
    }
    if let Some(like) = like {
        out.push_str(" {options as ");
        out.push_str(like.as_str());
        out.push('}');
    } else if e.options.is_some() {
        push_options(&mut out, options, starred);
    }
    if e.offscreen {
        out.push(' ');
        out.push_str(OFF_SCREEN_MARK);
    }
    out
}

/// ` {label=value, …}` with `*` after the selected options and after option `starred`.
fn push_options(out: &mut String, options: &[ReadOption], starred: Option<usize>) {
    out.push_str(" {");
    for (i, o) in options.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        text_item(out, &o.label, true);
        if o.value != o.label {
            out.push('=');
            text_item(out, &o.value, true);
        }
        if o.selected == Some(true) || starred == Some(i) {
            out.push('*');
        }
    }
    out.push('}');
}

/// What changed in an element between two reads, in the compact form's syntax without what
/// stayed: `[ref]`, then only the parts that differ — `[x]` / `[ ]`, the name, ` = value`, the
/// options in braces (unstarred: the value says which is chosen), [`OFF_SCREEN_MARK`] or
/// [`ON_SCREEN_MARK`]. `None` when the kind differs or a part appeared or vanished that the
/// syntax cannot say (a value or a checked state gone): the caller shows the whole element.
///
/// ```
/// use hands_core::browser::read::{changed_line, ReadElement, Ref, Role};
/// let field = |v: &str| {
///     ReadElement::new(Ref::new("e1").unwrap(), "New task".into(), Role::Textbox)
///         .unwrap()
///         .with_value(v.into())
///         .unwrap()
/// };
/// assert_eq!(changed_line(&field("Write report"), &field("")).unwrap(), "[e1] = \"\"");
/// ```
pub fn changed_line(was: &ReadElement, now: &ReadElement) -> Option<String> {
    if was.kind != now.kind
        || (was.checked.is_some() && now.checked.is_none())
        || (was.value.is_some() && now.value.is_none())
        || (was.options.is_some() && now.options.is_none())
    {
        return None;
    }
    let mut out = format!("[{}]", now.reference.as_str());
    if now.checked != was.checked {
        out.push_str(if now.checked == Some(true) {
            " [x]"
        } else {
            " [ ]"
        });
    }
    if now.label != was.label {
        out.push(' ');
        text_item(&mut out, &now.label, false);
    }
    if let Some(value) = &now.value
        && was.value.as_ref() != Some(value)
    {
        out.push_str(" = ");
        text_item(&mut out, value, false);
    }
    if let Some(options) = &now.options
        && was.options.as_ref() != Some(options)
    {
        push_options(&mut out, options, None);
    }
    if now.offscreen != was.offscreen {
        out.push(' ');
        out.push_str(if now.offscreen {
            OFF_SCREEN_MARK
        } else {
            ON_SCREEN_MARK
        });
    }
    Some(out)
}

/// What the compact form puts after a zero-size control the keyboard reaches.
pub const OFF_SCREEN_MARK: &str = "(off-screen)";

/// After a changed element that was off-screen and is not any more (see [`changed_line`]).
pub const ON_SCREEN_MARK: &str = "(on-screen)";

/// One piece of the compact form, in page order.
enum Piece<'a> {
    /// A line of page text (trimmed, not empty).
    Text(&'a str),
    /// An element, by index.
    Element(usize),
}

/// Text and elements in page order: each element where the walk met it when every element
/// says where; else the text, then the elements.
fn pieces<'a>(text: &'a str, elements: &[ReadElement]) -> Vec<Piece<'a>> {
    let lines = |t: &'a str| {
        t.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(Piece::Text)
    };
    let offsets: Option<Vec<usize>> = elements.iter().map(|e| e.at).collect();
    let in_order = offsets
        .as_ref()
        .is_some_and(|o| o.windows(2).all(|w| w[0] <= w[1]));
    let mut out = Vec::new();
    match offsets {
        Some(offsets) if in_order => {
            let mut pos = 0;
            for (i, at) in offsets.into_iter().enumerate() {
                out.extend(lines(&text[pos..at]));
                out.push(Piece::Element(i));
                pos = at;
            }
            out.extend(lines(&text[pos..]));
        }
        _ => {
            out.extend(lines(text));
            out.extend((0..elements.len()).map(Piece::Element));
        }
    }
    out
}

/// How many text lines from `from` on, joined by spaces, spell `name` exactly (at least two).
fn lines_spelling(
    pieces: &[Piece<'_>],
    dropped: &[bool],
    from: usize,
    name: &str,
) -> Option<usize> {
    let mut rest = name;
    for (n, j) in (from..pieces.len()).enumerate() {
        let Some(Piece::Text(t)) = pieces.get(j) else {
            return None;
        };
        if dropped[j] {
            return None;
        }
        rest = rest.strip_prefix(t)?;
        if rest.is_empty() {
            return (n > 0).then_some(n + 1);
        }
        rest = rest.strip_prefix(' ')?;
    }
    None
}

/// `line` without `name` at its start (`front`) or end, when the name stands there as whole
/// words; `None` when it does not, or when nothing would be left.
fn strip_name<'a>(line: &'a str, name: &str, front: bool) -> Option<&'a str> {
    let rest = if front {
        line.strip_prefix(name)?
    } else {
        line.strip_suffix(name)?
    };
    let boundary = if front {
        rest.chars().next()
    } else {
        rest.chars().next_back()
    };
    if boundary.is_some_and(char::is_alphanumeric) {
        return None;
    }
    let rest = rest.trim();
    (!rest.is_empty()).then_some(rest)
}

/// The compact form of a read's text and elements (and a scoped read's scopes): what a model
/// reads instead of the `BrowserReadV1` JSON, with the same information in about half the bytes
/// of Playwright's `ariaSnapshot()` (measured by hands-cdp's `vs_playwright` bench).
///
/// - The page text, a line per block, with each element on a line of its own where it stands
///   in the text ([`compact_line`]); a text line that only repeats the name of the element next
///   to it (a field's `<label>`, a button's own text) is left out, since the element line says
///   it. Elements without a place in the text (a `find` answer) follow the text.
/// - Scopes, one per line: `[s3] scope "main: Results"`.
/// - Last, when anything was left out: `(omitted: value, report_limit)`.
///
/// Used for Claude's browser toolset's read results and by `hands mcp`; `BrowserReadV1` JSON
/// stays what the driver spec's function tools answer.
fn render_compact(read: &BrowserRead, scopes: &[Scope]) -> String {
    let elements = &read.elements;
    let mut pieces = pieces(&read.text, elements);
    // A text line next to an element that says exactly its name is left out, one per element:
    // the line before it (a field's label), else the line after (a button's own text). Else a
    // line after it that starts with its name (a link's text, then more of the sentence), or a
    // line before it that ends with it, loses the name.
    let mut dropped = vec![false; pieces.len()];
    for i in 0..pieces.len() {
        let Piece::Element(e) = pieces[i] else {
            continue;
        };
        let name = elements[e].label.as_str();
        let text_at = |j: usize| match pieces.get(j) {
            Some(Piece::Text(t)) if !dropped[j] => Some(*t),
            _ => None,
        };
        let before = i.checked_sub(1).and_then(text_at);
        let after = text_at(i + 1);
        if before == Some(name) {
            dropped[i - 1] = true;
        } else if after == Some(name) {
            dropped[i + 1] = true;
        } else if let Some(n) = lines_spelling(&pieces, &dropped, i + 1, name) {
            // The element's own text over several lines (a card's title and its details).
            dropped[i + 1..i + 1 + n].iter_mut().for_each(|d| *d = true);
        } else if let Some(rest) = after.and_then(|t| strip_name(t, name, true)) {
            pieces[i + 1] = Piece::Text(rest);
        } else if let Some(rest) = before.and_then(|t| strip_name(t, name, false)) {
            pieces[i - 1] = Piece::Text(rest);
        }
    }
    let mut out = String::with_capacity(read.text.len() + elements.len() * 40);
    // Option lists already written out, to refer back to (the same list on every row).
    let mut lists: Vec<usize> = Vec::new();
    for (piece, dropped) in pieces.iter().zip(dropped) {
        if dropped {
            continue;
        }
        match piece {
            // Page text that could pass for a line of the form (an element `[e7] button …`, a
            // scope, `(omitted: …)`) is written as a JSON string literal: a page cannot forge an
            // element line and send the model to another ref.
            Piece::Text(t)
                if t.starts_with('[') || t.starts_with("(omitted") || t.starts_with('"') =>
            {
                out.push_str(&serde_json::to_string(t).unwrap_or_default());
            }
            Piece::Text(t) => out.push_str(t),
            Piece::Element(e) => {
                let element = &elements[*e];
                let options = element.options.as_deref().filter(|o| o.len() > 1);
                let like = options.and_then(|options| {
                    lists.iter().find(|&&j| {
                        elements[j]
                            .options
                            .as_deref()
                            .is_some_and(|earlier| same_options(earlier, options))
                    })
                });
                let line = compact_line_with(element, like.map(|&j| &elements[j].reference));
                if like.is_none() && options.is_some() {
                    lists.push(*e);
                }
                out.push_str(&line);
            }
        }
        out.push('\n');
    }
    for scope in scopes {
        out.push('[');
        out.push_str(scope.reference.as_str());
        out.push_str("] scope ");
        text_item(&mut out, &scope.label, false);
        out.push('\n');
    }
    if !read.omitted.is_empty() {
        out.push_str("(omitted: ");
        for (i, o) in read.omitted.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(o.code());
        }
        out.push_str(")\n");
    }
    out.pop();
    out
}

impl BrowserRead {
    /// The compact form for models (see [`render_compact`]'s rules, summed up here): page text
    /// with an element line (`[e12] textbox "Display name" = "Ada"`) where each element stands,
    /// then `(omitted: …)`. Everything `BrowserReadV1` holds is in it, plus each element's
    /// [`Kind`]. Empty for an empty read.
    pub fn to_compact(&self) -> String {
        render_compact(self, &[])
    }
}

impl BrowserScopedRead {
    /// [`BrowserRead::to_compact`] with the scopes listed before `(omitted: …)`.
    pub fn to_compact(&self) -> String {
        render_compact(&self.read, &self.scopes)
    }
}

/// A section a scoped read can descend into.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Scope {
    #[serde(rename = "ref")]
    reference: Ref,
    label: String,
}

impl Scope {
    /// A scope with a ref and a 1–256 byte label.
    pub fn new(reference: Ref, label_text: String) -> Result<Scope, ReadError> {
        Ok(Scope {
            reference,
            label: label(label_text)?,
        })
    }

    /// The scope ref.
    pub fn reference(&self) -> &Ref {
        &self.reference
    }

    /// The label.
    pub fn label(&self) -> &str {
        &self.label
    }
}

/// `BrowserScopedReadV1`: a read plus the scopes found, whose refs are unique and distinct from
/// every element ref.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BrowserScopedRead {
    #[serde(flatten)]
    read: BrowserRead,
    scopes: Vec<Scope>,
}

impl BrowserScopedRead {
    /// A scoped read; refused when a scope ref repeats or equals an element ref.
    pub fn new(read: BrowserRead, scopes: Vec<Scope>) -> Result<BrowserScopedRead, ReadError> {
        check_unique(
            read.elements
                .iter()
                .map(|e| &e.reference)
                .chain(scopes.iter().map(|s| &s.reference)),
        )?;
        Ok(BrowserScopedRead { read, scopes })
    }

    /// The read part.
    pub fn read(&self) -> &BrowserRead {
        &self.read
    }

    /// The scopes.
    pub fn scopes(&self) -> &[Scope] {
        &self.scopes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(s: &str) -> Ref {
        Ref::new(s).unwrap()
    }

    #[test]
    fn serialises_the_v1_shape() {
        let checkbox = ReadElement::new(r("e1"), "Agree".into(), Role::Checkbox)
            .unwrap()
            .with_checked(true)
            .unwrap();
        let list = ReadElement::new(r("e2"), "Size".into(), Role::Listbox)
            .unwrap()
            .with_options(vec![
                ReadOption::new("Small".into(), "s".into())
                    .unwrap()
                    .selected(true),
            ])
            .unwrap();
        let read =
            BrowserRead::new("Hello".into(), vec![checkbox, list], vec![Omitted::Value]).unwrap();
        assert_eq!(
            serde_json::to_value(&read).unwrap(),
            json!({"version": 1, "text": "Hello", "elements": [
                {"ref": "e1", "label": "Agree", "role": "checkbox", "checked": true},
                {"ref": "e2", "label": "Size", "role": "listbox",
                 "options": [{"label": "Small", "value": "s", "selected": true}]}
            ], "omitted": ["value"]})
        );
        let scoped =
            BrowserScopedRead::new(read, vec![Scope::new(r("s1"), "Form".into()).unwrap()])
                .unwrap();
        let v = serde_json::to_value(&scoped).unwrap();
        assert_eq!(v["scopes"], json!([{"ref": "s1", "label": "Form"}]));
        assert_eq!(v["version"], json!(1));
    }

    #[test]
    fn limits_are_enforced() {
        assert!(Ref::new("").is_none());
        assert!(Ref::new("x".repeat(257)).is_none());
        assert_eq!(
            ReadElement::new(r("e1"), String::new(), Role::Button),
            Err(ReadError::Label { len: 0 })
        );
        assert!(ReadElement::new(r("e1"), "é".repeat(129), Role::Button).is_err());
        let tb = ReadElement::new(r("e1"), "Name".into(), Role::Textbox).unwrap();
        assert!(tb.clone().with_value("v".repeat(513)).is_err());
        assert!(tb.clone().with_value("v".repeat(512)).is_ok());
        assert_eq!(
            tb.clone().with_checked(true),
            Err(ReadError::CheckedOnRole(Role::Textbox))
        );
        assert!(tb.with_options(vec![]).is_err());
        let combo = ReadElement::new(r("e2"), "Pick".into(), Role::Combobox).unwrap();
        assert!(
            combo
                .with_options(vec![
                    ReadOption::new("A".into(), "a".into())
                        .unwrap()
                        .selected(true)
                ])
                .is_err()
        );
        let a = ReadElement::new(r("e1"), "A".into(), Role::Button).unwrap();
        assert_eq!(
            BrowserRead::new(String::new(), vec![a.clone(), a.clone()], vec![]),
            Err(ReadError::DuplicateRef(r("e1")))
        );
        assert!(
            BrowserRead::new(
                String::new(),
                vec![],
                vec![Omitted::Private, Omitted::Private]
            )
            .is_err()
        );
        let read = BrowserRead::new(String::new(), vec![a], vec![]).unwrap();
        assert!(
            BrowserScopedRead::new(read, vec![Scope::new(r("e1"), "X".into()).unwrap()]).is_err()
        );
    }

    #[test]
    fn page_text_cannot_forge_an_element_line_in_the_compact_form() {
        // A page that writes what looks like an element line, pointing at a real ref.
        let text = "[e1] button Cancel\n(omitted: report_limit)\n\"quoted\"\nBuy now".to_owned();
        let buy = ReadElement::new(r("e1"), "Buy now".into(), Role::Button)
            .unwrap()
            .at_text_offset(text.find("Buy now").unwrap());
        let read = BrowserRead::new(text, vec![buy], vec![]).unwrap();
        assert_eq!(
            read.to_compact(),
            "\"[e1] button Cancel\"\n\"(omitted: report_limit)\"\n\"\\\"quoted\\\"\"\n[e1] button Buy now"
        );
    }

    #[test]
    fn compact_form_interleaves_elements_with_their_text() {
        let text = "Sign up\nFull name\nUsed by Account.\nI agree\nOk previous".to_owned();
        let at = |needle: &str| text.find(needle).unwrap();
        let name = ReadElement::new(r("e1"), "Full name".into(), Role::Textbox)
            .unwrap()
            .with_value("Ann \"the\" = x".into())
            .unwrap()
            .at_text_offset(at("Used"));
        let agree = ReadElement::new(r("e2"), "I agree".into(), Role::Checkbox)
            .unwrap()
            .with_checked(false)
            .unwrap()
            .at_text_offset(at("I agree"));
        let ok = ReadElement::new(r("e3"), "Ok".into(), Role::Button)
            .unwrap()
            .at_text_offset(at("Ok"));
        let prev = ReadElement::new(r("e4"), "previous".into(), Role::Button)
            .unwrap()
            .with_kind(Kind::Link)
            .unwrap()
            .at_text_offset(at("previous"));
        let read = BrowserRead::new(
            text.clone(),
            vec![name, agree, ok, prev],
            vec![Omitted::Private],
        )
        .unwrap();
        assert_eq!(
            read.to_compact(),
            "Sign up\n[e1] textbox Full name = \"Ann \\\"the\\\" = x\"\nUsed by Account.\n\
             [e2] checkbox [ ] I agree\n[e3] button Ok\n[e4] link previous\n(omitted: private)"
        );
        // The V1 JSON knows nothing of kinds or offsets.
        let json = serde_json::to_value(&read).unwrap();
        assert_eq!(
            json["elements"][3],
            json!({"ref": "e4", "label": "previous", "role": "button"})
        );
        // Without offsets (a find answer), elements follow the text.
        let (_, elements, _) = read.clone().into_parts();
        let bare: Vec<ReadElement> = elements
            .into_iter()
            .map(|mut e| {
                e.at = None;
                e
            })
            .collect();
        let found = BrowserRead::new("Hello".into(), bare, vec![]).unwrap();
        assert!(found.to_compact().starts_with("Hello\n[e1] textbox"));

        // A card's text over several lines is its name: the lines go. A select's value is its
        // starred option; a list of options seen before is referred to.
        let text = "Task 1\nDue today\nmore".to_owned();
        let card = ReadElement::new(r("e5"), "Task 1 Due today".into(), Role::Button)
            .unwrap()
            .with_kind(Kind::Clickable)
            .unwrap()
            .at_text_offset(0);
        let options = || {
            vec![
                ReadOption::new("Small".into(), "s".into()).unwrap(),
                ReadOption::new("M".into(), "M".into()).unwrap(),
                ReadOption::new("a, b".into(), "*".into()).unwrap(),
            ]
        };
        let select = |r0: &str, v: &str| {
            ReadElement::new(r(r0), "Size".into(), Role::Combobox)
                .unwrap()
                .with_value(v.into())
                .unwrap()
                .with_options(options())
                .unwrap()
                .at_text_offset(text.len())
        };
        let read = BrowserRead::new(
            text.clone(),
            vec![card, select("e6", "M"), select("e7", "none")],
            vec![],
        )
        .unwrap();
        assert_eq!(
            read.to_compact(),
            "[e5] clickable Task 1 Due today\nmore\n\
             [e6] combobox Size {Small=s, M*, \"a, b\"=\"*\"}\n\
             [e7] combobox Size = none {options as e6}"
        );
        assert_eq!(
            BrowserRead::new(String::new(), vec![], vec![])
                .unwrap()
                .to_compact(),
            ""
        );
        // Offsets past the text, or inside a character, are clamped.
        let e = ReadElement::new(r("e9"), "Go".into(), Role::Button)
            .unwrap()
            .at_text_offset(1);
        let read = BrowserRead::new("é".into(), vec![e], vec![]).unwrap();
        assert_eq!(read.elements()[0].text_offset(), Some(0));
        assert_eq!(read.to_compact(), "[e9] button Go\né");
        let scoped =
            BrowserScopedRead::new(read, vec![Scope::new(r("s1"), "main".into()).unwrap()])
                .unwrap();
        assert!(scoped.to_compact().ends_with("[s1] scope main"));
    }

    #[test]
    fn kinds_map_onto_the_seven_roles() {
        for kind in Kind::ALL {
            assert_eq!(Kind::from_name(kind.name()), Some(kind));
            assert!(Role::ALL.contains(&kind.role()));
            let e = ReadElement::new(r("e1"), "X".into(), kind.role()).unwrap();
            assert_eq!(e.with_kind(kind).unwrap().kind(), kind);
        }
        for role in Role::ALL {
            assert_eq!(Kind::of_role(role).role(), role);
        }
        let b = ReadElement::new(r("e1"), "X".into(), Role::Textbox).unwrap();
        assert!(b.with_kind(Kind::Link).is_err());
    }

    #[test]
    fn omitted_codes_round_trip() {
        for o in Omitted::ALL {
            assert_eq!(Omitted::from_code(o.code()), Some(o));
            assert_eq!(serde_json::to_value(o).unwrap(), json!(o.code()));
        }
        for role in Role::ALL {
            assert_eq!(serde_json::to_value(role).unwrap(), json!(role.name()));
        }
    }
}
