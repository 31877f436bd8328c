//! The context of the next request: what of the conversation the model sees, and what it costs.
//!
//! The runner keeps the whole conversation (the ledger saves it whole); each request is a
//! *projection* of it. Exactly one of two managers shrinks it ([`ContextManagement`]), never
//! both — the type holds one:
//!
//! - **Client** ([`ClientContext`]): hands projects each request. Old screenshots are dropped in
//!   batches — the last `keep_screenshots` always stay, the older ones go only once
//!   `drop_every` have piled up, so the prompt's prefix stays byte-identical (and cached)
//!   between two drops. An optional [`ContextBudget`] caps the bytes and images of the next
//!   request's input: over it, every screenshot but the kept ones goes, then the oldest
//!   completed tool calls with their results (Claude: whole exchanges; OpenAI: the call and its
//!   output), replaced by a receipt naming them, until the input is under three quarters of the
//!   budget (so cuts come in batches too). The current observation, the last screenshots, safety
//!   checks, messages and reasoning, and every call/result pairing are kept; a request that
//!   still does not fit stops the run ([`crate::StopReason::ContextBudgetExceeded`]).
//! - **Native** ([`NativeContext`]): the API does it — Claude's server-side tool-result clearing
//!   (`clear_tool_uses_20250919`, beta `context-management-2025-06-27`), OpenAI's compaction
//!   (`context_management: [{type: "compaction"}]`, the compaction item replayed unchanged).
//!   hands sends the history whole.
//!
//! Beside either, a screenshot identical to the last one the model sees is answered with
//! [`UNCHANGED_SCREENSHOT`] instead of a second copy of the image (Claude's computer toolset;
//! OpenAI's computer tool must answer with an image).
//!
//! Spec: claude-computer-use-tool, "Gestionar el historial de capturas de pantalla";
//! openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" (`context_budget`) and
//! "Contrato del controlador de computadora" (compaction: "No las combines").

mod claude;
mod compactor;
mod openai;
mod unchanged;

pub(crate) use claude::project as project_messages;
pub use claude::{
    MANY_IMAGES, MANY_IMAGES_MAX_SIDE, MAX_CACHE_BREAKPOINTS, PruneReport, count_breakpoints,
    count_images, image_block_size, place_breakpoints, prune_screenshots,
};
pub(crate) use compactor::CallerCuts;
pub use compactor::{
    CALLER_SUMMARY_PREFIX, CompactionDecision, CompactionSnapshot, Compactor, decision_refused,
};
pub(crate) use openai::{ProjectError, project as project_items};
pub(crate) use unchanged::LastScreenshot;

use serde_json::{Value, json};

/// The text that takes the place of a dropped screenshot.
pub const DROPPED_SCREENSHOT: &str = "[an older screenshot was removed to save context]";
/// The text that answers a screenshot identical to the last one the model sees.
pub const UNCHANGED_SCREENSHOT: &str =
    "The screen has not changed since the last screenshot (the same image is not sent again).";
/// The start of the receipt that names calls removed from a request by the context budget.
pub const OMITTED_CALLS_PREFIX: &str = "Omitted from this request to save context: ";
/// The end of that receipt.
pub const OMITTED_CALLS_SUFFIX: &str = ". They ran before; their results stay in the run's full history, but whether their effects still hold is not re-checked.";
/// The beta header of server-side context editing.
pub const CONTEXT_MANAGEMENT_BETA: &str = "context-management-2025-06-27";
/// The server-side tool-result clearing edit type.
pub const CLEAR_TOOL_USES_EDIT: &str = "clear_tool_uses_20250919";
/// OpenAI's context-management entry type.
pub const COMPACTION: &str = "compaction";
/// Claude's server-side compaction edit type.
pub const COMPACT_EDIT: &str = "compact_20260112";
/// The beta header of Claude's server-side compaction (anthropic 2.10's `AnthropicBetaParam`).
pub const COMPACT_BETA: &str = "compact-2026-01-12";
/// The least trigger of Claude's compaction the API takes.
pub const MIN_COMPACT_TRIGGER_TOKENS: u64 = 50_000;

