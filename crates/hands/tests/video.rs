//! `hands run --video` (issue 22): a run against the stand-in model and a local page in real
//! Chromium writes `video.webm`, which `ffprobe` decodes with a duration and frames; without
//! ffmpeg on PATH, `--video` stops the run before anything starts.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a test fails by panicking; it prints the video's size and why it skips"
)]

mod site;
mod viewer;

use std::io::BufReader;
use std::path::Path;
use std::process::{Command, Output};

use hands_sim::policy::{text, toolset_use};
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};
use viewer::eval;

/// A page that changes (a counter), so the screencast has pictures to send.
const PAGE: &str = r#"<!doctype html><title>Clock</title><h1 id=n>0</h1>
<script>let n = 0; setInterval(() => { document.getElementById('n').textContent = ++n; }, 100);
</script>"#;

/// How long the model's script keeps the run going, in milliseconds.
const RUN_MS: u64 = 3000;

fn site() -> String {
    site::serve(|_| PAGE.to_owned())
}

fn run(url: &str, sim: &SimServer, out: &Path, path: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command
        .args(["run", "--browser", url, "--approve", "all", "--video"])
        .args(["--browser-extra-members", "javascript_exec"])
        .args(["--task", "Watch the clock.", "--out"])
        .arg(out)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .stdin(std::process::Stdio::null());
    if let Some(path) = path {
        command.env("PATH", path);
    }
    command.output().unwrap()
}

fn on_path(program: &str) -> bool {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|dir| dir.join(program).is_file())
}

#[test]
fn a_run_with_video_writes_a_webm_ffprobe_decodes() {
    if !on_path("ffmpeg") || !on_path("ffprobe") {
        println!("skipped: ffmpeg or ffprobe is not on PATH (apt-get install ffmpeg)");
        return;
    }
    let url = site();
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        match n {
            1 => Turn::Blocks(vec![toolset_use(
                "browser",
                "javascript_exec",
                json!({"text": format!(
                    "new Promise((done) => setTimeout(() => done('waited'), {RUN_MS}))")}),
            )]),
            _ => Turn::Blocks(vec![text("Watched.")]),
        }
    }))
    .unwrap();
    let out = dir.path().join("run");
    let output = run(&url, &sim, &out, None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("video.webm:"), "{stderr}");
    let log = std::fs::read_to_string(out.join("log.jsonl")).unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains(r#""kind":"video""#) && l.contains("video.webm")),
        "{log}"
    );

    probe(&out.join("video.webm"));

    // `hands runs export --video` puts it in the trace; without --video it is left out.
    for (flag, held) in [(Some("--video"), true), (None, false)] {
        let trace = dir.path().join("run.hands");
        let export = Command::new(env!("CARGO_BIN_EXE_hands"))
            .args(["runs", "export"])
            .arg(&out)
            .arg("-o")
            .arg(&trace)
            .args(flag)
            .output()
            .unwrap();
        assert!(
            export.status.success(),
            "{}",
            String::from_utf8_lossy(&export.stderr)
        );
        let list = Command::new("tar")
            .arg("-tzf")
            .arg(&trace)
            .output()
            .unwrap();
        let names = String::from_utf8_lossy(&list.stdout);
        assert_eq!(
            names.lines().any(|n| n == "video/video.webm"),
            held,
            "{names}"
        );
    }
}

