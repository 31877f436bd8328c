//! `hands run`'s arguments turned into a validated plan before anything starts (as ripgrep's
//! `LowArgs` → `HiArgs`): every flag and every combination of flags is checked here, by a pure
//! function (no Xvfb, no Chromium, no network; the environment is read through a lookup), and a
//! refusal is a [`PlanError`] saying what was wrong and what to do.

use std::path::{Path, PathBuf};

use hands_core::browser::MemberSet;
use hands_core::browser::args::{ArgError, PageUrl};
use hands_core::geometry::Size;
use hands_models::anthropic::{self, AnthropicClient, AnthropicConfig};
use hands_models::openai::{self, OpenAiClient, OpenAiConfig};
use hands_runner::{AnthropicSettings, OpenAiSettings};
use hands_toolset::browser::ImageDetail;
use hands_toolset::browser::url_policy::{OriginAllowList, PatternError};
use hands_toolset::claude_browser::declaration::{BrowserToolsetDeclaration, DeclarationError};

use crate::cli::{ApproveArg, ImageDetailArg, ProviderArg, RunArgs, member_names};
use crate::remote::RemoteTools;
use crate::resume::Launch;
use crate::rundir::RunDir;
use crate::sandbox::SandboxArg;

/// The default Claude model: every model that accepts `computer_toolset_20260801` will do.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-opus-5-5";
/// The size of a spawned desktop.
pub const DESKTOP_SIZE: Size = Size {
    width: 1280,
    height: 800,
};

/// Claude's effort levels (`output_config.effort`).
const CLAUDE_EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];
/// OpenAI's reasoning effort levels (`reasoning.effort`).
const OPENAI_EFFORTS: [&str; 6] = ["none", "minimal", "low", "medium", "high", "xhigh"];
/// The smallest thinking budget the Messages API takes.
const MIN_THINKING_BUDGET: u32 = 1024;
/// The output a request keeps beside a thinking budget.
const OUTPUT_BESIDE_THINKING: u32 = 4096;

