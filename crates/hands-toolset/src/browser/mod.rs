//! The browser toolset of the driver spec, exposed as function tools (`browser_click`, …) over any
//! [`Browser`] driver: member selection, argument rules, `confirm`, the URL policy,
//! `confirm_reads`, the tab state the model may see, failures, and the session lifecycle.
//!
//! One call runs in this order (spec: openai-browser-desktop-drivers, "Aprobar acciones y
//! administrar la sesión", "Restringir las URL", "Seleccionar métodos", "Manejar fallos"):
//! 1. a call of a member that is not enabled (or not a browser tool) is refused before anything
//!    is read or asked;
//! 2. the arguments are parsed ([`parse`]); a refusal is the call's error;
//! 3. a member under `confirm_reads` asks `confirm` with `phase: "before_read"` and no state,
//!    before the driver reads anything; a denial answers [`BROWSER_READ_REFUSED`] with no state;
//! 4. otherwise, a member that needs consent reads the prior state (as the model would see it),
//!    asks the URL policy (`navigate`, and `new_tab` with a URL) and then `confirm`; each gets an
//!    independent copy of `{member, arguments, state, call_id}`;
//! 5. the driver runs the call with the call's cancellation token;
//! 6. the state is read again and sent with the result — after failed calls too. A state that
//!    cannot be read, an invalid driver result or a vanished browser stops the run
//!    ([`BrowserFault`]).
//!
//! Every state sent carries the observation block ([`observation`]: what changed since the
//! last result). The answers that carry no state are the spec's and the SDK's: a member not
//! enabled ("Rechaza las llamadas deshabilitadas antes de leer el estado"), a protected read
//! refused ("sin leer ni exponer el estado"), a busy or closed toolset, and — hands being
//! stricter than the SDK here — anything about a `confirm_reads` member before its read was
//! approved (bad arguments, a skip). Bad arguments of any other member are answered with the
//! current state, as the SDK does ("El SDK devuelve el estado actual después de las
//! operaciones ordinarias, incluso si fallan"). After any call that is not ok, the remaining
//! browser calls of the same response are answered [`BROWSER_CALL_SKIPPED`] with the current
//! state and not run, so the model chooses again.

pub mod consent;
pub mod declaration;
pub mod observation;
pub mod output;
pub mod parse;
pub mod state;
pub mod url_policy;

#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use hands_core::CancellationToken;
use hands_core::browser::driver::ReadResult;
use hands_core::browser::driver::dispatch;
use hands_core::browser::read::{Omitted, ReadError};
use hands_core::browser::{
    Browser, BrowserCall, BrowserMember, BrowserOutput, BrowserRead, BrowserScopedRead,
    BrowserState, DriverError, FileOutcome, MemberSet,
};
use hands_core::image::EncodedImage;
use serde_json::Value;
use tokio::sync::watch;

use crate::strings::{
    BROWSER_ACTION_DENIED, BROWSER_BUSY, BROWSER_CALL_SKIPPED, BROWSER_CANCELLED, BROWSER_CLOSED,
    BROWSER_FAILED, BROWSER_FOCUS_INPUT_REFUSED, BROWSER_INTERRUPTED, BROWSER_NOT_ENABLED,
    BROWSER_READ_REFUSED, BROWSER_STATE_UNAVAILABLE, BROWSER_UNSUPPORTED, BROWSER_URL_DENIED,
};
pub use consent::{
    Approval, CallbackError, Confirm, ConfirmContext, ConfirmFn, ConfirmPhase, Consent, UrlPolicy,
    UrlPolicyFn, UrlVerdict, consent, is_read,
};
pub use declaration::ToolDeclaration;
use observation::Observer;
pub use output::{CallOutput, ImageDetail, TypedRead};
pub use parse::{ArgumentError, member_of_tool, parse_call, tool_name};
pub use state::{StateFormat, StateView, TabView};
pub use url_policy::{OriginAllowList, OriginPattern, PatternError, UrlDecision};

/// Whether field values reach the model in reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ReadValues {
    /// Values and options as the driver reports them (it never reports passwords).
    #[default]
    AsReported,
    /// Strip `value` and `options` from every element, adding the `value` omitted code, for an
    /// application whose privacy policy does not let the model see field values.
    ///
    /// Spec: openai-browser-desktop-drivers, "Incluye el value de un campo o sus options … solo si
    /// tu aplicación permite que el modelo los vea."
    Withheld,
}

/// Whether input may go to whatever element has focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FocusedInput {
    /// `type` with a null target and `key` act on the focused element.
    #[default]
    Allowed,
    /// Consent is bound to a target: `key` cannot be selected and `type` with a null target is
    /// refused.
    ///
    /// Spec: openai-browser-desktop-drivers, "En ese flujo, deshabilita key y rechaza type si el
    /// destino es nulo, ya que ambos usan el foco actual."
    Refused,
}

