//! Keyboard members: `type` (text inserted as a person's IME would, Enter and Tab as keys), `key` (keys and chords with correct DOM `key`, `code` and key codes), and the opt-in `hold_keys`.

use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use hands_core::browser::args::KeyPress;
use hands_core::browser::read::Ref;
use hands_core::browser::{DriverError, TabId};
use hands_core::input::{Key, Modifier, ModifierSet};

use crate::driver::{AgentError, CdpBrowser, Page};
use crate::keys::{DomKey, dom_key, modifier_bits};
use crate::pointer::ResolveOpts;
use crate::refs::{Replaced, Stale, refusal};
use crate::settle::ActionTimer;

/// One piece of typed text: a run inserted at once, or a key pressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypedPiece {
    /// Inserted with `Input.insertText`.
    Text(String),
    /// `\n`: Enter.
    Enter,
    /// `\t`: Tab.
    Tab,
}

/// Splits text for typing: `\r\n`, `\r` and `\n` press Enter, `\t` presses Tab, everything else
/// is inserted in runs.
pub fn pieces(text: &str) -> Vec<TypedPiece> {
    let mut out = Vec::new();
    let mut run = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let key = match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                Some(TypedPiece::Enter)
            }
            '\n' => Some(TypedPiece::Enter),
            '\t' => Some(TypedPiece::Tab),
            _ => None,
        };
        match key {
            Some(key) => {
                if !run.is_empty() {
                    out.push(TypedPiece::Text(std::mem::take(&mut run)));
                }
                out.push(key);
            }
            None => run.push(c),
        }
    }
    if !run.is_empty() {
        out.push(TypedPiece::Text(run));
    }
    out
}

impl CdpBrowser {
    /// One `Input.dispatchKeyEvent`. A key-down with text is `keyDown` (it types); without text,
    /// `rawKeyDown`.
    pub(crate) async fn key_event(
        &self,
        page: &Page,
        down: bool,
        key: &DomKey,
        held: ModifierSet,
    ) -> Result<(), DriverError> {
        let text = if down { key.text_with(held) } else { None };
        let kind = match (down, text.is_some()) {
            (true, true) => "keyDown",
            (true, false) => "rawKeyDown",
            (false, _) => "keyUp",
        };
        let mut params = json!({
            "type": kind,
            "key": key.key_with(held),
            "code": key.code,
            "windowsVirtualKeyCode": key.key_code,
            "nativeVirtualKeyCode": key.key_code,
            "location": key.location,
            "modifiers": modifier_bits(held),
        });
        if let Some(text) = text {
            params["text"] = json!(text);
            params["unmodifiedText"] = json!(key.text.as_deref().unwrap_or(text));
        }
        self.shared
            .conn
            .call(Some(&page.session), "Input.dispatchKeyEvent", params)
            .await
            .map(|_| ())
            .map_err(|e| self.cdp_error(e))
    }

    /// Presses the keys in order and releases them in reverse, each later key seeing the
    /// modifiers pressed before it.
    async fn press_keys(
        &self,
        page: &Page,
        keys: &[Key],
        hold: Option<(Duration, &CancellationToken)>,
    ) -> Result<(), DriverError> {
        let mut held = ModifierSet::NONE;
        let mut pressed: Vec<(DomKey, ModifierSet)> = Vec::new();
        let mut result = Ok(());
        for key in keys {
            let dom = dom_key(key);
            // A key goes up with the modifiers held before it went down: releasing Control
            // reports `ctrlKey: false`, as a real keyboard does.
            let before = held;
            if let Some(m) = dom.modifier {
                held.insert(m);
            }
            if let Err(e) = self.key_event(page, true, &dom, held).await {
                result = Err(e);
                break;
            }
            pressed.push((dom, before));
        }
        if result.is_ok()
            && let Some((duration, cancel)) = hold
        {
            tokio::select! {
                _ = tokio::time::sleep(duration) => {}
                _ = cancel.cancelled() => result = Err(DriverError::Cancelled),
            }
        }
        // Released even after a failure or a cancellation, so no key stays down.
        for (dom, held) in pressed.iter().rev() {
            let released = self.key_event(page, false, dom, *held).await;
            if result.is_ok() {
                result = released;
            }
        }
        result
    }

