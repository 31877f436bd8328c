//! `hands._hands.Desktop`: an X11 desktop (a spawned Xvfb or an attached display) behind both
//! computer-tool surfaces of hands-toolset, so every action means exactly what it means in
//! hands' own runner: Claude's computer toolset members ([`Desktop::member`], also the typed
//! Python API) and OpenAI's `computer_call` actions ([`Desktop::openai_action`]). Coordinates
//! are screenshot pixels, mapped to the screen through the frame of the last screenshot.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_core::desktop::SettleReport;
use hands_core::desktop::{Desktop as DesktopDriver, DesktopError, ScreenInfo, SettleBudget};
use hands_core::geometry::{ImageTier, ScreenPoint, ScreenshotSizing, Size};
use hands_core::image::{ImageFormat, Pixels};
use hands_core::input::{Button, KeyChord, ModifierSet, ScrollDirection};
use hands_jail::{Jail, JailKind};
use hands_toolset::actions::DesktopOutcome;
use hands_toolset::computer::members::Member;
use hands_toolset::computer::{ComputerConfig, ComputerToolset, MemberError};
use hands_toolset::computer_call::{ComputerCallConfig, ComputerCallExecutor, parse_call};
use hands_toolset::errtext;
use hands_x11::{X11Desktop, XClient, XClients, XvfbConfig};
use pyo3::prelude::*;
use serde_json::{Value, json};

use crate::errors::Error;
use crate::run::{Calling, Out, parse_json, run};
use crate::sandbox::{self, Jailed, Mode};

/// One X11 desktop shared by the two surfaces: each call takes the lock for its duration, and
/// the screen size is cached after every call so `screen()` needs no lock. `None` once closed.
#[derive(Clone)]
struct Shared {
    desktop: Arc<tokio::sync::Mutex<Option<X11Desktop>>>,
    screen: Arc<Mutex<ScreenInfo>>,
}

fn closed() -> DesktopError {
    DesktopError::Gone("the desktop is closed".into())
}

/// Forwards one call to the desktop under the lock, refreshing the cached screen size.
macro_rules! forward {
    ($self:ident, |$d:ident| $call:expr) => {{
        let mut guard = $self.desktop.lock().await;
        let $d = guard.as_mut().ok_or_else(closed)?;
        let result = $call.await;
        *$self.screen.lock().unwrap_or_else(|e| e.into_inner()) = $d.screen();
        result
    }};
}

