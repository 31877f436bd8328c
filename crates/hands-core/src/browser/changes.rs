//! What changed between two reads of one document: elements added, removed and changed (name,
//! value, checked, options), and lines of page text added or removed — the answer to a re-read
//! that costs a fraction of a whole read.
//!
//! Elements are matched by ref: a driver keeps an element's ref from read to read of the same
//! document (hands-cdp does, and passes a replaced element's ref to its one certain successor),
//! so a ref in both reads is the same element. Two reads of different documents share no ref;
//! [`ReadChanges::same_document`] says so, and a caller then sends the whole read.
//!
//! ```
//! use hands_core::browser::changes::ReadChanges;
//! use hands_core::browser::read::{BrowserRead, ReadElement, Ref, Role};
//! let el = |r: &str, label: &str, checked: bool| {
//!     ReadElement::new(Ref::new(r).unwrap(), label.into(), Role::Checkbox)
//!         .unwrap()
//!         .with_checked(checked)
//!         .unwrap()
//! };
//! let before = BrowserRead::new("3 left".into(), vec![el("e1", "Done: milk", false)], vec![]).unwrap();
//! let after = BrowserRead::new("2 left".into(), vec![el("e1", "Done: milk", true)], vec![]).unwrap();
//! let changes = ReadChanges::between(&before, &after);
//! assert_eq!(
//!     changes.to_compact(),
//!     "Changes:\n*[e1] [x]\n- 3 left\n+ 2 left"
//! );
//! // Only elements changed: no header, a line each.
//! let fewer = BrowserRead::new("2 left".into(), vec![], vec![]).unwrap();
//! assert_eq!(ReadChanges::between(&after, &fewer).to_compact(), "-[e1] Done: milk");
//! ```

use std::collections::{HashMap, HashSet};

use crate::browser::read::{
    BrowserRead, Omitted, ReadElement, Ref, changed_line, compact_line, text_item,
};

/// The first line of a read that sends only what changed (since the tab's last read with the
/// same filter, as the tool's description says) when lines of page text changed: a whole read's
/// text may start with `+` or `-` too. Element lines alone need none (a whole read's element
/// line starts with its `[ref]`).
pub const CHANGES_HEADER: &str = "Changes:";
/// The whole answer of a re-read when nothing changed.
pub const NO_CHANGES: &str = "No changes since the last read.";
/// Before an element that is new, as in a unified diff (`+[e9] button Delete`).
pub const ADDED_MARK: &str = "+";
/// Before an element that is gone: its ref and name (`-[e3] Delete milk`).
pub const REMOVED_MARK: &str = "-";
/// Before an element whose name, value, state or options changed: its ref and what changed
/// ([`changed_line`]: `*[e4] [x]`).
pub const CHANGED_MARK: &str = "*";
/// Before a line of page text that is new.
pub const TEXT_ADDED_MARK: &str = "+ ";
/// Before a line of page text that is gone.
pub const TEXT_REMOVED_MARK: &str = "- ";

/// Most cells of the table the text diff fills; past it, every line between the common start
/// and the common end counts as changed.
const MAX_DIFF_CELLS: usize = 1 << 20;

/// What changed from one read of a document to the next.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReadChanges {
    added: Vec<ReadElement>,
    removed: Vec<ReadElement>,
    /// As it was, and as it is now.
    changed: Vec<(ReadElement, ReadElement)>,
    text_removed: Vec<String>,
    text_added: Vec<String>,
    omitted: Option<Vec<Omitted>>,
}

/// Whether two reads show one element the same way (the place in the text aside: an element
/// that moved is not a change).
fn same_element(a: &ReadElement, b: &ReadElement) -> bool {
    compact_line(a) == compact_line(b)
}

impl ReadChanges {
    /// The changes from `before` to `after` (reads of one document).
    pub fn between(before: &BrowserRead, after: &BrowserRead) -> ReadChanges {
        let old: HashMap<&Ref, &ReadElement> = before
            .elements()
            .iter()
            .map(|e| (e.reference(), e))
            .collect();
        let new: HashSet<&Ref> = after.elements().iter().map(|e| e.reference()).collect();
        let mut changes = ReadChanges::default();
        for e in after.elements() {
            match old.get(e.reference()) {
                None => changes.added.push(e.clone()),
                Some(was) if !same_element(was, e) => {
                    changes.changed.push(((*was).clone(), e.clone()));
                }
                Some(_) => {}
            }
        }
        changes.removed = before
            .elements()
            .iter()
            .filter(|e| !new.contains(e.reference()))
            .cloned()
            .collect();
        let (removed, added) = line_diff(before.text(), after.text());
        changes.text_removed = removed;
        changes.text_added = added;
        if before.omitted() != after.omitted() {
            changes.omitted = Some(after.omitted().to_vec());
        }
        changes
    }

    /// Whether `before` and `after` can be reads of one document: some element is in both, or
    /// neither has any element (a page of text only).
    pub fn same_document(before: &BrowserRead, after: &BrowserRead) -> bool {
        if before.elements().is_empty() && after.elements().is_empty() {
            return true;
        }
        let old: HashSet<&Ref> = before.elements().iter().map(|e| e.reference()).collect();
        after.elements().iter().any(|e| old.contains(e.reference()))
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.text_removed.is_empty()
            && self.text_added.is_empty()
            && self.omitted.is_none()
    }

