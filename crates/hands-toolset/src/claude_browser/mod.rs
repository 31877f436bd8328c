//! Claude's browser toolset `browser_toolset_20260801` over any [`Browser`] driver: the 31
//! members, their batch semantics, consent, and the `browser_state` block — the second surface
//! over the same driver as the function-tool toolset ([`crate::browser`]), whose consent table,
//! `confirm` and URL-policy callbacks, tab-state filtering and read filtering it reuses, so one
//! application callback serves both.
//!
//! One block runs in this order:
//! 1. a block after a failure in the same turn is answered [`BROWSER_NOT_EXECUTED`] and not run;
//! 2. an unknown or disabled member, or an input that does not parse ([`input`]), is answered
//!    with what was wrong; members this driver contract cannot honour (`navigate` back/forward,
//!    a ref target with modifiers …) with a clear refusal;
//! 3. the state is read (the "before" of `state_changes`, the `state` of `confirm`); what depends
//!    on it is resolved: `navigate "reload"` (the tab's URL) and `form_input`'s driver call (the
//!    field's role, see [`forms`]);
//! 4. consent, from the function-tool table ([`Member::consent`]): `navigate` and `new_tab` ask
//!    the URL policy first, then `confirm`; every state-changing member asks `confirm` (`type`,
//!    `key` and `hold_key` included, as the SDK requires); reads ask nothing. The callbacks get
//!    the driver member and its validated arguments, exactly as the function-tool surface
//!    passes them (for `file_upload`, the `upload_file` call: the click before it only opens the
//!    chooser);
//! 5. the driver runs the call(s);
//! 6. the state is read again; the result is the acknowledgement, the read's text or the image
//!    (`present`), then one `browser_state` block with `tab_opened` for every new tab.
//!
//! Any failure is the block's `is_error` result — without a `browser_state` block — and halts the
//! rest of the turn's browser blocks. A vanished browser, a state that cannot be read, an invalid
//! driver result or a cancellation is also a [`BrowserFault`]: the run must stop.
//!
//! Spec: api-contracts A, "Browser use: `browser_toolset_20260801`"; for the consent and state
//! rules shared with the function-tool surface, openai-browser-desktop-drivers, "Aprobar acciones
//! y administrar la sesión", "Restringir las URL", "Manejar fallos".
//!
//! # Member → driver call
//! | member | driver call(s) |
//! |---|---|
//! | `navigate {url}` | `navigate` (a URL without a scheme is https) |
//! | `navigate "reload"` | `navigate` to the tab's current URL |
//! | `navigate "back"` / `"forward"` | none: refused |
//! | `list_tabs` | none: `state()` |
//! | `new_tab`, `switch_tab` | `new_tab`, `switch_tab` |
//! | `close_tab` | `close_tab` |
//! | `read_page` | `read_page` (filter omitted or `all`: `all`); with `ref`: `read_page_scoped` from that root, `depth` capped at 32 |
//! | `get_page_text`, `find` | `get_page_text`, `find` |
//! | `read_console` / `read_network` | `read_diagnostics` (console / network) |
//! | `form_input` | `type` / `select_option` / `set_checked` by the field's role, after a `read_page` when the role is not known yet |
//! | `file_upload` | `click` on the `target` file input (opens its chooser), then `upload_file` with the grant id sent in `document_ids` |
//! | `scroll_to`, `screenshot`, `zoom` | `scroll_to`, `screenshot`, `zoom` |
//! | `left_click` | coordinate: `click_at` (left, 1, modifiers); ref: `click` |
//! | `right_click`, `middle_click` | `click_at` (right / middle, 1) |
//! | `double_click`, `triple_click` | `click_at` (left, 2 / 3) |
//! | `hover` | coordinate: `hover_at`; ref: `hover` |
//! | `mouse_move` | `hover_at` |
//! | `left_click_drag` | `drag_path` (start, end, modifiers) |
//! | `left_mouse_down`, `left_mouse_up` | `Browser::mouse_button` (press / release; the button stays down between calls, `mouse_move` drags meanwhile); needs `drag_path`, and its consent |
//! | `scroll` | `scroll` with the wheel at the `target` point (`Browser::scroll_at`), notches × [`ClaudeBrowserConfig::scroll_step`] CSS pixels |
//! | `type` | `type` into the focused element |
//! | `key` | `key` (one press per chord), `repeat` times |
//! | `hold_key` | `hold_keys` (the chord's keys) |
//! | `wait` | none: a cancellable sleep |
//! | `javascript_exec` | `run_script` |
//!
//! # Decisions where the driver contract has no matching operation
//! - `navigate "back"` / `"forward"`: refused
//!   ([`BROWSER_HISTORY_UNSUPPORTED`](crate::strings::BROWSER_HISTORY_UNSUPPORTED)); the contract has
//!   no history call and a key chord sent over CDP does not reach the browser's own shortcuts.
//!   `"reload"` navigates to the tab's current URL (fragment dropped, so the page really loads),
//!   through the URL policy and `confirm` like any navigation.
//! - `left_mouse_down` / `left_mouse_up`: the driver spec has no press without release, so the
//!   driver trait goes beyond it (`Browser::mouse_button`, as `scroll_at`); a driver without it
//!   answers [`BROWSER_BUTTON_HOLD_UNSUPPORTED`](crate::strings::BROWSER_BUTTON_HOLD_UNSUPPORTED).
//!   hands-cdp keeps one held button per browser (a person's one mouse) and refuses a press while
//!   it is down or a release while it is up.
//! - a ref target: clicked by `left_click` (driver `click`) and hovered by `hover`; the other click
//!   members and modifiers need a coordinate target (driver `click_at`).
//! - `scroll` turns the wheel at its `target` point (the driver's `scroll_at`, beyond the
//!   driver spec), so an inner scrollable area under it scrolls; `scroll_amount` notches of
//!   [`ClaudeBrowserConfig::scroll_step`] CSS pixels.
//! - `read_page` without `filter` (the API: "every visible element") reads like `"all"`: the
//!   driver's read has no viewport filter, so off-viewport elements come too, within the read's
//!   size caps; `depth` bounds only a read from a `ref` (the whole-page read is bounded by size).
//! - `file_upload`: files reach a page only through grants the application issued, so the
//!   grant's id is what the model sends in `document_ids` (the API's "files the harness has
//!   staged"); `paths` are refused, one file per call.
//! - `hold_key` holds at most 3 s (the driver's `hold_keys` limit; the API allows 30); `wait` at
//!   most [`ClaudeBrowserConfig::max_wait`] (the API: 30 s); `javascript_exec` runs with
//!   [`ClaudeBrowserConfig::script_timeout`]; `read_console` / `read_network` return
//!   [`ClaudeBrowserConfig::diagnostics_limit`] entries.
//! - downloads: the contract reports tabs only, so `state_changes` holds `tab_opened` entries.

