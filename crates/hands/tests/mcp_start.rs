//! `hands mcp --browser URL` starts at once and stays up (issue 21, item 5): it answers
//! `initialize` before any browser exists, opens Chromium (in its jail) on the first browser
//! call, and answers a start page that is down as a tool error on that call — naming the URL —
//! then opens it on a later call once it is served. Driven over stdio with JSON-RPC lines, as
//! any MCP client does.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const PAGE: &str = "<!doctype html><title>Start</title><h1>Lighthouse log</h1>\
    <p>The lamp was lit at dusk.</p><button>Ring</button>";

/// Serves `PAGE` on `listener` from a thread, to every request.
fn serve(listener: TcpListener) {
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{PAGE}",
                PAGE.len()
            );
        }
    });
}

/// A `hands mcp` on stdio, its answers read line by line from a thread.
struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn spawn(url: &str, sandbox: &str) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hands"))
            .args(["mcp", "--browser", url, "--sandbox", sandbox])
            .env_remove("DISPLAY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            stdin,
            lines,
            next_id: 0,
        }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and waits (at most `timeout`) for its answer.
    fn request(&mut self, method: &str, params: Value, timeout: Duration) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no answer to {method} within {timeout:?}: {e}"));
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn initialize(&mut self) -> Value {
        let answer = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "mcp_start test", "version": "0"},
            }),
            Duration::from_secs(10),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// `browser_read_page`: (is_error, text).
    fn read_page(&mut self) -> (bool, String) {
        let answer = self.request(
            "tools/call",
            json!({"name": "browser_read_page", "arguments": {"filter": "all"}}),
            Duration::from_secs(60),
        );
        let result = &answer["result"];
        assert!(result.is_object(), "{answer}");
        let text = result["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        (result["isError"] == json!(true), text)
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

/// `initialize` is answered before any browser is started (< 2 s here, for a loaded machine;
/// the measured time is printed), and the first browser call opens the browser at the start page.
#[test]
fn the_server_answers_initialize_before_the_browser_opens() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/start.html", listener.local_addr().unwrap());
    serve(listener);

    let spawned = Instant::now();
    let mut server = Server::spawn(&url, "jail");
    let init = server.initialize();
    let initialized = spawned.elapsed();
    assert_eq!(init["result"]["serverInfo"]["name"], "hands", "{init}");

    let (is_error, text) = server.read_page();
    let first_answer = spawned.elapsed();
    eprintln!(
        "hands mcp: initialize answered {} ms after spawn; first browser answer (launch, start \
         page, read) {} ms after spawn",
        initialized.as_millis(),
        first_answer.as_millis()
    );
    assert!(!is_error, "{text}");
    assert!(text.contains("The lamp was lit at dusk."), "{text}");
    assert!(
        initialized < Duration::from_secs(2),
        "initialize took {initialized:?}"
    );
    assert!(initialized < first_answer);
}

/// A start page that is down is a tool error on the first browser call naming the URL; the
/// server stays up, and a call after the page is served opens it. In the jail.
#[test]
fn a_start_page_that_is_down_is_a_tool_error_then_opens_once_served() {
    start_page_down_then_served("jail");
}

/// The same on the host (`--sandbox none`).
#[test]
fn a_start_page_that_is_down_on_the_host_is_a_tool_error_then_opens_once_served() {
    start_page_down_then_served("none");
}

fn start_page_down_then_served(sandbox: &str) {
    // A port that was just free: nothing listens on it until the page is served.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/start.html");
    let mut server = Server::spawn(&url, sandbox);
    let init = server.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "hands", "{init}");

    let (is_error, text) = server.read_page();
    eprintln!("the first call, with the start page down: {text}");
    assert!(is_error, "{text}");
    assert!(text.contains(&url), "{text}");
    assert!(text.contains("call again"), "{text}");
    assert!(server.alive(), "the server exited");

    serve(TcpListener::bind(("127.0.0.1", port)).unwrap());
    let (is_error, text) = server.read_page();
    assert!(!is_error, "{text}");
    assert!(text.contains("The lamp was lit at dusk."), "{text}");
    assert!(server.alive());
}
