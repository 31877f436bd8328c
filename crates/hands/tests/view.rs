//! `hands run --view` as a person uses it: a real headless Chromium (driven through hands-cdp)
//! opens the page `hands run` prints, the run's steps render, the pending approval of a click
//! shows Approve / Deny, the Approve click reaches the runner, and the click runs on the real
//! Xvfb desktop (the next request answers it without an error). Then `hands view` serves the
//! finished run directory.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

mod viewer;

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::CancellationToken;
use hands_core::browser::Browser as _;
use hands_core::browser::args::PageUrl;
use hands_core::browser::driver::ReadResult;
use hands_sim::policy::{text, toolset_use};
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};
use viewer::{ViewedRun, element, wait_text};

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
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command
        .args(["run", "--desktop", "--view", "--task", "Click the middle"])
        .arg("--out")
        .arg(&out)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .env_remove("DISPLAY");
    let run = ViewedRun::start(command);
    let mut browser = run.open_page().await;
    let cancel = CancellationToken::new();
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
    let approve = element(&mut browser, "Approve").await;
    browser.click(&approve, None, &cancel).await.unwrap();
    wait_text(&mut browser, "approved (person)").await;

    run.wait_success().await;
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
    // The run directory keeps the decision and who made it.
    let approvals = std::fs::read_to_string(out.join("approvals.jsonl")).unwrap();
    let decided: Vec<Value> = approvals
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(decided.len(), 1, "{approvals}");
    assert_eq!(decided[0]["approved"], true);
    assert_eq!(decided[0]["by"], "person (page)");
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
    wait_text(&mut browser, "Approval 1: approved (person (page))").await;
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

/// Starts `hands view TARGET` and returns it with the URL it printed.
fn hands_view(target: &std::path::Path) -> (std::process::Child, String) {
    let mut view = Command::new(env!("CARGO_BIN_EXE_hands"))
        .arg("view")
        .arg(target)
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
    std::thread::spawn(move || for _ in lines {});
    (view, url)
}

