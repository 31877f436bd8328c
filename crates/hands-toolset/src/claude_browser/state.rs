//! The `browser_state` block every successful browser result carries: the tabs as the model may
//! see them (the filtered [`StateView`]: origins only, titles cut on a character boundary) and
//! what changed during the call.
//!
//! Spec: api-contracts A, "Browser use", "`browser_state` block".

use hands_core::browser::{BrowserState, TabId};
use serde_json::{Value, json};

use crate::browser::state::{StateFormat, StateView, TabView};
use crate::strings::{
    BROWSER_STATE_TYPE, DOWNLOAD_COMPLETED, DOWNLOAD_FAILED, DOWNLOAD_STARTED, TAB_OPENED,
};

/// One entry of `state_changes`.
///
/// Only [`StateChange::TabOpened`] is ever detected: the driver contract reports tabs, not
/// downloads, so the download kinds exist for a driver that reports them later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateChange {
    /// `{"type": "tab_opened", "tab_id"}`: a tab that was not open before the call (`new_tab`,
    /// or a pop-up the page opened).
    TabOpened {
        /// The new tab.
        tab_id: TabId,
    },
    /// `{"type": "download_started", "tab_id"?}`.
    DownloadStarted {
        /// The tab that started it, if known.
        tab_id: Option<TabId>,
    },
    /// `{"type": "download_completed", "tab_id"?}`.
    DownloadCompleted {
        /// The tab that started it, if known.
        tab_id: Option<TabId>,
    },
    /// `{"type": "download_failed", "tab_id"?}`.
    DownloadFailed {
        /// The tab that started it, if known.
        tab_id: Option<TabId>,
    },
}

impl StateChange {
    /// The wire object.
    pub fn to_json(&self) -> Value {
        let (kind, tab_id) = match self {
            StateChange::TabOpened { tab_id } => (TAB_OPENED, Some(tab_id)),
            StateChange::DownloadStarted { tab_id } => (DOWNLOAD_STARTED, tab_id.as_ref()),
            StateChange::DownloadCompleted { tab_id } => (DOWNLOAD_COMPLETED, tab_id.as_ref()),
            StateChange::DownloadFailed { tab_id } => (DOWNLOAD_FAILED, tab_id.as_ref()),
        };
        let mut change = json!({"type": kind});
        if let Some(tab_id) = tab_id {
            change["tab_id"] = json!(tab_id.as_str());
        }
        change
    }
}

/// A `browser_state` block: every tab, exactly one of them active when there is any (the
/// driver's [`BrowserState`] guarantees it), and the changes of the call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BrowserStateBlock {
    tabs: Vec<TabView>,
    changes: Vec<StateChange>,
}

impl BrowserStateBlock {
    /// The block for the state after a call, given the state before it: every tab whose id was
    /// not there before is reported `tab_opened`, in tab order.
    pub fn after(prior: &BrowserState, post: &BrowserState) -> BrowserStateBlock {
        let changes = post
            .tabs()
            .iter()
            .filter(|tab| prior.tab(&tab.id).is_none())
            .map(|tab| StateChange::TabOpened {
                tab_id: tab.id.clone(),
            })
            .collect();
        BrowserStateBlock {
            tabs: StateView::new(post, StateFormat::ObservationV1).tabs,
            changes,
        }
    }

    /// The tabs as the model sees them.
    pub fn tabs(&self) -> &[TabView] {
        &self.tabs
    }

    /// The changes of the call, in order.
    pub fn changes(&self) -> &[StateChange] {
        &self.changes
    }

    /// `{"type": "browser_state", "tabs": [{"tab_id", "title", "url", "active"}],
    /// "state_changes"?}`: `state_changes` is left out when empty, never sent as `[]`.
    pub fn to_json(&self) -> Value {
        let tabs: Vec<Value> = self
            .tabs
            .iter()
            .map(|tab| {
                // A page-chosen title on one line, as the SDK folds it (`bounded_tab`).
                json!({
                    "tab_id": tab.id.as_str(),
                    "title": crate::errtext::one_line(&tab.title),
                    "url": tab.url,
                    "active": tab.active,
                })
            })
            .collect();
        let mut block = json!({"type": BROWSER_STATE_TYPE, "tabs": tabs});
        if !self.changes.is_empty() {
            block["state_changes"] =
                Value::Array(self.changes.iter().map(StateChange::to_json).collect());
        }
        block
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hands_core::browser::TabInfo;

    fn tab(id: &str, title: &str, url: &str, active: bool) -> TabInfo {
        TabInfo {
            id: TabId::new(id).unwrap(),
            title: title.into(),
            url: url.into(),
            active,
        }
    }

    #[test]
    fn tabs_are_filtered_and_changes_left_out_when_empty() {
        let state = BrowserState::new(vec![
            tab(
                "t1",
                "Cart",
                "https://user:pw@shop.example:8443/cart?id=7#x",
                true,
            ),
            tab("t2", "Blank", "about:blank", false),
        ])
        .unwrap();
        let block = BrowserStateBlock::after(&state, &state);
        assert_eq!(
            block.to_json(),
            json!({"type": "browser_state", "tabs": [
                {"tab_id": "t1", "title": "Cart", "url": "https://shop.example:8443", "active": true},
                {"tab_id": "t2", "title": "Blank", "url": "about:blank", "active": false},
            ]})
        );
        assert!(block.to_json().get("state_changes").is_none());
        let empty = BrowserState::default();
        assert_eq!(
            BrowserStateBlock::after(&empty, &empty).to_json(),
            json!({"type": "browser_state", "tabs": []})
        );
        // A page-chosen title with line breaks and bidi controls is one line.
        let hostile = BrowserState::new(vec![tab(
            "t1",
            "Pay\n\u{202e}now\r",
            "https://a.test/",
            true,
        )])
        .unwrap();
        assert_eq!(
            BrowserStateBlock::after(&hostile, &hostile).to_json()["tabs"][0]["title"],
            "Pay now"
        );
    }

    #[test]
    fn new_tabs_are_reported_opened() {
        let prior = BrowserState::new(vec![tab("t1", "A", "https://a.test/", true)]).unwrap();
        let post = BrowserState::new(vec![
            tab("t1", "A", "https://a.test/", false),
            tab("t7", "Pop-up", "https://b.test/x", true),
        ])
        .unwrap();
        let block = BrowserStateBlock::after(&prior, &post);
        assert_eq!(
            block.changes(),
            [StateChange::TabOpened {
                tab_id: TabId::new("t7").unwrap()
            }]
        );
        assert_eq!(
            block.to_json()["state_changes"],
            json!([{"type": "tab_opened", "tab_id": "t7"}])
        );
        // A closed tab is no change the block reports.
        let closed = BrowserStateBlock::after(&post, &prior);
        assert!(closed.changes().is_empty());
    }

    #[test]
    fn download_changes_have_their_kinds() {
        let t = TabId::new("t1").unwrap();
        assert_eq!(
            StateChange::DownloadStarted {
                tab_id: Some(t.clone())
            }
            .to_json(),
            json!({"type": "download_started", "tab_id": "t1"})
        );
        assert_eq!(
            StateChange::DownloadCompleted { tab_id: None }.to_json(),
            json!({"type": "download_completed"})
        );
        assert_eq!(
            StateChange::DownloadFailed { tab_id: Some(t) }.to_json()["type"],
            "download_failed"
        );
    }
}