#[test]
fn video_without_ffmpeg_is_refused_before_the_run_starts() {
    let sim = SimServer::start(SimConfig::with_policy(|_: &Value| Turn::text("unused"))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("bin");
    std::fs::create_dir(&empty).unwrap();
    let output = run(
        "http://127.0.0.1:9/",
        &sim,
        &dir.path().join("run"),
        Some(empty.to_str().unwrap()),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("--video needs ffmpeg on PATH"), "{stderr}");
    assert!(sim.requests().is_empty());
    assert!(!dir.path().join("run").join("video.webm").exists());
}

/// Decodes `file` with ffprobe and checks it: VP8, lasting at least the run's wait, at least
/// 5 frames a second of it. Prints its size per minute.
fn probe(file: &Path) {
    let probe = Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args([
            "-show_entries",
            "stream=codec_name,nb_read_frames,width,height",
        ])
        .args(["-show_entries", "format=duration", "-of", "json"])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        probe.status.success(),
        "{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    let probe: Value = serde_json::from_slice(&probe.stdout).unwrap();
    let stream = &probe["streams"][0];
    let frames: u64 = stream["nb_read_frames"].as_str().unwrap().parse().unwrap();
    let duration: f64 = probe["format"]["duration"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let bytes = std::fs::metadata(file).unwrap().len();
    println!(
        "video: {} {}x{}, {frames} frames, {duration:.2} s, {bytes} bytes ({:.0} KB per minute)",
        stream["codec_name"],
        stream["width"],
        stream["height"],
        bytes as f64 / 1024.0 / duration * 60.0
    );
    assert_eq!(stream["codec_name"], "vp8");
    // The run lasted at least the model's wait: that many seconds at 5 frames a second.
    let least = RUN_MS / 1000 * 5;
    assert!(
        frames >= least,
        "{frames} frames, at least {least} expected"
    );
    assert!(duration >= (RUN_MS / 1000) as f64, "{duration} s");
}

#[test]
fn a_desktop_run_with_video_records_the_screen() {
    if !on_path("ffmpeg") || !on_path("ffprobe") {
        println!("skipped: ffmpeg or ffprobe is not on PATH (apt-get install ffmpeg)");
        return;
    }
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        match n {
            1 => Turn::Blocks(vec![toolset_use(
                "computer",
                "wait",
                json!({"duration": RUN_MS as f64 / 1000.0}),
            )]),
            _ => Turn::Blocks(vec![text("Waited.")]),
        }
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let output = Command::new(env!("CARGO_BIN_EXE_hands"))
        .args(["run", "--desktop", "--approve", "all", "--video"])
        .args(["--task", "Wait.", "--out"])
        .arg(&out)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .env_remove("DISPLAY")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("video.webm:"), "{stderr}");
    probe(&out.join("video.webm"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_on_a_step_in_the_view_seeks_the_video_to_that_step() {
    use hands_core::browser::Browser as _;
    use hands_core::browser::args::PageUrl;
    use hands_core::browser::driver::ReadResult;
    use std::io::BufRead as _;

    if !on_path("ffmpeg") {
        println!("skipped: ffmpeg is not on PATH (apt-get install ffmpeg)");
        return;
    }
    // Three steps a second apart, then the end: four answers at four times of the video.
    let url = site();
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        if n > 3 {
            return Turn::Blocks(vec![text("Watched.")]);
        }
        Turn::Blocks(vec![
            text(&format!("Step {n}: I wait a second.")),
            toolset_use(
                "browser",
                "javascript_exec",
                json!({"text": "new Promise((done) => setTimeout(() => done('waited'), 1000))"}),
            ),
        ])
    }))
    .unwrap();
    let out = dir.path().join("run");
    let output = run(&url, &sim, &out, None);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Where each step is in the video, by the log: (its answer's t_ms − the video's) / 1000.
    let log: Vec<Value> = std::fs::read_to_string(out.join("log.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let start = log.iter().find(|v| v["kind"] == "video").unwrap()["t_ms"]
        .as_u64()
        .unwrap();
    let at = |step: u64| {
        let answer = log
            .iter()
            .find(|v| v["kind"] == "response" && v["step"] == step)
            .unwrap();
        (answer["t_ms"].as_u64().unwrap() - start) as f64 / 1000.0
    };

    let mut view = Command::new(env!("CARGO_BIN_EXE_hands"))
        .arg("view")
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(view.stderr.take().unwrap()).lines();
    let view_url = loop {
        let line = lines.next().expect("hands view ended early").unwrap();
        if let Some(rest) = line.split(" at http").nth(1) {
            break format!("http{}", rest.trim());
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let mut browser = hands_cdp::CdpBrowser::launch(hands_cdp::DriverConfig::default())
        .await
        .unwrap();
    let cancel = hands_core::CancellationToken::new();
    browser
        .navigate(&PageUrl::parse("url", &view_url).unwrap(), None, &cancel)
        .await
        .unwrap();
    // The video is loaded (whole, as a blob) and its length known.
    let duration = eval(
        &browser,
        "new Promise((done) => { const t = setInterval(() => { \
         const v = document.getElementById('video'); \
         if (v.src && v.readyState >= 1 && v.duration > 0) { clearInterval(t); done(v.duration); } \
         }, 20); })",
    )
    .await
    .as_f64()
    .unwrap();
    assert!(
        duration >= at(4),
        "{duration} s of video, step 4 at {}",
        at(4)
    );
    for step in [3u64, 1, 4, 2] {
        // A real click on the step's tick in the timeline.
        let label = format!("Go to step {step}");
        let Some(ReadResult::Structured(read)) = browser.find(&label, None, &cancel).await.unwrap()
        else {
            panic!("find gave no structured read")
        };
        let tick = read
            .elements()
            .iter()
            .find(|e| e.label() == label)
            .unwrap_or_else(|| panic!("no {label} in {read:?}"))
            .reference()
            .clone();
        browser.click(&tick, None, &cancel).await.unwrap();
        let shown = eval(
            &browser,
            &format!(
                "new Promise((done) => {{ const t = setInterval(() => {{ \
                 if (document.getElementById('current').textContent.startsWith('At step {step} of')) \
                 {{ clearInterval(t); done(document.getElementById('video').currentTime); }} \
                 }}, 20); }})"
            ),
        )
        .await
        .as_f64()
        .unwrap();
        assert!(
            (shown - at(step)).abs() < 0.001,
            "step {step}: the video is at {shown} s, the log says {} s",
            at(step)
        );
    }
    let _ = view.kill();
    let _ = view.wait();
}
