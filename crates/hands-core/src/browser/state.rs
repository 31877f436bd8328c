//! Tab ids and the browser state a driver reports: every tab with its title, URL and whether it is
//! the active one.
//!
//! A driver reports the raw truth (full URLs, whole titles); the surface reduces it to what the
//! model may see (origins only, byte limits) before anything leaves.
//!
//! Spec: openai-browser-desktop-drivers, "Contrato del controlador de navegador": "state()
//! devuelve tabs, un arreglo de objetos con id, title, url y active".

use std::fmt;

use serde::Serialize;

/// Most bytes of a tab id.
pub const MAX_TAB_ID_BYTES: usize = 256;

/// A tab's stable id, issued by the driver: non-empty, at most [`MAX_TAB_ID_BYTES`] of UTF-8.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct TabId(String);

impl TabId {
    /// A tab id; `None` when empty or too long.
    pub fn new(id: impl Into<String>) -> Option<TabId> {
        let id = id.into();
        (!id.is_empty() && id.len() <= MAX_TAB_ID_BYTES).then_some(TabId(id))
    }

    /// The id text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TabId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One tab as the driver sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabInfo {
    /// Stable id, never reused for another tab in the session.
    pub id: TabId,
    /// The document title, unfiltered.
    pub title: String,
    /// The full URL, unfiltered.
    pub url: String,
    /// Whether this is the tab that is really active.
    pub active: bool,
}

/// Why a reported state is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// Two tabs share an id.
    #[error("two tabs share the id {0}")]
    DuplicateId(TabId),
    /// Tabs exist but none, or more than one, is active.
    #[error("a browser state with tabs must mark exactly one active tab, found {n_active}")]
    ActiveCount {
        /// How many were marked active.
        n_active: usize,
    },
}

/// Every open tab, exactly one of them active when there is any.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BrowserState {
    tabs: Vec<TabInfo>,
}

impl BrowserState {
    /// A state; refused when ids repeat or the active tab is not exactly one.
    pub fn new(tabs: Vec<TabInfo>) -> Result<BrowserState, StateError> {
        for (i, tab) in tabs.iter().enumerate() {
            if tabs[..i].iter().any(|t| t.id == tab.id) {
                return Err(StateError::DuplicateId(tab.id.clone()));
            }
        }
        let n_active = tabs.iter().filter(|t| t.active).count();
        if !tabs.is_empty() && n_active != 1 {
            return Err(StateError::ActiveCount { n_active });
        }
        Ok(BrowserState { tabs })
    }

    /// The tabs, in the driver's order.
    pub fn tabs(&self) -> &[TabInfo] {
        &self.tabs
    }

    /// The active tab, if any tab is open.
    pub fn active(&self) -> Option<&TabInfo> {
        self.tabs.iter().find(|t| t.active)
    }

    /// The tab with `id`.
    pub fn tab(&self, id: &TabId) -> Option<&TabInfo> {
        self.tabs.iter().find(|t| &t.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tab(id: &str, active: bool) -> TabInfo {
        TabInfo {
            id: TabId::new(id).unwrap(),
            title: String::new(),
            url: "about:blank".into(),
            active,
        }
    }

    #[test]
    fn exactly_one_active_tab() {
        assert!(BrowserState::new(vec![]).is_ok());
        assert!(BrowserState::new(vec![tab("t1", true), tab("t2", false)]).is_ok());
        assert_eq!(
            BrowserState::new(vec![tab("t1", false)]),
            Err(StateError::ActiveCount { n_active: 0 })
        );
        assert_eq!(
            BrowserState::new(vec![tab("t1", true), tab("t2", true)]),
            Err(StateError::ActiveCount { n_active: 2 })
        );
        assert!(matches!(
            BrowserState::new(vec![tab("t1", true), tab("t1", false)]),
            Err(StateError::DuplicateId(_))
        ));
    }

    #[test]
    fn tab_ids_are_bounded() {
        assert!(TabId::new("").is_none());
        assert!(TabId::new("x".repeat(257)).is_none());
        assert!(TabId::new("x".repeat(256)).is_some());
    }
}
