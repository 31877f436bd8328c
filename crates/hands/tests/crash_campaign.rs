//! Exactly once, proven: 100 scripted runs of the `hands` binary against the simulated Messages
//! API, each killed with SIGKILL at a point drawn from a seeded RNG — while the API answers a
//! request, in the middle of an action, or inside a ledger save — then resumed (reconciled
//! first when a call's outcome is uncertain, by looking at the environment, as a person would).
//! Effects are counted in the environment itself: lines appended by bash and inserted by the
//! text editor in the run's `effects.txt`, clicks received by an X client on a real Xvfb
//! display, and notes a real MCP server (hands-sim's fixture) stored when the simulated API
//! called it through the MCP connector — a remote effect, made by the provider's machines while
//! a request is under way. Every run must end with each effect exactly once: none repeated,
//! none lost.
//!
//! How the kills land: the simulated API kills `hands` from inside the policy answering the
//! chosen request; a bash effect's own command kills its parent (`kill -9 $PPID`) just before or
//! just after its effect; the X client's event thread sees the chosen click and the harness
//! kills `hands` while the action is settling; `HANDS_TEST_PAUSE_AT_REVISION` holds `hands`
//! inside the chosen save's transaction until the harness kills it; for a remote effect, the
//! simulated API kills `hands` while answering the request that asks the MCP server for it, and
//! then does (or, when the dead client's connection ends its work first, does not do) the call.

#![allow(
    clippy::unwrap_used,
    clippy::print_stderr,
    reason = "a test fails by panicking and prints its counts"
)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::BufRead as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hands_core::geometry::Size;
use hands_sim::mcp_fixture::ADD_NOTE;
use hands_sim::policy::{mcp_use, tool_use, toolset_use};
use hands_sim::{McpFixture, SimConfig, SimServer, Turn};
use hands_testkit::InputRecorder;
use hands_x11::{X11Desktop, XvfbConfig};
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use serde_json::{Value, json};

/// The campaign's seed: the same kills every time.
const SEED: u64 = 0x6861_6e64_7321;
const RUNS: usize = 100;
/// The last runs click on the desktop (and run one at a time: they share its X client).
const DESKTOP_RUNS: usize = 10;
/// The runs before those each ask the MCP server for one remote effect.
const REMOTE_RUNS: usize = 15;
/// The MCP server's name in the runs.
const MCP_SERVER: &str = "notes";
/// Part of the resume note that says the MCP servers acted (hands-runner's
/// `MCP_REQUEST_HAPPENED`).
const SERVERS_ACTED: &str = "the MCP servers did act";
/// Runs without clicks go four at a time: each spends most of its time waiting (fsync, the
/// desktop settling, process start), not on the two cores.
const WORKERS: usize = 4;
/// What `hands run` prints when the save hook holds it (hands' `resume::PAUSED_IN_SAVE`).
const PAUSED_IN_SAVE: &str = "hands: paused inside a ledger save";
/// Where effect k clicks: x = CLICK_X0 + CLICK_DX * k.
const CLICK_X0: i64 = 20;
const CLICK_DX: i64 = 30;
const CLICK_Y: i64 = 200;
/// No process of the campaign may take longer than this.
const PROCESS_LIMIT: Duration = Duration::from_secs(60);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Bash,
    Edit,
    Click,
    Remote,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    EffectThenKill,
    KillThenEffect,
    KillInstead,
}

#[derive(Clone, Copy, Debug)]
enum Kill {
    /// While the API answers this request (1-based) of the first process.
    Request(usize),
    /// Effect k's command kills `hands`: after its effect, before it (the orphaned shell then
    /// completes it), or instead of it (it never happens).
    Action { k: usize, order: Order },
    /// As soon as effect k's click reaches the X client.
    Click { k: usize },
    /// Inside the save of this checkpoint revision.
    Save(u64),
    /// While the API answers the request whose turn asks for remote effect k.
    Remote { k: usize },
}

impl Kill {
    fn phase(&self) -> &'static str {
        match self {
            Kill::Request(_) => "mid-request",
            Kill::Action { .. } => "mid-action (bash)",
            Kill::Click { .. } => "mid-action (desktop)",
            Kill::Save(_) => "mid-save",
            Kill::Remote { .. } => "mid-request (MCP connector)",
        }
    }
}

