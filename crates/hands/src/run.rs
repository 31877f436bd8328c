//! `hands run`: a task in, a model in a loop, actions on a real desktop and/or browser,
//! approvals where the spec demands them, a run directory out. Exit status 0 only when the model
//! finished.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::browser::Browser as _;
use hands_core::browser::args::PageUrl;
use hands_core::geometry::Size;
use hands_core::{CancellationToken, Desktop};
use hands_models::anthropic::{self, AnthropicClient, AnthropicConfig};
use hands_models::openai::{self, OpenAiClient, OpenAiConfig};
use hands_runner::diagnostics::{Record, Stage};
use hands_runner::{AnthropicSettings, OpenAiSettings, RunConfig, RunStatus, Runner, Toolbox};
use hands_sandbox::{BashTool, EditorTool};
use hands_toolset::browser::consent::Confirm;
use hands_toolset::browser::url_policy::OriginAllowList;
use hands_toolset::browser::{BrowserToolset, BrowserToolsetConfig};
use hands_toolset::claude_browser::declaration::BrowserToolsetDeclaration;
use hands_toolset::claude_browser::{ClaudeBrowserConfig, ClaudeBrowserToolset};
use hands_toolset::computer::members::Member;
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_toolset::computer_call::{ComputerCallConfig, ComputerCallExecutor};
use hands_x11::X11Desktop;
use indicatif::{ProgressBar, ProgressStyle};

use crate::approve::TerminalApprover;
use crate::cli::{ApproveArg, ImageDetailArg, ProviderArg, RunArgs, member_names};
use crate::environment::DesktopEnv;
use crate::policy::RequestAllowList;
use crate::resume::{self, Launch};
use crate::rundir::RunDir;
use crate::sandbox::SandboxArg;

/// The default Claude model: every model that accepts `computer_toolset_20260801` will do.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-opus-5-5";
/// The size of a spawned desktop.
pub const DESKTOP_SIZE: (u32, u32) = (1280, 800);

/// Exit status when no API key is set.
const NO_KEY: u8 = 2;

pub async fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    Ok(match run_inner(args, None).await? {
        Ran::NoKey => ExitCode::from(NO_KEY),
        Ran::Done(outcome) if outcome.finished() => ExitCode::SUCCESS,
        Ran::Done(_) => ExitCode::FAILURE,
    })
}

/// A run whose checkpoints go to a ledger of the caller's instead of its run directory's
/// (`hands worker`: an episode's `PostgresLedger`).
pub struct ExternalLedger {
    /// The ledger.
    pub ledger: Box<dyn hands_runner::ledger::Ledger>,
    /// Resume the run it holds ([`Runner::resume`]) instead of starting the task.
    pub resume: bool,
    /// Cancelled by the caller to stop the run after its current action (a lost lease).
    pub cancel: CancellationToken,
}

/// Runs `args` (`--out` is required: the episode's run directory, created or reopened) with
/// its checkpoints in `external`, and returns the runner's outcome. A resume the runner refuses
/// is an error wrapping its [`hands_runner::RunError`].
pub async fn run_with_ledger(
    args: RunArgs,
    external: ExternalLedger,
) -> anyhow::Result<hands_runner::RunOutcome> {
    match run_inner(args, Some(external)).await? {
        Ran::NoKey => anyhow::bail!(
            "no API key: set ANTHROPIC_API_KEY or OPENAI_API_KEY in the worker's environment"
        ),
        Ran::Done(outcome) => Ok(*outcome),
    }
}

/// How [`run_inner`] ended.
enum Ran {
    NoKey,
    Done(Box<hands_runner::RunOutcome>),
}

