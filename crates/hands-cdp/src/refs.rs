//! Refs that cannot go stale silently: each is bound to its tab, document and generation on this side, and to its node (a `WeakRef` with the role, label and fingerprint it had) inside the page, which follows a re-render only to the one element no reader could tell from it (`refs.js`).
//!
//! Spec: openai-browser-desktop-drivers, "Leer dentro de una sección": "Invalida las referencias de
//! ámbito y de elemento en conjunto cuando cambien su pestaña, documento, generación o
//! visibilidad"; "Devolver lecturas estructuradas": "Después de la aprobación y antes de actuar,
//! vuelve a comprobar la referencia en la página actual."

use std::collections::{HashMap, VecDeque};

use serde::Deserialize;

use hands_core::browser::{TabId, truncate_utf8};

/// What a ref is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefBinding {
    /// The tab it was read in.
    pub tab: TabId,
    /// The document (the page agent's id for it, unique in the session).
    pub doc: String,
    /// The document's generation (same-document navigations) when it was read.
    pub generation: u64,
    /// Whether it names a scope (a root for `read_page_scoped`) rather than an element.
    pub scope: bool,
}

/// Every ref issued in the session. Refs are never reused (the counter only grows, across tabs
/// and documents), so an old ref can only be unknown or stale, never someone else's.
#[derive(Debug)]
pub struct RefTable {
    map: HashMap<String, RefBinding>,
    order: VecDeque<String>,
    capacity: usize,
}

impl RefTable {
    /// A table keeping the last `capacity` refs (older ones become unknown).
    pub fn new(capacity: usize) -> RefTable {
        RefTable {
            map: HashMap::new(),
            order: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// Binds (or re-binds, after a fresh read) a ref.
    pub fn bind(&mut self, reference: String, binding: RefBinding) {
        if self.map.insert(reference.clone(), binding).is_none() {
            self.order.push_back(reference);
            while self.order.len() > self.capacity {
                if let Some(old) = self.order.pop_front() {
                    self.map.remove(&old);
                }
            }
        }
    }

    /// The binding of a ref.
    pub fn get(&self, reference: &str) -> Option<&RefBinding> {
        self.map.get(reference)
    }
}

/// How a ref check failed; each becomes a model-safe text naming the ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stale {
    /// Never issued, or forgotten.
    Unknown,
    /// Issued in another tab.
    OtherTab,
    /// Its tab was closed.
    TabClosed,
    /// A scope ref given to a member that acts on elements.
    Scope,
    /// An element ref given where a scope ref is needed.
    NotScope,
    /// The tab navigated to another document (or changed its URL in place).
    Navigated,
    /// The node was removed or replaced.
    Removed,
    /// The node's role or label changed.
    Changed,
    /// The node is no longer visible.
    Hidden,
    /// Another element covers it.
    Covered,
    /// It cannot be brought into the viewport.
    Offscreen,
    /// It does not take focus.
    Unfocusable,
}

impl Stale {
    /// From the page agent's error code.
    pub fn from_agent(code: &str) -> Option<Stale> {
        Some(match code {
            "unknown" => Stale::Unknown,
            "navigated" => Stale::Navigated,
            "removed" => Stale::Removed,
            "changed" => Stale::Changed,
            "hidden" => Stale::Hidden,
            "covered" => Stale::Covered,
            "offscreen" => Stale::Offscreen,
            "unfocusable" => Stale::Unfocusable,
            "not_scope" => Stale::NotScope,
            _ => return None,
        })
    }

    /// The text the model sees.
    pub fn text(self, reference: &str) -> String {
        let r = truncate_utf8(reference, 64);
        match self {
            Stale::Unknown => {
                format!("Unknown ref {r}: use a ref from the latest read of this tab.")
            }
            Stale::OtherTab => {
                format!("Ref {r} belongs to another tab: pass that tab's id or read this tab.")
            }
            Stale::TabClosed => format!("Ref {r} belongs to a tab that was closed."),
            Stale::Scope => {
                format!("Ref {r} is a scope ref: it can only be the root of read_page_scoped.")
            }
            Stale::NotScope => {
                format!("Ref {r} is an element ref, not a scope ref from read_page_scoped.")
            }
            Stale::Navigated => format!(
                "Ref {r} is stale: the page navigated since it was read. Read the page again."
            ),
            Stale::Removed => format!(
                "Ref {r} is stale: its element was removed or replaced. Read the page again."
            ),
            Stale::Changed => format!(
                "Ref {r} is stale: its element's role or label changed. Read the page again."
            ),
            Stale::Hidden => format!("The element of ref {r} is not visible now."),
            Stale::Covered => format!(
                "The element of ref {r} is covered by another element; scroll or close what covers it first."
            ),
            Stale::Offscreen => format!("The element of ref {r} cannot be scrolled into view."),
            Stale::Unfocusable => format!("The element of ref {r} does not take keyboard focus."),
        }
    }
}

/// Why the page agent followed no successor of a ref's replaced (or re-purposed) element
/// (`refs.js`, `successor`): sent beside the `removed` or `changed` code.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Replaced {
    /// `gone`, `moved`, `many`, `twins`, `frame`, `unkeyed`, `row` or `heading`.
    why: String,
    /// How many elements `moved` or `many` counted.
    #[serde(default)]
    n: u64,
    /// The element's role and label when read.
    #[serde(default)]
    role: String,
    #[serde(default)]
    label: String,
}

