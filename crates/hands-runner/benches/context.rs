//! Billed input tokens of one 50-step scripted Claude run, side by side: the reference
//! harness's handling of history (every screenshot kept, prompt caching on — anthropic's
//! computer-use-demo on the first-party API, `/work/shared/anchors/computer-use.md` §1) against
//! hands' (screenshots dropped in cost-chosen batches, unchanged screenshots sent as text), the
//! spec's example interval (every 25), and the API's own tool-result clearing.
//!
//! Each run is the real runner on a real Xvfb desktop (openbox and mousepad, a note being
//! written), against the simulated Messages API, which bills by prefix caching: a breakpoint
//! reads the longest prefix it has seen, the request writes up to its last breakpoint, so a
//! pruning that changes the prefix pays for the writes. Billed input = input + 1.25 × cache
//! writes + 0.1 × cache reads. The same 50 turns for every handling; the screenshots are the
//! desktop's own (a blinking caret makes some "unchanged" screens differ, as in life).
//!
//! The step mix (repeated five times): type ×4, key ×2, screenshot, mouse_move, zoom, wait —
//! the observation steps (a third) are as frequent as in computer-use traces, where a model
//! often looks again before acting.
//!
//! Run with `cargo bench -p hands-runner --bench context`. Prints numbers; asserts nothing
//! (the invariants are tested in `tests/context.rs`).

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    reason = "a benchmark binary"
)]

use std::time::{Duration, Instant};

use hands_core::geometry::Size;
use hands_core::{CancellationToken, Desktop};
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_runner::context::{ClientContext, ContextConfig, ContextManagement, NativeContext};
use hands_runner::{AnthropicSettings, RunConfig, Runner, Toolbox};
use hands_sim::policy::toolset_use;
use hands_sim::{SimConfig, SimServer, Turn};
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_x11::{X11Desktop, XClient, XvfbConfig};
use serde_json::{Value, json};

const STEPS: usize = 50;

/// The 50 turns: a note written in the editor, with the looks a model takes between.
fn script() -> Vec<Turn> {
    let lines = [
        "Meeting notes, Thursday",
        "- budget approved for Q3",
        "- hiring: two engineers",
        "- launch moved to May",
        "Action items:",
        "1. send the budget to finance",
        "2. post the job ads",
        "3. tell marketing about May",
        "4. book the review room",
        "5. share these notes",
    ];
    let mut turns = vec![Turn::Blocks(vec![toolset_use(
        "computer",
        "left_click",
        json!({"coordinate": [640, 400]}),
    )])];
    let mut line = 0;
    while turns.len() < STEPS - 1 {
        let round = turns.len();
        for kind in [
            "type",
            "key",
            "screenshot",
            "type",
            "mouse_move",
            "type",
            "key",
            "zoom",
            "type",
            "wait",
        ] {
            let block = match kind {
                "type" => {
                    line += 1;
                    toolset_use(
                        "computer",
                        "type",
                        json!({"text": lines[line % lines.len()]}),
                    )
                }
                "key" => toolset_use("computer", "key", json!({"text": "Return"})),
                "mouse_move" => toolset_use(
                    "computer",
                    "mouse_move",
                    json!({"coordinate": [200 + round, 600]}),
                ),
                "zoom" => toolset_use("computer", "zoom", json!({"region": [0, 0, 640, 400]})),
                "wait" => toolset_use("computer", "wait", json!({"duration": 1})),
                other => toolset_use("computer", other, json!({})),
            };
            turns.push(Turn::Blocks(vec![block]));
            if turns.len() == STEPS - 1 {
                break;
            }
        }
    }
    turns.push(Turn::text("The notes are written."));
    turns
}

/// An Xvfb desktop with openbox and mousepad, once the editor's window shows.
async fn desktop() -> (X11Desktop, Vec<XClient>) {
    let mut desktop = X11Desktop::spawn(&XvfbConfig::new(Size::new(1280, 800).unwrap())).unwrap();
    let clients = vec![
        desktop.spawn_client("openbox", &[]).unwrap(),
        desktop
            .spawn_client("mousepad", &["--disable-server"])
            .unwrap(),
    ];
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let pixels = desktop.capture().await.unwrap();
        let size = pixels.size();
        if pixels.rgb_at(size.width / 2, size.height / 2) != pixels.rgb_at(0, 0) {
            break;
        }
        assert!(Instant::now() < deadline, "mousepad did not show");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (desktop, clients)
}

/// What one handling cost.
struct Bill {
    name: &'static str,
    requests: u32,
    input: u64,
    written: u64,
    read: u64,
    images_sent: usize,
    unchanged: usize,
    /// The members whose closing screenshot came back unchanged, by step.
    unchanged_steps: Vec<String>,
    last_three_visible: bool,
}

impl Bill {
    fn billed(&self) -> f64 {
        self.input as f64 + 1.25 * self.written as f64 + 0.1 * self.read as f64
    }
}

