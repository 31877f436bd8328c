//! The typing matrix of issue 9: texts × the five layouts × real clients (a core-protocol
//! client, an Xlib client, a GTK client), typed by the X11 driver while another process keeps
//! every core busy, with openbox managing the windows. Prints, for each cell, whether the client
//! received the text exactly (or how many characters differ), how many MappingNotify events a
//! client received, openbox's CPU time, and typing speed.
//!
//! Run with `cargo run --release -p hands-x11 --example typing_matrix`. Options:
//! `--quick` (shorter texts), `--no-load` (no load generator), `--layouts us,de`.

#![allow(clippy::print_stdout, reason = "an example that prints its table")]
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use hands_core::geometry::Size;
use hands_core::{CancellationToken, Desktop as _};
use hands_testkit::texts::{ascii, cjk, long_mixed, missing_pool, wrong_positions};
use hands_testkit::{Area, CpuLoad, GtkText, InputRecorder, Layout, RecorderConfig, XlibKeys};
use hands_x11::{X11Desktop, XvfbConfig};

type Error = Box<dyn std::error::Error>;

/// CPU seconds a process has used (user + system), from `/proc`.
fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
        return 0.0;
    };
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of the line (utime, stime) are 11 and 12 after the state.
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|f| f.parse::<f64>().ok()))
        .sum();
    ticks / 100.0
}

struct Cell {
    layout: Layout,
    text: &'static str,
    client: &'static str,
    wrong: usize,
    n_chars: usize,
    seconds: f64,
    notifies: u64,
    wm_cpu: f64,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let load = !args.iter().any(|a| a == "--no-load");
    let layouts: Vec<Layout> = match args.iter().position(|a| a == "--layouts") {
        Some(i) => args
            .get(i + 1)
            .map(|list| {
                list.split(',')
                    .filter_map(|n| Layout::ALL.into_iter().find(|l| l.name() == n))
                    .collect()
            })
            .unwrap_or_default(),
        None => Layout::ALL.to_vec(),
    };
    let size = Size::new(1280, 800).ok_or("size")?;
    let xvfb = hands_x11::Xvfb::spawn(&XvfbConfig::new(size))?;
    let display = xvfb.display().to_owned();
    let openbox = xvfb.spawn_client("openbox", &[])?;
    let openbox_pid = openbox.host_pid().unwrap_or(openbox.pid());
    std::thread::sleep(Duration::from_millis(500));
    let mut desktop = X11Desktop::connect(Some(&display))?;
    let recorder = InputRecorder::start_with(
        &display,
        &RecorderConfig {
            area: Some(Area {
                x: 900,
                y: 500,
                width: 300,
                height: 200,
            }),
            ..RecorderConfig::default()
        },
    )?;
    let mut xlib = XlibKeys::start(&display)?;
    let mut gtk = GtkText::start(&display)?;
    let _load = if load { Some(CpuLoad::start()?) } else { None };
    let n_long = if quick { 500 } else { 2000 };
    let texts: Vec<(&'static str, String)> = vec![
        ("long mixed", long_mixed(n_long)),
        ("1,000 CJK", cjk(if quick { 300 } else { 1000 })),
        ("ASCII", ascii(if quick { 300 } else { 1000 })),
    ];
    println!(
        "typing matrix on Xvfb {display} with openbox{}; long mixed text: {} characters, {} distinct \
         missing from every layout",
        if load {
            format!(
                ", {} busy processes",
                _load.as_ref().map_or(0, CpuLoad::n_processes)
            )
        } else {
            String::new()
        },
        texts[0].1.chars().count(),
        missing_pool()
            .iter()
            .filter(|c| texts[0].1.contains(**c))
            .count()
    );
    let cancel = CancellationToken::new();
    let mut cells = Vec::new();
    for &layout in &layouts {
        layout.apply(&display)?;
        for (name, text) in &texts {
            let n_chars = text.chars().count();
            for client in ["core (recorder)", "Xlib", "GTK"] {
                let notifies_before = recorder.n_mapping_notifies();
                let wm_before = cpu_seconds(openbox_pid);
                match client {
                    "Xlib" => {
                        xlib.focus()?;
                        xlib.clear()?;
                    }
                    "GTK" => {
                        gtk.focus()?;
                        gtk.clear()?;
                    }
                    _ => {
                        recorder.focus()?;
                        recorder.clear()?;
                    }
                }
                let start = Instant::now();
                desktop.type_text(text, &cancel).await?;
                let got = match client {
                    "Xlib" => {
                        xlib.sync()?;
                        xlib.typed_text()
                    }
                    "GTK" => gtk.wait_for_text(n_chars, Duration::from_secs(60))?,
                    _ => recorder
                        .wait_for_text(n_chars, Duration::from_secs(60))
                        .unwrap_or_else(|_| recorder.typed_text()),
                };
                let seconds = start.elapsed().as_secs_f64();
                // What the window manager spends on the mapping changes, given time to finish.
                std::thread::sleep(Duration::from_millis(500));
                let cell = Cell {
                    layout,
                    text: name,
                    client,
                    wrong: wrong_positions(text, &got),
                    n_chars,
                    seconds,
                    notifies: recorder.n_mapping_notifies() - notifies_before,
                    wm_cpu: cpu_seconds(openbox_pid) - wm_before,
                };
                println!(
                    "{:<7} {:<11} {:<16} {:<22} {:>6.0} chars/s  {:>4} MappingNotify  openbox {:.2} s CPU",
                    cell.layout.name(),
                    cell.text,
                    cell.client,
                    if cell.wrong == 0 {
                        "exact".to_owned()
                    } else {
                        format!("{} of {} wrong", cell.wrong, cell.n_chars)
                    },
                    cell.n_chars as f64 / cell.seconds,
                    cell.notifies,
                    cell.wm_cpu,
                );
                cells.push(cell);
            }
        }
    }
    let exact = cells.iter().filter(|c| c.wrong == 0).count();
    println!("\n{exact} of {} cells exact", cells.len());
    let cjk_rates: Vec<f64> = cells
        .iter()
        .filter(|c| c.text == "1,000 CJK")
        .map(|c| c.n_chars as f64 / c.seconds)
        .collect();
    if !cjk_rates.is_empty() {
        let mut sorted = cjk_rates.clone();
        sorted.sort_by(f64::total_cmp);
        println!(
            "CJK: median {:.0} chars/s over {} cells (typing until the client has every character)",
            sorted[sorted.len() / 2],
            sorted.len()
        );
    }
    drop(desktop);
    Ok(())
}