/// Why `hands run` refuses to start. Each message says what was wrong and what to do.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The provider's API key is not set (`hands run` exits with status 2 and points to the
    /// offline drills).
    #[error(
        "hands run: no API key: set {key_var} (and {base_var} for another endpoint).\n\
         Without a key, try the offline drills, which run the same path against a local \
         stand-in of the API:\n    hands drill desktop\n    hands drill browser"
    )]
    NoApiKey {
        /// The key's variable.
        key_var: &'static str,
        /// The base URL's variable.
        base_var: &'static str,
    },
    /// `--provider openai` without `--model`.
    #[error("give --model: a Responses model your project can use with the computer tool")]
    NoOpenAiModel,
    /// `--display` under `--sandbox jail`.
    #[error(
        "--display attaches to a display outside any jail (its other clients, its files and \
         its network are yours): give --sandbox none to do that on purpose, or leave \
         --display out for a jailed desktop of the episode's own"
    )]
    DisplayInJail,
    /// `--video` without ffmpeg on PATH.
    #[error("{0}")]
    NoFfmpeg(String),
    /// `--thinking` with OpenAI.
    #[error("--thinking is Claude's extended thinking; an OpenAI reasoning model takes --effort")]
    ThinkingOnOpenAi,
    /// `--edits` names a file that cannot be read or holds a line that is not an edit.
    #[error("--edits {path}: {why}")]
    Edits {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// `--threads` with OpenAI.
    #[error(
        "--threads puts Claude's requests on message threads; an OpenAI run sends only new input with stored responses already"
    )]
    ThreadsOnOpenAi,
    /// `--thinking` neither `adaptive` nor a budget the API takes.
    #[error(
        "--thinking takes `adaptive` or a token budget of at least {MIN_THINKING_BUDGET}; got {given:?}"
    )]
    ThinkingBudget {
        /// The value given.
        given: String,
    },
    /// `--effort` not a level of the provider's API.
    #[error("--effort {given:?} is not a level this API takes; use one of: {}", levels.join(", "))]
    Effort {
        /// The value given.
        given: String,
        /// The levels the API takes.
        levels: &'static [&'static str],
    },
    /// `--mcp`, `--server-tool` and their companions (`crate::remote` says what was wrong).
    #[error(transparent)]
    Remote(anyhow::Error),
    /// `--server-tool` naming a tool Claude does not have.
    #[error("--server-tool {name}: Claude has no such server tool (use --provider openai)")]
    ServerToolNotOnClaude {
        /// The tool.
        name: &'static str,
    },
    /// `--allow-origin` (or the origin of `--browser`) is not an origin pattern.
    #[error("--allow-origin: {0}")]
    AllowOrigin(PatternError),
    /// `--browser` is not a URL a browser can open.
    #[error("{0}")]
    BrowserUrl(ArgError),
    /// `--attach` is not a DevTools WebSocket URL.
    #[error(
        "--attach takes a DevTools WebSocket URL (ws://host:port/devtools/browser/…, or a fleet relay's ws://host:port/episode/ID/EPOCH), got {0:?}"
    )]
    AttachUrl(String),
    /// `--browser-members` / `--browser-extra-members` for Claude's browser toolset.
    #[error("{flag}: {error}")]
    ClaudeBrowserMembers {
        /// The flag.
        flag: &'static str,
        /// What is wrong with the list.
        error: DeclarationError,
    },
    /// The browser toolset Claude would be declared with.
    #[error(transparent)]
    ClaudeBrowser(#[from] DeclarationError),
    /// `--browser-members` / `--browser-extra-members` for OpenAI's function tools.
    #[error(transparent)]
    BrowserFunctions(#[from] hands_toolset::browser::ConfigError),
    /// The API client (`--base-url`, the key's characters).
    #[error(transparent)]
    Client(#[from] hands_models::ConfigError),
}

/// A validated `hands run`: what starts, in which order, with which settings.
pub struct RunPlan {
    /// The settings the run is kept with in its ledger (a resumed run's own).
    pub launch: Launch,
    /// The model API, with its client built.
    pub client: ModelClient,
    /// `--thinking`, `--effort`, `--no-parallel-tools`.
    pub settings: ModelSettings,
    /// Remote MCP servers and server tools.
    pub remote: RemoteTools,
    /// The desktop, if the run has one.
    pub desktop: Option<DesktopPlan>,
    /// The browser, if the run has one.
    pub browser: Option<BrowserPlan>,
    /// Who approves consequential actions.
    pub approve: ApproveArg,
    /// Whether the run is watched in a local web page.
    pub view: ViewPlan,
    /// Where the run is kept, and whether it goes on from a ledger.
    pub run_dir: RunDirPlan,
    /// `--edits`: mid-run edits by step.
    pub edits: Vec<hands_runner::edits::ScheduledEdit>,
    /// `--video`: the ffmpeg that encodes the run's video.
    pub video: Option<PathBuf>,
}

/// A model API client.
pub enum ModelClient {
    /// Anthropic Messages.
    Anthropic(AnthropicClient),
    /// OpenAI Responses.
    OpenAi(OpenAiClient),
}

/// The desktop of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DesktopPlan {
    /// A display of the episode's own, with a window manager.
    Spawn(Size),
    /// A display of the user's (`--display`, only under `--sandbox none`).
    Attach(String),
}

/// The browser of a run: Chromium opened at `start`, under `allow` at the toolset and the
/// request level.
#[derive(Debug, Clone)]
pub struct BrowserPlan {
    /// The start URL.
    pub start: PageUrl,
    /// The allowed origins, as given (or the start URL's).
    pub origins: Vec<String>,
    /// The same, parsed.
    pub allow: OriginAllowList,
    /// The toolset the model drives it with.
    pub tools: BrowserTools,
    /// The saved sign-in to load and save (`--state`).
    pub state: Option<String>,
    /// A running browser's DevTools endpoint to drive instead of launching one (`--attach`;
    /// not kept for `--resume`: a relay's URL names the claim's epoch).
    pub attach: Option<String>,
}

/// How the model drives the browser.
#[derive(Debug, Clone)]
pub enum BrowserTools {
    /// Claude's browser toolset.
    Claude(BrowserToolsetDeclaration),
    /// The driver spec's function tools (OpenAI).
    Functions {
        /// `--browser-members`.
        members: Option<Vec<String>>,
        /// `--browser-extra-members`.
        additional_members: Option<Vec<String>>,
        /// `--image-detail`.
        image_detail: Option<ImageDetail>,
    },
}

/// `--view`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewPlan {
    /// Served in a local web page, where the person also approves (under `--approve ask`).
    Live,
    /// The terminal only.
    Terminal,
}

