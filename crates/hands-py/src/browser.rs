//! `hands._hands.Browser`: Chromium over CDP (`hands-cdp`), launched on a fresh profile or
//! attached, with the origin allow-list enforced inside the browser on every request, and file
//! grants that `upload_file` / `download_file` redeem. Members are the driver contract's 28
//! (hands-core's `Browser`), called by name with their arguments object and parsed by the same
//! rules as hands' own function-tool surface.

use std::path::PathBuf;
use std::sync::Arc;

use hands_cdp::{
    CdpBrowser, DownloadGrant, DriverConfig, MemoryGrants, RequestInfo, RequestPolicy, UploadGrant,
    ValuePolicy, Verdict,
};
use hands_core::CancellationToken;
use hands_core::browser::args::{BrowserCall, ReadFilter};
use hands_core::browser::driver::{ReadResult, dispatch};
use hands_core::browser::read::Ref;
use hands_core::browser::state::{BrowserState, TabId};
use hands_core::browser::{Browser as _, BrowserMember, BrowserOutput, DriverError, PageUrl};
use hands_core::image::ImageFormat;
use hands_toolset::browser::parse_call;
use hands_toolset::browser::state::{StateFormat, StateView};
use hands_toolset::browser::url_policy::{OriginAllowList, UrlDecision};
use hands_toolset::claude_browser::ClaudeBrowserConfig;
use hands_toolset::claude_browser::Member;
use hands_toolset::claude_browser::forms::{self, Fields};
use hands_toolset::claude_browser::input::{Action, FieldValue, Limits};
use pyo3::prelude::*;
use serde_json::{Value, json};

use hands_cdp::saved_state::{RunState, StateName};

use crate::errors::Error;
use crate::run::{Calling, Out, parse_json, run};
use crate::sandbox::{self, Mode};

/// The allow-list as the browser's request policy: every request of every target, each
/// redirect hop included. Requests that reach no origin (`data:`, `blob:`, `about:`) pass.
pub(crate) struct AllowListPolicy(pub(crate) OriginAllowList);

impl RequestPolicy for AllowListPolicy {
    fn check(&self, request: &RequestInfo<'_>) -> Verdict {
        if matches!(request.url.scheme(), "data" | "blob" | "about") {
            return Verdict::Allow;
        }
        match self.0.check(request.url) {
            UrlDecision::Allow { .. } => Verdict::Allow,
            UrlDecision::Deny(reason) => Verdict::Deny {
                reason: reason.to_string(),
            },
        }
    }
}

/// A driver error as the Python side sees it.
fn driver_error(e: DriverError, cancel: &CancellationToken) -> Error {
    match e {
        DriverError::Cancelled => Error::Cancelled,
        _ if cancel.is_cancelled() => Error::Cancelled,
        DriverError::Refused(text) => Error::BrowserRefused(text.to_string()),
        DriverError::Gone(why) => Error::BrowserGone(why),
        DriverError::Unsupported(member) => {
            Error::BrowserRefused(format!("this browser does not support `{member}`"))
        }
        other => Error::BrowserFailed(other.to_string()),
    }
}

/// A member's output as Python values: text, a structured read or file outcome as a dict, an
/// image, or nothing.
fn output(out: BrowserOutput) -> Result<Out, Error> {
    let json = |value: Result<Value, serde_json::Error>| {
        value
            .map(Out::Json)
            .map_err(|e| Error::BrowserFailed(e.to_string()))
    };
    Ok(match out {
        BrowserOutput::Text(None) | BrowserOutput::Read(None) | BrowserOutput::StateOnly => {
            Out::None
        }
        BrowserOutput::Text(Some(text))
        | BrowserOutput::Read(Some(ReadResult::Text(text)))
        | BrowserOutput::Script(text) => Out::Text(text),
        BrowserOutput::Read(Some(ReadResult::Structured(read))) => {
            json(serde_json::to_value(&read))?
        }
        BrowserOutput::ScopedRead(read) => json(serde_json::to_value(&read))?,
        BrowserOutput::Image(image) => Out::Image(image.into()),
        BrowserOutput::File(outcome) => Out::Json(outcome.to_json()),
    })
}

