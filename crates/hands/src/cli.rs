//! The command-line grammar (clap derive) and the options shared by subcommands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use hands_core::geometry::{ImageTier, ScreenshotSizing, Size};
use hands_core::image::ImageFormat;
use hands_toolset::computer::declaration::ToolsetDeclaration;
use hands_toolset::computer::{ComputerConfig, Shape};

/// Gives AI models hands on a real browser and a real Linux desktop.
#[derive(Debug, Parser)]
#[command(
    name = "hands",
    version,
    about,
    arg_required_else_help = true,
    before_help = "First thing to try, with no API key: `hands drill desktop` and `hands drill browser`."
)]
pub struct Cli {
    /// More logging on stderr (-v info with per-action timings, -vv debug).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

/// What to do.
#[derive(Debug, Subcommand)]
#[expect(
    clippy::large_enum_variant,
    reason = "parsed once per process; boxing `RunArgs` buys nothing"
)]
pub enum Command {
    /// The offline drills: a scripted model, served by a local stand-in of the model API, drives
    /// the real runner on a real desktop or browser; the drill then verifies the result itself.
    Drill(DrillArgs),
    /// Run a task with a model (Claude or OpenAI) on a real desktop and/or browser.
    Run(RunArgs),
    /// List runs with their status; show one (what an interrupted turn did); reconcile a call
    /// whose outcome is uncertain, so the run can resume.
    Runs(RunsArgs),
    /// Print the structured read of a page, as `read_page` gives it to a model.
    Read(ReadArgs),
    /// Say whether an origin allow-list allows each URL, and why.
    Policy(PolicyArgs),
    /// Execute one saved model turn against a driver and print the `user` message that answers
    /// it (JSON on stdout).
    Exec(ExecArgs),
    /// The offline demo: spawn a desktop with an editor, replay a sample turn, show what came
    /// back.
    Demo(DemoArgs),
    /// Serve the browser and/or the desktop to any MCP client (stdio, or HTTP on loopback).
    Mcp(McpArgs),
    /// Show a run directory step by step in a local web page.
    View(ViewArgs),
    /// Many episodes on PostgreSQL: queue a batch of tasks (`submit`), see how it stands
    /// (`status`).
    Batch(crate::fleet::BatchArgs),
    /// Claim episodes from PostgreSQL and run them, `--slots` at a time, under a lease that
    /// another worker takes over when this one dies.
    Worker(crate::fleet::WorkerArgs),
    /// The fleet's CDP relay in front of remote browsers: a worker's DevTools frames reach its
    /// episode's browser only while its claim (epoch and lease) is current.
    Relay(crate::relay::RelayArgs),
    /// hands' side of the differential suite against the official SDKs (`difftest/`): runs
    /// each case of a JSON-lines file and prints one JSON line per case.
    #[command(hide = true)]
    Difftest(DifftestArgs),
    /// List or delete the saved sign-ins of `hands run --state NAME`.
    State(StateArgs),
}

/// `hands state`.
#[derive(Debug, Args)]
pub struct StateArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: StateCommand,
}

/// `hands state list|delete`.
#[derive(Debug, clap::Subcommand)]
pub enum StateCommand {
    /// The saved states, with their sizes (never their content).
    List,
    /// Delete a saved state.
    Delete {
        /// Its name.
        name: String,
    },
}

