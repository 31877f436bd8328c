//! The fault campaign across machines (issue 20, item 5): a real PostgreSQL, three `hands
//! worker`s each in a network namespace of its own (a node: veth on a bridge), the model
//! (hands-sim) and an effect server outside every node. Each episode does STEPS effects; each
//! effect is a request to the effect server carrying the episode, the step and the epoch its
//! worker holds (read from the episode's `claim.json`). Seeded faults hit the nodes holding
//! episodes: kill -9 of every process of the node (then a new worker), SIGSTOP of the whole
//! node past the lease, its link down, its database cut (iptables in the node), and zombies
//! (the node stopped between an effect's announcement and the effect itself, woken once the
//! episode was taken over, reconciled as "did not happen" and the step done again); and the
//! database's primary killed (kill -9 of all its processes) with its synchronous standby
//! promoted, every connection following by its multi-host connection string
//! (`target_session_attrs=read-write`). Parked episodes are reconciled by `hands batch reconcile --policy`, asking the effect server.
//!
//! With the environment fence (the effect server accepts an effect only from the episode's
//! current epoch under a live lease, checked with the row locked): 0 duplicated, 0 lost. With
//! the fence off, the zombies' late effects must show as duplicates — so the test can fail.
//!
//! Reduced in CI (20 faults, 1 of them a failover, and 10 zombies without the fence); the
//! whole campaign (120 faults, 4 of them failovers, and 30 zombies) with `HANDS_FLEET_CAMPAIGN=full`; the seed with
//! `HANDS_FLEET_CAMPAIGN_SEED`. Needs root (network namespaces). Prints the campaign line.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a test fails by panicking and prints its campaign line"
)]

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hands_fleet::cluster::{Durability, Listen, LocalCluster};
use hands_sim::policy::tool_use;
use hands_sim::{SimConfig, SimServer, Turn};
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// Effects per episode.
const STEPS: u32 = 4;
/// The workers' lease, seconds.
const LEASE: f64 = 1.0;
/// Nodes (network namespaces), each running one worker.
const NODES: usize = 3;
/// Episodes each worker runs at once.
const SLOTS: u32 = 2;
/// The effect server's port.
const EFFECT_PORT: u16 = 8080;
/// The model's port on the bridge (forwarded to the simulator).
const MODEL_PORT: u16 = 8081;

