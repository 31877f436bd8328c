//! The size of a trace per 50 steps in the worst case (issue 22): a screen of new dense text at
//! every step, so no two screenshots are alike. A real Chromium renders a page of small text
//! and scrolls it a screen at a time; its 49 PNG screenshots (1280×800, as a model would have
//! been shown them) and a 50-step log make a run directory, exported by `hands runs export` as
//! it is by default and with `--as-seen`. After each step a DOM snapshot is taken as `hands run`
//! takes it, and the page's title changes at every step, so no two snapshots are alike either.
//! Prints both sizes; the default must stay within 2 MB.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

mod site;

use std::process::Command;

use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::CancellationToken;
use hands_core::browser::Browser as _;
use hands_core::browser::args::PageUrl;
use serde_json::{Value, json};

const STEPS: usize = 50;

/// A page of dense, varied text (no two screens alike), served once per request.
fn dense_text_site() -> String {
    let mut words = Vec::new();
    let mut seed: u32 = 7;
    let syllables = [
        "ka", "lo", "mi", "ner", "tus", "vé", "qua", "dri", "on", "sel", "pa", "ré",
    ];
    for i in 0..60_000 {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let n = 1 + (seed >> 16) % 4;
        let word: String = (0..n)
            .map(|k| syllables[((seed >> (k * 4)) % 12) as usize])
            .collect();
        words.push(if i % 97 == 0 {
            format!("{word} {i}.")
        } else {
            word
        });
    }
    let body = format!(
        "<!doctype html><title>Dense</title><style>body {{ font: 12px/1.3 serif; columns: 4; \
         margin: 8px; }}</style><p>{}</p>",
        words.join(" ")
    );
    site::serve(move |_| body.clone())
}