#[derive(Clone, Debug)]
struct Plan {
    index: usize,
    kinds: Vec<Kind>,
    kill: Kill,
}

impl Plan {
    fn n(&self) -> usize {
        self.kinds.len()
    }

    fn desktop(&self) -> bool {
        self.kinds.contains(&Kind::Click)
    }

    fn remote(&self) -> bool {
        self.kinds.contains(&Kind::Remote)
    }
}

/// How many effects the turn starting at effect `first` of run `run` asks for (1–3).
fn batch(run: usize, first: usize) -> usize {
    1 + (run * 7 + first * 3) % 3
}

/// Turns of an uninterrupted run of `n` effects.
fn turns(run: usize, n: usize) -> usize {
    let (mut done, mut turns) = (0, 0);
    while done < n {
        done += batch(run, done + 1).min(n - done);
        turns += 1;
    }
    turns
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Where {
    Files,
    Desktop,
    Remote,
}

fn plan(rng: &mut StdRng, index: usize, place: Where) -> Plan {
    if place == Where::Remote {
        return remote_plan(rng, index);
    }
    let desktop = place == Where::Desktop;
    let n = rng.random_range(3..=5);
    let mut kinds: Vec<Kind> = (0..n)
        .map(|_| match (desktop, rng.random_range(0..10)) {
            (true, 0..=5) => Kind::Click,
            (false, 0..=2) => Kind::Edit,
            _ => Kind::Bash,
        })
        .collect();
    let wanted = if desktop { Kind::Click } else { Kind::Bash };
    if !kinds.contains(&wanted) {
        let at = rng.random_range(0..n);
        kinds[at] = wanted;
    }
    let t = turns(index, n);
    let of_kind = |kind: Kind| -> Vec<usize> { (1..=n).filter(|k| kinds[k - 1] == kind).collect() };
    let kill = match rng.random_range(0..3) {
        0 => Kill::Request(rng.random_range(1..=t + 1)),
        // Revision 1 is the task; then per turn one when the response arrives, two per call,
        // one at the turn's end; and one when the run finishes.
        1 => Kill::Save(rng.random_range(2..=(2 + 2 * t + 2 * n) as u64)),
        _ if desktop => {
            let clicks = of_kind(Kind::Click);
            Kill::Click {
                k: clicks[rng.random_range(0..clicks.len())],
            }
        }
        _ => {
            let bash = of_kind(Kind::Bash);
            Kill::Action {
                k: bash[rng.random_range(0..bash.len())],
                order: [
                    Order::EffectThenKill,
                    Order::KillThenEffect,
                    Order::KillInstead,
                ][rng.random_range(0..3)],
            }
        }
    };
    Plan { index, kinds, kill }
}

/// A run with bash effects and exactly one remote effect (so a lost request holds at most one).
fn remote_plan(rng: &mut StdRng, index: usize) -> Plan {
    let n = rng.random_range(3..=5);
    let remote = rng.random_range(1..=n);
    let kinds = (1..=n)
        .map(|k| {
            if k == remote {
                Kind::Remote
            } else {
                Kind::Bash
            }
        })
        .collect();
    // Every run makes at least two requests (the last answers that all is done) and six saves
    // (the task, a response, two per call of at least two calls, a turn's end).
    let kill = match rng.random_range(0..4) {
        0 | 1 => Kill::Remote { k: remote },
        2 => Kill::Save(rng.random_range(2..=6)),
        _ => Kill::Request(rng.random_range(1..=2)),
    };
    Plan { index, kinds, kill }
}

/// What the simulated model knows of a run, and the kills it is armed with.
struct RunState {
    index: usize,
    kinds: Vec<Kind>,
    dir: PathBuf,
    pid: Option<u32>,
    requests: usize,
    kill_at_request: Option<usize>,
    kill_in_effect: Option<(usize, Order)>,
    /// Kill while answering the request whose turn asks for this remote effect.
    kill_on_remote: Option<usize>,
}

type Shared = Arc<Mutex<HashMap<usize, RunState>>>;

fn sigkill(pid: u32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}

/// The effect a `tool_use` input performs, if it is one of the campaign's.
fn effect_of(name: &str, input: &Value) -> Option<usize> {
    match name {
        "bash" => input["command"]
            .as_str()?
            .rsplit("# effect ")
            .next()?
            .trim()
            .parse()
            .ok(),
        "str_replace_based_edit_tool" => input["insert_text"]
            .as_str()?
            .trim()
            .strip_prefix('e')?
            .parse()
            .ok(),
        "left_click" => {
            let x = input["coordinate"][0].as_i64()?;
            usize::try_from((x - CLICK_X0) / CLICK_DX).ok()
        }
        ADD_NOTE => remote_effect(input["text"].as_str()?),
        _ => None,
    }
}

/// The note a remote effect stores: run and effect.
fn note(run: usize, k: usize) -> String {
    format!("run{run}-r{k}")
}

/// The effect a note stands for.
fn remote_effect(note: &str) -> Option<usize> {
    note.rsplit("-r").next()?.parse().ok()
}

/// The remote effects an assistant message shows made: its `mcp_tool_use` blocks (the API made
/// the call and put its result in the same message).
fn remote_done(messages: &[Value]) -> HashSet<usize> {
    messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "mcp_tool_use")
        .filter_map(|b| effect_of(b["name"].as_str()?, &b["input"]))
        .collect()
}