async fn run_inner(args: RunArgs, external: Option<ExternalLedger>) -> anyhow::Result<Ran> {
    let (external_cancel, external_resume) = external
        .as_ref()
        .map(|e| (e.cancel.clone(), e.resume))
        .unzip();
    // A resumed run takes back the settings it started with; flags given again must match
    // (the runner refuses another model, step limit or set of tools, naming what changed).
    let resumed = match &args.resume {
        Some(dir) => Some(resume::open(dir)?),
        None => None,
    };
    let saved = resumed.as_ref().map(|(_, launch)| launch);
    let provider = args
        .provider
        .or_else(|| saved.and_then(Launch::provider))
        .unwrap_or(ProviderArg::Anthropic);
    let max_steps = args
        .max_steps
        .or(saved.map(|l| l.max_steps))
        .unwrap_or(hands_runner::DEFAULT_MAX_STEPS);
    let display_arg = args
        .display
        .clone()
        .or_else(|| saved.and_then(|l| l.display.clone()));
    let browser_arg = args
        .browser
        .clone()
        .or_else(|| saved.and_then(|l| l.browser.clone()));
    let allow_origin = match saved {
        Some(l) if args.allow_origin.is_empty() => l.allow_origin.clone(),
        _ => args.allow_origin.clone(),
    };
    let task = args
        .task
        .clone()
        .or_else(|| saved.map(|l| l.task.clone()))
        .unwrap_or_default();
    let (key_var, base_var) = match provider {
        ProviderArg::Anthropic => (anthropic::API_KEY_ENV, anthropic::BASE_URL_ENV),
        ProviderArg::Openai => (openai::API_KEY_ENV, openai::BASE_URL_ENV),
    };
    // This process holds the API key in its environment: no other process of the user's (the
    // model's bash among them) may read it through /proc/<pid>/environ or ptrace. Root is not
    // held back by this.
    if let Err(e) =
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
    {
        tracing::warn!(error = %e, "could not make hands run non-dumpable");
    }
    let Some(key) = std::env::var(key_var).ok().filter(|k| !k.trim().is_empty()) else {
        eprintln!(
            "hands run: no API key: set {key_var} (and {base_var} for another endpoint).\n\
             Without a key, try the offline drills, which run the same path against a local \
             stand-in of the API:\n    hands drill desktop\n    hands drill browser"
        );
        return Ok(Ran::NoKey);
    };
    let base_url = args.base_url.clone().or_else(|| {
        std::env::var(base_var)
            .ok()
            .filter(|u| !u.trim().is_empty())
    });
    let model = match (
        args.model
            .clone()
            .or_else(|| saved.map(|l| l.model.clone())),
        provider,
    ) {
        (Some(m), _) => m,
        (None, ProviderArg::Anthropic) => DEFAULT_ANTHROPIC_MODEL.to_owned(),
        (None, ProviderArg::Openai) => anyhow::bail!(
            "give --model: a Responses model your project can use with the computer tool"
        ),
    };
    // Remote MCP servers and server tools, as given or as the run started with (MCP URLs given
    // again): read before anything starts (a missing token stops here).
    let remote_args = match saved {
        Some(l) => crate::remote::resumed_args(&args.remote, &l.remote)?,
        None => (*args.remote).clone(),
    };
    let remote = crate::remote::RemoteTools::parse(&remote_args, |var| std::env::var(var).ok())?;
    let use_desktop = match saved {
        Some(l) => l.desktop || args.desktop || args.display.is_some(),
        None => args.desktop || args.display.is_some() || args.browser.is_none(),
    };
    let launch = Launch {
        provider: Launch::provider_name(provider).to_owned(),
        model: model.clone(),
        max_steps,
        desktop: use_desktop,
        display: display_arg.clone(),
        browser: browser_arg.clone(),
        allow_origin: allow_origin.clone(),
        stream: args.stream || saved.is_some_and(|l| l.stream),
        eager: args.eager || saved.is_some_and(|l| l.eager),
        task: task.clone(),
        remote: remote.saved_args(&remote_args),
        thinking: args
            .thinking
            .clone()
            .or_else(|| saved.and_then(|l| l.thinking.clone())),
        effort: args
            .effort
            .clone()
            .or_else(|| saved.and_then(|l| l.effort.clone())),
        no_parallel_tools: args.no_parallel_tools || saved.is_some_and(|l| l.no_parallel_tools),
        isolation: match saved {
            Some(l) if args.isolation == crate::cli::SandboxArgs::default() => l.isolation.clone(),
            _ => args.isolation.clone(),
        },
    };
    if display_arg.is_some() && launch.isolation.sandbox == SandboxArg::Jail {
        anyhow::bail!(
            "--display attaches to a display outside any jail (its other clients, its files and \
             its network are yours): give --sandbox none to do that on purpose, or leave \
             --display out for a jailed desktop of the episode's own"
        );
    }
    let mut episode = launch.isolation.episode();
    let model_settings = ModelSettings::parse(provider, &launch)?;
    // The ledger: the caller's, the resumed run's, or a new one. A run directory's ledger
    // records how isolated the episode is, as it was in force (each resume records its own).
    let (out, mut rundir, ledger): (_, _, Box<dyn hands_runner::ledger::Ledger>) =
        match (external, resumed, &args.resume) {
            (Some(external), _, _) => {
                let out = args
                    .out
                    .clone()
                    .context("a run with its own ledger needs --out")?;
                let rundir = if out.exists() {
                    RunDir::reopen(&out)?
                } else {
                    RunDir::create(&out)?
                };
                (out, rundir, external.ledger)
            }
            (None, Some((mut ledger, _)), Some(dir)) => {
                ledger.set_meta(resume::SANDBOX_KEY, &episode.describe())?;
                (dir.clone(), RunDir::reopen(dir)?, Box::new(ledger))
            }
            _ => {
                let out = args
                    .out
                    .clone()
                    .unwrap_or_else(|| RunDir::default_path("run"));
                let rundir = RunDir::create(&out)?;
                let mut ledger = resume::create(&out, &launch)?;
                ledger.set_meta(resume::SANDBOX_KEY, &episode.describe())?;
                (out, rundir, Box::new(ledger))
            }
        };
    let resuming = args.resume.is_some() || external_resume == Some(true);
    rundir.line(
        serde_json::json!({"kind": if resuming { "resume" } else { "start" },
        "task": task, "provider": launch.provider, "model": model, "desktop": use_desktop,
        "browser": browser_arg, "remote": remote.describe()}),
    );
    let bar = progress_bar();
    // With --view (and --approve ask), the person approves on the page instead of the terminal.
    let live = if args.view {
        Some(crate::view::LiveView::start(&out).await?)
    } else {
        None
    };
    let approver = match live.as_ref().filter(|_| args.approve == ApproveArg::Ask) {
        Some(view) => view.approver(),
        None => TerminalApprover::with_progress(args.approve, bar.clone()),
    };
    let confirm: Arc<dyn Confirm> = Arc::new(approver.clone());

    // The desktop: a display of our own (with a window manager) unless one is named.
    let mut _env_clients = Vec::new();
    let mut spawned_display: Option<String> = None;
    let desktop: Option<Box<dyn Desktop>> = if use_desktop {
        Some(match &display_arg {
            Some(display) => Box::new(
                X11Desktop::connect(Some(display))
                    .with_context(|| format!("attaching to display {display}"))?,
            ),
            None => {
                let size = Size::new(DESKTOP_SIZE.0, DESKTOP_SIZE.1).context("screen size")?;
                // Every program of the episode reaches only the allowed origins, through the
                // jail's proxy (nothing at all without --allow-origin).
                let config =
                    episode.xvfb_config(size, crate::policy::episode_policy(&allow_origin)?)?;
                let env = DesktopEnv::spawn(config, false).await?;
                eprintln!("hands run: desktop {size} on {}", env.desktop.display());
                spawned_display = Some(env.desktop.display().to_owned());
                _env_clients = env.clients;
                Box::new(env.desktop)
            }
        })
    } else {
        None
    };
    let display_name = display_arg.clone().or(spawned_display);

    // The browser: Chromium, under the same allow-list at the toolset and the request level.
    let mut toolbox = Toolbox::default();
    let mut browser_note = String::new();
    if let Some(start) = &browser_arg {
        let start_url = PageUrl::parse("--browser", start).map_err(|e| anyhow::anyhow!("{e}"))?;
        let origins: Vec<String> = if allow_origin.is_empty() {
            vec![start_url.url().origin().ascii_serialization()]
        } else {
            allow_origin.clone()
        };
        let allow =
            OriginAllowList::new(&origins).map_err(|e| anyhow::anyhow!("--allow-origin: {e}"))?;
        let mut driver_config = DriverConfig {
            policy: Arc::new(RequestAllowList(allow.clone())),
            ..DriverConfig::default()
        };
        driver_config.launch.launcher = episode.browser_launcher()?;
        let mut browser = CdpBrowser::launch(driver_config)
            .await
            .context("launching Chromium (run scripts/install-system-deps.sh first)")?;
        let cancel = CancellationToken::new();
        browser
            .navigate(&start_url, None, &cancel)
            .await
            .map_err(|e| anyhow::anyhow!("opening {start}: {e}"))?;
        // Claude drives the browser through its own toolset; OpenAI through the driver spec's
        // function tools. Both sit on the same driver, under the same policies.
        match provider {
            ProviderArg::Anthropic => {
                let mut declaration = BrowserToolsetDeclaration::new();
                if let Some(names) = member_names(args.browser_members.as_ref()) {
                    declaration = declaration
                        .with_members(&names)
                        .context("--browser-members")?;
                }
                if let Some(names) = member_names(args.browser_extra_members.as_ref()) {
                    declaration = declaration
                        .with_extra_members(&names)
                        .context("--browser-extra-members")?;
                }
                toolbox.claude_browser = Some(Box::new(ClaudeBrowserToolset::new(
                    browser,
                    ClaudeBrowserConfig {
                        declaration,
                        confirm: Some(Arc::clone(&confirm)),
                        url_policy: Some(Arc::new(allow)),
                        ..ClaudeBrowserConfig::default()
                    },
                )?));
            }
            ProviderArg::Openai => {
                toolbox.browser = Some(Box::new(BrowserToolset::new(
                    browser,
                    BrowserToolsetConfig {
                        members: member_names(args.browser_members.as_ref()),
                        additional_members: member_names(args.browser_extra_members.as_ref()),
                        image_detail: args.image_detail.map(ImageDetailArg::detail),
                        confirm: Some(Arc::clone(&confirm)),
                        url_policy: Some(Arc::new(allow)),
                        ..BrowserToolsetConfig::default()
                    },
                )?));
            }
        }
        browser_note = format!(
            " A browser is open at {} (allowed origins: {}); use the browser tools for web pages.",
            start_url.as_str(),
            origins.join(", ")
        );
    }

    let system = format!(
        "You operate a sandboxed Linux environment for the user.{}{} After each step, take a \
         screenshot or read the page and check the result before going on. When the task is \
         done, say so in one short message.",
        if desktop.is_some() {
            " A desktop is available through the computer tool."
        } else {
            ""
        },
        browser_note
    );
    let cancel = external_cancel.unwrap_or_default();
    let config = RunConfig { max_steps };
    let mut runner = match provider {
        ProviderArg::Anthropic => {
            let mut client_config = AnthropicConfig::new(key);
            if let Some(url) = base_url {
                client_config.base_url = url;
            }
            let client = AnthropicClient::new(client_config)?;
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
                // Claude uses bash and the editor beside the computer (the spec's quick start);
                // bash runs in the run directory, with the desktop as its display.
                let mut bash = episode.bash_config(display_name.as_deref());
                if episode.mode() == SandboxArg::None {
                    bash.working_dir = Some(rundir.path().to_owned());
                }
                // The shell inherits no credential (hands-sandbox's allow-list); on a display
                // of the user's, X clients started from it need its cookie file.
                if display_arg.is_some()
                    && let Ok(xauthority) = std::env::var("XAUTHORITY")
                {
                    bash.env.push(("XAUTHORITY".into(), xauthority));
                }
                toolbox.bash = Some(BashTool::new(bash));
                toolbox.editor = Some(EditorTool::new(episode.editor_config())?);
            }
            let mut settings = AnthropicSettings::new(model.clone());
            settings.system = Some(system);
            settings.stream = launch.stream;
            settings.eager = launch.eager;
            model_settings.apply_anthropic(&mut settings);
            remote.apply_anthropic(&mut settings)?;
            Runner::anthropic(client, settings, computer, toolbox, config)
        }
        ProviderArg::Openai => {
            let mut client_config = OpenAiConfig::new(key);
            if let Some(url) = base_url {
                client_config.base_url = url;
            }
            let client = OpenAiClient::new(client_config)?;
            let computer =
                desktop.map(|d| ComputerCallExecutor::new(d, ComputerCallConfig::default()));
            let mut settings = OpenAiSettings::new(model.clone());
            settings.instructions = Some(system);
            settings.stream = launch.stream;
            settings.eager = launch.eager;
            model_settings.apply_openai(&mut settings);
            remote.apply_openai(&mut settings);
            Runner::openai(client, settings, computer, toolbox, config)
        }
    };
    runner.set_approver(Box::new(approver));
    bar.enable_steady_tick(Duration::from_millis(120));
    {
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
    rundir.line(serde_json::json!({"kind": "sandbox", "isolation": episode.describe()}));
    let out_path = rundir.path().to_owned();
    match &live {
        Some(view) => runner.set_journal(Box::new(view.journal(rundir))),
        None => runner.set_journal(Box::new(rundir)),
    }
    // Every step is checkpointed in the run directory's ledger: `--resume` continues from it.
    runner.set_ledger(ledger);
    if external_resume.is_none() {
        let ctrl_c = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\nhands run: stopping after the current action (Ctrl-C again to kill)");
                ctrl_c.cancel();
            }
        });
    }
    let outcome = match &args.resume {
        None if external_resume == Some(true) => match runner.resume(&cancel).await {
            Ok(outcome) => outcome,
            Err(e) => {
                bar.finish_and_clear();
                return Err(e.into());
            }
        },
        Some(dir) => {
            eprintln!("hands run: resuming the run in {}", dir.display());
            match runner.resume(&cancel).await {
                Ok(outcome) => outcome,
                Err(e) => {
                    bar.finish_and_clear();
                    return Err(resume::refusal(dir, &e));
                }
            }
        }
        None => runner.run(&task, &cancel).await?,
    };
    bar.finish_and_clear();
    if let Some(view) = &live {
        view.finish().await;
    }
    if external_resume.is_none() {
        println!("{}", outcome.final_text);
    }
    eprintln!(
        "hands run: {} after {} request(s){}; {} input + {} cached + {} output tokens{}; run directory {}{}",
        match &outcome.status {
            RunStatus::Finished => "finished".to_owned(),
            RunStatus::StepLimit => format!("hit the step limit ({max_steps})"),
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
    Ok(Ran::Done(Box::new(outcome)))
}

/// The progress line, ticking once the run starts.
fn progress_bar() -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed} {msg}") {
        bar.set_style(style);
    }
    bar
}

