//! Form and waiting members: `select_option`, the opt-in `set_checked` (idempotent, on the original target), and `wait_for` (a `MutationObserver` in the page resolves it; no polling).

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use hands_core::browser::args::{PointerButton, WaitText};
use hands_core::browser::read::Ref;
use hands_core::browser::{DriverError, TabId};

use crate::driver::{AgentError, CdpBrowser};
use crate::pointer::ResolveOpts;
use crate::refs::{Replaced, Stale, refusal};

#[derive(Deserialize)]
struct Selected {
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    rebound: bool,
    #[serde(default)]
    replaced: Option<Replaced>,
}

/// `set_checked`'s answer when the page replaced the control after the click (a list rendered
/// anew), so its new state cannot be read back from it.
pub const SET_CHECKED_REPLACED: &str =
    "Clicked it; the page then replaced the control, so read the page to confirm its state.";

impl CdpBrowser {
    /// `select_option`: on a `<select>`, each value matched by option value or, failing that, by
    /// label; a single select takes exactly one.
    pub(crate) async fn select_option_impl(
        &mut self,
        target: &Ref,
        values: &[String],
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        let mut timer = self.action_timer(&page, "select_option");
        let binding = self.bound(target.as_str(), &page, false)?;
        let args = json!({
            "ref": target.as_str(),
            "doc": binding.doc,
            "values": values,
            "token": self.shared.listener_token,
        });
        let timeout = self.config.call_timeout;
        let result: Selected = match self
            .agent(&page, "selectOption", args, timeout, cancel)
            .await
        {
            Ok(r) => r,
            Err(AgentError::ContextGone) => {
                return Err(DriverError::refused(Stale::Navigated.text(target.as_str())));
            }
            Err(e) => return Err(self.agent_error(e)),
        };
        if let Some(code) = result.error.as_deref() {
            let text = match code {
                "not_select" => "select_option works on drop-downs and lists (<select>); click the option instead.".to_owned(),
                "disabled" => "This drop-down is disabled.".to_owned(),
                "no_option" => "No enabled option has that value or label; read the page for the options.".to_owned(),
                "single" => "This drop-down takes exactly one value.".to_owned(),
                other => refusal(
                    other,
                    result.replaced.as_ref(),
                    target.as_str(),
                    Stale::Removed,
                ),
            };
            return Err(DriverError::refused(text));
        }
        if result.rebound {
            self.note_rebound(target.as_str());
        }
        timer.phase("input");
        self.settle_action(&page, &mut timer, None, cancel).await?;
        timer.finish();
        Ok(Some("Selected.".to_owned()))
    }

    /// `set_checked`: clicks the checkbox or radio only when its state differs, re-checking the
    /// original target both times; checking twice leaves it checked.
    pub(crate) async fn set_checked_impl(
        &mut self,
        target: &Ref,
        checked: bool,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        let mut timer = self.action_timer(&page, "set_checked");
        let opts = ResolveOpts {
            checked: true,
            ..ResolveOpts::default()
        };
        let before = self.resolve_ref(&page, target, opts, cancel).await?;
        match before.role.as_deref() {
            Some("checkbox" | "radio") => {}
            _ => {
                return Err(DriverError::refused(
                    "set_checked works on checkboxes and radio buttons only.",
                ));
            }
        }
        if before.checked == Some(checked) {
            return Ok(Some(
                if checked {
                    "Already checked."
                } else {
                    "Already unchecked."
                }
                .to_owned(),
            ));
        }
        if !checked && before.role.as_deref() == Some("radio") {
            return Err(DriverError::refused(
                "A radio button cannot be unchecked directly; check another option of its group.",
            ));
        }
        let look = self
            .click_ref(&page, target, PointerButton::Left, &mut timer, cancel)
            .await?;
        self.settle_action(&page, &mut timer, Some(look), cancel)
            .await?;
        let opts = ResolveOpts {
            checked: true,
            ..ResolveOpts::default()
        };
        // Reading the state back from the control's successor (the click re-rendered it) is no
        // news for the answer.
        let told = self.rebound.len();
        let mut after = self.resolve_ref(&page, target, opts, cancel).await;
        // A page that sets the state from its server's answer: wait for what the click caused
        // (otherwise the tab's next call would) and read again.
        if after
            .as_ref()
            .is_ok_and(|after| after.checked != Some(checked))
            && self.is_settling(&page)
        {
            self.await_settling(&page).await;
            after = self.resolve_ref(&page, target, opts, cancel).await;
        }
        let after = match after {
            Ok(after) => after,
            // The press landed on the control (the guard saw it), then the page rendered the
            // control anew: there is nothing left to verify on.
            Err(DriverError::Refused(_)) => {
                timer.finish();
                return Ok(Some(SET_CHECKED_REPLACED.to_owned()));
            }
            Err(e) => return Err(e),
        };
        self.rebound.truncate(told);
        timer.phase("verify");
        timer.finish();
        if after.checked != Some(checked) {
            return Err(DriverError::refused(
                "The control did not change state when clicked; the page may handle it differently.",
            ));
        }
        Ok(Some(
            if checked { "Checked." } else { "Unchecked." }.to_owned(),
        ))
    }

    /// `wait_for`: until the page's visible, whitespace-normalised text contains `text`. A
    /// navigation during the wait moves it to the new document.
    pub(crate) async fn wait_for_impl(
        &mut self,
        text: &WaitText,
        timeout: Duration,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        let deadline = Instant::now() + timeout;
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                break;
            }
            let args = json!({"text": text.as_str(), "timeoutMs": remaining.as_millis() as u64});
            match self
                .agent::<bool>(
                    &page,
                    "waitText",
                    args,
                    remaining + Duration::from_secs(2),
                    cancel,
                )
                .await
            {
                Ok(true) => return Ok(Some("The text appeared.".to_owned())),
                Ok(false) => break,
                Err(AgentError::ContextGone) => {
                    // Wait for the next document to exist before looking again.
                    let id = page.id.clone();
                    let commits = self.shared.lock().tab(&id).map_or(0, |t| t.doc.n_commits);
                    self.wait_until(remaining.min(Duration::from_millis(500)), cancel, |s| {
                        s.tab(&id).is_none_or(|t| t.doc.n_commits > commits)
                    })
                    .await;
                }
                Err(AgentError::Cdp(crate::connection::CdpError::Cancelled)) => {
                    return Err(DriverError::Cancelled);
                }
                Err(e) => return Err(self.agent_error(e)),
            }
            if cancel.is_cancelled() {
                return Err(DriverError::Cancelled);
            }
        }
        Err(DriverError::refused(format!(
            "The text did not appear within {} ms.",
            timeout.as_millis()
        )))
    }
}