/// Whether a user message carries the resume note that the MCP servers acted.
fn says_servers_acted(message: &Value) -> bool {
    message["role"] == "user"
        && message["content"].as_array().is_some_and(|blocks| {
            blocks.iter().any(|b| {
                b["text"]
                    .as_str()
                    .is_some_and(|t| t.contains(SERVERS_ACTED))
            })
        })
}

/// The message without the resume notes hands appended to it.
fn without_notes(message: &Value) -> Value {
    let mut message = message.clone();
    if let Some(blocks) = message["content"].as_array_mut() {
        blocks.retain(|b| {
            !b["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("The run was interrupted"))
        });
    }
    message
}

/// Effects the conversation shows done: their `tool_result` is not an error, or the API made
/// them; and the remote effects of a request whose response was lost, when the resume note says
/// the servers acted: those the model asked for in answer to the conversation before the note.
fn done_effects(run: usize, kinds: &[Kind], messages: &[Value]) -> HashSet<usize> {
    let mut done = local_done(messages);
    done.extend(remote_done(messages));
    for (j, message) in messages.iter().enumerate() {
        if !says_servers_acted(message) {
            continue;
        }
        let mut before = messages[..j].to_vec();
        before.push(without_notes(message));
        done.extend(
            next_batch(run, kinds, &before)
                .into_iter()
                .filter(|k| kinds[k - 1] == Kind::Remote),
        );
    }
    done
}

/// The effects the model asks for next, from the conversation alone.
fn next_batch(run: usize, kinds: &[Kind], messages: &[Value]) -> Vec<usize> {
    let done = done_effects(run, kinds, messages);
    let pending: Vec<usize> = (1..=kinds.len()).filter(|k| !done.contains(k)).collect();
    let Some(&first) = pending.first() else {
        return Vec::new();
    };
    // A turn that ends with a remote effect also asks for the next one, if any: a turn whose
    // last block is the API's own call would end the model's turn (`end_turn`).
    let mut size = batch(run, first).min(pending.len());
    while size < pending.len() && kinds[pending[size - 1] - 1] == Kind::Remote {
        size += 1;
    }
    pending[..size].to_vec()
}

/// Client tools' effects whose `tool_result` is not an error.
fn local_done(messages: &[Value]) -> HashSet<usize> {
    let mut effect_of_id: HashMap<String, usize> = HashMap::new();
    for block in messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_use")
    {
        if let (Some(id), Some(k)) = (
            block["id"].as_str(),
            effect_of(block["name"].as_str().unwrap_or(""), &block["input"]),
        ) {
            effect_of_id.insert(id.to_owned(), k);
        }
    }
    messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result" && b["is_error"] != json!(true))
        .filter_map(|b| effect_of_id.get(b["tool_use_id"].as_str()?).copied())
        .collect()
}

fn effect_block(state: &mut RunState, k: usize) -> Value {
    match state.kinds[k - 1] {
        Kind::Bash => {
            let effect = format!("printf 'b{k}\\n' >> effects.txt");
            let command = match state.kill_in_effect {
                Some((at, order)) if at == k => {
                    state.kill_in_effect = None;
                    match order {
                        Order::EffectThenKill => format!("{effect}; kill -9 $PPID"),
                        Order::KillThenEffect => format!("kill -9 $PPID; {effect}"),
                        Order::KillInstead => "kill -9 $PPID; exit".to_owned(),
                    }
                }
                _ => effect,
            };
            tool_use(
                "bash",
                json!({"command": format!("{command} # effect {k}")}),
            )
        }
        Kind::Edit => tool_use(
            "str_replace_based_edit_tool",
            json!({"command": "insert", "path": state.dir.join("effects.txt"),
                "insert_line": 0, "insert_text": format!("e{k}\n")}),
        ),
        Kind::Click => toolset_use(
            "computer",
            "left_click",
            json!({"coordinate": [CLICK_X0 + CLICK_DX * k as i64, CLICK_Y]}),
        ),
        Kind::Remote => mcp_use(MCP_SERVER, ADD_NOTE, json!({"text": note(state.index, k)})),
    }
}

/// The simulated model: from the conversation alone (so a request sent again gets the same
/// answer), the next effects not yet done; and the kills it is armed with, once each.
fn policy(shared: Shared) -> impl FnMut(&Value) -> Turn + Send {
    move |request: &Value| {
        let task = request["messages"][0]["content"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| {
                request["messages"][0]["content"][0]["text"]
                    .as_str()
                    .map(str::to_owned)
            })
            .unwrap_or_default();
        let Some(run) = task
            .strip_prefix("crash campaign run ")
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<usize>().ok())
        else {
            return Turn::text("Not a campaign run.");
        };
        let mut runs = shared.lock().unwrap();
        let Some(state) = runs.get_mut(&run) else {
            return Turn::text("Unknown run.");
        };
        state.requests += 1;
        if state.kill_at_request == Some(state.requests)
            && let Some(pid) = state.pid
        {
            state.kill_at_request = None;
            sigkill(pid);
        }
        if request["tool_choice"]["type"] == "none" {
            return Turn::text("Out of requests.");
        }
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let next = next_batch(run, &state.kinds, &messages);
        if next.is_empty() {
            return Turn::text("All effects are done.");
        }
        if let Some(k) = state.kill_on_remote
            && next.contains(&k)
            && let Some(pid) = state.pid
        {
            // The API goes on to call the MCP server for a client that is gone.
            state.kill_on_remote = None;
            sigkill(pid);
        }
        let blocks = next.iter().map(|&k| effect_block(state, k)).collect();
        Turn::Blocks(blocks)
    }
}

