//! A person's hands on the browser while they hold the wheel (issue 22): the active tab's
//! picture, their clicks, keys, text and wheel turns sent to it as real input, and what hands
//! observed them do — pages visited (main-frame commits and same-document navigations), fields
//! changed (trusted `input` / `change` events, seen by a listener in an isolated world of its
//! own that the page can neither see nor call), tabs opened and closed.
//!
//! Nothing here is guessed: a field counts as changed only when the browser fired a trusted
//! event on it; a page counts as visited only when its document committed. A password field's
//! value is never reported (only that it changed).

use std::sync::Arc;

use base64::Engine as _;
use hands_core::browser::DriverError;
use hands_core::input::Key;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::connection::{Event, SessionId};
use crate::driver::CdpBrowser;
use crate::events::Shared;
use crate::keys::dom_key;

/// The isolated world the field listener lives in.
const WHEEL_WORLD: &str = "hands-wheel";

/// The binding the field listener reports through (exposed to [`WHEEL_WORLD`] only).
const WHEEL_BINDING: &str = "__handsWheelField";

/// The field listener: every trusted `input` and `change` event on a form control or an
/// editable element, reported with the control's label, kind and value (none for a password).
const FIELD_WATCH_JS: &str = r#"(() => {
  if (globalThis.__handsWheelOn) return;
  globalThis.__handsWheelOn = true;
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim().slice(0, 80);
  const labelOf = (el) => {
    if (el.labels && el.labels.length) {
      const l = clean(el.labels[0].innerText);
      if (l) return l;
    }
    return clean(el.getAttribute("aria-label")) || clean(el.getAttribute("placeholder"))
      || clean(el.getAttribute("name")) || clean(el.id) || el.tagName.toLowerCase();
  };
  const report = (e) => {
    if (!e.isTrusted) return;
    const el = e.composedPath ? e.composedPath()[0] : e.target;
    if (!(el instanceof Element)) return;
    const control = el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement
      || el instanceof HTMLSelectElement;
    if (!control && !el.isContentEditable) return;
    const kind = control ? (el.type || el.tagName).toLowerCase() : "contenteditable";
    const secret = kind === "password";
    let value;
    if (kind === "checkbox" || kind === "radio") value = el.checked ? "checked" : "unchecked";
    else if (el instanceof HTMLSelectElement) value = Array.from(el.selectedOptions).map(o => o.label).join(", ");
    else if (!control) value = el.innerText;
    else value = el.value;
    __handsWheelField(JSON.stringify({label: labelOf(el), kind,
      value: secret ? null : String(value).slice(0, 200), url: location.href}));
  };
  document.addEventListener("input", report, true);
  document.addEventListener("change", report, true);
})()"#;

/// A field the person changed: its last value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    /// The tab (`t1`, …).
    pub tab: String,
    /// The page it is on.
    pub url: String,
    /// Its label (the `<label>`, `aria-label`, placeholder, name or id).
    pub label: String,
    /// Its kind (`text`, `email`, `checkbox`, `select-one`, `textarea`, `contenteditable`…).
    pub kind: String,
    /// Its value after the last change, at most 200 characters; `None` for a password.
    pub value: Option<String>,
}

/// A document that committed while the person held the wheel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageVisit {
    /// The tab.
    pub tab: String,
    /// Its URL, as the browser reported it.
    pub url: String,
}

/// What hands observed a person do in the browser.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    /// Pages visited, in order (the same URL twice in a row once).
    pub pages: Vec<PageVisit>,
    /// Fields changed, each once with its last value, in the order first changed.
    pub fields: Vec<FieldChange>,
    /// Tabs opened: id and URL now.
    pub tabs_opened: Vec<PageVisit>,
    /// Tabs closed.
    pub tabs_closed: Vec<String>,
    /// The active tab at the end: id, URL, title.
    pub active: Option<(String, String, String)>,
}

/// A person's hands on a browser that was handed to a toolset: from [`CdpBrowser::wheel`].
#[derive(Clone)]
pub struct BrowserWheel {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for BrowserWheel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BrowserWheel")
    }
}

/// Observation under way ([`BrowserWheel::watch`]); [`Watching::finish`] ends it.
pub struct Watching {
    shared: Arc<Shared>,
    events: mpsc::UnboundedReceiver<Arc<Event>>,
    tabs_before: Vec<String>,
    scripts: Vec<(SessionId, String)>,
}

impl std::fmt::Debug for Watching {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watching")
            .field("tabs_before", &self.tabs_before)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Deserialize)]
struct FieldReport {
    label: String,
    kind: String,
    value: Option<String>,
    url: String,
}

impl CdpBrowser {
    /// A handle a person acts through while they hold the wheel, kept after the browser itself
    /// was handed away (to a toolset).
    pub fn wheel(&self) -> BrowserWheel {
        BrowserWheel {
            shared: Arc::clone(&self.shared),
        }
    }
}

