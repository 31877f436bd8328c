//! `hands run`: a task in, a model in a loop, actions on a real desktop and/or browser,
//! approvals where the spec demands them, a run directory out. Exit status 0 only when the model
//! finished.
//!
//! The arguments are first checked into a [`plan::RunPlan`] (nothing starts before every flag
//! is known good); the plan is then run in steps: the run directory, the approver, the
//! environment, the runner, the loop, the report.

mod plan;
mod saves;

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::browser::Browser as _;
use hands_core::{CancellationToken, Desktop};
use hands_runner::diagnostics::{Record, Stage};
use hands_runner::ledger::{Ledger, SqliteLedger};
use hands_runner::{
    AnthropicSettings, OpenAiSettings, RunConfig, RunOutcome, RunStatus, Runner, Toolbox,
};
use hands_sandbox::{BashTool, EditorTool};
use hands_toolset::browser::consent::Confirm;
use hands_toolset::browser::{BrowserToolset, BrowserToolsetConfig};
use hands_toolset::claude_browser::{ClaudeBrowserConfig, ClaudeBrowserToolset};
use hands_toolset::computer::members::Member;
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_toolset::computer_call::{ComputerCallConfig, ComputerCallExecutor};
use hands_x11::{X11Desktop, XClient};
use indicatif::{ProgressBar, ProgressStyle};

use crate::approve::TerminalApprover;
use crate::cli::{ApproveArg, RunArgs};
use crate::environment::{DesktopApps, DesktopEnv};
use crate::policy::RequestAllowList;
use crate::resume;
use crate::rundir::RunDir;
use crate::sandbox::{Episode, SandboxArg};
use plan::{
    BrowserPlan, BrowserTools, DesktopPlan, ModelClient, PlanError, RunDirPlan, RunPlan, ViewPlan,
};

/// Exit status when no API key is set.
const NO_KEY: u8 = 2;

/// `hands run`.
pub async fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    // A resumed run takes back the settings it started with; flags given again must match
    // (the runner refuses another model, step limit or set of tools, naming what changed).
    let resumed = match &args.resume {
        Some(dir) => Some(resume::open(dir)?),
        None => None,
    };
    // This process holds the API key in its environment: no other process of the user's (the
    // model's bash among them) may read it through /proc/<pid>/environ or ptrace. Root is not
    // held back by this.
    if let Err(e) =
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
    {
        tracing::warn!(error = %e, "could not make hands run non-dumpable");
    }
    let env = |var: &str| std::env::var(var).ok();
    let plan = match RunPlan::parse(&args, resumed.as_ref().map(|(_, launch)| launch), &env) {
        Ok(plan) => plan,
        Err(e @ PlanError::NoApiKey { .. }) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(NO_KEY));
        }
        Err(e) => return Err(e.into()),
    };
    let records = own_records(&plan, resumed.map(|(ledger, _)| ledger))?;
    let outcome = execute(&plan, records).await?;
    Ok(report(&outcome, &plan, Stdout::FinalText))
}

/// A run whose checkpoints go to a ledger of the caller's instead of its run directory's
/// (`hands worker`: an episode's `PostgresLedger`).
pub struct ExternalLedger {
    /// The ledger.
    pub ledger: Box<dyn Ledger>,
    /// Resume the run it holds ([`Runner::resume`]) instead of starting the task.
    pub resume: bool,
    /// Cancelled by the caller to stop the run after its current action (a lost lease).
    pub cancel: CancellationToken,
    /// A file the episode's jailed programs should read (`claim.json`: name, text), written
    /// into the desktop jail's home and `/workspace` once the jail is made.
    pub jail_file: Option<(String, String)>,
}

/// Runs `args` (`--out` is required: the episode's run directory, created or reopened) with
/// its checkpoints in `external`, and returns the runner's outcome. A resume the runner refuses
/// is an error wrapping its [`hands_runner::RunError`].
pub async fn run_with_ledger(
    args: RunArgs,
    external: ExternalLedger,
) -> anyhow::Result<RunOutcome> {
    let env = |var: &str| std::env::var(var).ok();
    let plan = match RunPlan::parse(&args, None, &env) {
        Ok(plan) => plan,
        Err(PlanError::NoApiKey { .. }) => anyhow::bail!(
            "no API key: set ANTHROPIC_API_KEY or OPENAI_API_KEY in the worker's environment"
        ),
        Err(e) => return Err(e.into()),
    };
    let out = args
        .out
        .clone()
        .context("a run with its own ledger needs --out")?;
    let rundir = if out.exists() {
        RunDir::reopen(&out)?
    } else {
        RunDir::create(&out)?
    };
    let records = Records {
        rundir,
        ledger: RunLedger::External(external.ledger),
        resume: external.resume,
        cancel: external.cancel,
        jail_file: external.jail_file,
    };
    let outcome = execute(&plan, records).await?;
    report(&outcome, &plan, Stdout::Quiet);
    Ok(outcome)
}

