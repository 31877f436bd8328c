//! `hands drill desktop`: on a spawned Xvfb desktop with a window manager and Debian's mousepad,
//! a scripted model writes a note and saves it through the real runner and computer toolset;
//! the drill then reads the file on disk.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use hands_core::Desktop;
use hands_core::geometry::Size;
use hands_runner::approval::ApproveAll;
use hands_runner::{AnthropicSettings, OpenAiSettings, RunConfig, Runner, Toolbox};
use hands_sim::{SimConfig, SimServer};
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_toolset::computer_call::{ComputerCallConfig, ComputerCallExecutor};

use super::desktop_policy::{self, NoteTask};
use super::{anthropic_client, openai_client, run_and_check};
use crate::cli::{ProviderArg, SandboxArgs};
use crate::environment::{DesktopApps, DesktopEnv};

/// The screen of the drill: the editor opens centred, 640x480.
const SCREEN: (u32, u32) = (1280, 800);

/// Runs the drill; `Ok(true)` when everything it checked holds.
pub async fn run(provider: ProviderArg, isolation: &SandboxArgs) -> anyhow::Result<bool> {
    let started = Instant::now();
    let dir = tempfile::Builder::new()
        .prefix("hands-drill-desktop-")
        .tempdir()
        .context("creating the drill's directory")?;
    eprintln!("hands drill desktop ({provider:?}): spawning a desktop with mousepad…");
    let size = Size::new(SCREEN.0, SCREEN.1).context("screen size")?;
    // In a jail the editor saves in the episode's home; the drill reads it from the host side.
    let mut episode = isolation.episode();
    let config = episode.xvfb_config(size, crate::policy::episode_policy(&[])?)?;
    let (path, inside) = match episode.desktop_jail() {
        Some(jail) => (
            jail.home_dir().join("note.txt"),
            format!("{}/note.txt", hands_jail::layout::JAIL_HOME),
        ),
        None => {
            let path = dir.path().join("note.txt");
            let inside = path.display().to_string();
            (path, inside)
        }
    };
    let task = NoteTask {
        note: "Drill note from hands: ünïcödé ✓, tabs\tand a second line.\nSecond line.".into(),
        path: inside,
        editor_point: (SCREEN.0 / 2, SCREEN.1 / 2 + 20),
    };
    let env = DesktopEnv::spawn(config, DesktopApps::WithEditor).await?;
    let DesktopEnv {
        clients: _clients,
        desktop,
    } = env;
    eprintln!(
        "  desktop {size} on {} ready after {:.1} s",
        desktop.display(),
        started.elapsed().as_secs_f64()
    );
    let boxed: Box<dyn Desktop> = Box::new(desktop);
    let (sim, mut runner) = match provider {
        ProviderArg::Anthropic => {
            let sim = SimServer::start(SimConfig::with_policy(desktop_policy::anthropic(
                task.clone(),
            )))?;
            let computer = ComputerToolset::new(boxed, ComputerConfig::default())?;
            let runner = Runner::anthropic(
                anthropic_client(&sim)?,
                AnthropicSettings::new("claude-opus-5"),
                Some(computer),
                Toolbox::default(),
                RunConfig::default(),
            );
            (sim, runner)
        }
        ProviderArg::Openai => {
            let sim =
                SimServer::start(SimConfig::with_policy(desktop_policy::openai(task.clone())))?;
            let executor = ComputerCallExecutor::new(boxed, ComputerCallConfig::default());
            let runner = Runner::openai(
                openai_client(&sim)?,
                OpenAiSettings::new("computer-use-2"),
                Some(executor),
                Toolbox::default(),
                RunConfig::default(),
            );
            (sim, runner)
        }
    };
    eprintln!("  simulated model API on {}", sim.base_url());
    runner.set_approver(Box::new(ApproveAll));
    let (_, mut verdicts) = run_and_check(runner, provider, &task.prompt(), &sim).await?;
    // The editor writes the file after the key that saves it: on a busy machine that can be
    // after the model's last look. A person would glance again; the check waits up to 5 s.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !path.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    match std::fs::read_to_string(&path) {
        Ok(saved) => {
            // Editors may end the file with a newline; the note itself must be there exactly.
            let same = saved.trim_end_matches('\n') == task.note;
            verdicts.check(
                same,
                format!(
                    "{} holds the note exactly ({} bytes{})",
                    path.display(),
                    saved.len(),
                    if same { "" } else { ", but different text" }
                ),
            );
            if !same {
                eprintln!("    expected {:?}\n    found    {:?}", task.note, saved);
            }
        }
        Err(e) => verdicts.check(false, format!("{} exists: {e}", path.display())),
    }
    let passed = verdicts.report();
    eprintln!(
        "hands drill desktop: {} in {:.1} s",
        if passed { "PASSED" } else { "FAILED" },
        started.elapsed().as_secs_f64()
    );
    Ok(passed)
}