fn failed(what: &str, e: impl std::fmt::Display) -> DriverError {
    DriverError::Failed(format!("{what}: {e}"))
}

impl BrowserWheel {
    /// The active tab's session.
    fn active(&self) -> Result<SessionId, DriverError> {
        self.shared
            .lock()
            .active_session()
            .ok_or_else(|| DriverError::Failed("no tab is open".into()))
    }

    /// The active tab's viewport as a JPEG (quality 70), in CSS pixels.
    pub async fn frame(&self) -> Result<Vec<u8>, DriverError> {
        let session = self.active()?;
        let value = self
            .shared
            .conn
            .call(
                Some(&session),
                "Page.captureScreenshot",
                json!({"format": "jpeg", "quality": 70, "fromSurface": true}),
            )
            .await
            .map_err(|e| failed("Page.captureScreenshot", e))?;
        let data = value["data"].as_str().unwrap_or_default();
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| failed("the screenshot's data", e))
    }

    async fn input(&self, method: &str, params: Value) -> Result<(), DriverError> {
        let session = self.active()?;
        self.shared
            .conn
            .call(Some(&session), method, params)
            .await
            .map(|_| ())
            .map_err(|e| failed(method, e))
    }

    /// A left click at viewport point (`x`, `y`), CSS pixels: moved, pressed, released.
    pub async fn click(&self, x: f64, y: f64) -> Result<(), DriverError> {
        let at = |kind: &str| {
            json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1,
                   "buttons": if kind == "mousePressed" { 1 } else { 0 }})
        };
        self.input(
            "Input.dispatchMouseEvent",
            json!({"type": "mouseMoved", "x": x, "y": y}),
        )
        .await?;
        self.input("Input.dispatchMouseEvent", at("mousePressed"))
            .await?;
        self.input("Input.dispatchMouseEvent", at("mouseReleased"))
            .await
    }

    /// The wheel turned by `dy` CSS pixels (down when positive) at (`x`, `y`).
    pub async fn scroll(&self, x: f64, y: f64, dy: f64) -> Result<(), DriverError> {
        self.input(
            "Input.dispatchMouseEvent",
            json!({"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": dy}),
        )
        .await
    }

    /// One key pressed and released (Enter, Backspace, Tab, an arrow…), with the DOM `key`,
    /// `code` and key code a keyboard gives.
    pub async fn press(&self, key: &Key) -> Result<(), DriverError> {
        let dom = dom_key(key);
        let mut down = json!({
            "type": if dom.text.is_some() { "keyDown" } else { "rawKeyDown" },
            "key": dom.key, "code": dom.code, "windowsVirtualKeyCode": dom.key_code,
            "nativeVirtualKeyCode": dom.key_code, "location": dom.location,
        });
        if let Some(text) = &dom.text {
            down["text"] = json!(text);
            down["unmodifiedText"] = json!(text);
        }
        self.input("Input.dispatchKeyEvent", down).await?;
        self.input(
            "Input.dispatchKeyEvent",
            json!({"type": "keyUp", "key": dom.key, "code": dom.code,
                   "windowsVirtualKeyCode": dom.key_code, "nativeVirtualKeyCode": dom.key_code,
                   "location": dom.location}),
        )
        .await
    }

    /// Text inserted at the caret, as an input method inserts it.
    pub async fn insert_text(&self, text: &str) -> Result<(), DriverError> {
        self.input("Input.insertText", json!({"text": text})).await
    }

    /// Starts observing: navigations, field changes in every open tab, tabs opened and closed.
    pub async fn watch(&self) -> Result<Watching, DriverError> {
        let events = self.shared.conn.subscribe(|e| {
            matches!(
                e.method.as_str(),
                "Page.frameNavigated" | "Page.navigatedWithinDocument"
            ) || (e.method == "Runtime.bindingCalled"
                && e.params["name"].as_str() == Some(WHEEL_BINDING))
        });
        let tabs: Vec<(String, SessionId, String)> = self
            .shared
            .lock()
            .live_tabs()
            .map(|t| {
                (
                    t.id.as_str().to_owned(),
                    t.session.clone(),
                    t.target_id.clone(),
                )
            })
            .collect();
        let conn = &self.shared.conn;
        let mut scripts = Vec::new();
        for (_, session, target_id) in &tabs {
            let session = Some(session);
            conn.call(
                session,
                "Runtime.addBinding",
                json!({"name": WHEEL_BINDING, "executionContextName": WHEEL_WORLD}),
            )
            .await
            .map_err(|e| failed("Runtime.addBinding", e))?;
            let added = conn
                .call(
                    session,
                    "Page.addScriptToEvaluateOnNewDocument",
                    json!({"source": FIELD_WATCH_JS, "worldName": WHEEL_WORLD}),
                )
                .await
                .map_err(|e| failed("Page.addScriptToEvaluateOnNewDocument", e))?;
            if let (Some(id), Some(session)) = (added["identifier"].as_str(), session) {
                scripts.push((session.clone(), id.to_owned()));
            }
            let world = conn
                .call(
                    session,
                    "Page.createIsolatedWorld",
                    json!({"frameId": target_id, "worldName": WHEEL_WORLD}),
                )
                .await
                .map_err(|e| failed("Page.createIsolatedWorld", e))?;
            conn.call(
                session,
                "Runtime.evaluate",
                json!({"expression": FIELD_WATCH_JS, "contextId": world["executionContextId"]}),
            )
            .await
            .map_err(|e| failed("Runtime.evaluate", e))?;
        }
        Ok(Watching {
            shared: Arc::clone(&self.shared),
            events,
            tabs_before: tabs.into_iter().map(|(id, _, _)| id).collect(),
            scripts,
        })
    }
}

