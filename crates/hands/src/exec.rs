//! `hands exec`: execute one saved Claude turn against a desktop and print the answering `user`
//! message.

use std::io::Read as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use hands_core::CancellationToken;
use hands_core::image::MediaType;
use hands_toolset::computer::ComputerToolset;
use hands_toolset::wire::{ToolResult, ToolUse, user_message};
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::Value;

use crate::cli::{DesktopArgs, ExecArgs};

/// The answer to a block no toolset of `hands exec` handles: the message stays valid (every
/// `tool_use` answered) and says why nothing ran.
pub const NOT_A_COMPUTER_ACTION: &str =
    "not executed: hands exec runs only computer actions, and this block is another tool";

pub async fn run(args: ExecArgs) -> anyhow::Result<ExitCode> {
    let turn = read_turn(&args.turn)?;
    let blocks = ToolUse::from_message(&turn).context("reading the turn")?;
    let desktop = open_desktop(&args.target)?;
    let config = args.surface.config()?;
    let mut toolset = ComputerToolset::new(desktop, config)?;
    let outcome = toolset.run_turn(&blocks, &CancellationToken::new()).await;

    // Answer in block order: the computer results, and a refusal for any other tool's block.
    let mut computer = outcome.results.into_iter();
    let results: Vec<ToolResult> = blocks
        .iter()
        .map(|block| {
            if toolset.owns(block) {
                computer
                    .next()
                    .unwrap_or_else(|| ToolResult::error(block, NOT_A_COMPUTER_ACTION))
            } else {
                ToolResult::error(block, NOT_A_COMPUTER_ACTION)
            }
        })
        .collect();

    if let Some(dir) = &args.save_images {
        let n = save_images(dir, &results)?;
        eprintln!("hands: wrote {n} image(s) to {}", dir.display());
    }
    let message = user_message(&results);
    println!("{}", serde_json::to_string_pretty(&message)?);
    if let Some(fault) = outcome.fault {
        eprintln!("hands: the desktop failed: {fault}");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads a turn from a file, or stdin for `-`.
pub fn read_turn(path: &Path) -> anyhow::Result<Value> {
    let text = if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the turn from stdin")?;
        text
    } else {
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?
    };
    serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))
}

/// Spawns or attaches to the desktop the options name.
pub fn open_desktop(target: &DesktopArgs) -> anyhow::Result<X11Desktop> {
    Ok(match target.spawn {
        Some(size) => X11Desktop::spawn(&XvfbConfig::new(size))
            .with_context(|| format!("spawning an Xvfb desktop of {size}"))?,
        None => X11Desktop::connect(target.display.as_deref()).context(
            "attaching to the X display (give --display :N, set $DISPLAY, or use --spawn WIDTHxHEIGHT)",
        )?,
    })
}

/// Writes each image as `<tool_use_id>-<n>.<ext>`; returns how many.
pub fn save_images(dir: &Path, results: &[ToolResult]) -> anyhow::Result<usize> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut n = 0;
    for result in results {
        for (i, image) in result.images().enumerate() {
            let ext = match image.media_type {
                MediaType::Png => "png",
                MediaType::Jpeg => "jpg",
            };
            // Ids come from the model: keep only characters that are safe in a file name.
            let id: String = result
                .tool_use_id
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let path = dir.join(format!("{id}-{i}.{ext}"));
            std::fs::write(&path, image.bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            n += 1;
        }
    }
    Ok(n)
}