/// `hands runs export RUN_DIR -o FILE` with `env` set; its status and stderr.
fn export(
    run_dir: &std::path::Path,
    out: &std::path::Path,
    env: &[(&str, &str)],
) -> (bool, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hands"));
    cmd.args(["runs", "export"]).arg(run_dir).arg("-o").arg(out);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = cmd.output().unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Steps the stand-in answers: a screenshot each, a click every tenth (refused by
/// `--approve none`, so recorded as an approval with its decider), then the end.
const STEPS: usize = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_50_step_run_exported_as_one_trace_is_served_with_a_timeline_and_a_scrubber() {
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        let c = |m: &str, input: Value| toolset_use("computer", m, input);
        if n >= STEPS {
            return Turn::text("All done after fifty steps.");
        }
        Turn::Blocks(if n % 10 == 0 {
            vec![
                text(&format!("Turn {n}: I click the middle.")),
                c("left_click", json!({"coordinate": [640, 400]})),
            ]
        } else {
            vec![
                text(&format!("Turn {n}: I look at the screen.")),
                c("screenshot", json!({})),
            ]
        })
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let status = Command::new(env!("CARGO_BIN_EXE_hands"))
        .args([
            "run",
            "--desktop",
            "--approve",
            "none",
            "--task",
            "Look fifty times",
        ])
        .args(["--max-steps", "60"])
        .arg("--out")
        .arg(&out)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .env_remove("DISPLAY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "hands run failed");
    assert_eq!(sim.requests().len(), STEPS);

    let trace = dir.path().join("run.hands");
    let (ok, stderr) = export(&out, &trace, &[]);
    assert!(ok, "{stderr}");
    let size = std::fs::metadata(&trace).unwrap().len();
    let images: u64 = std::fs::read_dir(out.join("images"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    let log = std::fs::metadata(out.join("log.jsonl")).unwrap().len();
    eprintln!(
        "trace of {STEPS} steps: {size} bytes (run directory: log.jsonl {log} bytes, images {images} bytes)"
    );
    assert!(size <= 2 * 1024 * 1024, "{size} bytes for {STEPS} steps");
    // Every step of the run directory is in the trace.
    let from_dir =
        hands_view::steps::read_log(&std::fs::read_to_string(out.join("log.jsonl")).unwrap());
    let opened = hands_view::trace::Trace::open(&trace).unwrap();
    let from_trace = hands_view::steps::read_log(&opened.log);
    // The same steps; screenshots smaller as JPEG are stored as `.jpg`.
    let same = |run: &hands_view::steps::RunView| {
        serde_json::to_string(run)
            .unwrap()
            .replace(".jpg\"", ".png\"")
    };
    assert_eq!(same(&from_trace), same(&from_dir));
    assert_eq!(from_dir.steps.len(), STEPS);
    assert_eq!(opened.manifest.counts.steps, STEPS as u64);
    assert_eq!(opened.manifest.model.as_deref(), Some("claude-opus-5-5"));
    assert!(opened.manifest.run_id.is_some());
    assert_eq!(opened.manifest.provider.as_deref(), Some("anthropic"));
    assert_eq!(opened.manifest.api.as_deref(), Some("messages"));
    // The refused clicks, each with who decided.
    let approvals = opened.approval_values();
    assert_eq!(approvals.len(), (STEPS - 1) / 10, "{approvals:?}");
    assert!(
        approvals
            .iter()
            .all(|a| a["approved"] == false && a["by"] == "--approve none")
    );
    let shots_in_dir = std::fs::read_dir(out.join("images")).unwrap().count();
    assert_eq!(opened.images.len(), shots_in_dir);
    assert!(opened.images.keys().all(|n| n.ends_with(".png")));
    // With --jpeg, the screenshots (smaller as JPEG) are JPEG files the log points at.
    let small = dir.path().join("small.hands");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hands"));
    let jpeg = cmd
        .args(["runs", "export", "--jpeg"])
        .arg(&out)
        .arg("-o")
        .arg(&small);
    assert!(jpeg.status().unwrap().success());
    let small = hands_view::trace::Trace::open(&small).unwrap();
    assert_eq!(small.images.len(), shots_in_dir);
    let jpgs: Vec<&Vec<u8>> = small
        .images
        .iter()
        .filter(|(n, _)| n.ends_with(".jpg"))
        .map(|(_, b)| b)
        .collect();
    assert!(!jpgs.is_empty());
    assert!(jpgs.iter().all(|b| b.starts_with(&[0xff, 0xd8])));
    let steps = hands_view::steps::read_log(&small.log);
    assert_eq!(same(&steps), same(&from_dir));
    assert!(
        steps.steps[0].actions[0]
            .image_after
            .as_deref()
            .unwrap()
            .ends_with(".jpg")
    );

    // `hands view run.hands`: the timeline counts the steps, the scrubber moves to step k.
    let (mut view, url) = hands_view(&trace);
    let mut browser = CdpBrowser::launch(DriverConfig::default()).await.unwrap();
    let cancel = CancellationToken::new();
    browser
        .navigate(&PageUrl::parse("url", &url).unwrap(), None, &cancel)
        .await
        .unwrap();
    wait_text(&mut browser, &format!("{STEPS} steps")).await;
    wait_text(&mut browser, "finished run (trace)").await;
    wait_text(
        &mut browser,
        "At step 1 of 50 — Turn 1: I look at the screen.",
    )
    .await;
    let tick = element(&mut browser, "Go to step 37").await;
    browser.click(&tick, None, &cancel).await.unwrap();
    wait_text(
        &mut browser,
        "At step 37 of 50 — Turn 37: I look at the screen.",
    )
    .await;
    let shot = browser.screenshot(None, &cancel).await.unwrap();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hands-view-trace.png");
    std::fs::write(&path, shot.bytes()).unwrap();
    eprintln!("the trace's view: {}", path.display());
    // A step of the run directory's own view is the same step.
    let (mut dir_view, dir_url) = hands_view(&out);
    browser
        .navigate(
            &PageUrl::parse("url", &format!("{dir_url}#step=20")).unwrap(),
            None,
            &cancel,
        )
        .await
        .unwrap();
    wait_text(
        &mut browser,
        "At step 20 of 50 — Turn 20: I click the middle.",
    )
    .await;
    for child in [&mut view, &mut dir_view] {
        let _ = child.kill();
        let _ = child.wait();
    }
}

#[test]
fn no_api_key_or_mcp_bearer_token_reaches_the_exported_bytes() {
    const KEY: &str = "sk-ant-canary-4f1d9c2b7e";
    const BEARER: &str = "mcp-bearer-canary-93ab17";
    let fixture = hands_sim::McpFixture::with_token(BEARER).unwrap();
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![hands_sim::policy::mcp_use(
            "notes",
            hands_sim::mcp_fixture::ADD_NOTE,
            json!({"text": "hi"}),
        )]),
        Turn::text("Done."),
    ]))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let status = Command::new(env!("CARGO_BIN_EXE_hands"))
        .args([
            "run",
            "--desktop",
            "--provider",
            "openai",
            "--model",
            "gpt-5.5",
        ])
        .args(["--approve", "all", "--task", "Nothing"])
        .arg("--mcp")
        .arg(format!("notes={}", fixture.url()))
        .args(["--mcp-token-env", "notes=NOTES_TOKEN"])
        .arg("--out")
        .arg(&out)
        .env("OPENAI_API_KEY", KEY)
        .env("OPENAI_BASE_URL", sim.openai_base_url())
        .env("NOTES_TOKEN", BEARER)
        .env_remove("DISPLAY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "hands run failed: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    // The token was in the run's declaration: the MCP server got it with the call.
    let calls = fixture.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].bearer.as_deref(), Some(BEARER));
    // What a careless writer could have left in a log: the declaration with its token, the
    // key in text, an authorization header, credentials in a URL.
    let leaked = json!({"kind": "request", "step": 9, "body": {
        "mcp_servers": [{"type": "url", "url": format!("https://user:{BEARER}@mcp.invalid/mcp"),
                         "name": "notes", "authorization_token": BEARER}],
        "tools": [{"type": "mcp", "server_url": "https://mcp.invalid/mcp",
                   "headers": {"Authorization": format!("Bearer {BEARER}")}}],
        "headers": {"x-api-key": KEY},
        "messages": [{"role": "user", "content": format!("my key is {KEY}")}]}});
    let mut log = std::fs::read_to_string(out.join("log.jsonl")).unwrap();
    log.push_str(&format!(
        "{leaked}\nplain text Authorization: Bearer {BEARER}\n"
    ));
    std::fs::write(out.join("log.jsonl"), log).unwrap();

    let trace = dir.path().join("run.hands");
    let (ok, stderr) = export(
        &out,
        &trace,
        &[("OPENAI_API_KEY", KEY), ("NOTES_TOKEN", BEARER)],
    );
    assert!(ok, "{stderr}");
    let packed = std::fs::read(&trace).unwrap();
    let unpacked = Command::new("gzip")
        .arg("-dc")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(unpacked.status.success());
    for bytes in [&packed, &unpacked.stdout] {
        let text = String::from_utf8_lossy(bytes);
        for secret in [KEY, BEARER] {
            assert!(!text.contains(secret), "{secret} is in the trace");
        }
    }
    let text = String::from_utf8_lossy(&unpacked.stdout);
    assert!(
        text.contains("mcp.invalid"),
        "the declaration is kept, its secrets removed"
    );
    assert!(text.contains("<redacted>"));
}

#[test]
fn a_truncated_or_corrupted_trace_is_refused_with_a_clear_error() {
    let sim = SimServer::start(SimConfig::scripted(vec![Turn::text("Done.")])).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let status = Command::new(env!("CARGO_BIN_EXE_hands"))
        .args(["run", "--desktop", "--approve", "none", "--task", "Nothing"])
        .arg("--out")
        .arg(&out)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .env_remove("DISPLAY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let trace = dir.path().join("run.hands");
    let (ok, stderr) = export(&out, &trace, &[]);
    assert!(ok, "{stderr}");
    let bytes = std::fs::read(&trace).unwrap();
    let mut flipped = bytes.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0xff;
    for (what, content) in [
        ("truncated", bytes[..bytes.len() / 2].to_vec()),
        ("corrupted", flipped),
    ] {
        let bad = dir.path().join(format!("{what}.hands"));
        std::fs::write(&bad, content).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_hands"))
            .arg("view")
            .arg(&bad)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{what}: {stderr}");
        assert!(
            stderr.contains("is not a readable hands trace"),
            "{what}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    }
}