/// The run's desktop or browser could not be started (nothing of the run acted yet): a worker
/// gives such an episode back to be tried again.
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
pub struct EnvironmentFailed(pub anyhow::Error);

/// Where a run's records go and what stops it: the run directory (its log and images), the
/// ledger of its checkpoints, whether it resumes the run the ledger holds, and its cancellation.
struct Records {
    rundir: RunDir,
    ledger: RunLedger,
    resume: bool,
    cancel: CancellationToken,
    jail_file: Option<(String, String)>,
}

/// A run's ledger: the run directory's own (which records how isolated the episode is), or a
/// caller's.
enum RunLedger {
    Own(Box<SqliteLedger>),
    External(Box<dyn Ledger>),
}

/// The records of a `hands run`: its run directory and the ledger in it (reopened for a resumed
/// run, created for a new one), stopped by Ctrl-C after the current action.
fn own_records(plan: &RunPlan, resumed: Option<SqliteLedger>) -> anyhow::Result<Records> {
    let (rundir, ledger) = open_run_dir(plan, resumed)?;
    let cancel = CancellationToken::new();
    let ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\nhands run: stopping after the current action (Ctrl-C again to kill)");
            ctrl_c.cancel();
        }
    });
    Ok(Records {
        rundir,
        ledger: RunLedger::Own(Box::new(ledger)),
        resume: matches!(plan.run_dir, RunDirPlan::Resume(_)),
        cancel,
        jail_file: None,
    })
}