fn hands(sim: &SimServer) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command
        .env_remove("DISPLAY")
        .env_remove("HANDS_TEST_PAUSE_AT_REVISION")
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .stdin(Stdio::null());
    command
}

/// Waits until process `pid` ends (its pidfd becomes readable), at most `limit`; false when it
/// is still running then.
fn wait_pid(pid: u32, limit: Duration) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid as i32) else {
        return true;
    };
    let Ok(fd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) else {
        return true; // already gone
    };
    let mut fds = [rustix::event::PollFd::new(
        &fd,
        rustix::event::PollFlags::IN,
    )];
    let limit = rustix::event::Timespec {
        tv_sec: limit.as_secs() as i64,
        tv_nsec: 0,
    };
    matches!(rustix::event::poll(&mut fds, Some(&limit)), Ok(n) if n > 0)
}

/// Waits for `child`, killing it (and failing) past [`PROCESS_LIMIT`].
fn wait_bounded(child: &mut Child, what: &str) -> std::process::ExitStatus {
    if !wait_pid(child.id(), PROCESS_LIMIT) {
        let _ = child.kill();
        panic!("{what} ran for more than {PROCESS_LIMIT:?}");
    }
    child.wait().unwrap()
}

/// Processes left in the run directory (the shell of a killed `hands` finishing its command):
/// waited for, as a person would before looking.
fn wait_for_orphans(dir: &Path) {
    let dir = std::fs::canonicalize(dir).unwrap();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if std::fs::read_link(entry.path().join("cwd")).ok().as_deref() != Some(dir.as_path()) {
            continue;
        }
        assert!(
            wait_pid(pid as u32, PROCESS_LIMIT),
            "a process left in {} does not end",
            dir.display()
        );
    }
}

