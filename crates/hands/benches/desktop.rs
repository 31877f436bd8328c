//! The desktop benchmark of issue 2: hands' in-process pipeline against the reference harness's
//! (Anthropic's computer-use demo: one `sh -c "xdotool …"` per action, `scrot -p` to a file,
//! ImageMagick `convert -resize WxH!`, base64 of the file, a fixed 2 s sleep before the screenshot
//! of every action but `type`), measured side by side in one run on one Xvfb.
//!
//! Run with `cargo bench -p hands --bench desktop`. It prints medians and p90s, and the ratios:
//! - (a) capture + scale + encode + base64 of a 1280x800 screen to 1024x640;
//! - (b) a click, then a settled screenshot, on a static window;
//! - (c) typing 1,000 characters, done when the X client has received all of them; then, hands and
//!   `xdotool type` side by side, the long mixed text of issue 9 (2,000 characters, 300 distinct
//!   ones no layout has), exact or not and the MappingNotify events each sent;
//! - (d) a 20-block batch of mixed actions ending in a screenshot;
//! - (e) `ctrl+s` in mousepad (openbox managing it, on a second Xvfb), then the closing
//!   screenshot: how long, and how often it still shows the document instead of the save dialog
//!   (a screenshot is stale when it differs from the screen before the key in under 2% of its
//!   pixels; the reference's own PNG is decoded and compared at its size).
//!
//! The X client is hands-testkit's recorder: a static full-screen window holding the focus, which
//! also tells when typed text has arrived (it answers `_NET_WM_PING` as GTK does). Nothing here
//! asserts a number: the table is the output.
//!
//! Set `HANDS_BENCH_QUICK=1` for a smoke run with a handful of iterations.

#![allow(clippy::print_stdout, reason = "a benchmark binary prints its table")]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use base64::Engine as _;
use hands_core::desktop::SettleBudget;
use hands_core::geometry::ScreenPoint;
use hands_core::geometry::{ImageTier, ScreenshotSizing, Size};
use hands_core::image::Pixels;
use hands_core::image::{ImageFormat, encode};
use hands_core::input::{Button, KeyChord, ModifierSet};
use hands_core::{CancellationToken, Desktop as _};
use hands_testkit::InputRecorder;
use hands_testkit::texts::long_mixed;
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_toolset::wire::ToolUse;
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::{Value, json};

const SCREEN: (u32, u32) = (1280, 800);
const SHOT: (u32, u32) = (1024, 640);
/// The reference's `_screenshot_delay`.
const REFERENCE_DELAY: Duration = Duration::from_secs(2);
/// The reference types in chunks of this many characters, one xdotool process each.
const REFERENCE_TYPE_CHUNK: usize = 50;

fn main() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run())
}

/// Iteration counts, scaled down for a smoke run.
struct Plan {
    quick: bool,
}

impl Plan {
    fn n(&self, full: usize) -> usize {
        if self.quick { full.clamp(1, 2) } else { full }
    }
}

/// Medians and p90s of one measurement.
struct Stats {
    samples: Vec<Duration>,
}

impl Stats {
    fn new(mut samples: Vec<Duration>) -> Stats {
        samples.sort();
        Stats { samples }
    }
    fn quantile(&self, q: f64) -> Duration {
        if self.samples.is_empty() {
            return Duration::ZERO;
        }
        // Nearest rank.
        let rank = (q * self.samples.len() as f64).ceil() as usize;
        self.samples[rank.clamp(1, self.samples.len()) - 1]
    }
    fn median(&self) -> Duration {
        let n = self.samples.len();
        if n == 0 {
            return Duration::ZERO;
        }
        if n % 2 == 1 {
            self.samples[n / 2]
        } else {
            (self.samples[n / 2 - 1] + self.samples[n / 2]) / 2
        }
    }
    fn p90(&self) -> Duration {
        self.quantile(0.9)
    }
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 1000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", ms / 1e3)
    }
}