/// Runs a checked plan: the approver, the environment, the runner, the loop.
async fn execute(plan: &RunPlan, records: Records) -> anyhow::Result<RunOutcome> {
    let Records {
        mut rundir,
        ledger,
        resume,
        cancel,
        jail_file,
    } = records;
    rundir.line(serde_json::json!({
        "kind": if resume { "resume" } else { "start" },
        "task": plan.launch.task, "provider": plan.launch.provider, "model": plan.launch.model,
        "desktop": plan.launch.desktop, "browser": plan.launch.browser,
        "remote": plan.remote.describe(),
        "unix_ms": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)}));
    let bar = progress_bar();
    // With --view (and --approve ask), the person approves on the page instead of the terminal.
    let live = match plan.view {
        ViewPlan::Live => Some(crate::view::LiveView::start(rundir.path()).await?),
        ViewPlan::Terminal => None,
    };
    let approver = match live.as_ref().filter(|_| plan.approve == ApproveArg::Ask) {
        Some(view) => view.approver(),
        None => TerminalApprover::with_progress(plan.approve, bar.clone()),
    }
    .recording(rundir.path())?;
    let confirm: Arc<dyn Confirm> = Arc::new(approver.clone());
    let mut episode = plan.launch.isolation.episode();
    // The X clients of a spawned desktop live (and are killed) after the runner.
    let (mut environment, _clients) = start_environment(plan, &mut episode, &confirm)
        .await
        .map_err(|e| anyhow::Error::new(EnvironmentFailed(e)))?;
    if let (Some((name, text)), Some(jail)) = (&jail_file, episode.desktop_jail()) {
        // The home, and `/workspace` (the shell's working directory) unless it is the caller's
        // own directory bound in place (shared by every episode given it).
        let mut dirs = vec![jail.home_dir()];
        if !plan.launch.isolation.workspace_bind {
            dirs.push(jail.workspace_dir());
        }
        for dir in dirs {
            let path = dir.join(name);
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    let state = environment.state.take();
    // A run with a browser hands over its browser (Chromium runs headless, off the desktop);
    // one without hands over its desktop.
    let wheel_hands = match (environment.wheel.take(), environment.desktop_wheel.take()) {
        (Some(browser), _) => Some(crate::wheel::WheelHands::Browser(browser)),
        (None, Some(desktop)) => Some(crate::wheel::WheelHands::Desktop(desktop)),
        (None, None) => None,
    };
    if let Some((network, dom)) = environment.network.take() {
        rundir.log_network(network);
        rundir.log_dom(dom);
    }
    let recorder = start_video(plan, &mut environment, &mut rundir)?;
    let mut runner = build_runner(plan, environment, &episode)?;
    // With --view, a person may take the wheel between turns.
    if let (Some(view), Some(hands)) = (&live, wheel_hands) {
        runner.set_wheel(Box::new(crate::wheel::RunWheel::new(
            view.live.clone(),
            hands,
        )));
    }
    for scheduled in &plan.edits {
        runner.edit_before_step(scheduled.step, scheduled.edit.clone())?;
    }
    runner.set_approver(Box::new(approver));
    bar.enable_steady_tick(Duration::from_millis(120));
    observe_progress(&mut runner, &bar);
    let log_dir = rundir.path().to_owned();
    let (saves, store) = attach_records(&mut runner, &episode, rundir, ledger, live.as_ref())?;
    let outcome = run_or_resume(&mut runner, plan, resume, &cancel).await;
    saves.log(&log_dir, store);
    bar.finish_and_clear();
    // The file is finished whatever the outcome (Ctrl-C and errors included).
    if let Some((recorder, file)) = recorder {
        match recorder.finish().await {
            Ok(stats) => eprintln!(
                "hands run: {file}: {} frames, {:.1} s, {} KB",
                stats.frames,
                stats.seconds,
                stats.bytes / 1024
            ),
            Err(e) => eprintln!("hands run: the video was not finished: {e:#}"),
        }
    }
    // Saved whatever the outcome (the browser lives as long as the runner).
    if let Some(state) = &state
        && let Err(e) = state.save().await
    {
        eprintln!("hands run: the state was not saved: {e:#}");
    }
    let outcome = outcome?;
    if let Some(view) = &live {
        view.finish().await;
    }
    Ok(outcome)
}

/// Starts `--video`'s recorder: the desktop if the run has one, else the browser's screencast,
/// into `video.webm` (`video-N.webm` for the N-th part of a resumed run). A `video` line
/// marks the video's first frame on the log's clock.
fn start_video(
    plan: &RunPlan,
    environment: &mut Environment,
    rundir: &mut RunDir,
) -> anyhow::Result<Option<(crate::video::Recorder, String)>> {
    let Some(ffmpeg) = &plan.video else {
        return Ok(None);
    };
    let screencast = environment.screencast.take();
    let source = match (environment.video_desktop.take(), screencast) {
        (Some(desktop), _) => crate::video::VideoSource::Desktop(Box::new(desktop)),
        (None, Some(cast)) => crate::video::VideoSource::Browser(cast),
        (None, None) => anyhow::bail!("--video needs a desktop or a browser to record"),
    };
    let file = (1..)
        .map(|n| match n {
            1 => crate::video::VIDEO_FILE.to_owned(),
            n => format!("video-{n}.webm"),
        })
        .find(|name| !rundir.path().join(name).exists())
        .unwrap_or_else(|| crate::video::VIDEO_FILE.to_owned());
    let recorder = crate::video::Recorder::start(ffmpeg, &rundir.path().join(&file), source)?;
    rundir.line(serde_json::json!({"kind": "video", "file": file, "fps": crate::video::FPS}));
    Ok(Some((recorder, file)))
}

/// The run directory and its ledger: reopened for a resumed run, created (the launch kept in
/// the new ledger) for a new one.
fn open_run_dir(
    plan: &RunPlan,
    resumed: Option<SqliteLedger>,
) -> anyhow::Result<(RunDir, SqliteLedger)> {
    Ok(match (&plan.run_dir, resumed) {
        (RunDirPlan::Resume(dir), Some(ledger)) => (RunDir::reopen(dir)?, ledger),
        (RunDirPlan::Resume(dir), None) => (RunDir::reopen(dir)?, resume::open(dir)?.0),
        (RunDirPlan::New(out), _) => (RunDir::create(out)?, resume::create(out, &plan.launch)?),
    })
}

/// The started environment, for the runner's tools.
struct Environment {
    /// The desktop, if the run has one.
    desktop: Option<Box<dyn Desktop>>,
    /// Its X display (given or spawned).
    display: Option<String>,
    /// The browser's toolset, once started.
    toolbox: Toolbox,
    /// What the system prompt says of the browser (empty without one).
    browser_note: String,
    /// The saved sign-in to save when the run ends (`--state`).
    state: Option<crate::state::RunState>,
    /// The browser's hands for a person who takes the wheel (`--view`).
    wheel: Option<hands_cdp::wheel::BrowserWheel>,
    /// The browser's network log and DOM snapshots, for the run directory.
    network: Option<(
        hands_cdp::network_tap::NetworkTap,
        hands_cdp::dom_snapshot::DomTap,
    )>,
    /// The browser's screencast, for `--video`.
    screencast: Option<hands_cdp::screencast::Screencast>,
    /// A connection of its own to the desktop, for `--video`.
    video_desktop: Option<X11Desktop>,
    /// The desktop's hands for a person who takes the wheel (`--view`).
    desktop_wheel: Option<hands_x11::wheel::DesktopWheel>,
}

/// The started desktop.
struct StartedDesktop {
    /// Its driver.
    desktop: Box<dyn Desktop>,
    /// Its display name.
    display: String,
    /// The X clients started on it (its window manager), kept alive by the caller.
    clients: Vec<XClient>,
    /// A second connection, for `--video`.
    video: Option<X11Desktop>,
    /// A third, for a person who takes the wheel (`--view`).
    wheel: Option<hands_x11::wheel::DesktopWheel>,
}

/// What starting the browser gives the run besides its toolset.
struct StartedBrowser {
    /// What the system prompt says of it.
    note: String,
    /// The sign-in to save at the end (`--state`).
    state: Option<crate::state::RunState>,
    /// Its hands for a person who takes the wheel.
    wheel: hands_cdp::wheel::BrowserWheel,
    /// Its network log and DOM snapshots.
    network: (
        hands_cdp::network_tap::NetworkTap,
        hands_cdp::dom_snapshot::DomTap,
    ),
    /// Its screencast.
    screencast: hands_cdp::screencast::Screencast,
}

/// Starts the plan's desktop and browser; also returns the X clients started on a spawned
/// desktop (its window manager), which the caller keeps alive.
async fn start_environment(
    plan: &RunPlan,
    episode: &mut Episode,
    confirm: &Arc<dyn Confirm>,
) -> anyhow::Result<(Environment, Vec<XClient>)> {
    let (desktop, display, clients, video_desktop, desktop_wheel) = match &plan.desktop {
        Some(desktop) => {
            let started = start_desktop(desktop, plan, episode).await?;
            (
                Some(started.desktop),
                Some(started.display),
                started.clients,
                started.video,
                started.wheel,
            )
        }
        None => (None, None, Vec::new(), None, None),
    };
    let mut toolbox = Toolbox::default();
    let started = match &plan.browser {
        Some(browser) => Some(start_browser(browser, plan, episode, confirm, &mut toolbox).await?),
        None => None,
    };
    let environment = match started {
        Some(started) => Environment {
            desktop,
            display,
            toolbox,
            browser_note: started.note,
            state: started.state,
            wheel: Some(started.wheel),
            network: Some(started.network),
            screencast: Some(started.screencast),
            video_desktop,
            desktop_wheel,
        },
        None => Environment {
            desktop,
            display,
            toolbox,
            browser_note: String::new(),
            state: None,
            wheel: None,
            network: None,
            screencast: None,
            video_desktop,
            desktop_wheel,
        },
    };
    Ok((environment, clients))
}

/// The desktop: a display of our own (with a window manager) unless one is named, with the
/// connections `--video` and `--view` need beside the model's.
async fn start_desktop(
    desktop: &DesktopPlan,
    plan: &RunPlan,
    episode: &mut Episode,
) -> anyhow::Result<StartedDesktop> {
    let video = |desktop: &X11Desktop| {
        plan.video
            .as_ref()
            .map(|_| desktop.another_connection())
            .transpose()
            .context("connecting to the desktop for --video")
    };
    let wheel = |desktop: &X11Desktop| {
        (plan.view == ViewPlan::Live)
            .then(|| desktop.another_connection())
            .transpose()
            .map(|c| c.map(hands_x11::wheel::DesktopWheel::new))
            .context("connecting to the desktop for --view's wheel")
    };
    match desktop {
        DesktopPlan::Attach(display) => {
            let x11 = X11Desktop::connect(Some(display))
                .with_context(|| format!("attaching to display {display}"))?;
            Ok(StartedDesktop {
                video: video(&x11)?,
                wheel: wheel(&x11)?,
                desktop: Box::new(x11),
                display: display.clone(),
                clients: Vec::new(),
            })
        }
        DesktopPlan::Spawn(size) => {
            // Every program of the episode reaches only the allowed origins, through the
            // jail's proxy (nothing at all without --allow-origin).
            let policy = crate::policy::episode_policy(&plan.launch.allow_origin)?;
            let config = episode.xvfb_config(*size, policy)?;
            let env = DesktopEnv::spawn(config, DesktopApps::WindowManager).await?;
            eprintln!("hands run: desktop {size} on {}", env.desktop.display());
            let display = env.desktop.display().to_owned();
            Ok(StartedDesktop {
                video: video(&env.desktop)?,
                wheel: wheel(&env.desktop)?,
                desktop: Box::new(env.desktop),
                display,
                clients: env.clients,
            })
        }
    }
}

/// The browser: Chromium at the start URL, under the same allow-list at the toolset and the
/// request level, in `toolbox`, with the saved sign-in loaded (`--state`); returns what the
/// system prompt says of it, the sign-in to save at the end, the browser's hands for a person
/// who takes the wheel and its network log.
async fn start_browser(
    browser_plan: &BrowserPlan,
    plan: &RunPlan,
    episode: &Episode,
    confirm: &Arc<dyn Confirm>,
    toolbox: &mut Toolbox,
) -> anyhow::Result<StartedBrowser> {
    // A wrong or missing key stops the run before anything starts.
    let mut state = browser_plan
        .state
        .as_deref()
        .map(|name| crate::state::RunState::open("hands run", name, &browser_plan.origins))
        .transpose()?;
    let mut driver_config = DriverConfig {
        policy: Arc::new(RequestAllowList(browser_plan.allow.clone())),
        ..DriverConfig::default()
    };
    let mut browser = match &browser_plan.attach {
        // A browser elsewhere: the allow-list holds by request interception and the page
        // fence (hands-cdp's attach), not by a jail or a proxy of this machine.
        Some(ws) => CdpBrowser::attach(ws, driver_config)
            .await
            .with_context(|| format!("attaching to the browser at {ws}"))?,
        None => {
            driver_config.launch.launcher = episode.browser_launcher()?;
            CdpBrowser::launch(driver_config)
                .await
                .context("launching Chromium (run scripts/install-system-deps.sh first)")?
        }
    };
    if let Some(state) = &mut state {
        state.load(&browser).await?;
    }
    let cancel = CancellationToken::new();
    browser
        .navigate(&browser_plan.start, None, &cancel)
        .await
        .map_err(|e| {
            let start = plan.launch.browser.as_deref().unwrap_or_default();
            anyhow::anyhow!("opening {start}: {e}")
        })?;
    let wheel = browser.wheel();
    let network = (browser.network_tap(), browser.dom_tap());
    let screencast = browser.screencast();
    // Claude drives the browser through its own toolset; OpenAI through the driver spec's
    // function tools. Both sit on the same driver, under the same policies.
    match &browser_plan.tools {
        BrowserTools::Claude(declaration) => {
            toolbox.claude_browser = Some(Box::new(ClaudeBrowserToolset::new(
                browser,
                ClaudeBrowserConfig {
                    declaration: declaration.clone(),
                    confirm: Some(Arc::clone(confirm)),
                    url_policy: Some(Arc::new(browser_plan.allow.clone())),
                    ..ClaudeBrowserConfig::default()
                },
            )?));
        }
        BrowserTools::Functions {
            members,
            additional_members,
            image_detail,
        } => {
            toolbox.browser = Some(Box::new(BrowserToolset::new(
                browser,
                BrowserToolsetConfig {
                    members: members.clone(),
                    additional_members: additional_members.clone(),
                    image_detail: *image_detail,
                    confirm: Some(Arc::clone(confirm)),
                    url_policy: Some(Arc::new(browser_plan.allow.clone())),
                    ..BrowserToolsetConfig::default()
                },
            )?));
        }
    }
    let note = format!(
        " A browser is open at {} (allowed origins: {}); use the browser tools for web pages.",
        browser_plan.start.as_str(),
        browser_plan.origins.join(", ")
    );
    Ok(StartedBrowser {
        note,
        state,
        wheel,
        network,
        screencast,
    })
}

/// The system prompt: what the model has, and how to work.
fn system_prompt(environment: &Environment) -> String {
    format!(
        "You operate a sandboxed Linux environment for the user.{}{} After each step, take a \
         screenshot or read the page and check the result before going on. When the task is \
         done, say so in one short message.",
        if environment.desktop.is_some() {
            " A desktop is available through the computer tool."
        } else {
            ""
        },
        environment.browser_note
    )
}

/// The runner for the plan's provider, its tools on the started environment.
fn build_runner(
    plan: &RunPlan,
    environment: Environment,
    episode: &Episode,
) -> anyhow::Result<Runner> {
    let system = system_prompt(&environment);
    let config = RunConfig {
        max_steps: plan.launch.max_steps,
    };
    let Environment {
        desktop,
        display,
        mut toolbox,
        ..
    } = environment;
    Ok(match &plan.client {
        ModelClient::Anthropic(client) => {
            // Keyboard input needs a confirmation, as in the SDK's toolset: under `--approve
            // ask` a person confirms each `type`, `key` and `hold_key`; under `none` they are
            // refused.
            let computer_config = ComputerConfig {
                confirm_members: Member::KEYBOARD.to_vec(),
                ..ComputerConfig::default()
            };
            let computer = desktop
                .map(|d| ComputerToolset::new(d, computer_config))
                .transpose()?;
            if computer.is_some() {
                add_shell_tools(&mut toolbox, plan, episode, display.as_deref())?;
            }
            let mut settings = AnthropicSettings::new(plan.launch.model.clone());
            settings.system = Some(system);
            settings.stream = plan.launch.stream;
            settings.eager = plan.launch.eager;
            plan.settings.apply_anthropic(&mut settings);
            plan.remote.apply_anthropic(&mut settings)?;
            Runner::anthropic(client.clone(), settings, computer, toolbox, config)
        }
        ModelClient::OpenAi(client) => {
            let computer =
                desktop.map(|d| ComputerCallExecutor::new(d, ComputerCallConfig::default()));
            let mut settings = OpenAiSettings::new(plan.launch.model.clone());
            settings.instructions = Some(system);
            settings.stream = plan.launch.stream;
            settings.eager = plan.launch.eager;
            plan.settings.apply_openai(&mut settings);
            plan.remote.apply_openai(&mut settings);
            Runner::openai(client.clone(), settings, computer, toolbox, config)
        }
    })
}

/// Claude uses bash and the editor beside the computer (the spec's quick start); bash runs in
/// the run directory, with the desktop as its display.
fn add_shell_tools(
    toolbox: &mut Toolbox,
    plan: &RunPlan,
    episode: &Episode,
    display: Option<&str>,
) -> anyhow::Result<()> {
    let mut bash = episode.bash_config(display);
    if episode.mode() == SandboxArg::None {
        bash.working_dir = Some(plan.run_dir.path().to_owned());
    }
    // The shell inherits no credential (hands-sandbox's allow-list); on a display of the
    // user's, X clients started from it need its cookie file.
    if matches!(plan.desktop, Some(DesktopPlan::Attach(_)))
        && let Ok(xauthority) = std::env::var("XAUTHORITY")
    {
        bash.env.push(("XAUTHORITY".into(), xauthority));
    }
    toolbox.bash = Some(BashTool::new(bash));
    toolbox.editor = Some(EditorTool::new(episode.editor_config())?);
    Ok(())
}

/// Prints each model answer and each action above the progress line.
fn observe_progress(runner: &mut Runner, bar: &ProgressBar) {
    let bar = bar.clone();
    let mut n_requests = 0u32;
    let mut n_actions = 0u32;
    runner.set_observer(Box::new(move |record: &Record| {
        match record.stage {
            Stage::Request => {
                n_requests += 1;
                bar.println(format!(
                    "step {n_requests}: model answered in {:.1} s{}",
                    record.duration.as_secs_f64(),
                    if record.attempts > 1 {
                        format!(" after {} attempts", record.attempts)
                    } else {
                        String::new()
                    }
                ));
            }
            Stage::Action => {
                n_actions += 1;
                bar.println(format!(
                    "  {} {:?} ({:.0} ms)",
                    record.member.as_deref().unwrap_or("?"),
                    record.reason,
                    record.duration.as_secs_f64() * 1e3
                ));
            }
            // Approvals are seen on the terminal; the run's start and end are printed.
            _ => {}
        }
        bar.set_message(format!("{n_requests} request(s), {n_actions} action(s)"));
    }));
}

/// Gives the runner its journal (the run directory's log, through the live view if any) and
/// its ledger, after recording how isolated the episode is.
fn attach_records(
    runner: &mut Runner,
    episode: &Episode,
    mut rundir: RunDir,
    ledger: RunLedger,
    live: Option<&crate::view::LiveView>,
) -> anyhow::Result<(saves::SaveTimes, &'static str)> {
    rundir.line(serde_json::json!({"kind": "sandbox", "isolation": episode.describe()}));
    match live {
        Some(view) => runner.set_journal(Box::new(view.journal(rundir))),
        None => runner.set_journal(Box::new(rundir)),
    }
    // Every step is checkpointed in the ledger: `--resume` (or a worker) continues from it.
    // Each save is timed (the run's log ends with the times: the fleet benchmark reads them).
    let (inner, store): (Box<dyn Ledger>, _) = match ledger {
        RunLedger::Own(mut ledger) => {
            // How isolated the episode is, as it was in force (each resume records its own).
            ledger.set_meta(resume::SANDBOX_KEY, &episode.describe())?;
            (ledger, "sqlite")
        }
        RunLedger::External(ledger) => (ledger, "external"),
    };
    let times = saves::SaveTimes::default();
    runner.set_ledger(Box::new(saves::Timed {
        inner,
        times: times.clone(),
    }));
    Ok((times, store))
}

/// Runs the task, or resumes the run the ledger holds, until it ends or `cancel` stops it
/// after the current action.
async fn run_or_resume(
    runner: &mut Runner,
    plan: &RunPlan,
    resume: bool,
    cancel: &CancellationToken,
) -> anyhow::Result<RunOutcome> {
    match (&plan.run_dir, resume) {
        (RunDirPlan::Resume(dir), _) => {
            eprintln!("hands run: resuming the run in {}", dir.display());
            runner
                .resume(cancel)
                .await
                .map_err(|e| resume::refusal(dir, &e))
        }
        (RunDirPlan::New(_), true) => Ok(runner.resume(cancel).await?),
        (RunDirPlan::New(_), false) => Ok(runner.run(&plan.launch.task, cancel).await?),
    }
}

/// What `hands run` prints on stdout: the model's last text, or nothing (a worker's episode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stdout {
    FinalText,
    Quiet,
}