#[async_trait]
impl DesktopDriver for Shared {
    fn screen(&self) -> ScreenInfo {
        *self.screen.lock().unwrap_or_else(|e| e.into_inner())
    }
    async fn capture(&mut self) -> Result<Pixels, DesktopError> {
        forward!(self, |d| d.capture())
    }
    async fn settle(
        &mut self,
        budget: SettleBudget,
        cancel: &CancellationToken,
    ) -> Result<SettleReport, DesktopError> {
        forward!(self, |d| d.settle(budget, cancel))
    }
    async fn move_pointer(&mut self, to: ScreenPoint) -> Result<(), DesktopError> {
        forward!(self, |d| d.move_pointer(to))
    }
    async fn pointer(&mut self) -> Result<ScreenPoint, DesktopError> {
        forward!(self, |d| d.pointer())
    }
    async fn click(
        &mut self,
        at: Option<ScreenPoint>,
        button: Button,
        count: u8,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError> {
        forward!(self, |d| d.click(at, button, count, modifiers))
    }
    async fn button(&mut self, button: Button, pressed: bool) -> Result<(), DesktopError> {
        forward!(self, |d| d.button(button, pressed))
    }
    async fn drag(
        &mut self,
        path: &[ScreenPoint],
        button: Button,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError> {
        forward!(self, |d| d.drag(path, button, modifiers))
    }
    async fn scroll(
        &mut self,
        at: Option<ScreenPoint>,
        direction: ScrollDirection,
        clicks: u32,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError> {
        forward!(self, |d| d.scroll(at, direction, clicks, modifiers))
    }
    async fn key_chord(&mut self, chord: &KeyChord) -> Result<(), DesktopError> {
        forward!(self, |d| d.key_chord(chord))
    }
    async fn key_hold(&mut self, chord: &KeyChord, down: bool) -> Result<(), DesktopError> {
        forward!(self, |d| d.key_hold(chord, down))
    }
    async fn type_text(
        &mut self,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<(), DesktopError> {
        forward!(self, |d| d.type_text(text, cancel))
    }
}

/// A member call that did not do its work, as the Python side sees it: a call that cannot
/// run as written is an `ActionError` whose message is safe to show a model (as a failed
/// action's is).
fn member_error(e: MemberError, cancel: &CancellationToken) -> Error {
    match e {
        MemberError::Desktop(e) => desktop_error(e, cancel),
        MemberError::Invalid(why) => Error::Action(why),
        other => Error::Action(other.to_string()),
    }
}

/// A desktop error as the Python side sees it.
fn desktop_error(e: DesktopError, cancel: &CancellationToken) -> Error {
    match e {
        DesktopError::Cancelled => Error::Cancelled,
        _ if cancel.is_cancelled() => Error::Cancelled,
        e if e.is_fault() => Error::DesktopGone(e.to_string()),
        e => Error::Action(e.to_string()),
    }
}

struct Core {
    /// How programs start on the display (the desktop's launcher and environment).
    launcher: XClients,
    shared: Shared,
    /// Claude's computer toolset: the members, and the frame of its last screenshot.
    claude: tokio::sync::Mutex<ComputerToolset<Shared>>,
    /// OpenAI's computer tool: the actions, and the frame of its last screenshot.
    openai: tokio::sync::Mutex<ComputerCallExecutor<Shared>>,
    /// Programs started on the display, killed before it closes.
    clients: Mutex<Vec<Arc<Mutex<Option<XClient>>>>>,
    /// `"jail"` or `"none"`.
    sandbox: &'static str,
    /// How isolated the desktop's programs are, in words.
    isolation: String,
    /// The jail and its proxy (a spawned, jailed desktop), dropped after the display on close:
    /// last, so it outlives every program in it.
    jailed: Mutex<Option<Jailed>>,
}

impl Core {
    /// Runs one of Claude's computer toolset members: `input` is the member's input object.
    async fn member(
        self: Arc<Core>,
        name: String,
        input: Value,
        cancel: CancellationToken,
    ) -> Result<Out, Error> {
        let mut toolset = self.claude.lock().await;
        // Read once by the toolset's own parser (its member, its input rules), then run: the
        // errors and the outcome are typed, never read back out of a model's text.
        let member = Member::from_name(&name).ok_or_else(|| {
            Error::Argument(format!(
                "unknown computer member `{}`",
                errtext::name(&name)
            ))
        })?;
        let action = toolset
            .parse_member(member, &input)
            .map_err(|e| member_error(e, &cancel))?;
        let outcome = toolset
            .perform(&action, &cancel)
            .await
            .map_err(|e| desktop_error(e, &cancel))?;
        Ok(match outcome {
            DesktopOutcome::Image(image) => Out::Image(image.into()),
            DesktopOutcome::Pointer(p) => Out::Point(p.x(), p.y()),
            DesktopOutcome::Done => Out::None,
        })
    }

    /// Runs one OpenAI `computer_call` action (the action object as the API sends it).
    async fn openai_action(
        self: Arc<Core>,
        action: Value,
        cancel: CancellationToken,
    ) -> Result<Out, Error> {
        let mut executor = self.openai.lock().await;
        // One action the SDK has already approved (its safety checks are the SDK runner's),
        // validated as the one action of a GA-shaped call.
        let item =
            json!({"type": "computer_call", "call_id": "call_hands_py_local", "actions": [action]});
        let call =
            parse_call(&item, executor.frame()).map_err(|e| Error::Argument(e.to_string()))?;
        for action in &call.actions {
            executor
                .execute(action, &cancel)
                .await
                .map_err(|e| desktop_error(e, &cancel))?;
        }
        Ok(Out::None)
    }

    /// The screenshot that answers a `computer_call`.
    async fn openai_screenshot(self: Arc<Core>, cancel: CancellationToken) -> Result<Out, Error> {
        let mut executor = self.openai.lock().await;
        let image = executor
            .screenshot(&cancel)
            .await
            .map_err(|e| desktop_error(e, &cancel))?;
        Ok(Out::Image(image.into()))
    }

    /// Waits until something other than the bare root window is on screen (Xvfb starts with a
    /// uniform root; an application's window breaks it), polling the capture every 50 ms.
    /// Waits until a window manager manages the display (`_NET_SUPPORTING_WM_CHECK`), so an
    /// application launched next is managed and shown.
    async fn wait_for_window_manager(
        self: Arc<Core>,
        timeout: Duration,
        cancel: CancellationToken,
    ) -> Result<Out, Error> {
        let deadline = Instant::now() + timeout;
        loop {
            let ready = {
                let guard = self.shared.desktop.lock().await;
                let desktop = guard
                    .as_ref()
                    .ok_or_else(closed)
                    .map_err(|e| desktop_error(e, &cancel))?;
                desktop
                    .window_manager_ready()
                    .await
                    .map_err(|e| desktop_error(e, &cancel))?
            };
            if ready {
                return Ok(Out::Bool(true));
            }
            if Instant::now() > deadline {
                return Ok(Out::Bool(false));
            }
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(10)) => {}
                () = cancel.cancelled() => return Err(Error::Cancelled),
            }
        }
    }

    async fn wait_for_window(
        self: Arc<Core>,
        timeout: Duration,
        cancel: CancellationToken,
    ) -> Result<Out, Error> {
        let deadline = Instant::now() + timeout;
        let mut shared = self.shared.clone();
        loop {
            let pixels = shared
                .capture()
                .await
                .map_err(|e| desktop_error(e, &cancel))?;
            let size = pixels.size();
            if pixels.rgb_at(size.width / 2, size.height / 2) != pixels.rgb_at(0, 0) {
                return Ok(Out::Bool(true));
            }
            if Instant::now() > deadline {
                return Ok(Out::Bool(false));
            }
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
                () = cancel.cancelled() => return Err(Error::Cancelled),
            }
        }
    }
}

/// How screenshots are sized, encoded and settled; shared by both surfaces of a desktop.
#[pyclass(frozen, module = "hands._hands", name = "DesktopSettings")]
pub struct Settings {
    sizing: ScreenshotSizing,
    image_format: ImageFormat,
    settle: SettleBudget,
    device_pixel_ratio: Option<f64>,
}

#[pymethods]
impl Settings {
    /// `tier`: the model's image tier (`"high"` or `"standard"`); `max_long_edge`: an extra cap
    /// on screenshots; `image_format`: `"png"` or `"jpeg"`; `settle_*`: the quiet period and the
    /// cap of the wait for the screen to stop changing before a capture.
    #[new]
    #[pyo3(signature = (*, tier="high", max_long_edge=None, image_format="png", jpeg_quality=80,
        settle_quiet_ms=40, settle_cap_ms=1500, device_pixel_ratio=None))]
    fn new(
        tier: &str,
        max_long_edge: Option<u32>,
        image_format: &str,
        jpeg_quality: u8,
        settle_quiet_ms: u64,
        settle_cap_ms: u64,
        device_pixel_ratio: Option<f64>,
    ) -> PyResult<Settings> {
        let tier = match tier {
            "high" => ImageTier::HighRes,
            "standard" => ImageTier::Standard,
            other => {
                return Err(Error::Argument(format!(
                    "tier must be \"high\" or \"standard\", not {other:?}"
                ))
                .into());
            }
        };
        let image_format = match image_format {
            "png" => ImageFormat::Png,
            "jpeg" if (1..=100).contains(&jpeg_quality) => ImageFormat::Jpeg {
                quality: jpeg_quality,
            },
            _ => {
                return Err(Error::Argument(
                    "image_format must be \"png\" or \"jpeg\" (jpeg_quality 1 to 100)".into(),
                )
                .into());
            }
        };
        if settle_quiet_ms == 0 || settle_cap_ms < settle_quiet_ms {
            return Err(Error::Argument(
                "settle_quiet_ms must be positive and at most settle_cap_ms".into(),
            )
            .into());
        }
        if let Some(ratio) = device_pixel_ratio
            && !(ratio.is_finite() && ratio > 0.0)
        {
            return Err(
                Error::Argument("device_pixel_ratio must be a positive number".into()).into(),
            );
        }
        Ok(Settings {
            sizing: ScreenshotSizing {
                tier,
                max_long_edge,
            },
            image_format,
            settle: SettleBudget {
                quiet: Duration::from_millis(settle_quiet_ms),
                cap: Duration::from_millis(settle_cap_ms),
            },
            device_pixel_ratio,
        })
    }
}

