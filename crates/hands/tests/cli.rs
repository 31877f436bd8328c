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
    // The episode's /workspace is this directory, bound in place (as root, the episode runs as
    // the directory's owner, never as root).
    let workspace = dir.path().join("workspace");
    std::fs::create_dir(&workspace).unwrap();
    chown_to_an_ordinary_user(&workspace);
    let note = workspace.join("from-bash.txt");
    let made = workspace.join("from-editor.txt");
    let note_cmd = "echo drilled > /workspace/from-bash.txt".to_owned();
    let made_path = "/workspace/from-editor.txt".to_owned();
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
            "--workspace-bind",
            "--task",
        ])
        .arg("Write a note.")
        .arg("--workspace")
        .arg(&workspace)
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
    // The run is checkpointed in its ledger: every checkpoint, the last a finished turn.
    let report = hands_runner::ledger::SqliteLedger::report(&out.join("ledger.sqlite")).unwrap();
    assert_eq!(report.status(), "finished");
    assert_eq!(report.steps_used, 4);
    assert!(report.pending.is_none());
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

#[test]
fn hands_exec_answers_every_block_of_a_saved_turn() {
    let dir = tempfile::tempdir().unwrap();
    let turn = dir.path().join("turn.json");
    std::fs::write(
        &turn,
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "Clicking, then a bad click, then typing."},
            {"type": "tool_use", "id": "toolu_a", "name": "left_click", "toolset_name": "computer",
             "input": {"coordinate": [100, 100]}},
            {"type": "tool_use", "id": "toolu_b", "name": "bash", "input": {"command": "true"}},
            {"type": "tool_use", "id": "toolu_c", "name": "left_click", "toolset_name": "computer",
             "input": {"coordinate": [5000, 100]}},
            {"type": "tool_use", "id": "toolu_d", "name": "type", "toolset_name": "computer",
             "input": {"text": "never"}},
            {"type": "tool_use", "id": "toolu_e", "name": "zoom", "toolset_name": "computer",
             "input": {"region": [0, 0, 64, 32]}}
        ]})
        .to_string(),
    )
    .unwrap();
    let shots = dir.path().join("shots");
    let output = hands()
        .args(["exec", "--desktop", "--spawn", "640x400", "--save-images"])
        .arg(&shots)
        .arg(&turn)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let message: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(message["role"], "user");
    let results = message["content"].as_array().unwrap();
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_a", "toolu_b", "toolu_c", "toolu_d", "toolu_e"]);
    assert!(results[0].get("is_error").is_none());
    assert_eq!(
        results[1]["is_error"],
        json!(true),
        "bash is not a computer action"
    );
    assert!(results[1].get("toolset_name").is_none());
    assert_eq!(results[2]["is_error"], json!(true));
    for late in &results[3..] {
        assert_eq!(
            late["content"],
            json!("Not executed: an earlier computer action in this turn failed.")
        );
        assert_eq!(late["toolset_name"], json!("computer"));
    }
    // The batch's closing screenshot went on the last success before the failure (an error
    // result holds only text), and was saved.
    assert_eq!(results[0]["content"][1]["type"], json!("image"));
    assert!(results[2]["content"].is_string());
    assert_eq!(std::fs::read_dir(&shots).unwrap().count(), 1);
}

#[test]
fn hands_exec_refuses_what_is_not_a_turn() {
    let dir = tempfile::tempdir().unwrap();
    let turn = dir.path().join("turn.json");
    std::fs::write(&turn, "{\"role\": \"assistant\"}").unwrap();
    let output = hands()
        .args(["exec", "--desktop", "--spawn", "320x200"])
        .arg(&turn)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("content"));
}

