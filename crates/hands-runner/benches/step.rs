//! The runner's own overhead per step: everything but the model's latency.
//!
//! 1. A 40-step run on a real Xvfb desktop against the simulated Messages API, each step one
//!    cheap action (`cursor_position`): per step, the wall time, the time inside the model
//!    request (HTTP round trip to a local server that answers at once), the time inside the
//!    action, and the rest — the runner's bookkeeping.
//! 2. The request-building cost on a long conversation: screenshot pruning, cache breakpoints
//!    and serialisation of 60 turns carrying 1280x800 screenshots.
//!
//! Run with `cargo bench -p hands-runner --bench step`. Prints numbers; asserts nothing.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark binary"
)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hands_core::geometry::Size;
use hands_core::{CancellationToken, Desktop};
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_runner::context::{
    DEFAULT_DROP_EVERY, DEFAULT_KEEP_SCREENSHOTS, place_breakpoints, prune_screenshots,
};
use hands_runner::diagnostics::{Record, Stage};
use hands_runner::{AnthropicSettings, RunConfig, Runner, Toolbox};
use hands_sim::policy::toolset_use;
use hands_sim::{SimConfig, SimServer, Turn};
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::{Value, json};

const STEPS: u32 = 40;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn p90(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[(v.len() * 9 / 10).min(v.len() - 1)]
}

async fn loop_overhead() {
    let desktop = X11Desktop::spawn(&XvfbConfig::new(Size::new(1280, 800).unwrap())).unwrap();
    let sim = SimServer::start(SimConfig::with_policy(|request: &Value| {
        if request["tool_choice"]["type"] == "none" {
            return Turn::text("done");
        }
        Turn::Blocks(vec![toolset_use("computer", "cursor_position", json!({}))])
    }))
    .unwrap();
    let mut config = AnthropicConfig::new("sk-bench");
    config.base_url = sim.base_url();
    let client = AnthropicClient::new(config).unwrap();
    let boxed: Box<dyn Desktop> = Box::new(desktop);
    let computer = ComputerToolset::new(
        boxed,
        ComputerConfig {
            append_screenshot: false,
            ..ComputerConfig::default()
        },
    )
    .unwrap();
    let mut runner = Runner::anthropic(
        client,
        AnthropicSettings::new("claude-opus-5"),
        Some(computer),
        Toolbox::default(),
        RunConfig { max_steps: STEPS },
    );
    let records: Arc<Mutex<Vec<(Stage, Duration, Instant)>>> = Arc::default();
    let sink = Arc::clone(&records);
    runner.set_observer(Box::new(move |r: &Record| {
        sink.lock()
            .unwrap()
            .push((r.stage, r.duration, Instant::now()));
    }));
    let start = Instant::now();
    let outcome = runner
        .run("Report the cursor.", &CancellationToken::new())
        .await
        .unwrap();
    let total = start.elapsed();
    let records = records.lock().unwrap();
    let requests: Vec<f64> = records
        .iter()
        .filter(|r| r.0 == Stage::Request)
        .map(|r| r.1.as_secs_f64() * 1e3)
        .collect();
    let actions: Vec<f64> = records
        .iter()
        .filter(|r| r.0 == Stage::Action)
        .map(|r| r.1.as_secs_f64() * 1e3)
        .collect();
    // Per step: from one request's end to the next request's end.
    let ends: Vec<Instant> = records
        .iter()
        .filter(|r| r.0 == Stage::Request)
        .map(|r| r.2)
        .collect();
    let steps: Vec<f64> = ends
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64() * 1e3)
        .collect();
    let step_median = median(steps.clone());
    let request_median = median(requests.clone());
    let action_median = median(actions.clone());
    println!(
        "runner loop: {} steps in {:.0} ms ({:?})",
        outcome.steps,
        total.as_secs_f64() * 1e3,
        outcome.status
    );
    println!("  {:<44} {:>9} {:>9}", "", "median", "p90");
    println!(
        "  {:<44} {:>7.2}ms {:>7.2}ms",
        "step (request end to request end)",
        step_median,
        p90(steps)
    );
    println!(
        "  {:<44} {:>7.2}ms {:>7.2}ms",
        "  model request (HTTP to a local stand-in)",
        request_median,
        p90(requests)
    );
    println!(
        "  {:<44} {:>7.2}ms {:>7.2}ms",
        "  action (cursor_position on Xvfb)",
        action_median,
        p90(actions)
    );
    println!(
        "  {:<44} {:>7.2}ms",
        "  runner overhead (the rest)",
        step_median - request_median - action_median
    );
    println!(
        "  (the stand-in's own work is inside the request time; sim counted {} requests)",
        sim.requests().len()
    );
}

/// A base64 PNG-shaped payload of `n` bytes with a real 1280x800 header.
fn screenshot_block(n: usize) -> Value {
    use base64::Engine as _;
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bytes.extend_from_slice(&1280u32.to_be_bytes());
    bytes.extend_from_slice(&800u32.to_be_bytes());
    bytes.resize(n, 7);
    json!({"type": "image", "source": {"type": "base64", "media_type": "image/png",
        "data": base64::engine::general_purpose::STANDARD.encode(bytes)}})
}

fn context_cost() {
    let mut messages = vec![json!({"role": "user", "content": "task"})];
    for i in 0..60 {
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use",
            "id": format!("toolu_{i}"), "name": "screenshot", "toolset_name": "computer", "input": {}}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": format!("toolu_{i}"), "toolset_name": "computer",
            "content": [screenshot_block(90_000)]}]}));
    }
    let mut times = Vec::new();
    let mut bytes = 0;
    for _ in 0..20 {
        let mut m = messages.clone();
        let mut system = json!("system prompt");
        let mut tools = vec![json!({"type": "computer_toolset_20260801"})];
        let start = Instant::now();
        prune_screenshots(
            &mut m,
            DEFAULT_KEEP_SCREENSHOTS,
            Some(DEFAULT_DROP_EVERY),
            0,
        );
        place_breakpoints(&mut system, &mut tools, &mut m, 3);
        let body =
            serde_json::to_vec(&json!({"messages": m, "tools": tools, "system": system})).unwrap();
        times.push(start.elapsed().as_secs_f64() * 1e3);
        bytes = body.len();
    }
    println!(
        "request building, 60 turns with 1280x800 screenshots (pruned to the last 3 + batch): median {:.2} ms, p90 {:.2} ms, body {} KB",
        median(times.clone()),
        p90(times),
        bytes / 1024
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(loop_overhead());
    context_cost();
}
