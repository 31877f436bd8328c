//! `read_page`, `get_page_text`, `find` and `read_page_scoped`: one DOM walk in the page, turned into `BrowserReadV1` / `BrowserScopedReadV1` with every ref bound.
//!
//! Spec: openai-browser-desktop-drivers, "Devolver lecturas estructuradas" and "Leer dentro de
//! una sección".

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use hands_core::browser::args::ReadFilter;
use hands_core::browser::read::{
    Kind, MAX_LABEL_BYTES, MAX_VALUE_BYTES, Omitted, ReadElement, ReadOption, Ref, Role, Scope,
};
use hands_core::browser::{BrowserRead, BrowserScopedRead, DriverError, truncate_utf8};

use crate::config::{ReadLimits, ValuePolicy};
use crate::driver::{AgentError, CdpBrowser, Page};
use crate::refs::{RefBinding, Stale};

/// What the walk collects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WalkMode {
    /// Text and elements.
    All,
    /// Elements only (`find`, and reads with `filter: "interactive"`).
    Elements,
    /// Text only.
    Text,
}

impl WalkMode {
    /// The walk of a read under `filter`: `"interactive"` carries the operable elements only,
    /// no page text (a re-read of the controls costs a fraction of a full read).
    fn of(filter: ReadFilter) -> WalkMode {
        match filter {
            ReadFilter::All => WalkMode::All,
            ReadFilter::Interactive => WalkMode::Elements,
        }
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct WalkResult {
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    doc: String,
    #[serde(default)]
    next: u64,
    #[serde(default)]
    text: String,
    #[serde(default)]
    elements: Vec<WalkElement>,
    #[serde(default)]
    scopes: Vec<WalkScope>,
    #[serde(default)]
    omitted: Vec<String>,
    /// Time the walk took in the page, in milliseconds.
    #[serde(default)]
    pub ms: f64,
}

#[derive(Debug, Deserialize)]
struct WalkElement {
    #[serde(rename = "ref")]
    reference: String,
    role: String,
    label: String,
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    checked: Option<bool>,
    #[serde(default)]
    options: Option<Vec<WalkOption>>,
    /// A control of zero size the keyboard reaches.
    #[serde(default)]
    offscreen: bool,
}

#[derive(Debug, Deserialize)]
struct WalkOption {
    label: String,
    value: String,
    #[serde(default)]
    selected: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct WalkScope {
    #[serde(rename = "ref")]
    reference: String,
    label: String,
}

/// What the page agent puts in the text where each element stands (a noncharacter no page text
/// keeps: the agent strips it from page text).
const MARK: char = '\u{FDD0}';

/// The text without its marks, and the byte offset in it of each mark, in order. Lines are
/// kept as the agent made them; a line that held only marks is dropped (its marks stand at the
/// start of the next line).
fn split_marks(raw: &str) -> (String, Vec<usize>) {
    let mut text = String::with_capacity(raw.len());
    let mut marks = Vec::new();
    for line in raw.split('\n') {
        let clean: String = line.chars().filter(|&c| c != MARK).collect();
        let trimmed = clean.trim();
        if trimmed.is_empty() {
            let at = text.len() + usize::from(!text.is_empty());
            marks.extend(line.chars().filter(|&c| c == MARK).map(|_| at));
            continue;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        let base = text.len();
        let lead = clean.len() - clean.trim_start().len();
        let mut pos: usize = 0;
        for c in line.chars() {
            if c == MARK {
                marks.push(base + pos.saturating_sub(lead).min(trimmed.len()));
            } else {
                pos += c.len_utf8();
            }
        }
        text.push_str(trimmed);
    }
    (text, marks)
}

/// Adds a code once.
fn omit(omitted: &mut Vec<Omitted>, code: Omitted) {
    if !omitted.contains(&code) {
        omitted.push(code);
    }
}

/// Turns one walked element into a `ReadElement` (re-applying every byte limit on this side), or
/// `None` when the page sent something no read may hold.
fn element(e: WalkElement, omitted: &mut Vec<Omitted>) -> Option<ReadElement> {
    let kind = Kind::from_name(&e.role)?;
    let role = kind.role();
    let reference = Ref::new(e.reference)?;
    let label = truncate_utf8(e.label.trim(), MAX_LABEL_BYTES).to_owned();
    if label.is_empty() {
        return None;
    }
    let mut out = ReadElement::new(reference, label, role)
        .ok()?
        .with_kind(kind)
        .ok()?;
    if e.offscreen {
        out = out.off_screen();
    }
    if let Some(value) = e.value {
        let cut = truncate_utf8(&value, MAX_VALUE_BYTES);
        if cut.len() < value.len() {
            omit(omitted, Omitted::Value);
        }
        out = out.with_value(cut.to_owned()).ok()?;
    }
    if let Some(checked) = e.checked
        && role.has_checked()
    {
        out = out.with_checked(checked).ok()?;
    }
    if let Some(options) = e.options
        && role.has_options()
    {
        let options: Vec<ReadOption> = options
            .into_iter()
            .filter_map(|o| {
                let label = truncate_utf8(o.label.trim(), MAX_LABEL_BYTES).to_owned();
                let value = truncate_utf8(&o.value, MAX_VALUE_BYTES).to_owned();
                let option = ReadOption::new(label, value).ok()?;
                Some(match o.selected {
                    Some(s) if role.has_selected_options() => option.selected(s),
                    _ => option,
                })
            })
            .collect();
        out = out.with_options(options).ok()?;
    }
    Some(out)
}

impl CdpBrowser {
    fn walk_args(
        &self,
        mode: WalkMode,
        filter: ReadFilter,
        limits: &ReadLimits,
        depth: u8,
        scopes: bool,
    ) -> Value {
        json!({
            "mode": match mode {
                WalkMode::All => "all",
                WalkMode::Elements => "interactive",
                WalkMode::Text => "text",
            },
            "enabledOnly": filter == ReadFilter::Interactive,
            "depth": depth,
            "scopes": scopes,
            "values": self.config.values == ValuePolicy::NonPrivate,
            "token": self.shared.listener_token,
            "limits": {
                "textBytes": limits.text_bytes,
                "elements": limits.elements,
                "reportBytes": limits.report_bytes,
                "nodes": limits.nodes,
                "ms": limits.work.as_millis() as u64,
                "options": limits.options,
                "scopes": limits.scopes,
            },
        })
    }

    /// Runs one walk in the tab and binds every ref it issued to (tab, document, generation).
    pub(crate) async fn walk(
        &mut self,
        page: &Page,
        mut args: Value,
        root: Option<&Ref>,
        cancel: &CancellationToken,
    ) -> Result<WalkResult, DriverError> {
        let generation = self.generation(page);
        if let Some(root) = root {
            let binding = self.bound(root.as_str(), page, true)?;
            args["root"] = json!(root.as_str());
            args["rootDoc"] = json!(binding.doc);
        }
        args["next"] = json!(self.next_id.load(std::sync::atomic::Ordering::Relaxed));
        let timeout = self.config.read.work + self.config.call_timeout;
        let result: WalkResult = match self.agent(page, "read", args, timeout, cancel).await {
            Ok(result) => result,
            Err(AgentError::ContextGone) => {
                return Err(DriverError::refused(
                    "The page navigated during the read; read it again.",
                ));
            }
            Err(e) => return Err(self.agent_error(e)),
        };
        if let Some(code) = &result.error {
            let reference = root.map_or("", Ref::as_str);
            let stale = Stale::from_agent(code).unwrap_or(Stale::Unknown);
            return Err(DriverError::refused(stale.text(reference)));
        }
        tracing::debug!(
            ms = result.ms,
            n_elements = result.elements.len(),
            "page walk"
        );
        self.last_walk = std::time::Duration::from_secs_f64(result.ms.max(0.0) / 1000.0);
        self.next_id
            .fetch_max(result.next, std::sync::atomic::Ordering::Relaxed);
        for (reference, scope) in result
            .elements
            .iter()
            .map(|e| (&e.reference, false))
            .chain(result.scopes.iter().map(|s| (&s.reference, true)))
        {
            self.refs.bind(
                reference.clone(),
                RefBinding {
                    tab: page.id.clone(),
                    doc: result.doc.clone(),
                    generation,
                    scope,
                },
            );
        }
        Ok(result)
    }

    /// Builds the read from a walk, re-checking every limit.
    fn to_read(
        &self,
        result: WalkResult,
        with_elements: bool,
    ) -> Result<(BrowserRead, Vec<WalkScope>), DriverError> {
        let mut omitted: Vec<Omitted> = result
            .omitted
            .iter()
            .filter_map(|c| Omitted::from_code(c))
            .collect();
        omitted.dedup();
        let (mut text, marks) = split_marks(&result.text);
        if text.len() > self.config.read.text_bytes {
            text = truncate_utf8(&text, self.config.read.text_bytes).to_owned();
            omit(&mut omitted, Omitted::TextLimit);
        }
        // Elements the text stopped before (a capped text) stand at its end.
        let end = text.len();
        let placed = !marks.is_empty();
        let elements = if with_elements {
            result
                .elements
                .into_iter()
                .enumerate()
                .filter_map(|(i, e)| {
                    let e = element(e, &mut omitted)?;
                    Some(if placed {
                        e.at_text_offset(marks.get(i).copied().unwrap_or(end))
                    } else {
                        e
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut unique = Vec::new();
        for o in omitted {
            if !unique.contains(&o) {
                unique.push(o);
            }
        }
        let read = BrowserRead::new(text, elements, unique)
            .map_err(|e| DriverError::Failed(format!("invalid read: {e}")))?;
        Ok((read, result.scopes))
    }

    /// `read_page`.
    pub(crate) async fn read_page_impl(
        &mut self,
        filter: ReadFilter,
        tab: Option<&hands_core::browser::TabId>,
        cancel: &CancellationToken,
    ) -> Result<BrowserRead, DriverError> {
        let page = self.page_ready(tab).await?;
        let limits = self.config.read;
        let args = self.walk_args(WalkMode::of(filter), filter, &limits, 0, false);
        let result = self.walk(&page, args, None, cancel).await?;
        Ok(self.to_read(result, true)?.0)
    }

    /// `get_page_text`: the same walk, text only.
    pub(crate) async fn page_text_impl(
        &mut self,
        tab: Option<&hands_core::browser::TabId>,
        cancel: &CancellationToken,
    ) -> Result<BrowserRead, DriverError> {
        let page = self.page_ready(tab).await?;
        let limits = self.config.read;
        let args = self.walk_args(WalkMode::Text, ReadFilter::All, &limits, 0, false);
        let result = self.walk(&page, args, None, cancel).await?;
        Ok(self.to_read(result, false)?.0)
    }

    /// `find`: every element of the page, ranked by how well its label and role match the query;
    /// the best `find_limit`.
    pub(crate) async fn find_impl(
        &mut self,
        query: &str,
        tab: Option<&hands_core::browser::TabId>,
        cancel: &CancellationToken,
    ) -> Result<BrowserRead, DriverError> {
        let page = self.page_ready(tab).await?;
        // Every element is a candidate: the report caps apply to the answer, not the search.
        let limits = ReadLimits {
            elements: self.config.read.nodes,
            report_bytes: usize::MAX >> 8,
            ..self.config.read
        };
        let args = self.walk_args(WalkMode::Elements, ReadFilter::All, &limits, 0, false);
        let result = self.walk(&page, args, None, cancel).await?;
        let (read, _) = self.to_read(result, true)?;
        let (_, elements, mut omitted) = read.into_parts();
        omitted.retain(|o| !matches!(o, Omitted::ReportLimit | Omitted::TargetLimit));
        let ranked = rank(query, elements);
        let n_matches = ranked.len();
        let best: Vec<ReadElement> = ranked.into_iter().take(self.config.find_limit).collect();
        if n_matches > best.len() {
            omit(&mut omitted, Omitted::TargetLimit);
        }
        BrowserRead::new(String::new(), best, omitted)
            .map_err(|e| DriverError::Failed(format!("invalid read: {e}")))
    }

    /// `read_page_scoped`.
    pub(crate) async fn scoped_impl(
        &mut self,
        root: Option<&Ref>,
        depth: u8,
        filter: ReadFilter,
        tab: Option<&hands_core::browser::TabId>,
        cancel: &CancellationToken,
    ) -> Result<BrowserScopedRead, DriverError> {
        let page = self.page_ready(tab).await?;
        let limits = self.config.read;
        let args = self.walk_args(WalkMode::of(filter), filter, &limits, depth.max(1), true);
        let result = self.walk(&page, args, root, cancel).await?;
        let (read, scopes) = self.to_read(result, true)?;
        let scopes = scopes
            .into_iter()
            .filter_map(|s| {
                let label = truncate_utf8(s.label.trim(), MAX_LABEL_BYTES).to_owned();
                Scope::new(Ref::new(s.reference)?, label).ok()
            })
            .collect();
        BrowserScopedRead::new(read, scopes)
            .map_err(|e| DriverError::Failed(format!("invalid scoped read: {e}")))
    }
}

/// Words in a query that name a role rather than a label.
fn role_words(word: &str) -> Option<Role> {
    Some(match word {
        "button" | "buttons" | "link" | "links" | "btn" | "tab" | "menuitem" => Role::Button,
        "field" | "input" | "textbox" | "textarea" | "box" | "text" | "searchbox" => Role::Textbox,
        "dropdown" | "select" | "combobox" | "combo" | "menu" | "picker" => Role::Combobox,
        "checkbox" | "check" | "toggle" | "switch" => Role::Checkbox,
        "radio" => Role::Radio,
        "slider" | "range" => Role::Slider,
        "listbox" | "list" => Role::Listbox,
        _ => return None,
    })
}

/// The match score of one element for a query; 0 is no match.
pub fn score(query: &str, label: &str, role: Role) -> u32 {
    let query = query.to_lowercase();
    let label = label.to_lowercase();
    let words: Vec<&str> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let roles: Vec<Role> = words.iter().filter_map(|w| role_words(w)).collect();
    let content: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| role_words(w).is_none())
        .collect();
    let role_bonus = if roles.contains(&role) { 500 } else { 0 };
    let query_trim = query.trim();
    let mut base = if !query_trim.is_empty() && label == query_trim {
        1000
    } else if !query_trim.is_empty() && label.contains(query_trim) {
        600
    } else {
        0
    };
    if base == 0 && !content.is_empty() {
        let label_words: Vec<&str> = label
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let joined = content.join(" ");
        if label == joined {
            base = 900;
        } else if label.contains(&joined) {
            base = 500;
        } else {
            let n_exact = content.iter().filter(|w| label_words.contains(w)).count();
            let n_prefix = content
                .iter()
                .filter(|w| {
                    !label_words.contains(w) && label_words.iter().any(|l| l.starts_with(*w))
                })
                .count();
            let n = content.len() as u32;
            base = (300 * n_exact as u32 + 150 * n_prefix as u32) / n;
        }
    }
    if base == 0 && content.is_empty() && role_bonus > 0 {
        // A query of role words only ("checkbox") lists every element of that role.
        return 50;
    }
    if base == 0 {
        return 0;
    }
    // Shorter labels are closer matches; the bonus never outweighs a better kind of match.
    let brevity = 40u32.saturating_sub((label.len() as u32) / 8);
    base + role_bonus + brevity
}

/// Elements that match, best first (ties keep page order).
pub fn rank(query: &str, elements: Vec<ReadElement>) -> Vec<ReadElement> {
    let mut scored: Vec<(u32, usize, ReadElement)> = elements
        .into_iter()
        .enumerate()
        .map(|(i, e)| (score(query, e.label(), e.role()), i, e))
        .filter(|(s, _, _)| *s > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, _, e)| e).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(i: usize, label: &str, role: Role) -> ReadElement {
        ReadElement::new(Ref::new(format!("e{i}")).unwrap(), label.into(), role).unwrap()
    }

    fn check(query: &str, elements: &[(&str, Role)], expect: &[&str]) {
        let elements = elements
            .iter()
            .enumerate()
            .map(|(i, (l, r))| el(i, l, *r))
            .collect();
        let ranked: Vec<String> = rank(query, elements)
            .iter()
            .map(|e| e.label().to_owned())
            .collect();
        assert_eq!(ranked, expect, "{query}");
    }

    #[test]
    fn find_ranks_by_label_then_role() {
        let page = [
            ("Search", Role::Button),
            ("Search the site", Role::Textbox),
            ("Sign in", Role::Button),
            ("Remember me", Role::Checkbox),
            ("Country", Role::Combobox),
            ("Advanced search options", Role::Button),
        ];
        check(
            "search",
            &page,
            &["Search", "Search the site", "Advanced search options"],
        );
        check(
            "search box",
            &page,
            &["Search the site", "Search", "Advanced search options"],
        );
        check("sign in button", &page, &["Sign in"]);
        check("remember", &page, &["Remember me"]);
        check("checkbox", &page, &["Remember me"]);
        check("country dropdown", &page, &["Country"]);
        check("nothing like it", &page, &[]);
        check("SIGN IN", &page, &["Sign in"]);
        check("adv", &page, &["Advanced search options"]);
    }

    #[test]
    fn marks_become_offsets_in_the_clean_text() {
        let m = MARK;
        let raw = format!("Sign up\n{m}\n Full name {m} Used\n{m}{m}Ok{m} previous");
        let (text, marks) = split_marks(&raw);
        assert_eq!(text, "Sign up\nFull name  Used\nOk previous");
        let at = |i: usize| &text[marks[i]..];
        assert_eq!(marks.len(), 5);
        assert!(at(0).starts_with("Full name"));
        assert!(at(1).starts_with(" Used"));
        assert!(at(2).starts_with("Ok previous"));
        assert!(at(3).starts_with("Ok previous"));
        assert!(at(4).starts_with(" previous"));
        assert_eq!(split_marks("plain"), ("plain".to_owned(), vec![]));
        let (text, marks) = split_marks(&format!("a\n{m}"));
        assert_eq!((text.as_str(), marks), ("a", vec![2]));
    }

    #[test]
    fn elements_keep_limits_and_roles_rules() {
        let mut omitted = Vec::new();
        let e = element(
            WalkElement {
                reference: "e1".into(),
                role: "textbox".into(),
                label: "é".repeat(200),
                value: Some("v".repeat(600)),
                checked: Some(true),
                options: None,
                offscreen: false,
            },
            &mut omitted,
        )
        .unwrap();
        assert_eq!(e.label().len(), 256);
        assert_eq!(e.value().unwrap().len(), 512);
        assert_eq!(e.checked(), None);
        assert_eq!(omitted, vec![Omitted::Value]);
        let link = element(
            WalkElement {
                reference: "e3".into(),
                role: "link".into(),
                label: "More".into(),
                value: None,
                checked: None,
                options: None,
                offscreen: false,
            },
            &mut omitted,
        )
        .unwrap();
        assert_eq!((link.role(), link.kind()), (Role::Button, Kind::Link));
        let none = element(
            WalkElement {
                reference: "e2".into(),
                role: "hyperlink".into(),
                label: "x".into(),
                value: None,
                checked: None,
                options: None,
                offscreen: false,
            },
            &mut omitted,
        );
        assert!(none.is_none());
    }
}