struct Core {
    driver: tokio::sync::Mutex<Option<CdpBrowser>>,
    allow: Option<OriginAllowList>,
    grants: Arc<MemoryGrants>,
    /// `"jail"` or `"none"`.
    sandbox: &'static str,
    /// How isolated the browser is, in words.
    isolation: String,
    /// A launched browser's jail, dropped after the browser on close.
    jail: std::sync::Mutex<Option<hands_jail::Jail>>,
    /// The saved sign-in (`state=`), loaded at launch and saved on close.
    state: tokio::sync::Mutex<Option<RunState>>,
}

impl Core {
    async fn call(
        self: Arc<Core>,
        member: BrowserMember,
        arguments: Value,
        cancel: CancellationToken,
    ) -> Result<Out, Error> {
        let call = parse_call(member, &arguments).map_err(|e| Error::Argument(e.to_string()))?;
        let mut guard = self.driver.lock().await;
        let driver = guard
            .as_mut()
            .ok_or_else(|| Error::BrowserGone("the browser is closed".into()))?;
        let out = dispatch(driver, &call, &cancel)
            .await
            .map_err(|e| driver_error(e, &cancel))?;
        output(out)
    }

    /// Runs one of Claude's `browser_toolset_20260801` members: its input parsed by hands'
    /// own rules (hands-toolset's `claude_browser`), then the driver calls it stands for. The
    /// answer is the last driver output; consent, the URL policy and rendering are the SDK's.
    async fn claude_member(
        self: Arc<Core>,
        name: String,
        input: Value,
        cancel: CancellationToken,
    ) -> Result<Out, Error> {
        let member = Member::from_name(&name)
            .ok_or_else(|| Error::Argument(format!("unknown browser member `{name}`")))?;
        let defaults = ClaudeBrowserConfig::default();
        let limits = Limits {
            max_wait: defaults.max_wait,
            script_timeout: defaults.script_timeout,
            diagnostics_limit: defaults.diagnostics_limit,
            scroll_step: defaults.scroll_step,
        };
        let action =
            Action::parse(member, &input, limits).map_err(|e| Error::Argument(e.to_string()))?;
        let mut guard = self.driver.lock().await;
        let driver = guard
            .as_mut()
            .ok_or_else(|| Error::BrowserGone("the browser is closed".into()))?;
        let calls = match action {
            Action::Call(call) => vec![call],
            Action::Repeat { call, times } => vec![call; times as usize],
            Action::Refuse(text) => return Err(Error::BrowserRefused(text.to_owned())),
            Action::Wait(duration) => {
                tokio::select! {
                    () = tokio::time::sleep(duration) => return Ok(Out::None),
                    () = cancel.cancelled() => return Err(Error::Cancelled),
                }
            }
            // The click opens the file input's chooser; the grant fills it.
            Action::Upload { target, grant, tab } => vec![
                BrowserCall::Click { target, tab },
                BrowserCall::UploadFile { grant },
            ],
            Action::Reload { tab } => {
                let state = driver
                    .state(&cancel)
                    .await
                    .map_err(|e| driver_error(e, &cancel))?;
                vec![reload(&state, tab)?]
            }
            Action::FormInput { target, value, tab } => {
                let read = BrowserCall::ReadPage {
                    filter: ReadFilter::Interactive,
                    tab: tab.clone(),
                };
                let out = dispatch(driver, &read, &cancel)
                    .await
                    .map_err(|e| driver_error(e, &cancel))?;
                vec![form_call(&out, target, value, tab)?]
            }
        };
        let mut last = Out::None;
        for call in &calls {
            if cancel.is_cancelled() {
                return Err(Error::Cancelled);
            }
            let out = dispatch(driver, call, &cancel)
                .await
                .map_err(|e| driver_error(e, &cancel))?;
            last = output(out)?;
        }
        Ok(last)
    }

    async fn state(self: Arc<Core>, raw: bool, cancel: CancellationToken) -> Result<Out, Error> {
        let mut guard = self.driver.lock().await;
        let driver = guard
            .as_mut()
            .ok_or_else(|| Error::BrowserGone("the browser is closed".into()))?;
        let state = driver
            .state(&cancel)
            .await
            .map_err(|e| driver_error(e, &cancel))?;
        Ok(Out::Json(if raw {
            let tabs: Vec<Value> = state
                .tabs()
                .iter()
                .map(|t| json!({"id": t.id.as_str(), "title": t.title, "url": t.url, "active": t.active}))
                .collect();
            json!({ "tabs": tabs })
        } else {
            StateView::new(&state, StateFormat::Legacy).to_json()
        }))
    }
}