/// How many times each effect of the run is in the environment.
fn observe(
    plan: &Plan,
    dir: &Path,
    recorder: Option<&InputRecorder>,
    fixture: &McpFixture,
) -> BTreeMap<usize, usize> {
    let mut seen: BTreeMap<usize, usize> = (1..=plan.n()).map(|k| (k, 0)).collect();
    let prefix = format!("run{}-r", plan.index);
    for stored in fixture.notes() {
        if stored.starts_with(&prefix)
            && let Some(k) = remote_effect(&stored)
        {
            *seen.entry(k).or_default() += 1;
        }
    }
    let text = std::fs::read_to_string(dir.join("effects.txt")).unwrap_or_default();
    for line in text.lines() {
        if let Some(k) = line
            .get(1..)
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|_| line.starts_with('b') || line.starts_with('e'))
        {
            *seen.entry(k).or_default() += 1;
        }
    }
    if let Some(recorder) = recorder {
        for event in recorder
            .sync()
            .unwrap()
            .iter()
            .filter(|e| e.is_button_press(1))
        {
            let (x, y) = event.position();
            if i64::from(y) == CLICK_Y && (i64::from(x) - CLICK_X0) % CLICK_DX == 0 {
                let k = usize::try_from((i64::from(x) - CLICK_X0) / CLICK_DX).unwrap();
                *seen.entry(k).or_default() += 1;
            }
        }
    }
    seen
}

#[derive(Debug, Default)]
struct Tally {
    runs: usize,
    kills: BTreeMap<&'static str, usize>,
    not_killed: Vec<usize>,
    resumes: usize,
    reconciled_happened: usize,
    reconciled_not: usize,
    expected: usize,
    observed: usize,
    repeated: usize,
    lost: usize,
    remote_requests_happened: usize,
    remote_requests_not: usize,
    remote_expected: usize,
    remote_observed: usize,
    remote_repeated: usize,
    remote_lost: usize,
    failures: Vec<String>,
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned() + &String::from_utf8_lossy(&output.stdout)
}

/// What every run of the campaign shares.
struct Rig<'a> {
    root: &'a Path,
    sim: &'a SimServer,
    shared: &'a Shared,
    display: &'a str,
    fixture: &'a McpFixture,
    tally: &'a Mutex<Tally>,
}