/// `hands mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve a Chromium, opened at URL when one is given.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub browser: Option<String>,
    /// Origins the browser may open (`https://example.com`, `https://*.example.com`); default:
    /// the origin of the start URL. Enforced at `navigate` and on every request the browser makes.
    #[arg(long, value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
    /// Drive a running Chromium at this DevTools endpoint (`ws://…`) instead of launching one.
    #[arg(long, value_name = "WS_URL", requires = "browser")]
    pub attach: Option<String>,
    /// Serve a desktop: a spawned Xvfb display with a window manager, unless `--display` names
    /// one.
    #[arg(long)]
    pub desktop: bool,
    /// Attach to this X display.
    #[arg(
        long,
        value_name = ":N",
        conflicts_with = "spawn",
        requires = "desktop"
    )]
    pub display: Option<String>,
    /// The size of the spawned display.
    #[arg(
        long,
        value_name = "WIDTHxHEIGHT",
        default_value = "1280x800",
        requires = "desktop"
    )]
    pub spawn: Size,
    /// Serve streamable HTTP at this loopback address (`127.0.0.1:8931`; port 0 picks one)
    /// instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// What is decided for consequential actions when the client cannot ask a person
    /// (no elicitation): approve what the policies allow (`all`) or refuse (`none`).
    #[arg(long, value_enum, default_value_t = McpApproveArg::None)]
    pub approve: McpApproveArg,
    /// The most tokens one tool response may cost (Claude Code's MAX_MCP_OUTPUT_TOKENS).
    #[arg(long, value_name = "TOKENS", default_value_t = 25_000)]
    pub max_tokens: u32,
    /// Encode desktop screenshots as JPEG at this quality (1–100) instead of PNG.
    #[arg(long, value_name = "QUALITY", value_parser = clap::value_parser!(u8).range(1..=100))]
    pub jpeg: Option<u8>,
    /// Keep the browser's sign-ins under this name, as `hands run --state` does: loaded before
    /// the browser's first page, saved sealed when the server ends (stdin closed, SIGTERM or
    /// Ctrl-C), with the passphrase in `HANDS_STATE_KEY`.
    #[arg(long, value_name = "NAME", requires = "browser")]
    pub state: Option<String>,
    /// Where the served desktop's and browser's programs run.
    #[command(flatten)]
    pub isolation: SandboxArgs,
}

/// `hands mcp --approve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum McpApproveArg {
    /// Approve what the URL policy and allow-list allow.
    All,
    /// Refuse every consequential action.
    None,
}

/// `hands view`.
#[derive(Debug, Args)]
pub struct ViewArgs {
    /// The run directory (`runs/run-<time>`, with its `log.jsonl`), or a trace file.
    #[arg(required_unless_present = "ledger")]
    pub run_dir: Option<PathBuf>,
    /// Instead of a run: the episodes of a fleet's PostgreSQL (`hands batch`), listed with
    /// their totals, each opening on its own page read from its checkpoints.
    #[arg(long, value_name = "URL", conflicts_with = "run_dir")]
    pub ledger: Option<String>,
    /// With --ledger: only this batch.
    #[arg(long, requires = "ledger")]
    pub batch: Option<String>,
    /// The loopback address to serve the page on (port 0 picks one).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub addr: std::net::SocketAddr,
}

/// `hands difftest`.
#[derive(Debug, Args)]
pub struct DifftestArgs {
    /// The cases, one JSON object per line (written by `difftest/run.py`).
    #[arg(value_name = "CASES.jsonl")]
    pub cases: PathBuf,
}