    /// Elements that are new, in page order.
    pub fn added(&self) -> &[ReadElement] {
        &self.added
    }

    /// Elements that are gone, as the earlier read showed them.
    pub fn removed(&self) -> &[ReadElement] {
        &self.removed
    }

    /// Elements whose name, value, state or options changed: (as they were, as they are now).
    pub fn changed(&self) -> &[(ReadElement, ReadElement)] {
        &self.changed
    }

    /// Lines of page text that are gone, and lines that are new.
    pub fn text(&self) -> (&[String], &[String]) {
        (&self.text_removed, &self.text_added)
    }

    /// The lines a model reads, one per change: `*` and the element's ref with only what
    /// changed ([`changed_line`]: `*[e1] = ""`, `*[e4] [x]`; the whole line when its kind
    /// changed), `-` and a gone element's ref and name (`-[e3] Delete milk`), `+` and a new
    /// element (in the compact form of [`compact_line`]), `- ` / `+ ` and a line of text — then
    /// `(omitted: …)` when what the read left out changed. [`CHANGES_HEADER`] comes first when a
    /// line of text changed, or when no element did. Just [`NO_CHANGES`] when nothing did.
    pub fn to_lines(&self) -> Vec<String> {
        if self.is_empty() {
            return vec![NO_CHANGES.to_owned()];
        }
        let mut lines = Vec::new();
        let elements = self.added.len() + self.removed.len() + self.changed.len();
        if elements == 0 || !self.text_removed.is_empty() || !self.text_added.is_empty() {
            lines.push(CHANGES_HEADER.to_owned());
        }
        let marked = |mark: &str, e: &ReadElement| format!("{mark}{}", compact_line(e));
        lines.extend(
            self.changed
                .iter()
                .map(|(was, now)| match changed_line(was, now) {
                    Some(line) => format!("{CHANGED_MARK}{line}"),
                    None => marked(CHANGED_MARK, now),
                }),
        );
        lines.extend(self.removed.iter().map(|e| {
            let mut line = format!("{REMOVED_MARK}[{}] ", e.reference());
            text_item(&mut line, e.label(), false);
            line
        }));
        lines.extend(self.added.iter().map(|e| marked(ADDED_MARK, e)));
        lines.extend(
            self.text_removed
                .iter()
                .map(|l| format!("{TEXT_REMOVED_MARK}{l}")),
        );
        lines.extend(
            self.text_added
                .iter()
                .map(|l| format!("{TEXT_ADDED_MARK}{l}")),
        );
        if let Some(omitted) = &self.omitted {
            let codes: Vec<&str> = omitted.iter().map(|o| o.code()).collect();
            lines.push(if codes.is_empty() {
                "(omitted: nothing now)".to_owned()
            } else {
                format!("(omitted: {})", codes.join(", "))
            });
        }
        lines
    }

    /// [`ReadChanges::to_lines`] joined by newlines.
    pub fn to_compact(&self) -> String {
        self.to_lines().join("\n")
    }
}

