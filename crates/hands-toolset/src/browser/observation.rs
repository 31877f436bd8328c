//! Observation metadata V1: what changed in the browser between two states the toolset read,
//! numbered in one sequence, so every result tells the model what happened since the last
//! result it saw (a tab a page opened, a tab that navigated on its own, a refused navigation).
//!
//! The driver contract reports tabs only, so the toolset derives the changes itself by comparing
//! each state it reads with the one before: `tab_opened` and `tab_closed` by tab id,
//! `tab_switched` when the active tab changes, `navigation` when a tab's URL changes (the
//! model never sees which URL: only the tab id). `navigation_refused` (reason `policy`) is
//! recorded when the URL policy refuses a `navigate` or `new_tab`. Dialogs and downloads are
//! not reported by the contract, so they never appear.
//!
//! Each observation sent to the model carries the changes not sent before; `dropped_changes`
//! counts every earlier change (already sent, or older than the [`MAX_HELD_CHANGES`] held), so
//! `sequence == dropped_changes + changes.len()` and the `n`th change has sequence
//! `dropped_changes + n`, as the OpenAI SDK checks (`_observed_state`). Sequences only grow.
//!
//! Spec: openai-browser-desktop-drivers, "Contrato del controlador de navegador" ("Si el estado
//! incluye metadatos de observación V1 …"); the OpenAI SDK's `BrowserObservationV1`.

use std::collections::VecDeque;

use hands_core::browser::{BrowserState, TabId};
use serde_json::{Value, json};

/// Most changes held for the next observation; older ones are counted as dropped.
pub const MAX_HELD_CHANGES: usize = 64;

/// What changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeKind {
    /// A tab that was not open before.
    TabOpened(TabId),
    /// A tab that is no longer open.
    TabClosed(TabId),
    /// Another tab became the active one.
    TabSwitched(TabId),
    /// A tab's URL changed.
    Navigation(TabId),
    /// The URL policy refused a navigation (in this tab, or a new one: `None`).
    NavigationRefused(Option<TabId>),
}

/// One numbered change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Its place in the toolset's sequence, from 1.
    pub sequence: u64,
    /// What changed.
    pub kind: ChangeKind,
}

impl Change {
    /// `{"type", "sequence", "tab_id"}` (plus `"reason": "policy"` for a refused navigation).
    pub fn to_json(&self) -> Value {
        let (kind, tab) = match &self.kind {
            ChangeKind::TabOpened(t) => ("tab_opened", Some(t)),
            ChangeKind::TabClosed(t) => ("tab_closed", Some(t)),
            ChangeKind::TabSwitched(t) => ("tab_switched", Some(t)),
            ChangeKind::Navigation(t) => ("navigation", Some(t)),
            ChangeKind::NavigationRefused(t) => {
                return json!({"type": "navigation_refused", "sequence": self.sequence,
                    "tab_id": t.as_ref().map(TabId::as_str), "reason": "policy"});
            }
        };
        json!({"type": kind, "sequence": self.sequence, "tab_id": tab.map(TabId::as_str)})
    }
}

/// The observation block sent with one state.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Observation {
    /// How many changes there have been in all.
    pub sequence: u64,
    /// How many of them this block does not carry.
    pub dropped_changes: u64,
    /// Whether a title of the state was cut.
    pub title_truncated: bool,
    /// The changes carried, in order.
    pub changes: Vec<Change>,
}

impl Observation {
    /// `{"version": 1, "sequence", "dropped_changes", "title_truncated", "changes"}`.
    pub fn to_json(&self) -> Value {
        json!({
            "version": 1,
            "sequence": self.sequence,
            "dropped_changes": self.dropped_changes,
            "title_truncated": self.title_truncated,
            "changes": self.changes.iter().map(Change::to_json).collect::<Vec<_>>(),
        })
    }
}

/// The toolset's log of changes between the states it read.
#[derive(Debug, Default)]
pub struct Observer {
    last: Option<BrowserState>,
    held: VecDeque<Change>,
    sequence: u64,
    /// Changes up to this sequence were sent to the model.
    sent: u64,
}

impl Observer {
    /// An empty log: the first state read is the baseline, not a change.
    pub fn new() -> Observer {
        Observer::default()
    }

    fn push(&mut self, kind: ChangeKind) {
        self.sequence += 1;
        self.held.push_back(Change {
            sequence: self.sequence,
            kind,
        });
        while self.held.len() > MAX_HELD_CHANGES {
            self.held.pop_front();
        }
    }

    /// Records what changed since the last state read.
    pub fn record(&mut self, state: &BrowserState) {
        if let Some(last) = self.last.take() {
            for tab in last.tabs() {
                if state.tab(&tab.id).is_none() {
                    self.push(ChangeKind::TabClosed(tab.id.clone()));
                }
            }
            for tab in state.tabs() {
                match last.tab(&tab.id) {
                    None => self.push(ChangeKind::TabOpened(tab.id.clone())),
                    Some(before) if before.url != tab.url => {
                        self.push(ChangeKind::Navigation(tab.id.clone()));
                    }
                    Some(_) => {}
                }
            }
            if let Some(active) = state.active()
                && last.active().map(|t| &t.id) != Some(&active.id)
            {
                self.push(ChangeKind::TabSwitched(active.id.clone()));
            }
        }
        self.last = Some(state.clone());
    }

    /// Records a navigation the URL policy refused.
    pub fn refused(&mut self, tab: Option<TabId>) {
        self.push(ChangeKind::NavigationRefused(tab));
    }

