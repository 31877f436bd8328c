//! `hands mcp`'s `browser_read_page` sends only what changed since the tab's last read (issue 21,
//! item 3): after the first read of a document, a re-read is the elements added, removed and
//! changed and the lines of text that changed, with every ref the first read gave still naming
//! its element — also across a list rendered anew — at most a fifth of a whole read after one
//! change; `full: true` and a new document give the whole read; an action that changed no tab
//! answers in at most 8 tokens. Driven over stdio with JSON-RPC lines against real Chromium.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

mod mcp_stdio;

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::process::Command;

use hands_core::browser::changes::{CHANGES_HEADER, NO_CHANGES};
use hands_mcp::budget::text_tokens;
use hands_mcp::consent::{ApprovePolicy, Decider};
use mcp_stdio::McpStdio;
use serde_json::json;

/// A task list re-rendered whole on every change (every element replaced, as a framework
/// without keys does), beside a long text.
fn tasks_page() -> String {
    let prose: String = (1..=40)
        .map(|i| format!("<p>Note {i}: the keeper logged the lamp, the weather and the ships.</p>"))
        .collect();
    let items: String = (1..=30)
        .map(|i| format!("'Task {i:02}'"))
        .collect::<Vec<_>>()
        .join(",");
    format!(
        r#"<!doctype html><title>Tasks</title><h1>Tasks</h1>
<label>New task <input id=draft></label><button onclick="add()">Add task</button>
<div id=app></div>{prose}
<script>
let tasks = [{items}].map(t => ({{t, done: false}}));
function render() {{
  app.innerHTML = '<ul>' + tasks.map(x =>
    `<li><label><input type=checkbox data-t="${{x.t}}" ${{x.done ? 'checked' : ''}}> Done: ${{x.t}}</label>` +
    ` <button data-del="${{x.t}}">Delete ${{x.t}}</button></li>`).join('') + '</ul>' +
    `<p>${{tasks.filter(x => !x.done).length}} left</p>`;
}}
app.addEventListener('change', e => {{
  tasks.find(x => x.t === e.target.dataset.t).done = e.target.checked; render();
}});
app.addEventListener('click', e => {{
  const d = e.target.dataset && e.target.dataset.del;
  if (d) {{ tasks = tasks.filter(x => x.t !== d); render(); }}
}});
function add() {{ tasks.push({{t: draft.value, done: false}}); draft.value = ''; render(); }}
render();
</script>"#
    )
}

const OTHER: &str = "<!doctype html><title>Other</title><p>Another page.</p><button>Go</button>";

/// Serves the tasks page at `/` and `OTHER` at `/other`.
fn serve(listener: TcpListener) {
    let tasks = tasks_page();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]);
            let body = if head.starts_with("GET /other") {
                OTHER
            } else {
                tasks.as_str()
            };
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
}

/// A `hands mcp` on stdio at `url`, allowed `origin`, initialized.
fn spawn(url: &str, origin: &str) -> McpStdio {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command
        .args(["mcp", "--browser", url, "--allow-origin", origin])
        .args(["--approve", "all", "--sandbox", "none"])
        .env_remove("DISPLAY");
    let mut server = McpStdio::spawn(command);
    server.initialize("mcp_reads test");
    server
}

/// The ref of the element line naming `label` (`[e12] checkbox [ ] Done: Task 03`).
fn ref_of(text: &str, label: &str) -> String {
    text.lines()
        .find(|l| l.ends_with(label) && l.contains('['))
        .and_then(|l| l.split_once('[')?.1.split_once(']'))
        .map(|(r, _)| r.to_owned())
        .unwrap_or_else(|| panic!("no {label:?} in\n{text}"))
}

/// Whether a read's answer is what changed (a header when page text changed, else the first
/// element line's mark) rather than a whole read (whose element lines start with their ref).
fn is_changes(text: &str) -> bool {
    text.starts_with(CHANGES_HEADER) || ["*[", "+[", "-["].iter().any(|m| text.starts_with(m))
}

#[test]
fn a_re_read_sends_what_changed_with_the_same_refs() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    serve(listener);
    let mut server = spawn(&format!("{origin}/"), &origin);

    for filter in ["all", "interactive"] {
        let args = json!({ "filter": filter });
        let full = server.call("browser_read_page", args.clone());
        assert!(!is_changes(&full), "{full}");
        assert!(full.contains("Done: Task 03"), "{full}");
        assert_eq!(
            full.contains("the keeper logged the lamp"),
            filter == "all",
            "{full}"
        );
        let again = server.call("browser_read_page", args.clone());
        assert_eq!(again, NO_CHANGES);

        // One change re-renders the whole list: every element of it is replaced.
        let check = ref_of(&full, "Done: Task 03");
        let delete = ref_of(&full, "Delete Task 05");
        let kept = ref_of(&full, "Delete Task 20");
        let answer = server.call("browser_click", json!({ "target": check }));
        // The server's policy approval is said on its first action only.
        let note = format!(" ({})", Decider::Policy(ApprovePolicy::All).phrase(true));
        let answer = answer.replace(&note, "");
        assert!(text_tokens(&answer) <= 8, "{answer}");
        let changes = server.call("browser_read_page", args.clone());
        println!(
            "{filter}: whole read {} tokens, re-read after one change {} tokens:\n{changes}",
            text_tokens(&full),
            text_tokens(&changes)
        );
        assert!(is_changes(&changes), "{changes}");
        // Page text changed too: a header says the answer is what changed.
        assert_eq!(
            changes.starts_with(CHANGES_HEADER),
            filter == "all",
            "{changes}"
        );
        assert!(changes.contains(&format!("*[{check}] [x]")), "{changes}");
        assert!(5 * text_tokens(&changes) <= text_tokens(&full), "{changes}");
        assert_eq!(changes.contains("+ 29 left"), filter == "all", "{changes}");

        // The refs the first read gave still act on their elements after the re-render.
        server.call("browser_click", json!({"target": delete}));
        let changes = server.call("browser_read_page", args.clone());
        assert!(
            changes.contains(&format!("-[{delete}] Delete Task 05")),
            "{changes}"
        );
        assert!(!changes.contains('+') || filter == "all", "{changes}");
        server.call("browser_click", json!({"target": kept}));
        let changes = server.call("browser_read_page", args.clone());
        assert!(
            changes.contains(&format!("-[{kept}] Delete Task 20")),
            "{changes}"
        );

        // `full: true` sends the whole read.
        let whole = server.call("browser_read_page", json!({"filter": filter, "full": true}));
        assert!(!is_changes(&whole), "{whole}");
        assert!(
            whole.contains(&format!("[{check}] checkbox [x] Done: Task 03")),
            "{whole}"
        );
        server.call(
            "browser_navigate",
            json!({"url": format!("{origin}/?{filter}")}),
        );
    }

    // A new document gets the whole read.
    server.call("browser_read_page", json!({"filter": "all"}));
    server.call(
        "browser_navigate",
        json!({"url": format!("{origin}/other")}),
    );
    let other = server.call("browser_read_page", json!({"filter": "all"}));
    assert!(
        other.contains("Another page.") && other.contains("button Go"),
        "{other}"
    );
    assert!(!is_changes(&other), "{other}");
}