/// `hands run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// What the model should do.
    #[arg(long, required_unless_present = "resume")]
    pub task: Option<String>,
    /// Resume the run kept in this run directory, with the requests it had left and the
    /// settings it started with (a flag given again must match: another model or step limit is
    /// refused, naming what changed). Nothing that may have taken effect runs again; a call
    /// whose outcome is uncertain must be reconciled first (`hands runs show RUN_DIR`).
    #[arg(long, value_name = "RUN_DIR", conflicts_with_all = ["task", "out"])]
    pub resume: Option<PathBuf>,
    /// Act on a desktop: a spawned 1280x800 Xvfb display with a window manager, unless
    /// `--display` names one. The default when `--browser` is not given.
    #[arg(long)]
    pub desktop: bool,
    /// Attach to this X display instead of spawning one.
    #[arg(long, value_name = ":N")]
    pub display: Option<String>,
    /// Open Chromium at this URL and give the model the browser toolset.
    #[arg(long, value_name = "URL")]
    pub browser: Option<String>,
    /// Drive a running browser at this DevTools endpoint (`ws://…`, a fleet relay's episode
    /// URL included) instead of launching Chromium; it is sent to `--browser` and left running.
    /// The allow-list still holds on every request it makes while attached.
    #[arg(long, value_name = "WS_URL", requires = "browser")]
    pub attach: Option<String>,
    /// Which model API (default anthropic).
    #[arg(long, value_enum)]
    pub provider: Option<ProviderArg>,
    /// The model (default for anthropic: claude-opus-5-5).
    #[arg(long)]
    pub model: Option<String>,
    /// Requests allowed; the last one cannot start new effects (default 20).
    #[arg(long)]
    pub max_steps: Option<u32>,
    /// Claude's extended thinking: `adaptive` (the model decides), or a token budget of at least
    /// 1024 (each request's output limit becomes the budget plus 4096).
    #[arg(long, value_name = "adaptive|TOKENS")]
    pub thinking: Option<String>,
    /// How hard the model works: Claude `low|medium|high|xhigh|max` (`output_config.effort`),
    /// OpenAI `none|minimal|low|medium|high|xhigh` (`reasoning.effort`).
    #[arg(long, value_name = "LEVEL")]
    pub effort: Option<String>,
    /// At most one tool call per model turn (Claude `disable_parallel_tool_use`, OpenAI
    /// `parallel_tool_calls: false`).
    #[arg(long)]
    pub no_parallel_tools: bool,
    /// Claude: send each request on a message thread the API holds, so only the new messages
    /// travel (beta `message-threads-2026-08-12`; the whole conversation whenever a thread
    /// cannot be continued).
    #[arg(long)]
    pub threads: bool,
    /// Mid-run edits: a file of JSON lines, each `{"step": N, "edit": {...}}` applied before
    /// request N — `{"type": "params", "max_output_tokens": 512, "instructions": "…", "effort":
    /// "low"}`, `{"type": "remove_tools", "names": [...]}`, `{"type": "add_tools", "names":
    /// [...]}`, `{"type": "compact_before_next_turn"}` (Claude). Each is saved in the ledger as
    /// it applies; with `--resume`, give the file again: the steps already made are skipped.
    #[arg(long, value_name = "FILE")]
    pub edits: Option<std::path::PathBuf>,
    /// Origins the browser may open (`https://example.com`, `https://*.example.com`); default:
    /// the origin of `--browser`.
    #[arg(long, value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
    /// Exactly these browser members (comma-separated; `''` for none): members of Claude's
    /// browser toolset (`navigate,read_page,left_click`), or with `--provider openai` the
    /// function tools without `browser_` (`read_page,click`).
    #[arg(
        long,
        value_name = "MEMBERS",
        value_delimiter = ',',
        requires = "browser",
        conflicts_with = "browser_extra_members"
    )]
    pub browser_members: Option<Vec<String>>,
    /// Members added to the defaults, for the opt-in ones: Claude's `javascript_exec`,
    /// `read_console`, `read_network`, `file_upload`; OpenAI's `read_page_scoped`, `click_at`,
    /// `drag_path`, `hold_keys`, `hover_at`, `set_checked`, `read_diagnostics`, `run_script`,
    /// `upload_file`, `download_file`.
    #[arg(
        long,
        value_name = "MEMBERS",
        value_delimiter = ',',
        requires = "browser"
    )]
    pub browser_extra_members: Option<Vec<String>>,
    /// `detail` of the browser's screenshots and zooms (OpenAI function tools).
    #[arg(long, value_enum, value_name = "DETAIL", requires = "browser")]
    pub image_detail: Option<ImageDetailArg>,
    /// Keep the browser's sign-ins under this name: cookies and localStorage of the allowed
    /// origins are loaded at start (if saved before) and saved at the end, sealed with the
    /// passphrase in `HANDS_STATE_KEY` (`hands state list|delete`).
    #[arg(long, value_name = "NAME", requires = "browser")]
    pub state: Option<String>,
    /// Who approves consequential actions: a person on the terminal (`ask`), everything the
    /// policies allow (`all`, for scripts), or nothing (`none`).
    #[arg(long, value_enum, default_value_t = ApproveArg::Ask)]
    pub approve: ApproveArg,
    /// The API's base URL (default: `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`, then the public API).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Stream responses (SSE).
    #[arg(long)]
    pub stream: bool,
    /// With `--stream`: run each completed call as soon as it arrives (OpenAI: every local
    /// call; Claude: ordinary functions, in order).
    #[arg(long, requires = "stream")]
    pub eager: bool,
    /// The run directory (default `runs/run-<time>`): a JSONL log, the screenshots, and the
    /// run's ledger (`ledger.sqlite`, every checkpoint, for `--resume`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Watch the run in a local web page as it happens, and approve or deny its actions there;
    /// "Take over" there pauses the run between turns and hands you its browser (or, in a run
    /// without one, its desktop) until you give it back.
    #[arg(long)]
    pub view: bool,
    /// Record the run as a video, `video.webm` in the run directory: the desktop (sampled 5
    /// times a second) or, for a run with a browser only, the browser's screencast. Needs
    /// `ffmpeg` on PATH.
    #[arg(long)]
    pub video: bool,
    /// Remote MCP servers and server tools.
    #[command(flatten)]
    pub remote: Box<RemoteToolArgs>,
    /// Where the episode's programs run.
    #[command(flatten)]
    pub isolation: SandboxArgs,
}

