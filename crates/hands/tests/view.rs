//! `hands run --view` as a person uses it: a real headless Chromium (driven through hands-cdp)
//! opens the page `hands run` prints, the run's steps render, the pending approval of a click
//! shows Approve / Deny, the Approve click reaches the runner, and the click runs on the real
//! Xvfb desktop (the next request answers it without an error). Then `hands view` serves the
//! finished run directory.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::CancellationToken;
use hands_core::browser::Browser as _;
use hands_core::browser::args::{PageUrl, WaitText};
use hands_core::browser::driver::ReadResult;
use hands_sim::policy::{text, toolset_use};
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};

async fn wait_text(browser: &mut CdpBrowser, text: &str) {
    let cancel = CancellationToken::new();
    browser
        .wait_for(
            &WaitText::parse(text).unwrap(),
            Duration::from_secs(30),
            None,
            &cancel,
        )
        .await
        .unwrap_or_else(|e| panic!("the page never showed {text:?}: {e}"));
}

async fn button(browser: &mut CdpBrowser, label: &str) -> hands_core::browser::read::Ref {
    let cancel = CancellationToken::new();
    let Some(ReadResult::Structured(read)) = browser.find(label, None, &cancel).await.unwrap()
    else {
        panic!("find gave no structured read")
    };
    read.elements()
        .iter()
        .find(|e| e.label() == label)
        .unwrap_or_else(|| panic!("no {label} button in {read:?}"))
        .reference()
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approve_click_on_the_page_reaches_the_runner_and_the_action_runs() {
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        let c = |m: &str, input: Value| toolset_use("computer", m, input);
        Turn::Blocks(match n {
            1 => vec![text("Let me look first."), c("screenshot", json!({}))],
            2 => vec![
                text("Now I click the middle."),
                c("left_click", json!({"coordinate": [640, 400]})),
            ],
            _ => return Turn::text("All done."),
        })
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_hands"))
        .args(["run", "--desktop", "--view", "--task", "Click the middle"])
        .arg("--out")
        .arg(&out)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .env_remove("DISPLAY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("hands run ended early").unwrap();
        if let Some(at) = line.split(" approve its actions at ").nth(1) {
            break at.trim().to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});

    let mut browser = CdpBrowser::launch(DriverConfig::default()).await.unwrap();
    let cancel = CancellationToken::new();
    browser
        .navigate(&PageUrl::parse("url", &url).unwrap(), None, &cancel)
        .await
        .unwrap();
    // The first step rendered (the model's text), then the click waits for the person.
    wait_text(&mut browser, "Let me look first.").await;
    wait_text(&mut browser, "Waiting for your approval").await;
    assert!(
        sim.requests().len() == 2,
        "the run must wait for the approval"
    );
    // The question says what will run; no empty detail (`null`) under it.
    let page_text = match browser.get_page_text(None, &cancel).await.unwrap() {
        Some(ReadResult::Text(text)) => text,
        Some(ReadResult::Structured(read)) => read.text().to_owned(),
        None => String::new(),
    };
    assert!(
        !page_text.lines().any(|l| l.trim() == "null"),
        "{page_text}"
    );
    let pending = browser.screenshot(None, &cancel).await.unwrap();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hands-view-pending.png");
    std::fs::write(&path, pending.bytes()).unwrap();
    let approve = button(&mut browser, "Approve").await;
    browser.click(&approve, None, &cancel).await.unwrap();
    wait_text(&mut browser, "approved (person)").await;

    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "hands run failed");
    // The click ran: the request after it answers it without an error.
    let requests = sim.requests();
    assert_eq!(requests.len(), 3);
    let answer = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_result")
        .cloned()
        .unwrap();
    assert_ne!(answer["is_error"], json!(true), "{answer}");
    // The page followed the run to its end: the last step's text and the after-screenshot.
    wait_text(&mut browser, "Now I click the middle.").await;
    let shot = browser.screenshot(None, &cancel).await.unwrap();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hands-view-live.png");
    std::fs::write(&path, shot.bytes()).unwrap();
    eprintln!("the live view: {}", path.display());

    // `hands view` on the finished run directory: the same steps, no approval buttons.
    let mut view = Command::new(env!("CARGO_BIN_EXE_hands"))
        .arg("view")
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(view.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("hands view ended early").unwrap();
        if let Some(at) = line.split(" at http").nth(1) {
            break format!("http{}", at.trim());
        }
    };
    browser
        .navigate(&PageUrl::parse("url", &url).unwrap(), None, &cancel)
        .await
        .unwrap();
    wait_text(&mut browser, "Now I click the middle.").await;
    wait_text(&mut browser, "finished run").await;
    let shot = browser.screenshot(None, &cancel).await.unwrap();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hands-view-static.png");
    std::fs::write(&path, shot.bytes()).unwrap();
    // Without the token, the API answers nothing.
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    std::io::Write::write_all(
        &mut stream,
        format!("GET /api/run HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap();
    let mut reply = String::new();
    std::io::Read::read_to_string(&mut stream, &mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");
    let _ = view.kill();
    let _ = view.wait();
}
