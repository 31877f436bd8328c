//! `hands difftest CASES.jsonl`: hands' side of the differential suite (`difftest/`). Each line
//! of the file is one case of a surface; each is run through hands' own toolsets and runner on one
//! shared real Xvfb desktop and one shared real Chromium, and answered on stdout by one JSON line:
//! the wire blocks hands produced (images reduced to their size), which calls reached the driver,
//! and what refused to start. The suite compares these lines with what the official SDKs answer
//! for the same case (`difftest/README.md`).
//!
//! Surfaces: `claude_computer` (the computer toolset, turn by turn), `claude_browser` (Claude's
//! browser toolset), `fn_browser` (the function-tool browser toolset), `runner_anthropic` and
//! `runner_openai` (the runner against the suite's scripted stand-in API).

mod browser;
mod computer;
mod record;
mod runner;

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use base64::Engine as _;
use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::geometry::Size;
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::{Value, json};

use crate::cli::DifftestArgs;

/// The screen every desktop case sees: the SDK side's fake drivers report the same size.
pub const SCREEN: (u32, u32) = (1280, 800);

/// What the cases share: one Xvfb (each case connects to it afresh) and one Chromium (lent to a
/// case and taken back).
#[derive(Default)]
pub struct Env {
    xvfb: Option<X11Desktop>,
    browser: Option<CdpBrowser>,
}

impl Env {
    /// A new connection to the shared Xvfb, spawned on first use.
    pub fn desktop(&mut self) -> anyhow::Result<X11Desktop> {
        if self.xvfb.is_none() {
            let size = Size::new(SCREEN.0, SCREEN.1).context("screen size")?;
            self.xvfb = Some(X11Desktop::spawn(&XvfbConfig::new(size)).context("spawning Xvfb")?);
        }
        let display = self
            .xvfb
            .as_ref()
            .map(|d| d.display().to_owned())
            .unwrap_or_default();
        X11Desktop::connect(Some(&display)).with_context(|| format!("connecting to {display}"))
    }

    /// The shared Chromium, launched on first use; give it back with [`Env::give_back`].
    pub async fn browser(&mut self) -> anyhow::Result<CdpBrowser> {
        match self.browser.take() {
            Some(browser) => Ok(browser),
            None => CdpBrowser::launch(DriverConfig::default())
                .await
                .context("launching Chromium"),
        }
    }

    /// Returns the Chromium lent by [`Env::browser`].
    pub fn give_back(&mut self, browser: CdpBrowser) {
        self.browser = Some(browser);
    }
}

pub async fn run(args: DifftestArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.cases)
        .with_context(|| format!("reading {}", args.cases.display()))?;
    let mut env = Env::default();
    let mut out = std::io::stdout().lock();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<Value>(line) {
            Ok(case) => run_case(&mut env, &case).await,
            Err(e) => json!({"id": null, "harness_error": format!("line {}: {e}", n + 1)}),
        };
        writeln!(out, "{answer}")?;
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn run_case(env: &mut Env, case: &Value) -> Value {
    let id = case.get("id").cloned().unwrap_or(Value::Null);
    let surface = case.get("surface").and_then(Value::as_str).unwrap_or("");
    let started = std::time::Instant::now();
    let answer = match surface {
        "claude_computer" => computer::claude_computer(env, case).await,
        "claude_browser" => browser::claude_browser(env, case).await,
        "fn_browser" => browser::fn_browser(env, case).await,
        "runner_anthropic" => runner::anthropic(env, case).await,
        "runner_openai" => runner::openai(env, case).await,
        other => Err(anyhow::anyhow!("unknown surface {other:?}")),
    };
    let mut answer = answer.unwrap_or_else(|e| json!({"harness_error": format!("{e:#}")}));
    answer["id"] = id;
    answer["ms"] = json!(started.elapsed().as_millis());
    answer
}

/// `value` with the base64 data of every image replaced by its size, so answers stay small: an
/// Anthropic image block's `source.data`, and an OpenAI `image_url` data URL.
pub fn elide_images(mut value: Value) -> Value {
    elide(&mut value);
    value
}

fn elide(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(data)) = map.get("data")
                && map.get("type").and_then(Value::as_str) == Some("base64")
            {
                let size = png_size(data);
                map.insert("data".into(), json!(format!("<{size}>")));
            }
            if let Some(Value::String(url)) = map.get("image_url")
                && let Some((_, data)) = url.split_once(";base64,")
            {
                let size = png_size(data);
                map.insert("image_url".into(), json!(format!("<{size}>")));
            }
            map.values_mut().for_each(elide);
        }
        Value::Array(items) => items.iter_mut().for_each(elide),
        _ => {}
    }
}

/// `WIDTHxHEIGHT` of a base64 PNG (from its IHDR), `jpeg` for a JPEG, `?` otherwise.
fn png_size(data: &str) -> String {
    let head: String = data.chars().take(44).collect();
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(head.as_bytes()) else {
        return "?".into();
    };
    if bytes.len() >= 24 && bytes.starts_with(b"\x89PNG") {
        let w = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
        let h = u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
        return format!("{w}x{h}");
    }
    if bytes.starts_with(&[0xff, 0xd8]) {
        return "jpeg".into();
    }
    "?".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_reduced_to_their_size() {
        // A 1x1 PNG.
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
        let block = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}});
        assert_eq!(elide_images(block)["source"]["data"], json!("<1x1>"));
        let item =
            json!([{"type": "input_image", "image_url": format!("data:image/png;base64,{png}")}]);
        assert_eq!(elide_images(item)[0]["image_url"], json!("<1x1>"));
        assert_eq!(png_size("not base64!"), "?");
    }
}
