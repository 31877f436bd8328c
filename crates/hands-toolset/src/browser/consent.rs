//! Who must agree before a browser member runs: the spec's "Confirmación" column as data, the
//! `confirm` and URL-policy callbacks, and the independent context each receives.
//!
//! Spec: openai-browser-desktop-drivers, "Aprobar acciones y administrar la sesión", "Restringir
//! las URL", the member tables of "Seleccionar métodos", "Habilitar los métodos de lectura por
//! sección y de puntero" and "Habilitar diagnósticos, scripts y transferencias de archivos".

use std::fmt;
use std::future::Future;

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_core::browser::BrowserMember;
use serde_json::{Value, json};

use super::state::StateView;

/// What a member needs before it may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Consent {
    /// Nothing (a read; it can still be put under `confirm_reads`).
    None,
    /// `confirm` must approve.
    Confirm,
    /// The URL policy must allow the URL, then `confirm` must approve (`navigate`, `new_tab`).
    UrlPolicyThenConfirm,
}

/// The spec's "Confirmación" column, in one place: every state-changing member, every pointer
/// member, and the four diagnostics/script/file members ("incluso para las lecturas de
/// diagnóstico") need `confirm`; `navigate` and `new_tab` also need the URL policy.
pub const fn consent(member: BrowserMember) -> Consent {
    use BrowserMember as M;
    match member {
        M::Navigate | M::NewTab => Consent::UrlPolicyThenConfirm,
        M::Click
        | M::Type
        | M::Key
        | M::Scroll
        | M::ScrollTo
        | M::SelectOption
        | M::Hover
        | M::SwitchTab
        | M::CloseTab
        | M::ClickAt
        | M::DragPath
        | M::HoldKeys
        | M::HoverAt
        | M::SetChecked
        | M::ReadDiagnostics
        | M::RunScript
        | M::UploadFile
        | M::DownloadFile => Consent::Confirm,
        M::ReadPage
        | M::GetPageText
        | M::Find
        | M::WaitFor
        | M::Screenshot
        | M::Zoom
        | M::ListTabs
        | M::ReadPageScoped => Consent::None,
    }
}

/// Whether a member reads the page (or its state) and so may be put under `confirm_reads`.
///
/// Ours, as the spec names no list: every member without its own confirmation (`read_page`,
/// `get_page_text`, `find`, `read_page_scoped`, `screenshot`, `zoom`, `list_tabs`, and
/// `wait_for`, which reveals whether a text is on the page), plus `read_diagnostics`, a read that
/// always needs `confirm`: under `confirm_reads` its one confirmation moves before anything is
/// read and carries no state.
pub const fn is_read(member: BrowserMember) -> bool {
    matches!(consent(member), Consent::None) || matches!(member, BrowserMember::ReadDiagnostics)
}

/// When `confirm` is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfirmPhase {
    /// Before an action, with the state read just before.
    BeforeAction,
    /// Before a protected read (`confirm_reads`): nothing has been read, `state` is `None`.
    BeforeRead,
}

/// The independent copy a `confirm` or URL-policy callback receives: `{member, arguments, state,
/// call_id}` (plus `phase: "before_read"` for a protected read). Changing it cannot change the
/// validated action, which the toolset keeps apart.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmContext {
    /// The member about to run.
    pub member: BrowserMember,
    /// The validated arguments (`BrowserCall::arguments`: completed URLs, normalised text).
    pub arguments: Value,
    /// The state before the action, as the model would see it; `None` before a protected read.
    pub state: Option<StateView>,
    /// The call being decided.
    pub call_id: String,
    /// Before an action or before a read.
    pub phase: ConfirmPhase,
}

impl ConfirmContext {
    /// The object as the spec writes it: `{member, arguments, state, call_id}`, with
    /// `phase: "before_read"` and `state: null` for a protected read.
    pub fn to_json(&self) -> Value {
        let mut context = json!({
            "member": self.member.name(),
            "arguments": self.arguments,
            "state": self.state.as_ref().map(StateView::to_json),
            "call_id": self.call_id,
        });
        if self.phase == ConfirmPhase::BeforeRead {
            context["phase"] = json!("before_read");
        }
        context
    }
}

/// A callback's answer to `confirm`. Only [`Approval::Approve`] lets the action run; a callback
/// that fails or is cancelled denies (the spec's "solo el valor exacto true").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Approval {
    /// Run it.
    Approve,
    /// Do not run it.
    Deny,
}

/// A URL policy's answer. Only [`UrlVerdict::Allow`] lets the toolset go on to `confirm`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlVerdict {
    /// The URL may be opened.
    Allow,
    /// It may not; the reason goes to the logs, the model sees [`crate::strings::BROWSER_URL_DENIED`].
    Deny {
        /// Why, for the logs and the person running the agent.
        reason: String,
    },
}

/// An error a callback reports (its own failure, not a decision): treated as a denial.
pub type CallbackError = Box<dyn std::error::Error + Send + Sync>;

/// Decides whether a browser action (or a protected read) may run. Implemented in trusted
/// application code, e.g. by asking a person.
///
/// The callback receives the call's cancellation token: when the run stops, end a pending
/// question and return. The toolset waits for the callback to return before it goes on or
/// releases the session (spec: "El auxiliar espera a que termine el callback").
#[async_trait]
pub trait Confirm: Send + Sync {
    /// Approve or deny the action the context describes.
    async fn confirm(
        &self,
        context: ConfirmContext,
        cancel: CancellationToken,
    ) -> Result<Approval, CallbackError>;
}

