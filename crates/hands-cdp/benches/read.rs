//! The read and latency benchmark of the Chromium driver: on a generated page with 2,000
//! controls, the median time and output size of `read_page` (whole, and under the default size
//! cap), with the in-page walk alone; click-to-settled latency on a static page; navigation and
//! read on a page that animates forever; launch to a ready tab; `screenshot`.
//!
//! Run with `cargo bench -p hands-cdp --bench read`. Set `HANDS_BENCH_QUICK=1` for a smoke run.
//! Nothing here asserts a number: the table is the output.

#![allow(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a benchmark binary prints its table"
)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use hands_cdp::{CdpBrowser, DriverConfig, ReadLimits};
use hands_core::browser::Browser as _;
use hands_core::browser::args::ReadFilter;
use hands_core::browser::driver::ReadResult;
use hands_core::image::ImageFormat;

/// 400 rows of five controls: a labelled text field, a select of three options, a labelled
/// checkbox, a button and a link.
fn two_thousand_controls() -> String {
    let mut html =
        String::from("<!doctype html><title>2000 controls</title><h1>Controls</h1><form>");
    for i in 0..400 {
        html.push_str(&format!(
            "<div class=row><label for=f{i}>Field {i}</label><input id=f{i} value='value {i}'>\
             <select aria-label='Choice {i}'><option value=a>Alpha</option><option value=b>Beta</option><option value=c>Gamma</option></select>\
             <label><input type=checkbox> Option {i}</label>\
             <button type=button>Action {i}</button><a href='#r{i}'>Link {i}</a></div>"
        ));
    }
    html.push_str("</form>");
    html
}

const CLICK_PAGE: &str = "<!doctype html><title>Click</title><p id=n>0</p>\
    <button onclick=\"n.textContent = +n.textContent + 1\">Count</button>";

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn structured(read: Option<ReadResult>) -> hands_core::browser::BrowserRead {
    match read {
        Some(ReadResult::Structured(r)) => r,
        other => panic!("{other:?}"),
    }
}

