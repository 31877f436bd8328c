//! A mixed run: the computer toolset and Claude's browser toolset in one request, told apart by
//! `toolset_name`, each in its own coordinate frame — a real Xvfb desktop and a real Chromium,
//! against the simulated Messages API.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::sync::Arc;

use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::browser::Browser as _;
use hands_core::browser::args::PageUrl;
use hands_core::geometry::Size;
use hands_core::{CancellationToken, Desktop};
use hands_demo_apps::{BookingApp, BookingAppConfig};
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_runner::approval::ApproveAll;
use hands_runner::{AnthropicSettings, RunConfig, RunStatus, Runner, Toolbox};
use hands_sim::policy::toolset_use;
use hands_sim::{SimConfig, SimServer, Turn};
use hands_testkit::InputRecorder;
use hands_toolset::browser::consent::{Approval, ConfirmFn};
use hands_toolset::browser::url_policy::OriginAllowList;
use hands_toolset::claude_browser::{ClaudeBrowserConfig, ClaudeBrowserToolset};
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn computer_and_browser_toolsets_share_one_request() {
    let desktop = X11Desktop::spawn(&XvfbConfig::new(Size::new(800, 600).unwrap())).unwrap();
    let recorder = InputRecorder::start(desktop.display()).unwrap();
    let app = BookingApp::start(BookingAppConfig::default())
        .await
        .unwrap();
    let origin = app.base_url().to_owned();
    let mut browser = CdpBrowser::launch(DriverConfig::default()).await.unwrap();
    let cancel = CancellationToken::new();
    browser
        .navigate(
            &PageUrl::parse("url", &format!("{origin}/")).unwrap(),
            None,
            &cancel,
        )
        .await
        .unwrap();
    let browser = ClaudeBrowserToolset::new(
        browser,
        ClaudeBrowserConfig {
            confirm: Some(Arc::new(ConfirmFn(|_, _| async { Ok(Approval::Approve) }))),
            url_policy: Some(Arc::new(OriginAllowList::new([origin.as_str()]).unwrap())),
            ..ClaudeBrowserConfig::default()
        },
    )
    .unwrap();
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        match n {
            // Both toolsets have a `screenshot`; `toolset_name` tells them apart.
            1 => Turn::Blocks(vec![
                toolset_use("browser", "screenshot", json!({})),
                toolset_use("computer", "screenshot", json!({})),
                toolset_use("computer", "left_click", json!({"coordinate": [700, 500]})),
                toolset_use("browser", "get_page_text", json!({})),
            ]),
            _ => Turn::text("Both looked at."),
        }
    }))
    .unwrap();
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = sim.base_url();
    let boxed: Box<dyn Desktop> = Box::new(desktop);
    let computer = ComputerToolset::new(boxed, ComputerConfig::default()).unwrap();
    let mut runner = Runner::anthropic(
        AnthropicClient::new(config).unwrap(),
        AnthropicSettings::new("claude-opus-5"),
        Some(computer),
        Toolbox {
            claude_browser: Some(Box::new(browser)),
            ..Toolbox::default()
        },
        RunConfig::default(),
    );
    runner.set_approver(Box::new(ApproveAll));
    let outcome = runner.run("Look at both.", &cancel).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let requests = sim.requests();
    let tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        ["computer_toolset_20260801", "browser_toolset_20260801"]
    );
    let answer = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    let names: Vec<&str> = answer
        .iter()
        .map(|r| r["toolset_name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["browser", "computer", "computer", "browser"]);
    // The browser's screenshot is the 1280x800 viewport; the desktop's is the 800x600 screen.
    let size = |r: &Value| {
        let img = r["content"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["type"] == "image")
            .unwrap()
            .clone();
        hands_runner::context::image_block_size(&img)
    };
    assert_eq!(size(&answer[0]), Some((1280, 800)));
    assert_eq!(size(&answer[1]), Some((800, 600)));
    assert!(answer[3]["content"].to_string().contains("Harbour"));
    let clicks: Vec<(i32, i32)> = recorder
        .sync()
        .unwrap()
        .iter()
        .filter(|e| e.is_button_press(1))
        .map(|e| e.position())
        .collect();
    assert_eq!(clicks, vec![(700, 500)]);
}
