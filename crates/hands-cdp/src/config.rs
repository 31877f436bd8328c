//! The driver's settings: timeouts, settle budgets, read limits, value privacy, images, and the policy and file-grant hooks, with the numbers behind each default.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hands_core::image::ImageFormat;

use crate::files::FileGrants;
use crate::launch::LaunchConfig;
use crate::policy::{AllowAll, SharedPolicy};

/// How long to wait for a page to settle after an action, by events rather than a fixed sleep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettleConfig {
    /// No request in flight (and the document loaded) for this long counts as network idle.
    pub network_quiet: Duration,
    /// No DOM mutation for this long counts as DOM quiet.
    pub dom_quiet: Duration,
    /// After an action aimed at an element (click, type, select, set_checked, hover) that
    /// changed the document: no further change for this long counts as settled. The action
    /// answers once its change shows; the tab's next call waits for this quiet. An action that
    /// changed nothing answers after one turn of the page's event loop.
    pub action_quiet: Duration,
    /// Never wait longer than this after an action (a page that never finishes loading, a
    /// long-poll, an animation that never stops).
    pub cap: Duration,
}

impl Default for SettleConfig {
    /// 50 ms network quiet and 40 ms DOM quiet (above the 17 ms click-to-repaint floor measured
    /// for Chromium, with room for a framework's second render), checked side by side; capped at
    /// 5 s. Playwright MCP sleeps a flat 500 ms instead. Actions aimed at an element settle by
    /// what they caused instead (see `action_quiet`, 15 ms: a framework's second render comes
    /// within a task or two of the first).
    fn default() -> SettleConfig {
        SettleConfig {
            network_quiet: Duration::from_millis(50),
            dom_quiet: Duration::from_millis(40),
            action_quiet: Duration::from_millis(15),
            cap: Duration::from_secs(5),
        }
    }
}

/// Size caps of one read. A read that hits one reports it in `omitted`; `read_page_scoped` and
/// `find` are the way into the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// Most bytes of visible text (`text_limit`).
    pub text_bytes: usize,
    /// Most elements (`target_limit`).
    pub elements: usize,
    /// Most bytes of the serialised elements and scopes (`report_limit`).
    pub report_bytes: usize,
    /// Most DOM nodes visited (`work_limit`).
    pub nodes: usize,
    /// Most time spent walking in the page (`work_limit`).
    pub work: Duration,
    /// Most options listed per combobox or listbox (`report_limit`).
    pub options: usize,
    /// Most scopes of a scoped read (`target_limit`).
    pub scopes: usize,
}

impl Default for ReadLimits {
    /// About 25k tokens in all (the cap Claude Code puts on a tool result, which Playwright MCP
    /// snapshots of 20–70k tokens overflow): 40 KB of text and 60 KB of elements, at most 1,000
    /// elements; 300,000 nodes or 3 s of walking.
    fn default() -> ReadLimits {
        ReadLimits {
            text_bytes: 40_000,
            elements: 1_000,
            report_bytes: 60_000,
            nodes: 300_000,
            work: Duration::from_secs(3),
            options: 100,
            scopes: 100,
        }
    }
}

impl ReadLimits {
    /// No practical cap (for benchmarks and tools that page through everything).
    pub fn unbounded() -> ReadLimits {
        ReadLimits {
            text_bytes: 64 << 20,
            elements: usize::MAX >> 8,
            report_bytes: 256 << 20,
            nodes: 10_000_000,
            work: Duration::from_secs(30),
            options: 10_000,
            scopes: 10_000,
        }
    }
}

/// Which field values a read may report.
///
/// Spec: openai-browser-desktop-drivers, "Devolver lecturas estructuradas": "Incluye el value de
/// un campo o sus options … solo si tu aplicación permite que el modelo los vea."
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ValuePolicy {
    /// No values and no options (`value` in `omitted` when any were withheld).
    Never,
    /// Values and options of every field except private ones: passwords and fields whose
    /// `autocomplete` names a password, one-time code or card number (`private` in `omitted`).
    #[default]
    NonPrivate,
}

