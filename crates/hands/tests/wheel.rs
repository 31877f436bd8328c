//! Taking the wheel as a person does (issue 22): `hands run --browser … --view` against the
//! stand-in model; a real headless Chromium (driven through hands-cdp) opens the page `hands
//! run` prints, clicks "Take over" while an approval waits, denies it, gets the run's browser
//! on the page, clicks into it, types a name and Enter through the page, and clicks "Give
//! back". The model's next request carries the note of what hands observed — the field
//! changed, the page visited — and so do the run directory's log and the ledger's checkpoint.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::CancellationToken;
use hands_core::browser::Browser as _;
use hands_core::browser::args::{PageUrl, WaitText};
use hands_core::browser::driver::ReadResult;
use hands_runner::ledger::Ledger as _;
use hands_sim::policy::{text, toolset_use};
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};

const FORM_PAGE: &str = r#"<!doctype html><title>Guest book</title>
<style>h1 { font: 40px sans-serif; margin: 10px; }
input { position: fixed; left: 0; top: 80px; width: 100vw; height: calc(100vh - 80px);
  font-size: 64px; background: #fffbe6; border: 4px solid #2e7d32; box-sizing: border-box; }</style>
<h1>Guest book: sign with your name and press Enter</h1>
<img src="http://198.51.100.7/tracker.gif" alt="">
<script>fetch('/count?token=tok-abc123secret');</script>
<form action="/done"><label>Name <input name="name" autocomplete="off"></label></form>"#;

/// A local site: `/` a one-field form, `/done` thanks whoever signed. Records the paths served.
fn site() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/",
        listener.local_addr().unwrap().port()
    );
    let paths = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&paths);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut first = String::new();
            if reader.read_line(&mut first).is_err() {
                continue;
            }
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let path = first.split(' ').nth(1).unwrap_or("/").to_owned();
            seen.lock().unwrap().push(path.clone());
            let body = if path.starts_with("/done") {
                "<!doctype html><title>Thanks</title><p>Thanks for signing.".to_owned()
            } else {
                FORM_PAGE.to_owned()
            };
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, paths)
}