pub mod declaration;
pub mod forms;
pub mod input;
pub mod members;
pub(crate) mod present;
pub mod result;
pub mod state;

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hands_core::CancellationToken;
use hands_core::browser::args::ReadFilter;
use hands_core::browser::args::{BrowserCall, MAX_DIAGNOSTICS_LIMIT, MAX_TIMEOUT_MS, PageUrl};
use hands_core::browser::driver::{ReadResult, dispatch};
use hands_core::browser::{Browser, BrowserMember, BrowserOutput, BrowserState, DriverError};
use serde_json::{Value, json};

use crate::browser::consent::{
    Approval, Confirm, ConfirmContext, ConfirmPhase, Consent, UrlPolicy, UrlVerdict, consent,
};
use crate::browser::state::{StateFormat, StateView};
use crate::browser::{
    BrowserFault, FocusedInput, ReadValues, ask_confirm, ask_url_policy, read_state,
};
use crate::strings::{
    BROWSER_ACTION_DENIED, BROWSER_CANCELLED, BROWSER_FAILED, BROWSER_NOT_EXECUTED,
    BROWSER_STATE_UNAVAILABLE, BROWSER_TOOLSET_NAME, BROWSER_TOOLSET_TYPE, BROWSER_UNSUPPORTED,
    BROWSER_URL_DENIED,
};
use crate::wire::ToolUse;
use declaration::{BrowserToolsetDeclaration, DeclarationError};
use forms::Fields;
use input::{Action, Limits};
pub use members::Member;
pub use result::{BrowserResult, user_message};
pub use state::{BrowserStateBlock, StateChange};