fn main() {
    let quick = std::env::var_os("HANDS_BENCH_QUICK").is_some();
    let n = if quick { 3 } else { 25 };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let server = common::Server::start().await;
        server.html("/controls", &two_thousand_controls());
        server.html("/click", CLICK_PAGE);
        let cancel = common::cancel();

        // Launch to a tab ready for its first call, alone.
        let mut launches = Vec::new();
        for _ in 0..n.min(10) {
            let t = Instant::now();
            let mut browser = CdpBrowser::launch(DriverConfig::default()).await.unwrap();
            browser.state(&cancel).await.unwrap();
            launches.push(t.elapsed());
            drop(browser);
        }
        server.html("/animated", common::ANIMATED_PAGE);

        let started = Instant::now();
        let mut browser = CdpBrowser::launch(DriverConfig {
            read: ReadLimits::unbounded(),
            ..DriverConfig::default()
        })
        .await
        .unwrap();
        browser
            .navigate(&server.page_url("/controls"), None, &cancel)
            .await
            .unwrap();
        let launch = started.elapsed();

        // Warm up (the agent installs itself on the first call).
        browser
            .read_page(ReadFilter::All, None, &cancel)
            .await
            .unwrap();
        let (mut full, mut walk) = (Vec::new(), Vec::new());
        let mut full_bytes = 0;
        let mut n_elements = 0;
        for _ in 0..n {
            let t = Instant::now();
            let read = structured(
                browser
                    .read_page(ReadFilter::All, None, &cancel)
                    .await
                    .unwrap(),
            );
            full.push(t.elapsed());
            walk.push(browser.last_walk());
            full_bytes = serde_json::to_string(&read).unwrap().len();
            n_elements = read.elements().len();
        }
        drop(browser);

        let mut browser = CdpBrowser::launch(DriverConfig::default()).await.unwrap();
        browser
            .navigate(&server.page_url("/controls"), None, &cancel)
            .await
            .unwrap();
        browser
            .read_page(ReadFilter::All, None, &cancel)
            .await
            .unwrap();
        let mut capped = Vec::new();
        let mut capped_bytes = 0;
        let mut omitted = Vec::new();
        for _ in 0..n {
            let t = Instant::now();
            let read = structured(
                browser
                    .read_page(ReadFilter::All, None, &cancel)
                    .await
                    .unwrap(),
            );
            capped.push(t.elapsed());
            capped_bytes = serde_json::to_string(&read).unwrap().len();
            omitted = read.omitted().to_vec();
        }
        let mut find = Vec::new();
        for i in 0..n {
            let t = Instant::now();
            browser
                .find(&format!("action {}", i * 7), None, &cancel)
                .await
                .unwrap();
            find.push(t.elapsed());
        }
        let mut shots = Vec::new();
        for _ in 0..n {
            let t = Instant::now();
            browser.screenshot(None, &cancel).await.unwrap();
            shots.push(t.elapsed());
        }

        browser
            .navigate(&server.page_url("/click"), None, &cancel)
            .await
            .unwrap();
        let read = structured(
            browser
                .read_page(ReadFilter::All, None, &cancel)
                .await
                .unwrap(),
        );
        let count = read.elements()[0].reference().clone();
        let mut clicks = Vec::new();
        for _ in 0..n {
            let t = Instant::now();
            browser.click(&count, None, &cancel).await.unwrap();
            clicks.push(t.elapsed());
        }
        let mut navs = Vec::new();
        for _ in 0..n {
            let t = Instant::now();
            browser
                .navigate(&server.page_url("/click"), None, &cancel)
                .await
                .unwrap();
            navs.push(t.elapsed());
        }
        // A page that animates forever (CSS, canvas, an element and an SVG shape moved by script
        // every frame): navigation and read.
        let (mut animated_navs, mut animated_reads) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let t = Instant::now();
            browser
                .navigate(&server.page_url("/animated"), None, &cancel)
                .await
                .unwrap();
            animated_navs.push(t.elapsed());
            let t = Instant::now();
            browser
                .read_page(ReadFilter::All, None, &cancel)
                .await
                .unwrap();
            animated_reads.push(t.elapsed());
        }
        drop(browser);

        let mut png = CdpBrowser::launch(DriverConfig {
            image_format: ImageFormat::Png,
            ..DriverConfig::default()
        })
        .await
        .unwrap();
        png.navigate(&server.page_url("/controls"), None, &cancel)
            .await
            .unwrap();
        let mut png_shots = Vec::new();
        for _ in 0..n {
            let t = Instant::now();
            png.screenshot(None, &cancel).await.unwrap();
            png_shots.push(t.elapsed());
        }

        println!("hands-cdp read bench ({n} runs each, medians)");
        println!(
            "  launch to a ready tab                      {}  ({} launches)",
            ms(median(launches.clone())),
            launches.len()
        );
        println!(
            "  launch + first page                        {}",
            ms(launch)
        );
        println!(
            "  read_page, 2,000 controls, uncapped        {}  ({} elements, {} bytes)",
            ms(median(full)),
            n_elements,
            full_bytes
        );
        println!(
            "    of which the in-page DOM walk            {}",
            ms(median(walk))
        );
        println!(
            "  read_page, default cap                     {}  ({} bytes, omitted {:?})",
            ms(median(capped)),
            capped_bytes,
            omitted
        );
        println!(
            "  find on the same page                      {}",
            ms(median(find))
        );
        println!(
            "  click to settled, static page              {}",
            ms(median(clicks))
        );
        println!(
            "  navigate to settled, small page            {}",
            ms(median(navs))
        );
        println!(
            "  navigate to settled, animated page         {}",
            ms(median(animated_navs))
        );
        println!(
            "  read_page, animated page                   {}",
            ms(median(animated_reads))
        );
        println!(
            "  screenshot 1280x800 JPEG q80               {}",
            ms(median(shots))
        );
        println!(
            "  screenshot 1280x800 PNG                    {}",
            ms(median(png_shots))
        );
    });
}