/// `navigate "reload"`: the tab's current URL, without its fragment.
fn reload(state: &BrowserState, tab: Option<TabId>) -> Result<BrowserCall, Error> {
    let info = match &tab {
        Some(id) => state.tab(id),
        None => state.active(),
    }
    .ok_or_else(|| Error::BrowserRefused("`tab_id` names no open tab".into()))?;
    let mut url = url::Url::parse(&info.url)
        .map_err(|_| Error::BrowserRefused("this tab's page cannot be reloaded".into()))?;
    url.set_fragment(None);
    let url =
        PageUrl::parse("url", url.as_str()).map_err(|e| Error::BrowserRefused(e.to_string()))?;
    Ok(BrowserCall::Navigate { url, tab })
}

/// `form_input`: the driver call that sets the field `target`, chosen from its role in a fresh
/// interactive read by hands-toolset's rules (text fields are typed into, lists selected, boxes
/// checked).
fn form_call(
    read: &BrowserOutput,
    target: Ref,
    value: FieldValue,
    tab: Option<TabId>,
) -> Result<BrowserCall, Error> {
    let mut fields = Fields::default();
    if let BrowserOutput::Read(Some(ReadResult::Structured(read))) = read {
        fields.remember(read);
    }
    let field = fields
        .get(&target)
        .ok_or_else(|| Error::BrowserRefused(forms::no_field(&target)))?;
    forms::call_for(field, target, value, tab).map_err(Error::BrowserRefused)
}

/// How a session starts: the origin allow-list, the viewport, image encoding, which field values
/// reads report, and (when launching) the browser program.
#[pyclass(frozen, module = "hands._hands", name = "BrowserSettings")]
pub struct Settings {
    allow: Option<OriginAllowList>,
    /// The `allow` entries as given (a saved sign-in keeps the exact origins among them).
    allow_entries: Vec<String>,
    /// The saved sign-in's name (`state`).
    state: Option<String>,
    viewport: (u32, u32),
    image_format: ImageFormat,
    values: ValuePolicy,
    executable: Option<PathBuf>,
    sandbox: Mode,
    init: Option<PathBuf>,
}

#[pymethods]
impl Settings {
    /// `allow`: origin patterns every request must match (`None`: any); `values`:
    /// `"non_private"` (all but passwords, one-time codes and card numbers) or `"never"`;
    /// `sandbox`: where a launched Chromium runs, `"jail"` (a browser jail of its own, `init`
    /// its init program) or `"none"` (the host; an attached browser is wherever it is);
    /// `state`: a saved sign-in's name (as `hands run --state`), checked here.
    #[new]
    #[pyo3(signature = (*, allow=None, viewport=(1280, 800), image_format="jpeg", jpeg_quality=80,
        values="non_private", executable=None, sandbox="jail", init=None, state=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        allow: Option<Vec<String>>,
        viewport: (u32, u32),
        image_format: &str,
        jpeg_quality: u8,
        values: &str,
        executable: Option<PathBuf>,
        sandbox: &str,
        init: Option<PathBuf>,
        state: Option<String>,
    ) -> PyResult<Settings> {
        let sandbox = Mode::parse(sandbox)?;
        if let Some(name) = &state {
            StateName::parse(name).map_err(|e| Error::Argument(format!("state: {e}")))?;
            if allow.is_none() {
                return Err(Error::Argument(
                    "state needs `allow`: a saved sign-in keeps the allowed origins only".into(),
                )
                .into());
            }
        }
        let allow_entries = allow.clone().unwrap_or_default();
        let allow = allow
            .map(OriginAllowList::new)
            .transpose()
            .map_err(|e| Error::Argument(format!("allow: {e}")))?;
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
        let values = match values {
            "non_private" => ValuePolicy::NonPrivate,
            "never" => ValuePolicy::Never,
            other => {
                return Err(Error::Argument(format!(
                    "values must be \"non_private\" or \"never\", not {other:?}"
                ))
                .into());
            }
        };
        Ok(Settings {
            allow,
            allow_entries,
            state,
            viewport,
            image_format,
            values,
            executable,
            sandbox,
            init,
        })
    }
}

impl Settings {
    /// The driver's configuration, with the grants store it redeems from.
    fn config(&self, grants: &Arc<MemoryGrants>) -> DriverConfig {
        let mut config = DriverConfig {
            viewport: self.viewport,
            image_format: self.image_format,
            values: self.values,
            grants: Some(Arc::clone(grants) as _),
            ..DriverConfig::default()
        };
        config.launch.viewport = self.viewport;
        if let Some(program) = &self.executable {
            config.launch.program = program.clone();
        }
        if let Some(list) = &self.allow {
            config.policy = Arc::new(AllowListPolicy(list.clone()));
        }
        config
    }
}