/// How a toolset is built. The selection follows the spec: the implemented defaults, or an
/// explicit `members` list, or the defaults plus `additional_members` — never both lists.
#[derive(Clone, Default)]
pub struct BrowserToolsetConfig {
    /// Exactly these members (names unique, each predefined and implemented; empty exposes
    /// nothing).
    pub members: Option<Vec<String>>,
    /// The implemented defaults plus these (each implemented).
    pub additional_members: Option<Vec<String>>,
    /// Read members that need `confirm` before anything is read (see [`is_read`]); names that
    /// are not enabled are ignored.
    pub confirm_reads: Vec<String>,
    /// Approves state-changing and diagnostic members; required when any is selected.
    pub confirm: Option<Arc<dyn Confirm>>,
    /// Allows `navigate` / `new_tab` URLs; required when either is selected.
    pub url_policy: Option<Arc<dyn UrlPolicy>>,
    /// Which state format the model sees (default: observation metadata V1).
    pub state_format: StateFormat,
    /// `detail` of screenshot and zoom images (default: none sent).
    pub image_detail: Option<ImageDetail>,
    /// Whether field values reach the model.
    pub read_values: ReadValues,
    /// Whether input may go to the focused element.
    pub focused_input: FocusedInput,
}

impl fmt::Debug for BrowserToolsetConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BrowserToolsetConfig")
            .field("members", &self.members)
            .field("additional_members", &self.additional_members)
            .field("confirm_reads", &self.confirm_reads)
            .field("confirm", &self.confirm.is_some())
            .field("url_policy", &self.url_policy.is_some())
            .field("state_format", &self.state_format)
            .field("image_detail", &self.image_detail)
            .field("read_values", &self.read_values)
            .field("focused_input", &self.focused_input)
            .finish()
    }
}

/// Why a toolset cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// Both `members` and `additional_members`.
    #[error("use either `members` or `additional_members`, not both")]
    BothLists,
    /// A name that is not one of the 28 members.
    #[error("`{list}` names `{name}`, which is not a browser member")]
    UnknownMember {
        /// Which list.
        list: &'static str,
        /// The name.
        name: String,
    },
    /// A name listed twice.
    #[error("`{list}` names `{name}` twice; names must be unique")]
    Duplicate {
        /// Which list.
        list: &'static str,
        /// The name.
        name: String,
    },
    /// A selected member the driver does not implement.
    #[error("`{0}` is selected but the driver does not implement it")]
    Unimplemented(BrowserMember),
    /// A member that needs `confirm`, selected without it.
    #[error("`{0}` changes the browser or reads diagnostics: provide a `confirm` callback")]
    MissingConfirm(BrowserMember),
    /// `navigate` / `new_tab` selected without a URL policy.
    #[error("`{0}` opens URLs: provide a `url_policy`")]
    MissingUrlPolicy(BrowserMember),
    /// A `confirm_reads` entry that is not a read member.
    #[error("`confirm_reads` names `{0}`, which is not a read member")]
    NotARead(BrowserMember),
    /// A `confirm_reads` entry that is not a selected member (the SDK refuses it too: a
    /// protection that guards nothing is a configuration mistake, not a no-op).
    #[error(
        "`confirm_reads` names `{0}`, which is not selected: select it, or leave it out of `confirm_reads`"
    )]
    ReadNotSelected(BrowserMember),
    /// `key` selected while focused input is refused.
    #[error(
        "`key` acts on the focused element, which `FocusedInput::Refused` forbids: leave it out"
    )]
    KeyWithoutFocus,
}

/// A harness fault: the run must stop. Every call still has its output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BrowserFault {
    /// The browser or its connection is gone.
    #[error("the browser is unavailable: {0}")]
    Gone(String),
    /// A required state read failed.
    #[error("the browser state could not be read: {0}")]
    StateUnavailable(String),
    /// The driver returned a result the spec does not allow.
    #[error("the driver returned an invalid result for `{member}`: {why}")]
    InvalidResult {
        /// The member.
        member: BrowserMember,
        /// What was wrong.
        why: String,
    },
    /// The run was cancelled.
    #[error("the run was cancelled")]
    Cancelled,
    /// The toolset was closed.
    #[error("the browser toolset is closed")]
    Closed,
}

/// One function call for the toolset, as a model sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowserToolCall {
    /// The call id (`call_…` for OpenAI, `toolu_…` for Anthropic).
    pub call_id: String,
    /// The tool name, `browser_<member>`.
    pub name: String,
    arguments: Result<Value, String>,
    /// The member, when the caller named it typed (not a model: MCP, Python).
    member: Option<BrowserMember>,
}

impl BrowserToolCall {
    /// An OpenAI `function_call`: `arguments` is a JSON text (invalid JSON is reported to the
    /// model as the call's error).
    pub fn from_text(call_id: &str, name: &str, arguments: &str) -> BrowserToolCall {
        BrowserToolCall {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            arguments: serde_json::from_str(arguments).map_err(|e| e.to_string()),
            member: None,
        }
    }

    /// The arguments as received: the JSON value, or why the text was not JSON.
    pub fn arguments(&self) -> Result<&Value, &str> {
        self.arguments.as_ref().map_err(String::as_str)
    }

    /// An Anthropic `tool_use`: `input` is already a JSON value.
    pub fn from_value(call_id: &str, name: &str, input: Value) -> BrowserToolCall {
        BrowserToolCall {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            arguments: Ok(input),
            member: None,
        }
    }

    /// A call of `member` by a caller that is not a model (an MCP client, Python): the member is
    /// typed, never a tool name to be read back; `call_id` is the caller's own request id.
    pub fn for_member(call_id: &str, member: BrowserMember, arguments: Value) -> BrowserToolCall {
        BrowserToolCall {
            call_id: call_id.to_owned(),
            name: tool_name(member),
            arguments: Ok(arguments),
            member: Some(member),
        }
    }
}

