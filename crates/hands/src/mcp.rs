//! `hands mcp`: the browser (Chromium, under the same origin allow-list as `hands run`, enforced
//! at `navigate` and on every request) and/or the desktop (a spawned Xvfb, or a named display)
//! served to an MCP client on stdio or on streamable HTTP bound to loopback.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::CancellationToken;
use hands_core::browser::Browser as _;
use hands_core::browser::args::PageUrl;
use hands_core::image::ImageFormat;
use hands_mcp::{ApprovePolicy, BrowserSurface, Budget, ConsentSlot, DesktopSurface, HandsMcp};
use hands_toolset::browser::url_policy::OriginAllowList;
use hands_x11::X11Desktop;

use crate::cli::{McpApproveArg, McpArgs};
use crate::environment::{DesktopApps, DesktopEnv};
use crate::policy::RequestAllowList;

/// `hands mcp …`.
pub async fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    if args.browser.is_none() && !args.desktop {
        anyhow::bail!("give --browser [URL], --desktop, or both");
    }
    let budget = Budget::new(args.max_tokens).map_err(|e| anyhow::anyhow!("--max-tokens: {e}"))?;
    let slot = ConsentSlot::default();

    let browser = match &args.browser {
        None => None,
        Some(start) => Some(browser_surface(&args, start, slot.clone()).await?),
    };

    // The desktop: a display of our own (with a window manager) unless one is named. The
    // clients are killed before the display when this function returns.
    let mut _env_clients = Vec::new();
    let mut episode = args.isolation.episode();
    if args.display.is_some() && episode.mode() == crate::sandbox::SandboxArg::Jail {
        anyhow::bail!(
            "--display attaches to a display outside any jail: give --sandbox none to do that on \
             purpose, or use --spawn for a jailed desktop of the episode's own"
        );
    }
    let desktop = if args.desktop {
        let image_format = match args.jpeg {
            Some(quality) => ImageFormat::Jpeg { quality },
            None => ImageFormat::Png,
        };
        let surface = match &args.display {
            Some(display) => DesktopSurface::new(
                X11Desktop::connect(Some(display))
                    .with_context(|| format!("attaching to display {display}"))?,
                budget,
                image_format,
            ),
            None => {
                let config = episode.xvfb_config(
                    args.spawn,
                    crate::policy::episode_policy(&args.allow_origin)?,
                )?;
                let env = DesktopEnv::spawn(config, DesktopApps::WindowManager).await?;
                eprintln!(
                    "hands mcp: desktop {} on {}",
                    args.spawn,
                    env.desktop.display()
                );
                _env_clients = env.clients;
                DesktopSurface::new(env.desktop, budget, image_format)
            }
        }?;
        Some(surface)
    } else {
        None
    };

    let config = hands_mcp::ServerConfig {
        budget,
        approve: match args.approve {
            McpApproveArg::All => ApprovePolicy::All,
            McpApproveArg::None => ApprovePolicy::None,
        },
    };
    let server = HandsMcp::new(config, browser, desktop, slot)?;
    match args.http {
        None => server.serve_stdio().await?,
        Some(addr) => {
            let stop = CancellationToken::new();
            let ctrl_c = stop.clone();
            tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    ctrl_c.cancel();
                }
            });
            server
                .serve_http(addr, stop, |bound| {
                    eprintln!("hands mcp: listening on http://{bound}/mcp");
                })
                .await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Chromium (launched, or attached at `--attach`) under the allow-list, opened at the start URL.
async fn browser_surface(
    args: &McpArgs,
    start: &str,
    slot: ConsentSlot,
) -> anyhow::Result<BrowserSurface> {
    let start_url = if start.is_empty() {
        None
    } else {
        Some(PageUrl::parse("--browser", start).map_err(|e| anyhow::anyhow!("{e}"))?)
    };
    let origins: Vec<String> = match (&start_url, args.allow_origin.is_empty()) {
        (_, false) => args.allow_origin.clone(),
        (Some(url), true) => vec![url.url().origin().ascii_serialization()],
        (None, true) => anyhow::bail!(
            "give a start URL (--browser URL) or the origins the browser may open \
             (--allow-origin ORIGIN)"
        ),
    };
    let allow =
        OriginAllowList::new(&origins).map_err(|e| anyhow::anyhow!("--allow-origin: {e}"))?;
    let mut driver_config = DriverConfig {
        policy: Arc::new(RequestAllowList(allow.clone())),
        ..DriverConfig::default()
    };
    if args.attach.is_none() {
        driver_config.launch.launcher = args.isolation.episode().browser_launcher()?;
    }
    let mut browser = match &args.attach {
        Some(ws) => CdpBrowser::attach(ws, driver_config)
            .await
            .with_context(|| format!("attaching to {ws}"))?,
        None => CdpBrowser::launch(driver_config)
            .await
            .context("launching Chromium (run scripts/install-system-deps.sh first)")?,
    };
    if let Some(url) = &start_url {
        browser
            .navigate(url, None, &CancellationToken::new())
            .await
            .map_err(|e| anyhow::anyhow!("opening {start}: {e}"))?;
    }
    eprintln!(
        "hands mcp: browser{} (allowed origins: {})",
        start_url
            .as_ref()
            .map(|u| format!(" at {}", u.as_str()))
            .unwrap_or_default(),
        origins.join(", ")
    );
    Ok(BrowserSurface::new(browser, Arc::new(allow), slot)?)
}