/// The screenshots always visible by default (the spec's "conservar las últimas tres").
pub const DEFAULT_KEEP_SCREENSHOTS: usize = 3;
/// Old screenshots are dropped once this many have piled up beyond the kept ones.
///
/// Chosen by cost, not the spec's example of 25: each drop re-writes the cached tail (the kept
/// screenshots, at 1.25× on Claude), while every screenshot still in the prefix is read again on
/// each request (0.1×). With `k` kept, a batch of `n` costs about `1.25·k` image writes against
/// `0.1·n²/2` image reads saved, so the best `n` is `√(2·1.25·k/0.1) = 5·√k` — 8.7 for three
/// (`crates/hands-runner/benches/context.rs` measures it). Three kept plus nine stay under the
/// API's 20-image threshold.
pub const DEFAULT_DROP_EVERY: usize = 9;

/// Caps of the next request's input (the SDK's `context_budget`): the bytes of its input as
/// compact JSON (messages or items; not the tools or the system prompt) and its images.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextBudget {
    /// Most bytes of input JSON.
    pub max_input_bytes: usize,
    /// Most images.
    pub max_input_images: usize,
}

/// hands projects each request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientContext {
    /// Screenshots always visible: the most recent ones (at least one).
    pub keep_screenshots: usize,
    /// Older screenshots are dropped once this many have piled up beyond `keep_screenshots`;
    /// `None` keeps every screenshot (the reference harness's handling, for comparisons).
    pub drop_every: Option<usize>,
    /// Caps of the next request, if any.
    pub budget: Option<ContextBudget>,
}

impl Default for ClientContext {
    fn default() -> ClientContext {
        ClientContext {
            keep_screenshots: DEFAULT_KEEP_SCREENSHOTS,
            drop_every: Some(DEFAULT_DROP_EVERY),
            budget: None,
        }
    }
}

/// What the Messages API does once Claude's input passes the trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClaudeEdit {
    /// Clear old tool results (`clear_tool_uses_20250919`, beta `context-management-2025-06-27`).
    #[default]
    ClearToolUses,
    /// Summarize the conversation into a `compaction` block that replaces it
    /// (`compact_20260112`, beta `compact-2026-01-12`; the trigger is at least
    /// [`MIN_COMPACT_TRIGGER_TOKENS`]). The runner keeps the block, drops the messages it
    /// replaces from later requests and from its checkpoints, and goes on.
    Compact(AfterCompaction),
}

/// Whether the API answers a compaction alone (`pause_after_compaction`: `stop_reason:
/// "compaction"`, and the runner sends it back to let the turn go on) or goes on with the
/// model's turn in the same answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AfterCompaction {
    /// The model's turn follows the summary in the same answer.
    #[default]
    GoOn,
    /// The summary comes alone (one more request, but a checkpoint between the two).
    Pause,
}

/// The API manages the context. On Claude: once the input passes `trigger_input_tokens`, either
/// clear old tool results, keeping the last `keep_tool_uses` tool uses, and only when at least
/// `clear_at_least_tokens` go, or compact ([`ClaudeEdit`]). On OpenAI: compact once the input
/// passes `trigger_input_tokens` (`compact_threshold`); the other fields do not apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NativeContext {
    /// Input tokens above which the API acts.
    pub trigger_input_tokens: u64,
    /// Claude: the most recent tool uses kept whole.
    pub keep_tool_uses: usize,
    /// Claude: the least a clearing frees (a clearing re-writes the cache, so it should be worth
    /// it).
    pub clear_at_least_tokens: Option<u64>,
    /// Claude: clear tool results (the default) or compact.
    pub claude_edit: ClaudeEdit,
}

impl Default for NativeContext {
    fn default() -> NativeContext {
        NativeContext {
            trigger_input_tokens: 30_000,
            keep_tool_uses: DEFAULT_KEEP_SCREENSHOTS,
            clear_at_least_tokens: Some(5_000),
            claude_edit: ClaudeEdit::ClearToolUses,
        }
    }
}

impl NativeContext {
    /// Claude's `context_management` object. Send it with [`NativeContext::anthropic_beta`].
    pub fn anthropic_edits(&self) -> Value {
        if let ClaudeEdit::Compact(after) = self.claude_edit {
            return json!({"edits": [{
                "type": COMPACT_EDIT,
                "trigger": {"type": "input_tokens", "value": self.trigger_input_tokens},
                "pause_after_compaction": after == AfterCompaction::Pause,
            }]});
        }
        let mut edit = json!({
            "type": CLEAR_TOOL_USES_EDIT,
            "trigger": {"type": "input_tokens", "value": self.trigger_input_tokens},
            "keep": {"type": "tool_uses", "value": self.keep_tool_uses},
        });
        if let Some(min) = self.clear_at_least_tokens {
            edit["clear_at_least"] = json!({"type": "input_tokens", "value": min});
        }
        json!({"edits": [edit]})
    }