/// The image blocks of `value`, as their base64 data.
fn images(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(o) if o.get("type") == Some(&json!("image")) => {
            if let Some(data) = o
                .get("source")
                .and_then(|s| s.get("data"))
                .and_then(Value::as_str)
            {
                out.push(data.to_owned());
            }
        }
        Value::Object(o) => o.values().for_each(|v| images(v, out)),
        Value::Array(items) => items.iter().for_each(|v| images(v, out)),
        _ => {}
    }
}

async fn run(name: &'static str, context: ContextConfig) -> Bill {
    let (desktop, _clients) = desktop().await;
    let sim = SimServer::start(SimConfig::scripted(script())).unwrap();
    let mut config = AnthropicConfig::new("sk-bench");
    config.base_url = sim.base_url();
    let boxed: Box<dyn Desktop> = Box::new(desktop);
    let computer = ComputerToolset::new(boxed, ComputerConfig::default()).unwrap();
    let mut settings = AnthropicSettings::new("claude-opus-5-5");
    settings.system = Some("You operate a Linux desktop. Write the meeting notes.".into());
    settings.context = context;
    let runner = Runner::anthropic(
        AnthropicClient::new(config).unwrap(),
        settings,
        Some(computer),
        Toolbox::default(),
        RunConfig {
            max_steps: u32::try_from(STEPS).unwrap() + 2,
        },
    );
    let outcome = runner
        .run(
            "Write today's meeting notes in the editor.",
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(outcome.finished(), "{name}: {outcome:?}");
    assert!(
        sim.violations().is_empty(),
        "{name}: {:?}",
        sim.violations()
    );
    // Every screenshot the model was ever sent, in order (each is new in the request after
    // it), and whether the last three so far were in every request.
    let mut sent: Vec<String> = Vec::new();
    let mut images_sent = 0;
    let mut last_three_visible = true;
    let mut unchanged = 0;
    let mut unchanged_steps = Vec::new();
    for (step, request) in sim.requests().iter().enumerate() {
        let messages = request.body["messages"].as_array().unwrap();
        if let Some(last) = messages.last() {
            let mut new = Vec::new();
            images(last, &mut new);
            sent.extend(new);
            let n = last
                .to_string()
                .matches("has not changed since the last")
                .count();
            if n > 0 {
                let member = messages[messages.len() - 2]["content"][0]["name"]
                    .as_str()
                    .unwrap_or("?")
                    .to_owned();
                unchanged_steps.push(format!("{step}:{member}"));
            }
            unchanged += n;
        }
        let mut visible = Vec::new();
        images(&request.body["messages"], &mut visible);
        images_sent += visible.len();
        let last_three = &sent[sent.len().saturating_sub(3)..];
        last_three_visible &= last_three.iter().all(|s| visible.contains(s));
    }
    Bill {
        name,
        requests: outcome.usage.n_requests,
        input: outcome.usage.input_tokens,
        written: outcome.usage.cache_creation_input_tokens,
        read: outcome.usage.cache_read_input_tokens,
        images_sent,
        unchanged,
        unchanged_steps,
        last_three_visible,
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let bills = runtime.block_on(async {
        vec![
            run(
                "reference: every screenshot kept, cached",
                ContextConfig::keep_all(),
            )
            .await,
            run(
                "hands: keep 3, drop every 9, unchanged as text",
                ContextConfig::default(),
            )
            .await,
            run(
                "hands, drop every 25 (the spec's example)",
                ContextConfig {
                    management: ContextManagement::Client(ClientContext {
                        drop_every: Some(25),
                        ..ClientContext::default()
                    }),
                    ..ContextConfig::default()
                },
            )
            .await,
            run(
                "native: clear_tool_uses (30k trigger, keep 3)",
                ContextConfig::native(NativeContext::default()),
            )
            .await,
        ]
    });
    let reference = bills[0].billed();
    println!(
        "Billed input tokens of one {STEPS}-step Claude run (1280x800 screenshots; cache writes 1.25x, reads 0.1x):"
    );
    println!(
        "{:<48} {:>8} {:>9} {:>10} {:>10} {:>11} {:>8} {:>7} {:>10} {:>8}",
        "handling",
        "requests",
        "input",
        "cache wr",
        "cache rd",
        "billed",
        "vs ref",
        "images",
        "unchanged",
        "last 3"
    );
    for bill in &bills {
        println!(
            "{:<48} {:>8} {:>9} {:>10} {:>10} {:>11.0} {:>7.1}% {:>7} {:>10} {:>8}",
            bill.name,
            bill.requests,
            bill.input,
            bill.written,
            bill.read,
            bill.billed(),
            (bill.billed() / reference - 1.0) * 100.0,
            bill.images_sent,
            bill.unchanged,
            if bill.last_three_visible { "yes" } else { "NO" },
        );
    }
    println!(
        "unchanged screenshots (step:member) under hands: {}",
        bills[1].unchanged_steps.join(" ")
    );
}