fn export(run: &std::path::Path, out: &std::path::Path, flags: &[&str]) -> u64 {
    let status = Command::new(env!("CARGO_BIN_EXE_hands"))
        .args(["runs", "export"])
        .args(flags)
        .arg(run)
        .arg("-o")
        .arg(out)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::metadata(out).unwrap().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trace_of_50_steps_of_new_dense_text_stays_within_2_mb() {
    let url = dense_text_site();
    // PNG, as the desktop's screenshots are (the browser's are JPEG by default: smaller).
    let config = DriverConfig {
        image_format: hands_core::image::ImageFormat::Png,
        ..DriverConfig::default()
    };
    let mut browser = CdpBrowser::launch(config).await.unwrap();
    let cancel = CancellationToken::new();
    browser
        .navigate(&PageUrl::parse("url", &url).unwrap(), None, &cancel)
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir_all(run.join("images")).unwrap();
    let mut log = vec![
        json!({"kind": "start", "task": "Read the page", "provider": "anthropic",
        "model": "claude-opus-5-5", "unix_ms": 1_796_000_000_000u64}),
    ];
    let mut conversation: Vec<Value> = vec![json!({"role": "user", "content": "Read the page"})];
    let mut pngs = 0;
    let mut dom_bytes = 0;
    let dom = browser.dom_tap();
    let mut first = None;
    for step in 1..=STEPS {
        log.push(json!({"kind": "request", "step": step,
            "body": {"model": "claude-opus-5-5", "messages": conversation.clone()}}));
        let id = format!("toolu_{step:03}");
        let said = format!("Step {step}: I scroll on and look at the next screen of text.");
        let response = json!({"content": [{"type": "text", "text": said},
            {"type": "tool_use", "id": id, "name": "screenshot", "input": {}}]});
        log.push(
            json!({"kind": "response", "step": step, "ms": 900, "attempts": 1,
            "body": response}),
        );
        conversation.push(json!({"role": "assistant", "content": response["content"]}));
        if step == STEPS {
            break;
        }
        browser
            .call_raw(
                None,
                "Runtime.evaluate",
                json!({"expression": format!("window.scrollBy(0, 760); document.title = 'Dense {step}'")}),
            )
            .await
            .unwrap();
        let html = dom.snapshot().await.unwrap();
        assert!(html.contains(&format!("<title>Dense {step}</title>")));
        // Every snapshot of the one document is taken in the same isolated world.
        assert_eq!(dom.worlds_made(), 1);
        dom_bytes += html.len();
        let hash: String = {
            use sha2::Digest as _;
            sha2::Sha256::digest(html.as_bytes())[..8]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        };
        std::fs::create_dir_all(run.join("dom")).unwrap();
        std::fs::write(run.join(format!("dom/{hash}.html")), &html).unwrap();
        let shot = browser.screenshot(None, &cancel).await.unwrap();
        let bytes = shot.bytes();
        assert!(bytes.starts_with(b"\x89PNG"));
        assert_ne!(first.as_ref(), Some(&bytes), "the screen did not change");
        first.get_or_insert_with(|| bytes.clone());
        pngs += bytes.len();
        let file = format!("images/{step:03}-step{step}-{id}.png");
        std::fs::write(run.join(&file), &bytes).unwrap();
        log.push(
            json!({"kind": "action", "step": step, "call_id": id, "name": "screenshot",
            "is_error": false, "ms": 60.0, "summary": ""}),
        );
        log.push(
            json!({"kind": "image", "step": step, "call_id": id, "file": file,
            "size": shot.size.to_string()}),
        );
        log.push(json!({"kind": "dom", "step": step, "call_id": id,
            "file": format!("dom/{hash}.html"), "bytes": html.len()}));
        conversation.push(json!({"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": id, "content": [{"type": "image", "source": {"type": "base64",
            "media_type": "image/png", "data": format!("<{} base64 bytes>", bytes.len() * 4 / 3)}}]}]}));
    }
    let text: Vec<String> = log.iter().map(Value::to_string).collect();
    std::fs::write(run.join("log.jsonl"), text.join("\n") + "\n").unwrap();
    let log_bytes = std::fs::metadata(run.join("log.jsonl")).unwrap().len();

    let fit = export(&run, &dir.path().join("fit.hands"), &[]);
    let as_seen = export(&run, &dir.path().join("as-seen.hands"), &["--as-seen"]);
    let jpeg = export(&run, &dir.path().join("jpeg.hands"), &["--jpeg"]);
    let trace = hands_view::trace::Trace::open(&dir.path().join("fit.hands")).unwrap();
    let listed = Command::new("tar")
        .arg("-tzf")
        .arg(dir.path().join("fit.hands"))
        .output()
        .unwrap();
    let deltas = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter(|n| n.ends_with(".html.delta"))
        .count();
    eprintln!(
        "worst case, {STEPS} steps ({} screenshots and DOM snapshots, all different): run \
         directory log {log_bytes} B, PNGs {pngs} B, DOM snapshots {dom_bytes} B; run.hands: \
         default {fit} B ({} DOM snapshots kept, {deltas} of them as deltas), --jpeg {jpeg} B, --as-seen {as_seen} B (all)",
        STEPS - 1,
        trace.doms.len()
    );
    assert!(fit <= 2_000_000, "{fit} bytes per {STEPS} steps");
    assert!(as_seen > fit);
    // The trace still reads, every screenshot in it, and DOM snapshots through the run.
    assert_eq!(trace.images.len(), STEPS - 1);
    assert!(!trace.doms.is_empty());
    let as_seen_trace = hands_view::trace::Trace::open(&dir.path().join("as-seen.hands")).unwrap();
    assert_eq!(as_seen_trace.doms.len(), STEPS - 1);
    let (name, sample) = trace.images.iter().next().unwrap();
    let path =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace-worst-case-sample.jpg");
    std::fs::write(&path, sample).unwrap();
    eprintln!(
        "stored as {name}, {} bytes, {:?}: {}",
        sample.len(),
        hands_cdp::image_size(sample),
        path.display()
    );
}