/// Where the episode's programs run (issue 17): every command that starts a desktop, a shell or
/// a browser takes these.
#[derive(Debug, Args, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SandboxArgs {
    /// `jail` (the default): the desktop, the shell and the editor's files in a jail of the
    /// episode's own, Chromium in another, the network only through the allow-list's proxy;
    /// refuses to start where no jail can be made. `none`: on the host as you, only on purpose.
    #[arg(long, value_enum, default_value_t = crate::sandbox::SandboxArg::Jail)]
    pub sandbox: crate::sandbox::SandboxArg,
    /// A directory given to the episode as `/workspace`: copied in (the episode's copy is
    /// removed with it), or bound in place with `--workspace-bind`.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Bind `--workspace` in place (the episode reads and writes your directory) instead of
    /// copying it.
    #[arg(long, requires = "workspace")]
    pub workspace_bind: bool,
}

impl SandboxArgs {
    /// The episode these arguments describe.
    pub fn episode(&self) -> crate::sandbox::Episode {
        crate::sandbox::Episode::new(
            self.sandbox,
            crate::sandbox::WorkspaceArg {
                dir: self.workspace.clone(),
                bind: self.workspace_bind,
            },
        )
    }
}

/// `hands run`'s remote MCP servers and server tools: the model's provider runs them, hands
/// declares them and answers their approvals (`--approve` decides those too).
#[derive(Debug, Args, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct RemoteToolArgs {
    /// A remote MCP server the provider connects to (streamable HTTP), as `[LABEL=]URL`; the
    /// label defaults to the URL's host. OpenAI asks before each call (answered per
    /// `--approve`); Claude's connector never asks, so the server itself is approved before the
    /// first request.
    #[arg(long = "mcp", value_name = "[LABEL=]URL")]
    pub mcp: Vec<String>,
    /// Only these tools of server LABEL (`LABEL=TOOL,TOOL`).
    #[arg(long = "mcp-tools", value_name = "LABEL=TOOLS")]
    pub mcp_tools: Vec<String>,
    /// OpenAI: these tools of server LABEL (every tool when none is named) run without an
    /// approval request (`require_approval` `never`).
    #[arg(long = "mcp-unasked", value_name = "LABEL[=TOOLS]")]
    pub mcp_unasked: Vec<String>,
    /// The bearer token of server LABEL, read from the environment variable VAR (never from
    /// the command line, which other users can read).
    #[arg(long = "mcp-token-env", value_name = "LABEL=VAR")]
    pub mcp_token_env: Vec<String>,
    /// A server tool beside the local tools: `web_search`, `code_interpreter` (Claude:
    /// `code_execution`); OpenAI also `file_search` (with `--vector-store`) and
    /// `image_generation`.
    #[arg(long = "server-tool", value_name = "NAME")]
    pub server_tool: Vec<String>,
    /// A vector store for `--server-tool file_search`.
    #[arg(long = "vector-store", value_name = "ID")]
    pub vector_store: Vec<String>,
}