/// The answer to one response's browser calls.
#[derive(Debug)]
pub struct ResponseOutcome {
    /// One output per call, in call order.
    pub outputs: Vec<CallOutput>,
    /// Set when the run must stop.
    pub fault: Option<BrowserFault>,
}

/// What `close()` found, on a browser toolset ([`BrowserToolset::close`]) or a runner
/// (`hands_runner::Runner::close`, which re-exports this type): one status for both.
///
/// Spec: openai-browser-desktop-drivers, "Cerrar y cancelar operaciones" (`close()` → `closed`
/// or `draining`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CloseStatus {
    /// Nothing is active (no call of the toolset, no run of the runner): nothing more will act
    /// through it.
    Closed,
    /// A call or run started before is still active and may still produce effects: wait for it
    /// (a toolset's [`BrowserToolset::drained`], a runner's `run` returning) before closing the
    /// driver or handing the session on.
    Draining,
}

impl CloseStatus {
    /// `closed` or `draining`, as the SDK spells it.
    pub const fn name(self) -> &'static str {
        match self {
            CloseStatus::Closed => "closed",
            CloseStatus::Draining => "draining",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Life {
    closed: bool,
    active: bool,
}

enum Refusal {
    Busy,
    Closed,
}

/// Closes a toolset from anywhere (another task, or a `confirm` callback during a call) without
/// waiting for the active call.
#[derive(Debug, Clone)]
pub struct CloseHandle {
    life: Arc<watch::Sender<Life>>,
}

impl CloseHandle {
    /// Rejects new operations from now on; says whether a call is still active.
    ///
    /// Spec: openai-browser-desktop-drivers, "Cerrar y cancelar operaciones".
    pub fn close(&self) -> CloseStatus {
        let mut status = CloseStatus::Closed;
        self.life.send_modify(|life| {
            life.closed = true;
            if life.active {
                status = CloseStatus::Draining;
            }
        });
        status
    }

    /// `None` while open; otherwise closed or draining now.
    pub fn status(&self) -> Option<CloseStatus> {
        let life = *self.life.borrow();
        life.closed.then_some(if life.active {
            CloseStatus::Draining
        } else {
            CloseStatus::Closed
        })
    }
}

/// Clears the active flag when a response's calls end, however they end.
struct ActiveGuard<'a> {
    life: &'a watch::Sender<Life>,
}

impl Drop for ActiveGuard<'_> {
    fn drop(&mut self) {
        self.life.send_modify(|life| life.active = false);
    }
}

/// The browser toolset over a driver. Calls take `&self`: a call that overlaps another on the
/// same toolset is refused as busy rather than queued.
pub struct BrowserToolset<B> {
    /// The driver, locked for the length of one response's calls. The toolset never closes it:
    /// its owner does, after [`BrowserToolset::into_driver`] or once the toolset is drained.
    driver: tokio::sync::Mutex<B>,
    enabled: MemberSet,
    confirm_reads: MemberSet,
    confirm: Option<Arc<dyn Confirm>>,
    url_policy: Option<Arc<dyn UrlPolicy>>,
    state_format: StateFormat,
    image_detail: Option<ImageDetail>,
    read_values: ReadValues,
    focused_input: FocusedInput,
    /// What changed between the states read; only touched while the driver is locked.
    observer: std::sync::Mutex<Observer>,
    /// Open/closed and whether a call is active; shared with every [`CloseHandle`].
    life: Arc<watch::Sender<Life>>,
}

impl<B> fmt::Debug for BrowserToolset<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BrowserToolset")
            .field(
                "enabled",
                &self
                    .enabled
                    .iter()
                    .map(BrowserMember::name)
                    .collect::<Vec<_>>(),
            )
            .field("life", &*self.life.borrow())
            .finish_non_exhaustive()
    }
}

/// Resolves a list of names into members, refusing unknown and repeated names.
fn members_of(list: &'static str, names: &[String]) -> Result<Vec<BrowserMember>, ConfigError> {
    let mut members = Vec::with_capacity(names.len());
    for name in names {
        let member = BrowserMember::from_name(name).ok_or_else(|| ConfigError::UnknownMember {
            list,
            name: name.clone(),
        })?;
        if members.contains(&member) {
            return Err(ConfigError::Duplicate {
                list,
                name: name.clone(),
            });
        }
        members.push(member);
    }
    Ok(members)
}

/// The members a configuration exposes over a driver that implements `implemented`
/// (`list_tabs` always counts as implemented: it is derived from `state()`).
///
/// Spec: openai-browser-desktop-drivers, "Seleccionar métodos".
pub fn select_members(
    members: Option<&[String]>,
    additional_members: Option<&[String]>,
    implemented: MemberSet,
) -> Result<MemberSet, ConfigError> {
    let mut implemented = implemented;
    implemented.insert(BrowserMember::ListTabs);
    let check = |list: Vec<BrowserMember>| -> Result<MemberSet, ConfigError> {
        match list.iter().find(|m| !implemented.contains(**m)) {
            Some(m) => Err(ConfigError::Unimplemented(*m)),
            None => Ok(list.into_iter().collect()),
        }
    };
    let defaults = || {
        BrowserMember::defaults()
            .filter(|m| implemented.contains(*m))
            .collect::<MemberSet>()
    };
    match (members, additional_members) {
        (Some(_), Some(_)) => Err(ConfigError::BothLists),
        (Some(names), None) => check(members_of("members", names)?),
        (None, Some(names)) => {
            let mut set = defaults();
            for m in check(members_of("additional_members", names)?)?.iter() {
                set.insert(m);
            }
            Ok(set)
        }
        (None, None) => Ok(defaults()),
    }
}

