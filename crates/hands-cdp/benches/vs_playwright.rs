//! hands against Playwright on one page in one run: `read_page` beside
//! `page.locator('body').ariaSnapshot()`, and `screenshot` beside `page.screenshot()`, on a
//! generated settings form of 2,000 controls, with the median and p90 time and the output size of
//! each, and the ratios against issue 3's targets.
//!
//! Run with `cargo bench -p hands-cdp --bench vs_playwright`. `HANDS_BENCH_QUICK=1` makes it a
//! smoke run, `HANDS_BENCH_RUNS=N` sets the measured calls per round, and `HANDS_BENCH_DUMP=DIR`
//! keeps one output of each kind there (the page, `read_page.json`, `aria_snapshot.yaml`, the
//! screenshots). Playwright's side is `benches/playwright/bench.mjs` on `playwright-core` from
//! npm (pinned by its lock file, installed into that folder on the first run, never a browser
//! download), driving the same `/usr/bin/chromium` with exactly hands' launch flags. Without
//! Node, npm or the package the bench says why and prints hands' numbers alone. Nothing here
//! asserts a number: the table is the output.
//!
//! What is compared with what:
//! - `read_page` is uncapped (`ReadLimits::unbounded`), as `ariaSnapshot()` has no cap; the
//!   default-capped read is listed too. Its bytes are the `BrowserReadV1` JSON the model gets;
//!   the snapshot's are its YAML text in UTF-8.
//! - Screenshots are the encoded image bytes (before base64, which costs both sides 4/3). hands
//!   defaults to JPEG q80 and Playwright to PNG, so both formats are measured on both sides and
//!   compared like with like, with the defaults' ratio beside them.
//! - Each side runs with its own browser only (never both at once: two cores), in alternating
//!   rounds so that drift in the machine's load falls on both; the first call of each kind (agent
//!   or injected-script install) is reported apart and not in the median. Captures are all taken
//!   of the settled, unchanged page (a capture right after a change also pays for its paint), so
//!   both sides' images are the same pixels; a bare `Page.captureScreenshot` beside hands'
//!   `screenshot` shows the protocol's own floor.
//! - Reads are measured on the settled page and again right after the page's own script changed
//!   it ([`MUTATE`]), the case of an agent reading after each action.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    reason = "a benchmark binary prints its table"
)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde::Deserialize;

use hands_cdp::{CdpBrowser, DriverConfig, ReadLimits};
use hands_core::CancellationToken;
use hands_core::browser::Browser as _;
use hands_core::browser::BrowserRead;
use hands_core::browser::args::{PageUrl, ReadFilter};
use hands_core::browser::driver::ReadResult;
use hands_core::image::{EncodedImage, ImageFormat};

/// Sections of the generated settings page; each holds [`CONTROLS_PER_SECTION`] controls.
const SECTIONS: usize = 100;
/// 6 labelled text fields, 3 labelled selects, 4 checkboxes, a group of 3 radios, 2 buttons and
/// 2 links.
const CONTROLS_PER_SECTION: usize = 20;
/// What the page's own script does before each read "after a DOM change" (both sides run this
/// text in the page's main world, untimed): a status line replaced, as an app shows "saved".
/// Any change to the tree drops what Chromium caches per document (live node lists, such as a
/// control's `labels`), so a read right after one is what an agent sees after each action.
const MUTATE: &str = "(() => { const s = document.createElement('span'); \
    s.textContent = 'All changes saved'; \
    document.getElementById('status').replaceChildren(s); return true; })()";
/// How long Playwright's whole run may take before it is given up.
const PLAYWRIGHT_TIMEOUT: Duration = Duration::from_secs(600);
/// How long installing `playwright-core` may take.
const NPM_TIMEOUT: Duration = Duration::from_secs(300);