/// The run directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunDirPlan {
    /// A new run directory here.
    New(PathBuf),
    /// The directory of the run being resumed.
    Resume(PathBuf),
}

impl RunDirPlan {
    /// Where it is.
    pub fn path(&self) -> &Path {
        match self {
            RunDirPlan::New(dir) | RunDirPlan::Resume(dir) => dir,
        }
    }
}

impl RunPlan {
    /// The plan `args` describe; `saved` is the launch of the run `--resume` names (flags given
    /// again override it, the runner refusing what may not change), `env` looks up environment
    /// variables (the API key, the base URL, MCP tokens).
    pub fn parse(
        args: &RunArgs,
        saved: Option<&Launch>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<RunPlan, PlanError> {
        let provider = args
            .provider
            .or_else(|| saved.and_then(Launch::provider))
            .unwrap_or(ProviderArg::Anthropic);
        let (key_var, base_var) = match provider {
            ProviderArg::Anthropic => (anthropic::API_KEY_ENV, anthropic::BASE_URL_ENV),
            ProviderArg::Openai => (openai::API_KEY_ENV, openai::BASE_URL_ENV),
        };
        let Some(key) = env(key_var).filter(|k| !k.trim().is_empty()) else {
            return Err(PlanError::NoApiKey { key_var, base_var });
        };
        let base_url = args
            .base_url
            .clone()
            .or_else(|| env(base_var).filter(|u| !u.trim().is_empty()));
        let mut launch = launch(args, saved, provider)?;
        // Remote MCP servers and server tools, as given or as the run started with (MCP URLs
        // given again): a missing token stops here.
        let remote_args = match saved {
            Some(l) => {
                crate::remote::resumed_args(&args.remote, &l.remote).map_err(PlanError::Remote)?
            }
            None => (*args.remote).clone(),
        };
        let remote = RemoteTools::parse(&remote_args, env).map_err(PlanError::Remote)?;
        launch.remote = remote.saved_args(&remote_args);
        if launch.display.is_some() && launch.isolation.sandbox == SandboxArg::Jail {
            return Err(PlanError::DisplayInJail);
        }
        let settings = ModelSettings::parse(provider, &launch)?;
        // The episode's programs reach only the allowed origins: a pattern that is not one is
        // refused here, whether a browser or a desktop uses it.
        if !launch.allow_origin.is_empty() {
            OriginAllowList::new(&launch.allow_origin).map_err(PlanError::AllowOrigin)?;
        }
        let browser = browser_plan(args, &launch, provider)?;
        if provider == ProviderArg::Anthropic
            && let Some(tool) = remote
                .server_tools
                .iter()
                .find(|t| t.claude_tool().is_none())
        {
            return Err(PlanError::ServerToolNotOnClaude { name: tool.name() });
        }
        let client = model_client(provider, key, base_url)?;
        let desktop = match (&launch.display, launch.desktop) {
            (_, false) => None,
            (Some(display), true) => Some(DesktopPlan::Attach(display.clone())),
            (None, true) => Some(DesktopPlan::Spawn(DESKTOP_SIZE)),
        };
        let run_dir = match &args.resume {
            Some(dir) => RunDirPlan::Resume(dir.clone()),
            None => RunDirPlan::New(
                args.out
                    .clone()
                    .unwrap_or_else(|| RunDir::default_path("run")),
            ),
        };
        Ok(RunPlan {
            launch,
            client,
            settings,
            remote,
            desktop,
            browser,
            approve: args.approve,
            view: if args.view {
                ViewPlan::Live
            } else {
                ViewPlan::Terminal
            },
            run_dir,
            edits: edits_of(args)?,
            video: if args.video {
                Some(crate::video::find_ffmpeg().map_err(|e| PlanError::NoFfmpeg(e.to_string()))?)
            } else {
                None
            },
        })
    }
}

/// Reads `--edits`, if given.
fn edits_of(args: &RunArgs) -> Result<Vec<hands_runner::edits::ScheduledEdit>, PlanError> {
    let Some(path) = &args.edits else {
        return Ok(Vec::new());
    };
    let refused = |why: String| PlanError::Edits {
        path: path.display().to_string(),
        why,
    };
    let text = std::fs::read_to_string(path).map_err(|e| refused(e.to_string()))?;
    hands_runner::edits::parse_edits(&text).map_err(refused)
}

/// The settings the run keeps (MCP declarations aside): each flag as given, or as the resumed
/// run started with.
fn launch(
    args: &RunArgs,
    saved: Option<&Launch>,
    provider: ProviderArg,
) -> Result<Launch, PlanError> {
    let model = match (
        args.model
            .clone()
            .or_else(|| saved.map(|l| l.model.clone())),
        provider,
    ) {
        (Some(m), _) => m,
        (None, ProviderArg::Anthropic) => DEFAULT_ANTHROPIC_MODEL.to_owned(),
        (None, ProviderArg::Openai) => return Err(PlanError::NoOpenAiModel),
    };
    let desktop = match saved {
        Some(l) => l.desktop || args.desktop || args.display.is_some(),
        None => args.desktop || args.display.is_some() || args.browser.is_none(),
    };
    Ok(Launch {
        provider: Launch::provider_name(provider).to_owned(),
        model,
        max_steps: args
            .max_steps
            .or(saved.map(|l| l.max_steps))
            .unwrap_or(hands_runner::DEFAULT_MAX_STEPS),
        desktop,
        display: args
            .display
            .clone()
            .or_else(|| saved.and_then(|l| l.display.clone())),
        browser: args
            .browser
            .clone()
            .or_else(|| saved.and_then(|l| l.browser.clone())),
        allow_origin: match saved {
            Some(l) if args.allow_origin.is_empty() => l.allow_origin.clone(),
            _ => args.allow_origin.clone(),
        },
        stream: args.stream || saved.is_some_and(|l| l.stream),
        eager: args.eager || saved.is_some_and(|l| l.eager),
        task: args
            .task
            .clone()
            .or_else(|| saved.map(|l| l.task.clone()))
            .unwrap_or_default(),
        remote: crate::cli::RemoteToolArgs::default(),
        thinking: args
            .thinking
            .clone()
            .or_else(|| saved.and_then(|l| l.thinking.clone())),
        effort: args
            .effort
            .clone()
            .or_else(|| saved.and_then(|l| l.effort.clone())),
        no_parallel_tools: args.no_parallel_tools || saved.is_some_and(|l| l.no_parallel_tools),
        threads: args.threads || saved.is_some_and(|l| l.threads),
        isolation: match saved {
            Some(l) if args.isolation == crate::cli::SandboxArgs::default() => l.isolation.clone(),
            _ => args.isolation.clone(),
        },
    })
}

/// The browser, when `--browser` (or the resumed run) names a start URL.
fn browser_plan(
    args: &RunArgs,
    launch: &Launch,
    provider: ProviderArg,
) -> Result<Option<BrowserPlan>, PlanError> {
    let Some(start) = &launch.browser else {
        return Ok(None);
    };
    let start = PageUrl::parse("--browser", start).map_err(PlanError::BrowserUrl)?;
    if let Some(ws) = &args.attach
        && !(ws.starts_with("ws://") || ws.starts_with("wss://"))
    {
        return Err(PlanError::AttachUrl(ws.clone()));
    }
    let origins: Vec<String> = if launch.allow_origin.is_empty() {
        vec![start.url().origin().ascii_serialization()]
    } else {
        launch.allow_origin.clone()
    };
    let allow = OriginAllowList::new(&origins).map_err(PlanError::AllowOrigin)?;
    let members = member_names(args.browser_members.as_ref());
    let additional_members = member_names(args.browser_extra_members.as_ref());
    // Claude drives the browser through its own toolset; OpenAI through the driver spec's
    // function tools. Both sit on the same driver, under the same policies.
    let tools = match provider {
        ProviderArg::Anthropic => {
            let mut declaration = BrowserToolsetDeclaration::new();
            if let Some(names) = members {
                declaration = declaration.with_members(&names).map_err(|error| {
                    PlanError::ClaudeBrowserMembers {
                        flag: "--browser-members",
                        error,
                    }
                })?;
            }
            if let Some(names) = additional_members {
                declaration = declaration.with_extra_members(&names).map_err(|error| {
                    PlanError::ClaudeBrowserMembers {
                        flag: "--browser-extra-members",
                        error,
                    }
                })?;
            }
            declaration.validate()?;
            BrowserTools::Claude(declaration)
        }
        ProviderArg::Openai => {
            // The names are checked against every member; the driver's own set is checked
            // again when the toolset is made.
            hands_toolset::browser::select_members(
                members.as_deref(),
                additional_members.as_deref(),
                MemberSet::all(),
            )?;
            BrowserTools::Functions {
                members,
                additional_members,
                image_detail: args.image_detail.map(ImageDetailArg::detail),
            }
        }
    };
    Ok(Some(BrowserPlan {
        start,
        origins,
        allow,
        tools,
        state: args.state.clone(),
        attach: args.attach.clone(),
    }))
}

/// The API client (building it makes no request).
fn model_client(
    provider: ProviderArg,
    key: String,
    base_url: Option<String>,
) -> Result<ModelClient, PlanError> {
    Ok(match provider {
        ProviderArg::Anthropic => {
            let mut config = AnthropicConfig::new(key);
            if let Some(url) = base_url {
                config.base_url = url;
            }
            ModelClient::Anthropic(AnthropicClient::new(config)?)
        }
        ProviderArg::Openai => {
            let mut config = OpenAiConfig::new(key);
            if let Some(url) = base_url {
                config.base_url = url;
            }
            ModelClient::OpenAi(OpenAiClient::new(config)?)
        }
    })
}

/// `--thinking`, `--effort` and `--no-parallel-tools`, checked against the provider before
/// anything starts (a wrong value is a clear error, not a 400 from the API).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelSettings {
    thinking: Option<anthropic::ThinkingConfig>,
    effort: Option<String>,
    one_tool_per_turn: bool,
    threads: hands_runner::anthropic::Threads,
}

