//! The caller's compaction of an OpenAI run's input (the SDK's `context_budget.compact`): when
//! the next request would not fit its budget, a callback sees the input and the calls that may
//! leave it, and answers which to drop and, optionally, a summary the model reads instead. Its
//! decisions stick (the next requests drop the same calls, so their prefix stays the same) and
//! are saved with every checkpoint, so a resumed run projects its input as the first run did.
//!
//! Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución"
//! (`context_budget`); openai 3.51's `ContextBudgetSnapshot` and `ContextBudgetDecision`.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The start of the message that carries a caller's summary (the SDK's wording).
pub const CALLER_SUMMARY_PREFIX: &str = "Caller summary of omitted completed tool results: ";

/// What the callback sees: the input as it would be sent, the calls it may drop (completed
/// calls that are not a current observation, a kept screenshot or a safety-checked call), and
/// the input's size.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CompactionSnapshot {
    /// The input items as they would be sent.
    pub history: Vec<Value>,
    /// The call ids a decision may drop, oldest first.
    pub eligible_call_ids: Vec<String>,
    /// Bytes of the input as compact JSON.
    pub input_bytes: usize,
    /// Images of the input.
    pub input_images: usize,
}

/// The callback's answer: the calls to drop (each eligible, named once; an empty list drops
/// none) and a summary to put in their place.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionDecision {
    /// Calls that leave the input with their outputs.
    pub drop_call_ids: Vec<String>,
    /// Text the model reads at the start of the input, after [`CALLER_SUMMARY_PREFIX`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

type Callback = dyn Fn(&CompactionSnapshot) -> CompactionDecision + Send + Sync;

/// The caller's compaction callback of an OpenAI run with a context budget
/// ([`crate::OpenAiSettings::compactor`]). It is asked before hands' own cuts of calls; what it
/// leaves over the budget, hands then cuts as without it.
#[derive(Clone)]
pub struct Compactor(Arc<Callback>);

impl Compactor {
    /// Wraps `callback`.
    pub fn new(
        callback: impl Fn(&CompactionSnapshot) -> CompactionDecision + Send + Sync + 'static,
    ) -> Compactor {
        Compactor(Arc::new(callback))
    }

    pub(crate) fn call(&self, snapshot: &CompactionSnapshot) -> CompactionDecision {
        (self.0)(snapshot)
    }
}

impl fmt::Debug for Compactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Compactor(..)")
    }
}

/// Why a decision is refused (the run stops before the request: the callback broke its
/// contract).
pub fn decision_refused(call_id: &str) -> String {
    format!(
        "the compaction callback dropped `{}`, which is not an eligible call id or is named twice",
        hands_toolset::errtext::name(call_id)
    )
}

/// Every decision taken so far, in order: saved with each checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CallerCuts {
    pub(crate) decisions: Vec<CompactionDecision>,
}

impl CallerCuts {
    /// The calls dropped by every decision.
    pub(crate) fn dropped(&self) -> HashSet<String> {
        self.decisions
            .iter()
            .flat_map(|d| d.drop_call_ids.iter().cloned())
            .collect()
    }

    /// Checks `decision` against `eligible` and keeps it.
    pub(crate) fn take(
        &mut self,
        decision: CompactionDecision,
        eligible: &[String],
    ) -> Result<(), String> {
        let mut named = HashSet::new();
        for id in &decision.drop_call_ids {
            if !eligible.contains(id) || !named.insert(id.as_str()) {
                return Err(decision_refused(id));
            }
        }
        self.decisions.push(decision);
        Ok(())
    }

    /// The summary messages that open the input, one per decision with a summary.
    pub(crate) fn summaries(&self) -> Vec<Value> {
        self.decisions
            .iter()
            .filter_map(|d| d.summary.as_deref())
            .map(|summary| {
                json!({"type": "message", "role": "user", "content": [{"type": "input_text",
                    "text": format!("{CALLER_SUMMARY_PREFIX}{summary}")}]})
            })
            .collect()
    }
}
