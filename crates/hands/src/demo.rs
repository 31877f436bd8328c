//! `hands demo`: spawn a desktop with a window manager and a text editor, replay a sample Claude
//! turn on it through the computer toolset, and show what came back.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context as _;
use hands_core::CancellationToken;
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_toolset::wire::{ResultBlock, ToolUse, user_message};

use crate::cli::DemoArgs;
use crate::environment::{DesktopApps, DesktopEnv};
use crate::exec::save_images;
use crate::rundir::RunDir;

/// The sample turn: a batch a model could send to write a note in the editor.
const SAMPLE_TURN: &str = include_str!("../assets/sample-turn.json");

pub async fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let out = args.out.unwrap_or_else(|| RunDir::default_path("demo"));
    let started = Instant::now();
    let env = DesktopEnv::spawn(
        hands_x11::XvfbConfig::new(args.size),
        DesktopApps::WithEditor,
    )
    .await?;
    let DesktopEnv {
        clients: _clients,
        desktop,
    } = env;
    eprintln!("hands demo: desktop {} on {}", args.size, desktop.display());
    eprintln!(
        "hands demo: editor is up after {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let turn: serde_json::Value = serde_json::from_str(SAMPLE_TURN)?;
    let blocks = ToolUse::from_message(&turn)?;
    let mut toolset = ComputerToolset::new(desktop, ComputerConfig::default())?;
    eprintln!(
        "hands demo: replaying {} blocks; screenshots are {} for a {} screen",
        blocks.len(),
        toolset.frame().shot(),
        toolset.frame().screen()
    );
    let t = Instant::now();
    let outcome = toolset.run_turn(&blocks, &CancellationToken::new()).await;
    let elapsed = t.elapsed();

    for (block, result) in blocks.iter().zip(&outcome.results) {
        let what: Vec<String> = result
            .content
            .iter()
            .map(|c| match c {
                ResultBlock::Text(t) => format!("{t:?}"),
                ResultBlock::Image(i) => format!(
                    "<{} {} {} KB>",
                    i.media_type.mime(),
                    i.size,
                    i.base64.len() / 1024
                ),
            })
            .collect();
        println!(
            "{:<16} {:<16} {}{}",
            block.id,
            block.name,
            if result.is_error { "ERROR " } else { "" },
            what.join(" + ")
        );
    }
    println!(
        "batch of {} blocks answered in {:.0} ms",
        blocks.len(),
        elapsed.as_secs_f64() * 1e3
    );
    let n = save_images(&out, &outcome.results)?;
    let answer = out.join("answer.json");
    std::fs::write(
        &answer,
        serde_json::to_string_pretty(&user_message(&outcome.results))?,
    )
    .with_context(|| format!("writing {}", answer.display()))?;
    println!(
        "wrote the answering user message and {n} image(s) to {}",
        out.display()
    );
    if let Some(fault) = outcome.fault {
        anyhow::bail!("the desktop failed: {fault}");
    }
    let errors = outcome.results.iter().filter(|r| r.is_error).count();
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        eprintln!("hands demo: {errors} block(s) failed");
        ExitCode::FAILURE
    })
}