/// How a driver session behaves.
#[derive(Clone)]
pub struct DriverConfig {
    /// How to start Chromium (ignored when attaching).
    pub launch: LaunchConfig,
    /// Viewport every page is sized to (CSS pixels, scale factor 1).
    pub viewport: (u32, u32),
    /// Bound on any one protocol call.
    pub call_timeout: Duration,
    /// How long a navigation may take to commit.
    pub navigation_timeout: Duration,
    /// How long to wait for `load` after a navigation commits (a page whose `load` never fires
    /// answers after this).
    pub load_cap: Duration,
    /// Settling after actions.
    pub settle: SettleConfig,
    /// Read caps.
    pub read: ReadLimits,
    /// Most elements `find` returns.
    pub find_limit: usize,
    /// Which values reads report.
    pub values: ValuePolicy,
    /// Screenshot and zoom encoding.
    pub image_format: ImageFormat,
    /// Largest magnification `zoom` applies to fit its region to the viewport.
    pub max_zoom_scale: f64,
    /// Console and network entries kept per tab, and blocked requests kept in all.
    pub diagnostics_capacity: usize,
    /// How long `download_file` waits for a download still in progress.
    pub download_timeout: Duration,
    /// Where downloads land before `download_file` delivers them: when `None`, a private directory
    /// of the launched browser's launcher ([`crate::Chromium::download_dir`]); downloads are
    /// refused when `None` on an attached browser. A directory given here must be at the same
    /// path for the browser as for this process (the host launcher, or an attached browser on
    /// this machine): under a jail leave it `None`.
    pub download_dir: Option<PathBuf>,
    /// The request-level network policy.
    pub policy: SharedPolicy,
    /// Route every connection of a launched browser through the policy proxy, which covers
    /// what interception cannot see: WebSocket handshakes and the browser's own requests.
    /// Ignored when attaching (the browser's flags are not ours to set).
    pub network_proxy: bool,
    /// The caller's file grants; `upload_file` and `download_file` refuse everything without.
    pub grants: Option<Arc<dyn FileGrants>>,
    /// Fence the pages of an attached browser: WebRTC, the Payment Request API and FedCM are
    /// taken away in every document before it runs ([`crate::PAGE_FENCE_JS`]), because
    /// their traffic leaves from the browser itself, past request interception, and an attached
    /// browser has no policy proxy. A launched browser is fenced by its settings and flags
    /// instead, so this applies only to [`crate::CdpBrowser::attach`].
    pub page_fence: bool,
}

impl fmt::Debug for DriverConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DriverConfig")
            .field("launch", &self.launch)
            .field("viewport", &self.viewport)
            .field("settle", &self.settle)
            .field("read", &self.read)
            .field("values", &self.values)
            .field("image_format", &self.image_format)
            .field("grants", &self.grants.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for DriverConfig {
    /// A 1280x800 viewport; 30 s per call and per navigation commit, 10 s for `load`; JPEG at
    /// quality 80 (50 ms per capture measured against 90 ms for PNG); zoom up to 4x; 200
    /// diagnostics entries; every request allowed.
    fn default() -> DriverConfig {
        DriverConfig {
            launch: LaunchConfig::default(),
            viewport: (1280, 800),
            call_timeout: Duration::from_secs(30),
            navigation_timeout: Duration::from_secs(30),
            load_cap: Duration::from_secs(10),
            settle: SettleConfig::default(),
            read: ReadLimits::default(),
            find_limit: 20,
            values: ValuePolicy::default(),
            image_format: ImageFormat::Jpeg { quality: 80 },
            max_zoom_scale: 4.0,
            diagnostics_capacity: 200,
            download_timeout: Duration::from_secs(60),
            download_dir: None,
            policy: Arc::new(AllowAll),
            network_proxy: true,
            grants: None,
            page_fence: true,
        }
    }
}