/// A Chromium session. Built by `launch` or `attach`; see the Python class `hands.Browser`.
#[pyclass(frozen, module = "hands._hands", name = "Browser")]
pub struct Browser {
    core: Arc<Core>,
}

/// Starts a session: launches (in a browser jail of its own unless `sandbox="none"`) or
/// attaches, on the runtime.
fn start(
    py: Python<'_>,
    ws_url: Option<String>,
    settings: &Settings,
    calling: Calling,
) -> PyResult<Py<PyAny>> {
    let grants = Arc::new(MemoryGrants::new());
    let mut config = settings.config(&grants);
    let allow = settings.allow.clone();
    if settings.state.is_some() && ws_url.is_some() {
        return Err(Error::Argument(
            "state needs a launched browser: an attached one has pages of its own".into(),
        )
        .into());
    }
    let state_of = settings
        .state
        .clone()
        .map(|name| (name, settings.allow_entries.clone()));
    let jail_spec =
        (ws_url.is_none() && settings.sandbox == Mode::Jail).then(|| sandbox::JailSpec {
            kind: hands_jail::JailKind::Browser,
            init: sandbox::init_program(settings.init.as_deref()),
            workspace: hands_jail::Workspace::Empty,
        });
    run(py, calling, None, move |_cancel| async move {
        // The key is checked before anything starts: a wrong one launches nothing.
        let mut state = match state_of {
            Some((name, origins)) => Some(
                tokio::task::spawn_blocking(move || RunState::open(&name, &origins))
                    .await
                    .map_err(|e| Error::State(e.to_string()))?
                    .map_err(|e| Error::State(e.to_string()))?,
            ),
            None => None,
        };
        let jail = match jail_spec {
            Some(spec) => {
                // Making a jail waits for its init: off the runtime's workers.
                let jail = tokio::task::spawn_blocking(move || sandbox::start(&spec))
                    .await
                    .map_err(|e| Error::Start(format!("making the browser's jail: {e}")))??;
                config.launch.launcher = Arc::new(jail.clone());
                Some(jail)
            }
            None => None,
        };
        let (sandbox, isolation) = match (&jail, &ws_url) {
            (Some(jail), _) => (
                "jail",
                sandbox::describe(
                    jail,
                    "network only through the browser's proxy enforcing the `allow` list",
                ),
            ),
            (None, Some(_)) => (
                "none",
                "none: an attached browser runs wherever it was started".to_owned(),
            ),
            (None, None) => (
                "none",
                "none: Chromium runs on the host as the caller (sandbox=\"none\")".to_owned(),
            ),
        };
        let driver = match ws_url {
            Some(ws) => CdpBrowser::attach(&ws, config).await,
            None => CdpBrowser::launch(config).await,
        }
        .map_err(|e| Error::Start(e.to_string()))?;
        if let Some(state) = &mut state {
            state
                .load(&driver)
                .await
                .map_err(|e| Error::State(e.to_string()))?;
        }
        let browser = Browser {
            core: Arc::new(Core {
                driver: tokio::sync::Mutex::new(Some(driver)),
                allow,
                grants,
                sandbox,
                isolation,
                jail: std::sync::Mutex::new(jail),
                state: tokio::sync::Mutex::new(state),
            }),
        };
        Python::attach(|py| Py::new(py, browser).map(|b| Out::Object(b.into_any())))
            .map_err(|e| Error::Start(e.to_string()))
    })
}

#[pymethods]
impl Browser {
    /// Launches Chromium on a fresh profile (an awaitable, or the browser when `blocking`).
    #[staticmethod]
    #[pyo3(signature = (settings, blocking=false))]
    fn launch(py: Python<'_>, settings: &Settings, blocking: bool) -> PyResult<Py<PyAny>> {
        start(py, None, settings, Calling::from_blocking(blocking))
    }

    /// Attaches to a running browser's `ws://` DevTools endpoint, which it then leaves alone.
    #[staticmethod]
    #[pyo3(signature = (ws_url, settings, blocking=false))]
    fn attach(
        py: Python<'_>,
        ws_url: String,
        settings: &Settings,
        blocking: bool,
    ) -> PyResult<Py<PyAny>> {
        start(py, Some(ws_url), settings, Calling::from_blocking(blocking))
    }