impl<B: Browser> BrowserToolset<B> {
    /// A toolset over `driver`. The selection is copied now; the tool order is always
    /// [`BrowserMember::ALL`]'s.
    pub fn new(driver: B, config: BrowserToolsetConfig) -> Result<BrowserToolset<B>, ConfigError> {
        let enabled = select_members(
            config.members.as_deref(),
            config.additional_members.as_deref(),
            driver.implemented(),
        )?;
        let mut confirm_reads = MemberSet::EMPTY;
        for member in members_of("confirm_reads", &config.confirm_reads)? {
            if !is_read(member) {
                return Err(ConfigError::NotARead(member));
            }
            if !enabled.contains(member) {
                return Err(ConfigError::ReadNotSelected(member));
            }
            confirm_reads.insert(member);
        }
        for member in enabled.iter() {
            let needs = consent(member);
            if (needs != Consent::None || confirm_reads.contains(member))
                && config.confirm.is_none()
            {
                return Err(ConfigError::MissingConfirm(member));
            }
            if needs == Consent::UrlPolicyThenConfirm && config.url_policy.is_none() {
                return Err(ConfigError::MissingUrlPolicy(member));
            }
        }
        if config.focused_input == FocusedInput::Refused && enabled.contains(BrowserMember::Key) {
            return Err(ConfigError::KeyWithoutFocus);
        }
        let (life, _) = watch::channel(Life::default());
        Ok(BrowserToolset {
            driver: tokio::sync::Mutex::new(driver),
            enabled,
            confirm_reads,
            confirm: config.confirm,
            url_policy: config.url_policy,
            state_format: config.state_format,
            image_detail: config.image_detail,
            read_values: config.read_values,
            focused_input: config.focused_input,
            observer: std::sync::Mutex::new(Observer::new()),
            life: Arc::new(life),
        })
    }

    /// The enabled members, in tool order.
    pub fn enabled(&self) -> MemberSet {
        self.enabled
    }

    /// The enabled members under `confirm_reads`.
    pub fn confirm_reads(&self) -> MemberSet {
        self.confirm_reads
    }

    /// The member an enabled tool name calls; `None` for any other name.
    pub fn member(&self, tool_name: &str) -> Option<BrowserMember> {
        member_of_tool(tool_name).filter(|m| self.enabled.contains(*m))
    }

    /// The enabled member a call names: its typed member, else its tool name's.
    fn member_of(&self, call: &BrowserToolCall) -> Option<BrowserMember> {
        match call.member {
            Some(member) => Some(member).filter(|m| self.enabled.contains(*m)),
            None => self.member(&call.name),
        }
    }

    /// Whether a function call is this toolset's (an enabled `browser_<member>`).
    pub fn owns(&self, tool_name: &str) -> bool {
        self.member(tool_name).is_some()
    }

    /// The declarations of the enabled members, in tool order.
    pub fn declarations(&self) -> Vec<ToolDeclaration> {
        self.enabled.iter().map(ToolDeclaration::new).collect()
    }

    /// The enabled members as OpenAI Responses function tools.
    pub fn openai_tools(&self) -> Vec<Value> {
        self.declarations()
            .iter()
            .map(ToolDeclaration::to_openai)
            .collect()
    }

    /// The enabled members as Anthropic custom tools.
    pub fn anthropic_tools(&self) -> Vec<Value> {
        self.declarations()
            .iter()
            .map(ToolDeclaration::to_anthropic)
            .collect()
    }

