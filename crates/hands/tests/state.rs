//! Saved sign-ins end to end (issue 22): `hands run --browser … --state NAME` against the
//! stand-in model and a local sign-in page in real Chromium. Run 1 signs in and saves the state;
//! run 2 loads it and is signed in without the password field being read or filled; a wrong
//! key stops run 2 before anything starts; `hands state list|delete`.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

mod mcp_stdio;

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use hands_sim::policy::{text, toolset_use};
use hands_sim::{SimConfig, SimServer, Turn};
use mcp_stdio::McpStdio;
use serde_json::{Value, json};

const KEY: &str = "correct horse battery staple";
const SESSION: &str = "opaque-session-42";
const IDB_TOKEN: &str = "idb-only-token-9";

const SIGN_IN_PAGE: &str = r#"<!doctype html><title>Shop</title><p id=out>Please sign in.</p>
<form id=f><label>User <input id=user name=user></label>
<label>Password <input id=pw type=password name=pw></label><button>Sign in</button></form>
<script>
const f = document.getElementById('f');
if (document.cookie.includes('signed_in=yes') && localStorage.getItem('user')) {
  f.remove();
  document.getElementById('out').textContent = 'Welcome back, ' + localStorage.getItem('user');
} else {
  f.onsubmit = (e) => {
    e.preventDefault();
    if (document.getElementById('pw').value !== 'hunter22') return;
    document.cookie = 'signed_in=yes; max-age=3600; path=/';
    localStorage.setItem('user', document.getElementById('user').value);
    // Signed in once the server's session cookie has arrived.
    fetch('/login', { method: 'POST' }).then(() => {
      document.getElementById('out').textContent = 'Signed in.';
    });
  };
}
</script>"#;

/// A local sign-in site: `/` the page, `/login` sets the HttpOnly session cookie. Records the
/// paths it served.
/// The second run read the page signed in (its first read, answered in the second request), with
/// no password field, and never asked for `/login`.
fn assert_signed_in_at_once(requests: &[hands_sim::RecordedRequest], paths: &Mutex<Vec<String>>) {
    let read = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .to_string();
    assert!(read.contains("Welcome back, ada"), "{read}");
    assert!(!read.contains("Password"), "{read}");
    assert!(!paths.lock().unwrap().iter().any(|p| p == "/login"));
}

fn site() -> (String, Arc<Mutex<Vec<String>>>) {
    site_with(SIGN_IN_PAGE)
}

/// A local sign-in site serving `page` at `/`.
fn site_with(page: &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/",
        listener.local_addr().unwrap().port()
    );
    let paths = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&paths);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            // A connection of its own thread: an idle preconnect holds up no other.
            let seen = Arc::clone(&seen);
            std::thread::spawn(move || answer(stream, &seen, page));
        }
    });
    (url, paths)
}

/// Answers one request of the sign-in site.
fn answer(mut stream: std::net::TcpStream, seen: &Mutex<Vec<String>>, page: &str) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
        line.clear();
    }
    let path = first.split(' ').nth(1).unwrap_or("/").to_owned();
    seen.lock().unwrap().push(path.clone());
    let (kind, extra, body) = match path.as_str() {
        "/" => ("text/html", String::new(), page),
        "/login" if page == IDB_SIGN_IN_PAGE => ("text/plain", String::new(), IDB_TOKEN),
        "/login" => (
            "text/plain",
            format!("Set-Cookie: sid={SESSION}; Max-Age=3600; Path=/; HttpOnly\r\n"),
            "ok",
        ),
        _ => ("text/plain", String::new(), ""),
    };
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

fn hands(states: &std::path::Path, key: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hands"));
    command
        .env("HANDS_STATE_DIR", states)
        .env("HANDS_STATE_KEY", key)
        .stdin(std::process::Stdio::null());
    command
}

