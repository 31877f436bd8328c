//! The worker image (deploy/container) built with podman around this build's `hands`, and run
//! against a private PostgreSQL and the simulated Messages API: one scripted desktop task
//! submitted from the host is run by `hands worker` inside the container (`--network host`,
//! the database's socket directory and the test's directory mounted at their own paths;
//! `--sandbox none`, the container being the episode's isolation) and seen finished in
//! `hands batch status`. podman must run here: a host without it fails this test, saying so.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use hands_fleet::cluster::{Durability, LocalCluster};
use hands_sim::policy::tool_use;
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};

const IMAGE: &str = "localhost/hands-worker:test";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned() + &String::from_utf8_lossy(&output.stdout)
}

fn hands(sim: &SimServer) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command
        .stdin(Stdio::null())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url());
    command
}

/// podman with the repository's settings (runc, no default ulimits).
fn podman() -> Command {
    let mut command = Command::new("podman");
    command.stdin(Stdio::null()).env(
        "CONTAINERS_CONF",
        repo().join("deploy/container/containers.conf"),
    );
    command
}

/// Builds the image (without Chromium: the task is a desktop one), or fails saying why.
fn build_image() {
    let found = Command::new("podman").arg("--version").output();
    assert!(
        found.as_ref().is_ok_and(|o| o.status.success()),
        "podman cannot run here ({found:?}): run scripts/install-system-deps.sh"
    );
    let started = Instant::now();
    let output = Command::new("bash")
        .arg(repo().join("deploy/container/build.sh"))
        .arg(env!("CARGO_BIN_EXE_hands"))
        .arg(IMAGE)
        .env("EXTRA_PACKAGES", "")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "building the worker image failed: {}",
        text(&output)
    );
    eprintln!("image built in {:.1} s", started.elapsed().as_secs_f64());
}

#[test]
fn the_worker_image_runs_a_submitted_episode_to_its_end() {
    build_image();
    let pg = LocalCluster::start(Durability::Unsynced).unwrap_or_else(|e| {
        panic!("a private PostgreSQL is needed ({e}); run scripts/install-system-deps.sh")
    });
    let url = pg.database("container").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let effects = dir.path().join("effects.txt");
    let effects_in_policy = effects.clone();
    // The model appends where the command ran (podman puts /run/.containerenv in every
    // container), then says it is done.
    let sim = SimServer::start(SimConfig::with_policy(move |request: &Value| {
        let answered = request["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .any(|b| b["type"] == "tool_result");
        if answered {
            return Turn::text("Done.");
        }
        let command = format!(
            "if test -f /run/.containerenv; then echo container; else echo host; fi >> {}",
            effects_in_policy.display()
        );
        Turn::Blocks(vec![tool_use("bash", json!({ "command": command }))])
    }))
    .unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    let task = json!({"prompt": "Say where you run", "environment": {"kind": "desktop"},
        "max_steps": 4, "check": format!("grep -qx container {}", effects.display())});
    std::fs::write(&tasks, task.to_string()).unwrap();
    let output = hands(&sim)
        .args(["batch", "submit", "--ledger", &url])
        .arg(&tasks)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));

    let started = Instant::now();
    let mount = |path: &Path| format!("{0}:{0}", path.display());
    let output = podman()
        .args(["run", "--rm", "--network", "host"])
        .args(["-v", &mount(dir.path()), "-v", &mount(pg.socket_dir())])
        .args(["-e", "ANTHROPIC_API_KEY=sk-test"])
        .args(["-e", &format!("ANTHROPIC_BASE_URL={}", sim.base_url())])
        .arg(IMAGE)
        .args([
            "--ledger",
            &url,
            "--slots",
            "2",
            "--lease",
            "5",
            "--sandbox",
            "none",
        ])
        .args(["--until-done", "--name", "in-container", "--dir"])
        .arg(dir.path().join("runs"))
        .output()
        .unwrap();
    let said = text(&output);
    eprintln!(
        "the container ran the episode in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(output.status.success(), "{said}");
    assert!(
        said.contains("hands worker in-container: 2 slot(s)"),
        "{said}"
    );
    assert!(said.contains("episode 1 finished"), "{said}");
    // The effect happened once, inside the container.
    assert_eq!(
        std::fs::read_to_string(&effects).unwrap(),
        "container\n",
        "{said}"
    );
    let output = hands(&sim)
        .args(["batch", "status", "--ledger", &url])
        .output()
        .unwrap();
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    assert!(
        shown.contains("1 episodes: 0 queued, 0 running, 1 finished"),
        "{shown}"
    );
    assert!(shown.contains("success: 1 of 1 done (100.0%)"), "{shown}");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}
