//! The remote half of the environment's fence (issue 20, item 3): an episode drives a remote
//! browser (a Chromium started with its own `--remote-debugging-port`) through `hands relay`.
//! Its worker is stopped (SIGSTOP) inside one call, between announcing an effect on the page
//! (pressing Enter) and making it (releasing Enter), past its lease; another worker takes the episode over, the uncertain call is reconciled as
//! "did not happen" (the page counted no effect), and the step is done again from the newer
//! epoch. The stalled worker, cut off from the database meanwhile (so no heartbeat tells it the
//! lease is lost before it goes on), is woken once its pause is over and releases its key.
//! Through the relay its late CDP frames are refused and the page counts the effect once;
//! straight to the browser (no relay), the page counts it twice — so the test can fail. (Straight
//! to the browser, the new holder cannot even load a page while the stalled one is stopped: the
//! stalled client's request interception holds its requests. The relay cuts the stalled client
//! off when the newer epoch connects.)
//!
//! A real PostgreSQL, real `hands worker`s, `hands relay`, `hands batch reconcile`, Chromium,
//! and the page's own server counting the effects; the model is the stand-in.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a test fails by panicking and prints what it saw"
)]

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hands_fleet::cluster::{Durability, Listen, LocalCluster};
use hands_sim::policy::toolset_use;
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// The workers' lease, seconds.
const LEASE: f64 = 2.0;
/// The model's pause between announcing the effect and making it, seconds: the stalled worker
/// is stopped inside it.
const PAUSE: u64 = 3;

/// The page: pressing Enter announces the effect (its server counts `/begin`), releasing it
/// makes the effect: counted in the page's `localStorage` (kept across reloads; read by the
/// test over CDP at the end), and told to its server (`/effect`, which a reconciliation asks). The model holds Enter for [`PAUSE`] seconds: one call whose
/// effect comes at its end, where a stalled worker is stopped — after the ledger saved the call
/// as attempted, before the effect.
const PAGE: &str = "<!doctype html><title>effects</title><body><p>Hold Enter.</p><script>\
document.addEventListener('keydown', e => { if (e.key === 'Enter' && !e.repeat) fetch('/begin'); });\
document.addEventListener('keyup', e => { if (e.key === 'Enter') {\
  localStorage.effects = String(Number(localStorage.effects || 0) + 1); fetch('/effect'); } });\
</script></body>";

/// What the page's server counted.
#[derive(Default)]
struct Counts {
    begins: AtomicUsize,
    effects: AtomicUsize,
}

async fn page_server(listener: tokio::net::TcpListener, counts: Arc<Counts>) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let counts = Arc::clone(&counts);
        tokio::spawn(async move {
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&request);
            let target = text.split_whitespace().nth(1).unwrap_or("/").to_owned();
            let (status, kind, body) = match target.as_str() {
                "/" => ("200 OK", "text/html", PAGE.to_owned()),
                "/begin" => {
                    counts.begins.fetch_add(1, Ordering::SeqCst);
                    ("200 OK", "text/plain", "ok".to_owned())
                }
                "/effect" => {
                    counts.effects.fetch_add(1, Ordering::SeqCst);
                    ("200 OK", "text/plain", "ok".to_owned())
                }
                "/happened" if counts.effects.load(Ordering::SeqCst) > 0 => {
                    ("200 OK", "text/plain", "yes".to_owned())
                }
                _ => ("404 Not Found", "text/plain", "no".to_owned()),
            };
            let response = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
        });
    }
}

/// The model: one `hold_key` of Enter; done once it was answered without error.
fn model() -> SimServer {
    SimServer::start(SimConfig::with_policy(move |request: &Value| {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let last_hold = messages.iter().rev().find_map(|m| {
            m["content"].as_array()?.iter().rev().find_map(|b| {
                (b["type"] == "tool_use" && b["name"] == "hold_key")
                    .then(|| b["id"].as_str().unwrap_or_default().to_owned())
            })
        });
        let answered = last_hold.is_some_and(|id| {
            messages.iter().any(|m| {
                m["content"].as_array().into_iter().flatten().any(|b| {
                    b["type"] == "tool_result"
                        && b["tool_use_id"] == id.as_str()
                        && b["is_error"] != json!(true)
                })
            })
        });
        if answered {
            return Turn::text("Done.");
        }
        Turn::Blocks(vec![toolset_use(
            "browser",
            "hold_key",
            json!({"text": "Return", "duration": PAUSE}),
        )])
    }))
    .unwrap()
}