    /// Holds `keys` (modifiers) while `f` runs, then releases them whatever `f` returned.
    pub(crate) async fn with_modifiers<F>(
        &self,
        page: &Page,
        keys: ModifierSet,
        f: F,
    ) -> Result<(), DriverError>
    where
        F: AsyncFnOnce(&Self) -> Result<(), DriverError>,
    {
        let modifiers: Vec<Modifier> = keys.iter().collect();
        let mut held = ModifierSet::NONE;
        let mut pressed = Vec::new();
        for m in &modifiers {
            let before = held;
            held.insert(*m);
            let dom = dom_key(&m.key());
            self.key_event(page, true, &dom, held).await?;
            pressed.push((dom, before));
        }
        let result = f(self).await;
        for (dom, held) in pressed.iter().rev() {
            let _ = self.key_event(page, false, dom, *held).await;
        }
        result
    }

    async fn insert(&self, page: &Page, text: &str) -> Result<(), DriverError> {
        self.shared
            .conn
            .call(
                Some(&page.session),
                "Input.insertText",
                json!({"text": text}),
            )
            .await
            .map(|_| ())
            .map_err(|e| self.cdp_error(e))
    }

    /// `type`: into the element of `target` (focused, its content selected so the text replaces
    /// it; empty text clears it), or at the focused element's caret when `target` is `None`.
    pub(crate) async fn type_impl(
        &mut self,
        text: &str,
        target: Option<&Ref>,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        let started = Instant::now();
        // Focusing the target arms the page's action watch, so typing into one settles by what
        // it caused; typing at the caret settles the long way.
        let mut timer = target.map(|_| self.action_timer(&page, "type"));
        if let Some(target) = target {
            let opts = ResolveOpts {
                scroll: true,
                focus: true,
                select_all: true,
                ..ResolveOpts::default()
            };
            self.resolve_ref(&page, target, opts, cancel).await?;
            if let Some(timer) = timer.as_mut() {
                timer.phase("aim");
            }
            if let Some(done) = self.set_value_input(&page, target, text, cancel).await? {
                self.settle_typed(&page, started, timer, cancel).await?;
                return Ok(Some(done));
            }
            if text.is_empty() {
                let backspace = dom_key(
                    &Key::parse("BackSpace").map_err(|e| DriverError::Failed(e.to_string()))?,
                );
                self.press_dom(&page, &backspace).await?;
            }
        }
        for piece in pieces(text) {
            if cancel.is_cancelled() {
                return Err(DriverError::Cancelled);
            }
            match piece {
                TypedPiece::Text(run) => self.insert(&page, &run).await?,
                TypedPiece::Enter => self.press_named(&page, "Return").await?,
                TypedPiece::Tab => self.press_named(&page, "Tab").await?,
            }
        }
        self.settle_typed(&page, started, timer, cancel).await?;
        Ok(Some("Typed.".to_owned()))
    }

    /// Settles after `type`: by what it caused when a target was focused (`timer`), else the
    /// long way.
    async fn settle_typed(
        &mut self,
        page: &Page,
        started: Instant,
        timer: Option<ActionTimer>,
        cancel: &CancellationToken,
    ) -> Result<(), DriverError> {
        match timer {
            Some(mut timer) => {
                timer.phase("input");
                self.settle_action(page, &mut timer, None, cancel).await?;
                timer.finish();
            }
            None => {
                self.settle(page, started, cancel).await?;
            }
        }
        Ok(())
    }

    async fn press_dom(&self, page: &Page, dom: &DomKey) -> Result<(), DriverError> {
        self.key_event(page, true, dom, ModifierSet::NONE).await?;
        self.key_event(page, false, dom, ModifierSet::NONE).await
    }

    async fn press_named(&self, page: &Page, name: &str) -> Result<(), DriverError> {
        let key = Key::parse(name).map_err(|e| DriverError::Failed(e.to_string()))?;
        self.press_dom(page, &dom_key(&key)).await
    }