/// One run: started, killed where its plan says, resumed until it finishes, counted.
fn campaign_run(plan: &Plan, rig: &Rig<'_>, recorder: Option<&InputRecorder>) {
    let Rig {
        root,
        sim,
        shared,
        display,
        fixture,
        tally,
    } = *rig;
    let dir = root.join(format!("run-{:03}", plan.index));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("effects.txt"), "").unwrap();
    if let Some(recorder) = recorder {
        recorder.clear().unwrap();
    }
    shared.lock().unwrap().insert(
        plan.index,
        RunState {
            index: plan.index,
            kinds: plan.kinds.clone(),
            dir: dir.clone(),
            pid: None,
            requests: 0,
            kill_at_request: match plan.kill {
                Kill::Request(at) => Some(at),
                _ => None,
            },
            kill_in_effect: match plan.kill {
                Kill::Action { k, order } => Some((k, order)),
                _ => None,
            },
            kill_on_remote: match plan.kill {
                Kill::Remote { k } => Some(k),
                _ => None,
            },
        },
    );
    let mut command = hands(sim);
    command
        .args([
            "run",
            "--approve",
            "all",
            "--max-steps",
            "40",
            "--display",
            display,
            // The campaign counts effects in files of the host and drives its own display: the
            // ledger's exactly-once is what it measures, on the host (the jail has tests of its
            // own).
            "--sandbox",
            "none",
        ])
        .arg("--task")
        .arg(format!(
            "crash campaign run {} (effects in effects.txt)",
            plan.index
        ))
        .arg("--out")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if plan.remote() {
        command
            .arg("--mcp")
            .arg(format!("{MCP_SERVER}={}", fixture.url()));
    }
    if let Kill::Save(revision) = plan.kill {
        command.env("HANDS_TEST_PAUSE_AT_REVISION", revision.to_string());
    }
    let mut child = command.spawn().unwrap();
    let pid = child.id();
    shared.lock().unwrap().get_mut(&plan.index).unwrap().pid = Some(pid);
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut said = String::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if line.starts_with(PAUSED_IN_SAVE) {
                sigkill(pid);
            }
            said.push_str(&line);
            said.push('\n');
        }
        said
    });
    std::thread::scope(|scope| {
        if let (Kill::Click { k }, Some(recorder)) = (plan.kill, recorder) {
            let x = CLICK_X0 + CLICK_DX * k as i64;
            scope.spawn(move || {
                let clicked = recorder.wait_for("the chosen click", PROCESS_LIMIT, |events| {
                    events
                        .iter()
                        .any(|e| e.is_button_press(1) && e.position() == (x as i32, CLICK_Y as i32))
                });
                if clicked.is_ok() {
                    sigkill(pid);
                }
            });
        }
        let status = wait_bounded(&mut child, "a campaign run");
        let said = reader.join().unwrap();
        let mut t = tally.lock().unwrap();
        t.runs += 1;
        if status.signal() == Some(9) {
            *t.kills.entry(plan.kill.phase()).or_default() += 1;
        } else {
            t.not_killed.push(plan.index);
            if !status.success() {
                t.failures
                    .push(format!("run {} failed before its kill: {said}", plan.index));
            }
        }
    });
    // Look at the run as a person would, once the killed process's shell has finished: each
    // uncertain call is reconciled from the environment, then the run is resumed to its end.
    wait_for_orphans(&dir);
    let show = hands(sim)
        .args(["runs", "show", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(show.status.success(), "{}", text(&show));
    let shown: Value = serde_json::from_slice(&show.stdout).unwrap();
    let seen = observe(plan, &dir, recorder, fixture);
    for call in shown["pending_turn"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["uncertain"] == true)
    {
        let name = call["name"].as_str().unwrap();
        // A request in which the MCP server could act: did the server store the run's remote
        // effect (a run has one)?
        let request = name == hands_runner::ledger::MCP_REQUEST_RECORD;
        let k = if request {
            plan.kinds.iter().position(|k| *k == Kind::Remote).unwrap() + 1
        } else {
            effect_of(name, &call["input"]).unwrap()
        };
        let happened = seen.get(&k).copied().unwrap_or(0) > 0;
        if request {
            let mut t = tally.lock().unwrap();
            if happened {
                t.remote_requests_happened += 1;
            } else {
                t.remote_requests_not += 1;
            }
        }
        let output = hands(sim)
            .args(["runs", "reconcile"])
            .arg(&dir)
            .arg(call["call_id"].as_str().unwrap())
            .arg(if happened {
                "--happened"
            } else {
                "--not-happened"
            })
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", text(&output));
        let mut t = tally.lock().unwrap();
        if happened {
            t.reconciled_happened += 1;
        } else {
            t.reconciled_not += 1;
        }
    }
    let mut resume = hands(sim);
    resume
        .args(["run", "--approve", "all", "--resume"])
        .arg(&dir);
    if plan.remote() {
        // `--resume` takes the MCP servers' URLs again (the ledger keeps fingerprints only).
        resume
            .arg("--mcp")
            .arg(format!("{MCP_SERVER}={}", fixture.url()));
    }
    let mut resumed = resume
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    shared.lock().unwrap().get_mut(&plan.index).unwrap().pid = Some(resumed.id());
    let said = std::thread::spawn({
        let stderr = resumed.stderr.take().unwrap();
        move || {
            let mut said = String::new();
            let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut said);
            said
        }
    });
    let status = wait_bounded(&mut resumed, "a resumed run");
    let said = said.join().unwrap();
    tally.lock().unwrap().resumes += 1;
    // `hands run` exits 0 only when the model finished.
    if !status.success() {
        tally
            .lock()
            .unwrap()
            .failures
            .push(format!("run {} resume failed: {said}", plan.index));
    }
    let seen = observe(plan, &dir, recorder, fixture);
    let mut t = tally.lock().unwrap();
    t.expected += plan.n();
    for (k, n) in &seen {
        if *k == 0 || *k > plan.n() {
            t.failures
                .push(format!("run {}: unknown effect {k}", plan.index));
            continue;
        }
        t.observed += n;
        t.repeated += n.saturating_sub(1);
        if plan.kinds[k - 1] == Kind::Remote {
            t.remote_expected += 1;
            t.remote_observed += n;
            t.remote_repeated += n.saturating_sub(1);
            t.remote_lost += usize::from(*n == 0);
        }
        if *n == 0 {
            t.lost += 1;
            t.failures
                .push(format!("run {}: effect {k} lost ({plan:?})", plan.index));
        }
        if *n > 1 {
            t.failures.push(format!(
                "run {}: effect {k} happened {n} times ({plan:?})",
                plan.index
            ));
        }
    }
}

