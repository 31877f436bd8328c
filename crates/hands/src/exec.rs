//! `hands exec`: execute one saved Claude turn against a desktop and print the answering `user`
//! message.
//!
//! Every block is answered: one whose fields do not read (a `toolset_name` that is not a string,
//! a number out of range, nesting too deep) gets an error of its own and the rest of the turn
//! runs. Once the actions ran, the answer is printed before anything else can fail: images are
//! saved afterwards, under names derived safely from the ids, and an I/O error there is reported
//! on stderr (exit status 1) without losing the answer.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use hands_core::CancellationToken;
use hands_core::image::MediaType;
use hands_toolset::computer::ComputerToolset;
use hands_toolset::wire::{ToolResult, ToolUse, TurnBlock, user_message};
use hands_x11::X11Desktop;

use crate::cli::{DesktopArgs, ExecArgs};

/// The answer to a block no toolset of `hands exec` handles: the message stays valid (every
/// `tool_use` answered) and says why nothing ran.
pub const NOT_A_COMPUTER_ACTION: &str =
    "not executed: hands exec runs only computer actions, and this block is another tool";

/// The longest tool_use id used as it is in an image file name.
const MAX_ID_IN_NAME: usize = 64;
/// How much of an id a hashed file name keeps, for a person to recognise it.
const ID_PREFIX_IN_NAME: usize = 32;

pub async fn run(args: ExecArgs) -> anyhow::Result<ExitCode> {
    let blocks = ToolUse::blocks_from_text(&read_turn_text(&args.turn)?)
        .with_context(|| format!("reading the turn in {}", args.turn.display()))?;
    // The jail (when spawning) lives as long as this function: dropped after the desktop.
    let mut episode = args.isolation.episode();
    let desktop = open_desktop(&args.target, &mut episode)?;
    let config = args.surface.config()?;
    let mut toolset = ComputerToolset::new(desktop, config)?;
    let outcome = toolset
        .run_turn_blocks(&blocks, &CancellationToken::new())
        .await;

    // Answer in block order: the computer results, and a refusal for any other block.
    let mut computer = outcome.results.into_iter();
    let results: Vec<ToolResult> = blocks
        .iter()
        .map(|block| {
            let not_mine = || match block {
                TurnBlock::Use(tool_use) => ToolResult::error(tool_use, NOT_A_COMPUTER_ACTION),
                TurnBlock::Unreadable { tool_use, why } => {
                    ToolResult::error(tool_use, format!("not executed: {why}"))
                }
            };
            if toolset.owns_block(block) {
                computer.next().unwrap_or_else(not_mine)
            } else {
                not_mine()
            }
        })
        .collect();

    // The actions ran: the answer goes out first, whatever happens next.
    let message = serde_json::to_string_pretty(&user_message(&results))?;
    let mut failed = false;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{message}").and_then(|()| stdout.flush()) {
        eprintln!("hands: could not print the answer: {e}");
        failed = true;
    }
    if let Some(dir) = &args.save_images {
        match save_images(dir, &results) {
            Ok(n) => eprintln!("hands: wrote {n} image(s) to {}", dir.display()),
            Err(e) => {
                eprintln!(
                    "hands: the answer above is complete, but saving its images failed: {e:#}"
                );
                failed = true;
            }
        }
    }
    if let Some(fault) = outcome.fault {
        eprintln!("hands: the desktop failed: {fault}");
        failed = true;
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Reads a turn's text from a file, or stdin for `-`.
pub fn read_turn_text(path: &Path) -> anyhow::Result<String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the turn from stdin")?;
        Ok(text)
    } else {
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
    }
}

/// Spawns (in `episode`: its jail, or the host) or attaches to the desktop the options name.
pub fn open_desktop(
    target: &DesktopArgs,
    episode: &mut crate::sandbox::Episode,
) -> anyhow::Result<X11Desktop> {
    Ok(match target.spawn {
        Some(size) => {
            let config = episode.xvfb_config(size, crate::policy::episode_policy(&[])?)?;
            X11Desktop::spawn(&config)
                .with_context(|| format!("spawning an Xvfb desktop of {size}"))?
        }
        None => X11Desktop::connect(target.display.as_deref()).context(
            "attaching to the X display (give --display :N, set $DISPLAY, or use --spawn WIDTHxHEIGHT)",
        )?,
    })
}

/// Writes each image as `<name>-<n>.<ext>` ([`image_file_name`]); returns how many.
pub fn save_images(dir: &Path, results: &[ToolResult]) -> anyhow::Result<usize> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut n = 0;
    for result in results {
        for (i, image) in result.images().enumerate() {
            let ext = match image.media_type {
                MediaType::Png => "png",
                MediaType::Jpeg => "jpg",
            };
            let path = dir.join(image_file_name(&result.tool_use_id, i, ext));
            std::fs::write(&path, image.bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            n += 1;
        }
    }
    Ok(n)
}

/// The file name of image `n` of the result answering `id` (an id the model chose): the id
/// itself when it is 1–64 characters of `[A-Za-z0-9_-]`; otherwise its first 32 characters
/// (others as `_`) and a 64-bit FNV-1a hash of the whole id, so a long id stays far below
/// any file-name limit and two ids never share a name by losing their differences.
pub fn image_file_name(id: &str, n: usize, ext: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if !id.is_empty() && id.len() <= MAX_ID_IN_NAME && id.chars().all(safe) {
        return format!("{id}-{n}.{ext}");
    }
    let mut prefix: String = id
        .chars()
        .take(ID_PREFIX_IN_NAME)
        .map(|c| if safe(c) { c } else { '_' })
        .collect();
    if prefix.is_empty() {
        prefix.push_str("id");
    }
    format!("{prefix}-{:016x}-{n}.{ext}", fnv1a(id.as_bytes()))
}

/// 64-bit FNV-1a: stable across runs and platforms, for names only (not a security hash).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names_are_bounded_safe_and_distinct() {
        assert_eq!(
            image_file_name("toolu_01Ab-9", 0, "png"),
            "toolu_01Ab-9-0.png"
        );
        let long = "x".repeat(100_000);
        let name = image_file_name(&long, 3, "jpg");
        assert!(name.len() < 80, "{name}");
        assert!(name.starts_with(&"x".repeat(32)) && name.ends_with("-3.jpg"));
        for hostile in [
            "../../etc/passwd",
            "a/b",
            "",
            ".",
            "..",
            "toolu\n\u{202e}x",
            "é",
        ] {
            let name = image_file_name(hostile, 0, "png");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)),
                "{name}"
            );
            assert!(!name.starts_with('.') && !name.starts_with('-'), "{name}");
        }
        // Ids that clean up the same still get different names.
        assert_ne!(
            image_file_name("a/b", 0, "png"),
            image_file_name("a_b", 0, "png")
        );
        assert_ne!(
            image_file_name("a/b", 0, "png"),
            image_file_name("a:b", 0, "png")
        );
        // 64 characters is kept; 65 is hashed.
        let edge = "t".repeat(64);
        assert_eq!(image_file_name(&edge, 0, "png"), format!("{edge}-0.png"));
        assert_ne!(
            image_file_name(&"t".repeat(65), 0, "png"),
            format!("{}-0.png", "t".repeat(65))
        );
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