impl ModelSettings {
    fn parse(provider: ProviderArg, launch: &Launch) -> Result<ModelSettings, PlanError> {
        let thinking = match (&launch.thinking, provider) {
            (None, _) => None,
            (Some(_), ProviderArg::Openai) => return Err(PlanError::ThinkingOnOpenAi),
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
                _ => return Err(PlanError::ThinkingBudget { given: t.clone() }),
            },
        };
        let levels: &'static [&'static str] = match provider {
            ProviderArg::Anthropic => &CLAUDE_EFFORTS,
            ProviderArg::Openai => &OPENAI_EFFORTS,
        };
        let effort = match &launch.effort {
            Some(e) if !levels.contains(&e.as_str()) => {
                return Err(PlanError::Effort {
                    given: e.clone(),
                    levels,
                });
            }
            other => other.clone(),
        };
        let threads = match (launch.threads, provider) {
            (false, _) => hands_runner::anthropic::Threads::Off,
            (true, ProviderArg::Anthropic) => hands_runner::anthropic::Threads::On,
            (true, ProviderArg::Openai) => return Err(PlanError::ThreadsOnOpenAi),
        };
        Ok(ModelSettings {
            thinking,
            effort,
            one_tool_per_turn: launch.no_parallel_tools,
            threads,
        })
    }

    /// Sets them on a Messages run.
    pub fn apply_anthropic(&self, settings: &mut AnthropicSettings) {
        if let Some(thinking) = &self.thinking {
            if let anthropic::ThinkingConfig::Enabled { budget_tokens, .. } = thinking {
                settings.max_tokens = budget_tokens.saturating_add(OUTPUT_BESIDE_THINKING);
            }
            settings.thinking = Some(thinking.clone());
        }
        settings.effort = self.effort.clone();
        settings.threads = self.threads;
        if self.one_tool_per_turn {
            settings.tool_choice = Some(anthropic::ToolChoice::Auto {
                disable_parallel_tool_use: Some(true),
            });
        }
    }

    /// Sets them on a Responses run.
    pub fn apply_openai(&self, settings: &mut OpenAiSettings) {
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

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::cli::{Cli, Command};

    /// Both providers' keys are set, and a token for `--mcp-token-env`.
    fn env(var: &str) -> Option<String> {
        match var {
            "ANTHROPIC_API_KEY" | "OPENAI_API_KEY" | "NOTES_TOKEN" => Some("k".to_owned()),
            _ => None,
        }
    }

    fn run_args(argv: &[&str]) -> RunArgs {
        let cli = Cli::try_parse_from(["hands", "run"].iter().chain(argv))
            .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        match cli.command {
            Command::Run(args) => args,
            other => panic!("{other:?}"),
        }
    }

    /// A plan in one line: what the tests compare.
    fn summary(plan: &RunPlan) -> String {
        let desktop = match &plan.desktop {
            None => "none".to_owned(),
            Some(DesktopPlan::Spawn(size)) => format!("spawn {size}"),
            Some(DesktopPlan::Attach(display)) => format!("attach {display}"),
        };
        let browser = match &plan.browser {
            None => "none".to_owned(),
            Some(b) => format!(
                "{} [{}] {}",
                b.start.as_str(),
                b.origins.join(","),
                match &b.tools {
                    BrowserTools::Claude(_) => "claude",
                    BrowserTools::Functions { .. } => "functions",
                }
            ),
        };
        format!(
            "{} {} steps={} desktop={desktop} browser={browser} sandbox={:?} approve={:?} \
             view={:?} dir={:?}",
            plan.launch.provider,
            plan.launch.model,
            plan.launch.max_steps,
            plan.launch.isolation.sandbox,
            plan.approve,
            plan.view,
            plan.run_dir,
        )
    }

    /// `hands run ARGV` (resuming `saved` when given): `Ok(summary)` for a plan, `Err(text)`
    /// for a refusal whose message contains `text`.
    fn check_with(argv: &[&str], saved: Option<&Launch>, expect: Result<&str, &str>) {
        let got = RunPlan::parse(&run_args(argv), saved, &env);
        match (got, expect) {
            (Ok(plan), Ok(want)) => assert_eq!(summary(&plan), want, "{argv:?}"),
            (Err(e), Err(want)) => {
                let text = format!("{:#}", anyhow::Error::from(e));
                assert!(text.contains(want), "{argv:?}: {text}");
            }
            (Ok(plan), Err(want)) => {
                panic!("{argv:?}: planned {}, expected {want}", summary(&plan))
            }
            (Err(e), Ok(want)) => panic!("{argv:?}: refused ({e}), expected {want}"),
        }
    }

    fn check(argv: &[&str], expect: Result<&str, &str>) {
        check_with(argv, None, expect);
    }

    #[test]
    fn refusals_name_the_flag_and_what_to_do() {
        for (argv, expect) in [
            (
                &["--task", "t", "--provider", "openai"][..],
                "give --model: a Responses model",
            ),
            (
                &["--task", "t", "--display", ":5"],
                "--display attaches to a display outside any jail",
            ),
            (
                &[
                    "--task",
                    "t",
                    "--provider",
                    "openai",
                    "--model",
                    "m",
                    "--thinking",
                    "adaptive",
                ],
                "--thinking is Claude's extended thinking",
            ),
            (
                &["--task", "t", "--thinking", "100"],
                "--thinking takes `adaptive` or a token budget of at least 1024; got \"100\"",
            ),
            (&["--task", "t", "--thinking", "lots"], "got \"lots\""),
            (
                &[
                    "--task",
                    "t",
                    "--provider",
                    "openai",
                    "--model",
                    "m",
                    "--threads",
                ],
                "--threads puts Claude's requests on message threads",
            ),
            (
                &["--task", "t", "--effort", "minimal"],
                "--effort \"minimal\" is not a level this API takes; use one of: low, medium",
            ),
            (
                &[
                    "--task",
                    "t",
                    "--provider",
                    "openai",
                    "--model",
                    "m",
                    "--effort",
                    "max",
                ],
                "use one of: none, minimal",
            ),
            (
                &["--task", "t", "--mcp", "ftp://x/mcp"],
                "an MCP server URL is http(s)",
            ),
            (
                &[
                    "--task",
                    "t",
                    "--mcp",
                    "n=https://x/mcp",
                    "--mcp-token-env",
                    "n=UNSET",
                ],
                "--mcp-token-env: UNSET is not set",
            ),
            (
                &["--task", "t", "--server-tool", "image_generation"],
                "--server-tool image_generation: Claude has no such server tool",
            ),
            (&["--task", "t", "--browser", "not a url"], "--browser"),
            (
                &[
                    "--task",
                    "t",
                    "--browser",
                    "https://a.example",
                    "--allow-origin",
                    "ftp://x",
                ],
                "--allow-origin: ",
            ),
            (
                &["--task", "t", "--desktop", "--allow-origin", "nonsense"],
                "--allow-origin: ",
            ),
            (
                &[
                    "--task",
                    "t",
                    "--browser",
                    "https://a.example",
                    "--browser-members",
                    "fly",
                ],
                "--browser-members: ",
            ),
            (
                &[
                    "--task",
                    "t",
                    "--browser",
                    "https://a.example",
                    "--browser-extra-members",
                    "fly",
                ],
                "--browser-extra-members: ",
            ),
            (
                &[
                    "--task",
                    "t",
                    "--provider",
                    "openai",
                    "--model",
                    "m",
                    "--browser",
                    "https://a.example",
                    "--browser-members",
                    "fly",
                ],
                "fly",
            ),
            (
                &["--task", "t", "--base-url", "not a url"],
                "it must start with http:// or https://",
            ),
        ] {
            check(argv, Err(expect));
        }
    }

    #[test]
    fn no_key_is_its_own_refusal_before_any_other() {
        let args = run_args(&["--task", "t", "--provider", "openai"]);
        let no_key = |_: &str| None;
        match RunPlan::parse(&args, None, &no_key) {
            Err(PlanError::NoApiKey { key_var, .. }) => assert_eq!(key_var, "OPENAI_API_KEY"),
            Err(e) => panic!("{e}"),
            Ok(plan) => panic!("{}", summary(&plan)),
        }
    }

    #[test]
    fn valid_plans() {
        check(
            &["--task", "t", "--out", "o"],
            Ok(
                "anthropic claude-opus-5-5 steps=20 desktop=spawn 1280x800 browser=none \
                sandbox=Jail approve=Ask view=Terminal dir=New(\"o\")",
            ),
        );
        check(
            &[
                "--task",
                "t",
                "--provider",
                "openai",
                "--model",
                "m",
                "--browser",
                "https://a.example/x",
                "--browser-members",
                "read_page,click",
                "--approve",
                "all",
                "--max-steps",
                "7",
                "--view",
                "--out",
                "o",
            ],
            Ok(
                "openai m steps=7 desktop=none browser=https://a.example/x [https://a.example] \
                functions sandbox=Jail approve=All view=Live dir=New(\"o\")",
            ),
        );
        check(
            &[
                "--task",
                "t",
                "--display",
                ":5",
                "--sandbox",
                "none",
                "--browser",
                "https://a.example.com",
                "--allow-origin",
                "https://*.example.com",
                "--thinking",
                "2048",
                "--effort",
                "max",
                "--out",
                "o",
            ],
            Ok("anthropic claude-opus-5-5 steps=20 desktop=attach :5 \
                browser=https://a.example.com/ [https://*.example.com] claude sandbox=None \
                approve=Ask view=Terminal dir=New(\"o\")"),
        );
    }

    #[test]
    fn a_resumed_run_takes_its_saved_settings_and_flags_given_again() {
        let args = run_args(&[
            "--task",
            "t",
            "--provider",
            "openai",
            "--model",
            "m",
            "--display",
            ":5",
            "--sandbox",
            "none",
            "--max-steps",
            "9",
        ]);
        let saved = RunPlan::parse(&args, None, &env)
            .expect("the first run")
            .launch;
        check_with(
            &["--resume", "r"],
            Some(&saved),
            Ok(
                "openai m steps=9 desktop=attach :5 browser=none sandbox=None approve=Ask \
                view=Terminal dir=Resume(\"r\")",
            ),
        );
        check_with(
            &["--resume", "r", "--max-steps", "3"],
            Some(&saved),
            Ok(
                "openai m steps=3 desktop=attach :5 browser=none sandbox=None approve=Ask \
                view=Terminal dir=Resume(\"r\")",
            ),
        );
        // A run that declared an MCP server is resumed only with its URL given again.
        let saved = Launch {
            remote: crate::cli::RemoteToolArgs {
                mcp: vec!["notes=0123".into()],
                ..Default::default()
            },
            ..saved
        };
        check_with(
            &["--resume", "r"],
            Some(&saved),
            Err("give them again with --mcp"),
        );
    }
}