/// Prints the model's last text on stdout (unless `stdout` is quiet) and the run's summary on
/// stderr; exit status 0 only when the model finished.
fn report(outcome: &RunOutcome, plan: &RunPlan, stdout: Stdout) -> ExitCode {
    let out_path: &Path = plan.run_dir.path();
    if stdout == Stdout::FinalText {
        println!("{}", outcome.final_text);
    }
    eprintln!(
        "hands run: {} after {} request(s){}; {} input + {} cached + {} output tokens{}; run directory {}{}",
        match &outcome.status {
            RunStatus::Finished => "finished".to_owned(),
            RunStatus::StepLimit => format!("hit the step limit ({})", plan.launch.max_steps),
            RunStatus::Stopped(why) => format!("stopped: {why}"),
        },
        outcome.steps,
        match &outcome.api_stop {
            Some(stop) => format!(" (the last answer ended with {stop})"),
            None => String::new(),
        },
        outcome.usage.input_tokens,
        outcome.usage.cache_read_input_tokens,
        outcome.usage.output_tokens,
        if outcome.usage.incomplete {
            " (usage incomplete)"
        } else {
            ""
        },
        out_path.display(),
        match &outcome.status {
            RunStatus::Stopped(_) => format!(
                " (see it with `hands runs show {0}`; resume with `hands run --resume {0}`)",
                out_path.display()
            ),
            _ => String::new(),
        }
    );
    if outcome.finished() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The progress line, ticking once the run starts.
fn progress_bar() -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed} {msg}") {
        bar.set_style(style);
    }
    bar
}