const AREAS: [&str; 10] = [
    "Account",
    "Notifications",
    "Privacy",
    "Security",
    "Billing",
    "Appearance",
    "Language and region",
    "Accessibility",
    "Integrations",
    "Storage",
];
const FIELDS: [(&str, &str, &str); 6] = [
    ("text", "Display name", "Ada Lovelace"),
    ("email", "Contact email", "ada@example.test"),
    ("number", "Retention in days", "30"),
    ("url", "Webhook address", ""),
    ("tel", "Phone for alerts", ""),
    ("text", "Team or project", "Analytical Engine"),
];
const SELECTS: [(&str, [&str; 5]); 3] = [
    (
        "Frequency",
        ["Immediately", "Hourly", "Daily", "Weekly", "Never"],
    ),
    (
        "Visibility",
        ["Public", "Workspace", "Team", "Only me", "Custom"],
    ),
    (
        "Time zone",
        [
            "UTC",
            "Europe/Madrid",
            "America/New_York",
            "Asia/Tokyo",
            "Australia/Sydney",
        ],
    ),
];
const CHECKBOXES: [&str; 4] = [
    "Send a summary by email",
    "Show a desktop notification",
    "Include archived items",
    "Allow administrators to override",
];
const RADIOS: [&str; 3] = ["Standard", "Strict", "Relaxed"];

/// A long settings form: [`SECTIONS`] sections of [`CONTROLS_PER_SECTION`] controls each, with
/// headings, help text and hints, styled enough that a screenshot shows a real page.
fn settings_page() -> String {
    let mut html = String::from(
        "<!doctype html><html lang=en><meta charset=utf-8><title>Workspace settings</title>\
         <style>body{font:14px/1.4 sans-serif;margin:0;background:#f4f5f7;color:#222}\
         header{background:#1f3a5f;color:#fff;padding:12px 24px}main{max-width:1100px;margin:auto;padding:16px}\
         section{background:#fff;border:1px solid #d8dce3;border-radius:6px;margin:12px 0;padding:12px 16px}\
         .grid{display:grid;grid-template-columns:repeat(3,1fr);gap:8px 16px}\
         label{display:block}input:not([type=checkbox]):not([type=radio]),select{width:100%;box-sizing:border-box;padding:4px}\
         small{color:#667}fieldset{border:1px solid #e3e6eb}button{margin-right:8px}</style>\
         <header><h1>Workspace settings</h1><p>Changes apply to every member of the workspace.</p>\
         <p id=status role=status></p></header><main><form>",
    );
    for s in 0..SECTIONS {
        let area = AREAS[s % AREAS.len()];
        let group = s / AREAS.len() + 1;
        html.push_str(&format!(
            "<section aria-labelledby=h{s}><h2 id=h{s}>{area} · group {group}</h2>\
             <p>Settings for {area} in group {group}. Administrators can lock any of them.</p><div class=grid>"
        ));
        for (f, (kind, label, value)) in FIELDS.iter().enumerate() {
            let id = format!("s{s}f{f}");
            html.push_str(&format!(
                "<div><label for={id}>{label}</label>\
                 <input id={id} name={id} type={kind} value='{value}' placeholder='{label}'>\
                 <small>Used by {area}.</small></div>"
            ));
        }
        for (k, (label, options)) in SELECTS.iter().enumerate() {
            let id = format!("s{s}c{k}");
            html.push_str(&format!(
                "<div><label for={id}>{label}</label><select id={id}>"
            ));
            for (o, option) in options.iter().enumerate() {
                let selected = if o == (s + k) % options.len() {
                    " selected"
                } else {
                    ""
                };
                html.push_str(&format!("<option value=v{o}{selected}>{option}</option>"));
            }
            html.push_str("</select></div>");
        }
        html.push_str("</div><div class=grid>");
        for (c, label) in CHECKBOXES.iter().enumerate() {
            let checked = if (s + c) % 3 == 0 { " checked" } else { "" };
            html.push_str(&format!(
                "<label><input type=checkbox name=s{s}x{c}{checked}> {label}</label>"
            ));
        }
        html.push_str(&format!(
            "</div><fieldset><legend>Enforcement for {area} · group {group}</legend>"
        ));
        for (r, label) in RADIOS.iter().enumerate() {
            let checked = if r == s % RADIOS.len() {
                " checked"
            } else {
                ""
            };
            html.push_str(&format!(
                "<label><input type=radio name=s{s}r value={r}{checked}> {label}</label>"
            ));
        }
        html.push_str(&format!(
            "</fieldset><p><button type=button>Save {area} · group {group}</button>\
             <button type=reset>Reset</button> \
             <a href='#h{s}'>Learn more about {area}</a> · <a href='/audit?section={s}'>View audit log</a></p></section>"
        ));
    }
    html.push_str("</form></main></html>");
    html
}

