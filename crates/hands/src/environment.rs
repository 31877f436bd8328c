//! The desktops `hands` spawns for runs, drills and the demo: a private Xvfb display with a
//! window manager, and optionally a text editor, each killed when dropped.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use hands_core::Desktop as _;
use hands_x11::{X11Desktop, XClient, XvfbConfig};

/// How long an application may take to show its window.
pub const APP_READY_TIMEOUT: Duration = Duration::from_secs(20);

/// The applications a spawned desktop starts beside its window manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DesktopApps {
    /// The window manager only.
    WindowManager,
    /// The window manager and a text editor (Debian's mousepad), on screen before `spawn`
    /// returns.
    WithEditor,
}

/// A spawned desktop and the X clients started on it. The clients are killed before the display.
pub struct DesktopEnv {
    /// The programs, dropped (killed) first.
    pub clients: Vec<XClient>,
    /// The desktop.
    pub desktop: X11Desktop,
}

impl DesktopEnv {
    /// Spawns an Xvfb desktop as `config` says (its size, and the launcher it runs through: the
    /// episode's jail or the host) with the openbox window manager and, with
    /// [`DesktopApps::WithEditor`], Debian's mousepad; returns once the editor's window is on
    /// screen.
    pub async fn spawn(config: XvfbConfig, apps: DesktopApps) -> anyhow::Result<DesktopEnv> {
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
        if apps == DesktopApps::WithEditor {
            clients.push(start_editor(&mut desktop).await?);
        }
        Ok(DesktopEnv { clients, desktop })
    }
}

/// How long the editor gets to show its window before it is started again.
const EDITOR_SHOW_TIMEOUT: Duration = Duration::from_secs(5);

/// Starts mousepad and waits for its window; a mousepad that has not shown it within
/// [`EDITOR_SHOW_TIMEOUT`] is killed and started again, up to three times. (mousepad sometimes
/// creates its first window and never maps it — seen in about one start in ten, idle, with the
/// window manager ready; a second start shows it.)
async fn start_editor(desktop: &mut X11Desktop) -> anyhow::Result<XClient> {
    let mut last = None;
    for _ in 0..3 {
        let client = desktop
            .spawn_client("mousepad", &["--disable-server"])
            .context("starting the editor (mousepad)")?;
        match wait_for_window(desktop, EDITOR_SHOW_TIMEOUT).await {
            Ok(()) => return Ok(client),
            Err(e) => {
                tracing::warn!("mousepad showed no window; starting it again: {e:#}");
                last = Some(e);
            }
        }
    }
    Err(last.unwrap_or_else(|| anyhow::anyhow!("mousepad showed no window")))
}

/// Waits until something other than the bare root window is on screen: Xvfb starts with a
/// uniform root, and an application's window breaks it. Bounded by `timeout`, polling the
/// capture every 100 ms.
async fn wait_for_window(desktop: &mut X11Desktop, timeout: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        let pixels = desktop.capture().await?;
        let size = pixels.size();
        if pixels.rgb_at(size.width / 2, size.height / 2) != pixels.rgb_at(0, 0) {
            return Ok(());
        }
        if Instant::now() > deadline {
            anyhow::bail!(
                "no application window appeared within {timeout:?} (is mousepad installed?)"
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