/// Every drill, both APIs: a scripted model on the simulated API drives the real runner on a
/// real desktop (mousepad) and in a real Chromium (the booking app); each drill verifies what
/// was saved and exits non-zero when it does not hold.
#[test]
fn every_drill_passes() {
    let output = hands()
        .args(["drill", "all"])
        .env_remove("DISPLAY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stderr.matches("PASSED").count(), 4, "{stderr}");
}

/// `hands run` (Claude, `--approve all`) in a browser opened at `url`, against the stand-in,
/// writing its run directory under `dir`.
fn run_in_browser(
    extra: &[&str],
    url: &str,
    sim: &SimServer,
    dir: &std::path::Path,
) -> std::process::Output {
    hands()
        .arg("run")
        .args(extra)
        .args(["--browser", url, "--approve", "all"])
        .args(["--task", "What is on the page?", "--out"])
        .arg(dir.join("run"))
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn hands_run_in_a_browser_uses_claudes_browser_toolset() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let app = runtime
        .block_on(hands_demo_apps::BookingApp::start(
            hands_demo_apps::BookingAppConfig::default(),
        ))
        .unwrap();
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        match n {
            1 => Turn::Blocks(vec![
                toolset_use("browser", "read_page", json!({"filter": "interactive"})),
                // Outside the allow-list: refused before confirm, and the run goes on.
                toolset_use(
                    "browser",
                    "navigate",
                    json!({"url": "https://example.com/"}),
                ),
            ]),
            _ => Turn::text("The page has a booking form."),
        }
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let output = run_in_browser(&[], app.base_url(), &sim, dir.path());
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let requests = sim.requests();
    let tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["type"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["browser_toolset_20260801"]);
    let answer = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    assert!(answer[0]["content"].to_string().contains("Book now"));
    assert_eq!(answer[1]["is_error"], json!(true));
    assert_eq!(
        app.requests_seen().form_pages,
        1,
        "only the start page was loaded"
    );
}

/// `hands run` on a spawned desktop against `sim`, with these extra arguments and environment;
/// returns the exit code and stderr.
fn run_on_desktop(
    sim: &SimServer,
    out: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Option<i32>, String) {
    let mut command = hands();
    command
        .args(["run", "--desktop", "--task", "Do it."])
        .args(args)
        .arg("--out")
        .arg(out)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .env_remove("DISPLAY")
        .stdin(std::process::Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The `tool_result` blocks of request `n`'s last message.
fn results_of(sim: &SimServer, n: usize) -> Vec<Value> {
    sim.requests()[n].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .cloned()
        .collect()
}

#[test]
fn hands_run_approve_none_runs_no_bash_no_editor_and_no_typing() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("bash-ran");
    let written = dir.path().join("editor-wrote.txt");
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![
            tool_use(
                "bash",
                json!({"command": format!("touch {}", marker.display())}),
            ),
            tool_use(
                "str_replace_based_edit_tool",
                json!({"command": "create", "path": written.display().to_string(), "file_text": "x"}),
            ),
        ]),
        Turn::Blocks(vec![toolset_use(
            "computer",
            "type",
            json!({"text": "rm -rf ~\n"}),
        )]),
        Turn::text("Nothing was allowed."),
    ]))
    .unwrap();
    let (code, stderr) = run_on_desktop(&sim, &dir.path().join("run"), &["--approve", "none"], &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!marker.exists(), "bash ran under --approve none");
    assert!(!written.exists(), "the editor wrote under --approve none");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let refused = |name: &str| {
        json!(format!(
            "The user did not grant permission to run '{name}'. Do not retry it unless the user asks you to."
        ))
    };
    let first = results_of(&sim, 1);
    assert_eq!(text_of(&first[0]), refused("bash"));
    assert_eq!(text_of(&first[1]), refused("str_replace_based_edit_tool"));
    let second = results_of(&sim, 2);
    assert_eq!(text_of(&second[0]), refused("type"));
    assert_eq!(second[0]["is_error"], json!(true));
}

/// The text of a result: its string content, or its first text block.
fn text_of(result: &Value) -> Value {
    match &result["content"] {
        Value::Array(blocks) => blocks
            .iter()
            .find(|b| b["type"] == "text")
            .map(|b| b["text"].clone())
            .unwrap_or(Value::Null),
        other => other.clone(),
    }
}

