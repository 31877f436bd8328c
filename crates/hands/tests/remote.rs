//! `hands run --mcp` and `--server-tool` as a user runs them: against the simulated APIs, which
//! connect to a real MCP server (hands-sim's rmcp fixture) as the providers' servers do. What
//! the server did is read on the server; what the run directory keeps is read from its files.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::path::Path;
use std::process::Command;

use hands_sim::mcp_fixture::ADD_NOTE;
use hands_sim::policy::mcp_use;
use hands_sim::{McpFixture, SimConfig, SimServer, Turn};
use serde_json::{Value, json};

/// `hands run` on a spawned desktop against `sim`; returns the exit code and stderr.
fn run(
    sim: &SimServer,
    out: &Path,
    provider: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Option<i32>, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command
        .args([
            "run",
            "--desktop",
            "--provider",
            provider,
            "--task",
            "Save hi.",
        ])
        .args(args)
        .arg("--out")
        .arg(out)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", sim.openai_base_url())
        .env_remove("DISPLAY")
        .stdin(std::process::Stdio::null());
    if provider == "openai" {
        command.args(["--model", "gpt-5.5"]);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn approvals_sent(sim: &SimServer) -> Vec<Value> {
    sim.requests()
        .iter()
        .flat_map(|r| r.body["input"].as_array().cloned().unwrap_or_default())
        .filter(|i| i["type"] == "mcp_approval_response")
        .collect()
}

#[test]
fn hands_run_mcp_on_openai_answers_approvals_per_approve() {
    let fixture = McpFixture::with_token("secret-token-7").unwrap();
    for (approve, saved) in [("all", 1), ("none", 0)] {
        let sim = SimServer::start(SimConfig::scripted(vec![
            Turn::Items(vec![mcp_use("notes", ADD_NOTE, json!({"text": approve}))]),
            Turn::text("Done."),
        ]))
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let mcp = format!("notes={}", fixture.url());
        let (code, stderr) = run(
            &sim,
            &out,
            "openai",
            &[
                "--approve",
                approve,
                "--mcp",
                &mcp,
                "--mcp-token-env",
                "notes=NOTES_TOKEN",
                "--server-tool",
                "web_search",
            ],
            &[("NOTES_TOKEN", "secret-token-7")],
        );
        assert_eq!(code, Some(0), "{stderr}");
        assert!(sim.violations().is_empty(), "{:?}", sim.violations());
        let tools = sim.requests()[0].body["tools"].clone();
        let mcp_tool = tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "mcp")
            .unwrap()
            .clone();
        assert_eq!(mcp_tool["server_label"], "notes");
        assert_eq!(mcp_tool["require_approval"], "always");
        assert!(
            tools
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["type"] == "web_search")
        );
        let sent = approvals_sent(&sim);
        assert_eq!(sent.len(), 1, "{approve}");
        assert_eq!(sent[0]["approve"], json!(approve == "all"));
        let added = fixture
            .calls()
            .iter()
            .filter(|c| c.arguments["text"] == approve)
            .count();
        assert_eq!(added, saved, "{approve}");
        // The token reached the MCP server and nothing the run directory keeps.
        assert!(
            fixture
                .calls()
                .iter()
                .all(|c| c.bearer.as_deref() == Some("secret-token-7"))
        );
        for entry in std::fs::read_dir(&out).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                assert!(
                    !text.contains("secret-token-7"),
                    "{} keeps the token",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn hands_run_mcp_on_claude_approves_the_server_before_anything_is_sent() {
    let fixture = McpFixture::start().unwrap();
    let mcp = format!("notes={}", fixture.url());
    // Refused: nothing is sent, the run says why.
    let sim = SimServer::start(SimConfig::scripted(Vec::new())).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = run(
        &sim,
        &dir.path().join("run"),
        "anthropic",
        &["--approve", "none", "--mcp", &mcp],
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("MCP server `notes` was not approved"),
        "{stderr}"
    );
    assert!(sim.requests().is_empty());
    // Approved: the API calls the tool itself.
    let sim = SimServer::start(SimConfig::scripted(vec![Turn::Blocks(vec![
        mcp_use("notes", ADD_NOTE, json!({"text": "claude"})),
        json!({"type": "text", "text": "Saved."}),
    ])]))
    .unwrap();
    let (code, stderr) = run(
        &sim,
        &dir.path().join("run2"),
        "anthropic",
        &[
            "--approve",
            "all",
            "--mcp",
            &mcp,
            "--mcp-tools",
            "notes=add_note",
            "--server-tool",
            "web_search",
        ],
        &[],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(fixture.notes(), ["claude"]);
    let first = &sim.requests()[0];
    assert_eq!(first.body["mcp_servers"][0]["name"], "notes");
    let toolset = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "mcp_toolset")
        .unwrap()
        .clone();
    assert_eq!(toolset["configs"], json!({"add_note": {"enabled": true}}));
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    // A server tool Claude does not have is refused before the run.
    let (code, stderr) = run(
        &sim,
        &dir.path().join("run3"),
        "anthropic",
        &["--approve", "all", "--server-tool", "image_generation"],
        &[],
    );
    assert_ne!(code, Some(0));
    assert!(stderr.contains("image_generation"), "{stderr}");
}