/// The lines of `before` that are not in `after` and those of `after` not in `before`, in
/// order, by a longest common subsequence of the lines between their common start and end.
fn line_diff(before: &str, after: &str) -> (Vec<String>, Vec<String>) {
    let a: Vec<&str> = before.lines().filter(|l| !l.trim().is_empty()).collect();
    let b: Vec<&str> = after.lines().filter(|l| !l.trim().is_empty()).collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let owned = |v: &[&str]| v.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
    if a.is_empty() || b.is_empty() || a.len().saturating_mul(b.len()) > MAX_DIFF_CELLS {
        return (owned(a), owned(b));
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let width = b.len() + 1;
    let mut lcs = vec![0u32; (a.len() + 1) * width];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i * width + j] = if a[i] == b[j] {
                lcs[(i + 1) * width + j + 1] + 1
            } else {
                lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
            };
        }
    }
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] == b[j] {
            i += 1;
            j += 1;
        } else if lcs[(i + 1) * width + j] >= lcs[i * width + j + 1] {
            removed.push(a[i].to_owned());
            i += 1;
        } else {
            added.push(b[j].to_owned());
            j += 1;
        }
    }
    removed.extend(a[i..].iter().map(|l| (*l).to_owned()));
    added.extend(b[j..].iter().map(|l| (*l).to_owned()));
    (removed, added)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::browser::read::Role;

    fn el(r: &str, label: &str, role: Role) -> ReadElement {
        ReadElement::new(Ref::new(r).unwrap(), label.into(), role).unwrap()
    }

    fn read(text: &str, elements: Vec<ReadElement>) -> BrowserRead {
        BrowserRead::new(text.into(), elements, vec![]).unwrap()
    }

    fn check(before: &BrowserRead, after: &BrowserRead, expect: &[&str]) {
        assert_eq!(ReadChanges::between(before, after).to_lines(), expect);
    }

    #[test]
    fn elements_are_added_removed_and_changed_by_ref() {
        let field = |v: &str| {
            el("e1", "New task", Role::Textbox)
                .with_value(v.into())
                .unwrap()
        };
        let before = read(
            "Tasks\n3 left",
            vec![
                field("Write report"),
                el("e2", "Add task", Role::Button),
                el("e3", "Delete Call the bank", Role::Button),
                el("e4", "Done: Buy milk", Role::Checkbox)
                    .with_checked(false)
                    .unwrap(),
            ],
        );
        let after = read(
            "Tasks\n3 left",
            vec![
                field(""),
                el("e2", "Add task", Role::Button),
                el("e4", "Done: Buy milk", Role::Checkbox)
                    .with_checked(true)
                    .unwrap(),
                el("e9", "Delete Write report", Role::Button),
            ],
        );
        check(
            &before,
            &after,
            &[
                "*[e1] = \"\"",
                "*[e4] [x]",
                "-[e3] Delete Call the bank",
                "+[e9] button Delete Write report",
            ],
        );
        check(&after, &after, &[NO_CHANGES]);
        let renamed = read("Tasks\n3 left", vec![el("e2", "Adding…", Role::Button)]);
        let was = read("Tasks\n3 left", vec![el("e2", "Add task", Role::Button)]);
        check(&was, &renamed, &["*[e2] Adding…"]);
    }

    #[test]
    fn a_changed_element_shows_only_what_changed() {
        use crate::browser::read::{Kind, ReadOption};
        let opts = |chosen: &str| {
            ["s", "m"]
                .iter()
                .map(|v| {
                    ReadOption::new(v.to_uppercase(), (*v).into())
                        .unwrap()
                        .selected(*v == chosen)
                })
                .collect::<Vec<_>>()
        };
        let size = |value: &str, options: Vec<ReadOption>| {
            let role = if options.iter().any(|o| o.is_selected().is_some()) {
                Role::Listbox
            } else {
                Role::Combobox
            };
            el("e3", "Size", role)
                .with_value(value.into())
                .unwrap()
                .with_options(options)
                .unwrap()
        };
        let one = |e: ReadElement| read("", vec![e]);
        let plain = |v: &str| size(v, vec![ReadOption::new("S".into(), "s".into()).unwrap()]);
        check(&one(plain("s")), &one(plain("m")), &["*[e3] = m"]);
        check(
            &one(size("s", opts("s"))),
            &one(size("m", opts("m"))),
            &["*[e3] = m {S=s, M=m*}"],
        );
        let box_ = |checked: bool, label: &str| {
            el("e4", label, Role::Checkbox)
                .with_checked(checked)
                .unwrap()
        };
        check(
            &one(box_(false, "Agree")),
            &one(box_(true, "I agree [required]")),
            &["*[e4] [x] \"I agree [required]\""],
        );
        check(
            &one(el("e5", "Skip", Role::Button)),
            &one(el("e5", "Skip", Role::Button).off_screen()),
            &["*[e5] (off-screen)"],
        );
        check(
            &one(el("e5", "Skip", Role::Button).off_screen()),
            &one(el("e5", "Skip", Role::Button)),
            &["*[e5] (on-screen)"],
        );
        // A kind that changed under one ref (a driver keeps a ref only while the kind stays):
        // the whole line.
        let tab = el("e6", "Go", Role::Button).with_kind(Kind::Tab).unwrap();
        check(
            &one(el("e6", "Go", Role::Button)),
            &one(tab),
            &["*[e6] tab Go"],
        );
    }

    #[test]
    fn text_changes_are_the_lines_outside_a_common_subsequence() {
        let a = read("Title\none\ntwo\nthree\nfooter", vec![]);
        let b = read("Title\none\n2\nthree\nfour\nfooter", vec![]);
        check(&a, &b, &[CHANGES_HEADER, "- two", "+ 2", "+ four"]);
        let moved = read("b\na", vec![]);
        check(
            &read("a\nb", vec![]),
            &moved,
            &[CHANGES_HEADER, "- a", "+ a"],
        );
        check(
            &read("", vec![]),
            &read("x", vec![]),
            &[CHANGES_HEADER, "+ x"],
        );
    }

    #[test]
    fn what_was_left_out_is_said_when_it_changes() {
        let cut = BrowserRead::new("a".into(), vec![], vec![Omitted::TextLimit]).unwrap();
        let whole = read("a", vec![]);
        check(&whole, &cut, &[CHANGES_HEADER, "(omitted: text_limit)"]);
        check(&cut, &whole, &[CHANGES_HEADER, "(omitted: nothing now)"]);
    }

    #[test]
    fn reads_of_other_documents_share_no_ref() {
        let a = read("", vec![el("e1", "Go", Role::Button)]);
        let b = read("", vec![el("e7", "Go", Role::Button)]);
        assert!(!ReadChanges::same_document(&a, &b));
        assert!(ReadChanges::same_document(&a, &a));
        assert!(ReadChanges::same_document(
            &read("x", vec![]),
            &read("y", vec![])
        ));
        assert!(!ReadChanges::same_document(&read("x", vec![]), &a));
    }
}