/// `detail` of an OpenAI `input_image`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImageDetailArg {
    /// `auto`.
    Auto,
    /// `low`.
    Low,
    /// `high`.
    High,
    /// `original`.
    Original,
}

impl ImageDetailArg {
    /// The toolset's value.
    pub fn detail(self) -> hands_toolset::browser::ImageDetail {
        use hands_toolset::browser::ImageDetail;
        match self {
            ImageDetailArg::Auto => ImageDetail::Auto,
            ImageDetailArg::Low => ImageDetail::Low,
            ImageDetailArg::High => ImageDetail::High,
            ImageDetailArg::Original => ImageDetail::Original,
        }
    }
}

/// A member list as given: empty names (from `''` or a stray comma) dropped.
pub fn member_names(list: Option<&Vec<String>>) -> Option<Vec<String>> {
    list.map(|names| {
        names
            .iter()
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty())
            .collect()
    })
}

/// `hands runs`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RunsArgs {
    #[command(subcommand)]
    pub action: Option<RunsAction>,
    /// Where the run directories are (default `runs`).
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// What `hands runs` does besides listing.
#[derive(Debug, Subcommand)]
pub enum RunsAction {
    /// One run: its identity, status, and each call of an interrupted turn with what is known
    /// of it.
    Show {
        /// The run directory.
        #[arg(value_name = "RUN_DIR")]
        run_dir: PathBuf,
        /// Print JSON (for scripts).
        #[arg(long)]
        json: bool,
    },
    /// Record what really happened to a call whose outcome is uncertain (check the
    /// environment first); the run can then resume, and the call is never repeated.
    Reconcile {
        /// The run directory.
        #[arg(value_name = "RUN_DIR")]
        run_dir: PathBuf,
        /// The call (as `hands runs show` lists it).
        #[arg(value_name = "CALL_ID")]
        call_id: String,
        /// It took effect.
        #[arg(
            long,
            conflicts_with = "not_happened",
            required_unless_present = "not_happened"
        )]
        happened: bool,
        /// It did not take effect.
        #[arg(long)]
        not_happened: bool,
        /// What you found, for the model (e.g. "the file was saved, the dialog is still open").
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
    },
    /// Write the run as one file (the conversation, approvals, actions with timings,
    /// screenshots and a manifest; secrets removed), for `hands view FILE`. Layout:
    /// docs/trace-format.md.
    Export {
        /// The run directory.
        #[arg(value_name = "RUN_DIR")]
        run_dir: PathBuf,
        /// The file to write (e.g. `run.hands`).
        #[arg(short = 'o', long, value_name = "FILE")]
        out: PathBuf,
        /// Store each PNG screenshot as JPEG (quality 80) when that is smaller: lossy, and for
        /// pages of dense text only a little smaller once the trace is compressed. By default a
        /// screenshot over 36 KB is stored as a JPEG within 36 KB (downscaled when it must be),
        /// so 50 steps stay under 2 MB.
        #[arg(long, conflicts_with = "as_seen")]
        jpeg: bool,
        /// Keep every screenshot as the model saw it (PNG, full size): a trace of a screen
        /// that changes at every step may then take 10 MB per 50 steps.
        #[arg(long)]
        as_seen: bool,
        /// Put the run's video (`video.webm`, from `hands run --video`) in the trace as
        /// `video/video.webm`; left out by default (it is larger than the rest of a trace).
        #[arg(long)]
        video: bool,
    },
}