/// An X11 desktop. Built by `spawn` or `attach`; see the Python class `hands.Desktop`.
#[pyclass(frozen, module = "hands._hands", name = "Desktop")]
pub struct Desktop {
    core: Arc<Core>,
}

impl Desktop {
    fn new(
        desktop: X11Desktop,
        settings: &Settings,
        jailed: Option<Jailed>,
        isolation: String,
    ) -> Result<Desktop, Error> {
        let launcher = desktop.clients();
        let shared = Shared {
            screen: Arc::new(Mutex::new(desktop.screen())),
            desktop: Arc::new(tokio::sync::Mutex::new(Some(desktop))),
        };
        let claude = ComputerToolset::new(
            shared.clone(),
            ComputerConfig {
                sizing: settings.sizing,
                image_format: settings.image_format,
                settle: settings.settle,
                append_screenshot: false,
                device_pixel_ratio: settings.device_pixel_ratio,
                ..ComputerConfig::default()
            },
        )
        .map_err(|e| Error::Argument(e.to_string()))?;
        let openai = ComputerCallExecutor::new(
            shared.clone(),
            ComputerCallConfig {
                sizing: settings.sizing,
                image_format: settings.image_format,
                settle: settings.settle,
                device_pixel_ratio: settings.device_pixel_ratio,
                ..ComputerCallConfig::default()
            },
        );
        Ok(Desktop {
            core: Arc::new(Core {
                launcher,
                shared,
                claude: tokio::sync::Mutex::new(claude),
                openai: tokio::sync::Mutex::new(openai),
                clients: Mutex::new(Vec::new()),
                sandbox: if jailed.is_some() { "jail" } else { "none" },
                isolation,
                jailed: Mutex::new(jailed),
            }),
        })
    }
}