    /// Checks the names of the run's other function tools: they may start with `browser_` but
    /// must not equal an enabled browser tool's name. Returns the first clash.
    ///
    /// Spec: openai-browser-desktop-drivers, "Los nombres de funciones ordinarias pueden empezar
    /// con browser_, pero no deben coincidir con el nombre de una herramienta de navegador
    /// habilitada."
    pub fn name_clash<'a>(
        &self,
        function_names: impl IntoIterator<Item = &'a str>,
    ) -> Option<&'a str> {
        function_names.into_iter().find(|name| self.owns(name))
    }

    /// A handle that closes this toolset from elsewhere.
    pub fn close_handle(&self) -> CloseHandle {
        CloseHandle {
            life: Arc::clone(&self.life),
        }
    }

    /// Rejects new operations; `Closed` when no call is active, `Draining` while one may still
    /// produce effects. The driver stays open: its owner closes it.
    pub fn close(&self) -> CloseStatus {
        self.close_handle().close()
    }

    /// `None` while open; otherwise closed or draining now.
    pub fn status(&self) -> Option<CloseStatus> {
        self.close_handle().status()
    }

    /// Waits until no call is active.
    pub async fn drained(&self) {
        let mut rx = self.life.subscribe();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = rx.wait_for(|life| !life.active).await;
    }

    /// Gives the driver back to its owner.
    pub fn into_driver(self) -> B {
        self.driver.into_inner()
    }

    fn begin(&self) -> Result<ActiveGuard<'_>, Refusal> {
        let mut result = Ok(());
        self.life.send_if_modified(|life| {
            if life.closed {
                result = Err(Refusal::Closed);
                false
            } else if life.active {
                result = Err(Refusal::Busy);
                false
            } else {
                life.active = true;
                true
            }
        });
        result.map(|()| ActiveGuard { life: &self.life })
    }

    fn is_closed(&self) -> bool {
        self.life.borrow().closed
    }

    /// The `detail` this toolset gives screenshot and zoom images.
    pub fn image_detail(&self) -> Option<ImageDetail> {
        self.image_detail
    }

    /// Answers a call that is not run because an earlier browser call of the same response was
    /// not ok ([`BROWSER_CALL_SKIPPED`]), with the current state, as the SDK does — for callers
    /// that hand the toolset one call at a time. Without a state for a call this toolset does
    /// not run, or whose read needs approval first (`confirm_reads`).
    pub async fn skip(
        &self,
        call: &BrowserToolCall,
        cancel: &CancellationToken,
    ) -> (CallOutput, Option<BrowserFault>) {
        let _active = match self.begin() {
            Ok(guard) => guard,
            Err(_) => return (CallOutput::skipped(&call.call_id), None),
        };
        let mut driver = self.driver.lock().await;
        self.skip_one(&mut *driver, call, cancel).await
    }

    /// [`BrowserToolset::skip`] with the driver locked.
    async fn skip_one(
        &self,
        driver: &mut B,
        call: &BrowserToolCall,
        cancel: &CancellationToken,
    ) -> (CallOutput, Option<BrowserFault>) {
        let id = call.call_id.as_str();
        match self.member_of(call) {
            Some(member) if !self.confirm_reads.contains(member) && !cancel.is_cancelled() => {
                match self.read_state(driver, cancel, true).await {
                    Ok(state) => (CallOutput::failure(id, BROWSER_CALL_SKIPPED, &state), None),
                    Err(fault) => (
                        CallOutput::refusal(id, BROWSER_STATE_UNAVAILABLE),
                        Some(fault),
                    ),
                }
            }
            _ => (CallOutput::skipped(id), None),
        }
    }

    /// Runs one call (a response with a single browser call).
    pub async fn call(
        &self,
        call: &BrowserToolCall,
        cancel: &CancellationToken,
    ) -> (CallOutput, Option<BrowserFault>) {
        let mut outcome = self.run_calls(std::slice::from_ref(call), cancel).await;
        let output = outcome
            .outputs
            .pop()
            .unwrap_or_else(|| CallOutput::refusal(&call.call_id, BROWSER_FAILED));
        (output, outcome.fault)
    }

    /// Runs the browser calls of one model response in order and answers each. After a call that
    /// is not ok, the rest are answered [`BROWSER_CALL_SKIPPED`] without running; after a fault,
    /// the rest are skipped too and the fault is returned.
    pub async fn run_calls(
        &self,
        calls: &[BrowserToolCall],
        cancel: &CancellationToken,
    ) -> ResponseOutcome {
        let all = |text: &str| -> Vec<CallOutput> {
            calls
                .iter()
                .map(|c| CallOutput::refusal(&c.call_id, text))
                .collect()
        };
        let _active = match self.begin() {
            Ok(guard) => guard,
            Err(Refusal::Busy) => {
                return ResponseOutcome {
                    outputs: all(BROWSER_BUSY),
                    fault: None,
                };
            }
            Err(Refusal::Closed) => {
                return ResponseOutcome {
                    outputs: all(BROWSER_CLOSED),
                    fault: Some(BrowserFault::Closed),
                };
            }
        };
        let mut driver = self.driver.lock().await;
        let mut outputs = Vec::with_capacity(calls.len());
        let mut fault = None;
        let mut failed = false;
        for call in calls {
            if fault.is_some() {
                outputs.push(CallOutput::skipped(&call.call_id));
                continue;
            }
            if failed {
                let (output, call_fault) = self.skip_one(&mut *driver, call, cancel).await;
                fault = call_fault;
                outputs.push(output);
                continue;
            }
            if self.is_closed() {
                outputs.push(CallOutput::refusal(&call.call_id, BROWSER_CLOSED));
                fault = Some(BrowserFault::Closed);
                continue;
            }
            if cancel.is_cancelled() {
                outputs.push(CallOutput::refusal(&call.call_id, BROWSER_CANCELLED));
                fault = Some(BrowserFault::Cancelled);
                continue;
            }
            let start = Instant::now();
            let (output, call_fault) = self.run_one(&mut *driver, call, cancel).await;
            tracing::info!(target: "hands::browser", call_id = %call.call_id, tool = %call.name,
                ok = output.ok(), fault = call_fault.is_some(),
                ms = start.elapsed().as_secs_f64() * 1e3, "browser call");
            failed = !output.ok();
            fault = call_fault;
            outputs.push(output);
        }
        ResponseOutcome { outputs, fault }
    }

    async fn run_one(
        &self,
        driver: &mut B,
        tool_call: &BrowserToolCall,
        cancel: &CancellationToken,
    ) -> CallEnd {
        let id = tool_call.call_id.as_str();
        // 1. Enabled? Nothing is read or asked for a disabled member.
        let Some(member) = self.member_of(tool_call) else {
            return refusal(id, BROWSER_NOT_ENABLED);
        };
        // 2. Arguments. A refusal here carries the current state, except for a read that
        // needs approval before anything is read.
        let call = match self.arguments(member, tool_call) {
            Ok(call) => call,
            Err(text) if self.confirm_reads.contains(member) => return refusal(id, &text),
            Err(text) => {
                return match self.read_state(driver, cancel, true).await {
                    Ok(state) => (CallOutput::failure(id, text, &state), None),
                    Err(fault) => (
                        CallOutput::refusal(id, BROWSER_STATE_UNAVAILABLE),
                        Some(fault),
                    ),
                };
            }
        };
        // 3./4. Consent.
        let denied = if self.confirm_reads.contains(member) {
            self.confirm_read(member, &call, id, cancel).await
        } else if consent(member) != Consent::None {
            self.confirm_action(driver, member, &call, id, cancel).await
        } else {
            None
        };
        if let Some(end) = denied {
            return end;
        }
        // 5. The driver.
        let answer = match self.drive(driver, member, &call, id, cancel).await {
            Ok(answer) => answer,
            Err(end) => return end,
        };
        // 6. The state after the call, failed calls included.
        let state = match self.read_state(driver, cancel, true).await {
            Ok(state) => state,
            Err(fault) => {
                return (
                    CallOutput::refusal(id, BROWSER_STATE_UNAVAILABLE),
                    Some(fault),
                );
            }
        };
        (self.output(id, answer, &state), None)
    }

    /// Step 2 of a call: its arguments parsed, or the text of their refusal (a `browser_type`
    /// without a target is refused when the focused input is).
    fn arguments(
        &self,
        member: BrowserMember,
        tool_call: &BrowserToolCall,
    ) -> Result<BrowserCall, String> {
        let parsed = match &tool_call.arguments {
            Ok(value) => parse_call(member, value),
            Err(why) => Err(ArgumentError::Json {
                member,
                why: why.clone(),
            }),
        };
        match parsed {
            Err(e) => Err(e.to_string()),
            Ok(BrowserCall::Type { target: None, .. })
                if self.focused_input == FocusedInput::Refused =>
            {
                Err(BROWSER_FOCUS_INPUT_REFUSED.to_owned())
            }
            Ok(call) => Ok(call),
        }
    }

    /// Step 3 for a read that needs approval before anything is read: how the call ends when
    /// it is not approved, `None` when it goes on.
    async fn confirm_read(
        &self,
        member: BrowserMember,
        call: &BrowserCall,
        id: &str,
        cancel: &CancellationToken,
    ) -> Option<CallEnd> {
        let context = ConfirmContext {
            member,
            arguments: call.arguments(),
            state: None,
            call_id: id.to_owned(),
            phase: ConfirmPhase::BeforeRead,
        };
        let approval = self.ask_confirm(context, cancel).await;
        if cancel.is_cancelled() {
            return Some(cancelled(id));
        }
        (approval != Approval::Approve).then(|| refusal(id, BROWSER_READ_REFUSED))
    }

    /// Step 4 for an action that needs consent: the state before it, the URL policy for a
    /// navigation, then `confirm`. How the call ends when it may not run, `None` when it goes
    /// on.
    async fn confirm_action(
        &self,
        driver: &mut B,
        member: BrowserMember,
        call: &BrowserCall,
        id: &str,
        cancel: &CancellationToken,
    ) -> Option<CallEnd> {
        let prior = match self.read_state(driver, cancel, false).await {
            Ok(state) => state,
            Err(fault) => {
                return Some((
                    CallOutput::refusal(id, BROWSER_STATE_UNAVAILABLE),
                    Some(fault),
                ));
            }
        };
        let context = ConfirmContext {
            member,
            arguments: call.arguments(),
            state: Some(prior.clone()),
            call_id: id.to_owned(),
            phase: ConfirmPhase::BeforeAction,
        };
        if let Some(end) = self.check_url(&context, call, &prior, id, cancel).await {
            return Some(end);
        }
        let approval = self.ask_confirm(context, cancel).await;
        if cancel.is_cancelled() {
            return Some(cancelled(id));
        }
        (approval != Approval::Approve).then(|| {
            let state = self.observe_again(&prior);
            (CallOutput::failure(id, BROWSER_ACTION_DENIED, &state), None)
        })
    }

    /// The URL policy's say on a call that opens a URL (`navigate`, `new_tab` with a URL): how
    /// the call ends when the URL is denied (the refused navigation recorded), `None` when it is
    /// allowed or the call opens none.
    async fn check_url(
        &self,
        context: &ConfirmContext,
        call: &BrowserCall,
        prior: &StateView,
        id: &str,
        cancel: &CancellationToken,
    ) -> Option<CallEnd> {
        let url = match call {
            BrowserCall::Navigate { url, .. } => Some(url),
            BrowserCall::NewTab { url } => url.as_ref(),
            _ => None,
        }?;
        let verdict = self
            .ask_url_policy(context.clone(), url.url().clone(), cancel)
            .await;
        if cancel.is_cancelled() {
            return Some(cancelled(id));
        }
        if verdict == UrlVerdict::Allow {
            return None;
        }
        let tab = match call {
            BrowserCall::Navigate { tab, .. } => tab
                .clone()
                .or_else(|| prior.tabs.iter().find(|t| t.active).map(|t| t.id.clone())),
            _ => None,
        };
        self.observer().refused(tab);
        let state = self.observe_again(prior);
        Some((CallOutput::failure(id, BROWSER_URL_DENIED, &state), None))
    }

    /// Step 5: the driver runs the call. A refusal or failure the model may read is an
    /// [`Answer::Error`]; a gone browser, a cancellation or an invalid result ends the call.
    async fn drive(
        &self,
        driver: &mut B,
        member: BrowserMember,
        call: &BrowserCall,
        id: &str,
        cancel: &CancellationToken,
    ) -> Result<Answer, CallEnd> {
        Ok(match dispatch(driver, call, cancel).await {
            Ok(output) => match self.present(member, output) {
                Ok(answer) => answer,
                Err(why) => {
                    tracing::error!(target: "hands::browser", %member, %why, "invalid driver result");
                    return Err((
                        CallOutput::refusal(id, BROWSER_FAILED),
                        Some(BrowserFault::InvalidResult { member, why }),
                    ));
                }
            },
            Err(DriverError::Refused(e)) => Answer::Error(e.text().to_owned()),
            Err(DriverError::Unsupported(m)) => {
                tracing::warn!(target: "hands::browser", member = %m, "driver does not implement a selected member");
                Answer::Error(BROWSER_UNSUPPORTED.to_owned())
            }
            Err(DriverError::Gone(detail)) => {
                tracing::error!(target: "hands::browser", %member, %detail, "browser gone");
                return Err((
                    CallOutput::refusal(id, BROWSER_FAILED),
                    Some(BrowserFault::Gone(detail)),
                ));
            }
            Err(DriverError::Cancelled) => return Err(interrupted(id)),
            Err(other) => {
                // `Failed`, and any kind added later: the detail stays in the logs.
                tracing::warn!(target: "hands::browser", %member, error = %other, "browser operation failed");
                Answer::Error(BROWSER_FAILED.to_owned())
            }
        })
    }

    /// Step 6: what the model reads, the answer with the state after the call.
    fn output(&self, id: &str, answer: Answer, state: &StateView) -> CallOutput {
        match answer {
            Answer::Result(result, image) => {
                let output = CallOutput::success(id, true, result, state);
                match image {
                    Some(image) => output.with_image(image, self.image_detail),
                    None => output,
                }
            }
            Answer::Read(result, read) => {
                CallOutput::success(id, true, Some(result), state).with_read(read)
            }
            Answer::File(outcome) => {
                CallOutput::success(id, outcome.ok(), Some(outcome.to_json()), state)
            }
            Answer::Error(text) => CallOutput::failure(id, text, state),
        }
    }

    /// Asks `confirm` (see [`ask_confirm`]).
    async fn ask_confirm(&self, context: ConfirmContext, cancel: &CancellationToken) -> Approval {
        ask_confirm(self.confirm.as_ref(), context, cancel).await
    }

    /// Asks the URL policy (see [`ask_url_policy`]).
    async fn ask_url_policy(
        &self,
        context: ConfirmContext,
        url: url::Url,
        cancel: &CancellationToken,
    ) -> UrlVerdict {
        ask_url_policy(self.url_policy.as_ref(), context, url, cancel).await
    }

    /// Reads the state, records what changed, and gives the view the model (`send`) or
    /// `confirm` sees.
    async fn read_state(
        &self,
        driver: &mut B,
        cancel: &CancellationToken,
        send: bool,
    ) -> Result<StateView, BrowserFault> {
        let state = read_state(driver, cancel).await?;
        let mut observer = self.observer();
        observer.record(&state);
        Ok(StateView::observed(
            &state,
            self.state_format,
            &mut observer,
            send,
        ))
    }

    /// The state read before a refusal, sent with it: nothing ran since, so the tabs stand;
    /// the observation is taken again, now to be sent (with a refused navigation, if one was
    /// just recorded).
    fn observe_again(&self, prior: &StateView) -> StateView {
        let mut view = prior.clone();
        if let Some(before) = &prior.observation {
            view.observation = Some(self.observer().observation(before.title_truncated, true));
        }
        view
    }

    /// The observation log (never held across an await).
    fn observer(&self) -> std::sync::MutexGuard<'_, Observer> {
        self.observer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Checks a driver's result against the spec and turns it into what the model sees.
    fn present(&self, member: BrowserMember, output: BrowserOutput) -> Result<Answer, String> {
        let json = |value: Result<Value, serde_json::Error>| value.map_err(|e| e.to_string());
        Ok(match output {
            BrowserOutput::Text(text) => Answer::Result(text.map(Value::String), None),
            BrowserOutput::Read(None) => Answer::Result(None, None),
            BrowserOutput::Read(Some(ReadResult::Text(text))) => {
                Answer::Result(Some(Value::String(text)), None)
            }
            BrowserOutput::Read(Some(ReadResult::Structured(read))) => {
                if matches!(
                    member,
                    BrowserMember::GetPageText | BrowserMember::ReadDiagnostics
                ) && !read.elements().is_empty()
                {
                    return Err(format!(
                        "a structured {member} result must have an empty elements array, got {}",
                        read.elements().len()
                    ));
                }
                let read = self.filter_read(read).map_err(|e| e.to_string())?;
                Answer::Read(json(serde_json::to_value(&read))?, TypedRead::Page(read))
            }
            BrowserOutput::ScopedRead(scoped) => {
                let read = self
                    .filter_read(scoped.read().clone())
                    .and_then(|read| BrowserScopedRead::new(read, scoped.scopes().to_vec()))
                    .map_err(|e| e.to_string())?;
                Answer::Read(json(serde_json::to_value(&read))?, TypedRead::Scoped(read))
            }
            BrowserOutput::Image(image) => {
                if image.base64.is_empty() {
                    return Err("an image result needs a non-empty image source".into());
                }
                Answer::Result(None, Some(image))
            }
            BrowserOutput::Script(text) => Answer::Result(Some(Value::String(text)), None),
            BrowserOutput::File(outcome) => Answer::File(outcome),
            BrowserOutput::StateOnly => Answer::Result(None, None),
        })
    }

    /// Applies [`ReadValues`] to a read.
    fn filter_read(&self, read: BrowserRead) -> Result<BrowserRead, ReadError> {
        withhold_values(read, self.read_values)
    }
}