impl Watching {
    /// Ends the observation and says what was seen. Every event the tabs sent before this
    /// call is counted (a round trip to each tab comes first).
    pub async fn finish(mut self) -> Observed {
        let conn = &self.shared.conn;
        let sessions: Vec<SessionId> = self
            .shared
            .lock()
            .live_tabs()
            .map(|t| t.session.clone())
            .collect();
        for session in &sessions {
            let _ = conn
                .call(
                    Some(session),
                    "Runtime.evaluate",
                    json!({"expression": "0"}),
                )
                .await;
        }
        for (session, id) in &self.scripts {
            let _ = conn
                .call(
                    Some(session),
                    "Page.removeScriptToEvaluateOnNewDocument",
                    json!({"identifier": id}),
                )
                .await;
        }
        let mut seen = Vec::new();
        while let Ok(event) = self.events.try_recv() {
            seen.push(event);
        }
        let mut observed = self.observed(&seen);
        // The title the document has now (the tab list's may lag behind a fresh commit, and
        // until a title arrives Chromium reports the URL in its place).
        let active = {
            let state = self.shared.lock();
            state
                .active
                .as_ref()
                .and_then(|id| state.tab(id))
                .map(|t| t.session.clone())
        };
        if let (Some(session), Some(active)) = (active, observed.active.as_mut()) {
            let title = conn
                .call(
                    Some(&session),
                    "Runtime.evaluate",
                    json!({"expression": "document.title", "returnByValue": true}),
                )
                .await
                .ok()
                .and_then(|v| v["result"]["value"].as_str().map(str::to_owned));
            active.2 = title.unwrap_or_default();
        }
        observed
    }

    fn observed(&self, events: &[Arc<Event>]) -> Observed {
        let state = self.shared.lock();
        let tab_of = |session: &Option<SessionId>| {
            let session = session.as_ref()?;
            state
                .tabs
                .iter()
                .find(|t| &t.session == session)
                .map(|t| (t.id.as_str().to_owned(), t.target_id.clone()))
        };
        let mut out = Observed::default();
        for event in events {
            let Some((tab, target_id)) = tab_of(&event.session) else {
                continue;
            };
            let url = match event.method.as_str() {
                "Page.frameNavigated" => {
                    let frame = &event.params["frame"];
                    if frame.get("parentId").is_some() || frame["id"].as_str() != Some(&target_id) {
                        continue;
                    }
                    frame["url"].as_str().unwrap_or_default().to_owned()
                }
                "Page.navigatedWithinDocument" => {
                    if event.params["frameId"].as_str() != Some(&target_id) {
                        continue;
                    }
                    event.params["url"].as_str().unwrap_or_default().to_owned()
                }
                _ => {
                    let Some(report) = event.params["payload"]
                        .as_str()
                        .and_then(|p| serde_json::from_str::<FieldReport>(p).ok())
                    else {
                        continue;
                    };
                    let change = FieldChange {
                        tab,
                        url: report.url,
                        label: report.label,
                        kind: report.kind,
                        value: report.value,
                    };
                    let same = |f: &FieldChange| {
                        f.tab == change.tab && f.url == change.url && f.label == change.label
                    };
                    match out.fields.iter_mut().find(|f| same(f)) {
                        Some(f) => *f = change,
                        None => out.fields.push(change),
                    }
                    continue;
                }
            };
            if out
                .pages
                .last()
                .is_none_or(|p| p.tab != tab || p.url != url)
            {
                out.pages.push(PageVisit { tab, url });
            }
        }
        for t in &state.tabs {
            if !self.tabs_before.iter().any(|b| b == t.id.as_str()) {
                out.tabs_opened.push(PageVisit {
                    tab: t.id.as_str().to_owned(),
                    url: t.url.clone(),
                });
            }
        }
        out.tabs_closed = self
            .tabs_before
            .iter()
            .filter(|b| !state.tabs.iter().any(|t| t.id.as_str() == b.as_str()))
            .cloned()
            .collect();
        out.active = state
            .active
            .as_ref()
            .and_then(|id| state.tab(id))
            .map(|t| (t.id.as_str().to_owned(), t.url.clone(), t.title.clone()));
        out
    }
}