    /// The beta header Claude's edit needs.
    pub fn anthropic_beta(&self) -> &'static str {
        match self.claude_edit {
            ClaudeEdit::ClearToolUses => CONTEXT_MANAGEMENT_BETA,
            ClaudeEdit::Compact(_) => COMPACT_BETA,
        }
    }

    /// OpenAI's `context_management` list.
    pub fn openai_entries(&self) -> Value {
        json!([{"type": COMPACTION, "compact_threshold": self.trigger_input_tokens}])
    }
}

/// Why a Claude compaction trigger is refused.
pub fn compact_trigger_too_low(trigger: u64) -> String {
    format!(
        "Claude's compaction trigger is {trigger} input tokens; the API takes at least {MIN_COMPACT_TRIGGER_TOKENS}: raise trigger_input_tokens"
    )
}

/// Who shrinks the context: hands, or the API — never both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextManagement {
    /// hands projects each request (screenshot batches, an optional budget).
    Client(ClientContext),
    /// The API's own context management.
    Native(NativeContext),
}

impl Default for ContextManagement {
    fn default() -> ContextManagement {
        ContextManagement::Client(ClientContext::default())
    }
}

/// The context settings of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextConfig {
    /// Who shrinks the context.
    pub management: ContextManagement,
    /// Claude: turns that get a cache breakpoint on their last tool result (at most 3 beside
    /// the one after the tools).
    pub turn_breakpoints: usize,
    /// Answer a screenshot identical to the last one the model sees with
    /// [`UNCHANGED_SCREENSHOT`] instead of the image.
    pub unchanged_screenshots: bool,
}

impl Default for ContextConfig {
    fn default() -> ContextConfig {
        ContextConfig {
            management: ContextManagement::default(),
            turn_breakpoints: 3,
            unchanged_screenshots: true,
        }
    }
}

impl ContextConfig {
    /// The reference harness's handling: every screenshot kept, every image sent, breakpoints on
    /// the last three turns (for comparisons; see `benches/context.rs`).
    pub fn keep_all() -> ContextConfig {
        ContextConfig {
            management: ContextManagement::Client(ClientContext {
                drop_every: None,
                ..ClientContext::default()
            }),
            unchanged_screenshots: false,
            ..ContextConfig::default()
        }
    }

    /// The API's own management with `native`.
    pub fn native(native: NativeContext) -> ContextConfig {
        ContextConfig {
            management: ContextManagement::Native(native),
            ..ContextConfig::default()
        }
    }

    /// Refuses settings that cannot work (checked before the first request).
    pub fn validate(&self) -> Result<(), String> {
        match &self.management {
            ContextManagement::Client(client) => {
                if client.keep_screenshots == 0 {
                    return Err("keep_screenshots must be at least 1: the current observation stays visible".into());
                }
                if client.drop_every == Some(0) {
                    return Err(
                        "drop_every must be at least 1 (or None to keep every screenshot)".into(),
                    );
                }
                if let Some(budget) = client.budget {
                    if budget.max_input_bytes == 0 {
                        return Err("context_budget.max_input_bytes must be at least 1".into());
                    }
                    if budget.max_input_images < client.keep_screenshots {
                        return Err(format!(
                            "context_budget.max_input_images ({}) is below keep_screenshots ({}): the kept screenshots could never fit",
                            budget.max_input_images, client.keep_screenshots
                        ));
                    }
                }
            }
            ContextManagement::Native(native) => {
                if native.trigger_input_tokens == 0 {
                    return Err("the native context trigger must be at least 1 token".into());
                }
                if matches!(native.claude_edit, ClaudeEdit::Compact(_))
                    && native.trigger_input_tokens < MIN_COMPACT_TRIGGER_TOKENS
                {
                    return Err(compact_trigger_too_low(native.trigger_input_tokens));
                }
            }
        }
        Ok(())
    }