    /// The observation of the changes not sent yet, with `title_truncated`. `send` marks them
    /// sent (the block goes to the model); otherwise they stay for the next one (a state for
    /// `confirm`).
    pub fn observation(&mut self, title_truncated: bool, send: bool) -> Observation {
        let changes: Vec<Change> = self
            .held
            .iter()
            .filter(|c| c.sequence > self.sent)
            .cloned()
            .collect();
        if send {
            self.sent = self.sequence;
        }
        Observation {
            sequence: self.sequence,
            dropped_changes: self.sequence - changes.len() as u64,
            title_truncated,
            changes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hands_core::browser::TabInfo;

    fn state(tabs: &[(&str, &str, bool)]) -> BrowserState {
        BrowserState::new(
            tabs.iter()
                .map(|(id, url, active)| TabInfo {
                    id: TabId::new(*id).unwrap(),
                    title: "T".into(),
                    url: (*url).into(),
                    active: *active,
                })
                .collect(),
        )
        .unwrap()
    }

    /// The OpenAI SDK's check of an observation (`_observed_state`) and of a later one against
    /// an earlier (`_state`, non-consuming): what a hands observation must always pass.
    fn sdk_accepts(obs: &Value, previous: Option<&Value>) -> bool {
        let n = |v: &Value| v.as_u64().unwrap();
        let (seq, dropped) = (n(&obs["sequence"]), n(&obs["dropped_changes"]));
        let changes = obs["changes"].as_array().unwrap();
        let numbered = changes
            .iter()
            .enumerate()
            .all(|(i, c)| n(&c["sequence"]) == dropped + i as u64 + 1);
        let mut ok = obs["version"] == 1 && seq == dropped + changes.len() as u64 && numbered;
        if let Some(prev) = previous {
            let (pseq, pdropped) = (n(&prev["sequence"]), n(&prev["dropped_changes"]));
            ok &= seq >= pseq && dropped >= pdropped;
            let offset = dropped - pdropped;
            for i in 0..pseq.saturating_sub(dropped) {
                ok &= changes[i as usize] == prev["changes"][(offset + i) as usize];
            }
        }
        ok
    }

    #[test]
    fn changes_are_derived_numbered_and_sent_once() {
        let mut observer = Observer::new();
        observer.record(&state(&[("t1", "https://a.test/", true)]));
        let first = observer.observation(false, true).to_json();
        assert_eq!(
            first,
            json!({"version": 1, "sequence": 0, "dropped_changes": 0,
                   "title_truncated": false, "changes": []})
        );
        // The page opened a pop-up that took focus, and the first tab navigated.
        observer.record(&state(&[
            ("t1", "https://a.test/next", false),
            ("t2", "https://b.test/", true),
        ]));
        // A state for confirm does not use the changes up.
        let peek = observer.observation(false, false).to_json();
        assert_eq!(peek["changes"].as_array().map(Vec::len), Some(3));
        let second = observer.observation(true, true).to_json();
        assert_eq!(
            second,
            peek.as_object()
                .map(|o| {
                    let mut o = o.clone();
                    o.insert("title_truncated".into(), json!(true));
                    Value::Object(o)
                })
                .unwrap()
        );
        assert_eq!(
            second["changes"],
            json!([
                {"type": "navigation", "sequence": 1, "tab_id": "t1"},
                {"type": "tab_opened", "sequence": 2, "tab_id": "t2"},
                {"type": "tab_switched", "sequence": 3, "tab_id": "t2"},
            ])
        );
        assert!(sdk_accepts(&second, Some(&first)));
        observer.refused(None);
        observer.record(&state(&[("t1", "https://a.test/next", true)]));
        let third = observer.observation(false, true).to_json();
        assert_eq!(
            third,
            json!({"version": 1, "sequence": 6, "dropped_changes": 3, "title_truncated": false,
                   "changes": [
                {"type": "navigation_refused", "sequence": 4, "tab_id": null, "reason": "policy"},
                {"type": "tab_closed", "sequence": 5, "tab_id": "t2"},
                {"type": "tab_switched", "sequence": 6, "tab_id": "t1"},
            ]})
        );
        assert!(sdk_accepts(&third, Some(&second)));
        // Nothing new: an empty block with the same sequence.
        observer.record(&state(&[("t1", "https://a.test/next", true)]));
        let fourth = observer.observation(false, true).to_json();
        assert_eq!(fourth["changes"], json!([]));
        assert_eq!(fourth["dropped_changes"], 6);
        assert!(sdk_accepts(&fourth, Some(&third)));
    }

    #[test]
    fn a_flood_of_changes_is_bounded_and_still_consistent() {
        let mut observer = Observer::new();
        observer.record(&state(&[("t1", "https://a.test/0", true)]));
        let mut previous = observer.observation(false, true).to_json();
        for round in 1..=5u32 {
            for i in 0..100u32 {
                observer.record(&state(&[(
                    "t1",
                    &format!("https://a.test/{round}/{i}"),
                    true,
                )]));
            }
            let obs = observer.observation(false, true).to_json();
            assert_eq!(
                obs["changes"].as_array().map(Vec::len),
                Some(MAX_HELD_CHANGES)
            );
            assert!(sdk_accepts(&obs, Some(&previous)), "{obs}");
            previous = obs;
        }
        assert_eq!(previous["sequence"], 500);
    }
}
