//! A run directory's ledger for `hands run`: created with the settings the run started with,
//! reopened by `--resume` (which takes those settings back, so `hands run --resume RUN_DIR`
//! alone continues the same run), and the advice printed when a resume is refused.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use hands_runner::RunError;
use hands_runner::ledger::SqliteLedger;
use serde::{Deserialize, Serialize};

use crate::cli::{ProviderArg, RemoteToolArgs};

/// The ledger's file in a run directory.
pub const LEDGER_FILE: &str = "ledger.sqlite";
/// The single checkpoint file of run directories written before the SQLite ledger.
pub const OLD_CHECKPOINT_FILE: &str = "checkpoint.json";
/// The ledger value holding the settings a run started with.
const LAUNCH_KEY: &str = "hands.launch";
/// The ledger's metadata key for how isolated the run was (`hands runs show`).
pub const SANDBOX_KEY: &str = "hands.sandbox";
/// Test hook for crash tests: `hands run` stops inside the save of this checkpoint revision
/// (after writing it, before committing it), prints [`PAUSED_IN_SAVE`] on stderr and waits to
/// be killed. Never set outside tests.
pub const PAUSE_AT_REVISION_ENV: &str = "HANDS_TEST_PAUSE_AT_REVISION";
/// What `hands run` prints when [`PAUSE_AT_REVISION_ENV`] stops it.
pub const PAUSED_IN_SAVE: &str = "hands: paused inside a ledger save";

/// The settings a run started with, kept in its ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    /// `anthropic` or `openai`.
    pub provider: String,
    /// The model.
    pub model: String,
    /// The step limit.
    pub max_steps: u32,
    /// Whether it acted on a desktop.
    pub desktop: bool,
    /// The X display it attached to, if it did not spawn one.
    pub display: Option<String>,
    /// The browser's start URL, if it had a browser.
    pub browser: Option<String>,
    /// The browser's allowed origins as given.
    pub allow_origin: Vec<String>,
    /// Streaming.
    pub stream: bool,
    /// Eager execution.
    pub eager: bool,
    /// The task.
    pub task: String,
    /// Remote MCP servers and server tools as given, MCP URLs as SHA-256 fingerprints
    /// ([`crate::remote::RemoteTools::saved_args`]: `--resume` takes the URLs again) and token
    /// variables by name (the tokens are read from the environment again).
    #[serde(default)]
    pub remote: RemoteToolArgs,
    /// `--thinking` as given.
    #[serde(default)]
    pub thinking: Option<String>,
    /// `--effort` as given.
    #[serde(default)]
    pub effort: Option<String>,
    /// `--no-parallel-tools`.
    #[serde(default)]
    pub no_parallel_tools: bool,
    /// `--threads`.
    #[serde(default)]
    pub threads: bool,
    /// `--sandbox`, `--workspace`, `--workspace-bind` (a run resumes as it started).
    #[serde(default)]
    pub isolation: crate::cli::SandboxArgs,
}

impl Launch {
    /// The provider as the command line spells it.
    pub fn provider(&self) -> Option<ProviderArg> {
        match self.provider.as_str() {
            "anthropic" => Some(ProviderArg::Anthropic),
            "openai" => Some(ProviderArg::Openai),
            _ => None,
        }
    }

    /// How `provider` is kept.
    pub fn provider_name(provider: ProviderArg) -> &'static str {
        match provider {
            ProviderArg::Anthropic => "anthropic",
            ProviderArg::Openai => "openai",
        }
    }
}

/// The ledger of a run directory.
pub fn ledger_path(run_dir: &Path) -> PathBuf {
    run_dir.join(LEDGER_FILE)
}

/// Creates the ledger of a new run in `run_dir`, keeping `launch` in it.
pub fn create(run_dir: &Path, launch: &Launch) -> anyhow::Result<SqliteLedger> {
    let name = run_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".to_owned());
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let run_id = format!("{name}-{:08x}", nanos ^ std::process::id());
    let mut ledger = SqliteLedger::create(&ledger_path(run_dir), &run_id)
        .with_context(|| format!("creating the run's ledger in {}", run_dir.display()))?;
    ledger.set_meta(LAUNCH_KEY, &serde_json::to_string(launch)?)?;
    pause_hook(&mut ledger);
    Ok(ledger)
}

/// Opens the ledger of the run in `run_dir` to resume it (owning it: a second process is
/// refused), with the settings it started with.
pub fn open(run_dir: &Path) -> anyhow::Result<(SqliteLedger, Launch)> {
    let path = ledger_path(run_dir);
    if !path.exists() {
        if run_dir.join(OLD_CHECKPOINT_FILE).exists() {
            anyhow::bail!(
                "{} was written by an older hands (a single checkpoint.json, without the run's identity): \
                 it cannot be resumed safely by this version; start a new run",
                run_dir.display()
            );
        }
        anyhow::bail!(
            "{} holds no run ledger ({LEDGER_FILE}): give the directory of a run started by `hands run`",
            run_dir.display()
        );
    }
    let mut ledger = SqliteLedger::open(&path)?;
    let launch = ledger
        .meta(LAUNCH_KEY)?
        .context("the ledger does not say how the run started")?;
    let launch: Launch =
        serde_json::from_str(&launch).context("the settings the run started with")?;
    pause_hook(&mut ledger);
    Ok((ledger, launch))
}

/// Installs the [`PAUSE_AT_REVISION_ENV`] test hook when it is set.
fn pause_hook(ledger: &mut SqliteLedger) {
    let Some(at) = std::env::var(PAUSE_AT_REVISION_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    else {
        return;
    };
    ledger.set_before_commit(move |revision| {
        if revision == at {
            eprintln!("{PAUSED_IN_SAVE} (revision {revision})");
            // Held inside the transaction until the test kills the process.
            std::thread::sleep(Duration::from_secs(120));
        }
        Ok(())
    });
}

/// What to tell a person whose resume was refused.
pub fn refusal(run_dir: &Path, error: &RunError) -> anyhow::Error {
    let dir = run_dir.display();
    match error {
        RunError::NeedsReconciliation(_) => anyhow::anyhow!(
            "{error}.\nSee what each call was with `hands runs show {dir}`, check the environment, then record it:\n    \
             hands runs reconcile {dir} CALL_ID --happened     (or --not-happened, with --note \"what you saw\")\n\
             and resume again."
        ),
        RunError::IdentityChanged(_) => anyhow::anyhow!(
            "{error}.\nResume with the run's own settings (`hands runs show {dir}` lists them), or start a new run."
        ),
        other => anyhow::anyhow!("{other}"),
    }
}