/// The reference pipeline, as the computer-use demo runs it.
struct Reference {
    display: String,
    dir: PathBuf,
    n_shots: u64,
}

impl Reference {
    fn new(display: &str) -> anyhow::Result<Reference> {
        for tool in ["xdotool", "scrot", "convert"] {
            let found = Command::new("sh")
                .arg("-c")
                .arg(format!("command -v {tool}"))
                .stdout(Stdio::null())
                .status()?
                .success();
            ensure!(
                found,
                "{tool} is missing: run scripts/install-system-deps.sh"
            );
        }
        let dir = std::env::temp_dir().join(format!("hands-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Reference {
            display: display.to_owned(),
            dir,
            n_shots: 0,
        })
    }

    /// One shell command, as the demo's `run()` does (`shell=True`).
    fn sh(&self, command: &str) -> anyhow::Result<()> {
        let output = Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running {command}"))?;
        if !output.status.success() {
            bail!(
                "{command} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(())
    }

    fn xdotool(&self, args: &str) -> anyhow::Result<()> {
        self.sh(&format!("DISPLAY={} xdotool {args}", self.display))
    }

    /// `scrot -p` to a fresh file, `convert -resize WxH!` in place, base64 of the file.
    fn screenshot(&mut self) -> anyhow::Result<String> {
        self.n_shots += 1;
        let path = self.dir.join(format!("screenshot_{}.png", self.n_shots));
        let path_text = path.display();
        self.sh(&format!("DISPLAY={} scrot -p {path_text}", self.display))?;
        self.sh(&format!(
            "convert {path_text} -resize {}x{}! {path_text}",
            SHOT.0, SHOT.1
        ))?;
        let bytes = std::fs::read(&path)?;
        Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    /// An action: its xdotool command, the fixed delay if asked, then a screenshot.
    async fn action(&mut self, args: &str, delay: bool) -> anyhow::Result<String> {
        self.xdotool(args)?;
        if delay {
            tokio::time::sleep(REFERENCE_DELAY).await;
        }
        self.screenshot()
    }

    /// `type`: 50-character chunks, one `xdotool type --delay 12` each; no delay, one screenshot.
    fn type_text(&self, text: &str) -> anyhow::Result<()> {
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(REFERENCE_TYPE_CHUNK) {
            let chunk: String = chunk.iter().collect();
            self.xdotool(&format!("type --delay 12 -- {}", shell_quote(&chunk)))?;
        }
        Ok(())
    }

    fn clean(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = std::fs::create_dir_all(&self.dir);
    }
}

impl Drop for Reference {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// One block of the mixed batch: what the model sends, and what the reference runs for it.
enum Step {
    /// An xdotool action followed by the reference's delay and screenshot.
    Action(Value, String),
    /// `type`: chunks, then a screenshot without the delay.
    Type(Value, String),
    /// The final screenshot.
    Screenshot(Value),
}

/// A model coordinate (screenshot pixels) as the reference's screen coordinate.
fn to_screen(x: u32, y: u32) -> (u32, u32) {
    (x * SCREEN.0 / SHOT.0, y * SCREEN.1 / SHOT.1)
}

fn click(name: &str, x: u32, y: u32, xdo_click: &str) -> Step {
    let (sx, sy) = to_screen(x, y);
    Step::Action(
        json!({"name": name, "input": {"coordinate": [x, y]}}),
        format!("mousemove --sync {sx} {sy} {xdo_click}"),
    )
}

fn key(text: &str) -> Step {
    Step::Action(
        json!({"name": "key", "input": {"text": text}}),
        format!("key -- {text}"),
    )
}

fn typed(text: &str) -> Step {
    Step::Type(
        json!({"name": "type", "input": {"text": text}}),
        text.to_owned(),
    )
}

fn scroll(direction: &str, amount: u32, x: u32, y: u32) -> Step {
    let (sx, sy) = to_screen(x, y);
    let button = match direction {
        "up" => 4,
        "down" => 5,
        "left" => 6,
        _ => 7,
    };
    Step::Action(
        json!({"name": "scroll", "input": {"coordinate": [x, y], "scroll_direction": direction,
               "scroll_amount": amount}}),
        format!("mousemove --sync {sx} {sy} click --repeat {amount} {button}"),
    )
}

/// Twenty blocks of the kind a model batches, ending in a screenshot.
fn mixed_batch() -> Vec<Step> {
    let (x0, y0) = to_screen(100, 100);
    let (x1, y1) = to_screen(300, 300);
    let (mx, my) = to_screen(600, 400);
    vec![
        Step::Action(
            json!({"name": "mouse_move", "input": {"coordinate": [100, 100]}}),
            format!("mousemove --sync {x0} {y0}"),
        ),
        click("left_click", 200, 150, "click 1"),
        typed("hello world"),
        key("ctrl+a"),
        key("Return"),
        click("double_click", 300, 200, "click --repeat 2 --delay 10 1"),
        scroll("down", 3, 512, 320),
        click("right_click", 400, 300, "click 3"),
        key("Escape"),
        Step::Action(
            json!({"name": "left_click_drag",
                   "input": {"start_coordinate": [100, 100], "coordinate": [300, 300]}}),
            format!("mousemove --sync {x0} {y0} mousedown 1 mousemove --sync {x1} {y1} mouseup 1"),
        ),
        typed("second line of text"),
        key("Tab"),
        click("middle_click", 250, 250, "click 2"),
        scroll("up", 2, 512, 320),
        Step::Action(
            json!({"name": "mouse_move", "input": {"coordinate": [600, 400]}}),
            format!("mousemove --sync {mx} {my}"),
        ),
        click("left_click", 700, 500, "click 1"),
        key("ctrl+s"),
        click("triple_click", 500, 300, "click --repeat 3 --delay 10 1"),
        typed("done"),
        Step::Screenshot(json!({"name": "screenshot", "input": {}})),
    ]
}

/// The text typed in (c): 1,000 characters of prose.
fn thousand_chars() -> String {
    let sentence = "The quick brown fox jumps over the lazy dog; 0123456789 (ok) [x] {y} ~#@! ";
    sentence.chars().cycle().take(1000).collect()
}

fn blocks(calls: &[Value]) -> anyhow::Result<Vec<ToolUse>> {
    let content: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            json!({"type": "tool_use", "id": format!("toolu_bench_{i:03}"),
                   "name": call["name"], "toolset_name": "computer", "input": call["input"]})
        })
        .collect();
    Ok(ToolUse::from_message(&Value::Array(content))?)
}

/// Runs a turn and checks every block succeeded.
async fn run_turn(
    toolset: &mut ComputerToolset<X11Desktop>,
    calls: &[Value],
) -> anyhow::Result<()> {
    let uses = blocks(calls)?;
    let outcome = toolset.run_turn(&uses, &CancellationToken::new()).await;
    for result in &outcome.results {
        ensure!(
            !result.is_error,
            "a block failed: {:?}",
            result.text().unwrap_or_default()
        );
    }
    Ok(())
}

struct Row {
    name: &'static str,
    ours: Stats,
    reference: Stats,
    delayed: Option<Stats>,
}

async fn run() -> anyhow::Result<()> {
    let plan = Plan {
        quick: std::env::var_os("HANDS_BENCH_QUICK").is_some(),
    };
    let size = Size::new(SCREEN.0, SCREEN.1).context("screen size")?;
    let desktop = X11Desktop::spawn(&XvfbConfig::new(size))?;
    let display = desktop.display().to_owned();
    let recorder = InputRecorder::start(&display)?;
    let config = ComputerConfig {
        sizing: ScreenshotSizing {
            tier: ImageTier::Standard,
            max_long_edge: Some(1024),
        },
        append_screenshot: false,
        ..ComputerConfig::default()
    };
    let mut toolset = ComputerToolset::new(desktop, config)?;
    ensure!(
        toolset.frame().shot() == Size::new(SHOT.0, SHOT.1).context("shot size")?,
        "unexpected screenshot size {}",
        toolset.frame().shot()
    );
    let mut reference = Reference::new(&display)?;
    let started = Instant::now();
    println!(
        "hands desktop benchmark: Xvfb {display} at {}x{}, screenshots {}x{} PNG, {} run",
        SCREEN.0,
        SCREEN.1,
        SHOT.0,
        SHOT.1,
        if plan.quick { "quick" } else { "full" }
    );
    let mut rows = Vec::new();

    // (a) Capture, scale, encode, base64. One untimed warm-up run first, everywhere.
    let target = Size::new(SHOT.0, SHOT.1).context("shot size")?;
    let (mut t_capture, mut t_resize, mut t_encode, mut t_total) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..=plan.n(60) {
        let start = Instant::now();
        let pixels = toolset.desktop().capture().await?;
        let captured = Instant::now();
        let scaled = pixels.resize(target)?;
        let resized = Instant::now();
        let image = encode(&scaled, ImageFormat::Png)?;
        let done = Instant::now();
        ensure!(!image.base64.is_empty());
        if i > 0 {
            t_capture.push(captured - start);
            t_resize.push(resized - captured);
            t_encode.push(done - resized);
            t_total.push(done - start);
        }
    }
    let mut samples = Vec::new();
    for i in 0..=plan.n(15) {
        let start = Instant::now();
        let shot = reference.screenshot()?;
        ensure!(!shot.is_empty());
        if i > 0 {
            samples.push(start.elapsed());
        }
    }
    reference.clean();
    rows.push(Row {
        name: "(a) capture+scale+PNG+base64",
        ours: Stats::new(t_total),
        reference: Stats::new(samples),
        delayed: None,
    });
    let breakdown = [
        ("MIT-SHM capture", Stats::new(t_capture)),
        ("resize 1280x800 -> 1024x640", Stats::new(t_resize)),
        ("PNG encode + base64", Stats::new(t_encode)),
    ];

    // (b) A click, then a settled screenshot.
    let spot = |i: usize| (100 + (i % 7) as u32 * 50, 300);
    let mut samples = Vec::new();
    for i in 0..=plan.n(30) {
        let (x, y) = spot(i);
        let calls = [
            json!({"name": "left_click", "input": {"coordinate": [x, y]}}),
            json!({"name": "screenshot", "input": {}}),
        ];
        let start = Instant::now();
        run_turn(&mut toolset, &calls).await?;
        if i > 0 {
            samples.push(start.elapsed());
        }
    }
    let ours = Stats::new(samples);
    // The settle alone, after a click on the static window.
    let mut settles = Vec::new();
    for i in 0..=plan.n(30) {
        let (x, y) = spot(i);
        let (sx, sy) = to_screen(x, y);
        let desktop = toolset.desktop();
        desktop
            .click(
                Some(ScreenPoint { x: sx, y: sy }),
                Button::Left,
                1,
                ModifierSet::NONE,
            )
            .await?;
        let start = Instant::now();
        desktop
            .settle(SettleBudget::default(), &CancellationToken::new())
            .await?;
        if i > 0 {
            settles.push(start.elapsed());
        }
    }
    let settle_b = Stats::new(settles);
    let mut reference_b = Vec::new();
    for (delay, n) in [(false, plan.n(15)), (true, plan.n(4))] {
        let mut samples = Vec::new();
        for i in 0..=n {
            let (x, y) = spot(i);
            let (sx, sy) = to_screen(x, y);
            let start = Instant::now();
            let shot = reference
                .action(&format!("mousemove --sync {sx} {sy} click 1"), delay)
                .await?;
            ensure!(!shot.is_empty());
            if i > 0 {
                samples.push(start.elapsed());
            }
        }
        reference.clean();
        reference_b.push(Stats::new(samples));
    }
    let delayed_b = reference_b.pop();
    let reference_b = reference_b.pop().context("reference (b)")?;
    rows.push(Row {
        name: "(b) click + settled screenshot",
        ours,
        reference: reference_b,
        delayed: delayed_b,
    });

    // (c) Typing 1,000 characters, done when the window has them all.
    let text = thousand_chars();
    let n_chars = text.chars().count();
    let mut samples = Vec::new();
    for i in 0..=plan.n(10) {
        let calls = [json!({"name": "type", "input": {"text": text}})];
        recorder.clear()?;
        let start = Instant::now();
        run_turn(&mut toolset, &calls).await?;
        let typed = recorder.wait_for_text(n_chars, Duration::from_secs(60))?;
        let elapsed = start.elapsed();
        ensure!(typed == text, "hands typed {typed:?}");
        if i > 0 {
            samples.push(elapsed);
        }
    }
    let ours = Stats::new(samples);
    let mut samples = Vec::new();
    for _ in 0..plan.n(2) {
        recorder.clear()?;
        let start = Instant::now();
        reference.type_text(&text)?;
        recorder.wait_for_text(n_chars, Duration::from_secs(120))?;
        samples.push(start.elapsed());
    }
    let reference_c = Stats::new(samples);
    // Ours only: text outside the layout. Accented prose binds a few spare keycodes once; a
    // thousand distinct ideographs rebind them all the time, waiting for clients to read the
    // mapping each round.
    let accented: String = "Größe, naïve façade, déjà vu: 5 € à l'été — ½ ° « ok » ¿qué? "
        .chars()
        .cycle()
        .take(1000)
        .collect();
    let ideographs: String = (0..1000u32)
        .filter_map(|i| char::from_u32(0x4e00 + i))
        .collect();
    let mut extra_typing = Vec::new();
    for (name, text) in [
        ("accented prose", &accented),
        ("1,000 distinct CJK ideographs", &ideographs),
    ] {
        let n = text.chars().count();
        let mut samples = Vec::new();
        for i in 0..=plan.n(3) {
            recorder.clear()?;
            let calls = [json!({"name": "type", "input": {"text": text}})];
            let start = Instant::now();
            run_turn(&mut toolset, &calls).await?;
            let typed = recorder.wait_for_text(n, Duration::from_secs(60))?;
            let elapsed = start.elapsed();
            ensure!(typed == *text, "hands typed {name} wrong");
            if i > 0 {
                samples.push(elapsed);
            }
        }
        let stats = Stats::new(samples);
        extra_typing.push((name, n as f64 / stats.median().as_secs_f64()));
    }
    // The long mixed text, once each: hands, then xdotool on its first 500 characters (it types
    // a few a second: the whole text would take minutes).
    let mut long_typing = Vec::new();
    for who in ["hands", "xdotool type"] {
        let long: String = long_mixed(2000)
            .chars()
            .take(if who == "hands" { 2000 } else { 500 })
            .collect();
        let n_long = long.chars().count();
        recorder.clear()?;
        let before = recorder.n_mapping_notifies();
        let start = Instant::now();
        if who == "hands" {
            run_turn(
                &mut toolset,
                &[json!({"name": "type", "input": {"text": long}})],
            )
            .await?;
        } else {
            reference.type_text(&long)?;
        }
        // xdotool's keys have all been sent when it returns, and may be wrong or missing.
        let typed = if who == "hands" {
            recorder
                .wait_for_text(n_long, Duration::from_secs(60))
                .unwrap_or_else(|_| recorder.typed_text())
        } else {
            recorder.sync()?;
            recorder.typed_text()
        };
        let elapsed = start.elapsed();
        recorder.sync()?;
        long_typing.push(LongTyping {
            who,
            seconds: elapsed.as_secs_f64(),
            wrong: hands_testkit::texts::wrong_positions(&long, &typed),
            n_chars: n_long,
            notifies: recorder.n_mapping_notifies() - before,
        });
    }
    let chars_per_s = |stats: &Stats| n_chars as f64 / stats.median().as_secs_f64();
    let typing = (chars_per_s(&ours), chars_per_s(&reference_c));
    rows.push(Row {
        name: "(c) type 1,000 characters",
        ours,
        reference: reference_c,
        delayed: None,
    });

    // (d) A 20-block batch ending in a screenshot.
    let steps = mixed_batch();
    let calls: Vec<Value> = steps
        .iter()
        .map(|s| match s {
            Step::Action(call, _) | Step::Type(call, _) | Step::Screenshot(call) => call.clone(),
        })
        .collect();
    ensure!(calls.len() == 20);
    let mut samples = Vec::new();
    for i in 0..=plan.n(10) {
        let start = Instant::now();
        run_turn(&mut toolset, &calls).await?;
        if i > 0 {
            samples.push(start.elapsed());
        }
    }
    let ours = Stats::new(samples);
    let mut reference_d = Vec::new();
    for (delay, n) in [(false, plan.n(3)), (true, 1)] {
        let mut samples = Vec::new();
        for _ in 0..n {
            let start = Instant::now();
            for step in &steps {
                match step {
                    Step::Action(_, xdo) => {
                        reference.action(xdo, delay).await?;
                    }
                    Step::Type(_, text) => {
                        reference.type_text(text)?;
                        reference.screenshot()?;
                    }
                    Step::Screenshot(_) => {
                        reference.screenshot()?;
                    }
                }
            }
            samples.push(start.elapsed());
            reference.clean();
        }
        reference_d.push(Stats::new(samples));
    }
    let delayed_d = reference_d.pop();
    let reference_d = reference_d.pop().context("reference (d)")?;
    rows.push(Row {
        name: "(d) 20-block mixed batch",
        ours,
        reference: reference_d,
        delayed: delayed_d,
    });

    // (e) ctrl+s in mousepad, on a desktop of its own.
    let (ctrl_s_rows, stale) = ctrl_s_in_mousepad(&plan, &mut reference).await?;
    rows.extend(ctrl_s_rows);

    print_table(&rows, &breakdown, typing, &extra_typing);
    println!(
        "(b) the settle alone after a click on the static window: median {} (p90 {}, n {})",
        ms(settle_b.median()),
        ms(settle_b.p90()),
        settle_b.samples.len()
    );
    for t in &long_typing {
        println!(
            "(c) long mixed text, {}: {:.0} chars/s, {}, {} MappingNotify to every client",
            t.who,
            t.n_chars as f64 / t.seconds,
            if t.wrong == 0 {
                "exact".to_owned()
            } else {
                format!("{} of {} characters wrong", t.wrong, t.n_chars)
            },
            t.notifies
        );
    }
    for (who, n_stale, n) in &stale {
        println!(
            "(e) {who}: {n_stale} of {n} closing screenshots showed the document, not the dialog"
        );
    }
    println!("\ntotal benchmark time {}", ms(started.elapsed()));
    drop(recorder);
    Ok(())
}

struct LongTyping {
    who: &'static str,
    seconds: f64,
    wrong: usize,
    n_chars: usize,
    notifies: u64,
}

/// The share of pixels that differ clearly (a channel by more than 32) between two images of
/// one size; scaling by two different resizers differs by less.
fn changed_share(a: &Pixels, b: &Pixels) -> f64 {
    let size = a.size();
    let mut changed = 0u64;
    let mut total = 0u64;
    // Every fourth pixel of every fourth row is plenty for a dialog.
    for y in (0..size.height).step_by(4) {
        for x in (0..size.width).step_by(4) {
            total += 1;
            let differs = match (a.rgb_at(x, y), b.rgb_at(x, y)) {
                (Some(p), Some(q)) => p.iter().zip(q).any(|(u, v)| u.abs_diff(v) > 32),
                _ => true,
            };
            if differs {
                changed += 1;
            }
        }
    }
    changed as f64 / total.max(1) as f64
}

/// The pixels of the reference's screenshot (a base64 PNG as it would send it).
fn decode_png(base64_png: &str) -> anyhow::Result<Pixels> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(base64_png)?;
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info()?;
    let mut buffer = vec![0; reader.output_buffer_size().context("PNG size")?];
    let info = reader.next_frame(&mut buffer)?;
    buffer.truncate(info.buffer_size());
    let format = match info.color_type {
        png::ColorType::Rgb => hands_core::image::PixelFormat::Rgb,
        png::ColorType::Rgba => hands_core::image::PixelFormat::Rgbx,
        other => bail!("unexpected PNG colour type {other:?}"),
    };
    let size = Size::new(info.width, info.height).context("PNG size")?;
    Ok(Pixels::new(size, format, buffer)?)
}

/// Below this share of changed pixels, a screenshot after `ctrl+s` still shows the document.
const STALE_SHARE: f64 = 0.02;

/// (e): mousepad on a desktop with openbox; each round opens the save dialog with `ctrl+s`,
/// takes the closing screenshot, then closes the dialog with Escape and waits for the document.
async fn ctrl_s_in_mousepad(
    plan: &Plan,
    reference: &mut Reference,
) -> anyhow::Result<(Vec<Row>, Vec<(&'static str, usize, usize)>)> {
    let size = Size::new(SCREEN.0, SCREEN.1).context("screen size")?;
    let mut desktop = X11Desktop::spawn(&XvfbConfig::new(size))?;
    let display = desktop.display().to_owned();
    let _openbox = desktop.spawn_client("openbox", &[])?;
    let _mousepad = desktop.spawn_client("mousepad", &["--disable-server"])?;
    // Wait (bounded) until the editor is on screen and has settled.
    let blank = desktop.capture().await?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = desktop.capture().await?;
        if changed_share(&blank, &now) > 0.1 {
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "mousepad did not show its window"
        );
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let config = ComputerConfig {
        sizing: ScreenshotSizing {
            tier: ImageTier::Standard,
            max_long_edge: Some(1024),
        },
        append_screenshot: false,
        ..ComputerConfig::default()
    };
    let mut toolset = ComputerToolset::new(desktop, config)?;
    run_turn(
        &mut toolset,
        &[json!({"name": "type", "input": {"text": "A note to save.\n"}})],
    )
    .await?;
    let ctrl_s = KeyChord::parse("ctrl+s")?;
    let escape = KeyChord::parse("Escape")?;
    let mut rows = Vec::new();
    let mut stale = Vec::new();
    let mut reference_rows = Vec::new();
    for who in ["hands", "reference, no delay", "reference, 2 s delay"] {
        let n = match who {
            "hands" => plan.n(10),
            "reference, no delay" => plan.n(6),
            _ => plan.n(3),
        };
        let mut samples = Vec::new();
        let mut n_stale = 0;
        for _ in 0..n {
            // The document alone on screen.
            tokio::time::sleep(Duration::from_millis(1500)).await;
            let before = toolset.desktop().capture().await?;
            let start = Instant::now();
            let target = Size::new(SHOT.0, SHOT.1).context("shot size")?;
            let (before, after) = if who == "hands" {
                // The computer toolset's key then screenshot, step by step, to keep the pixels.
                let desktop = toolset.desktop();
                desktop.key_chord(&ctrl_s).await?;
                desktop
                    .settle(SettleBudget::default(), &CancellationToken::new())
                    .await?;
                let pixels = desktop.capture().await?;
                let image = encode(&pixels.resize(target)?, ImageFormat::Png)?;
                ensure!(!image.base64.is_empty());
                samples.push(start.elapsed());
                (before, pixels)
            } else {
                reference.display = display.clone();
                let shot = reference
                    .action("key ctrl+s", who.ends_with("2 s delay"))
                    .await?;
                samples.push(start.elapsed());
                // Its own screenshot, against the screen before at the same size.
                (before.resize(target)?, decode_png(&shot)?)
            };
            if changed_share(&before, &after) < STALE_SHARE {
                n_stale += 1;
            }
            // Close the dialog once it is surely open.
            tokio::time::sleep(Duration::from_millis(1500)).await;
            toolset.desktop().key_chord(&escape).await?;
        }
        reference.clean();
        stale.push((who, n_stale, n));
        if who == "hands" {
            rows.push(Stats::new(samples));
        } else {
            reference_rows.push(Stats::new(samples));
        }
    }
    let delayed = reference_rows.pop();
    let no_delay = reference_rows.pop().context("reference (e)")?;
    let ours = rows.pop().context("hands (e)")?;
    Ok((
        vec![Row {
            name: "(e) ctrl+s in mousepad + shot",
            ours,
            reference: no_delay,
            delayed,
        }],
        stale,
    ))
}

fn print_table(
    rows: &[Row],
    breakdown: &[(&str, Stats)],
    typing: (f64, f64),
    extra_typing: &[(&str, f64)],
) {
    println!(
        "\n{:<32} {:>20} {:>20} {:>20} {:>9} {:>9}",
        "median (p90, n)",
        "hands",
        "reference, no delay",
        "reference, 2 s delay",
        "x nodelay",
        "x delay"
    );
    let cell = |s: &Stats| format!("{} ({}, {})", ms(s.median()), ms(s.p90()), s.samples.len());
    for row in rows {
        let ratio = |other: &Stats| {
            other.median().as_secs_f64() / row.ours.median().as_secs_f64().max(1e-9)
        };
        let delayed = row.delayed.as_ref().map_or_else(|| "n/a".to_owned(), cell);
        let delayed_ratio = row
            .delayed
            .as_ref()
            .map_or_else(|| "n/a".to_owned(), |d| format!("{:.1}x", ratio(d)));
        println!(
            "{:<32} {:>20} {:>20} {:>20} {:>9} {:>9}",
            row.name,
            cell(&row.ours),
            cell(&row.reference),
            delayed,
            format!("{:.1}x", ratio(&row.reference)),
            delayed_ratio,
        );
    }
    println!("\n(a) breakdown, hands:");
    for (name, stats) in breakdown {
        println!(
            "  {name:<30} median {}  p90 {}",
            ms(stats.median()),
            ms(stats.p90())
        );
    }
    println!(
        "(c) typing speed: hands {:.0} chars/s, reference {:.0} chars/s (the reference's type skips its delay)",
        typing.0, typing.1
    );
    for (name, rate) in extra_typing {
        println!("    hands, {name}: {rate:.0} chars/s (exact)");
    }
    println!(
        "\ntargets: (b) >= 20x with delay and >= 5x without; (a) < 10 ms median; (c) >= 500 chars/s"
    );
    let find = |prefix: &str| rows.iter().find(|r| r.name.starts_with(prefix));
    if let Some(b) = find("(b)") {
        let x = b.reference.median().as_secs_f64() / b.ours.median().as_secs_f64();
        let xd = b.delayed.as_ref().map_or(0.0, |d| {
            d.median().as_secs_f64() / b.ours.median().as_secs_f64()
        });
        println!(
            "  (b) {:.1}x with delay ({}), {:.1}x without ({})",
            xd,
            if xd >= 20.0 { "met" } else { "MISSED" },
            x,
            if x >= 5.0 { "met" } else { "MISSED" }
        );
    }
    if let Some(a) = find("(a)") {
        let m = a.ours.median();
        println!(
            "  (a) {} median ({})",
            ms(m),
            if m < Duration::from_millis(10) {
                "met"
            } else {
                "MISSED"
            }
        );
    }
    println!(
        "  (c) {:.0} chars/s ({})",
        typing.0,
        if typing.0 >= 500.0 { "met" } else { "MISSED" }
    );
}