fn run(
    states: &std::path::Path,
    key: &str,
    url: &str,
    sim: &SimServer,
    out: &std::path::Path,
) -> Output {
    hands(states, key)
        .args([
            "run",
            "--browser",
            url,
            "--approve",
            "all",
            "--state",
            "shop",
        ])
        .args(["--browser-extra-members", "javascript_exec"])
        .args(["--task", "Open the shop.", "--out"])
        .arg(out)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", sim.base_url())
        .output()
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_saved_state_signs_the_second_run_in_without_the_password() {
    let (url, paths) = site();
    let dir = tempfile::tempdir().unwrap();
    let states = dir.path().join("states");

    // Run 1: the model signs in (a scripted stand-in: it fills the form with javascript_exec).
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        match n {
            1 => Turn::Blocks(vec![toolset_use(
                "browser",
                "javascript_exec",
                json!({"text": "document.getElementById('user').value = 'ada'; \
                        document.getElementById('pw').value = 'hunter22'; \
                        document.getElementById('f').requestSubmit(); \
                        new Promise((done) => { const out = document.getElementById('out'); \
                        const t = setInterval(() => { if (out.textContent === 'Signed in.') \
                        { clearInterval(t); done('signed in'); } }, 10); })"}),
            )]),
            _ => Turn::Blocks(vec![text("Signed in.")]),
        }
    }))
    .unwrap();
    let output = run(&states, KEY, &url, &sim, &dir.path().join("run1"));
    assert!(output.status.success(), "{}", stderr(&output));
    // The script answered once the session cookie had arrived: the save cannot miss it.
    assert!(
        sim.requests()[1].body.to_string().contains("signed in"),
        "{}",
        sim.requests()[1].body
    );
    assert!(
        stderr(&output).contains("state shop saved: 2 cookies"),
        "{}",
        stderr(&output)
    );
    assert!(paths.lock().unwrap().iter().any(|p| p == "/login"));
    let file = std::fs::read(states.join("shop.state")).unwrap();
    let raw = String::from_utf8_lossy(&file);
    assert!(
        !raw.contains(SESSION) && !raw.contains("ada"),
        "the state is not sealed"
    );

    let list = hands(&states, KEY)
        .args(["state", "list"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&list.stdout).starts_with("shop\t"));

    // A wrong key stops the run before the model is asked anything.
    let sim = SimServer::start(SimConfig::with_policy(|_: &Value| Turn::text("unused"))).unwrap();
    let output = run(
        &states,
        "not the passphrase",
        &url,
        &sim,
        &dir.path().join("run-wrong"),
    );
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("wrong state key"),
        "{}",
        stderr(&output)
    );
    assert!(sim.requests().is_empty());

    // Run 2: loads the state and is signed in; the password field is never there to read.
    paths.lock().unwrap().clear();
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        match n {
            1 => Turn::Blocks(vec![toolset_use("browser", "read_page", json!({}))]),
            _ => Turn::Blocks(vec![text("You are signed in.")]),
        }
    }))
    .unwrap();
    let output = run(&states, KEY, &url, &sim, &dir.path().join("run2"));
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output)
            .contains("2 cookies, localStorage of 1 origins, 0 IndexedDB databases loaded"),
        "{}",
        stderr(&output)
    );
    let requests = sim.requests();
    assert_signed_in_at_once(&requests, &paths);
    // The model never saw the saved values.
    for request in &requests {
        assert!(!request.body.to_string().contains(SESSION));
    }

    let deleted = hands(&states, KEY)
        .args(["state", "delete", "shop"])
        .output()
        .unwrap();
    assert!(deleted.status.success(), "{}", stderr(&deleted));
    assert!(!states.join("shop.state").exists());
    let again = hands(&states, KEY)
        .args(["state", "delete", "shop"])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("no state named"),
        "{}",
        stderr(&again)
    );
}

/// `hands mcp --browser URL --state shop` on stdio, its states kept in `states`.
fn mcp_server(states: &std::path::Path, key: &str, url: &str) -> McpStdio {
    let mut command = hands(states, key);
    command
        .args([
            "mcp",
            "--browser",
            url,
            "--approve",
            "all",
            "--state",
            "shop",
        ])
        .env_remove("DISPLAY");
    McpStdio::spawn(command)
}