/// 50 targets made operable only by JavaScript (no role, no `href`, no tab stop): 5 toolbar
/// icons and 20 cards with handlers of their own, 15 table rows whose handler is delegated to
/// their table (pointer cursor), 10 SVG shapes; with the headings and text around them.
fn listener_page() -> String {
    let mut html = String::from(
        "<!doctype html><title>Board</title><style>.card{display:inline-block;border:1px solid #ccc;\
         padding:6px;margin:4px;width:180px}.row{cursor:pointer}.icon{cursor:pointer;padding:4px}</style>\
         <h1>Project board</h1><div class=bar>",
    );
    for name in ["Filter", "Sort", "Share", "Archive", "Settings"] {
        html.push_str(&format!("<span class=icon title='{name}'>&#9679;</span>"));
    }
    html.push_str("</div><p>Click a card to open it.</p><div id=cards>");
    for i in 0..20 {
        html.push_str(&format!(
            "<div class=card id=c{i}><b>Task {i}</b><div>Due in {i} days</div></div>"
        ));
    }
    html.push_str("</div><h2>Activity</h2><table id=log>");
    for i in 0..15 {
        html.push_str(&format!(
            "<tr class=row><td>Event {i}</td><td>by user {i}</td></tr>"
        ));
    }
    html.push_str("</table><h2>Chart</h2><svg width=800 height=60>");
    for i in 0..10 {
        html.push_str(&format!(
            "<circle class=dot cx={} cy=30 r=20><title>Milestone {i}</title></circle>",
            40 + i * 70
        ));
    }
    html.push_str(
        "</svg><script>\
         for (const c of document.querySelectorAll('.card, .dot, .icon')) c.addEventListener('click', () => 0);\
         document.getElementById('log').addEventListener('click', (e) => e.target.closest('tr'));\
         </script>",
    );
    html
}

/// A page measured for size only: (path, name, page).
type ExtraPage = (&'static str, &'static str, fn() -> String);

/// Pages measured for size only (their `ariaSnapshot()` bytes against hands' compact read).
const EXTRA_PAGES: [ExtraPage; 5] = [
    ("/listeners", "50 listener-only targets", listener_page),
    ("/corpus/jquery", "corpus: jQuery-style handlers", || {
        include_str!("../tests/corpus/jquery.html").to_owned()
    }),
    ("/corpus/d3", "corpus: d3-style SVG chart", || {
        include_str!("../tests/corpus/d3.html").to_owned()
    }),
    ("/corpus/table", "corpus: clickable rows and cells", || {
        include_str!("../tests/corpus/table.html").to_owned()
    }),
    (
        "/corpus/widgets",
        "corpus: widgets, icons, checkboxes",
        || include_str!("../tests/corpus/widgets.html").to_owned(),
    ),
];

/// hands' read of each extra page: (elements, JSON bytes, compact bytes).
async fn extra_reads(urls: &[String]) -> Vec<(usize, usize, usize)> {
    let cancel = CancellationToken::new();
    let mut browser = CdpBrowser::launch(DriverConfig {
        read: ReadLimits::unbounded(),
        ..DriverConfig::default()
    })
    .await
    .unwrap();
    let mut out = Vec::new();
    for (i, url) in urls.iter().enumerate() {
        let url = PageUrl::parse("url", url).unwrap();
        browser.navigate(&url, None, &cancel).await.unwrap();
        let (_, read, json) = timed_read(&mut browser).await;
        let compact = read.to_compact();
        dump(&format!("extra{i}.compact.txt"), compact.as_bytes());
        dump(&format!("extra{i}.json"), json.as_bytes());
        out.push((read.elements().len(), json.len(), compact.len()));
    }
    out
}

