//! `hands mcp`: the browser (Chromium, under the same origin allow-list as `hands run`, enforced
//! at `navigate` and on every request) and/or the desktop (a spawned Xvfb, or a named display)
//! served to an MCP client on stdio or on streamable HTTP bound to loopback. With `--state NAME`
//! the browser's sign-ins are loaded before its first page and saved when the server ends.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::CancellationToken;
use hands_core::browser::args::PageUrl;
use hands_core::browser::{Browser as _, DriverError};
use hands_core::image::ImageFormat;
use hands_mcp::{
    ApprovePolicy, BrowserCalls, BrowserSurface, Budget, ConsentSlot, DesktopSurface, HandsMcp,
    OpenBrowser, OpenError,
};
use hands_toolset::browser::url_policy::OriginAllowList;
use hands_x11::X11Desktop;

use tokio::sync::Mutex;

use crate::cli::{McpApproveArg, McpArgs, SandboxArgs};
use crate::environment::{DesktopApps, DesktopEnv};
use crate::policy::RequestAllowList;
use crate::state::RunState;

/// `hands mcp …`.
pub async fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    if args.browser.is_none() && !args.desktop {
        anyhow::bail!("give --browser [URL], --desktop, or both");
    }
    let budget = Budget::new(args.max_tokens).map_err(|e| anyhow::anyhow!("--max-tokens: {e}"))?;
    let slot = ConsentSlot::default();

    // A wrong or missing state key stops here, before anything is served.
    let (browser, state) = match &args.browser {
        None => (None, None),
        Some(start) => {
            let (surface, state) = browser_surface(&args, start, slot.clone())?;
            (Some(surface), state)
        }
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
    // The server is kept (a clone) past the end of serving: its browser must live until the
    // state is saved.
    let serving = server.clone();
    match args.http {
        None => {
            tokio::select! {
                served = serving.serve_stdio() => served?,
                () = shutdown_signal() => eprintln!("hands mcp: stopping"),
            }
        }
        Some(addr) => {
            let stop = CancellationToken::new();
            let signalled = stop.clone();
            tokio::spawn(async move {
                shutdown_signal().await;
                signalled.cancel();
            });
            serving
                .serve_http(addr, stop, |bound| {
                    eprintln!("hands mcp: listening on http://{bound}/mcp");
                })
                .await?;
        }
    }
    if let Some(state) = state
        && let Err(e) = state.lock().await.save().await
    {
        eprintln!("hands mcp: the state was not saved: {e:#}");
    }
    drop(server);
    Ok(ExitCode::SUCCESS)
}

/// Ctrl-C or SIGTERM: the server stops serving and saves its state.
async fn shutdown_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}

/// A saved sign-in shared by the browser's opener (which loads it) and the server's end (which
/// saves it).
type SharedState = Arc<Mutex<RunState>>;

/// Chromium (launched, or attached at `--attach`) under the allow-list, opened at the start URL
/// on the first browser call: the arguments are checked here, and the saved sign-in opened
/// (`--state`); the browser is opened lazily (a start page that is down is a tool error, not an
/// exit).
fn browser_surface(
    args: &McpArgs,
    start: &str,
    slot: ConsentSlot,
) -> anyhow::Result<(BrowserSurface, Option<SharedState>)> {
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
    let state = args
        .state
        .as_deref()
        .map(|name| RunState::open("hands mcp", name, &origins))
        .transpose()?
        .map(|state| Arc::new(Mutex::new(state)));
    eprintln!(
        "hands mcp: browser{} (allowed origins: {}), opened on the first browser call",
        start_url
            .as_ref()
            .map(|u| format!(" at {}", u.as_str()))
            .unwrap_or_default(),
        origins.join(", ")
    );
    let opener = CdpOpener {
        allow,
        start_url,
        attach: args.attach.clone(),
        isolation: args.isolation.clone(),
        slot,
        state: state.clone(),
        launched: Mutex::new(None),
    };
    Ok((BrowserSurface::lazy(Box::new(opener)), state))
}