    /// The budget, when hands keeps one.
    pub fn budget(&self) -> Option<ContextBudget> {
        match &self.management {
            ContextManagement::Client(client) => client.budget,
            ContextManagement::Native(_) => None,
        }
    }

    /// Whether hands projects requests itself (then an OpenAI run sends its input whole each
    /// time instead of chaining by `previous_response_id`, which would leave the history on the
    /// server, beyond any pruning).
    pub fn projects(&self) -> bool {
        matches!(self.management, ContextManagement::Client(_))
    }
}

/// What the client projection has cut beyond its schedule because of the budget. It only
/// grows, so consecutive requests share their prefix until the next cut.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ProjectionState {
    /// The oldest screenshots cut (beyond the scheduled batches).
    pub(crate) screenshots_cut: usize,
    /// The oldest droppable calls (Claude: exchanges) removed.
    pub(crate) calls_dropped: usize,
}

/// A request that does not fit its budget even with everything droppable dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BudgetExceeded {
    pub(crate) input_bytes: usize,
    pub(crate) input_images: usize,
}

impl From<(BudgetExceeded, ContextBudget)> for crate::StopReason {
    fn from((over, budget): (BudgetExceeded, ContextBudget)) -> crate::StopReason {
        crate::StopReason::ContextBudgetExceeded {
            input_bytes: over.input_bytes,
            input_images: over.input_images,
            max_input_bytes: budget.max_input_bytes,
            max_input_images: budget.max_input_images,
        }
    }
}

/// Whether `(bytes, images)` fits `budget`, and fits it with room (three quarters), the target
/// of a cut so cuts come in batches.
fn fits(budget: ContextBudget, bytes: usize, images: usize, with_room: bool) -> bool {
    if with_room {
        bytes <= budget.max_input_bytes / 4 * 3 && images <= budget.max_input_images
    } else {
        bytes <= budget.max_input_bytes && images <= budget.max_input_images
    }
}

/// The scheduled drop: the screenshots beyond `keep`, rounded down to whole batches.
fn scheduled(n_images: usize, client: &ClientContext) -> usize {
    let excess = n_images.saturating_sub(client.keep_screenshots);
    match client.drop_every {
        Some(every) if every > 0 && excess >= every => excess - excess % every,
        _ => 0,
    }
}

/// The receipt naming calls removed from a request.
fn omitted_receipt(calls: &[String]) -> String {
    format!(
        "{OMITTED_CALLS_PREFIX}{}{OMITTED_CALLS_SUFFIX}",
        calls.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_that_cannot_work_are_refused() {
        assert!(ContextConfig::default().validate().is_ok());
        assert!(ContextConfig::keep_all().validate().is_ok());
        let client = |c: ClientContext| ContextConfig {
            management: ContextManagement::Client(c),
            ..ContextConfig::default()
        };
        assert!(
            client(ClientContext {
                keep_screenshots: 0,
                ..ClientContext::default()
            })
            .validate()
            .is_err()
        );
        assert!(
            client(ClientContext {
                budget: Some(ContextBudget {
                    max_input_bytes: 1_000_000,
                    max_input_images: 2,
                }),
                ..ClientContext::default()
            })
            .validate()
            .is_err()
        );
        assert!(
            ContextConfig::native(NativeContext {
                trigger_input_tokens: 0,
                ..NativeContext::default()
            })
            .validate()
            .is_err()
        );
    }

    #[test]
    fn native_requests_are_the_apis_shapes() {
        let native = NativeContext::default();
        let edits = native.anthropic_edits();
        assert_eq!(edits["edits"][0]["type"], CLEAR_TOOL_USES_EDIT);
        assert_eq!(edits["edits"][0]["keep"]["value"], 3);
        assert_eq!(native.openai_entries()[0]["type"], "compaction");
    }

    #[test]
    fn drops_are_scheduled_in_whole_batches() {
        let client = ClientContext::default();
        assert_eq!(scheduled(3 + 8, &client), 0);
        assert_eq!(scheduled(3 + 9, &client), 9);
        assert_eq!(scheduled(3 + 17, &client), 9);
        assert_eq!(scheduled(3 + 18, &client), 18);
        let all = ClientContext {
            drop_every: None,
            ..client
        };
        assert_eq!(scheduled(100, &all), 0);
    }
}
