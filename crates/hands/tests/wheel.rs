//! Taking the wheel as a person does (issue 22): `hands run --browser … --view` against the
//! stand-in model; a real headless Chromium (driven through hands-cdp) opens the page `hands
//! run` prints, clicks "Take over" while an approval waits, denies it, gets the run's browser
//! on the page, clicks into it, types a name and Enter through the page, and clicks "Give
//! back". The model's next request carries the note of what hands observed — the field
//! changed, the page visited — and so do the run directory's log and the ledger's checkpoint.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

mod viewer;

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hands_core::CancellationToken;
use hands_core::browser::Browser as _;
use hands_runner::ledger::Ledger as _;
use hands_sim::policy::{text, toolset_use};
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};
use viewer::{
    ViewedRun, click, element, last_user_text, said_failed, save_shot, wait_js, wait_text,
};

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
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command
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
        .env("ANTHROPIC_BASE_URL", sim.base_url());
    let run = ViewedRun::start(command);
    let stderr = Arc::clone(&run.stderr);
    let mut browser = run.open_page().await;
    let cancel = CancellationToken::new();
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
        let said = viewer::wheel_status(&browser).await;
        panic!(
            "the form was not posted; paths served {:?}; the viewer said {said}; hands run: {}",
            paths.lock().unwrap(),
            stderr.lock().unwrap()
        );
    }
    assert!(
        !said_failed(&browser).await,
        "the viewer reported a failed input"
    );
    click(&mut browser, "Give back").await;

    run.wait_success().await;
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
