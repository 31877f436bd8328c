//! The opt-in `run_script` (the page's main world, awaited, bounded) and `read_diagnostics` (the tab's filtered console or network history as a text-only read).

use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use hands_core::browser::args::DiagnosticsSource;
use hands_core::browser::{BrowserRead, DriverError, TabId, truncate_utf8};

use crate::connection::{CdpError, decode};
use crate::driver::CdpBrowser;
use crate::protocol::Evaluated;

/// Most bytes of a thrown script error shown to the model.
const MAX_SCRIPT_ERROR_BYTES: usize = 512;

/// The text of a script's result: strings as they are, `undefined` as the empty string, anything
/// else as JSON.
pub fn script_text(evaluated: &Evaluated) -> String {
    let result = &evaluated.result;
    match (&result.value, result.kind.as_str()) {
        (Some(Value::String(s)), _) => s.clone(),
        (_, "undefined") => String::new(),
        (None, "object") if result.subtype.as_deref() == Some("null") => "null".to_owned(),
        (Some(v), _) => v.to_string(),
        (None, _) => result
            .unserializable_value
            .clone()
            .or_else(|| result.description.clone())
            .unwrap_or_default(),
    }
}

impl CdpBrowser {
    /// `run_script`: evaluated in the page's own world with the page's privileges, its promise
    /// awaited; the wait ends after `timeout` (the browser is also asked to stop a script that
    /// runs that long without yielding).
    pub(crate) async fn run_script_impl(
        &mut self,
        source: &str,
        timeout: Duration,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<String, DriverError> {
        let page = self.page_ready(tab).await?;
        let params = json!({
            "expression": source,
            "awaitPromise": true,
            "returnByValue": true,
            "userGesture": true,
            "replMode": false,
            "timeout": timeout.as_millis() as u64,
        });
        let answer = self
            .shared
            .conn
            .call_with(
                Some(&page.session),
                "Runtime.evaluate",
                params,
                timeout + Duration::from_millis(250),
                Some(cancel),
            )
            .await;
        let value = match answer {
            Ok(value) => value,
            Err(CdpError::Timeout { .. }) => {
                let _ = self.shared.conn.send(
                    Some(&page.session),
                    "Runtime.terminateExecution",
                    json!({}),
                );
                return Err(DriverError::refused(format!(
                    "The script did not finish within {} ms; it may still be running in the page.",
                    timeout.as_millis()
                )));
            }
            Err(e) if e.message_contains("Execution was terminated") => {
                return Err(DriverError::refused(format!(
                    "The script did not finish within {} ms and was stopped.",
                    timeout.as_millis()
                )));
            }
            Err(e) => return Err(self.cdp_error(e)),
        };
        let evaluated: Evaluated =
            decode("Runtime.evaluate", value).map_err(|e| self.cdp_error(e))?;
        if let Some(details) = &evaluated.exception_details {
            let description = details.describe();
            let first = description.lines().next().unwrap_or("");
            return Err(DriverError::refused(format!(
                "The script threw: {}",
                truncate_utf8(first, MAX_SCRIPT_ERROR_BYTES)
            )));
        }
        Ok(script_text(&evaluated))
    }

    /// `read_diagnostics`: the last `limit` entries of the tab's console or network history,
    /// filtered when they were recorded.
    pub(crate) async fn read_diagnostics_impl(
        &self,
        source: DiagnosticsSource,
        limit: u32,
        tab: Option<&TabId>,
    ) -> Result<BrowserRead, DriverError> {
        let page = self.page_ready(tab).await?;
        let state = self.shared.lock();
        let Some(tab) = state.tab(&page.id) else {
            return Err(DriverError::refused("The tab closed."));
        };
        let limit = limit.clamp(1, 100) as usize;
        let lines = match source {
            DiagnosticsSource::Console => tab.rings.console_lines(limit),
            DiagnosticsSource::Network => tab.rings.network_lines(limit),
        };
        BrowserRead::text_only(lines.join("\n"), Vec::new())
            .map_err(|e| DriverError::Failed(format!("invalid read: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_become_text() {
        let check = |v: Value, expect: &str| {
            let evaluated: Evaluated = serde_json::from_value(v).unwrap();
            assert_eq!(script_text(&evaluated), expect);
        };
        check(
            json!({"result": {"type": "string", "value": "héllo"}}),
            "héllo",
        );
        check(json!({"result": {"type": "undefined"}}), "");
        check(json!({"result": {"type": "number", "value": 42}}), "42");
        check(
            json!({"result": {"type": "object", "value": {"a": [1, 2]}}}),
            "{\"a\":[1,2]}",
        );
        check(
            json!({"result": {"type": "object", "subtype": "null", "value": null}}),
            "null",
        );
        check(
            json!({"result": {"type": "number", "unserializableValue": "Infinity"}}),
            "Infinity",
        );
    }
}