#[test]
fn the_model_reads_no_api_key_from_bash() {
    // An attacker's model: every way a shell shows its environment.
    let key = "sk-ant-very-secret-key-0123456789";
    let probe = "env; echo \"key=[$ANTHROPIC_API_KEY][$OPENAI_API_KEY][$GITHUB_TOKEN]\"; \
                 tr '\\0' '\\n' < /proc/self/environ; tr '\\0' '\\n' < /proc/$$/environ; \
                 sh -c 'env; cat /proc/self/environ'; declare -p; set";
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![tool_use("bash", json!({"command": probe}))]),
        Turn::text("Looked."),
    ]))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = run_on_desktop(
        &sim,
        &dir.path().join("run"),
        &["--approve", "all"],
        &[
            ("ANTHROPIC_API_KEY", key),
            ("OPENAI_API_KEY", "sk-openai-secret-0123456789"),
            ("GITHUB_TOKEN", "ghp_secret0123456789"),
            ("DB_PASSWORD", "hunter2-secret"),
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let result = results_of(&sim, 1)[0].to_string();
    assert!(result.contains("key=[][][]"), "{result}");
    assert!(result.contains("PATH="), "the probe ran: {result}");
    for secret in [
        key,
        "sk-openai-secret",
        "ghp_secret",
        "hunter2",
        "ANTHROPIC_BASE_URL",
    ] {
        assert!(!result.contains(secret), "{secret} leaked: {result}");
    }
}

#[test]
fn no_program_hands_starts_holds_the_api_key() {
    // An attacker's model reads every process's environment it can: the window manager, the X
    // server and any client hands started would hand it the key if they inherited it.
    let probe = "for f in /proc/[0-9]*/environ; do \
                 if tr '\\0' '\\n' < \"$f\" 2>/dev/null | grep -q '^ANTHROPIC_API_KEY=sk-ant-held'; \
                 then echo \"holder=$(cat ${f%/environ}/comm)\"; fi; done; echo probe-done";
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![tool_use("bash", json!({"command": probe}))]),
        Turn::text("Looked."),
    ]))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = run_on_desktop(
        &sim,
        &dir.path().join("run"),
        &["--approve", "all"],
        &[("ANTHROPIC_API_KEY", "sk-ant-held-0123456789")],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let result = results_of(&sim, 1)[0].to_string();
    assert!(result.contains("probe-done"), "the probe ran: {result}");
    // hands itself holds it (it was given it); nothing it started does.
    let holders: Vec<&str> = result
        .split("holder=")
        .skip(1)
        .map(|rest| rest.split(['\\', '\n']).next().unwrap_or(""))
        .collect();
    assert!(
        holders.iter().all(|h| *h == "hands"),
        "programs hands started hold the key: {holders:?} ({result})"
    );
}

#[test]
fn hands_run_stops_on_max_tokens_without_running_the_cut_turn() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let sim = SimServer::start(SimConfig::scripted(vec![Turn::stopped(
        Turn::Blocks(vec![tool_use(
            "bash",
            json!({"command": format!("touch {}", marker.display())}),
        )]),
        "max_tokens",
    )]))
    .unwrap();
    let (code, stderr) = run_on_desktop(&sim, &dir.path().join("run"), &["--approve", "all"], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("`max_tokens`"), "{stderr}");
    assert!(!marker.exists());
}

#[test]
fn a_text_answer_on_the_last_allowed_request_exits_zero() {
    let sim = SimServer::start(SimConfig::scripted(vec![Turn::text("All done.")])).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = run_on_desktop(
        &sim,
        &dir.path().join("run"),
        &["--approve", "all", "--max-steps", "1"],
        &[],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("finished"), "{stderr}");
    assert_eq!(
        sim.requests()[0].body["tool_choice"],
        json!({"type": "none"})
    );
}

/// Tried as a new user would: a batch whose second block fails. The answer puts the closing
/// screenshot on the first block's result (an `is_error` result may hold only text), the strict
/// stand-in accepts it, and the run goes on to the model's next turn and finishes.
#[test]
fn hands_run_goes_on_after_a_batch_whose_second_block_fails() {
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        let c = |m: &str, input: Value| toolset_use("computer", m, input);
        match n {
            1 => Turn::Blocks(vec![
                c("left_click", json!({"coordinate": [100, 100]})),
                c("left_click", json!({"coordinate": [99999, 5]})),
                c("type", json!({"text": "never typed"})),
            ]),
            2 => Turn::Blocks(vec![c("screenshot", json!({}))]),
            _ => Turn::text("Recovered and done."),
        }
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let output = hands()
        .args(["run", "--desktop", "--approve", "all", "--task"])
        .arg("Click, then recover.")
        .arg("--out")
        .arg(dir.path().join("run"))
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .env_remove("DISPLAY")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let requests = sim.requests();
    assert_eq!(requests.len(), 3, "the run went on after the failed batch");
    let answer = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(answer.len(), 3);
    assert!(answer[0].get("is_error").is_none());
    assert_eq!(
        answer[0]["content"][1]["type"], "image",
        "the closing screenshot"
    );
    assert_eq!(answer[1]["is_error"], true);
    assert!(answer[1]["content"].is_string(), "{}", answer[1]["content"]);
    assert_eq!(
        answer[2]["content"],
        "Not executed: an earlier computer action in this turn failed."
    );
}