/// A Chromium started as someone else's remote browser would be, with a DevTools port.
struct PortChromium {
    child: Child,
    profile: tempfile::TempDir,
}

impl PortChromium {
    fn start() -> PortChromium {
        let profile = tempfile::tempdir().unwrap();
        let mut command = Command::new("/usr/bin/chromium");
        command
            .args(["--headless", "--remote-debugging-port=0", "--no-first-run"])
            .args(["--window-size=1024,700", "--disable-background-networking"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if rustix::process::geteuid().is_root() {
            command.arg("--no-sandbox");
        }
        let child = command.arg("about:blank").spawn().unwrap();
        PortChromium { child, profile }
    }

    fn ws_url(&self) -> String {
        let file = self.profile.path().join("DevToolsActivePort");
        for _ in 0..800 {
            if let Ok(text) = std::fs::read_to_string(&file)
                && let Some(url) = hands_cdp::launch::parse_active_port(&text)
            {
                return url;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("the browser did not open its DevTools port");
    }
}

impl Drop for PortChromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP forwarder to the database that can be cut: once cut, nothing more passes either
/// way, and the connections stay open (a partition, not a reset).
async fn forwarder(listener: tokio::net::TcpListener, to: String, cut: Arc<AtomicBool>) {
    loop {
        let Ok((inbound, _)) = listener.accept().await else {
            continue;
        };
        let (to, cut) = (to.clone(), Arc::clone(&cut));
        tokio::spawn(async move {
            let Ok(outbound) = tokio::net::TcpStream::connect(&to).await else {
                return;
            };
            let (in_r, in_w) = inbound.into_split();
            let (out_r, out_w) = outbound.into_split();
            let pump = |mut r: tokio::net::tcp::OwnedReadHalf,
                        mut w: tokio::net::tcp::OwnedWriteHalf,
                        cut: Arc<AtomicBool>| async move {
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    let n = match r.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    while cut.load(Ordering::SeqCst) {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    if w.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                }
            };
            let up = pump(in_r, out_w, Arc::clone(&cut));
            let down = pump(out_r, in_w, cut);
            tokio::join!(up, down);
        });
    }
}

/// The effects the page counted: `localStorage.effects` of the page's origin, read over the
/// browser's own DevTools endpoint.
async fn page_effects(cdp_url: &str, page: &str) -> usize {
    use futures_util::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::Message;
    let (mut ws, _) = tokio_tungstenite::connect_async(cdp_url).await.unwrap();
    let mut next = 0;
    let mut call = async |method: &str, params: Value, session: Option<&str>| -> Value {
        next += 1;
        let mut command = json!({"id": next, "method": method, "params": params});
        if let Some(s) = session {
            command["sessionId"] = json!(s);
        }
        ws.send(Message::text(command.to_string())).await.unwrap();
        loop {
            let Some(Ok(Message::Text(text))) = ws.next().await else {
                panic!("the browser closed its endpoint");
            };
            let answer: Value = serde_json::from_str(text.as_str()).unwrap();
            if answer["id"] == next {
                return answer;
            }
        }
    };
    let targets = call("Target.getTargets", json!({}), None).await;
    let target = targets["result"]["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.starts_with(page)))
        .unwrap_or_else(|| panic!("no page at {page}: {targets}"))["targetId"]
        .clone();
    let attached = call(
        "Target.attachToTarget",
        json!({"targetId": target, "flatten": true}),
        None,
    )
    .await;
    let session = attached["result"]["sessionId"].as_str().unwrap().to_owned();
    let value = call(
        "Runtime.evaluate",
        json!({"expression": "Number(localStorage.effects || 0)", "returnByValue": true}),
        Some(&session),
    )
    .await;
    value["result"]["result"]["value"].as_u64().unwrap_or(0) as usize
}

/// Kills and reaps on drop.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-CONT", &self.0.id().to_string()])
            .status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn hands() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command.stdin(Stdio::null()).env_remove("DISPLAY");
    command
}

fn log(dir: &Path, name: &str) -> Stdio {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(name))
        .unwrap()
        .into()
}

/// `hands relay` on a free port: its address, and the lines of its stderr.
fn relay(url: &str, dir: &Path) -> (Reaped, String, Arc<Mutex<Vec<String>>>) {
    let mut child = hands()
        .args(["relay", "--ledger", url, "--listen", "127.0.0.1:0"])
        .stdout(log(dir, "relay.out"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let address = first
        .split("listening on ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .unwrap_or_else(|| panic!("the relay said {first:?}"))
        .to_owned();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&seen);
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            keep.lock().unwrap().push(line);
        }
    });
    (Reaped(child), address, seen)
}

fn worker(url: &str, dir: &Path, name: &str, sim: &SimServer) -> Reaped {
    Reaped(
        hands()
            .args(["worker", "--ledger", url, "--slots", "1"])
            .args(["--lease", &LEASE.to_string(), "--sandbox", "none", "--dir"])
            .arg(dir.join(name))
            .args(["--name", name])
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("ANTHROPIC_BASE_URL", sim.base_url())
            .stdout(log(dir, &format!("{name}.log")))
            .stderr(log(dir, &format!("{name}.log")))
            .spawn()
            .unwrap(),
    )
}

/// (epoch, state) of the only episode.
async fn episode(db: &tokio_postgres::Client) -> (i64, String) {
    let row = db
        .query_one("SELECT epoch, state FROM hands_episodes", &[])
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

/// What one run of the scenario saw.
#[derive(Debug)]
struct Seen {
    effects: usize,
    refused_frames: usize,
    cut_off: usize,
    state: String,
}

async fn wait_for<F: AsyncFnMut() -> bool>(what: &str, limit: Duration, dir: &Path, mut ok: F) {
    let deadline = Instant::now() + limit;
    while !ok().await {
        if Instant::now() > deadline {
            let logs: Vec<String> = ["a.log", "b.log", "reconcile.log"]
                .iter()
                .map(|n| {
                    format!(
                        "--- {n}\n{}",
                        std::fs::read_to_string(dir.join(n)).unwrap_or_default()
                    )
                })
                .collect();
            panic!("waited too long for {what}\n{}", logs.join("\n"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn scenario(through_relay: bool) -> Seen {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let pg = LocalCluster::start_listening(
        Durability::Unsynced,
        Listen::Tcp {
            address: "127.0.0.1".into(),
            port,
        },
    )
    .unwrap_or_else(|e| panic!("a private PostgreSQL is needed ({e})"));
    let url = pg.database("relay").unwrap();
    // The first worker reaches the database through a link the test can cut.
    let cut = Arc::new(AtomicBool::new(false));
    let link = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let a_url = pg.tcp_url("relay").unwrap().replace(
        &format!("port={port}"),
        &format!("port={}", link.local_addr().unwrap().port()),
    );
    tokio::spawn(forwarder(
        link,
        format!("127.0.0.1:{port}"),
        Arc::clone(&cut),
    ));
    let dir = tempfile::tempdir().unwrap();
    let counts = Arc::new(Counts::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let page = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(page_server(listener, Arc::clone(&counts)));
    let chromium = PortChromium::start();
    let cdp_url = chromium.ws_url();
    let sim = model();
    // The schema, made by the first command.
    let tasks = dir.path().join("tasks.jsonl");
    let (relay_child, relay_address, relay_lines) = relay(&url, dir.path());
    let environment = json!({"kind": "remote_browser", "cdp_url": cdp_url, "start_url": page,
        "relay": through_relay.then(|| relay_address.clone())});
    let task = json!({"prompt": "Make the effect once.", "environment": environment,
        "max_steps": 10});
    std::fs::write(&tasks, task.to_string()).unwrap();
    let submitted = hands()
        .args(["batch", "submit", "--ledger", &url])
        .arg(&tasks)
        .output()
        .unwrap();
    assert!(
        submitted.status.success(),
        "{}",
        String::from_utf8_lossy(&submitted.stderr)
    );
    let (db, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);

    // The first worker announces the effect; it is stopped inside the model's pause.
    let a = worker(&a_url, dir.path(), "a", &sim);
    wait_for(
        "the first worker to announce the effect",
        Duration::from_secs(60),
        dir.path(),
        async || counts.begins.load(Ordering::SeqCst) > 0,
    )
    .await;
    let stop = |signal: &str| {
        Command::new("kill")
            .args([signal, &a.0.id().to_string()])
            .status()
            .unwrap()
    };
    assert!(stop("-STOP").success());
    let stopped_at = Instant::now();
    // And cut off from the database: when it wakes, no heartbeat tells it the lease is lost
    // (a stall and a partition at once; the ledger refuses its next save either way).
    cut.store(true, Ordering::SeqCst);
    assert_eq!(counts.effects.load(Ordering::SeqCst), 0, "stopped too late");

    // Another worker takes the episode over and parks it (an uncertain call: before touching
    // the browser); the page says the effect did not happen; the epoch moves on.
    let b = worker(&url, dir.path(), "b", &sim);
    let policy = format!(
        "code=$(curl -s -o /dev/null -w '%{{http_code}}' {page}happened); \
         [ \"$code\" = 200 ] && exit 0; [ \"$code\" = 404 ] && exit 1; exit 2"
    );
    wait_for(
        "the takeover and the reconciliation",
        Duration::from_secs(60),
        dir.path(),
        async || {
            let (epoch, state) = episode(&db).await;
            if state == "parked" {
                let _ = hands()
                    .args(["batch", "reconcile", "--ledger", &url, "--policy", &policy])
                    .stdout(log(dir.path(), "reconcile.log"))
                    .stderr(log(dir.path(), "reconcile.log"))
                    .status();
            }
            epoch >= 3 && state != "parked"
        },
    )
    .await;

    // The stalled worker wakes once its pause is over: it releases the key (it would on a
    // cancellation too: no key stays down).
    let pause_over = stopped_at + Duration::from_millis(PAUSE * 1000 + 500);
    tokio::time::sleep_until(pause_over.into()).await;
    assert!(stop("-CONT").success());
    // Its link comes back a moment later: it learns it lost the lease, and its next save is
    // refused — after the release went out.
    tokio::time::sleep(Duration::from_secs(1)).await;
    cut.store(false, Ordering::SeqCst);
    wait_for(
        "the episode to finish",
        Duration::from_secs(90),
        dir.path(),
        async || {
            let (_, state) = episode(&db).await;
            if state == "parked" {
                let _ = hands()
                    .args(["batch", "reconcile", "--ledger", &url, "--policy", &policy])
                    .stdout(log(dir.path(), "reconcile.log"))
                    .stderr(log(dir.path(), "reconcile.log"))
                    .status();
            }
            state == "finished" || state == "failed"
        },
    )
    .await;
    // The stalled worker's release, if it gets through, lands by now.
    tokio::time::sleep(Duration::from_secs(PAUSE + 2)).await;
    let (_, state) = episode(&db).await;
    drop((a, b, relay_child));
    let lines = relay_lines.lock().unwrap().clone();
    if std::env::var_os("HANDS_RELAY_TEST_KEEP").is_some() {
        println!("files kept in {}", dir.keep().display());
    }
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let effects = page_effects(&cdp_url, &page).await;
    drop(chromium);
    Seen {
        effects,
        refused_frames: lines
            .iter()
            .filter(|l| l.contains("refused a frame"))
            .count(),
        cut_off: lines.iter().filter(|l| l.contains("cut off")).count(),
        state,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_relay_a_stalled_workers_late_key_release_is_refused() {
    let seen = scenario(true).await;
    println!(
        "remote browser through the relay: 1 zombie; effects expected 1 / observed {}; {} late frames refused; {} connections cut off; episode {}",
        seen.effects, seen.refused_frames, seen.cut_off, seen.state
    );
    assert_eq!(seen.state, "finished", "{seen:?}");
    assert_eq!(seen.effects, 1, "{seen:?}");
    assert!(seen.refused_frames >= 1, "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn straight_to_the_browser_a_stalled_workers_late_key_release_duplicates_the_effect() {
    let seen = scenario(false).await;
    println!(
        "remote browser without the relay: 1 zombie; effects expected 1 / observed {}; episode {}",
        seen.effects, seen.state
    );
    assert!(seen.effects >= 2, "{seen:?}");
}