/// Decides whether `navigate` or `new_tab` may open a URL. Consulted before `confirm`.
///
/// Spec: openai-browser-desktop-drivers, "Restringir las URL": "El callback de URL recibe
/// (context, url)".
#[async_trait]
pub trait UrlPolicy: Send + Sync {
    /// Allow or deny `url` (already parsed by the WHATWG rules and completed, e.g. a bare host
    /// read as `https://`).
    async fn check(
        &self,
        context: ConfirmContext,
        url: url::Url,
        cancel: CancellationToken,
    ) -> Result<UrlVerdict, CallbackError>;
}

/// A [`Confirm`] from an async closure.
pub struct ConfirmFn<F>(pub F);

impl<F> fmt::Debug for ConfirmFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ConfirmFn")
    }
}

#[async_trait]
impl<F, Fut> Confirm for ConfirmFn<F>
where
    F: Fn(ConfirmContext, CancellationToken) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Approval, CallbackError>> + Send,
{
    async fn confirm(
        &self,
        context: ConfirmContext,
        cancel: CancellationToken,
    ) -> Result<Approval, CallbackError> {
        (self.0)(context, cancel).await
    }
}

/// A [`UrlPolicy`] from an async closure.
pub struct UrlPolicyFn<F>(pub F);

impl<F> fmt::Debug for UrlPolicyFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UrlPolicyFn")
    }
}

#[async_trait]
impl<F, Fut> UrlPolicy for UrlPolicyFn<F>
where
    F: Fn(ConfirmContext, url::Url, CancellationToken) -> Fut + Send + Sync,
    Fut: Future<Output = Result<UrlVerdict, CallbackError>> + Send,
{
    async fn check(
        &self,
        context: ConfirmContext,
        url: url::Url,
        cancel: CancellationToken,
    ) -> Result<UrlVerdict, CallbackError> {
        (self.0)(context, url, cancel).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use BrowserMember as M;

    /// The spec's tables, transcribed row by row: (member, "Confirmación").
    /// "Sí, con política de URL" is `UrlPolicyThenConfirm`; the opt-in diagnostics/script/file
    /// table has no column, but its text requires `confirm` for all four.
    const SPEC_TABLE: [(&str, Consent); 28] = [
        ("navigate", Consent::UrlPolicyThenConfirm),
        ("read_page", Consent::None),
        ("get_page_text", Consent::None),
        ("find", Consent::None),
        ("click", Consent::Confirm),
        ("type", Consent::Confirm),
        ("key", Consent::Confirm),
        ("scroll", Consent::Confirm),
        ("scroll_to", Consent::Confirm),
        ("wait_for", Consent::None),
        ("select_option", Consent::Confirm),
        ("hover", Consent::Confirm),
        ("screenshot", Consent::None),
        ("zoom", Consent::None),
        ("new_tab", Consent::UrlPolicyThenConfirm),
        ("list_tabs", Consent::None),
        ("switch_tab", Consent::Confirm),
        ("close_tab", Consent::Confirm),
        ("read_page_scoped", Consent::None),
        ("click_at", Consent::Confirm),
        ("drag_path", Consent::Confirm),
        ("hold_keys", Consent::Confirm),
        ("hover_at", Consent::Confirm),
        ("set_checked", Consent::Confirm),
        ("read_diagnostics", Consent::Confirm),
        ("run_script", Consent::Confirm),
        ("upload_file", Consent::Confirm),
        ("download_file", Consent::Confirm),
    ];

    #[test]
    fn consent_matches_the_spec_tables() {
        for (name, want) in SPEC_TABLE {
            let member = M::from_name(name).expect(name);
            assert_eq!(consent(member), want, "{name}");
        }
        let n_confirm = M::ALL
            .iter()
            .filter(|m| consent(**m) != Consent::None)
            .count();
        assert_eq!(n_confirm, 20);
    }

    #[test]
    fn reads_are_the_unconfirmed_members_and_diagnostics() {
        let reads: Vec<&str> = M::ALL
            .into_iter()
            .filter(|m| is_read(*m))
            .map(M::name)
            .collect();
        assert_eq!(
            reads,
            [
                "read_page",
                "get_page_text",
                "find",
                "wait_for",
                "screenshot",
                "zoom",
                "list_tabs",
                "read_page_scoped",
                "read_diagnostics"
            ]
        );
    }

    #[test]
    fn context_json_has_the_spec_fields() {
        let context = ConfirmContext {
            member: M::ReadPage,
            arguments: json!({"filter": "all", "tab_id": null}),
            state: None,
            call_id: "call_1".into(),
            phase: ConfirmPhase::BeforeRead,
        };
        assert_eq!(
            context.to_json(),
            json!({"member": "read_page", "arguments": {"filter": "all", "tab_id": null},
                   "state": null, "call_id": "call_1", "phase": "before_read"})
        );
        let action = ConfirmContext {
            phase: ConfirmPhase::BeforeAction,
            state: Some(StateView::default()),
            ..context
        };
        assert_eq!(
            action.to_json(),
            json!({"member": "read_page", "arguments": {"filter": "all", "tab_id": null},
                   "state": {"tabs": []}, "call_id": "call_1"})
        );
    }
}
