//! The X11 desktop driver: a [`Desktop`] over a real X display, spawned (Xvfb) or attached
//! (`$DISPLAY`).
//!
//! One persistent connection, owned by a dedicated thread, does everything: MIT-SHM capture
//! (GetImage as the fallback), XTEST input (no child process per action), a keymap that types any
//! Unicode character under any layout, and DAMAGE events that tell when the screen has settled.
//! It knows nothing of models or their JSON.
//!
//! Across a sandbox boundary (issue 17, "X across the boundary"; spec: Claude computer use,
//! "Precauciones" 1): a spawned Xvfb and every client started on it ([`X11Desktop::spawn_client`])
//! run through the [`hands_jail::Launcher`] of [`XvfbConfig::launcher`], with an explicit
//! environment and no credential; hands' connection is a stream that launcher connects from
//! inside the server's environment, so the server's socket need not be visible on the host; the
//! capture memory is a `memfd` passed to the server, not a System V segment another process of
//! the same uid could attach; and the client pids the server reports (its pid namespace) are
//! mapped to host pids by the launcher before `/proc` is read. An attached display is reached
//! by name and its clients start on the host.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use hands_core::{Desktop, geometry::{ScreenPoint, Size}, input::{Button, ModifierSet}};
//! use hands_x11::{X11Desktop, XvfbConfig};
//!
//! let mut desktop = X11Desktop::spawn(&XvfbConfig::new(Size::new(1280, 800).unwrap()))?;
//! desktop.click(Some(ScreenPoint { x: 640, y: 400 }), Button::Left, 1, ModifierSet::NONE).await?;
//! let pixels = desktop.capture().await?;
//! assert_eq!(pixels.size(), Size::new(1280, 800).unwrap());
//! # Ok(()) }
//! ```

mod capture;
mod catchup;
mod keymap;
pub mod wheel;
pub mod windows;
mod worker;
mod xvfb;

use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_core::desktop::{Desktop, DesktopError, ScreenInfo, SettleBudget, SettleReport};
use hands_core::geometry::{ScreenPoint, Size};
use hands_core::image::Pixels;
use hands_core::input::{Button, KeyChord, ModifierSet, ScrollDirection};
use tokio::sync::oneshot;

pub use xvfb::{BASE_VARIABLES, XClient, XClients, Xvfb, XvfbConfig, base_environment};

use worker::{Endpoint, Job, XState};

/// Why the X11 driver could not start or act.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum X11Error {
    /// Connecting to the display failed.
    #[error("cannot connect to X display {display}: {source}")]
    Connect {
        /// The display name tried.
        display: String,
        /// Why.
        source: x11rb::errors::ConnectError,
    },
    /// The connection broke.
    #[error("X connection failed: {0}")]
    Connection(#[from] x11rb::errors::ConnectionError),
    /// The server answered a request with an error.
    #[error("X request failed: {0}")]
    Reply(String),
    /// A required extension is missing.
    #[error("the X server lacks the {0} extension")]
    MissingExtension(&'static str),
    /// The screen's pixel layout is not one the capture understands.
    #[error("unsupported screen format: {0}")]
    UnsupportedVisual(String),
    /// Shared-memory capture failed.
    #[error("MIT-SHM: {0}")]
    Shm(String),
    /// Starting a program failed.
    #[error(
        "cannot start {program}: {source} (is it installed? run scripts/install-system-deps.sh)"
    )]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// Xvfb did not become ready.
    #[error("Xvfb did not start: {why}")]
    XvfbNotReady {
        /// What happened.
        why: String,
    },
    /// Every spare keycode is in use by the characters being typed right now.
    #[error("no spare keycode is free to bind keysym {keysym:#x}")]
    NoSpareKeycode {
        /// The keysym that could not be bound.
        keysym: u32,
    },
    /// The layout has no key for a modifier.
    #[error("the keyboard mapping has no key for modifier keysym {keysym:#x}")]
    NoModifierKey {
        /// The modifier's keysym.
        keysym: u32,
    },
    /// The driver thread has stopped.
    #[error("the X11 driver thread has stopped")]
    Stopped,
}

impl From<x11rb::errors::ReplyError> for X11Error {
    fn from(e: x11rb::errors::ReplyError) -> X11Error {
        match e {
            x11rb::errors::ReplyError::ConnectionError(c) => X11Error::Connection(c),
            other => X11Error::Reply(other.to_string()),
        }
    }
}