/// The ref of the compact read's line `[ref] role label …`.
fn ref_of(read: &str, role: &str, label: &str) -> String {
    read.lines()
        .find_map(|l| {
            let (reference, rest) = l.strip_prefix('[')?.split_once("] ")?;
            let rest = rest.strip_prefix(role)?.strip_prefix(' ')?;
            let named = [label.to_owned(), format!("\"{label}\"")]
                .iter()
                .any(|name| rest == name || rest.starts_with(&format!("{name} ")));
            named.then(|| reference.to_owned())
        })
        .unwrap_or_else(|| panic!("no {role} {label} in {read}"))
}

#[test]
fn hands_mcp_keeps_a_sign_in_across_server_starts() {
    let (url, paths) = site();
    let dir = tempfile::tempdir().unwrap();
    let states = dir.path().join("states");

    // Server 1: the client signs in with the form; the state is saved when stdin closes.
    let mut server = mcp_server(&states, KEY, &url);
    server.initialize("state test");
    let read = server.call("browser_read_page", json!({"filter": "interactive"}));
    let user = ref_of(&read, "textbox", "User");
    let pw = ref_of(&read, "textbox", "Password");
    let go = ref_of(&read, "button", "Sign in");
    server.call("browser_type", json!({"target": user, "text": "ada"}));
    server.call("browser_type", json!({"target": pw, "text": "hunter22"}));
    server.call("browser_click", json!({"target": go}));
    server.call(
        "browser_wait_for",
        json!({"text": "Signed in.", "timeout_ms": 20000}),
    );
    assert!(paths.lock().unwrap().iter().any(|p| p == "/login"));
    let (status, err) = server.close_and_wait("state shop saved");
    assert!(status.success(), "{err}");
    assert!(
        err.contains("hands mcp: state shop saved: 2 cookies"),
        "{err}"
    );
    let file = std::fs::read(states.join("shop.state")).unwrap();
    let raw = String::from_utf8_lossy(&file);
    assert!(!raw.contains(SESSION) && !raw.contains("ada"));

    // A wrong key: an exit with a clear error before anything is served.
    let wrong = hands(&states, "not the passphrase")
        .args(["mcp", "--browser", &url, "--state", "shop"])
        .output()
        .unwrap();
    assert!(!wrong.status.success());
    assert!(
        stderr(&wrong).contains("wrong state key"),
        "{}",
        stderr(&wrong)
    );
    assert!(wrong.stdout.is_empty());

    // Server 2: signed in on its first page, with no password field; stopped by SIGTERM, it
    // saves again.
    paths.lock().unwrap().clear();
    let mut server = mcp_server(&states, KEY, &url);
    server.initialize("state test");
    let read = server.call("browser_read_page", json!({"filter": "all"}));
    assert!(read.contains("Welcome back, ada"), "{read}");
    assert!(!read.contains("Password"), "{read}");
    assert!(!read.contains(SESSION), "{read}");
    assert!(!paths.lock().unwrap().iter().any(|p| p == "/login"));
    let killed = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let (status, err) = server.wait("state shop saved");
    assert!(status.success(), "{err}");
    assert!(
        err.contains("2 cookies, localStorage of 1 origins, 0 IndexedDB databases loaded"),
        "{err}"
    );
    assert!(
        err.contains("hands mcp: state shop saved: 2 cookies"),
        "{err}"
    );
    assert!(!err.contains(SESSION));
}

