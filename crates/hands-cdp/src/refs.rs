//! Refs that cannot go stale silently: each is bound to its tab, document and generation on this side, and to its node (a `WeakRef` with the role and label it had) inside the page.
//!
//! Spec: openai-browser-desktop-drivers, "Leer dentro de una sección": "Invalida las referencias de
//! ámbito y de elemento en conjunto cuando cambien su pestaña, documento, generación o
//! visibilidad"; "Devolver lecturas estructuradas": "Después de la aprobación y antes de actuar,
//! vuelve a comprobar la referencia en la página actual."

use std::collections::{HashMap, VecDeque};

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
}