/// Claude's effort levels (`output_config.effort`).
const CLAUDE_EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];
/// OpenAI's reasoning effort levels (`reasoning.effort`).
const OPENAI_EFFORTS: [&str; 6] = ["none", "minimal", "low", "medium", "high", "xhigh"];
/// The smallest thinking budget the Messages API takes.
const MIN_THINKING_BUDGET: u32 = 1024;
/// The output a request keeps beside a thinking budget.
const OUTPUT_BESIDE_THINKING: u32 = 4096;

/// `--thinking`, `--effort` and `--no-parallel-tools`, checked against the provider before
/// anything starts (a wrong value is a clear error, not a 400 from the API).
#[derive(Debug, Clone, Default, PartialEq)]
struct ModelSettings {
    thinking: Option<anthropic::ThinkingConfig>,
    effort: Option<String>,
    one_tool_per_turn: bool,
}

impl ModelSettings {
    fn parse(provider: ProviderArg, launch: &Launch) -> anyhow::Result<ModelSettings> {
        let thinking = match (&launch.thinking, provider) {
            (None, _) => None,
            (Some(_), ProviderArg::Openai) => anyhow::bail!(
                "--thinking is Claude's extended thinking; an OpenAI reasoning model takes --effort"
            ),
            (Some(t), ProviderArg::Anthropic) if t.eq_ignore_ascii_case("adaptive") => {
                Some(anthropic::ThinkingConfig::Adaptive { display: None })
            }
            (Some(t), ProviderArg::Anthropic) => match t.parse::<u32>() {
                Ok(budget) if budget >= MIN_THINKING_BUDGET => {
                    Some(anthropic::ThinkingConfig::Enabled {
                        budget_tokens: budget,
                        display: None,
                    })
                }
                _ => anyhow::bail!(
                    "--thinking takes `adaptive` or a token budget of at least {MIN_THINKING_BUDGET}; got {t:?}"
                ),
            },
        };
        let levels: &[&str] = match provider {
            ProviderArg::Anthropic => &CLAUDE_EFFORTS,
            ProviderArg::Openai => &OPENAI_EFFORTS,
        };
        let effort = match &launch.effort {
            Some(e) if !levels.contains(&e.as_str()) => anyhow::bail!(
                "--effort {e:?} is not a level this API takes; use one of: {}",
                levels.join(", ")
            ),
            other => other.clone(),
        };
        Ok(ModelSettings {
            thinking,
            effort,
            one_tool_per_turn: launch.no_parallel_tools,
        })
    }

    fn apply_anthropic(&self, settings: &mut AnthropicSettings) {
        if let Some(thinking) = &self.thinking {
            if let anthropic::ThinkingConfig::Enabled { budget_tokens, .. } = thinking {
                settings.max_tokens = budget_tokens.saturating_add(OUTPUT_BESIDE_THINKING);
            }
            settings.thinking = Some(thinking.clone());
        }
        settings.effort = self.effort.clone();
        if self.one_tool_per_turn {
            settings.tool_choice = Some(anthropic::ToolChoice::Auto {
                disable_parallel_tool_use: Some(true),
            });
        }
    }

    fn apply_openai(&self, settings: &mut OpenAiSettings) {
        if let Some(effort) = &self.effort {
            settings.reasoning = Some(openai::ReasoningConfig {
                effort: Some(effort.clone()),
                summary: None,
            });
        }
        if self.one_tool_per_turn {
            settings.parallel_tool_calls = Some(false);
        }
    }
}
