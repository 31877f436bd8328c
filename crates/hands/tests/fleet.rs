//! `hands batch` and `hands worker` against a real private PostgreSQL and the simulated
//! Messages API: three desktop tasks submitted and run by one worker with two slots; then a
//! worker SIGKILLed while its episode waits on the model, and a second worker taking the
//! episode over once the lease has expired and finishing it by resume, the effect done once;
//! a stalled worker woken after a takeover; and a parked episode listed, reconciled with
//! `hands batch reconcile` and resumed; and `hands view --ledger` listing a finished batch and
//! opening an episode from its checkpoints, over HTTP and in a real Chromium.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hands_fleet::cluster::{Durability, LocalCluster};
use hands_sim::policy::tool_use;
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};

fn cluster() -> LocalCluster {
    LocalCluster::start(Durability::Unsynced).unwrap_or_else(|e| {
        panic!("a private PostgreSQL is needed ({e}); run scripts/install-system-deps.sh")
    })
}

fn hands(sim: &SimServer) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command
        .stdin(Stdio::null())
        .env_remove("DISPLAY")
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url());
    command
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned() + &String::from_utf8_lossy(&output.stdout)
}

/// The answered tool calls in a request.
fn answered(request: &Value) -> usize {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result" && b["is_error"] != json!(true))
        .count()
}