/// Default longest `wait`: 30 s, the driver contract's longest timeout (`wait_for`,
/// `run_script`); ours, as the spec gives the browser toolset's `wait` no limit.
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(30);
/// Default `run_script` timeout of `javascript_exec`: 10 s (ours; the contract allows 1–30 s).
pub const DEFAULT_SCRIPT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default CSS pixels per `scroll_amount` click: 100, what Chromium scrolls for one wheel notch.
pub const DEFAULT_SCROLL_STEP: u64 = 100;

/// How the toolset behaves. Defaults follow the spec where it has numbers.
#[derive(Clone)]
pub struct ClaudeBrowserConfig {
    /// The `tools` entry: which members the model may call.
    pub declaration: BrowserToolsetDeclaration,
    /// Approves state-changing and diagnostic members; required when any is enabled. The same
    /// callback may serve the function-tool surface.
    pub confirm: Option<Arc<dyn Confirm>>,
    /// Allows `navigate` / `new_tab` URLs; required when either is enabled.
    pub url_policy: Option<Arc<dyn UrlPolicy>>,
    /// Whether field values reach the model in reads.
    pub read_values: ReadValues,
    /// Whether input may go to the focused element (`type`, `key`, `hold_key`: the API's `type`
    /// has no target, so all three act on the focused element).
    pub focused_input: FocusedInput,
    /// Longest `wait`, at most 30 s (the API's limit; default [`DEFAULT_MAX_WAIT`]).
    pub max_wait: Duration,
    /// The timeout `javascript_exec` gives `run_script`, 1 ms to 30 s (default
    /// [`DEFAULT_SCRIPT_TIMEOUT`]).
    pub script_timeout: Duration,
    /// How many entries `read_console` / `read_network` return, 1 to 100 (default 100; the
    /// API's input has no limit field).
    pub diagnostics_limit: u32,
    /// CSS pixels per `scroll_amount` notch (default [`DEFAULT_SCROLL_STEP`]).
    pub scroll_step: u64,
}

impl Default for ClaudeBrowserConfig {
    fn default() -> ClaudeBrowserConfig {
        ClaudeBrowserConfig {
            declaration: BrowserToolsetDeclaration::new(),
            confirm: None,
            url_policy: None,
            read_values: ReadValues::default(),
            focused_input: FocusedInput::default(),
            max_wait: DEFAULT_MAX_WAIT,
            script_timeout: DEFAULT_SCRIPT_TIMEOUT,
            diagnostics_limit: MAX_DIAGNOSTICS_LIMIT,
            scroll_step: DEFAULT_SCROLL_STEP,
        }
    }
}

impl fmt::Debug for ClaudeBrowserConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClaudeBrowserConfig")
            .field("declaration", &self.declaration)
            .field("confirm", &self.confirm.is_some())
            .field("url_policy", &self.url_policy.is_some())
            .field("read_values", &self.read_values)
            .field("focused_input", &self.focused_input)
            .field("max_wait", &self.max_wait)
            .field("script_timeout", &self.script_timeout)
            .field("diagnostics_limit", &self.diagnostics_limit)
            .field("scroll_step", &self.scroll_step)
            .finish()
    }
}

/// Why a toolset cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The declaration would be rejected by the API.
    #[error(transparent)]
    Declaration(#[from] DeclarationError),
    /// An enabled member that needs `confirm`, without it.
    #[error("`{0}` changes the browser or reads diagnostics: provide a `confirm` callback")]
    MissingConfirm(Member),
    /// `navigate` / `new_tab` enabled without a URL policy.
    #[error("`{0}` opens URLs: provide a `url_policy`")]
    MissingUrlPolicy(Member),
    /// An enabled member none of whose driver members the driver implements.
    #[error("`{0}` is enabled but the driver implements none of the calls it needs: disable it")]
    Unimplemented(Member),
    /// `type`, `key` or `hold_key` enabled while focused input is refused.
    #[error("`{0}` acts on the focused element, which `FocusedInput::Refused` forbids: disable it")]
    FocusedInput(Member),
    /// A limit out of its range.
    #[error("`{field}` must be {expected}")]
    Limit {
        /// The config field.
        field: &'static str,
        /// Its range.
        expected: &'static str,
    },
}

/// The progress of one turn's browser blocks (see [`ClaudeBrowserToolset::run_block`]).
#[derive(Debug, Default)]
pub struct Batch {
    failed: bool,
    fault: Option<BrowserFault>,
}

impl Batch {
    /// Whether a block of this batch failed (later blocks are not executed).
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Whether the run must stop.
    pub fn has_fault(&self) -> bool {
        self.fault.is_some()
    }
}

