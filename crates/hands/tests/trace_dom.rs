//! DOM snapshots in a run's trace (issue 22): `hands run --browser` on a page with scripts,
//! event handlers, a password field with a value, an open shadow root and a frame. After each
//! action the run directory holds a snapshot (one file per distinct content); the trace holds
//! them; `hands view run.hands` links each step to its snapshot, served as sandboxed text — the
//! page's HTML never runs in the view's origin.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

mod site;
mod viewer;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Command, Stdio};

use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::CancellationToken;
use hands_core::browser::Browser as _;
use hands_core::browser::args::PageUrl;
use hands_sim::policy::{text, toolset_use};
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};
use viewer::eval;

const PAGE: &str = r#"<!doctype html><title>Shop</title>
<h1 id=h>Basket</h1>
<img src="/none.png" alt="logo" onerror="window.SCRIPT_RAN_IN = location.origin">
<form><input id=pw type=password value="attr-pass-123"><input id=q value="plain value"></form>
<div id=host></div><iframe src="/frame"></iframe>
<script>
const SECRET_SOURCE = 'source-of-the-page-script';
document.getElementById('host').attachShadow({mode: 'open'}).innerHTML = '<b>in the shadow</b>';
</script>"#;

fn site() -> String {
    site::serve(|path| if path == "/" { PAGE } else { "<p>frame</p>" }.to_owned())
}

/// `GET url` on loopback: the head and the body.
fn get(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (head.to_ascii_lowercase(), body.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_browser_step_has_a_dom_snapshot_viewed_as_sandboxed_text() {
    let url = site();
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        match n {
            1 => Turn::Blocks(vec![toolset_use("browser", "read_page", json!({}))]),
            2 => Turn::Blocks(vec![toolset_use(
                "browser",
                "javascript_exec",
                json!({"text": "document.getElementById('h').textContent = 'Basket (2)'; 'ok'"}),
            )]),
            3 => Turn::Blocks(vec![toolset_use("browser", "read_page", json!({}))]),
            _ => Turn::Blocks(vec![text("Done.")]),
        }
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let output = Command::new(env!("CARGO_BIN_EXE_hands"))
        .args(["run", "--browser", &url, "--approve", "all"])
        .args(["--browser-extra-members", "javascript_exec"])
        .args(["--task", "Look at the basket.", "--out"])
        .arg(&run)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");

    // Three actions, three `dom` lines; the first and last read the same page (one file),
    // the change between made a second.
    let log = std::fs::read_to_string(run.join("log.jsonl")).unwrap();
    let files: Vec<String> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["kind"] == "dom")
        .map(|v| v["file"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(files.len(), 3, "{log}");
    assert_ne!(files[0], files[1]);
    assert_eq!(files[1], files[2]);
    assert_eq!(std::fs::read_dir(run.join("dom")).unwrap().count(), 2);
    let html = std::fs::read_to_string(run.join(&files[2])).unwrap();
    assert!(html.contains("Basket (2)"), "{html}");
    assert!(
        html.contains(r#"<template shadowrootmode="open"><b>in the shadow</b></template>"#),
        "{html}"
    );
    assert!(html.contains("<!-- hands: a frame ("), "{html}");
    assert!(html.contains(r#"value="plain value""#), "{html}");
    assert!(html.contains("<script></script>"), "{html}");
    for gone in [
        "source-of-the-page-script",
        "attr-pass-123",
        "onerror",
        "SCRIPT_RAN_IN",
    ] {
        assert!(!html.contains(gone), "{gone} in {html}");
    }

    // The trace holds both; the view links each step to its snapshot.
    let trace = dir.path().join("run.hands");
    let exported = Command::new(env!("CARGO_BIN_EXE_hands"))
        .args(["runs", "export"])
        .arg(&run)
        .arg("-o")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(exported.status.success());
    let opened = hands_view::trace::Trace::open(&trace).unwrap();
    assert_eq!(opened.doms.len(), 2);
    assert_eq!(opened.manifest.counts.doms, 2);
    let mut view = Command::new(env!("CARGO_BIN_EXE_hands"))
        .arg("view")
        .arg(&trace)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(view.stderr.take().unwrap()).lines();
    let view_url = loop {
        let line = lines.next().expect("hands view ended early").unwrap();
        if let Some(at) = line.split(" at http").nth(1) {
            break format!("http{}", at.trim());
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let mut browser = CdpBrowser::launch(DriverConfig::default()).await.unwrap();
    let cancel = CancellationToken::new();
    browser
        .navigate(&PageUrl::parse("url", &view_url).unwrap(), None, &cancel)
        .await
        .unwrap();
    let links = eval(
        &browser,
        "new Promise((done) => { const t = setInterval(() => { \
         const a = [...document.querySelectorAll('a.dom')]; \
         if (a.length >= 3) { clearInterval(t); done(a.map((x) => x.href)); } }, 20); })",
    )
    .await;
    let links: Vec<String> = serde_json::from_value(links).unwrap();
    assert_eq!(links.len(), 3, "{links:?}");
    let (head, body) = get(&links[2]);
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(
        head.contains("content-type: text/plain; charset=utf-8"),
        "{head}"
    );
    assert!(head.contains("content-security-policy: sandbox"), "{head}");
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");
    assert!(body.contains("Basket (2)"));
    // Opened in the browser, it is text in an opaque origin: nothing of it runs.
    browser
        .navigate(&PageUrl::parse("url", &links[2]).unwrap(), None, &cancel)
        .await
        .unwrap();
    assert_eq!(eval(&browser, "document.contentType").await, "text/plain");
    assert_eq!(
        eval(&browser, "document.querySelectorAll('b, img').length").await,
        0
    );
    assert_eq!(
        eval(&browser, "String(window.SCRIPT_RAN_IN)").await,
        "undefined"
    );
    assert!(
        eval(&browser, "document.body.textContent")
            .await
            .as_str()
            .unwrap()
            .contains("<template shadowrootmode")
    );
    // Without the token, nothing.
    let bare = links[2].split('?').next().unwrap();
    assert!(get(bare).0.starts_with("http/1.1 403"));
    let _ = view.kill();
    let _ = view.wait();
}