impl Replaced {
    /// The text the model sees, saying what changed; `None` when the reason adds nothing to
    /// [`Stale::Removed`]'s.
    pub(crate) fn text(&self, reference: &str) -> Option<String> {
        let r = truncate_utf8(reference, 64);
        let role = truncate_utf8(&self.role, 24);
        let label = truncate_utf8(&self.label, 60);
        let what = match self.why.as_str() {
            "gone" => format!("was replaced and no {role} named \"{label}\" remains"),
            "moved" => format!(
                "was replaced and none of the {} elements with role {role} and name \"{label}\" is in its row",
                self.n
            ),
            "many" => format!(
                "was replaced and {} elements now match it ({role} \"{label}\")",
                self.n
            ),
            "twins" => format!(
                "was replaced, and an identical {role} \"{label}\" stood beside it when read"
            ),
            "frame" => "was replaced with the frame or shadow root holding it".to_owned(),
            "row" => format!("now shows another row's content ({role} \"{label}\")"),
            "heading" => format!("now sits under another heading ({role} \"{label}\")"),
            _ => return None,
        };
        Some(format!(
            "Ref {r} is stale: its element {what}. Read the page again."
        ))
    }
}

/// The refusal for a page agent's error `code` about `reference` (`fallback` when the code is
/// not a ref check's), saying what replaced the element when the agent said.
pub(crate) fn refusal(
    code: &str,
    replaced: Option<&Replaced>,
    reference: &str,
    fallback: Stale,
) -> String {
    replaced
        .and_then(|r| r.text(reference))
        .unwrap_or_else(|| Stale::from_agent(code).unwrap_or(fallback).text(reference))
}

/// Told in an action's answer when its ref followed a re-render to its element's successor.
pub(crate) fn rebound_note(reference: &str) -> String {
    format!(
        "Ref {} now names its re-rendered element.",
        truncate_utf8(reference, 64)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding(tab: &str) -> RefBinding {
        RefBinding {
            tab: TabId::new(tab).unwrap(),
            doc: "d1".into(),
            generation: 0,
            scope: false,
        }
    }

    #[test]
    fn table_forgets_oldest_beyond_capacity() {
        let mut table = RefTable::new(2);
        table.bind("e1".into(), binding("t1"));
        table.bind("e2".into(), binding("t1"));
        table.bind("e2".into(), binding("t2"));
        assert_eq!(table.get("e2").unwrap().tab.as_str(), "t2");
        table.bind("e3".into(), binding("t1"));
        assert!(table.get("e1").is_none());
        assert!(table.get("e3").is_some());
    }

    #[test]
    fn stale_texts_name_the_ref_and_stay_short() {
        for code in [
            "unknown",
            "navigated",
            "removed",
            "changed",
            "hidden",
            "covered",
            "offscreen",
            "unfocusable",
            "not_scope",
        ] {
            let stale = Stale::from_agent(code).unwrap();
            let text = stale.text("e42");
            assert!(text.contains("e42"), "{text}");
        }
        assert!(Stale::from_agent("weird").is_none());
        let long = "x".repeat(300);
        assert!(Stale::Unknown.text(&long).len() < 140);
        assert!(Stale::Navigated.text("e1").contains("navigated"));
    }

    fn replaced(why: &str, n: u64) -> Replaced {
        Replaced {
            why: why.into(),
            n,
            role: "button".into(),
            label: "Delete".into(),
        }
    }

    #[test]
    fn a_refusal_says_what_replaced_the_element() {
        let check = |why: &str, n: u64, want: &str| {
            let text = refusal("removed", Some(&replaced(why, n)), "e7", Stale::Removed);
            assert!(text.starts_with("Ref e7 is stale: its element "), "{text}");
            assert!(text.contains(want), "{why}: {text}");
            assert!(text.ends_with("Read the page again."), "{text}");
        };
        check("gone", 0, "no button named \"Delete\" remains");
        check(
            "moved",
            3,
            "none of the 3 elements with role button and name \"Delete\"",
        );
        check("many", 2, "2 elements now match it (button \"Delete\")");
        check("twins", 0, "an identical button \"Delete\"");
        check("frame", 0, "frame or shadow root");
        check("row", 0, "another row's content");
        check("heading", 0, "under another heading");
        // A reason it does not know, or none, is today's text.
        let plain = refusal(
            "removed",
            Some(&replaced("unkeyed", 0)),
            "e7",
            Stale::Removed,
        );
        assert_eq!(plain, Stale::Removed.text("e7"));
        assert_eq!(
            refusal("hidden", None, "e7", Stale::Removed),
            Stale::Hidden.text("e7")
        );
        assert_eq!(
            refusal("weird", None, "e7", Stale::Unknown),
            Stale::Unknown.text("e7")
        );
        assert_eq!(
            rebound_note("e7"),
            "Ref e7 now names its re-rendered element."
        );
    }
}