/// Who approves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApproveArg {
    /// Ask a person on the terminal.
    Ask,
    /// Approve what the policies allow.
    All,
    /// Refuse every consequential action.
    None,
}

/// `hands read`.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The page.
    pub url: String,
    /// Every element with a role (`all`), or only controls a person can operate
    /// (`interactive`).
    #[arg(long, value_enum, default_value_t = FilterArg::All)]
    pub filter: FilterArg,
    /// Print `BrowserReadV1` JSON.
    #[arg(long)]
    pub json: bool,
    /// Read in a running browser's active tab instead of starting one: its DevTools endpoint
    /// (`ws://127.0.0.1:9222/devtools/browser/…`). The browser is left running.
    #[arg(long, value_name = "WS_URL")]
    pub attach: Option<String>,
}

/// `read_page`'s filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FilterArg {
    /// Every element with a role.
    All,
    /// Only controls a person can operate.
    Interactive,
}

/// `hands policy`.
#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// An allowed origin pattern (`https://example.com`, `https://*.example.com:8443`).
    #[arg(long, value_name = "ORIGIN", required = true)]
    pub allow: Vec<String>,
    /// URLs to decide on.
    #[arg(last = true, required = true)]
    pub urls: Vec<String>,
}

/// `hands drill`.
#[derive(Debug, Args)]
pub struct DrillArgs {
    /// Which drill.
    #[arg(value_enum)]
    pub which: DrillKind,
    /// Which API the scripted model speaks.
    #[arg(long, value_enum, default_value_t = ProviderArg::Anthropic)]
    pub provider: ProviderArg,
    /// Where the drill's programs run.
    #[command(flatten)]
    pub isolation: SandboxArgs,
}

/// The drills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DrillKind {
    /// Write a note in a GUI editor on an Xvfb desktop and save it; verify the file.
    Desktop,
    /// Book a room in a local web app through Chromium; verify the booking in its database.
    Browser,
    /// Both, with both APIs.
    All,
}

/// The model APIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderArg {
    /// Anthropic Messages (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`).
    Anthropic,
    /// OpenAI Responses (`OPENAI_API_KEY`, `OPENAI_BASE_URL`).
    Openai,
}

/// Which desktop to act on.
#[derive(Debug, Args, Clone)]
pub struct DesktopArgs {
    /// Attach to this X display (default `$DISPLAY`).
    #[arg(long, value_name = ":N", conflicts_with = "spawn")]
    pub display: Option<String>,
    /// Spawn a private Xvfb display of this size instead (killed on exit).
    #[arg(long, value_name = "WIDTHxHEIGHT")]
    pub spawn: Option<Size>,
}

/// How screenshots are sized and encoded, and which tool shape the turn used.
#[derive(Debug, Args, Clone)]
pub struct SurfaceArgs {
    /// The model's image tier: `high` (long edge ≤ 2576 px, ≤ 4784 visual tokens; every
    /// computer_toolset_20260801 model) or `standard` (≤ 1568 px, ≤ 1.15 MP).
    #[arg(long, value_enum, default_value_t = TierArg::High)]
    pub tier: TierArg,
    /// An extra cap on the screenshot's long edge, in pixels.
    #[arg(long, value_name = "PX")]
    pub max_long_edge: Option<u32>,
    /// Capture pixels per screen pixel (2 for a HiDPI screen captured at twice its logical
    /// size); default: what the driver reports (1 on X11).
    #[arg(long, value_name = "RATIO")]
    pub device_pixel_ratio: Option<f64>,
    /// Encode images as JPEG at this quality (1–100) instead of PNG.
    #[arg(long, value_name = "QUALITY", value_parser = clap::value_parser!(u8).range(1..=100))]
    pub jpeg: Option<u8>,
    /// Do not append a screenshot to a batch that does not end with one.
    #[arg(long)]
    pub no_append_screenshot: bool,
    /// The tool shape the turn was produced with.
    #[arg(long, value_enum, default_value_t = ShapeArg::Toolset)]
    pub shape: ShapeArg,
    /// Members disabled in the toolset's `configs` (e.g. `--disable zoom`).
    #[arg(long, value_name = "MEMBER")]
    pub disable: Vec<String>,
}