/// One measured kind of call: the first (cold) call, then the measured ones.
#[derive(Debug, Default, Deserialize)]
struct Series {
    first_ms: f64,
    ms: Vec<f64>,
    bytes: Vec<usize>,
}

impl Series {
    /// Records the first call of a browser (the one of the first round is the one reported).
    fn cold(&mut self, elapsed: Duration) {
        if self.first_ms == 0.0 {
            self.first_ms = elapsed.as_secs_f64() * 1000.0;
        }
    }

    /// Records a measured call.
    fn push(&mut self, elapsed: Duration, bytes: usize) {
        self.ms.push(elapsed.as_secs_f64() * 1000.0);
        self.bytes.push(bytes);
    }

    fn extend(&mut self, other: Series) {
        if self.first_ms == 0.0 {
            self.first_ms = other.first_ms;
        }
        self.ms.extend(other.ms);
        self.bytes.extend(other.bytes);
    }

    fn median_ms(&self) -> f64 {
        percentile(&self.ms, 0.5)
    }

    fn p90_ms(&self) -> f64 {
        percentile(&self.ms, 0.9)
    }

    fn median_bytes(&self) -> f64 {
        let bytes: Vec<f64> = self.bytes.iter().map(|&b| b as f64).collect();
        percentile(&bytes, 0.5)
    }
}

/// Nearest-rank percentile, with `p = 0.5` as the upper middle of an even count; NaN when empty.
fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let idx = ((p * sorted.len() as f64) as usize).min(sorted.len() - 1);
    sorted[idx]
}

/// hands' measurements, gathered over the rounds.
#[derive(Debug, Default)]
struct HandsRun {
    read_full: Series,
    /// Bytes of the same uncapped reads in the compact form (`BrowserRead::to_compact`).
    compact: Series,
    read_changed: Series,
    walk_ms: Vec<f64>,
    n_elements: usize,
    /// Bytes of the uncapped read's `text`, and of its `elements` array as JSON.
    text_bytes: usize,
    elements_bytes: usize,
    /// Elements in the default-capped read.
    capped_elements: usize,
    read_capped: Series,
    capped_omitted: String,
    jpeg: Series,
    png: Series,
    /// `Page.captureScreenshot` sent alone (the protocol's floor under each `screenshot`).
    raw_jpeg: Series,
    raw_png: Series,
}

/// Playwright's measurements as `bench.mjs` prints them.
#[derive(Debug, Deserialize)]
struct PlaywrightRun {
    playwright: String,
    node: String,
    browser: String,
    aria: Series,
    aria_changed: Series,
    png: Series,
    jpeg: Series,
    /// `ariaSnapshot()` bytes of each extra page ([`EXTRA_PAGES`]), in order.
    #[serde(default)]
    extra: Vec<usize>,
}

fn structured(read: Option<ReadResult>) -> BrowserRead {
    match read {
        Some(ReadResult::Structured(read)) => read,
        other => panic!("read_page answered {other:?}"),
    }
}

fn image_data(image: &EncodedImage) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(&image.base64)
        .unwrap_or_default()
}

/// The folder `HANDS_BENCH_DUMP` names, if any.
fn dump_dir() -> Option<PathBuf> {
    std::env::var_os("HANDS_BENCH_DUMP").map(PathBuf::from)
}