/// A sign-in page that keeps its session token in IndexedDB only (no cookie, no localStorage),
/// read by its first inline script.
const IDB_SIGN_IN_PAGE: &str = r#"<!doctype html><title>Vault</title><p id=out>Loading.</p>
<form id=f><label>User <input id=user></label>
<label>Password <input id=pw type=password></label><button>Sign in</button></form>
<script>
const open = indexedDB.open('vault', 1);
open.onupgradeneeded = () => open.result.createObjectStore('session');
open.onsuccess = () => {
  const db = open.result;
  db.transaction('session').objectStore('session').get('me').onsuccess = (e) => {
    const me = e.target.result;
    if (me && me.token) {
      document.getElementById('f').remove();
      document.getElementById('out').textContent = 'Welcome back, ' + me.user;
      return;
    }
    document.getElementById('out').textContent = 'Please sign in.';
    document.getElementById('f').onsubmit = async (e) => {
      e.preventDefault();
      if (document.getElementById('pw').value !== 'hunter22') return;
      const token = await (await fetch('/login', { method: 'POST' })).text();
      const tx = db.transaction('session', 'readwrite');
      tx.objectStore('session').put({ user: document.getElementById('user').value, token,
        since: new Date() }, 'me');
      tx.oncomplete = () => { document.getElementById('out').textContent = 'Signed in.'; };
    };
  };
};
</script>"#;

#[test]
fn an_indexed_db_sign_in_is_kept_and_its_token_stays_sealed() {
    let (url, paths) = site_with(IDB_SIGN_IN_PAGE);
    let dir = tempfile::tempdir().unwrap();
    let states = dir.path().join("states");
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        match n {
            1 => Turn::Blocks(vec![toolset_use(
                "browser",
                "javascript_exec",
                json!({"text": "new Promise((done) => { const out = document.getElementById('out'); \
                        const t = setInterval(() => { if (out.textContent !== 'Please sign in.') return; \
                        clearInterval(t); document.getElementById('user').value = 'ada'; \
                        document.getElementById('pw').value = 'hunter22'; \
                        document.getElementById('f').requestSubmit(); \
                        const u = setInterval(() => { if (out.textContent === 'Signed in.') \
                        { clearInterval(u); done('signed in'); } }, 10); }, 10); })"}),
            )]),
            _ => Turn::Blocks(vec![text("Signed in.")]),
        }
    }))
    .unwrap();
    let run1 = dir.path().join("run1");
    let output = run(&states, KEY, &url, &sim, &run1);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        sim.requests()[1].body.to_string().contains("signed in"),
        "{}",
        sim.requests()[1].body
    );
    assert!(
        stderr(&output).contains(
            "state shop saved: 0 cookies, localStorage of 1 origins, 1 IndexedDB databases"
        ),
        "{}",
        stderr(&output)
    );

    // Run 2: signed in from IndexedDB alone; no password field, no login request.
    paths.lock().unwrap().clear();
    let mut n = 0;
    let sim = SimServer::start(SimConfig::with_policy(move |_: &Value| {
        n += 1;
        match n {
            1 => Turn::Blocks(vec![toolset_use("browser", "read_page", json!({}))]),
            _ => Turn::Blocks(vec![text("You are signed in.")]),
        }
    }))
    .unwrap();
    let run2 = dir.path().join("run2");
    let output = run(&states, KEY, &url, &sim, &run2);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("1 IndexedDB databases loaded"),
        "{}",
        stderr(&output)
    );
    let requests = sim.requests();
    assert_signed_in_at_once(&requests, &paths);
    // The token never reaches the model, the logs, the ledger or the file in plain text.
    for request in &requests {
        assert!(!request.body.to_string().contains(IDB_TOKEN));
    }
    let raw = std::fs::read(states.join("shop.state")).unwrap();
    assert!(!String::from_utf8_lossy(&raw).contains(IDB_TOKEN));
    let mut n_dom = 0;
    for dir in [&run1, &run2]
        .into_iter()
        .flat_map(|r| [r.clone(), r.join("dom")])
    {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes);
            assert!(!text.contains(IDB_TOKEN), "{}", path.display());
            // The DOM snapshots hold the page, never a script's source or a password value.
            if path.extension().is_some_and(|e| e == "html") {
                n_dom += 1;
                assert!(!text.contains("indexedDB.open"), "{text}");
                assert!(!text.contains("hunter22"), "{text}");
            }
        }
    }
    assert!(n_dom >= 2, "a DOM snapshot after each run's action");
    assert!(!stderr(&output).contains(IDB_TOKEN));
}
