//! A test's MCP client of `hands mcp` over stdio: JSON-RPC lines in, answers read line by line
//! from a thread, the server's stderr kept for failure messages. Shared by the MCP tests so each
//! says only what it checks.

#![allow(dead_code, clippy::unwrap_used, reason = "a test fails by panicking")]

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The protocol version the tests speak.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// A running `hands mcp`; killed when dropped.
pub struct McpStdio {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    next_id: u64,
}

impl Drop for McpStdio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a tool call answered.
pub struct ToolAnswer {
    /// Whether the result was marked `isError`.
    pub is_error: bool,
    /// Its text parts, one per line.
    pub text: String,
}

impl McpStdio {
    /// Starts `command` (a `hands mcp …`) with piped stdio; not yet initialized.
    pub fn spawn(mut command: Command) -> McpStdio {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let (tx, lines) = channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let kept = Arc::clone(&stderr);
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                eprintln!("hands mcp: {line}");
                let mut kept = kept.lock().unwrap();
                kept.push_str(&line);
                kept.push('\n');
            }
        });
        McpStdio {
            child,
            stdin,
            lines,
            stderr,
            next_id: 0,
        }
    }

    /// Sends one JSON-RPC message.
    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and waits (at most `timeout`) for its answer.
    pub fn request(&mut self, method: &str, params: Value, timeout: Duration) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|e| {
                panic!(
                    "no answer to {method} within {timeout:?}: {e}; the server said:\n{}",
                    self.stderr()
                )
            });
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// The MCP handshake (`initialize`, then `notifications/initialized`); the answer.
    pub fn initialize(&mut self, client: &str) -> Value {
        let answer = self.request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": client, "version": "0"},
            }),
            Duration::from_secs(10),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// Calls a tool (waiting up to 2 minutes) and answers what it said, error or not.
    pub fn try_call(&mut self, name: &str, arguments: Value) -> ToolAnswer {
        let answer = self.request(
            "tools/call",
            json!({"name": name, "arguments": arguments}),
            Duration::from_secs(120),
        );
        let result = &answer["result"];
        let text = result["content"]
            .as_array()
            .unwrap_or_else(|| panic!("{answer}"))
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        ToolAnswer {
            is_error: result["isError"] == json!(true),
            text,
        }
    }

    /// Calls a tool: its text, checked not to be an error.
    pub fn call(&mut self, name: &str, arguments: Value) -> String {
        let answer = self.try_call(name, arguments);
        assert!(!answer.is_error, "{name}: {}", answer.text);
        answer.text
    }

    /// Whether the server is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// What the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Closes the server's stdin (as a client that goes away) and waits for it to end; its
    /// stderr, once the line `until` is in it or the server failed.
    pub fn close_and_wait(mut self, until: &str) -> (ExitStatus, String) {
        self.stdin = None;
        self.wait(until)
    }

    /// Waits for the server to end (a signal sent by the caller, say); its stderr, once the
    /// line `until` is in it or the server failed.
    pub fn wait(mut self, until: &str) -> (ExitStatus, String) {
        let status = self.child.wait().unwrap();
        // The stderr thread ends at the pipe's end; give it the lines it has.
        let mut err = String::new();
        for _ in 0..100 {
            err = self.stderr();
            if err.contains(until) || !status.success() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        (status, err)
    }

    /// The server's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }
}