impl From<x11rb::errors::ReplyOrIdError> for X11Error {
    fn from(e: x11rb::errors::ReplyOrIdError) -> X11Error {
        match e {
            x11rb::errors::ReplyOrIdError::ConnectionError(c) => X11Error::Connection(c),
            other => X11Error::Reply(other.to_string()),
        }
    }
}

impl From<X11Error> for DesktopError {
    fn from(e: X11Error) -> DesktopError {
        match e {
            X11Error::Connection(_) | X11Error::Connect { .. } | X11Error::Stopped => {
                DesktopError::Gone(e.to_string())
            }
            X11Error::NoSpareKeycode { .. } | X11Error::NoModifierKey { .. } => {
                DesktopError::Unsupported(e.to_string())
            }
            other => DesktopError::Input(other.to_string()),
        }
    }
}

/// A desktop on an X display.
///
/// Owns the thread that owns the connection; dropping it releases any key or button still
/// held, undoes temporary key bindings, closes the connection, and then stops the Xvfb it
/// spawned, if any.
pub struct X11Desktop {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    screen: Arc<Mutex<ScreenInfo>>,
    display: String,
    clients: XClients,
    // Dropped after the connection is closed (see Drop).
    xvfb: Option<Xvfb>,
}

impl std::fmt::Debug for X11Desktop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("X11Desktop")
            .field("display", &self.display)
            .field("spawned", &self.xvfb.is_some())
            .finish()
    }
}

impl X11Desktop {
    /// Attaches to `display` (or `$DISPLAY` when `None`) through its name, on the host; clients
    /// started with [`X11Desktop::spawn_client`] run on the host too.
    pub fn connect(display: Option<&str>) -> Result<X11Desktop, X11Error> {
        let name = display
            .map(str::to_owned)
            .or_else(|| std::env::var("DISPLAY").ok())
            .unwrap_or_default();
        let clients = XClients::attached(&name);
        X11Desktop::start(
            Endpoint::Display(display.map(str::to_owned)),
            name,
            clients,
            None,
        )
    }

    /// Spawns a private Xvfb through `config.launcher` and attaches to it over a stream the
    /// launcher connects from inside the server's environment (no host-visible socket needed);
    /// the server stops when this desktop is dropped.
    pub fn spawn(config: &XvfbConfig) -> Result<X11Desktop, X11Error> {
        let xvfb = Xvfb::spawn(config)?;
        let display = xvfb.display().to_owned();
        let endpoint = Endpoint::Spawned {
            launcher: Arc::clone(xvfb.launcher()),
            number: xvfb.number(),
            server_host_pid: xvfb.host_pid(),
        };
        let clients = xvfb.clients();
        X11Desktop::start(endpoint, display, clients, Some(xvfb))
    }

    fn start(
        endpoint: Endpoint,
        name: String,
        clients: XClients,
        xvfb: Option<Xvfb>,
    ) -> Result<X11Desktop, X11Error> {
        let screen = Arc::new(Mutex::new(ScreenInfo {
            capture: Size {
                width: 1,
                height: 1,
            },
            device_pixel_ratio: 1.0,
        }));
        let (ready_tx, ready_rx) = mpsc::channel();
        let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
        let thread_screen = Arc::clone(&screen);
        let thread = std::thread::Builder::new()
            .name(format!("hands-x11 {name}"))
            .spawn(move || match XState::connect(endpoint, thread_screen) {
                Ok(state) => {
                    let _ = ready_tx.send(Ok(()));
                    state.run(jobs_rx);
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                }
            })
            .map_err(|source| X11Error::Spawn {
                program: "the X11 driver thread".into(),
                source,
            })?;
        ready_rx.recv().map_err(|_| X11Error::Stopped)??;
        Ok(X11Desktop {
            jobs: Some(jobs_tx),
            thread: Some(thread),
            screen,
            display: name,
            clients,
            xvfb,
        })
    }

    /// Another connection to the same display, with its own driver thread (e.g. to capture
    /// the screen for a video beside the connection that acts on it). It does not own the
    /// server: a spawned Xvfb still stops when this desktop is dropped.
    pub fn another_connection(&self) -> Result<X11Desktop, X11Error> {
        let endpoint = match &self.xvfb {
            Some(xvfb) => Endpoint::Spawned {
                launcher: Arc::clone(xvfb.launcher()),
                number: xvfb.number(),
                server_host_pid: xvfb.host_pid(),
            },
            None => Endpoint::Display(Some(self.display.clone())),
        };
        X11Desktop::start(endpoint, self.display.clone(), self.clients.clone(), None)
    }