    /// `key`: each press in order; a chord's keys go down in order and up in reverse.
    pub(crate) async fn key_impl(
        &mut self,
        keys: &[KeyPress],
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        let started = Instant::now();
        for press in keys {
            if cancel.is_cancelled() {
                return Err(DriverError::Cancelled);
            }
            self.press_keys(&page, press.chord().keys(), None).await?;
        }
        self.settle(&page, started, cancel).await?;
        Ok(Some("Pressed.".to_owned()))
    }

    /// `hold_keys`: all down in order, held for `duration`, up in reverse.
    pub(crate) async fn hold_keys_impl(
        &mut self,
        keys: &[Key],
        duration: Duration,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        let started = Instant::now();
        self.press_keys(&page, keys, Some((duration, cancel)))
            .await?;
        self.settle(&page, started, cancel).await?;
        Ok(Some("Held the keys.".to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_text_splits_into_runs_and_keys() {
        use TypedPiece::*;
        let check =
            |text: &str, expect: &[TypedPiece]| assert_eq!(pieces(text), expect, "{text:?}");
        check("", &[]);
        check("héllo 日本", &[Text("héllo 日本".into())]);
        check("a\nb", &[Text("a".into()), Enter, Text("b".into())]);
        check(
            "a\r\nb\r",
            &[Text("a".into()), Enter, Text("b".into()), Enter],
        );
        check("\tx", &[Tab, Text("x".into())]);
    }
}

/// What the page answered to `setValue`.
#[derive(Debug, serde::Deserialize)]
struct ValueSet {
    #[serde(default)]
    error: Option<String>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    rebound: bool,
    #[serde(default)]
    replaced: Option<Replaced>,
}

/// The format a value input takes, for the model to retry with.
fn value_format(kind: &str) -> &'static str {
    match kind {
        "date" => "YYYY-MM-DD, e.g. 2027-03-14",
        "time" => "HH:MM or HH:MM:SS, e.g. 14:30",
        "datetime-local" => "YYYY-MM-DDTHH:MM, e.g. 2027-03-14T14:30",
        "month" => "YYYY-MM, e.g. 2027-03",
        "week" => "YYYY-Www, e.g. 2027-W11",
        "color" => "#rrggbb, e.g. #1e90ff",
        _ => "a number within the control's range and step",
    }
}

impl CdpBrowser {
    /// `type` into a date, time, colour or range input: Chromium takes no inserted text there,
    /// so the value is set as the page would see a person set it. `None` when the target is not
    /// such an input (it is typed into normally).
    async fn set_value_input(
        &mut self,
        page: &Page,
        target: &Ref,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let binding = self.bound(target.as_str(), page, false)?;
        let args = serde_json::json!({"ref": target.as_str(), "doc": binding.doc, "value": text});
        let answer: ValueSet = match self
            .agent(page, "setValue", args, self.config.call_timeout, cancel)
            .await
        {
            Ok(answer) => answer,
            Err(AgentError::ContextGone) => {
                return Err(DriverError::refused(Stale::Navigated.text(target.as_str())));
            }
            Err(e) => return Err(self.agent_error(e)),
        };
        if answer.rebound {
            self.note_rebound(target.as_str());
        }
        match answer.error.as_deref() {
            None => Ok(Some(format!(
                "Set the {} field's value.",
                answer.kind.as_deref().unwrap_or("input")
            ))),
            Some("not_value_input") => Ok(None),
            Some("disabled") => Err(DriverError::refused("This field is disabled or read-only.")),
            Some("invalid_value") => {
                let kind = answer.kind.as_deref().unwrap_or("");
                Err(DriverError::refused(format!(
                    "This {kind} field did not accept that value: type it as {}.",
                    value_format(kind)
                )))
            }
            Some(other) => Err(DriverError::refused(refusal(
                other,
                answer.replaced.as_ref(),
                target.as_str(),
                Stale::Removed,
            ))),
        }
    }
}