/// The answer to a turn's browser blocks.
#[derive(Debug)]
pub struct TurnOutcome {
    /// One result per browser block, in block order.
    pub results: Vec<BrowserResult>,
    /// Set when the run must stop; every block is still answered.
    pub fault: Option<BrowserFault>,
}

/// Why one block failed: the text the model reads, and the fault when the run must stop.
#[derive(Debug)]
struct Failure {
    text: String,
    fault: Option<BrowserFault>,
}

impl Failure {
    fn text(text: impl Into<String>) -> Failure {
        Failure {
            text: text.into(),
            fault: None,
        }
    }

    fn fault(fault: BrowserFault) -> Failure {
        let text = match &fault {
            BrowserFault::Cancelled => BROWSER_CANCELLED,
            BrowserFault::StateUnavailable(_) => BROWSER_STATE_UNAVAILABLE,
            _ => BROWSER_FAILED,
        };
        Failure {
            text: text.to_owned(),
            fault: Some(fault),
        }
    }
}

/// What a driver error means for the block: the safe text of a refusal, the generic text of any
/// other failure (detail to the logs), or a fault.
fn driver_failure(member: Member, error: DriverError) -> Failure {
    match error {
        DriverError::Refused(e) => Failure::text(e.text()),
        DriverError::Unsupported(m) => {
            tracing::warn!(target: "hands::browser", %member, driver_member = %m, "driver does not implement the call");
            if matches!(member, Member::LeftMouseDown | Member::LeftMouseUp) {
                // A driver that drags but cannot keep the button down between actions.
                Failure::text(crate::strings::BROWSER_BUTTON_HOLD_UNSUPPORTED)
            } else {
                Failure::text(BROWSER_UNSUPPORTED)
            }
        }
        DriverError::Gone(detail) => {
            tracing::error!(target: "hands::browser", %member, %detail, "browser gone");
            Failure::fault(BrowserFault::Gone(detail))
        }
        // The driver was running it: part of it may have happened (the ledger marks it
        // uncertain), so it is not answered "not executed".
        DriverError::Cancelled => Failure {
            text: crate::strings::BROWSER_INTERRUPTED.to_owned(),
            fault: Some(BrowserFault::Cancelled),
        },
        other => {
            tracing::warn!(target: "hands::browser", %member, error = %other, "browser operation failed");
            Failure::text(BROWSER_FAILED)
        }
    }
}

/// What one member call resolved to once the state is known.
enum Plan {
    /// Driver calls, in order (one, or a `key` repeated).
    Calls(Vec<BrowserCall>),
    /// `wait`.
    Wait(Duration),
}

/// Claude's browser toolset over a driver.
pub struct ClaudeBrowserToolset<B> {
    driver: B,
    config: ClaudeBrowserConfig,
    limits: Limits,
    /// Roles of the elements this toolset's reads reported, for `form_input`.
    fields: Fields,
}

