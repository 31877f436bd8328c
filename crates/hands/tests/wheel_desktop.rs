//! Taking the wheel of a desktop run as a person does (issue 22): a real Xvfb with openbox, a
//! GTK text window and an `xmessage` that opens a second window when Enter is pressed in it;
//! `hands run --desktop --display … --view` against the stand-in model; a real headless
//! Chromium opens the page `hands run` prints, clicks "Take over" while an approval waits,
//! denies it, gets the desktop on the page, clicks into the text window on the streamed screen
//! and types, clicks the message and presses Enter, sees the new window and clicks "Give back".
//! The model's next request carries the note of what hands observed — the window opened, the
//! one closed, the focused one, the input counted — the run then goes on (the model's next
//! screenshot runs), and the log and the ledger hold the note. A second test takes the wheel of
//! the jailed desktop a default `hands run --desktop --view` spawns.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

mod viewer;

use std::process::Command;
use std::time::Duration;

use hands_cdp::CdpBrowser;
use hands_core::CancellationToken;
use hands_core::browser::Browser as _;
use hands_core::geometry::Size;
use hands_runner::ledger::Ledger as _;
use hands_sim::policy::{text, toolset_use};
use hands_sim::{SimConfig, SimServer, Turn};
use hands_testkit::GtkText;
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::{Value, json};
use viewer::{
    ViewedRun, click, click_screen_at, last_user_text, log_line, save_shot, type_keys, wait_js,
    wait_text,
};
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::ConnectionExt as _;

/// What the person types into the text window.
const TYPED: &str = "Ada was here";

/// The first message's shell line: Enter in it (its default button) opens the second window.
const MESSAGES: &str = "xmessage -title Ask -geometry +600+450 -default Open -buttons Open:0 \
    'Press Enter to open the second window' && exec xmessage -title 'Second window' 'Opened'";

