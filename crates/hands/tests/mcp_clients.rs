//! `hands mcp` under real MCP clients: the official Python client (PyPI `mcp`) and the official
//! MCP Inspector CLI (npm `@modelcontextprotocol/inspector`) list and call every tool against a
//! real Chromium and a real Xvfb, over stdio and streamable HTTP, on protocol revisions
//! `2025-11-25` and `2026-07-28`, with consent given by elicitation, by `--approve all`, and
//! refused. Both clients are pinned in `tests/mcp/` and installed by
//! `scripts/install-mcp-clients.sh` (which `scripts/test` runs).
//!
//! Every call's size is counted by the client side (text bytes / 4, image width × height / 750)
//! and checked against the budget.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

fn clients_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp")
}

fn python() -> PathBuf {
    let python = clients_dir().join(".venv/bin/python");
    assert!(
        python.exists(),
        "the Python MCP client is not installed: run scripts/install-mcp-clients.sh"
    );
    python
}

fn inspector() -> PathBuf {
    let bin = clients_dir().join("node_modules/.bin/inspector");
    assert!(
        bin.exists(),
        "the MCP Inspector CLI is not installed: run scripts/install-mcp-clients.sh"
    );
    bin
}

/// A 2,000-control form: text fields, buttons (that retitle the page), checkboxes and selects.
fn big_page() -> String {
    let mut rows = String::new();
    for i in 0..2000 {
        let row = match i % 4 {
            0 => format!("<label>Field {i} <input name=\"f{i}\" value=\"v{i}\"></label>"),
            1 => format!(
                "<button type=\"button\" onclick=\"document.title='clicked {i}'\">Button {i}</button>"
            ),
            2 => format!("<label><input type=\"checkbox\" name=\"c{i}\"> Check {i}</label>"),
            _ => format!(
                "<select name=\"s{i}\" aria-label=\"Select {i}\"><option value=\"a\">Alpha\
                 </option><option value=\"b\">Beta</option></select>"
            ),
        };
        rows.push_str(&format!("<div>{row}</div>\n"));
    }
    format!("<!doctype html><title>Big form</title><h1>2,000 controls</h1><form>{rows}</form>")
}

const SMALL_PAGE: &str = "<!doctype html><title>Small</title><h1>Hello</h1>\
    <input aria-label=\"Name\"><button onclick=\"document.title='done'\">Go</button>\
    <select aria-label=\"Pick\"><option>One</option><option>Two</option></select>\
    <input type=checkbox aria-label=\"Agree\"><script>console.log('hello console')</script>";

/// Serves `/small.html` and `/big.html` on 127.0.0.1 from a thread; returns the base URL.
fn serve_pages() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let big = big_page();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]);
            let body = if head.starts_with("GET /big.html") {
                big.as_str()
            } else if head.starts_with("GET /small.html") {
                SMALL_PAGE
            } else {
                ""
            };
            let status = if body.is_empty() {
                "404 Not Found"
            } else {
                "200 OK"
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    base
}

/// Runs `tests/mcp/client.py` with `args`; returns its JSON report (asserting it passed).
fn python_client(args: &[&str]) -> Value {
    let out = Command::new(python())
        .arg(clients_dir().join("client.py"))
        .arg("--hands")
        .arg(env!("CARGO_BIN_EXE_hands"))
        .args(args)
        .env_remove("DISPLAY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("no report ({e}); stdout: {stdout}\nstderr: {stderr}");
    });
    assert!(
        out.status.success() && report["failures"] == json!([]),
        "{args:?}: {}\nstderr: {stderr}",
        report["failures"]
    );
    eprintln!(
        "{args:?}: {} tools, {} calls, largest response {} tokens, person asked {} times",
        report["tools"],
        report["calls"].as_array().unwrap().len(),
        report["max_tokens_seen"],
        report["asked"]
    );
    report
}