impl<B> fmt::Debug for ClaudeBrowserToolset<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClaudeBrowserToolset")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<B: Browser> ClaudeBrowserToolset<B> {
    /// A toolset over `driver`; refuses a declaration the API would reject, and a configuration
    /// that could not answer an enabled member (no `confirm`, no URL policy, no driver call).
    pub fn new(
        driver: B,
        config: ClaudeBrowserConfig,
    ) -> Result<ClaudeBrowserToolset<B>, ConfigError> {
        config.declaration.validate()?;
        let implemented = driver.implemented();
        for member in config.declaration.enabled() {
            match member.consent() {
                Consent::UrlPolicyThenConfirm if config.url_policy.is_none() => {
                    return Err(ConfigError::MissingUrlPolicy(member));
                }
                Consent::Confirm | Consent::UrlPolicyThenConfirm if config.confirm.is_none() => {
                    return Err(ConfigError::MissingConfirm(member));
                }
                _ => {}
            }
            let needs = member.driver_members();
            let has = |m: &BrowserMember| *m == BrowserMember::ListTabs || implemented.contains(*m);
            let usable = if member.needs_all_driver_members() {
                needs.iter().all(has)
            } else {
                needs.iter().any(has)
            };
            if !needs.is_empty() && !usable {
                return Err(ConfigError::Unimplemented(member));
            }
            if config.focused_input == FocusedInput::Refused
                && matches!(member, Member::Type | Member::Key | Member::HoldKey)
            {
                return Err(ConfigError::FocusedInput(member));
            }
        }
        let timeout_ms = config.script_timeout.as_millis();
        if !(1..=u128::from(MAX_TIMEOUT_MS)).contains(&timeout_ms) {
            return Err(ConfigError::Limit {
                field: "script_timeout",
                expected: "from 1 ms to 30 s",
            });
        }
        if !(1..=MAX_DIAGNOSTICS_LIMIT).contains(&config.diagnostics_limit) {
            return Err(ConfigError::Limit {
                field: "diagnostics_limit",
                expected: "from 1 to 100",
            });
        }
        if config.max_wait > input::MAX_WAIT {
            return Err(ConfigError::Limit {
                field: "max_wait",
                expected: "at most 30 s (the API's longest wait)",
            });
        }
        if config.scroll_step == 0 {
            return Err(ConfigError::Limit {
                field: "scroll_step",
                expected: "at least 1 CSS pixel",
            });
        }
        let limits = Limits {
            max_wait: config.max_wait,
            script_timeout: config.script_timeout,
            diagnostics_limit: config.diagnostics_limit,
            scroll_step: config.scroll_step,
        };
        Ok(ClaudeBrowserToolset {
            driver,
            config,
            limits,
            fields: Fields::default(),
        })
    }

    /// The `tools` entry to send.
    pub fn declaration(&self) -> Value {
        // Validated in `new`.
        self.config
            .declaration
            .to_json()
            .unwrap_or_else(|_| json!({"type": BROWSER_TOOLSET_TYPE}))
    }

    /// The configuration.
    pub fn config(&self) -> &ClaudeBrowserConfig {
        &self.config
    }

    /// The driver.
    pub fn driver(&mut self) -> &mut B {
        &mut self.driver
    }

    /// Gives the driver back to its owner.
    pub fn into_driver(self) -> B {
        self.driver
    }

    /// Whether a block is this toolset's: dispatch is on the pair (`toolset_name`, `name`), so a
    /// custom tool that shares a member's name (`navigate`) is not routed here.
    pub fn owns(&self, tool_use: &ToolUse) -> bool {
        tool_use.toolset_name.as_deref() == Some(BROWSER_TOOLSET_NAME)
    }

    /// Runs this toolset's blocks of a turn in order (blocks it does not own are skipped) and
    /// answers each.
    pub async fn run_turn(
        &mut self,
        blocks: &[ToolUse],
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let mut batch = Batch::default();
        let mut results = Vec::new();
        let mine: Vec<&ToolUse> = blocks.iter().filter(|b| self.owns(b)).collect();
        for tool_use in mine {
            results.push(self.run_block(&mut batch, tool_use, cancel).await);
        }
        TurnOutcome {
            results,
            fault: self.finish_batch(batch),
        }
    }

    /// Runs one block of a batch. After the batch's first failure every block is answered with
    /// exactly [`BROWSER_NOT_EXECUTED`] and nothing runs.
    pub async fn run_block(
        &mut self,
        batch: &mut Batch,
        tool_use: &ToolUse,
        cancel: &CancellationToken,
    ) -> BrowserResult {
        if batch.failed {
            return BrowserResult::error(tool_use, BROWSER_NOT_EXECUTED);
        }
        let start = Instant::now();
        let outcome = if cancel.is_cancelled() {
            Err(Failure::fault(BrowserFault::Cancelled))
        } else {
            self.execute(tool_use, cancel).await
        };
        tracing::info!(target: "hands::browser", id = %tool_use.id, member = %tool_use.name,
            ok = outcome.is_ok(), ms = start.elapsed().as_secs_f64() * 1e3, "browser block");
        match outcome {
            Ok(result) => result,
            Err(failure) => {
                batch.failed = true;
                if failure.fault.is_some() {
                    batch.fault = failure.fault;
                }
                BrowserResult::error(tool_use, failure.text)
            }
        }
    }

    /// Answers a block that a person (or a policy) refused before it ran: an error with
    /// `reason`, and the batch stops there as after any failure.
    pub fn refuse_block(
        &mut self,
        batch: &mut Batch,
        tool_use: &ToolUse,
        reason: &str,
    ) -> BrowserResult {
        if batch.failed {
            return BrowserResult::error(tool_use, BROWSER_NOT_EXECUTED);
        }
        batch.failed = true;
        BrowserResult::error(tool_use, reason)
    }

    /// Ends a batch; returns the fault, if the run must stop.
    pub fn finish_batch(&mut self, batch: Batch) -> Option<BrowserFault> {
        batch.fault
    }

    /// The member a block names, if known and enabled.
    fn resolve(&self, tool_use: &ToolUse) -> Result<Member, Failure> {
        let member = Member::from_name(&tool_use.name).ok_or_else(|| {
            Failure::text(format!(
                "unknown browser member `{}`: the toolset has {}",
                crate::errtext::name(&tool_use.name),
                members::member_list()
            ))
        })?;
        if self.config.declaration.is_enabled(member) {
            Ok(member)
        } else {
            Err(Failure::text(format!(
                "the `{member}` member is disabled in this toolset's configs"
            )))
        }
    }

    async fn execute(
        &mut self,
        tool_use: &ToolUse,
        cancel: &CancellationToken,
    ) -> Result<BrowserResult, Failure> {
        // 2. Member and input.
        let member = self.resolve(tool_use)?;
        let action = Action::parse(member, &tool_use.input, self.limits)
            .map_err(|e| Failure::text(e.to_string()))?;
        if let Action::Refuse(text) = action {
            return Err(Failure::text(text));
        }
        // 3. The state before, and what depends on it.
        let prior = read_state(&mut self.driver, cancel)
            .await
            .map_err(Failure::fault)?;
        let plan = self.plan(member, action, &prior, cancel).await?;
        // 4. Consent, on the call that does what the member means (a `file_upload`'s upload,
        // not the click that opens the chooser).
        if let Plan::Calls(calls) = &plan {
            let principal = if member == Member::FileUpload {
                calls.last()
            } else {
                calls.first()
            };
            if let Some(call) = principal {
                let repeats = calls.iter().filter(|c| *c == call).count();
                self.consent(tool_use, call, repeats, &prior, cancel)
                    .await?;
            }
        }
        // 5. The driver.
        let mut last = None;
        match &plan {
            Plan::Wait(duration) => {
                tokio::select! {
                    () = tokio::time::sleep(*duration) => {}
                    () = cancel.cancelled() => return Err(Failure::fault(BrowserFault::Cancelled)),
                }
            }
            Plan::Calls(calls) => {
                for call in calls {
                    if cancel.is_cancelled() {
                        return Err(Failure::fault(BrowserFault::Cancelled));
                    }
                    let output = dispatch(&mut self.driver, call, cancel)
                        .await
                        .map_err(|e| driver_failure(member, e))?;
                    last = Some(output);
                }
            }
        }
        if let Some(BrowserOutput::File(outcome)) = &last
            && !outcome.ok()
        {
            return Err(Failure::text(format!(
                "The upload did not complete: {}",
                outcome.to_json()
            )));
        }
        // 6. The state after, and the result.
        let post = read_state(&mut self.driver, cancel)
            .await
            .map_err(Failure::fault)?;
        let driver_member = match &plan {
            Plan::Calls(calls) => calls.first().map(BrowserCall::member),
            Plan::Wait(_) => None,
        };
        let invalid = |why: String| {
            tracing::error!(target: "hands::browser", %member, %why, "invalid driver result");
            Failure::fault(BrowserFault::InvalidResult {
                member: driver_member.unwrap_or(BrowserMember::ListTabs),
                why,
            })
        };
        let new_tab_active = post
            .active()
            .is_some_and(|tab| prior.tab(&tab.id).is_none());
        if member == Member::NewTab && !new_tab_active {
            return Err(invalid(
                "after new_tab the new tab must be the only active tab".into(),
            ));
        }
        match &last {
            Some(BrowserOutput::Read(Some(ReadResult::Structured(read)))) => {
                self.fields.remember(read);
            }
            Some(BrowserOutput::ScopedRead(scoped)) => self.fields.remember(scoped.read()),
            _ => {}
        }
        let (tab, direction) = match &plan {
            Plan::Calls(calls) => match calls.first() {
                Some(BrowserCall::Navigate { tab, .. }) => (tab.clone(), None),
                Some(BrowserCall::Scroll { direction, .. }) => (None, Some(*direction)),
                _ => (None, None),
            },
            Plan::Wait(_) => (None, None),
        };
        let context = present::Context {
            member,
            tab: tab.as_ref(),
            direction,
            post: &post,
            read_values: self.config.read_values,
        };
        let content = present::content(&context, last).map_err(invalid)?;
        Ok(BrowserResult::ok(
            tool_use,
            content,
            BrowserStateBlock::after(&prior, &post),
        ))
    }

    /// Resolves an action into driver calls, with the state before the call.
    async fn plan(
        &mut self,
        member: Member,
        action: Action,
        prior: &BrowserState,
        cancel: &CancellationToken,
    ) -> Result<Plan, Failure> {
        Ok(match action {
            Action::Call(call) => Plan::Calls(vec![call]),
            Action::Repeat { call, times } => Plan::Calls(vec![call; times as usize]),
            Action::Wait(duration) => Plan::Wait(duration),
            Action::Refuse(text) => return Err(Failure::text(text)),
            Action::Upload { target, grant, tab } => Plan::Calls(vec![
                BrowserCall::Click { target, tab },
                BrowserCall::UploadFile { grant },
            ]),
            Action::Reload { tab } => {
                let info = match &tab {
                    Some(id) => prior.tab(id),
                    None => prior.active(),
                }
                .ok_or_else(|| {
                    Failure::text(
                        "`navigate`: `tab_id` names no open tab; use a tab_id from browser_state",
                    )
                })?;
                let mut url = url::Url::parse(&info.url).map_err(|_| {
                    Failure::text("`navigate`: this tab's page cannot be reloaded; navigate to its URL instead")
                })?;
                url.set_fragment(None);
                let url = PageUrl::parse("url", url.as_str())
                    .map_err(|e| Failure::text(format!("`navigate`: {e}")))?;
                Plan::Calls(vec![BrowserCall::Navigate { url, tab }])
            }
            Action::FormInput { target, value, tab } => {
                let field = match self.fields.get(&target) {
                    Some(field) => field,
                    None => {
                        let read = BrowserCall::ReadPage {
                            filter: ReadFilter::Interactive,
                            tab: tab.clone(),
                        };
                        let output = dispatch(&mut self.driver, &read, cancel)
                            .await
                            .map_err(|e| driver_failure(member, e))?;
                        if let BrowserOutput::Read(Some(ReadResult::Structured(read))) = &output {
                            self.fields.remember(read);
                        }
                        self.fields
                            .get(&target)
                            .ok_or_else(|| Failure::text(forms::no_field(&target)))?
                    }
                };
                let call = forms::call_for(field, target, value, tab).map_err(Failure::text)?;
                Plan::Calls(vec![call])
            }
        })
    }

    /// Asks the URL policy (for a URL to open) and then `confirm`, as the member needs; any
    /// answer but an explicit allow and approve refuses the block.
    async fn consent(
        &self,
        tool_use: &ToolUse,
        call: &BrowserCall,
        n_calls: usize,
        prior: &BrowserState,
        cancel: &CancellationToken,
    ) -> Result<(), Failure> {
        let driver_member = call.member();
        let need = consent(driver_member);
        if need == Consent::None {
            return Ok(());
        }
        let mut arguments = call.arguments();
        if n_calls > 1 {
            arguments["repeat"] = json!(n_calls);
        }
        let context = ConfirmContext {
            member: driver_member,
            arguments,
            state: Some(StateView::new(prior, StateFormat::ObservationV1)),
            call_id: tool_use.id.clone(),
            phase: ConfirmPhase::BeforeAction,
        };
        let url = match call {
            BrowserCall::Navigate { url, .. } => Some(url),
            BrowserCall::NewTab { url } => url.as_ref(),
            _ => None,
        };
        if let Some(url) = url {
            let verdict = ask_url_policy(
                self.config.url_policy.as_ref(),
                context.clone(),
                url.url().clone(),
                cancel,
            )
            .await;
            if cancel.is_cancelled() {
                return Err(Failure::fault(BrowserFault::Cancelled));
            }
            if verdict != UrlVerdict::Allow {
                return Err(Failure::text(BROWSER_URL_DENIED));
            }
        }
        let approval = ask_confirm(self.config.confirm.as_ref(), context, cancel).await;
        if cancel.is_cancelled() {
            return Err(Failure::fault(BrowserFault::Cancelled));
        }
        if approval != Approval::Approve {
            return Err(Failure::text(BROWSER_ACTION_DENIED));
        }
        Ok(())
    }
}
