//! What the wheel tests share: `hands run … --view` started and its page opened in a real
//! headless Chromium, and a person's moves on that page (find a control by its label, click it,
//! click a point of the streamed screen, wait for a text or a script's answer).

#![allow(dead_code, reason = "each test file uses a part")]

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::CancellationToken;
use hands_core::browser::Browser as _;
use hands_core::browser::args::{PageUrl, WaitText};
use hands_core::browser::driver::ReadResult;
use serde_json::{Value, json};

/// A `hands run … --view` under way: the process (killed if the test ends before it does), its
/// page's address, what it printed since.
pub struct ViewedRun {
    /// The `hands run` process.
    pub child: Option<Child>,
    /// The page's address, with its token.
    pub view_url: String,
    /// Its standard error after the address line.
    pub stderr: Arc<Mutex<String>>,
}

impl ViewedRun {
    /// Starts `command` (a `hands run … --view`) and waits for the page's address.
    pub fn start(mut command: Command) -> ViewedRun {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut said = String::new();
        let view_url = loop {
            let Some(Ok(line)) = lines.next() else {
                panic!("hands run ended before it served its page: {said}");
            };
            if let Some(at) = line.split(" approve its actions at ").nth(1) {
                break at.trim().to_owned();
            }
            said.push_str(&(line + "\n"));
        };
        let stderr = Arc::new(Mutex::new(String::new()));
        let kept = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                kept.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        ViewedRun {
            child: Some(child),
            view_url,
            stderr,
        }
    }

    /// A headless Chromium at the run's page.
    pub async fn open_page(&self) -> CdpBrowser {
        let mut browser = CdpBrowser::launch(DriverConfig::default()).await.unwrap();
        browser
            .navigate(
                &PageUrl::parse("url", &self.view_url).unwrap(),
                None,
                &CancellationToken::new(),
            )
            .await
            .unwrap();
        browser
    }

    /// Waits for the run to end; panics with its output unless it succeeded.
    pub async fn wait_success(mut self) {
        let mut child = self.child.take().unwrap();
        let stderr = Arc::clone(&self.stderr);
        let status = tokio::task::spawn_blocking(move || child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(
            status.success(),
            "hands run failed: {}",
            stderr.lock().unwrap()
        );
    }
}

impl Drop for ViewedRun {
    fn drop(&mut self) {
        // A test that failed midway leaves no run waiting for a wheel nobody will give back.
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Waits until the page shows `text`.
pub async fn wait_text(browser: &mut CdpBrowser, text: &str) {
    let cancel = CancellationToken::new();
    browser
        .wait_for(
            &WaitText::parse(text).unwrap(),
            Duration::from_secs(60),
            None,
            &cancel,
        )
        .await
        .unwrap_or_else(|e| panic!("the page never showed {text:?}: {e}"));
}

/// The element labelled `label` on the viewer page.
pub async fn element(browser: &mut CdpBrowser, label: &str) -> hands_core::browser::read::Ref {
    let cancel = CancellationToken::new();
    let Some(ReadResult::Structured(read)) = browser.find(label, None, &cancel).await.unwrap()
    else {
        panic!("find gave no structured read")
    };
    read.elements()
        .iter()
        .find(|e| e.label() == label)
        .unwrap_or_else(|| panic!("no {label:?} in {read:?}"))
        .reference()
        .clone()
}

/// Clicks the element labelled `label`.
pub async fn click(browser: &mut CdpBrowser, label: &str) {
    let target = element(browser, label).await;
    browser
        .click(&target, None, &CancellationToken::new())
        .await
        .unwrap();
}

/// Types `text` in the page's key box (its characters and its Enter go to the screen).
pub async fn type_keys(browser: &mut CdpBrowser, text: &str) {
    eval(
        browser,
        "document.getElementById('wheel-keys').scrollIntoView({block: 'center'})",
    )
    .await;
    let keys = element(browser, "Keys to the screen").await;
    browser
        .type_text(text, Some(&keys), None, &CancellationToken::new())
        .await
        .unwrap();
}

/// What `js` gives on the viewer page.
pub async fn eval(browser: &CdpBrowser, js: &str) -> Value {
    let answer = browser
        .call_raw(
            None,
            "Runtime.evaluate",
            json!({"expression": js, "returnByValue": true, "awaitPromise": true}),
        )
        .await
        .unwrap();
    answer["result"]["value"].clone()
}

/// Waits until `js` is true on the viewer page (what no text shows: an image loaded).
pub async fn wait_js(browser: &CdpBrowser, js: &str) {
    for _ in 0..600 {
        if eval(browser, js).await == json!(true) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("never true: {js}");
}

/// A person's click on the streamed screen where it shows the screen's pixel (`x`, `y`): the
/// mouse moved there, pressed and released, as Chromium's input. The point is brought into view
/// first (the page's sticky header may cover it); the click is checked to have reached the
/// picture.
pub async fn click_screen_at(browser: &CdpBrowser, x: u32, y: u32) {
    for _ in 0..50 {
        let at = eval(
            browser,
            &format!(
                "(() => {{ const i = document.getElementById('wheel-screen');
                  i.scrollIntoView({{block: 'center'}});
                  const r = i.getBoundingClientRect();
                  const at = [r.left + i.clientLeft + ({x} + 0.5) * i.clientWidth / i.naturalWidth,
                              r.top + i.clientTop + ({y} + 0.5) * i.clientHeight / i.naturalHeight];
                  if (document.elementFromPoint(at[0], at[1]) !== i) return null;
                  window.__handsClicked = false;
                  i.addEventListener('click', () => {{ window.__handsClicked = true; }}, {{once: true}});
                  return at; }})()"
            ),
        )
        .await;
        let Some((px, py)) = at[0].as_f64().zip(at[1].as_f64()) else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        for (kind, buttons) in [("mouseMoved", 0), ("mousePressed", 1), ("mouseReleased", 0)] {
            browser
                .call_raw(
                    None,
                    "Input.dispatchMouseEvent",
                    json!({"type": kind, "x": px, "y": py, "button": "left",
                           "buttons": buttons, "clickCount": 1}),
                )
                .await
                .unwrap();
        }
        if eval(browser, "window.__handsClicked === true").await == json!(true) {
            return;
        }
    }
    panic!("the streamed screen's point ({x}, {y}) could not be clicked");
}

/// Saves a screenshot of the test's under the target's temporary directory.
pub fn save_shot(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, bytes).unwrap();
    eprintln!("{name}: {}", path.display());
    path
}

/// The text blocks of the last user message of a Messages request.
pub fn last_user_text(body: &Value) -> String {
    body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "text")
        .map(|b| b["text"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether the viewer's wheel box says an input of the person's did not reach the screen.
pub async fn said_failed(browser: &CdpBrowser) -> bool {
    last_failure(browser).await.is_some()
}

/// The last input of the person's the viewer said did not reach the screen (kept after later
/// inputs succeed), if any.
pub async fn last_failure(browser: &CdpBrowser) -> Option<String> {
    eval(
        browser,
        "document.getElementById('wheel-status').dataset.lastFailure || null",
    )
    .await
    .as_str()
    .map(str::to_owned)
}

/// What the viewer's wheel box says now.
pub async fn wheel_status(browser: &CdpBrowser) -> Value {
    eval(
        browser,
        "document.getElementById('wheel-status').textContent",
    )
    .await
}

/// The line of `kind` in a run directory's `log.jsonl`.
pub fn log_line(log: &str, kind: &str) -> Value {
    log.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} line in the log"))
}