impl Desktop {
    /// Something of the jail, while there is one.
    fn with_jail<T>(&self, of: impl FnOnce(&Jail) -> T) -> Option<T> {
        self.core
            .jailed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|j| of(&j.jail))
    }
}

#[pymethods]
impl Desktop {
    /// Spawns a private Xvfb of `width` x `height` and attaches to it: in a desktop jail of its
    /// own (`sandbox="jail"`, whose only way out is a proxy allowing the origins of `allow`,
    /// none when empty; `workspace` copied, or bound with `bind_workspace`, at `/workspace`;
    /// `init` the package's jail init) or on the host (`sandbox="none"`).
    #[staticmethod]
    #[pyo3(signature = (width, height, settings, *, sandbox="jail", allow=None, workspace=None,
        bind_workspace=false, init=None))]
    #[allow(clippy::too_many_arguments)]
    fn spawn(
        py: Python<'_>,
        width: u32,
        height: u32,
        settings: &Settings,
        sandbox: &str,
        allow: Option<Vec<String>>,
        workspace: Option<PathBuf>,
        bind_workspace: bool,
        init: Option<PathBuf>,
    ) -> PyResult<Desktop> {
        let size = Size::new(width, height)
            .ok_or_else(|| Error::Argument("a screen size must not be zero".into()))?;
        let mode = sandbox::Mode::parse(sandbox)?;
        match mode {
            Mode::None => {
                if allow.is_some() || workspace.is_some() {
                    return Err(Error::Argument(
                        "allow and workspace apply to a jailed desktop; with sandbox=\"none\" its programs run on the host with the caller's network and files".into(),
                    )
                    .into());
                }
                let desktop = py
                    .detach(|| X11Desktop::spawn(&XvfbConfig::new(size)))
                    .map_err(|e| Error::Start(e.to_string()))?;
                Ok(Desktop::new(
                    desktop,
                    settings,
                    None,
                    "none: programs run on the host as the caller (sandbox=\"none\")".into(),
                )?)
            }
            Mode::Jail => {
                let policy = sandbox::desktop_policy(allow)?;
                let spec = sandbox::JailSpec {
                    kind: JailKind::Desktop,
                    init: sandbox::init_program(init.as_deref()),
                    workspace: sandbox::workspace(
                        workspace,
                        sandbox::WorkspacePlacement::from_bind(bind_workspace),
                    ),
                };
                let (jailed, desktop) = py.detach(|| -> Result<_, Error> {
                    let jailed = Jailed::start(&spec, policy)?;
                    let mut config = XvfbConfig::new(size).with_launcher(jailed.launcher());
                    config.env = Jail::base_env();
                    let desktop =
                        X11Desktop::spawn(&config).map_err(|e| Error::Start(e.to_string()))?;
                    Ok((jailed, desktop))
                })?;
                let isolation = sandbox::describe(
                    &jailed.jail,
                    "network only through a proxy allowing the `allow` origins",
                );
                Ok(Desktop::new(desktop, settings, Some(jailed), isolation)?)
            }
        }
    }

    /// Attaches to `display` (or `$DISPLAY`), which it then leaves running.
    #[staticmethod]
    fn attach(py: Python<'_>, display: Option<String>, settings: &Settings) -> PyResult<Desktop> {
        let desktop = py
            .detach(|| X11Desktop::connect(display.as_deref()))
            .map_err(|e| Error::Start(e.to_string()))?;
        Ok(Desktop::new(
            desktop,
            settings,
            None,
            "none: an attached display; programs launched run on the host as the caller".into(),
        )?)
    }

    /// Where the desktop's programs run: `"jail"` or `"none"` (the host).
    #[getter]
    fn sandbox(&self) -> &'static str {
        self.core.sandbox
    }

    /// How isolated the desktop's programs are: `"jail: …; host uid N; limits: …"` or
    /// `"none: …"`.
    #[getter]
    fn isolation(&self) -> String {
        self.core.isolation.clone()
    }

    /// The host directory that is the jail's home (`None` unjailed or once closed).
    #[getter]
    fn home_dir(&self) -> Option<PathBuf> {
        self.with_jail(|j| j.home_dir().to_owned())
    }

    /// The host directory that is the jail's `/workspace` (`None` unjailed or once closed).
    #[getter]
    fn workspace_dir(&self) -> Option<PathBuf> {
        self.with_jail(|j| j.workspace_dir().to_owned())
    }

    /// The host uid the jail's programs run as (`None` unjailed or once closed).
    #[getter]
    fn host_uid(&self) -> Option<u32> {
        self.with_jail(Jail::host_uid)
    }

    /// The display name, e.g. `:93`.
    #[getter]
    fn display(&self) -> String {
        self.core.launcher.display().to_owned()
    }

    /// `(width, height)` of the screen in input pixels.
    #[getter]
    fn screen_size(&self) -> (u32, u32) {
        let info = self.core.shared.screen();
        (info.capture.width, info.capture.height)
    }

    /// `(width, height)` of the screenshots Claude's members take and take coordinates in.
    fn shot_size(&self, py: Python<'_>) -> (u32, u32) {
        let shot = py.detach(|| self.core.claude.blocking_lock().frame().shot());
        (shot.width, shot.height)
    }

    /// `(width, height)` of the screenshots OpenAI's actions take and take coordinates in.
    fn openai_shot_size(&self, py: Python<'_>) -> (u32, u32) {
        let shot = py.detach(|| self.core.openai.blocking_lock().frame().shot());
        (shot.width, shot.height)
    }

    /// Runs one of Claude's `computer_toolset_20260801` members with its input (JSON text).
    /// Answers `None`, an `Image` (`screenshot`, `zoom`) or `(x, y)` (`cursor_position`).
    #[pyo3(signature = (name, input, cancelled=None, blocking=false))]
    fn member(
        &self,
        py: Python<'_>,
        name: String,
        input: &str,
        cancelled: Option<Py<PyAny>>,
        blocking: bool,
    ) -> PyResult<Py<PyAny>> {
        let input = parse_json(input)?;
        let core = Arc::clone(&self.core);
        run(
            py,
            Calling::from_blocking(blocking),
            cancelled,
            move |cancel| core.member(name, input, cancel),
        )
    }

    /// Runs one OpenAI `computer_call` action (JSON text of the action object).
    #[pyo3(signature = (action, cancelled=None, blocking=false))]
    fn openai_action(
        &self,
        py: Python<'_>,
        action: &str,
        cancelled: Option<Py<PyAny>>,
        blocking: bool,
    ) -> PyResult<Py<PyAny>> {
        let action = parse_json(action)?;
        let core = Arc::clone(&self.core);
        run(
            py,
            Calling::from_blocking(blocking),
            cancelled,
            move |cancel| core.openai_action(action, cancel),
        )
    }

    /// The settled, scaled screenshot that answers a `computer_call`.
    #[pyo3(signature = (cancelled=None, blocking=false))]
    fn openai_screenshot(
        &self,
        py: Python<'_>,
        cancelled: Option<Py<PyAny>>,
        blocking: bool,
    ) -> PyResult<Py<PyAny>> {
        let core = Arc::clone(&self.core);
        run(
            py,
            Calling::from_blocking(blocking),
            cancelled,
            move |cancel| core.openai_screenshot(cancel),
        )
    }

    /// Waits up to `timeout` seconds for a window to appear; answers whether one did.
    #[pyo3(signature = (timeout=20.0, cancelled=None, blocking=false))]
    fn wait_for_window(
        &self,
        py: Python<'_>,
        timeout: f64,
        cancelled: Option<Py<PyAny>>,
        blocking: bool,
    ) -> PyResult<Py<PyAny>> {
        let timeout = Duration::try_from_secs_f64(timeout)
            .map_err(|_| Error::Argument("timeout must be a non-negative number".into()))?;
        let core = Arc::clone(&self.core);
        run(
            py,
            Calling::from_blocking(blocking),
            cancelled,
            move |cancel| core.wait_for_window(timeout, cancel),
        )
    }

    /// Waits up to `timeout` seconds for a window manager to manage the display; whether one
    /// did. Launch applications after it (one mapped before may never be shown).
    fn wait_for_window_manager(
        &self,
        py: Python<'_>,
        timeout: f64,
        cancelled: Option<Py<PyAny>>,
        blocking: bool,
    ) -> PyResult<Py<PyAny>> {
        let timeout = Duration::try_from_secs_f64(timeout)
            .map_err(|_| Error::Argument("timeout must be a non-negative number".into()))?;
        let core = Arc::clone(&self.core);
        run(
            py,
            Calling::from_blocking(blocking),
            cancelled,
            move |cancel| core.wait_for_window_manager(timeout, cancel),
        )
    }

    /// Starts `program` with `args` on this display; it is killed when the desktop closes.
    #[pyo3(signature = (program, args=Vec::new()))]
    fn launch(&self, program: &str, args: Vec<String>) -> PyResult<Client> {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let client = self
            .core
            .launcher
            .spawn(program, &args)
            .map_err(|e| Error::Start(e.to_string()))?;
        let client = Arc::new(Mutex::new(Some(client)));
        self.core
            .clients
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::clone(&client));
        Ok(Client {
            program: program.to_owned(),
            client,
        })
    }

    /// Kills the programs started with `launch`, closes the connection and, for a spawned
    /// desktop, stops Xvfb. Later calls raise `DesktopGone`.
    fn close(&self, py: Python<'_>) {
        let clients =
            std::mem::take(&mut *self.core.clients.lock().unwrap_or_else(|e| e.into_inner()));
        py.detach(|| {
            for client in clients {
                client.lock().unwrap_or_else(|e| e.into_inner()).take();
            }
            self.core.shared.desktop.blocking_lock().take();
            // Last: the jail kills whatever is left in it and removes its files.
            self.core
                .jailed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
        });
    }

    /// Whether `close` has run.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        py.detach(|| self.core.shared.desktop.blocking_lock().is_none())
    }
}

/// A program started on a desktop.
#[pyclass(frozen, module = "hands._hands", name = "Client")]
pub struct Client {
    program: String,
    client: Arc<Mutex<Option<XClient>>>,
}

#[pymethods]
impl Client {
    /// The program's name.
    #[getter]
    fn program(&self) -> String {
        self.program.clone()
    }

    /// Whether it is still running.
    #[getter]
    fn running(&self) -> bool {
        self.client
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .is_some_and(XClient::is_running)
    }

    /// Kills it (and its process group).
    fn kill(&self) {
        self.client.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}