/// Waits until a top-level window titled `title` is on the desktop; its id.
async fn window_titled(desktop: &X11Desktop, title: &str) -> u32 {
    for _ in 0..300 {
        let now = desktop.windows().await.unwrap();
        if let Some(window) = now.windows.iter().find(|w| w.title == title) {
            return window.id;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no window titled {title:?} appeared");
}

/// Waits until `window` has the focus (what the person sees: its title bar lit); says what
/// the desktop, the viewer and the run said when it never does.
async fn expect_focus(desktop: &X11Desktop, window: u32, browser: &CdpBrowser, run: &ViewedRun) {
    for _ in 0..300 {
        let now = desktop.windows().await.unwrap();
        if now.focused.as_ref().is_some_and(|w| w.id == window) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "window {window:#x} never got the focus: {:?}; the viewer said {}; hands run: {}",
        desktop.windows().await,
        viewer::wheel_status(browser).await,
        run.stderr.lock().unwrap()
    );
}

/// Where `window` is on the screen: its left, top, width and height.
fn rect(display: &str, window: u32) -> (u32, u32, u32, u32) {
    let (conn, screen) = x11rb::connect(Some(display)).unwrap();
    let root = conn.setup().roots[screen].root;
    let at = conn
        .translate_coordinates(window, root, 0, 0)
        .unwrap()
        .reply()
        .unwrap();
    let geometry = conn.get_geometry(window).unwrap().reply().unwrap();
    let (x, y) = (at.dst_x.max(0), at.dst_y.max(0));
    (
        u32::try_from(x).unwrap(),
        u32::try_from(y).unwrap(),
        u32::from(geometry.width),
        u32::from(geometry.height),
    )
}

/// The user message's content blocks of a Messages request.
fn last_content(body: &Value) -> Vec<Value> {
    body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_takes_the_desktops_wheel_opens_a_window_and_the_model_is_told() {
    let desktop = X11Desktop::spawn(&XvfbConfig::new(Size::new(1024, 768).unwrap())).unwrap();
    let display = desktop.display().to_owned();
    let _wm = desktop.spawn_client("openbox", &[]).unwrap();
    for _ in 0..500 {
        if desktop.window_manager_ready().await.unwrap() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut gtk = GtkText::start(&display).unwrap();
    let _messages = desktop.spawn_client("sh", &["-c", MESSAGES]).unwrap();
    let ask = window_titled(&desktop, "Ask").await;

    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        let c = |m: &str, input: Value| toolset_use("computer", m, input);
        Turn::Blocks(match n {
            1 => vec![text("Let me look."), c("screenshot", json!({}))],
            2 => vec![
                text("I click the corner."),
                c("left_click", json!({"coordinate": [2, 2]})),
            ],
            3 => vec![text("I look again."), c("screenshot", json!({}))],
            _ => return Turn::text("I see the second window."),
        })
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command
        .args([
            "run",
            "--desktop",
            "--display",
            &display,
            "--sandbox",
            "none",
            "--view",
        ])
        .args(["--task", "Open the second window"])
        .arg("--out")
        .arg(&out)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url());
    let run = ViewedRun::start(command);
    let mut browser = run.open_page().await;

    // The click waits for the person; they ask for the wheel, then deny the click.
    wait_text(&mut browser, "Waiting for your approval").await;
    wait_text(&mut browser, "The model has the wheel.").await;
    click(&mut browser, "Take over").await;
    wait_text(&mut browser, "You asked for the wheel").await;
    click(&mut browser, "Deny").await;
    wait_text(&mut browser, "You have the wheel").await;
    wait_js(
        &browser,
        "document.getElementById('wheel-screen').naturalWidth === 1024",
    )
    .await;
    assert_eq!(
        sim.requests().len(),
        2,
        "the run waits while the person drives"
    );

    // A click into the text window where the screen shows it, then text typed in the key box.
    let (x, y, width, height) = rect(&display, gtk.window());
    click_screen_at(&browser, x + width / 2, y + height / 2).await;
    expect_focus(&desktop, gtk.window(), &browser, &run).await;
    type_keys(&mut browser, TYPED).await;
    let got = tokio::task::block_in_place(|| {
        gtk.wait_for_text(TYPED.chars().count(), Duration::from_secs(30))
    })
    .unwrap();
    assert_eq!(got, TYPED, "the text window got what the person typed");

    // A click on the message, Enter: it closes and the second window opens.
    let (x, y, width, _) = rect(&display, ask);
    click_screen_at(&browser, x + width / 2, y + 8).await;
    expect_focus(&desktop, ask, &browser, &run).await;
    type_keys(&mut browser, "\n").await;
    window_titled(&desktop, "Second window").await;
    // The person sees it on the streamed screen.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let shot = browser
        .screenshot(None, &CancellationToken::new())
        .await
        .unwrap();
    save_shot("hands-wheel-desktop.png", &shot.bytes());
    assert_eq!(
        viewer::last_failure(&browser).await,
        None,
        "the viewer reported a failed input"
    );
    click(&mut browser, "Give back").await;
    let stderr = std::sync::Arc::clone(&run.stderr);
    run.wait_success().await;

    let requests = sim.requests();
    assert_eq!(
        requests.len(),
        4,
        "the run goes on after the hand-off: {}",
        stderr.lock().unwrap()
    );
    let note = last_user_text(&requests[2].body);
    eprintln!("the note the model got:\n{note}");
    assert!(
        note.starts_with("A person took over the desktop for "),
        "{note}"
    );
    assert!(
        note.contains("\n- Windows opened: \"Second window\".\n"),
        "{note}"
    );
    assert!(note.contains("\n- Windows closed: \"Ask\".\n"), "{note}");
    assert!(
        note.contains(&format!(
            "\n- Their input: 2 clicks, keys Return, {} characters typed (not shown).",
            TYPED.len()
        )),
        "{note}"
    );
    assert!(
        note.contains("The focused window is now \"Second window\"."),
        "{note}"
    );
    assert!(!note.contains(TYPED), "the typed text is not told: {note}");
    // The denied click was answered before the note, in the same user turn; the screenshot
    // after the hand-off ran.
    assert_eq!(last_content(&requests[2].body)[0]["type"], "tool_result");
    let after = last_content(&requests[3].body);
    assert_eq!(after[0]["type"], "tool_result", "{after:?}");
    assert_ne!(after[0]["is_error"], json!(true), "{after:?}");

    // Recorded: the run directory's log and the ledger's last checkpoint hold the note.
    let log = std::fs::read_to_string(out.join("log.jsonl")).unwrap();
    let handoff = log_line(&log, "handoff");
    assert_eq!(handoff["note"], json!(note));
    assert_eq!(handoff["step"], json!(2));
    let mut ledger = hands_runner::ledger::SqliteLedger::open(&out.join("ledger.sqlite")).unwrap();
    let checkpoint = ledger.latest().unwrap().unwrap();
    assert!(
        checkpoint
            .conversation
            .to_string()
            .contains("Windows opened: \\\"Second window\\\"")
    );
}

/// The desktop `hands run --desktop` spawns in the episode's jail (the default) is handed over
/// too: its frames and the person's click go through a connection of the wheel's own, made
/// through the jail's launcher.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jailed_desktop_of_a_default_run_is_handed_over_too() {
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        Turn::Blocks(match n {
            1 => vec![
                text("I click the middle."),
                toolset_use("computer", "left_click", json!({"coordinate": [640, 400]})),
            ],
            _ => return Turn::text("Done."),
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
    wait_text(&mut browser, "Waiting for your approval").await;
    wait_text(&mut browser, "The model has the wheel.").await;
    click(&mut browser, "Take over").await;
    wait_text(&mut browser, "You asked for the wheel").await;
    click(&mut browser, "Deny").await;
    wait_text(&mut browser, "You have the wheel").await;
    wait_js(
        &browser,
        "document.getElementById('wheel-screen').naturalWidth === 1280",
    )
    .await;
    click_screen_at(&browser, 640, 400).await;
    type_keys(&mut browser, "\n").await;
    // Both inputs are answered before the wheel goes back (the page waits for its queue).
    click(&mut browser, "Give back").await;
    let failure = viewer::last_failure(&browser).await;
    let stderr = std::sync::Arc::clone(&run.stderr);
    run.wait_success().await;
    assert_eq!(failure, None, "hands run: {}", stderr.lock().unwrap());
    let requests = sim.requests();
    assert_eq!(requests.len(), 2, "{}", stderr.lock().unwrap());
    let note = last_user_text(&requests[1].body);
    eprintln!("the note the model got:\n{note}");
    assert!(
        note.starts_with("A person took over the desktop for "),
        "{note}"
    );
    assert!(
        note.contains("\n- Windows opened: none.\n- Their input: 1 click, keys Return.\n"),
        "{note}"
    );
}