/// Every block of a saved turn is answered, even those that do not read; a long id's images
/// are saved under a bounded name; and an I/O error after the actions ran still prints the
/// answer.
#[test]
fn hands_exec_answers_blocks_that_do_not_read_and_keeps_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let long_id = format!("toolu_{}", "x".repeat(5000));
    let deep = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
    let turn = format!(
        r#"{{"role": "assistant", "content": [
            {{"type": "tool_use", "id": "toolu_a", "name": "left_click", "toolset_name": 5,
              "input": {{"coordinate": [10, 10]}}}},
            {{"type": "tool_use", "id": "{long_id}", "name": "zoom", "toolset_name": "computer",
              "input": {{"region": [0, 0, 64, 32]}}}},
            {{"type": "tool_use", "id": "toolu_c", "name": "scroll", "toolset_name": "computer",
              "input": {{"scroll_direction": "down", "scroll_amount": 1e999}}}},
            {{"type": "tool_use", "id": "toolu_d", "name": "type", "toolset_name": "computer",
              "input": {{"text": {deep}}}}}
        ]}}"#
    );
    let path = dir.path().join("turn.json");
    std::fs::write(&path, &turn).unwrap();
    let shots = dir.path().join("shots");
    let output = hands()
        .args(["exec", "--desktop", "--spawn", "640x400", "--save-images"])
        .arg(&shots)
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let message: Value = serde_json::from_slice(&output.stdout).unwrap();
    let results = message["content"].as_array().unwrap();
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_a", long_id.as_str(), "toolu_c", "toolu_d"]);
    assert_eq!(results[0]["is_error"], true);
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("`toolset_name` is not a string")
    );
    assert!(results[0].get("toolset_name").is_none());
    assert!(results[1].get("is_error").is_none(), "the zoom ran");
    assert_eq!(results[2]["is_error"], true);
    assert!(
        results[2]["content"]
            .as_str()
            .unwrap()
            .contains("number out of range")
    );
    assert_eq!(results[2]["toolset_name"], "computer");
    assert_eq!(
        results[3]["content"],
        "Not executed: an earlier computer action in this turn failed."
    );
    let saved: Vec<String> = std::fs::read_dir(&shots)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    // The zoom and, on the same (last successful) result, the closing screenshot.
    assert_eq!(saved.len(), 2, "{saved:?}");
    for name in &saved {
        assert!(name.len() < 80 && name.starts_with("toolu_x"), "{saved:?}");
    }

    // Images cannot be saved (the directory is a file): the answer is printed all the same.
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, "not a directory").unwrap();
    let output = hands()
        .args(["exec", "--desktop", "--spawn", "320x200", "--save-images"])
        .arg(blocker.join("shots"))
        .arg(&path)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let message: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(message["content"].as_array().map(Vec::len), Some(4));
    assert!(String::from_utf8_lossy(&output.stderr).contains("saving its images failed"));
}