async fn wait_text(browser: &mut CdpBrowser, text: &str) {
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
async fn element(browser: &mut CdpBrowser, label: &str) -> hands_core::browser::read::Ref {
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

async fn click(browser: &mut CdpBrowser, label: &str) {
    let target = element(browser, label).await;
    browser
        .click(&target, None, &CancellationToken::new())
        .await
        .unwrap();
}

/// Waits until `js` is true on the viewer page (what no text shows: an image loaded).
async fn wait_js(browser: &CdpBrowser, js: &str) {
    for _ in 0..600 {
        let answer = browser
            .call_raw(
                None,
                "Runtime.evaluate",
                json!({"expression": js, "returnByValue": true}),
            )
            .await
            .unwrap();
        if answer["result"]["value"] == json!(true) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("never true: {js}");
}

fn save_shot(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, bytes).unwrap();
    eprintln!("{name}: {}", path.display());
    path
}

/// The text blocks of the last user message of a Messages request.
fn last_user_text(body: &Value) -> String {
    body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "text")
        .map(|b| b["text"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_takes_the_wheel_types_through_the_page_and_the_model_is_told() {
    let (url, paths) = site();
    let mut n = 0;
    let start = url.clone();
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        match n {
            1 => Turn::Blocks(vec![
                text("Let me read the page."),
                toolset_use("browser", "read_page", json!({})),
            ]),
            2 => Turn::Blocks(vec![
                text("I reload it."),
                toolset_use("browser", "navigate", json!({"url": start})),
            ]),
            _ => Turn::text("Thanks, I see what you did."),
        }
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_hands"))
        .args([
            "run",
            "--browser",
            &url,
            "--view",
            "--task",
            "Sign the guest book",
        ])
        .arg("--out")
        .arg(&out)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let view_url = loop {
        let line = lines.next().expect("hands run ended early").unwrap();
        if let Some(at) = line.split(" approve its actions at ").nth(1) {
            break at.trim().to_owned();
        }
    };
    let stderr = Arc::new(Mutex::new(String::new()));
    let kept = Arc::clone(&stderr);
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            kept.lock().unwrap().push_str(&(line + "\n"));
        }
    });

    let mut browser = CdpBrowser::launch(DriverConfig::default()).await.unwrap();
    let cancel = CancellationToken::new();
    browser
        .navigate(&PageUrl::parse("url", &view_url).unwrap(), None, &cancel)
        .await
        .unwrap();
    // The navigation waits for the person; they ask for the wheel, then deny it.
    wait_text(&mut browser, "Waiting for your approval").await;
    wait_text(&mut browser, "The model has the wheel.").await;
    click(&mut browser, "Take over").await;
    wait_text(&mut browser, "You asked for the wheel").await;
    assert_eq!(sim.requests().len(), 2, "the run is held by the approval");
    click(&mut browser, "Deny").await;
    wait_text(&mut browser, "You have the wheel").await;
    wait_js(
        &browser,
        "document.getElementById('wheel-screen').naturalWidth > 0",
    )
    .await;
    assert_eq!(
        sim.requests().len(),
        2,
        "the run waits while the person drives"
    );

    // A click on the screen lands in the run's page (its field covers most of it); the text
    // and Enter typed in the page's key box go there too.
    click(&mut browser, "The run's screen (click to click there)").await;
    let keys = element(&mut browser, "Keys to the screen").await;
    browser
        .type_text("Ada Lovelace", Some(&keys), None, &cancel)
        .await
        .unwrap();
    // For the picture only: a few frames for the typed name to show on the screen.
    tokio::time::sleep(Duration::from_secs(1)).await;
    browser
        .call_raw(
            None,
            "Runtime.evaluate",
            json!({"expression": "window.scrollTo(0, 0)"}),
        )
        .await
        .unwrap();
    let shot = browser.screenshot(None, &cancel).await.unwrap();
    let takeover = save_shot("hands-wheel-takeover.png", &shot.bytes());
    let keys = element(&mut browser, "Keys to the screen").await;
    browser
        .type_text("\n", Some(&keys), None, &cancel)
        .await
        .unwrap();
    for _ in 0..600 {
        if paths.lock().unwrap().iter().any(|p| p.starts_with("/done")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let signed = paths
        .lock()
        .unwrap()
        .iter()
        .any(|p| p == "/done?name=Ada+Lovelace");
    if !signed {
        let said = browser
            .call_raw(
                None,
                "Runtime.evaluate",
                json!({"expression": "document.getElementById('wheel-status').textContent",
                       "returnByValue": true}),
            )
            .await
            .unwrap();
        panic!(
            "the form was not posted; paths served {:?}; the viewer said {}; hands run: {}",
            paths.lock().unwrap(),
            said["result"]["value"],
            stderr.lock().unwrap()
        );
    }
    assert!(
        !said_failed(&browser).await,
        "the viewer reported a failed input"
    );
    click(&mut browser, "Give back").await;

    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(
        status.success(),
        "hands run failed: {}",
        stderr.lock().unwrap()
    );
    let requests = sim.requests();
    assert_eq!(requests.len(), 3);
    let note = last_user_text(&requests[2].body);
    eprintln!("the note the model got:\n{note}");
    let port = url.trim_end_matches('/');
    assert!(
        note.starts_with("A person took over the browser for "),
        "{note}"
    );
    assert!(
        note.contains(&format!(
            "- Pages visited: {port}/done?name=Ada+Lovelace (tab t1)."
        )),
        "{note}"
    );
    assert!(
        note.contains(&format!(
            "- Fields changed: \"Name\" (text) on {port}/: now \"Ada Lovelace\"."
        )),
        "{note}"
    );
    assert!(
        note.contains("The active tab is now t1: \"Thanks\""),
        "{note}"
    );
    // The denied navigation was answered before the note, in the same user turn.
    assert!(
        requests[2].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"][0]["type"]
            == "tool_result"
    );

    // Recorded: the run directory's log and the ledger's last checkpoint hold the note.
    let log = std::fs::read_to_string(out.join("log.jsonl")).unwrap();
    let handoff: Value = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["kind"] == "handoff")
        .expect("no handoff line in the log");
    assert_eq!(handoff["note"], json!(note));
    assert_eq!(handoff["step"], json!(2));
    let mut ledger = hands_runner::ledger::SqliteLedger::open(&out.join("ledger.sqlite")).unwrap();
    let checkpoint = ledger.latest().unwrap().unwrap();
    assert!(checkpoint.conversation.to_string().contains("Ada Lovelace"));

    // The network log: the page, the refused tracker, the fetch without its query.
    let network: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["kind"] == "network")
        .flat_map(|l| l["requests"].as_array().unwrap().clone())
        .collect();
    let page = network
        .iter()
        .find(|r| r["url"] == json!(url) && r["kind"] == "Document")
        .unwrap_or_else(|| panic!("{network:?}"));
    assert_eq!(page["status"], 200, "{page}");
    assert!(page["bytes"].as_u64().unwrap() > 100, "{page}");
    assert!(
        network
            .iter()
            .any(|r| r["url"] == "http://198.51.100.7" && r["blocked"].is_string()),
        "{network:?}"
    );
    assert!(
        !log.contains("abc123secret"),
        "a query value reached the log"
    );
    // The page shows the hand-off at its step.
    wait_text(&mut browser, "A person had the wheel after this step").await;
    let shot = browser.screenshot(None, &cancel).await.unwrap();
    save_shot("hands-wheel-timeline.png", &shot.bytes());
    assert!(takeover.exists());
}

/// Whether the viewer's wheel box says an input of the person's did not reach the screen.
async fn said_failed(browser: &CdpBrowser) -> bool {
    let answer = browser
        .call_raw(
            None,
            "Runtime.evaluate",
            json!({"expression": "document.getElementById('wheel-status').className === 'failed'",
                   "returnByValue": true}),
        )
        .await
        .unwrap();
    answer["result"]["value"] == json!(true)
}