#[test]
fn crash_campaign_every_effect_exactly_once() {
    let started = Instant::now();
    let mut rng = StdRng::seed_from_u64(SEED);
    let plans: Vec<Plan> = (0..RUNS)
        .map(|i| {
            let place = if i >= RUNS - DESKTOP_RUNS {
                Where::Desktop
            } else if i >= RUNS - DESKTOP_RUNS - REMOTE_RUNS {
                Where::Remote
            } else {
                Where::Files
            };
            plan(&mut rng, i, place)
        })
        .collect();
    let shared: Shared = Arc::default();
    let fixture = McpFixture::start().unwrap();
    let sim = SimServer::start(SimConfig::with_policy(policy(Arc::clone(&shared)))).unwrap();
    let desktop = X11Desktop::spawn(&XvfbConfig::new(Size::new(640, 400).unwrap())).unwrap();
    let recorder = InputRecorder::start(desktop.display()).unwrap();
    let display = desktop.display().to_owned();
    let root = tempfile::tempdir().unwrap();
    let tally = Mutex::new(Tally::default());
    let rig = Rig {
        root: root.path(),
        sim: &sim,
        shared: &shared,
        display: &display,
        fixture: &fixture,
        tally: &tally,
    };

    let (files, clicks): (Vec<&Plan>, Vec<&Plan>) = plans.iter().partition(|p| !p.desktop());
    let queue = Mutex::new(files.into_iter());
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| {
                loop {
                    let Some(plan) = queue.lock().unwrap().next() else {
                        break;
                    };
                    campaign_run(plan, &rig, None);
                }
            });
        }
    });
    for plan in clicks {
        campaign_run(plan, &rig, Some(&recorder));
    }

    let t = tally.into_inner().unwrap();
    let kills: usize = t.kills.values().sum();
    eprintln!(
        "crash campaign (seed {SEED:#x}): {} runs, {kills} killed with SIGKILL ({}), {} not killed; \
         {} resumes; {} uncertain calls reconciled ({} had happened, {} had not); \
         effects expected {}, observed {}, repeated {}, lost {} (of them remote, made by the \
         MCP server: expected {}, observed {}, repeated {}, lost {}; requests to it left \
         uncertain by a kill and reconciled: {} had acted, {} had not); {:.1} s",
        t.runs,
        t.kills
            .iter()
            .map(|(phase, n)| format!("{phase} {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        t.not_killed.len(),
        t.resumes,
        t.reconciled_happened + t.reconciled_not,
        t.reconciled_happened,
        t.reconciled_not,
        t.expected,
        t.observed,
        t.repeated,
        t.lost,
        t.remote_expected,
        t.remote_observed,
        t.remote_repeated,
        t.remote_lost,
        t.remote_requests_happened,
        t.remote_requests_not,
        started.elapsed().as_secs_f64()
    );
    assert!(t.failures.is_empty(), "{:#?}", t.failures);
    assert_eq!(t.runs, RUNS);
    assert!(
        t.not_killed.is_empty(),
        "runs not killed: {:?}",
        t.not_killed
    );
    assert_eq!((t.repeated, t.lost), (0, 0));
    assert_eq!(t.remote_expected, REMOTE_RUNS);
    assert_eq!(t.observed, t.expected);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}
