//! The `hands` binary as a user runs it: `hands run` against the simulated Messages API (a strict
//! stand-in that rejects what the real API rejects, with a 529 on the way), `hands policy`, and
//! the help a newcomer sees.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::process::Command;

use hands_sim::policy::{text, tool_use, toolset_use};
use hands_sim::{Fault, SimConfig, SimServer, Turn};
use serde_json::{Value, json};

fn hands() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hands"))
}

#[test]
fn hands_run_on_a_desktop_finishes_against_a_strict_stand_in() {
    let dir = tempfile::tempdir().unwrap();
    let note = dir.path().join("from-bash.txt");
    let made = dir.path().join("from-editor.txt");
    let note_cmd = format!("echo drilled > {}", note.display());
    let made_path = made.display().to_string();
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        let c = |m: &str, input: Value| toolset_use("computer", m, input);
        Turn::Blocks(match n {
            1 => vec![text("Looking first."), c("screenshot", json!({}))],
            2 => vec![
                c("left_click", json!({"coordinate": [640, 400]})),
                c("type", json!({"text": "hello"})),
                tool_use("bash", json!({"command": note_cmd})),
            ],
            3 => vec![tool_use(
                "str_replace_based_edit_tool",
                json!({"command": "create", "path": made_path, "file_text": "made\n"}),
            )],
            _ => return Turn::text("All done."),
        })
    }))
    .unwrap();
    let handle = sim.handle();
    let out = dir.path().join("run");
    let child = hands()
        .args([
            "run",
            "--desktop",
            "--provider",
            "anthropic",
            "--approve",
            "all",
            "--task",
        ])
        .arg("Write a note.")
        .arg("--out")
        .arg(&out)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .env_remove("DISPLAY")
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The second request meets an overloaded API (529) first.
    while handle.requests().is_empty() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    handle.inject(Fault::Overloaded);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "hands run failed");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let requests = sim.requests();
    assert_eq!(requests.len(), 5, "4 accepted requests and one 529");
    let first = &requests[0].body;
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "computer_toolset_20260801",
            "bash_20250124",
            "text_editor_20250728"
        ]
    );
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "drilled\n");
    assert_eq!(std::fs::read_to_string(&made).unwrap(), "made\n");
    let log = std::fs::read_to_string(out.join("log.jsonl")).unwrap();
    assert!(log.lines().any(|l| l.contains("\"kind\":\"action\"")));
    assert!(!log.contains("iVBOR"), "image data is kept out of the log");
    assert!(std::fs::read_dir(out.join("images")).unwrap().count() >= 1);
}

#[test]
fn hands_run_without_a_key_points_to_the_drill() {
    let output = hands()
        .args(["run", "--task", "anything"])
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("ANTHROPIC_API_KEY"), "{stderr}");
    assert!(stderr.contains("hands drill desktop"), "{stderr}");
}

#[test]
fn hands_without_arguments_names_the_drill_first() {
    let output = hands().output().unwrap();
    let help = String::from_utf8_lossy(&output.stderr).into_owned()
        + &String::from_utf8_lossy(&output.stdout);
    let first_line = help.lines().next().unwrap_or("");
    assert!(first_line.contains("hands drill"), "{help}");
}

#[test]
fn hands_policy_says_allow_or_deny_and_why() {
    let output = hands()
        .args([
            "policy",
            "--allow",
            "https://example.com",
            "--allow",
            "https://*.shop.test:8443",
            "--",
        ])
        .args([
            "https://example.com/path?q=1",
            "https://example.com.evil.test/",
            "https://a.shop.test:8443/cart",
            "https://shop.test:8443/",
            "https://user:pw@example.com/",
            "http://example.com/",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let lines: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0], "allow https://example.com/path?q=1");
    assert!(lines[1].starts_with("deny https://example.com.evil.test/: "));
    assert_eq!(lines[2], "allow https://a.shop.test:8443/cart");
    assert!(lines[3].starts_with("deny https://shop.test:8443/: "));
    assert!(lines[4].starts_with("deny https://user:pw@example.com/: "));
    assert!(lines[5].starts_with("deny http://example.com/: "));
}