fn run(program: &str, args: &[&str]) {
    let output = Command::new(program).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A bridge with the database, model and effect server addresses, and one namespace per node.
struct Net {
    bridge: String,
    subnet: String,
    spaces: Vec<String>,
    /// The bridge's end of each node's veth.
    outside: Vec<String>,
}

impl Net {
    fn up() -> Net {
        assert!(
            rustix::process::geteuid().is_root(),
            "the fault campaign makes network namespaces: run it as root"
        );
        let pid = std::process::id();
        let subnet = format!("10.{}.{}", 100 + pid % 100, (pid / 100) % 250);
        let tag = format!("{:x}", pid % 0xfffff);
        let bridge = format!("hfb{tag}");
        let net = Net {
            bridge: bridge.clone(),
            subnet: subnet.clone(),
            spaces: (0..NODES).map(|i| format!("hf{tag}n{i}")).collect(),
            outside: (0..NODES).map(|i| format!("hf{tag}h{i}")).collect(),
        };
        run("ip", &["link", "add", &bridge, "type", "bridge"]);
        for host in 1..=4 {
            let address = format!("{subnet}.{host}/24");
            run("ip", &["addr", "add", &address, "dev", &bridge]);
        }
        run("ip", &["link", "set", &bridge, "up"]);
        for (i, space) in net.spaces.iter().enumerate() {
            let (outside, inside) = (format!("hf{tag}h{i}"), format!("hf{tag}i{i}"));
            run("ip", &["netns", "add", space]);
            run(
                "ip",
                &[
                    "link", "add", &outside, "type", "veth", "peer", "name", &inside,
                ],
            );
            run("ip", &["link", "set", &inside, "netns", space]);
            run("ip", &["link", "set", &outside, "master", &bridge, "up"]);
            let address = format!("{subnet}.{}/24", 10 + i);
            let exec = ["netns", "exec", space, "ip"];
            run(
                "ip",
                &[&exec[..], &["addr", "add", &address, "dev", &inside]].concat(),
            );
            run("ip", &[&exec[..], &["link", "set", &inside, "up"]].concat());
            run("ip", &[&exec[..], &["link", "set", "lo", "up"]].concat());
        }
        net
    }

    /// `.1` the model, `.2` the database, `.3` the effect server, `.4` the database's standby
    /// (the two swap roles at each failover).
    fn host(&self, n: u8) -> String {
        format!("{}.{n}", self.subnet)
    }

    fn pids(&self, node: usize) -> Vec<String> {
        let output = Command::new("ip")
            .args(["netns", "pids", &self.spaces[node]])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout)
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    }

    /// Sends `signal` to every process of the node.
    fn signal(&self, node: usize, signal: &str) {
        let pids = self.pids(node);
        if !pids.is_empty() {
            let _ = Command::new("kill")
                .arg(signal)
                .args(&pids)
                .stderr(Stdio::null())
                .status();
        }
    }

    fn link(&self, node: usize, up: bool) {
        let link = &self.outside[node];
        run("ip", &["link", "set", link, if up { "up" } else { "down" }]);
    }

    /// Cuts (or restores) the node's traffic to the database only.
    fn database(&self, node: usize, cut: bool) {
        let db = format!("{},{}", self.host(2), self.host(4));
        let rule = if cut { "-A" } else { "-D" };
        run(
            "ip",
            &[
                "netns",
                "exec",
                &self.spaces[node],
                "iptables",
                rule,
                "OUTPUT",
                "-d",
                &db,
                "-j",
                "DROP",
            ],
        );
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for node in 0..self.spaces.len() {
            self.signal(node, "-KILL");
            self.signal(node, "-CONT");
        }
        for space in &self.spaces {
            let _ = Command::new("ip").args(["netns", "del", space]).status();
        }
        let _ = Command::new("ip")
            .args(["link", "del", &self.bridge])
            .status();
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fence {
    /// The effect server accepts only the episode's current epoch under a live lease.
    Epoch,
    /// It accepts every effect.
    Off,
}

/// An effect about to be made: the node that announced it, and when.
#[derive(Debug, Clone)]
struct Begin {
    episode: i64,
    step: u32,
    epoch: u64,
    from: String,
    at: Instant,
}

/// What the environment saw.
#[derive(Debug, Default)]
struct Seen {
    /// Accepted effects: (episode, step) → the epochs they came from.
    accepted: BTreeMap<(i64, u32), Vec<u64>>,
    /// Effects refused by the fence.
    refused: usize,
    begins: Vec<Begin>,
}

fn query(target: &str) -> HashMap<String, String> {
    target
        .split_once('?')
        .map(|(_, q)| q)
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// The effect server: `/begin`, `/effect` (fenced or not), `/happened` (for reconciliation).
/// A connection to the campaign's database that is made again when it closed (a failover).
struct Db {
    url: String,
    client: tokio::sync::Mutex<Option<tokio_postgres::Client>>,
}

impl Db {
    fn new(url: &str) -> Db {
        Db {
            url: url.to_owned(),
            client: tokio::sync::Mutex::new(None),
        }
    }

    /// The connection, made again until it can be (the primary may be moving).
    async fn client(&self) -> tokio::sync::MutexGuard<'_, Option<tokio_postgres::Client>> {
        let mut client = self.client.lock().await;
        let deadline = Instant::now() + Duration::from_secs(60);
        while client
            .as_ref()
            .is_none_or(tokio_postgres::Client::is_closed)
        {
            match tokio_postgres::connect(&self.url, tokio_postgres::NoTls).await {
                Ok((c, connection)) => {
                    tokio::spawn(connection);
                    *client = Some(c);
                }
                Err(e) => {
                    assert!(Instant::now() < deadline, "no database for 60 s: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        client
    }
}

/// Whether `effect` of `episode` from `epoch` may be made, asked with the row locked while the
/// effect is recorded; `None` when the database failed (the effect is not made).
async fn fenced_effect(
    db: &Db,
    fence: Fence,
    seen: &Mutex<Seen>,
    (episode, step, epoch): (i64, u32, u64),
) -> Option<bool> {
    let mut guard = db.client().await;
    let client = guard.as_mut()?;
    let tx = client.transaction().await.ok()?;
    let current = match fence {
        Fence::Off => true,
        Fence::Epoch => tx
            .query_opt(
                "SELECT 1 FROM hands_episodes WHERE id = $1 AND epoch = $2
                   AND state = 'running' AND lease_until > clock_timestamp()
                 FOR SHARE",
                &[&episode, &(epoch as i64)],
            )
            .await
            .ok()?
            .is_some(),
    };
    {
        let mut seen = seen.lock().unwrap();
        if current {
            seen.accepted
                .entry((episode, step))
                .or_default()
                .push(epoch);
        } else {
            seen.refused += 1;
        }
    }
    // The effect is made (or refused) by now; a commit lost to a failover changes neither.
    let _ = tx.commit().await;
    Some(current)
}

async fn effect_server(
    listener: tokio::net::TcpListener,
    db: Arc<Db>,
    fence: Fence,
    seen: Arc<Mutex<Seen>>,
) {
    loop {
        let Ok((mut stream, peer)) = listener.accept().await else {
            continue;
        };
        let (db, seen) = (Arc::clone(&db), Arc::clone(&seen));
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
            let q = query(&target);
            let num = |k: &str| q.get(k).and_then(|v| v.parse::<i64>().ok()).unwrap_or(-1);
            let (episode, step, epoch) = (num("e"), num("s") as u32, num("epoch").max(0) as u64);
            let ok = if target.starts_with("/begin") {
                seen.lock().unwrap().begins.push(Begin {
                    episode,
                    step,
                    epoch,
                    from: peer.ip().to_string(),
                    at: Instant::now(),
                });
                true
            } else if target.starts_with("/effect") {
                match fenced_effect(&db, fence, &seen, (episode, step, epoch)).await {
                    Some(current) => current,
                    None => {
                        let _ = stream
                            .write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                            .await;
                        return;
                    }
                }
            } else {
                seen.lock().unwrap().accepted.contains_key(&(episode, step))
            };
            let (status, body) = if ok {
                ("200 OK", "ok\n")
            } else if target.starts_with("/happened") {
                ("404 Not Found", "no\n")
            } else {
                ("409 Conflict", "stale epoch\n")
            };
            let response = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
        });
    }
}

/// Forwards the bridge's model port to the simulator on 127.0.0.1.
async fn forward(listener: tokio::net::TcpListener, to: std::net::SocketAddr) {
    loop {
        let Ok((mut inbound, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            if let Ok(mut outbound) = tokio::net::TcpStream::connect(to).await {
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            }
        });
    }
}

/// The model: step `s` of episode `e` is one bash call announcing, then making, the effect;
/// a step is done once its answer says so (or a person found it took effect). The episode's id
/// comes from `claim.json`, not the prompt: ids jump after a failover (a sequence's values are
/// logged ahead, 32 at a time).
fn model(effects: String) -> SimServer {
    SimServer::start(SimConfig::with_policy(move |request: &Value| {
        let done = request["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .filter(|b| b["type"] == "tool_result" && b["is_error"] != json!(true))
            .filter(|b| {
                let text = b["content"].to_string();
                text.contains("EFFECT-OK") || text.contains("took effect")
            })
            .count() as u32;
        if done >= STEPS {
            return Turn::text("Done.");
        }
        let step = done + 1;
        let url = format!("http://{effects}");
        // The pause between announcing an effect and making it is where a zombie is stopped:
        // 1 s, so a stop sent on a loaded machine still lands before the effect.
        let command = format!(
            "ep=$(grep -o '\"epoch\":[0-9]*' claim.json | cut -d: -f2); \
             e=$(grep -o '\"episode\":[0-9]*' claim.json | cut -d: -f2); \
             curl -sf \"{url}/begin?e=$e&s={step}&epoch=$ep\" >/dev/null; sleep 1; \
             curl -sf \"{url}/effect?e=$e&s={step}&epoch=$ep\" && echo EFFECT-OK"
        );
        Turn::Blocks(vec![tool_use("bash", json!({ "command": command }))])
    }))
    .unwrap()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Kill,
    Stop,
    LinkDown,
    DatabaseCut,
    Zombie,
    /// The database's primary killed (kill -9 of all its processes) and its synchronous
    /// standby promoted; a new standby is then made of the old primary's address.
    Failover,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Kill => "kill -9",
            Kind::Stop => "SIGSTOP past the lease",
            Kind::LinkDown => "link down",
            Kind::DatabaseCut => "database-only partition",
            Kind::Zombie => "zombie (stopped mid-effect)",
            Kind::Failover => "PostgreSQL primary killed, synchronous standby promoted",
        }
    }
}

/// A node under a fault.
#[derive(Debug)]
struct Fault {
    kind: Kind,
    heal_at: Instant,
    /// A zombie's effect: healed once it was made again from a newer epoch.
    effect: Option<(i64, u32, u64)>,
}

/// The campaign's settings.
struct Plan {
    fence: Fence,
    faults: usize,
    kinds: Vec<Kind>,
    /// Failovers among the faults, spread evenly.
    failovers: usize,
    seed: u64,
}

struct Campaign {
    net: Net,
    /// The database: its primary, its synchronous standby, and the primaries killed.
    pg: Databases,
    sim: SimServer,
    dir: tempfile::TempDir,
    /// Both addresses, the writable one chosen (`target_session_attrs=read-write`): every
    /// connection of the campaign follows a failover.
    url: String,
    workers: Vec<Option<Child>>,
    generation: Vec<u32>,
    seen: Arc<Mutex<Seen>>,
    db: Db,
    submitted: i64,
}

struct Databases {
    primary: Arc<LocalCluster>,
    standby: Arc<LocalCluster>,
    dead: Vec<Arc<LocalCluster>>,
    /// Where the primary listens (`.2` or `.4`).
    primary_address: String,
}

impl Campaign {
    /// Kills the primary, promotes the standby, and makes a new standby of the old primary's
    /// address (blocking: the campaign's loop waits for it, the workers do not).
    async fn failover(&mut self) {
        let (primary, standby) = (Arc::clone(&self.pg.primary), Arc::clone(&self.pg.standby));
        let freed = self.pg.primary_address.clone();
        let address = freed.clone();
        let new_standby = tokio::task::spawn_blocking(move || {
            primary.kill_hard().unwrap();
            standby.promote().unwrap();
            standby
                .start_standby(Listen::Tcp {
                    address,
                    port: 5432,
                })
                .unwrap()
        })
        .await
        .unwrap();
        let old = std::mem::replace(&mut self.pg.primary, Arc::clone(&self.pg.standby));
        self.pg.dead.push(old);
        self.pg.standby = Arc::new(new_standby);
        self.pg.primary_address = if freed == self.net.host(2) {
            self.net.host(4)
        } else {
            self.net.host(2)
        };
    }
}

fn hands() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command.stdin(Stdio::null()).env_remove("DISPLAY");
    command
}

impl Campaign {
    async fn start(fence: Fence) -> Campaign {
        let net = Net::up();
        let pg = LocalCluster::start_listening(
            Durability::Unsynced,
            Listen::Tcp {
                address: net.host(2),
                port: 5432,
            },
        )
        .unwrap_or_else(|e| panic!("a private PostgreSQL is needed ({e})"));
        pg.database("campaign").unwrap();
        let standby = pg
            .start_standby(Listen::Tcp {
                address: net.host(4),
                port: 5432,
            })
            .unwrap();
        let url = format!(
            "host={},{} port=5432,5432 user=postgres dbname=campaign connect_timeout=5 \
             target_session_attrs=read-write",
            net.host(2),
            net.host(4)
        );
        let db = Db::new(&url);
        let primary_address = net.host(2);
        // The schema, made by the first command.
        let gate = Arc::new(Db::new(&url));
        let seen = Arc::new(Mutex::new(Seen::default()));
        let effects = tokio::net::TcpListener::bind((net.host(3).as_str(), EFFECT_PORT))
            .await
            .unwrap();
        tokio::spawn(effect_server(effects, gate, fence, Arc::clone(&seen)));
        let sim = model(format!("{}:{EFFECT_PORT}", net.host(3)));
        let to: std::net::SocketAddr = sim
            .base_url()
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .unwrap();
        let listener = tokio::net::TcpListener::bind((net.host(1).as_str(), MODEL_PORT))
            .await
            .unwrap();
        tokio::spawn(forward(listener, to));
        let mut campaign = Campaign {
            net,
            pg: Databases {
                primary_address,
                primary: Arc::new(pg),
                standby: Arc::new(standby),
                dead: Vec::new(),
            },
            sim,
            dir: tempfile::tempdir().unwrap(),
            url,
            workers: (0..NODES).map(|_| None).collect(),
            generation: vec![0; NODES],
            seen,
            db,
            submitted: 0,
        };
        campaign.submit(NODES * SLOTS as usize * 2);
        for node in 0..NODES {
            campaign.spawn_worker(node);
        }
        campaign
    }

    fn submit(&mut self, n: usize) {
        let file = self
            .dir
            .path()
            .join(format!("tasks-{}.jsonl", self.submitted));
        let lines: Vec<String> = (0..n)
            .map(|k| {
                json!({"prompt": format!("Episode {}: make the effects", self.submitted + 1 + k as i64),
                    "environment": {"kind": "desktop"}, "max_steps": 3 * STEPS + 4})
                .to_string()
            })
            .collect();
        std::fs::write(&file, lines.join("\n")).unwrap();
        let output = hands()
            .args([
                "batch", "submit", "--batch", "campaign", "--ledger", &self.url,
            ])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        self.submitted += n as i64;
    }

    fn spawn_worker(&mut self, node: usize) {
        self.generation[node] += 1;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join(format!("node{node}.log")))
            .unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", &self.net.spaces[node]])
            .arg(env!("CARGO_BIN_EXE_hands"))
            .args([
                "worker",
                "--ledger",
                &self.url,
                "--slots",
                &SLOTS.to_string(),
            ])
            .args(["--lease", &LEASE.to_string(), "--sandbox", "none", "--dir"])
            .arg(self.dir.path().join(format!("node{node}")))
            .args(["--name", &format!("node{node}-g{}", self.generation[node])])
            .env_remove("DISPLAY")
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env(
                "ANTHROPIC_BASE_URL",
                format!("http://{}:{MODEL_PORT}", self.net.host(1)),
            )
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        if let Some(mut old) = self.workers[node].replace(child) {
            let _ = old.kill();
            let _ = old.wait();
        }
    }

    /// (episode, epoch, state, worker) of every episode.
    async fn rows(&self) -> Vec<(i64, u64, String, Option<String>)> {
        loop {
            let guard = self.db.client().await;
            let rows = guard
                .as_ref()
                .unwrap()
                .query(
                    "SELECT id, epoch, state || COALESCE(': ' || (outcome->>'reason'), ''), worker
                     FROM hands_episodes",
                    &[],
                )
                .await;
            match rows {
                Ok(rows) => {
                    return rows
                        .iter()
                        .map(|r| (r.get(0), r.get::<_, i64>(1) as u64, r.get(2), r.get(3)))
                        .collect();
                }
                // A failover under way: asked again on the new primary.
                Err(_) => {
                    drop(guard);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    fn node_of(worker: &Option<String>) -> Option<usize> {
        worker
            .as_deref()
            .and_then(|w| w.strip_prefix("node"))
            .and_then(|w| w.split('-').next())
            .and_then(|n| n.parse().ok())
    }

    fn reconcile(&self) -> Child {
        let policy = format!(
            "s=$(printf %s \"$HANDS_CALL_INPUT\" | grep -o '&s=[0-9]*' | head -1 | cut -d= -f2); \
             code=$(curl -s -o /dev/null -w '%{{http_code}}' \"http://{}:{EFFECT_PORT}/happened?e=$HANDS_EPISODE&s=$s\"); \
             [ \"$code\" = 200 ] && exit 0; [ \"$code\" = 404 ] && exit 1; exit 2",
            self.net.host(3)
        );
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("reconcile.log"))
            .unwrap();
        hands()
            .args([
                "batch",
                "reconcile",
                "--ledger",
                &self.url,
                "--policy",
                &policy,
            ])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap()
    }
}

/// What the campaign found.
struct Report {
    faults: BTreeMap<Kind, usize>,
    episodes: i64,
    expected: usize,
    observed: usize,
    duplicated: usize,
    lost: usize,
    refused: usize,
    reconciled: usize,
    takeovers: Vec<Duration>,
    unfinished: Vec<(i64, String)>,
    /// Workers that exited by themselves (started again).
    worker_exits: usize,
}

impl Report {
    fn line(&self, plan: &Plan) -> String {
        let total: usize = self.faults.values().sum();
        let kinds: Vec<String> = self
            .faults
            .iter()
            .map(|(k, n)| format!("{n} {}", k.name()))
            .collect();
        let mut takeovers = self.takeovers.clone();
        takeovers.sort();
        let at = |q: f64| {
            takeovers
                .get(((takeovers.len() as f64 * q).ceil() as usize).saturating_sub(1))
                .map_or(0.0, Duration::as_secs_f64)
        };
        format!(
            "fault campaign (environment fence {}, seed {}): {total} faults ({}); {} episodes; effects expected {} / observed {} / duplicated {} / lost {}; {} late effects refused; {} calls reconciled; takeover p50 {:.2} s / max {:.2} s over {} takeovers vs lease {LEASE:.1} s",
            match plan.fence {
                Fence::Epoch => "on",
                Fence::Off => "OFF",
            },
            plan.seed,
            kinds.join(", "),
            self.episodes,
            self.expected,
            self.observed,
            self.duplicated,
            self.lost,
            self.refused,
            self.reconciled,
            at(0.5),
            at(1.0),
            takeovers.len(),
        ) + &format!("; {} worker exits", self.worker_exits)
            + &if self.unfinished.is_empty() {
                String::new()
            } else {
                format!("; NOT FINISHED: {:?}", self.unfinished)
            }
    }
}

/// Injects `kind` on `node` (a zombie's effect given); returns the fault.
fn inject(c: &mut Campaign, node: usize, kind: Kind, effect: Option<(i64, u32, u64)>) -> Fault {
    let past_lease = Duration::from_secs_f64(LEASE * 2.5);
    let now = Instant::now();
    match kind {
        Kind::Kill => {
            c.net.signal(node, "-KILL");
            if let Some(mut child) = c.workers[node].take() {
                let _ = child.wait();
            }
        }
        Kind::Stop => c.net.signal(node, "-STOP"),
        // A zombie is stalled and partitioned from the database at once: woken, it cannot learn
        // at once that its lease is gone, so its late effect is tried (as in a real stall behind
        // a partition) instead of racing its heartbeat's cancellation.
        Kind::Zombie => {
            c.net.signal(node, "-STOP");
            c.net.database(node, true);
        }
        Kind::LinkDown => c.net.link(node, false),
        Kind::DatabaseCut => c.net.database(node, true),
        Kind::Failover => unreachable!("a failover is the cluster's, not a node's"),
    }
    Fault {
        kind,
        heal_at: now
            + match kind {
                Kind::Kill => Duration::from_millis(300),
                Kind::Zombie => Duration::from_secs(15),
                _ => past_lease,
            },
        effect,
    }
}

/// Heals `fault`; a woken zombie stays cut from the database for a moment more (the fault
/// returned), long enough for its late effect to be tried.
fn heal(c: &mut Campaign, node: usize, fault: &Fault) -> Option<Fault> {
    match fault.kind {
        Kind::Kill => c.spawn_worker(node),
        Kind::Zombie => {
            c.net.signal(node, "-CONT");
            return Some(Fault {
                kind: Kind::DatabaseCut,
                heal_at: Instant::now() + Duration::from_secs(2),
                effect: None,
            });
        }
        Kind::Stop => c.net.signal(node, "-CONT"),
        Kind::LinkDown => c.net.link(node, true),
        Kind::DatabaseCut => c.net.database(node, false),
        Kind::Failover => {}
    }
    None
}

fn count_lines(path: &Path, needle: &str) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(needle))
        .count()
}

async fn campaign(plan: Plan) -> Report {
    let mut c = Campaign::start(plan.fence).await;
    let mut rng = StdRng::seed_from_u64(plan.seed);
    let mut faulted: Vec<Option<Fault>> = (0..NODES).map(|_| None).collect();
    let mut injected: BTreeMap<Kind, usize> = BTreeMap::new();
    // (episode, epoch at the fault, when).
    let mut watching: Vec<(i64, u64, Instant)> = Vec::new();
    let mut takeovers = Vec::new();
    let mut next = Instant::now() + Duration::from_secs(2);
    let mut want: Option<Kind> = None;
    let mut reconciler: Option<Child> = None;
    let mut worker_exits = 0;
    let deadline = Instant::now() + Duration::from_secs(60 + 5 * plan.faults as u64);
    loop {
        assert!(Instant::now() < deadline, "the campaign ran out of time");
        let rows = c.rows().await;
        let epochs: HashMap<i64, u64> = rows.iter().map(|r| (r.0, r.1)).collect();
        watching.retain(|(e, epoch, at)| {
            let moved = epochs.get(e).is_some_and(|now| now > epoch);
            if moved {
                takeovers.push(at.elapsed());
            }
            !moved
        });
        let count = |state: &str| rows.iter().filter(|r| r.2.starts_with(state)).count();
        let total: usize = injected.values().sum();
        // Heal.
        for (node, slot) in faulted.iter_mut().enumerate() {
            let due = slot.as_ref().is_some_and(|f| {
                Instant::now() >= f.heal_at
                    || f.effect.is_some_and(|(e, s, epoch)| {
                        c.seen
                            .lock()
                            .unwrap()
                            .accepted
                            .get(&(e, s))
                            .is_some_and(|epochs| epochs.iter().any(|x| *x > epoch))
                    })
            });
            if due && let Some(fault) = slot.take() {
                *slot = heal(&mut c, node, &fault);
            }
        }
        // A worker that exited on a healthy node is started again (as a supervisor would),
        // and counted.
        for (node, fault) in faulted.iter().enumerate() {
            let exited = c.workers[node]
                .as_mut()
                .is_some_and(|w| w.try_wait().unwrap().is_some());
            if fault.is_none() && exited {
                worker_exits += 1;
                c.spawn_worker(node);
            }
        }
        // Reconcile what is parked.
        if reconciler
            .as_mut()
            .is_none_or(|r| r.try_wait().unwrap().is_some())
            && count("parked") > 0
        {
            reconciler = Some(c.reconcile());
        }
        if total >= plan.faults {
            if faulted.iter().all(Option::is_none)
                && count("queued") + count("running") + count("parked") == 0
            {
                break;
            }
        } else {
            if count("queued") < NODES * SLOTS as usize {
                c.submit(NODES * SLOTS as usize);
            }
            let busy = faulted.iter().filter(|f| f.is_some()).count();
            // Failovers at even intervals among the faults; the cluster's, not a node's.
            let failovers = injected.get(&Kind::Failover).copied().unwrap_or(0);
            let failover_due = failovers < plan.failovers
                && total >= plan.faults / (plan.failovers + 1) * (failovers + 1);
            if Instant::now() >= next && failover_due && want.is_none() {
                c.failover().await;
                *injected.entry(Kind::Failover).or_default() += 1;
                next = Instant::now() + Duration::from_millis(400);
            } else if Instant::now() >= next && busy < NODES - 1 {
                let kind =
                    *want.get_or_insert_with(|| plan.kinds[rng.random_range(0..plan.kinds.len())]);
                let target = if kind == Kind::Zombie {
                    let mut seen = c.seen.lock().unwrap();
                    let fresh = seen
                        .begins
                        .drain(..)
                        .rfind(|b| b.at.elapsed() < Duration::from_millis(100));
                    fresh.and_then(|b| {
                        let node = (0..NODES).find(|n| c.net.host(10 + *n as u8) == b.from)?;
                        faulted[node]
                            .is_none()
                            .then_some((node, Some((b.episode, b.step, b.epoch))))
                    })
                } else {
                    let held: Vec<usize> = (0..NODES)
                        .filter(|n| faulted[*n].is_none())
                        .filter(|n| {
                            rows.iter()
                                .any(|r| r.2 == "running" && Campaign::node_of(&r.3) == Some(*n))
                        })
                        .collect();
                    (!held.is_empty()).then(|| (held[rng.random_range(0..held.len())], None))
                };
                if let Some((node, effect)) = target {
                    for r in &rows {
                        if r.2 == "running" && Campaign::node_of(&r.3) == Some(node) {
                            watching.push((r.0, r.1, Instant::now()));
                        }
                    }
                    faulted[node] = Some(inject(&mut c, node, kind, effect));
                    *injected.entry(kind).or_default() += 1;
                    want = None;
                    next = Instant::now() + Duration::from_millis(400);
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Late effects of woken zombies land (or are refused) by now.
    tokio::time::sleep(Duration::from_secs(2)).await;
    if let Some(mut r) = reconciler {
        let _ = r.wait();
    }
    let rows = c.rows().await;
    let seen = c.seen.lock().unwrap();
    let expected = c.submitted as usize * STEPS as usize;
    let observed: usize = seen.accepted.values().map(Vec::len).sum();
    let distinct = seen.accepted.len();
    let report = Report {
        faults: injected,
        episodes: c.submitted,
        expected,
        observed,
        duplicated: observed - distinct,
        lost: expected.saturating_sub(distinct),
        refused: seen.refused,
        reconciled: count_lines(&c.dir.path().join("reconcile.log"), "recorded as"),
        takeovers,
        worker_exits,
        unfinished: rows
            .into_iter()
            .filter(|r| r.2 != "finished")
            .map(|r| (r.0, r.2))
            .collect(),
    };
    assert!(c.sim.violations().is_empty(), "{:?}", c.sim.violations());
    for node in 0..NODES {
        if let Some(mut child) = c.workers[node].take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    if std::env::var_os("HANDS_FLEET_CAMPAIGN_KEEP").is_some() {
        let kept: PathBuf = c.dir.keep();
        println!("campaign files kept in {}", kept.display());
    }
    report
}

fn full() -> bool {
    std::env::var("HANDS_FLEET_CAMPAIGN").is_ok_and(|v| v == "full")
}

fn seed() -> u64 {
    std::env::var("HANDS_FLEET_CAMPAIGN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_environment_fence_no_effect_is_duplicated_or_lost() {
    let plan = Plan {
        fence: Fence::Epoch,
        faults: if full() { 120 } else { 20 },
        failovers: if full() { 4 } else { 1 },
        kinds: vec![
            Kind::Kill,
            Kind::Stop,
            Kind::LinkDown,
            Kind::DatabaseCut,
            Kind::Zombie,
        ],
        seed: seed(),
    };
    let report = campaign(plan_clone(&plan)).await;
    println!("{}", report.line(&plan));
    assert!(
        report.unfinished.is_empty(),
        "unfinished: {:?}",
        report.unfinished
    );
    assert_eq!(report.duplicated, 0, "{}", report.line(&plan));
    assert_eq!(report.lost, 0, "{}", report.line(&plan));
    assert_eq!(report.faults.values().sum::<usize>(), plan.faults);
    assert!(report.faults.len() >= 4, "{}", report.line(&plan));
    assert_eq!(
        report.faults.get(&Kind::Failover).copied().unwrap_or(0),
        plan.failovers,
        "{}",
        report.line(&plan)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_environment_fence_zombies_duplicate_effects() {
    let plan = Plan {
        fence: Fence::Off,
        faults: if full() { 30 } else { 10 },
        kinds: vec![Kind::Zombie],
        failovers: 0,
        seed: seed(),
    };
    let report = campaign(plan_clone(&plan)).await;
    println!("{}", report.line(&plan));
    assert!(report.duplicated > 0, "{}", report.line(&plan));
}

fn plan_clone(plan: &Plan) -> Plan {
    Plan {
        fence: plan.fence,
        faults: plan.faults,
        kinds: plan.kinds.clone(),
        failovers: plan.failovers,
        seed: plan.seed,
    }
}