/// Opens `hands mcp`'s Chromium: launched (in the episode's jail unless `--sandbox none`) or
/// attached, then at the start URL. A browser whose start page failed is kept for the next try.
struct CdpOpener {
    allow: OriginAllowList,
    start_url: Option<PageUrl>,
    attach: Option<String>,
    isolation: SandboxArgs,
    slot: ConsentSlot,
    /// The saved sign-in, loaded into each browser started before its first page.
    state: Option<SharedState>,
    /// A browser started whose start page has not opened yet.
    launched: Mutex<Option<CdpBrowser>>,
}

impl CdpOpener {
    /// A browser, with the saved sign-in loaded before its first page.
    async fn start(&self) -> Result<CdpBrowser, OpenError> {
        let browser = self.launch().await?;
        if let Some(state) = &self.state {
            state
                .lock()
                .await
                .load(&browser)
                .await
                .map_err(|e| OpenError::Launch {
                    why: format!("{e:#}"),
                    what_to_do: "Call again to start a fresh browser".to_owned(),
                })?;
        }
        Ok(browser)
    }

    async fn launch(&self) -> Result<CdpBrowser, OpenError> {
        let mut driver_config = DriverConfig {
            policy: Arc::new(RequestAllowList(self.allow.clone())),
            ..DriverConfig::default()
        };
        if let Some(ws) = &self.attach {
            return CdpBrowser::attach(ws, driver_config)
                .await
                .map_err(|e| OpenError::Launch {
                    why: format!("attaching to {ws}: {e}"),
                    what_to_do: "Check that the browser at --attach is running".to_owned(),
                });
        }
        driver_config.launch.launcher =
            self.isolation
                .episode()
                .browser_launcher()
                .map_err(|e| OpenError::Launch {
                    why: format!("{e:#}"),
                    what_to_do: "Give --sandbox none to run Chromium on the host, on purpose"
                        .to_owned(),
                })?;
        CdpBrowser::launch(driver_config)
            .await
            .map_err(|e| OpenError::Launch {
                why: format!("launching Chromium: {e}"),
                what_to_do: "Install it with scripts/install-system-deps.sh, then call again"
                    .to_owned(),
            })
    }
}

#[async_trait::async_trait]
impl OpenBrowser for CdpOpener {
    async fn open(&self, cancel: &CancellationToken) -> Result<Box<dyn BrowserCalls>, OpenError> {
        let mut launched = self.launched.lock().await;
        let mut browser = match launched.take() {
            Some(browser) => browser,
            None => self.start().await?,
        };
        if let Some(url) = &self.start_url {
            match browser.navigate(url, None, cancel).await {
                Ok(_) => {
                    if let Some(status) = browser.active_document_status().filter(server_error) {
                        *launched = Some(browser);
                        return Err(OpenError::StartPage {
                            url: url.as_str().to_owned(),
                            why: format!(
                                "it answered HTTP {status} (a 502 is hands' request proxy \
                                 saying the server could not be reached)"
                            ),
                        });
                    }
                }
                Err(DriverError::Cancelled) => {
                    *launched = Some(browser);
                    return Err(OpenError::Cancelled);
                }
                Err(e) => {
                    // A browser that is gone is started afresh on the next try.
                    if !matches!(e, DriverError::Gone(_)) {
                        *launched = Some(browser);
                    }
                    return Err(OpenError::StartPage {
                        url: url.as_str().to_owned(),
                        why: e.to_string(),
                    });
                }
            }
        }
        Ok(BrowserSurface::toolset(
            browser,
            Arc::new(self.allow.clone()),
            self.slot.clone(),
        )?)
    }
}

/// Whether a start page's HTTP status means no page was reached: a 5xx answer (the jail's
/// proxy answers 502 for a server that refused the connection). A 4xx is a page.
fn server_error(status: &u16) -> bool {
    *status >= 500
}

#[cfg(test)]
mod tests {
    use super::server_error;

    #[test]
    fn only_a_server_error_is_a_start_page_that_did_not_open() {
        assert!(server_error(&502));
        assert!(server_error(&503));
        assert!(!server_error(&404));
        assert!(!server_error(&200));
    }
}
