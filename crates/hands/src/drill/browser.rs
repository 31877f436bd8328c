//! `hands drill browser`: the Harbour Hotel booking app runs locally; a scripted model fills its
//! form through the real runner, the browser toolset and headless Chromium; the drill then reads
//! the booking from the app's SQLite database.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::CancellationToken;
use hands_core::browser::Browser as _;
use hands_core::browser::args::PageUrl;
use hands_demo_apps::{BookingApp, BookingAppConfig, DEFAULT_STAFF_PASSWORD, bookings};
use hands_runner::{AnthropicSettings, OpenAiSettings, RunConfig, Runner, Toolbox};
use hands_sim::{SimConfig, SimServer};
use hands_toolset::browser::url_policy::OriginAllowList;
use hands_toolset::browser::{BrowserToolset, BrowserToolsetConfig};
use hands_toolset::claude_browser::{ClaudeBrowserConfig, ClaudeBrowserToolset};

use super::browser_policy::{self, BookingTask};
use super::{anthropic_client, openai_client, run_and_check};
use crate::approve::TerminalApprover;
use crate::cli::{ApproveArg, ProviderArg, SandboxArgs};
use crate::policy::RequestAllowList;

/// Runs the drill; `Ok(true)` when everything it checked holds.
pub async fn run(provider: ProviderArg, isolation: &SandboxArgs) -> anyhow::Result<bool> {
    let started = Instant::now();
    let task = BookingTask {
        name: "Zoë Ågren-Müller".into(),
        email: "zoe@example.test".into(),
        check_in: "2027-03-14".into(),
        nights: 3,
        room: "sea-view".into(),
        breakfast: true,
    };
    eprintln!("hands drill browser ({provider:?}): starting the booking app and Chromium…");
    let app = BookingApp::start(BookingAppConfig::default())
        .await
        .context("starting the booking app")?;
    let origin = app.base_url().to_owned();
    let allow = OriginAllowList::new([origin.as_str()]).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut driver_config = DriverConfig {
        policy: Arc::new(RequestAllowList(allow.clone())),
        ..DriverConfig::default()
    };
    driver_config.launch.launcher = isolation.episode().browser_launcher()?;
    let mut browser = CdpBrowser::launch(driver_config)
        .await
        .context("launching Chromium (run scripts/install-system-deps.sh first)")?;
    let start = PageUrl::parse("url", &format!("{origin}/")).map_err(|e| anyhow::anyhow!("{e}"))?;
    browser
        .navigate(&start, None, &CancellationToken::new())
        .await
        .map_err(|e| anyhow::anyhow!("opening the app: {e}"))?;
    eprintln!(
        "  app on {origin}, Chromium ready after {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let approver = TerminalApprover::new(ApproveArg::All);
    // Claude drives the browser through its own toolset; OpenAI through the driver spec's
    // function tools. Both sit on the same driver.
    let toolbox = match provider {
        ProviderArg::Anthropic => Toolbox {
            claude_browser: Some(Box::new(ClaudeBrowserToolset::new(
                browser,
                ClaudeBrowserConfig {
                    confirm: Some(Arc::new(approver.clone())),
                    url_policy: Some(Arc::new(allow)),
                    ..ClaudeBrowserConfig::default()
                },
            )?)),
            ..Toolbox::default()
        },
        ProviderArg::Openai => Toolbox {
            browser: Some(Box::new(BrowserToolset::new(
                browser,
                BrowserToolsetConfig {
                    confirm: Some(Arc::new(approver.clone())),
                    url_policy: Some(Arc::new(allow)),
                    ..BrowserToolsetConfig::default()
                },
            )?)),
            ..Toolbox::default()
        },
    };
    let sim = SimServer::start(SimConfig::with_policy(browser_policy::policy(task.clone())))?;
    let mut runner = match provider {
        ProviderArg::Anthropic => Runner::anthropic(
            anthropic_client(&sim)?,
            AnthropicSettings::new("claude-opus-5"),
            None,
            toolbox,
            RunConfig::default(),
        ),
        ProviderArg::Openai => Runner::openai(
            openai_client(&sim)?,
            OpenAiSettings::new("gpt-browser-drill"),
            None,
            toolbox,
            RunConfig::default(),
        ),
    };
    runner.set_approver(Box::new(approver));
    let (outcome, mut verdicts) = run_and_check(runner, provider, &task.prompt(), &sim).await?;
    let leaked = sim
        .requests()
        .iter()
        .any(|r| r.body.to_string().contains(DEFAULT_STAFF_PASSWORD));
    verdicts.check(
        !leaked,
        "the staff password field's value never reached the model",
    );
    let seen = app.requests_seen();
    tracing::info!(?seen, final_text = %outcome.final_text, "what the app saw");
    verdicts.check(
        seen.bookings_saved == 1,
        format!(
            "the app saved {} booking(s) from a real form post",
            seen.bookings_saved
        ),
    );
    let db = app.db_path().to_owned();
    let rows = tokio::task::spawn_blocking(move || bookings(&db))
        .await
        .context("reading the database")??;
    match rows.as_slice() {
        [b] => {
            verdicts.check(b.name == task.name, format!("name {:?}", b.name));
            verdicts.check(b.email == task.email, format!("email {:?}", b.email));
            verdicts.check(
                b.check_in.to_string() == task.check_in,
                format!("check-in {}", b.check_in),
            );
            verdicts.check(
                u32::from(b.nights.get()) == task.nights,
                format!("nights {}", b.nights.get()),
            );
            verdicts.check(
                b.room.value() == task.room,
                format!("room {}", b.room.value()),
            );
            verdicts.check(
                b.breakfast == task.breakfast,
                format!("breakfast {}", b.breakfast),
            );
        }
        other => verdicts.check(
            false,
            format!("exactly one booking in the database, found {}", other.len()),
        ),
    }
    let passed = verdicts.report();
    eprintln!(
        "hands drill browser: {} in {:.1} s",
        if passed { "PASSED" } else { "FAILED" },
        started.elapsed().as_secs_f64()
    );
    Ok(passed)
}