/// Asks `confirm`; anything but an explicit approval (an error, a missing callback) denies.
/// Shared by both browser surfaces, so one application callback serves them alike.
pub(crate) async fn ask_confirm(
    confirm: Option<&Arc<dyn Confirm>>,
    context: ConfirmContext,
    cancel: &CancellationToken,
) -> Approval {
    let Some(confirm) = confirm else {
        return Approval::Deny;
    };
    let member = context.member;
    match confirm.confirm(context, cancel.clone()).await {
        Ok(approval) => approval,
        Err(e) => {
            tracing::warn!(target: "hands::browser", %member, error = %e, "confirm failed: denied");
            Approval::Deny
        }
    }
}

/// Asks the URL policy; anything but an explicit allow denies. Shared by both browser surfaces.
pub(crate) async fn ask_url_policy(
    policy: Option<&Arc<dyn UrlPolicy>>,
    context: ConfirmContext,
    url: url::Url,
    cancel: &CancellationToken,
) -> UrlVerdict {
    let Some(policy) = policy else {
        return UrlVerdict::Deny {
            reason: "no URL policy".into(),
        };
    };
    let member = context.member;
    match policy.check(context, url, cancel.clone()).await {
        Ok(UrlVerdict::Allow) => UrlVerdict::Allow,
        Ok(UrlVerdict::Deny { reason }) => {
            tracing::info!(target: "hands::browser", %member, %reason, "URL denied");
            UrlVerdict::Deny { reason }
        }
        Err(e) => {
            tracing::warn!(target: "hands::browser", %member, error = %e, "URL policy failed: denied");
            UrlVerdict::Deny {
                reason: e.to_string(),
            }
        }
    }
}