    /// The display name, e.g. `:93`, as programs in the display's environment name it.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// How to start clients on this display: through the launcher of the Xvfb it spawned (in
    /// that server's environment), or on the host for an attached display.
    pub fn clients(&self) -> XClients {
        self.clients.clone()
    }

    /// Starts `program args…` on this display ([`XClients::spawn`]); it is killed when the
    /// returned [`XClient`] is dropped.
    pub fn spawn_client(&self, program: &str, args: &[&str]) -> Result<XClient, X11Error> {
        self.clients.spawn(program, args)
    }

    /// Whether a window manager runs on this display: it has put `_NET_SUPPORTING_WM_CHECK` on
    /// the root window (EWMH), which it does once it manages windows. A client mapped before
    /// then may be left unmanaged, or never shown, so desktops start their applications after.
    pub async fn window_manager_ready(&self) -> Result<bool, DesktopError> {
        self.call(|state| state.window_manager_ready()).await
    }

    /// The desktop's top-level windows, the focused one and the clipboard's owner, now
    /// ([`windows`]).
    pub async fn windows(&self) -> Result<windows::WindowsNow, DesktopError> {
        self.call(|state| Ok(state.windows()?)).await
    }

    /// Runs `f` on the X thread and waits for its answer.
    async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut XState) -> Result<T, DesktopError> + Send + 'static,
    ) -> Result<T, DesktopError> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |state| {
            let _ = tx.send(f(state));
        });
        self.jobs
            .as_ref()
            .ok_or_else(|| DesktopError::Gone("the X11 driver is closed".into()))?
            .send(job)
            .map_err(|_| DesktopError::Gone("the X11 driver thread has stopped".into()))?;
        rx.await
            .map_err(|_| DesktopError::Gone("the X11 driver thread has stopped".into()))?
    }
}

impl Drop for X11Desktop {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.xvfb.take();
    }
}

#[async_trait]
impl Desktop for X11Desktop {
    fn screen(&self) -> ScreenInfo {
        *self.screen.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn capture(&mut self) -> Result<Pixels, DesktopError> {
        self.call(|s| s.capture()).await
    }

    async fn settle(
        &mut self,
        budget: SettleBudget,
        cancel: &CancellationToken,
    ) -> Result<SettleReport, DesktopError> {
        let cancel = cancel.clone();
        self.call(move |s| s.settle(budget, &cancel)).await
    }

    async fn move_pointer(&mut self, to: ScreenPoint) -> Result<(), DesktopError> {
        self.call(move |s| Ok(s.move_pointer(to)?)).await
    }

    async fn pointer(&mut self) -> Result<ScreenPoint, DesktopError> {
        self.call(|s| Ok(s.pointer()?)).await
    }

    async fn click(
        &mut self,
        at: Option<ScreenPoint>,
        button: Button,
        count: u8,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError> {
        self.call(move |s| Ok(s.click(at, button, count, modifiers)?))
            .await
    }

    async fn button(&mut self, button: Button, pressed: bool) -> Result<(), DesktopError> {
        self.call(move |s| Ok(s.button(button, pressed)?)).await
    }

    async fn drag(
        &mut self,
        path: &[ScreenPoint],
        button: Button,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError> {
        let path = path.to_vec();
        self.call(move |s| Ok(s.drag(&path, button, modifiers)?))
            .await
    }

    async fn scroll(
        &mut self,
        at: Option<ScreenPoint>,
        direction: ScrollDirection,
        clicks: u32,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError> {
        self.call(move |s| Ok(s.scroll(at, direction, clicks, modifiers)?))
            .await
    }

    async fn key_chord(&mut self, chord: &KeyChord) -> Result<(), DesktopError> {
        let chord = chord.clone();
        self.call(move |s| Ok(s.key_chord(&chord)?)).await
    }

    async fn key_hold(&mut self, chord: &KeyChord, down: bool) -> Result<(), DesktopError> {
        let chord = chord.clone();
        self.call(move |s| Ok(s.key_hold(&chord, down)?)).await
    }

    async fn type_text(
        &mut self,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<(), DesktopError> {
        let text = text.to_owned();
        let cancel = cancel.clone();
        self.call(move |s| s.type_text(&text, &cancel)).await
    }
}
