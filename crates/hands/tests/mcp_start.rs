//! `hands mcp --browser URL` starts at once and stays up (issue 21, item 5): it answers
//! `initialize` before any browser exists, opens Chromium (in its jail) on the first browser
//! call, and answers a start page that is down as a tool error on that call — naming the URL —
//! then opens it on a later call once it is served. Driven over stdio with JSON-RPC lines, as
//! any MCP client does.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

mod mcp_stdio;

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

use mcp_stdio::McpStdio;
use serde_json::json;

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

/// A `hands mcp --browser URL` on stdio, not yet initialized.
fn spawn(url: &str, sandbox: &str) -> McpStdio {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command
        .args(["mcp", "--browser", url, "--sandbox", sandbox])
        .env_remove("DISPLAY");
    McpStdio::spawn(command)
}

/// `browser_read_page`: (is_error, text).
fn read_page(server: &mut McpStdio) -> (bool, String) {
    let answer = server.try_call("browser_read_page", json!({"filter": "all"}));
    (answer.is_error, answer.text)
}

/// `initialize` is answered before any browser is started (< 2 s here, for a loaded machine;
/// the measured time is printed), and the first browser call opens the browser at the start page.
#[test]
fn the_server_answers_initialize_before_the_browser_opens() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/start.html", listener.local_addr().unwrap());
    serve(listener);

    let spawned = Instant::now();
    let mut server = spawn(&url, "jail");
    let init = server.initialize("mcp_start test");
    let initialized = spawned.elapsed();
    assert_eq!(init["result"]["serverInfo"]["name"], "hands", "{init}");

    let (is_error, text) = read_page(&mut server);
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
    let mut server = spawn(&url, sandbox);
    let init = server.initialize("mcp_start test");
    assert_eq!(init["result"]["serverInfo"]["name"], "hands", "{init}");

    let (is_error, text) = read_page(&mut server);
    eprintln!("the first call, with the start page down: {text}");
    assert!(is_error, "{text}");
    assert!(text.contains(&url), "{text}");
    assert!(text.contains("call again"), "{text}");
    assert!(server.alive(), "the server exited");

    serve(TcpListener::bind(("127.0.0.1", port)).unwrap());
    let (is_error, text) = read_page(&mut server);
    assert!(!is_error, "{text}");
    assert!(text.contains("The lamp was lit at dusk."), "{text}");
    assert!(server.alive());
}