/// The task's text: the first user message.
fn prompt(request: &Value) -> String {
    match &request["messages"][0]["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

fn submit(sim: &SimServer, url: &str, dir: &Path, tasks: &[Value]) {
    let file = dir.join("tasks.jsonl");
    let lines: Vec<String> = tasks.iter().map(Value::to_string).collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let output = hands(sim)
        .args(["batch", "submit", "--ledger", url])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        text(&output).contains(&format!("submitted {} episode(s)", tasks.len())),
        "{}",
        text(&output)
    );
}

fn worker(sim: &SimServer, url: &str, dir: &Path, slots: &str) -> Command {
    let mut command = hands(sim);
    command
        .args(["worker", "--ledger", url, "--slots", slots, "--lease", "2"])
        .args(["--sandbox", "none", "--until-done", "--dir"])
        .arg(dir.join("runs"));
    command
}

fn status(sim: &SimServer, url: &str) -> String {
    let output = hands(sim)
        .args(["batch", "status", "--ledger", url])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    text(&output)
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_worker_runs_a_submitted_batch_to_its_end() {
    let pg = cluster();
    let url = pg.database("batch").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let effects = dir.path().join("effects.txt");
    let effects_in_policy = effects.clone();
    // Each task appends its number once, then says it is done.
    let sim = SimServer::start(SimConfig::with_policy(move |request: &Value| {
        if answered(request) == 0 {
            let n = prompt(request)
                .split_whitespace()
                .last()
                .unwrap_or("?")
                .to_owned();
            let command = format!("echo {n} >> {}", effects_in_policy.display());
            Turn::Blocks(vec![tool_use("bash", json!({ "command": command }))])
        } else {
            Turn::text("Done.")
        }
    }))
    .unwrap();
    let tasks: Vec<Value> = (1..=3)
        .map(|n| {
            json!({"prompt": format!("Append the line {n}"), "environment": {"kind": "desktop"},
                "max_steps": 5, "check": format!("grep -qx {n} {}", effects.display())})
        })
        .collect();
    submit(&sim, &url, dir.path(), &tasks);
    assert!(status(&sim, &url).contains("3 episodes: 3 queued"));
    let output = worker(&sim, &url, dir.path(), "2").output().unwrap();
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    let mut got = lines(&effects);
    got.sort();
    assert_eq!(got, ["1", "2", "3"], "{said}");
    let shown = status(&sim, &url);
    assert!(
        shown.contains("3 episodes: 0 queued, 0 running, 3 finished"),
        "{shown}"
    );
    assert!(shown.contains("success: 3 of 3 done (100.0%)"), "{shown}");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    // Each episode's run directory holds its log.
    for n in 1..=3 {
        let log = dir.path().join(format!("runs/episode-{n}/log.jsonl"));
        assert!(
            std::fs::read_to_string(&log)
                .unwrap()
                .contains("\"kind\":\"start\"")
        );
    }
}

fn wait_until(timeout: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn kill(mut child: Child) {
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

#[test]
fn a_killed_workers_episode_is_taken_over_after_its_lease_and_resumed() {
    let pg = cluster();
    let url = pg.database("takeover").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let effects = dir.path().join("effects.txt");
    let effects_in_policy = effects.clone();
    let waiting = Arc::new(AtomicBool::new(false));
    let second_requests = Arc::new(AtomicUsize::new(0));
    let (waiting_in_policy, seconds) = (Arc::clone(&waiting), Arc::clone(&second_requests));
    // The effect, then a model that is slow to answer the first time: the worker is killed
    // while it waits.
    let sim = SimServer::start(SimConfig::with_policy(move |request: &Value| {
        if answered(request) == 0 {
            let command = format!("echo once >> {}", effects_in_policy.display());
            return Turn::Blocks(vec![tool_use("bash", json!({ "command": command }))]);
        }
        if seconds.fetch_add(1, Ordering::SeqCst) == 0 {
            waiting_in_policy.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_secs(3));
        }
        Turn::text("Done.")
    }))
    .unwrap();
    let task = json!({"prompt": "Append once", "environment": {"kind": "desktop"}, "max_steps": 5,
        "check": format!("grep -qx once {}", effects.display())});
    submit(&sim, &url, dir.path(), &[task]);
    let first = worker(&sim, &url, dir.path(), "1")
        .args(["--name", "first"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(60), "the second request", || {
        waiting.load(Ordering::SeqCst)
    });
    kill(first);
    let killed_at = Instant::now();
    assert!(status(&sim, &url).contains("1 running"));
    let output = worker(&sim, &url, dir.path(), "1")
        .args(["--name", "second"])
        .output()
        .unwrap();
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    // The second worker waited for the lease (2 s) to expire, then resumed the episode.
    assert!(said.contains("episode 1 (epoch 2, resuming)"), "{said}");
    assert!(said.contains("episode 1 finished"), "{said}");
    assert!(killed_at.elapsed() >= Duration::from_millis(1500));
    // The effect happened once; the episode finished with its check passing.
    assert_eq!(lines(&effects), ["once"], "{said}");
    let shown = status(&sim, &url);
    assert!(shown.contains("1 finished"), "{shown}");
    assert!(shown.contains("success: 1 of 1 done"), "{shown}");
    assert_eq!(second_requests.load(Ordering::SeqCst), 2);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let log = std::fs::read_to_string(dir.path().join("runs/episode-1/log.jsonl")).unwrap();
    assert!(log.contains("\"kind\":\"resume\""), "{log}");
}

fn signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_stalled_worker_that_wakes_after_a_takeover_never_acts_again() {
    let pg = cluster();
    let url = pg.database("zombie").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let effects = dir.path().join("effects.txt");
    let effects_in_policy = effects.clone();
    let waiting = Arc::new(AtomicBool::new(false));
    let second_requests = Arc::new(AtomicUsize::new(0));
    let (waiting_in_policy, seconds) = (Arc::clone(&waiting), Arc::clone(&second_requests));
    // Two effects, one per turn; the model is slow to propose the second the first time: the
    // worker is stopped (SIGSTOP) while it waits, past its lease.
    let sim = SimServer::start(SimConfig::with_policy(move |request: &Value| {
        let append = |line: &str| {
            let command = format!("echo {line} >> {}", effects_in_policy.display());
            Turn::Blocks(vec![tool_use("bash", json!({ "command": command }))])
        };
        match answered(request) {
            0 => append("a"),
            1 => {
                if seconds.fetch_add(1, Ordering::SeqCst) == 0 {
                    waiting_in_policy.store(true, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_secs(3));
                }
                append("b")
            }
            _ => Turn::text("Done."),
        }
    }))
    .unwrap();
    let task = json!({"prompt": "Append a, then b", "environment": {"kind": "desktop"},
        "max_steps": 6});
    submit(&sim, &url, dir.path(), &[task]);
    let stalled = worker(&sim, &url, dir.path(), "1")
        .args(["--name", "stalled"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(60), "the second request", || {
        waiting.load(Ordering::SeqCst)
    });
    signal(&stalled, "-STOP");
    // The second worker takes the episode over once the lease expires, and finishes it.
    let output = worker(&sim, &url, dir.path(), "1")
        .args(["--name", "second"])
        .output()
        .unwrap();
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("episode 1 (epoch 2, resuming)"), "{said}");
    assert_eq!(lines(&effects), ["a", "b"], "{said}");
    // The stalled worker wakes with the model's answer proposing `b` in hand: its save before
    // the effect is refused by the fence, so it stops without acting and records nothing.
    signal(&stalled, "-CONT");
    let output = stalled.wait_with_output().unwrap();
    let stalled_said = text(&output);
    assert!(output.status.success(), "{stalled_said}");
    assert!(
        stalled_said.contains("episode 1 is no longer this worker's"),
        "{stalled_said}"
    );
    assert_eq!(lines(&effects), ["a", "b"], "{stalled_said}");
    let shown = status(&sim, &url);
    assert!(shown.contains("1 finished"), "{shown}");
    assert_eq!(second_requests.load(Ordering::SeqCst), 2);
}

#[test]
fn a_parked_episode_is_listed_reconciled_by_a_person_and_resumed() {
    let pg = cluster();
    let url = pg.database("reconcile").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let effects = dir.path().join("effects.txt");
    let (started_in_policy, effects_in_policy) = (started.clone(), effects.clone());
    // One long call: the worker is killed while it runs, so its outcome is unknown.
    let sim = SimServer::start(SimConfig::with_policy(move |request: &Value| {
        if answered(request) == 0 {
            // It appends only if the file `proceed` exists, which it never does: the effect
            // does not happen, and "did not happen" is the truth to reconcile.
            let command = format!(
                "touch {}; sleep 3; test -e proceed && echo once >> {}",
                started_in_policy.display(),
                effects_in_policy.display()
            );
            return Turn::Blocks(vec![tool_use("bash", json!({ "command": command }))]);
        }
        Turn::text("Done.")
    }))
    .unwrap();
    let task = json!({"prompt": "Append once, slowly", "environment": {"kind": "desktop"},
        "max_steps": 4});
    submit(&sim, &url, dir.path(), &[task]);
    let first = worker(&sim, &url, dir.path(), "1")
        .args(["--name", "first"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(60), "the call to start", || {
        started.exists()
    });
    kill(first);
    // The next worker finds the call uncertain and parks the episode.
    let output = worker(&sim, &url, dir.path(), "1").output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let shown = status(&sim, &url);
    assert!(shown.contains("1 parked"), "{shown}");
    let listed = hands(&sim)
        .args(["batch", "reconcile", "--ledger", &url])
        .output()
        .unwrap();
    let listing = text(&listed);
    assert!(listed.status.success(), "{listing}");
    assert!(
        listing.contains("episode 1: 1 uncertain call(s)"),
        "{listing}"
    );
    let call = listing
        .split("call ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .unwrap()
        .to_owned();
    // A call that is not uncertain is refused, naming those that are.
    let wrong = hands(&sim)
        .args(["batch", "reconcile", "--ledger", &url, "--episode", "1"])
        .args(["--call", "toolu_nope", "--happened"])
        .output()
        .unwrap();
    assert!(!wrong.status.success());
    assert!(text(&wrong).contains(&call), "{}", text(&wrong));
    assert!(status(&sim, &url).contains("1 parked"));
    let decided = hands(&sim)
        .args(["batch", "reconcile", "--ledger", &url, "--episode", "1"])
        .args([
            "--call",
            &call,
            "--not-happened",
            "--note",
            "nothing was appended",
        ])
        .output()
        .unwrap();
    let said = text(&decided);
    assert!(decided.status.success(), "{said}");
    assert!(said.contains("episode 1: queued again"), "{said}");
    // A worker resumes it: the model is told the call did not happen, and finishes.
    let output = worker(&sim, &url, dir.path(), "1").output().unwrap();
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("episode 1 finished"), "{said}");
    let shown = status(&sim, &url);
    assert!(shown.contains("1 finished"), "{shown}");
    assert!(lines(&effects).is_empty());
}

/// Issue 20, item 3: under `--sandbox jail` the episode's programs read the claim too — the run
/// directory is not in the jail, so `claim.json` is also written into the jail's `/workspace`
/// (the bash tool's working directory) and home.
#[test]
fn a_jailed_episode_reads_its_claim_where_its_shell_starts() {
    let pg = cluster();
    let url = pg.database("jailclaim").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(String::new()));
    let seen_in_policy = Arc::clone(&seen);
    let sim = SimServer::start(SimConfig::with_policy(move |request: &Value| {
        if answered(request) == 0 {
            let command = "cat claim.json && cat ~/claim.json";
            Turn::Blocks(vec![tool_use("bash", json!({ "command": command }))])
        } else {
            *seen_in_policy.lock().unwrap() = request["messages"].to_string();
            Turn::text("Done.")
        }
    }))
    .unwrap();
    let task = json!({"prompt": "Read the claim", "environment": {"kind": "desktop"},
        "max_steps": 3});
    submit(&sim, &url, dir.path(), &[task]);
    let output = hands(&sim)
        .args(["worker", "--ledger", &url, "--slots", "1", "--lease", "5"])
        .args(["--sandbox", "jail", "--until-done", "--dir"])
        .arg(dir.path().join("runs"))
        .output()
        .unwrap();
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.contains(r#"{\\\"episode\\\":1,\\\"epoch\\\":1,"#)
            || seen.contains(r#"{\"episode\":1,\"epoch\":1,"#),
        "the jailed shell did not read its claim: {seen}\n{said}"
    );
}

/// `GET path` from the view at `addr`: the status line and the body.
fn http_get(addr: &str, path: &str) -> (String, Vec<u8>) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    std::io::Write::write_all(
        &mut stream,
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap();
    let mut reply = Vec::new();
    std::io::Read::read_to_end(&mut stream, &mut reply).unwrap();
    let split = reply
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP answer");
    let head = String::from_utf8_lossy(&reply[..split]).into_owned();
    assert!(
        !head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "{head}"
    );
    let status = head.lines().next().unwrap_or("").to_owned();
    (status, reply[split + 4..].to_vec())
}

fn http_json(addr: &str, path: &str) -> Value {
    let (status, body) = http_get(addr, path);
    assert!(status.contains(" 200 "), "{path}: {status}");
    serde_json::from_slice(&body).unwrap()
}

#[test]
fn hands_view_lists_a_batchs_episodes_and_opens_one_from_the_ledger() {
    use std::io::BufRead as _;
    let pg = cluster();
    let url = pg.database("viewed").unwrap();
    let dir = tempfile::tempdir().unwrap();
    // A screenshot, a file written by bash, then done: the page shows the screenshot (from the
    // ledger's checkpoints) and the command.
    let sim = SimServer::start(SimConfig::with_policy(|request: &Value| {
        match answered(request) {
            0 => Turn::Blocks(vec![hands_sim::policy::toolset_use(
                "computer",
                "screenshot",
                json!({}),
            )]),
            1 => Turn::Blocks(vec![tool_use(
                "bash",
                json!({"command": "echo done > out.txt"}),
            )]),
            _ => Turn::text("Written."),
        }
    }))
    .unwrap();
    let tasks = [
        json!({"prompt": "Write out.txt", "environment": {"kind": "desktop"}, "max_steps": 5,
            "check": "grep -qx done out.txt"}),
        json!({"prompt": "Write out.txt, judged harshly", "environment": {"kind": "desktop"},
            "max_steps": 5, "check": "grep -qx never out.txt"}),
    ];
    submit(&sim, &url, dir.path(), &tasks);
    let output = worker(&sim, &url, dir.path(), "2").output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let mut view = hands(&sim)
        .args(["view", "--ledger", &url, "--batch", "tasks"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = std::io::BufReader::new(view.stderr.take().unwrap()).lines();
    let page = loop {
        let line = said.next().expect("hands view ended early").unwrap();
        if let Some(at) = line.split(" at http://").nth(1) {
            break at.trim().to_owned();
        }
    };
    std::thread::spawn(move || for _ in said {});
    let (addr, token) = page.split_once("/?token=").unwrap();
    // Without the token, nothing.
    assert!(http_get(addr, "/api/batch").0.contains(" 403 "));
    assert!(http_get(addr, "/episodes/1/api/run").0.contains(" 403 "));
    let (status, html) = http_get(addr, "/");
    assert!(status.contains(" 200 "), "{status}");
    assert!(String::from_utf8_lossy(&html).contains("api/batch"));

    let listing = http_json(addr, &format!("/api/batch?token={token}"));
    assert_eq!(listing["batch"], "tasks");
    let totals = listing["totals_text"].as_str().unwrap();
    assert!(
        totals.contains("2 episodes: 0 queued, 0 running, 2 finished"),
        "{totals}"
    );
    assert!(
        totals.contains("not successful (1): its check failed"),
        "{totals}"
    );
    let episodes = listing["episodes"].as_array().unwrap();
    assert_eq!(episodes.len(), 2, "{listing}");
    let (good, bad) = (&episodes[0], &episodes[1]);
    assert_eq!(good["id"], 1);
    assert_eq!(good["state"], "finished");
    assert_eq!(good["success"], true);
    assert_eq!(good["epoch"], 1);
    assert_eq!(good["attempts"], 1);
    assert_eq!(good["steps"], 3);
    assert!(good["worker"].as_str().unwrap().contains('-'), "{good}");
    assert!(good["tokens"][0].as_u64().unwrap() > 0, "{good}");
    assert!(good["checkpoints"].as_u64().unwrap() >= 3, "{good}");
    assert_eq!(bad["success"], false);
    assert_eq!(bad["reason"], "its check failed");

    // One episode's page: the run page, its steps read from the ledger.
    let (status, html) = http_get(addr, "/episodes/1/");
    assert!(status.contains(" 200 "), "{status}");
    assert!(String::from_utf8_lossy(&html).contains("api/run"));
    let episode = http_json(addr, &format!("/episodes/1/api/run?token={token}"));
    assert_eq!(episode["episode"]["id"], 1);
    assert_eq!(episode["run"]["start"]["task"], "Write out.txt");
    let steps = episode["run"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "{episode}");
    let shot = &steps[0]["actions"][0];
    assert_eq!(shot["name"], "screenshot", "{shot}");
    let image = shot["image_after"].as_str().expect("the screenshot");
    let bash = &steps[1]["actions"][0];
    assert_eq!(bash["name"], "bash");
    assert_eq!(bash["arguments"]["command"], "echo done > out.txt");
    assert_eq!(bash["is_error"], false);
    assert_eq!(steps[2]["text"][0], "Written.");
    let (status, png) = http_get(addr, &format!("/episodes/1/{image}?token={token}"));
    assert!(status.contains(" 200 "), "{status}");
    assert!(
        png.starts_with(b"\x89PNG"),
        "not a PNG: {} bytes",
        png.len()
    );
    // The failed episode says why.
    let failed = http_json(addr, &format!("/episodes/2/api/run?token={token}"));
    assert_eq!(failed["episode"]["reason"], "its check failed");
    assert!(
        http_get(addr, &format!("/episodes/9/api/run?token={token}"))
            .0
            .contains(" 404 ")
    );
    // As a person sees it, in a real Chromium: the list, then an episode's page.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let list = format!("http://{page}");
        let one = format!("http://{addr}/episodes/1/?token={token}");
        shown_in_chromium(
            &list,
            &["its check failed", "Write out.txt, judged harshly"],
            "batch",
        )
        .await;
        shown_in_chromium(
            &one,
            &["Written.", "echo done > out.txt", "the batch"],
            "episode",
        )
        .await;
    });
    kill(view);
}

/// Opens `url` in a headless Chromium, waits until the page shows each of `texts`, and keeps a
/// screenshot as `hands-view-<name>.png` in the test's temporary directory.
async fn shown_in_chromium(url: &str, texts: &[&str], name: &str) {
    use hands_core::browser::Browser as _;
    use hands_core::browser::args::{PageUrl, WaitText};
    let cancel = hands_core::CancellationToken::new();
    let mut browser = hands_cdp::CdpBrowser::launch(hands_cdp::DriverConfig::default())
        .await
        .unwrap();
    browser
        .navigate(&PageUrl::parse("url", url).unwrap(), None, &cancel)
        .await
        .unwrap();
    for text in texts {
        browser
            .wait_for(
                &WaitText::parse(text).unwrap(),
                Duration::from_secs(30),
                None,
                &cancel,
            )
            .await
            .unwrap_or_else(|e| panic!("{url} never showed {text:?}: {e}"));
    }
    let shot = browser.screenshot(None, &cancel).await.unwrap();
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hands-view-{name}.png"));
    std::fs::write(&path, shot.bytes()).unwrap();
}