/// Writes one output into the dump folder when there is one.
fn dump(name: &str, bytes: &[u8]) {
    if let Some(dir) = dump_dir() {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

/// Times `Page.captureScreenshot` alone, with the parameters hands sends, and returns the bytes
/// of the image.
async fn raw_capture(browser: &CdpBrowser, params: serde_json::Value) -> (Duration, usize) {
    let t = Instant::now();
    let value = browser
        .call_raw(None, "Page.captureScreenshot", params)
        .await
        .unwrap();
    let elapsed = t.elapsed();
    let data = value["data"].as_str().unwrap_or("");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_or(0, |b| b.len());
    (elapsed, bytes)
}

/// Runs [`MUTATE`] in the page.
async fn mutate(browser: &CdpBrowser) {
    browser
        .call_raw(
            None,
            "Runtime.evaluate",
            serde_json::json!({"expression": MUTATE, "returnByValue": true}),
        )
        .await
        .unwrap();
}

/// `read_page` on the tab, timed; the read and its JSON.
async fn timed_read(browser: &mut CdpBrowser) -> (Duration, BrowserRead, String) {
    let cancel = CancellationToken::new();
    let t = Instant::now();
    let read = structured(
        browser
            .read_page(ReadFilter::All, None, &cancel)
            .await
            .unwrap(),
    );
    let elapsed = t.elapsed();
    let json = serde_json::to_string(&read).unwrap();
    (elapsed, read, json)
}

/// `screenshot` on the tab, timed; its encoded bytes.
async fn timed_screenshot(browser: &mut CdpBrowser) -> (Duration, Vec<u8>) {
    let cancel = CancellationToken::new();
    let t = Instant::now();
    let image = browser.screenshot(None, &cancel).await.unwrap();
    let elapsed = t.elapsed();
    (elapsed, image_data(&image))
}

/// One round of hands, in the order Playwright's side follows. An uncapped browser: `n + 1`
/// times a read, a JPEG `screenshot` (hands' default format), a read and a bare JPEG capture, on
/// the settled page; then `n + 1` times the page's change and a read. A default-capped browser:
/// the same with PNG, without the change. The first of each is the cold one.
/// Every capture is taken of the same settled, unchanged page, so every side's images are the
/// same pixels.
async fn hands_round(url: &PageUrl, n: usize, run: &mut HandsRun) {
    let cancel = CancellationToken::new();
    let jpeg_params = serde_json::json!({"format": "jpeg", "quality": 80, "fromSurface": true, "captureBeyondViewport": false});
    let png_params =
        serde_json::json!({"format": "png", "fromSurface": true, "captureBeyondViewport": false});

    let mut browser = CdpBrowser::launch(DriverConfig {
        read: ReadLimits::unbounded(),
        ..DriverConfig::default()
    })
    .await
    .unwrap();
    browser.navigate(url, None, &cancel).await.unwrap();
    for i in 0..=n {
        let (read_time, read, json) = timed_read(&mut browser).await;
        let (shot_time, image) = timed_screenshot(&mut browser).await;
        // A capture right after another waits about a frame longer: a read in between.
        let (again, _, _) = timed_read(&mut browser).await;
        let (raw_time, raw_bytes) = raw_capture(&browser, jpeg_params.clone()).await;
        run.n_elements = read.elements().len();
        run.text_bytes = read.text().len();
        run.elements_bytes = serde_json::to_string(read.elements()).unwrap().len();
        if i == 0 {
            run.read_full.cold(read_time);
            run.jpeg.cold(shot_time);
            run.raw_jpeg.cold(raw_time);
        } else {
            run.read_full.push(read_time, json.len());
            run.read_full.push(again, json.len());
            run.compact.push(read_time, read.to_compact().len());
            run.walk_ms.push(browser.last_walk().as_secs_f64() * 1000.0);
            run.jpeg.push(shot_time, image.len());
            run.raw_jpeg.push(raw_time, raw_bytes);
        }
        if i == n {
            dump("read_page.json", json.as_bytes());
            dump("read_page.compact.txt", read.to_compact().as_bytes());
            dump("hands.jpeg", &image);
        }
    }
    for i in 0..=n {
        mutate(&browser).await;
        let (read_time, _, json) = timed_read(&mut browser).await;
        if i == 0 {
            run.read_changed.cold(read_time);
        } else {
            run.read_changed.push(read_time, json.len());
        }
    }
    drop(browser);

    let mut browser = CdpBrowser::launch(DriverConfig {
        image_format: ImageFormat::Png,
        ..DriverConfig::default()
    })
    .await
    .unwrap();
    browser.navigate(url, None, &cancel).await.unwrap();
    for i in 0..=n {
        let (read_time, read, json) = timed_read(&mut browser).await;
        let (shot_time, image) = timed_screenshot(&mut browser).await;
        let (again, _, _) = timed_read(&mut browser).await;
        let (raw_time, raw_bytes) = raw_capture(&browser, png_params.clone()).await;
        run.capped_omitted = format!("{:?}", read.omitted());
        run.capped_elements = read.elements().len();
        if i == 0 {
            run.read_capped.cold(read_time);
            run.png.cold(shot_time);
            run.raw_png.cold(raw_time);
        } else {
            run.read_capped.push(read_time, json.len());
            run.read_capped.push(again, json.len());
            run.png.push(shot_time, image.len());
            run.raw_png.push(raw_time, raw_bytes);
        }
        if i == n {
            dump("read_page_capped.json", json.as_bytes());
            dump("hands.png", &image);
        }
    }
}

/// The folder of `bench.mjs` and its `package.json`.
fn playwright_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/playwright")
}

/// The flags hands launches Chromium with, less the two that name its own profile and DevTools
/// pipe (Playwright adds its own profile and pipe).
fn hands_flags(viewport: (u32, u32)) -> Vec<String> {
    hands_cdp::launch::base_args(Path::new("/unused"), viewport, &hands_jail::Isolation::Host)
        .into_iter()
        .filter(|a| !a.starts_with("--user-data-dir=") && !a.starts_with("--remote-debugging-"))
        .collect()
}

/// Makes sure `node` runs and `playwright-core` is installed (installing it from the lock file
/// when `node_modules` is missing); says why not otherwise.
async fn prepare_playwright() -> Result<String, String> {
    let node = tokio::process::Command::new("node")
        .arg("--version")
        .output()
        .await
        .map_err(|e| format!("node is not available ({e}); install Node.js 20 or newer"))?;
    if !node.status.success() {
        return Err(format!(
            "`node --version` failed ({}): {}",
            node.status,
            String::from_utf8_lossy(&node.stderr).trim()
        ));
    }
    let dir = playwright_dir();
    if !dir.join("node_modules/playwright-core").is_dir() {
        let verb = if dir.join("package-lock.json").is_file() {
            "ci"
        } else {
            "install"
        };
        eprintln!(
            "installing playwright-core into {} (npm {verb})",
            dir.display()
        );
        let install = tokio::process::Command::new("npm")
            .args([verb, "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(NPM_TIMEOUT, install)
            .await
            .map_err(|_| format!("npm {verb} took longer than {NPM_TIMEOUT:?}"))?
            .map_err(|e| format!("npm is not available ({e}); install npm"))?;
        if !out.status.success() {
            return Err(format!(
                "npm {verb} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    Ok(String::from_utf8_lossy(&node.stdout).trim().to_owned())
}

/// One round of Playwright: `bench.mjs` launched on the page, its JSON parsed.
async fn playwright_round(
    url: &str,
    extra_urls: &[String],
    n: usize,
    viewport: (u32, u32),
) -> Result<PlaywrightRun, String> {
    let config = serde_json::json!({
        "url": url,
        "iterations": n,
        "executablePath": "/usr/bin/chromium",
        "args": hands_flags(viewport),
        "viewport": [viewport.0, viewport.1],
        "dump": dump_dir(),
        "mutate": MUTATE,
        "extraUrls": extra_urls,
    });
    let child = tokio::process::Command::new("node")
        .arg("bench.mjs")
        .arg(config.to_string())
        .current_dir(playwright_dir())
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(PLAYWRIGHT_TIMEOUT, child)
        .await
        .map_err(|_| format!("bench.mjs took longer than {PLAYWRIGHT_TIMEOUT:?}"))?
        .map_err(|e| format!("could not run node: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "bench.mjs failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().rfind(|l| l.starts_with('{')).unwrap_or("");
    serde_json::from_str(line).map_err(|e| format!("bench.mjs printed no result ({e}): {stdout}"))
}

fn row(name: &str, series: &Series) {
    let first = if series.first_ms > 0.0 {
        format!("{:.1}", series.first_ms)
    } else {
        String::new()
    };
    println!(
        "  {name:<40} {first:>9} {:>9.1} {:>9.1} {:>12.0}",
        series.median_ms(),
        series.p90_ms(),
        series.median_bytes()
    );
}

fn ratio(name: &str, ours: f64, theirs: f64, target: Option<f64>) {
    let value = ours / theirs;
    match target {
        Some(target) => {
            let mark = if value <= target { "✓" } else { "✗" };
            println!("  {name:<62} {value:>6.2}×   ≤ {target:.1}×  {mark}");
        }
        None => println!("  {name:<62} {value:>6.2}×   (no target)"),
    }
}

fn main() {
    let quick = std::env::var_os("HANDS_BENCH_QUICK").is_some();
    let n: usize = std::env::var("HANDS_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 3 } else { 20 });
    let rounds = if quick { 1 } else { 2 };
    let viewport = DriverConfig::default().viewport;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let server = common::Server::start().await;
        let page = settings_page();
        dump("settings.html", page.as_bytes());
        server.html("/settings", &page);
        let url = server.page_url("/settings");
        let mut extra_urls = Vec::new();
        for (path, _, html) in EXTRA_PAGES {
            server.html(path, &html());
            extra_urls.push(server.url(path));
        }
        let extra = extra_reads(&extra_urls).await;

        let prepared = prepare_playwright().await;
        let mut hands = HandsRun::default();
        let mut playwright: Option<PlaywrightRun> = None;
        let mut why_not = prepared.as_ref().err().cloned();
        for _ in 0..rounds {
            hands_round(&url, n, &mut hands).await;
            if why_not.is_some() {
                continue;
            }
            match playwright_round(url.as_str(), &extra_urls, n, viewport).await {
                Ok(run) => match &mut playwright {
                    Some(all) => {
                        all.aria.extend(run.aria);
                        all.aria_changed.extend(run.aria_changed);
                        all.png.extend(run.png);
                        all.jpeg.extend(run.jpeg);
                    }
                    None => playwright = Some(run),
                },
                Err(e) => why_not = Some(e),
            }
        }

        let n_measured = hands.jpeg.ms.len();
        println!();
        println!(
            "hands vs Playwright: a settings page of {} controls ({} elements read), {}x{} viewport",
            SECTIONS * CONTROLS_PER_SECTION,
            hands.n_elements,
            viewport.0,
            viewport.1
        );
        println!(
            "{rounds} round(s) of {n} measured calls per kind and side ({n_measured} in all; hands' settled reads twice that), after one cold call per browser"
        );
        if let Some(pw) = &playwright {
            println!(
                "Playwright: playwright-core {} on Node {}, Chromium {} (hands' flags)",
                pw.playwright, pw.node, pw.browser
            );
        }
        println!();
        println!(
            "  {:<40} {:>9} {:>9} {:>9} {:>12}",
            "", "first ms", "median ms", "p90 ms", "median bytes"
        );
        row("hands read_page (uncapped)", &hands.read_full);
        println!(
            "  {:<40} {:>9} {:>9.1} {:>9.1}",
            "  of which the in-page walk",
            "",
            percentile(&hands.walk_ms, 0.5),
            percentile(&hands.walk_ms, 0.9)
        );
        row("hands read_page (default cap)", &hands.read_capped);
        row("  the same uncapped read, compact form", &hands.compact);
        if let Some(pw) = &playwright {
            row("Playwright locator('body').ariaSnapshot()", &pw.aria);
        }
        row("hands read_page, after a DOM change", &hands.read_changed);
        if let Some(pw) = &playwright {
            row("Playwright ariaSnapshot(), after it", &pw.aria_changed);
        }
        row("hands screenshot PNG", &hands.png);
        row("  CDP Page.captureScreenshot PNG alone", &hands.raw_png);
        row("hands screenshot JPEG q80 (its default)", &hands.jpeg);
        row("  CDP Page.captureScreenshot JPEG alone", &hands.raw_jpeg);
        if let Some(pw) = &playwright {
            row("Playwright screenshot() PNG (its default)", &pw.png);
            row("Playwright screenshot() JPEG q80", &pw.jpeg);
        }
        println!(
            "  (uncapped read: {} bytes of text, {} of elements JSON; the default cap keeps {} of {} elements and omits {})",
            hands.text_bytes,
            hands.elements_bytes,
            hands.capped_elements,
            hands.n_elements,
            hands.capped_omitted
        );
        for (i, ((_, name, _), (n_elements, json, compact))) in
            EXTRA_PAGES.iter().zip(&extra).enumerate()
        {
            println!(
                "  {name}: hands reads {n_elements} elements; BrowserReadV1 {json} bytes, compact {compact} bytes{}",
                playwright
                    .as_ref()
                    .and_then(|pw| pw.extra.get(i))
                    .map_or(String::new(), |b| format!(", ariaSnapshot {b} bytes"))
            );
        }
        println!();
        match (&why_not, &playwright) {
            (Some(why), Some(_)) => {
                println!("  Playwright was not measured in every round: {why}");
            }
            (Some(why), None) => println!("  Playwright was not measured: {why}"),
            (None, _) => {}
        }
        match &playwright {
            Some(pw) => {
                println!("  ratios of medians, hands / Playwright (targets of issue 3):");
                ratio(
                    "read_page time / ariaSnapshot time",
                    hands.read_full.median_ms(),
                    pw.aria.median_ms(),
                    Some(0.5),
                );
                ratio(
                    "read_page time / ariaSnapshot time, after a DOM change",
                    hands.read_changed.median_ms(),
                    pw.aria_changed.median_ms(),
                    Some(0.5),
                );
                ratio(
                    "read_page bytes / ariaSnapshot bytes",
                    hands.read_full.median_bytes(),
                    pw.aria.median_bytes(),
                    Some(0.7),
                );
                ratio(
                    "screenshot time, PNG / PNG",
                    hands.png.median_ms(),
                    pw.png.median_ms(),
                    Some(0.6),
                );
                ratio(
                    "screenshot time, JPEG q80 / JPEG q80",
                    hands.jpeg.median_ms(),
                    pw.jpeg.median_ms(),
                    Some(0.6),
                );
                ratio(
                    "screenshot time, defaults (hands JPEG / Playwright PNG)",
                    hands.jpeg.median_ms(),
                    pw.png.median_ms(),
                    Some(0.6),
                );
                ratio(
                    "read_page bytes, default cap / ariaSnapshot bytes",
                    hands.read_capped.median_bytes(),
                    pw.aria.median_bytes(),
                    None,
                );
                ratio(
                    "compact read bytes / ariaSnapshot bytes (issue 11)",
                    hands.compact.median_bytes(),
                    pw.aria.median_bytes(),
                    Some(0.5),
                );
                for ((_, name, _), (theirs, (_, _, ours))) in
                    EXTRA_PAGES.iter().zip(pw.extra.iter().zip(&extra))
                {
                    ratio(
                        &format!("compact bytes / ariaSnapshot bytes, {name}"),
                        *ours as f64,
                        *theirs as f64,
                        (!name.starts_with("corpus")).then_some(0.5),
                    );
                }
            }
            None => println!("  no ratios: Playwright has no numbers"),
        }
    });
}