fn tools_called(report: &Value) -> Vec<String> {
    let mut names: Vec<String> = report["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn python_client_legacy_stdio_calls_every_browser_tool() {
    let base = serve_pages();
    let url = format!("{base}/small.html");
    let report = python_client(&["--mode", "legacy", "--browser", &url, "--approve", "all"]);
    assert_eq!(report["tools"], 21);
    assert_eq!(tools_called(&report).len(), 21);
}

#[test]
fn python_client_2026_over_http_asks_the_person_by_input_required_rounds() {
    let base = serve_pages();
    let url = format!("{base}/small.html");
    let report = python_client(&[
        "--mode",
        "2026-07-28",
        "--transport",
        "http",
        "--browser",
        &url,
        "--approve",
        "elicit-yes",
    ]);
    // Every consequential browser action was put to the person.
    assert!(report["asked"].as_u64().unwrap() >= 10, "{report}");
}

#[test]
fn python_client_legacy_over_http_gets_refusals_when_the_person_says_no() {
    let base = serve_pages();
    let url = format!("{base}/small.html");
    python_client(&[
        "--mode",
        "legacy",
        "--transport",
        "http",
        "--browser",
        &url,
        "--approve",
        "elicit-no",
    ]);
}

#[test]
fn python_client_2026_stdio_without_elicitation_follows_approve_none() {
    let base = serve_pages();
    let url = format!("{base}/small.html");
    python_client(&[
        "--mode",
        "2026-07-28",
        "--browser",
        &url,
        "--approve",
        "none",
    ]);
}

#[test]
fn python_client_on_a_2000_control_page_stays_within_the_budget() {
    let base = serve_pages();
    let url = format!("{base}/big.html");
    let report = python_client(&["--browser", &url, "--big", "--approve", "all"]);
    assert!(report["max_tokens_seen"].as_u64().unwrap() <= 25_000);
    assert_eq!(tools_called(&report).len(), 21);
    // A small budget: the read is cut, ends with a cursor, and the cursor gives the next part.
    let report = python_client(&[
        "--browser",
        &url,
        "--big",
        "--approve",
        "all",
        "--max-tokens",
        "5000",
    ]);
    assert!(report["max_tokens_seen"].as_u64().unwrap() <= 5_000);
}

#[test]
fn python_client_on_a_1920x1080_desktop_calls_every_computer_tool() {
    let report = python_client(&[
        "--mode",
        "2026-07-28",
        "--desktop",
        "--spawn",
        "1920x1080",
        "--approve",
        "elicit-yes",
    ]);
    assert_eq!(report["tools"], 15);
    assert_eq!(tools_called(&report).len(), 15);
    assert!(report["max_tokens_seen"].as_u64().unwrap() <= 25_000);
}

/// A `hands mcp` on streamable HTTP; killed on drop.
struct HttpServer {
    child: Child,
    url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_server(args: &[&str]) -> HttpServer {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hands"))
        .arg("mcp")
        .args(args)
        .args(["--http", "127.0.0.1:0"])
        .env_remove("DISPLAY")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("hands mcp exited before listening")
            .unwrap();
        if let Some(url) = line.strip_prefix("hands mcp: listening on ") {
            break url.to_owned();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    HttpServer { child, url }
}

/// One Inspector CLI call; returns its JSON result.
fn inspector_call(url: &str, era: &str, method: &str, tool: Option<(&str, Value)>) -> Value {
    let mut command = Command::new(inspector());
    command.args([
        "--cli",
        url,
        "--protocol-era",
        era,
        "--method",
        method,
        "--format",
        "json",
        "-q",
    ]);
    if let Some((name, args)) = &tool {
        command
            .args(["--tool-name", name, "--tool-args-json"])
            .arg(args.to_string());
    }
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let value: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "inspector {method} {tool:?}: not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    value["result"].clone()
}

/// What a client counts for a result: text bytes / 4 and images width × height / 750.
fn tokens(result: &Value) -> u64 {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| match block["type"].as_str() {
            Some("text") => (block["text"].as_str().unwrap().len() as u64).div_ceil(4),
            Some("image") => {
                let size =
                    hands_mcp::budget::image_size_from_png_or_jpeg(block["data"].as_str().unwrap())
                        .unwrap();
                size.pixels().div_ceil(750)
            }
            other => panic!("unexpected content {other:?}"),
        })
        .sum()
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The ref of the compact read's line `[ref] role [x] label …` (the name bare or quoted).
fn ref_of(read: &str, role: &str, label: &str) -> String {
    read.lines()
        .find_map(|l| {
            let (reference, rest) = l.strip_prefix('[')?.split_once("] ")?;
            let rest = rest.strip_prefix(role)?.strip_prefix(' ')?;
            let rest = ["[x] ", "[ ] "]
                .iter()
                .find_map(|box_| rest.strip_prefix(box_))
                .unwrap_or(rest);
            let named = [label.to_owned(), format!("\"{label}\"")]
                .iter()
                .any(|name| rest == name || rest.starts_with(&format!("{name} ")));
            named.then(|| reference.to_owned())
        })
        .unwrap_or_else(|| panic!("no {role} {label} in {read}"))
}

/// Both eras list the tools with schemas and annotations.
fn inspector_lists(server: &HttpServer, n_tools: usize) {
    for era in ["legacy", "modern"] {
        let listed = inspector_call(&server.url, era, "tools/list", None);
        let names: Vec<&str> = listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), n_tools, "{era}: {names:?}");
        for tool in listed["tools"].as_array().unwrap() {
            let annotations = &tool["annotations"];
            assert!(annotations["readOnlyHint"].is_boolean(), "{tool}");
            assert!(annotations["openWorldHint"].is_boolean(), "{tool}");
            assert!(annotations["destructiveHint"].is_boolean(), "{tool}");
            assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        }
    }
}

/// Calls a tool on `era`, checks its size and that it did not fail, and returns it.
fn inspector_tool(server: &HttpServer, era: &str, name: &str, args: Value) -> Value {
    let result = inspector_call(&server.url, era, "tools/call", Some((name, args)));
    assert!(
        tokens(&result) <= 25_000,
        "{name}: {} tokens",
        tokens(&result)
    );
    result
}

#[test]
fn inspector_cli_calls_every_desktop_tool() {
    let server = http_server(&["--desktop", "--spawn", "1920x1080", "--approve", "all"]);
    inspector_lists(&server, 15);
    let largest = inspector_calls(
        &server,
        vec![
            ("computer_screenshot", json!({})),
            ("computer_zoom", json!({"region": [0, 0, 200, 200]})),
            ("computer_cursor_position", json!({})),
            ("computer_wait", json!({"duration": 0})),
            ("computer_mouse_move", json!({"coordinate": [100, 100]})),
            ("computer_left_click", json!({"coordinate": [50, 50]})),
            ("computer_right_click", json!({"coordinate": [50, 50]})),
            ("computer_middle_click", json!({"coordinate": [50, 50]})),
            ("computer_double_click", json!({"coordinate": [50, 50]})),
            ("computer_triple_click", json!({"coordinate": [50, 50]})),
            (
                "computer_left_click_drag",
                json!({"start_coordinate": [10, 10], "coordinate": [40, 40]}),
            ),
            (
                "computer_scroll",
                json!({"scroll_direction": "down", "scroll_amount": 1}),
            ),
            ("computer_type", json!({"text": "hi"})),
            ("computer_key", json!({"text": "Escape"})),
            ("computer_hold_key", json!({"text": "shift", "duration": 0})),
        ],
    );
    assert!(largest <= 25_000, "{largest} tokens");
    eprintln!("inspector, 1920x1080 desktop: largest response {largest} tokens");
}

#[test]
fn inspector_cli_reads_a_2000_control_page_within_the_budget() {
    let base = serve_pages();
    let url = format!("{base}/big.html");
    let server = http_server(&["--browser", &url, "--approve", "all"]);
    let largest = inspector_calls(
        &server,
        vec![
            ("browser_read_page", json!({})),
            ("browser_read_page", json!({"filter": "all"})),
            ("browser_get_page_text", json!({})),
            ("browser_find", json!({"query": "button"})),
            ("browser_read_page_scoped", json!({"depth": 3})),
            ("browser_screenshot", json!({})),
        ],
    );
    assert!(largest <= 25_000, "{largest} tokens");
    eprintln!("inspector, 2,000-control page: largest response {largest} tokens");
}

/// Calls `calls` in order, alternating the two revisions; returns the largest size seen.
fn inspector_calls(server: &HttpServer, calls: Vec<(&str, Value)>) -> u64 {
    let mut largest = 0;
    for (i, (tool, args)) in calls.into_iter().enumerate() {
        let era = if i % 2 == 0 { "modern" } else { "legacy" };
        let result = inspector_tool(server, era, tool, args);
        assert_ne!(result["isError"], json!(true), "{tool} ({era}): {result}");
        largest = largest.max(tokens(&result));
        if tool.ends_with("screenshot") || tool.ends_with("zoom") {
            assert_eq!(result["content"][0]["type"], "image", "{tool}");
        }
    }
    largest
}

#[test]
fn inspector_cli_calls_every_browser_read_in_both_protocol_eras() {
    let base = serve_pages();
    let url = format!("{base}/small.html");
    let server = http_server(&["--browser", &url, "--approve", "all"]);
    inspector_lists(&server, 21);
    let largest = inspector_calls(
        &server,
        vec![
            ("browser_read_page", json!({})),
            ("browser_get_page_text", json!({})),
            ("browser_find", json!({"query": "Go"})),
            ("browser_read_page_scoped", json!({"depth": 3})),
            ("browser_screenshot", json!({})),
            ("browser_zoom", json!({"region": [0, 0, 300, 200]})),
            ("browser_list_tabs", json!({})),
            (
                "browser_wait_for",
                json!({"text": "Hello", "timeout_ms": 2000}),
            ),
            (
                "browser_read_diagnostics",
                json!({"source": "console", "limit": 5}),
            ),
        ],
    );
    // Outside the allow-list: refused, whatever --approve says.
    let denied = inspector_tool(
        &server,
        "modern",
        "browser_navigate",
        json!({"url": "https://example.com/"}),
    );
    assert_eq!(denied["isError"], json!(true));
    eprintln!("inspector, browser reads: largest response {largest} tokens");
}

#[test]
fn inspector_cli_calls_every_browser_action_in_both_protocol_eras() {
    let base = serve_pages();
    let url = format!("{base}/small.html");
    let server = http_server(&["--browser", &url, "--approve", "all"]);
    let read = text(&inspector_tool(
        &server,
        "legacy",
        "browser_read_page",
        json!({}),
    ));
    let name = ref_of(&read, "textbox", "Name");
    let go = ref_of(&read, "button", "Go");
    let pick = ref_of(&read, "combobox", "Pick");
    let agree = ref_of(&read, "checkbox", "Agree");
    let largest = inspector_calls(
        &server,
        vec![
            ("browser_type", json!({"target": name, "text": "Ada"})),
            ("browser_click", json!({"target": go})),
            (
                "browser_select_option",
                json!({"target": pick, "values": ["Two"]}),
            ),
            (
                "browser_set_checked",
                json!({"target": agree, "checked": true}),
            ),
            ("browser_hover", json!({"target": go})),
            ("browser_key", json!({"keys": ["Tab"]})),
            ("browser_scroll", json!({"direction": "down", "amount": 50})),
            ("browser_scroll_to", json!({"target": go})),
            ("browser_navigate", json!({"url": url})),
            ("browser_new_tab", json!({"url": url})),
        ],
    );
    // The tabs, then the two tab tools that need an id.
    let tabs = text(&inspector_tool(
        &server,
        "modern",
        "browser_list_tabs",
        json!({}),
    ));
    let ids: Vec<&str> = tabs
        .trim_start_matches("tabs: ")
        .split(" | ")
        .map(|t| t.split(' ').next().unwrap().trim_end_matches('*'))
        .collect();
    assert_eq!(ids.len(), 2, "{tabs}");
    inspector_calls(
        &server,
        vec![
            ("browser_switch_tab", json!({"tab_id": ids[0]})),
            ("browser_close_tab", json!({"tab_id": ids[1]})),
        ],
    );
    eprintln!("inspector, browser actions: largest response {largest} tokens");
}