/// Image tiers on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TierArg {
    /// Long edge ≤ 1568 px and ≤ 1.15 MP.
    Standard,
    /// Long edge ≤ 2576 px and ≤ 4784 visual tokens.
    High,
}

/// Tool shapes on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ShapeArg {
    /// `computer_toolset_20260801`: members with `toolset_name: "computer"`.
    Toolset,
    /// `computer_20251124` with `enable_zoom: true`.
    #[value(name = "computer_20251124")]
    Legacy20251124,
    /// `computer_20250124` (no zoom).
    #[value(name = "computer_20250124")]
    Legacy20250124,
}

impl SurfaceArgs {
    /// The toolset configuration these options describe.
    pub fn config(&self) -> anyhow::Result<ComputerConfig> {
        let shape = match self.shape {
            ShapeArg::Toolset => {
                let mut decl = ToolsetDeclaration::new();
                for name in &self.disable {
                    let member = hands_toolset::computer::members::Member::from_name(name)
                        .ok_or_else(|| {
                            anyhow::anyhow!("--disable {name}: not a computer member")
                        })?;
                    decl = decl.disable(member);
                }
                Shape::Toolset(decl)
            }
            ShapeArg::Legacy20251124 => Shape::Legacy20251124 { enable_zoom: true },
            ShapeArg::Legacy20250124 => Shape::Legacy20250124,
        };
        Ok(ComputerConfig {
            shape,
            sizing: ScreenshotSizing {
                tier: match self.tier {
                    TierArg::Standard => ImageTier::Standard,
                    TierArg::High => ImageTier::HighRes,
                },
                max_long_edge: self.max_long_edge,
            },
            image_format: match self.jpeg {
                Some(quality) => ImageFormat::Jpeg { quality },
                None => ImageFormat::Png,
            },
            append_screenshot: !self.no_append_screenshot,
            device_pixel_ratio: match self.device_pixel_ratio {
                Some(r) if !(r.is_finite() && r > 0.0) => {
                    anyhow::bail!("--device-pixel-ratio must be a positive number, got {r}")
                }
                other => other,
            },
            ..ComputerConfig::default()
        })
    }
}

/// `hands exec`.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Act on a desktop (X11).
    #[arg(long, required = true)]
    pub desktop: bool,
    #[command(flatten)]
    pub target: DesktopArgs,
    #[command(flatten)]
    pub surface: SurfaceArgs,
    /// Write every image of the answer here, as `<tool_use_id>-<n>.png|jpg`.
    #[arg(long, value_name = "DIR")]
    pub save_images: Option<PathBuf>,
    /// A saved assistant turn: the message JSON, or its `content` array. `-` reads stdin.
    #[arg(value_name = "TURN.json")]
    pub turn: PathBuf,
    /// Where a spawned desktop's programs run (`--spawn`).
    #[command(flatten)]
    pub isolation: SandboxArgs,
}

/// `hands demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Screen size of the spawned desktop.
    #[arg(long, default_value = "1280x800", value_name = "WIDTHxHEIGHT")]
    pub size: Size,
    /// Where to write the run's images and answer (default `runs/demo-<time>`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}