/// Reads the driver's raw state; a failure is a fault that stops the run (spec: "Si falla una
/// lectura de estado obligatoria, la ejecución se detiene"). Shared by both browser surfaces.
pub(crate) async fn read_state<B: Browser + ?Sized>(
    driver: &mut B,
    cancel: &CancellationToken,
) -> Result<BrowserState, BrowserFault> {
    match driver.state(cancel).await {
        Ok(state) => Ok(state),
        Err(DriverError::Cancelled) => Err(BrowserFault::Cancelled),
        Err(DriverError::Gone(detail)) => Err(BrowserFault::Gone(detail)),
        Err(other) => Err(BrowserFault::StateUnavailable(other.to_string())),
    }
}

/// Applies [`ReadValues`] to a read: with [`ReadValues::Withheld`], strips `value` and `options`
/// from every element and adds the `value` omitted code when anything was stripped.
pub(crate) fn withhold_values(
    read: BrowserRead,
    read_values: ReadValues,
) -> Result<BrowserRead, ReadError> {
    if read_values == ReadValues::AsReported {
        return Ok(read);
    }
    let (text, elements, mut omitted) = read.into_parts();
    let mut withheld = false;
    let elements = elements
        .into_iter()
        .map(|element| {
            withheld |= element.value().is_some() || element.options().is_some();
            element.without_value()
        })
        .collect();
    if withheld && !omitted.contains(&Omitted::Value) {
        omitted.push(Omitted::Value);
    }
    BrowserRead::new(text, elements, omitted)
}

/// How one call ends: what the model reads, and the fault that stops the run, if any.
type CallEnd = (CallOutput, Option<BrowserFault>);

/// A call refused with `text` before anything ran.
fn refusal(id: &str, text: &str) -> CallEnd {
    (CallOutput::refusal(id, text), None)
}

/// A call the driver was running when the run was cancelled: part of it may have happened.
fn interrupted(id: &str) -> CallEnd {
    (
        CallOutput::refusal(id, BROWSER_INTERRUPTED),
        Some(BrowserFault::Cancelled),
    )
}

/// A call ended by the run's cancellation before it reached the driver.
fn cancelled(id: &str) -> CallEnd {
    (
        CallOutput::refusal(id, BROWSER_CANCELLED),
        Some(BrowserFault::Cancelled),
    )
}

/// What a call produced, before the state is attached.
enum Answer {
    /// A result (or none) and maybe an image.
    Result(Option<Value>, Option<EncodedImage>),
    /// A structured read: its JSON as the model sees it, and the typed read it came from.
    Read(Value, TypedRead),
    /// A file outcome: ok only when completed.
    File(FileOutcome),
    /// A failure with text safe for the model.
    Error(String),
}