/// `--browser-members` chooses exactly the browser members the model is given (and
/// `--browser-extra-members` adds opt-in ones); a name that is no member is refused.
#[test]
fn hands_run_chooses_the_browser_members() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let app = runtime
        .block_on(hands_demo_apps::BookingApp::start(
            hands_demo_apps::BookingAppConfig::default(),
        ))
        .unwrap();
    let sim = SimServer::start(SimConfig::with_policy(|_: &Value| Turn::text("Seen."))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        hands()
            .args(["run", "--browser", app.base_url(), "--approve", "all"])
            .args(extra)
            .args(["--task", "Look."])
            .arg("--out")
            // One run directory per run: a directory that holds a run's ledger is not reused.
            .arg(dir.path().join(format!("run-{}", extra.join("-"))))
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("ANTHROPIC_BASE_URL", sim.base_url())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let output = run(&["--browser-members", "read_page,navigate"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = run(&["--browser-extra-members", "javascript_exec"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let requests = sim.requests();
    let configs = &requests[0].body["tools"][0]["configs"];
    let enabled: Vec<&str> = configs
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, c)| c["enabled"] != json!(false))
        .map(|(m, _)| m.as_str())
        .collect();
    assert!(
        enabled
            .iter()
            .all(|m| ["read_page", "navigate"].contains(m)),
        "{configs}"
    );
    assert_eq!(configs["left_click"]["enabled"], false);
    assert_eq!(
        requests[1].body["tools"][0]["configs"]["javascript_exec"]["enabled"],
        true
    );
    let output = run(&["--browser-members", "read_page,teleport"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--browser-members") && stderr.contains("teleport"),
        "{stderr}"
    );
}

/// `hands read --attach` reads in a browser that is already running (its active tab) and leaves
/// it running; the read is the compact form, with kinds beyond the seven roles.
#[test]
fn hands_read_attaches_to_a_running_browser() {
    let mut chromium = PortChromium::start();
    let ws_url = chromium.ws_url();
    let page = "data:text/html,<title>T</title><p>Pick one</p><button>Go</button><a href=%23x>More</a>\
                <span onclick=0>Tap</span>";
    let out = hands()
        .args(["read", "--attach", &ws_url, page])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Pick one\n"), "{stdout}");
    assert!(stdout.contains("] button Go\n"), "{stdout}");
    assert!(stdout.contains("] link More\n"), "{stdout}");
    assert!(stdout.contains("] clickable Tap"), "{stdout}");
    assert!(
        matches!(chromium.child.try_wait(), Ok(None)),
        "the browser was closed"
    );
    let refused = hands()
        .args(["read", "--attach", "127.0.0.1:9222", page])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("DevTools WebSocket URL"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

/// A Chromium started the way someone else would, with a DevTools port to attach to (hands'
/// own launches have none: they speak CDP over pipes), killed on drop.
struct PortChromium {
    child: std::process::Child,
    profile: tempfile::TempDir,
}

impl PortChromium {
    fn start() -> PortChromium {
        let profile = tempfile::tempdir().unwrap();
        let mut command = Command::new("/usr/bin/chromium");
        command
            .args(["--headless", "--remote-debugging-port=0", "--no-first-run"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if rustix::process::geteuid().is_root() {
            command.arg("--no-sandbox");
        }
        let child = command.arg("about:blank").spawn().unwrap();
        PortChromium { child, profile }
    }

    fn ws_url(&self) -> String {
        let file = self.profile.path().join("DevToolsActivePort");
        for _ in 0..400 {
            if let Ok(text) = std::fs::read_to_string(&file)
                && let Some(url) = hands_cdp::launch::parse_active_port(&text)
            {
                return url;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
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

/// `hands run` for `provider` against `sim` with `args`, one text answer expected.
fn run_provider(sim: &SimServer, provider: &str, args: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut command = hands();
    command
        .args([
            "run",
            "--desktop",
            "--provider",
            provider,
            "--task",
            "Do it.",
        ])
        .args(args)
        .arg("--out")
        .arg(dir.path().join("run"))
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", sim.openai_base_url())
        .env_remove("DISPLAY")
        .stdin(std::process::Stdio::null());
    if provider == "openai" {
        command.args(["--model", "gpt-5.5"]);
    }
    let output = command.output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn thinking_effort_and_one_tool_per_turn_reach_the_request() {
    let sim = SimServer::start(SimConfig::scripted(vec![Turn::text("Done.")])).unwrap();
    let (code, stderr) = run_provider(
        &sim,
        "anthropic",
        &[
            "--thinking",
            "2048",
            "--effort",
            "high",
            "--no-parallel-tools",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let body = &sim.requests()[0].body;
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(body["max_tokens"], json!(2048 + 4096));
    assert_eq!(body["output_config"]["effort"], json!("high"));
    assert_eq!(
        body["tool_choice"],
        json!({"type": "auto", "disable_parallel_tool_use": true})
    );
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());

    let sim = SimServer::start(SimConfig::scripted(vec![Turn::text("Done.")])).unwrap();
    let (code, stderr) = run_provider(&sim, "openai", &["--effort", "low", "--no-parallel-tools"]);
    assert_eq!(code, Some(0), "{stderr}");
    let body = &sim.requests()[0].body;
    assert_eq!(body["reasoning"]["effort"], json!("low"));
    assert_eq!(body["parallel_tool_calls"], json!(false));
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());

    // Wrong values are refused before anything is sent, saying what would do.
    for (provider, args, says) in [
        (
            "anthropic",
            &["--effort", "turbo"][..],
            "low, medium, high, xhigh, max",
        ),
        ("openai", &["--effort", "max"][..], "none, minimal, low"),
        ("anthropic", &["--thinking", "100"][..], "at least 1024"),
        ("openai", &["--thinking", "adaptive"][..], "--effort"),
    ] {
        let sim = SimServer::start(SimConfig::scripted(vec![Turn::text("Done.")])).unwrap();
        let (code, stderr) = run_provider(&sim, provider, args);
        assert_ne!(code, Some(0), "{args:?}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(sim.requests().is_empty(), "{args:?}");
    }
}

/// Gives `dir` to an unprivileged uid when the tests run as root (an episode never runs as root,
/// and a bound workspace is written as its owner).
fn chown_to_an_ordinary_user(dir: &std::path::Path) {
    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(dir, Some(2_999_999), Some(2_999_999)).unwrap();
    }
}

/// What `hands runs show` prints for a run directory.
fn runs_show(out: &std::path::Path) -> String {
    let output = hands().args(["runs", "show"]).arg(out).output().unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_run_fails_closed_where_no_jail_can_be_made_and_runs_unjailed_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("bash-ran-on-the-host");
    let turns = || {
        vec![
            Turn::Blocks(vec![tool_use(
                "bash",
                json!({"command": format!("touch {}", marker.display())}),
            )]),
            Turn::text("Done."),
        ]
    };
    // No bubblewrap: hands refuses before any program or request, and says what to do.
    let sim = SimServer::start(SimConfig::scripted(turns())).unwrap();
    let (code, stderr) = run_on_desktop(
        &sim,
        &dir.path().join("refused"),
        &["--approve", "all"],
        &[("HANDS_BWRAP", "/nonexistent/bwrap")],
    );
    assert_ne!(code, Some(0), "{stderr}");
    assert!(stderr.contains("bubblewrap"), "{stderr}");
    assert!(stderr.contains("--sandbox none"), "{stderr}");
    assert!(sim.requests().is_empty(), "no request before the jail");
    assert!(!marker.exists());
    // Asked for, the same run goes on the host, and the ledger says so.
    let sim = SimServer::start(SimConfig::scripted(turns())).unwrap();
    let out = dir.path().join("unjailed");
    let (code, stderr) = run_on_desktop(
        &sim,
        &out,
        &["--approve", "all", "--sandbox", "none"],
        &[("HANDS_BWRAP", "/nonexistent/bwrap")],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(marker.exists(), "bash ran on the host under --sandbox none");
    let shown = runs_show(&out);
    assert!(shown.contains("sandbox: none"), "{shown}");
}

#[test]
fn a_jailed_run_shows_the_model_a_private_machine_and_records_its_jail() {
    // The model's bash: who it is, what it sees of the host, whether it can write beside hands.
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("host-canary.txt");
    std::fs::write(&canary, "host-secret-canary").unwrap();
    let probe = format!(
        "id -u; hostname; pwd; cat {canary} 2>&1; touch {dir}/escaped 2>&1; \
         ls /proc | grep -c '^[0-9]'; echo done",
        canary = canary.display(),
        dir = dir.path().display()
    );
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![tool_use("bash", json!({"command": probe}))]),
        Turn::text("Looked."),
    ]))
    .unwrap();
    let out = dir.path().join("run");
    let (code, stderr) = run_on_desktop(&sim, &out, &["--approve", "all"], &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let result = results_of(&sim, 1)[0].to_string();
    assert!(result.contains("done"), "the probe ran: {result}");
    assert!(result.contains("1000\\nhands\\n/workspace"), "{result}");
    assert!(!result.contains("host-secret-canary"), "{result}");
    assert!(result.contains("No such file"), "{result}");
    assert!(!dir.path().join("escaped").exists());
    let shown = runs_show(&out);
    assert!(shown.contains("sandbox: jail"), "{shown}");
}

/// `hands ARGS` with stdout a pipe whose read end is closed before it starts (`… | head -0`):
/// its exit status and its stderr.
fn with_stdout_closed(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = hands()
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(writer)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `hands runs | head` and `hands runs show RUN | head`: a reader that closed stdout ends the
/// command quietly with exit 0 (it panicked on the broken pipe).
#[test]
fn hands_runs_ends_quietly_when_stdout_closes() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    // An empty runs directory: one line, "no runs in …".
    let (code, stderr) = with_stdout_closed(&["runs".as_ref(), runs.as_ref()]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    // A run with a ledger, listed and shown (text and JSON).
    let run_dir = runs.join("run-1");
    std::fs::create_dir(&run_dir).unwrap();
    drop(
        hands_runner::ledger::SqliteLedger::create(&run_dir.join("ledger.sqlite"), "run-1")
            .unwrap(),
    );
    let listed = hands().arg("runs").arg(&runs).output().unwrap();
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("run-1"),
        "{listed:?}"
    );
    for args in [
        vec!["runs".as_ref(), runs.as_os_str()],
        vec!["runs".as_ref(), "show".as_ref(), run_dir.as_os_str()],
        vec![
            "runs".as_ref(),
            "show".as_ref(),
            "--json".as_ref(),
            run_dir.as_os_str(),
        ],
    ] {
        let (code, stderr) = with_stdout_closed(&args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // Any other failure still fails.
    let (code, _) = with_stdout_closed(&["runs".as_ref(), "show".as_ref(), runs.as_ref()]);
    assert_eq!(code, Some(1));
}

/// `hands read URL | head`: the page is read, the reader has closed stdout, hands ends quietly
/// with exit 0 (it panicked on the broken pipe).
#[test]
fn hands_read_ends_quietly_when_stdout_closes() {
    let page = "data:text/html,<title>T</title><p>Pick one</p><button>Go</button>";
    for args in [vec!["read", page], vec!["read", "--json", page]] {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let (code, stderr) = with_stdout_closed(&args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// `hands run --edits FILE`: an edit scheduled before the second request changes it (and not
/// the first); a file that is not edits is refused before anything starts.
#[test]
fn hands_run_applies_edits_from_a_file_at_their_step() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let app = runtime
        .block_on(hands_demo_apps::BookingApp::start(
            hands_demo_apps::BookingAppConfig::default(),
        ))
        .unwrap();
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        match n {
            1 => Turn::Blocks(vec![toolset_use(
                "browser",
                "read_page",
                json!({"filter": "interactive"}),
            )]),
            _ => Turn::text("The page has a booking form."),
        }
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let edits = dir.path().join("edits.jsonl");
    std::fs::write(
        &edits,
        r#"{"step": 2, "edit": {"type": "params", "max_output_tokens": 512, "instructions": "Be terse."}}"#,
    )
    .unwrap();
    let output = run_in_browser(
        &["--edits", edits.to_str().unwrap()],
        app.base_url(),
        &sim,
        dir.path(),
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let requests = sim.requests();
    assert_eq!(requests.len(), 2);
    assert_ne!(requests[0].body["max_tokens"], 512);
    assert_eq!(requests[1].body["max_tokens"], 512);
    assert!(requests[1].body["system"].to_string().contains("Be terse."));

    std::fs::write(&edits, r#"{"step": 2, "edit": {"type": "rename"}}"#).unwrap();
    let refused = run_in_browser(
        &["--edits", edits.to_str().unwrap()],
        app.base_url(),
        &sim,
        &dir.path().join("second"),
    );
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("line 1: not an edit"), "{stderr}");
    assert_eq!(sim.requests().len(), 2, "nothing was sent");
}

/// `hands run --threads`: Claude's requests go on a message thread (the stand-in checks each
/// continued request as the whole conversation it stands for).
#[test]
fn hands_run_with_threads_sends_only_new_messages() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let app = runtime
        .block_on(hands_demo_apps::BookingApp::start(
            hands_demo_apps::BookingAppConfig::default(),
        ))
        .unwrap();
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        match n {
            1 | 2 => Turn::Blocks(vec![toolset_use(
                "browser",
                "read_page",
                json!({"filter": "interactive"}),
            )]),
            _ => Turn::text("The page has a booking form."),
        }
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let output = run_in_browser(&["--threads"], app.base_url(), &sim, dir.path());
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let requests = sim.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].body["thread"]["type"], "create");
    for request in &requests[1..] {
        assert_eq!(request.body["thread"]["type"], "continue");
        assert_eq!(request.body["messages"].as_array().unwrap().len(), 1);
    }
}