    /// Calls one of the driver contract's members with its arguments object (JSON text, every
    /// field present, `null` for the active tab).
    #[pyo3(signature = (member, arguments, cancelled=None, blocking=false))]
    fn call(
        &self,
        py: Python<'_>,
        member: &str,
        arguments: &str,
        cancelled: Option<Py<PyAny>>,
        blocking: bool,
    ) -> PyResult<Py<PyAny>> {
        let member = BrowserMember::from_name(member)
            .ok_or_else(|| Error::Argument(format!("unknown browser member {member:?}")))?;
        let arguments = parse_json(arguments)?;
        let core = Arc::clone(&self.core);
        run(
            py,
            Calling::from_blocking(blocking),
            cancelled,
            move |cancel| core.call(member, arguments, cancel),
        )
    }

    /// Runs one of Claude's `browser_toolset_20260801` members with its input (JSON text).
    #[pyo3(signature = (name, input, cancelled=None, blocking=false))]
    fn claude_member(
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
            move |cancel| core.claude_member(name, input, cancel),
        )
    }

    /// The tabs: as the model may see them (origins only), or `raw` (full URLs and titles).
    #[pyo3(signature = (raw=false, cancelled=None, blocking=false))]
    fn state(
        &self,
        py: Python<'_>,
        raw: bool,
        cancelled: Option<Py<PyAny>>,
        blocking: bool,
    ) -> PyResult<Py<PyAny>> {
        let core = Arc::clone(&self.core);
        run(
            py,
            Calling::from_blocking(blocking),
            cancelled,
            move |cancel| core.state(raw, cancel),
        )
    }

    /// Where a launched Chromium runs: `"jail"` or `"none"`.
    #[getter]
    fn sandbox(&self) -> &'static str {
        self.core.sandbox
    }

    /// How isolated the browser is, in words (`"jail: …; host uid N; limits: …"`).
    #[getter]
    fn isolation(&self) -> String {
        self.core.isolation.clone()
    }

    /// The host uid a jailed Chromium runs as (`None` unjailed or once closed).
    #[getter]
    fn host_uid(&self) -> Option<u32> {
        self.core
            .jail
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(hands_jail::Jail::host_uid)
    }

    /// Whether the allow-list admits `url` (always true without one), and why not.
    fn check_url(&self, url: &str) -> (bool, String) {
        match &self.core.allow {
            None => (true, String::new()),
            Some(list) => match list.check_str(url) {
                UrlDecision::Allow { .. } => (true, String::new()),
                UrlDecision::Deny(reason) => (false, reason.to_string()),
            },
        }
    }

    /// Issues an upload grant: `upload_file(grant_id)` puts `path` into the page's pending file
    /// chooser, once.
    #[pyo3(signature = (grant_id, path, max_bytes=10 << 20))]
    fn grant_upload(&self, grant_id: &str, path: PathBuf, max_bytes: u64) {
        self.core
            .grants
            .grant_upload(grant_id, UploadGrant { path, max_bytes });
    }

    /// Issues a download grant: `download_file(grant_id)` saves the page's latest download at
    /// `destination` (which must not exist yet), once.
    #[pyo3(signature = (grant_id, destination, max_bytes=100 << 20))]
    fn grant_download(&self, grant_id: &str, destination: PathBuf, max_bytes: u64) {
        self.core.grants.grant_download(
            grant_id,
            DownloadGrant {
                destination,
                max_bytes,
            },
        );
    }

    /// Closes the session: the saved sign-in (`state`) is saved first, then a launched Chromium
    /// is stopped, an attached one left running. A state that could not be saved is raised
    /// after the browser is closed.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let saved = py.detach(|| {
            let runtime = pyo3_async_runtimes::tokio::get_runtime();
            let state = self.core.state.blocking_lock().take();
            let saved = match state {
                Some(state) => runtime.block_on(async move { state.save().await.map(drop) }),
                None => Ok(()),
            };
            let driver = self.core.driver.blocking_lock().take();
            // The driver's tasks live on the runtime: drop it there.
            if let Some(driver) = driver {
                runtime.block_on(async move { drop(driver) });
            }
            // Last: the jail kills whatever is left in it and removes its files.
            self.core
                .jail
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            saved
        });
        saved.map_err(|e| Error::State(e.to_string()).into())
    }
}
