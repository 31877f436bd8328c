//! The desktops `hands` spawns for runs, drills and the demo: a private Xvfb display with a
//! window manager, and optionally a text editor, each killed when dropped.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use hands_core::Desktop as _;
use hands_x11::{X11Desktop, XClient, XvfbConfig};

/// How long an application may take to show its window.
pub const APP_READY_TIMEOUT: Duration = Duration::from_secs(20);

/// A spawned desktop and the X clients started on it. The clients are killed before the display.
pub struct DesktopEnv {
    /// The programs, dropped (killed) first.
    pub clients: Vec<XClient>,
    /// The desktop.
    pub desktop: X11Desktop,
}

impl DesktopEnv {
    /// Spawns an Xvfb desktop as `config` says (its size, and the launcher it runs through: the
    /// episode's jail or the host) with the openbox window manager and, when `editor`, Debian's
    /// mousepad; returns once the editor's window is on screen.
    pub async fn spawn(config: XvfbConfig, editor: bool) -> anyhow::Result<DesktopEnv> {
        let mut desktop = X11Desktop::spawn(&config)
            .context("spawning the Xvfb desktop (run scripts/install-system-deps.sh first)")?;
        let mut clients = vec![
            desktop
                .spawn_client("openbox", &[])
                .context("starting the window manager")?,
        ];
        // Applications start once the window manager manages windows: one mapped before may be
        // left unmanaged, or never shown (seen in about one start in three in a jail).
        let deadline = Instant::now() + APP_READY_TIMEOUT;
        while !desktop.window_manager_ready().await? {
            if Instant::now() > deadline {
                anyhow::bail!(
                    "the window manager (openbox) was not ready within {APP_READY_TIMEOUT:?}"
                );
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if editor {
            clients.push(
                desktop
                    .spawn_client("mousepad", &["--disable-server"])
                    .context("starting the editor (mousepad)")?,
            );
            wait_for_window(&mut desktop).await?;
        }
        Ok(DesktopEnv { clients, desktop })
    }
}

/// Waits until something other than the bare root window is on screen: Xvfb starts with a
/// uniform root, and an application's window breaks it. A readiness check bounded by
/// [`APP_READY_TIMEOUT`], polling the capture every 100 ms.
pub async fn wait_for_window(desktop: &mut X11Desktop) -> anyhow::Result<()> {
    let deadline = Instant::now() + APP_READY_TIMEOUT;
    loop {
        let pixels = desktop.capture().await?;
        let size = pixels.size();
        if pixels.rgb_at(size.width / 2, size.height / 2) != pixels.rgb_at(0, 0) {
            return Ok(());
        }
        if Instant::now() > deadline {
            anyhow::bail!(
                "no application window appeared within {APP_READY_TIMEOUT:?} (is mousepad installed?)"
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
