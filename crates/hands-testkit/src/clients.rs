//! Real X clients for tests, built from C sources with the system compiler: an Xlib client that
//! reads keys as xev does, and a GTK 3 client with a text view. Tests assert what each really
//! received, as read back from the program itself.
//!
//! The Xlib client needs `gcc` and `libx11-dev`; the GTK client needs only the GTK runtime
//! (mousepad's dependencies): it declares the few functions it calls.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash as _, Hasher as _};
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use hands_core::input::keysym;
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{ClientMessageEvent, ConnectionExt as _, EventMask, Window};
use x11rb::rust_connection::RustConnection;

const XLIB_SOURCE: &str = include_str!("../clients/xlib_keys.c");
const GTK_SOURCE: &str = include_str!("../clients/gtk_text.c");
/// How long a client may take to show its window.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// How long an answer may take on a loaded machine.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a test client could not be built, started or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// Compiling the client failed.
    #[error("building {name} failed (is gcc with libx11-dev installed?): {why}")]
    Build {
        /// The client.
        name: &'static str,
        /// The compiler's complaint.
        why: String,
    },
    /// Starting or talking to the program failed.
    #[error("{name}: {why}")]
    Io {
        /// The client.
        name: &'static str,
        /// What went wrong.
        why: String,
    },
    /// The program did not answer in time.
    #[error("{name} did not answer within {timeout:?}: {what}")]
    Timeout {
        /// The client.
        name: &'static str,
        /// How long was waited.
        timeout: Duration,
        /// What was awaited.
        what: String,
    },
}

fn io(name: &'static str) -> impl Fn(std::io::Error) -> ClientError {
    move |e| ClientError::Io {
        name,
        why: e.to_string(),
    }
}

/// Compiles `source` once per source text (cached in the temporary directory) and returns the
/// executable.
fn build(name: &'static str, source: &str, libs: &[&str]) -> Result<PathBuf, ClientError> {
    let mut hasher = DefaultHasher::new();
    source.hash(&mut hasher);
    libs.hash(&mut hasher);
    let dir = std::env::temp_dir().join("hands-testkit-clients");
    std::fs::create_dir_all(&dir).map_err(io(name))?;
    let exe = dir.join(format!("{name}-{:016x}", hasher.finish()));
    if exe.exists() {
        return Ok(exe);
    }
    // Build beside the final name and rename, so concurrent tests never run a partial file.
    let unique = format!("{}.{}", std::process::id(), next_id());
    let src = dir.join(format!("{name}-{unique}.c"));
    let tmp = dir.join(format!("{name}-{unique}.out"));
    std::fs::write(&src, source).map_err(io(name))?;
    let output = Command::new("gcc")
        .args(["-O1", "-o"])
        .arg(&tmp)
        .arg(&src)
        .args(libs)
        .output()
        .map_err(|e| ClientError::Build {
            name,
            why: e.to_string(),
        })?;
    let _ = std::fs::remove_file(&src);
    if !output.status.success() {
        return Err(ClientError::Build {
            name,
            why: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    std::fs::rename(&tmp, &exe).map_err(io(name))?;
    Ok(exe)
}

fn next_id() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Lines a child writes, gathered by a thread so the child never blocks on a full pipe.
struct Lines {
    lines: Mutex<(Vec<String>, bool)>,
    changed: Condvar,
}

impl Lines {
    fn spawn(name: &'static str, stdout: impl std::io::Read + Send + 'static) -> Arc<Lines> {
        let lines = Arc::new(Lines {
            lines: Mutex::new((Vec::new(), false)),
            changed: Condvar::new(),
        });
        let shared = Arc::clone(&lines);
        let _ = std::thread::Builder::new()
            .name(format!("hands-testkit {name} output"))
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                loop {
                    let mut line = String::new();
                    match reader.read_line(&mut line) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            // A `T <n>` header is followed by n bytes of text and a newline.
                            if let Some(n) = line
                                .strip_prefix("T ")
                                .and_then(|n| n.trim().parse::<usize>().ok())
                            {
                                let mut text = vec![0u8; n + 1];
                                if reader.read_exact(&mut text).is_err() {
                                    break;
                                }
                                text.pop();
                                line = format!("T {}", String::from_utf8_lossy(&text));
                            }
                            let mut guard = shared.lines.lock().unwrap_or_else(|e| e.into_inner());
                            guard.0.push(line.trim_end_matches('\n').to_owned());
                            drop(guard);
                            shared.changed.notify_all();
                        }
                    }
                }
                shared.lines.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
                shared.changed.notify_all();
            });
        lines
    }

    /// Waits until `find` picks something out of the lines from `from` on.
    fn wait<T>(
        &self,
        name: &'static str,
        what: &str,
        from: usize,
        timeout: Duration,
        find: impl Fn(&[String]) -> Option<T>,
    ) -> Result<T, ClientError> {
        let deadline = Instant::now() + timeout;
        let mut guard = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(found) = find(guard.0.get(from..).unwrap_or_default()) {
                return Ok(found);
            }
            let now = Instant::now();
            if guard.1 || now >= deadline {
                return Err(ClientError::Timeout {
                    name,
                    timeout,
                    what: format!(
                        "{what} ({}; last lines: {:?})",
                        if guard.1 {
                            "it exited"
                        } else {
                            "still running"
                        },
                        guard.0.iter().rev().take(3).collect::<Vec<_>>()
                    ),
                });
            }
            guard = self
                .changed
                .wait_timeout(guard, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn len(&self) -> usize {
        self.lines.lock().unwrap_or_else(|e| e.into_inner()).0.len()
    }

    fn snapshot(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .clone()
    }
}

fn spawn(
    name: &'static str,
    exe: &Path,
    display: &str,
) -> Result<(Child, Arc<Lines>, Window), ClientError> {
    let mut child = Command::new(exe)
        .env("DISPLAY", display)
        .env("LANG", "C.UTF-8")
        .env("LC_ALL", "C.UTF-8")
        // GTK's own input method, not an IM server that may not be there.
        .env("GTK_IM_MODULE", "gtk-im-context-simple")
        .env_remove("XMODIFIERS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(io(name))?;
    let stdout = child.stdout.take().ok_or(ClientError::Io {
        name,
        why: "no stdout".into(),
    })?;
    let lines = Lines::spawn(name, stdout);
    let window = lines.wait(name, "its window", 0, READY_TIMEOUT, |lines| {
        lines.iter().find_map(|l| {
            l.strip_prefix("R ")
                .and_then(|w| w.trim().parse::<u32>().ok())
        })
    });
    match window {
        Ok(window) => Ok((child, lines, window)),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(e)
        }
    }
}

/// One key press as the Xlib client read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XlibPress {
    /// The keycode.
    pub keycode: u8,
    /// The event's state (modifiers before the press).
    pub state: u16,
    /// The keysym `XLookupString` gave.
    pub keysym: u32,
    /// The key's level-1 keysym in the event's group.
    pub base: u32,
}

/// A plain Xlib client (no `_NET_WM_PING`) that records the keys it receives, translated by
/// `XLookupString` with Xlib's XKB support, as xev prints them.
pub struct XlibKeys {
    child: Child,
    lines: Arc<Lines>,
    window: Window,
    conn: RustConnection,
    sync_atom: u32,
    next_token: u32,
    /// Lines before this index are forgotten.
    start: usize,
}

impl std::fmt::Debug for XlibKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XlibKeys")
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl XlibKeys {
    /// Builds (once) and starts the client on `display`; returns once its window has the focus.
    pub fn start(display: &str) -> Result<XlibKeys, ClientError> {
        const NAME: &str = "xlib_keys";
        let exe = build(NAME, XLIB_SOURCE, &["-lX11"])?;
        let (child, lines, window) = spawn(NAME, &exe, display)?;
        let (conn, _) = x11rb::connect(Some(display)).map_err(|e| ClientError::Io {
            name: NAME,
            why: e.to_string(),
        })?;
        let sync_atom = conn
            .intern_atom(false, b"HANDS_TESTKIT_SYNC")
            .map_err(|e| x_error(NAME, e))?
            .reply()
            .map_err(|e| x_error(NAME, e))?
            .atom;
        let start = lines.len();
        Ok(XlibKeys {
            child,
            lines,
            window,
            conn,
            sync_atom,
            next_token: 1,
            start,
        })
    }

    /// The client's window.
    pub fn window(&self) -> Window {
        self.window
    }

    /// The client's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Gives the client the input focus.
    pub fn focus(&self) -> Result<(), ClientError> {
        focus(&self.conn, self.window, "xlib_keys")
    }

    /// Waits until the client has written down every event the server sent it before this
    /// call, and returns its key presses since the last [`XlibKeys::clear`].
    pub fn sync(&mut self) -> Result<Vec<XlibPress>, ClientError> {
        const NAME: &str = "xlib_keys";
        let token = self.next_token;
        self.next_token += 1;
        let message = ClientMessageEvent::new(32, self.window, self.sync_atom, [token, 0, 0, 0, 0]);
        self.conn
            .send_event(false, self.window, EventMask::NO_EVENT, message)
            .map_err(|e| x_error(NAME, e))?;
        self.conn.flush().map_err(|e| x_error(NAME, e))?;
        let want = format!("S {token}");
        self.lines
            .wait(NAME, &want, self.start, ANSWER_TIMEOUT, |lines| {
                lines.contains(&want).then_some(())
            })?;
        Ok(self.presses())
    }

    /// The key presses recorded so far (without waiting; see [`XlibKeys::sync`]).
    pub fn presses(&self) -> Vec<XlibPress> {
        self.lines.snapshot()[self.start..]
            .iter()
            .filter_map(|l| parse_press(l))
            .collect()
    }

    /// The text the recorded presses type.
    pub fn typed_text(&self) -> String {
        self.presses()
            .iter()
            .filter_map(|p| keysym::to_char(p.keysym))
            .collect()
    }

    /// How many keyboard MappingNotify events the client received since the last clear.
    pub fn n_mapping_notifies(&self) -> usize {
        self.lines.snapshot()[self.start..]
            .iter()
            .filter(|l| l.starts_with("M "))
            .count()
    }

    /// Forgets everything recorded up to now.
    pub fn clear(&mut self) -> Result<(), ClientError> {
        self.sync()?;
        self.start = self.lines.len();
        Ok(())
    }
}

impl Drop for XlibKeys {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn parse_press(line: &str) -> Option<XlibPress> {
    let mut parts = line.strip_prefix("K ")?.split_whitespace();
    let keycode = parts.next()?.parse().ok()?;
    let state = parts.next()?.parse().ok()?;
    let keysym = u32::from_str_radix(parts.next()?, 16).ok()?;
    let base = u32::from_str_radix(parts.next()?, 16).ok()?;
    Some(XlibPress {
        keycode,
        state,
        keysym,
        base,
    })
}

fn x_error(name: &'static str, e: impl std::fmt::Display) -> ClientError {
    ClientError::Io {
        name,
        why: e.to_string(),
    }
}

fn focus(conn: &RustConnection, window: Window, name: &'static str) -> Result<(), ClientError> {
    conn.set_input_focus(
        x11rb::protocol::xproto::InputFocus::PARENT,
        window,
        x11rb::CURRENT_TIME,
    )
    .map_err(|e| x_error(name, e))?;
    conn.get_input_focus()
        .map_err(|e| x_error(name, e))?
        .reply()
        .map_err(|e| x_error(name, e))?;
    Ok(())
}

/// A GTK 3 client: one window holding a text view with the focus. What it received is read
/// back as the view's text.
pub struct GtkText {
    child: Child,
    stdin: ChildStdin,
    lines: Arc<Lines>,
    window: Window,
    conn: RustConnection,
}

impl std::fmt::Debug for GtkText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GtkText")
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl GtkText {
    /// Builds (once) and starts the client on `display`; returns once its window has the focus.
    pub fn start(display: &str) -> Result<GtkText, ClientError> {
        const NAME: &str = "gtk_text";
        let exe = build(
            NAME,
            GTK_SOURCE,
            &[
                "-l:libgtk-3.so.0",
                "-l:libgdk-3.so.0",
                "-l:libgobject-2.0.so.0",
                "-l:libglib-2.0.so.0",
                "-lX11",
            ],
        )?;
        let (mut child, lines, window) = spawn(NAME, &exe, display)?;
        let stdin = child.stdin.take().ok_or(ClientError::Io {
            name: NAME,
            why: "no stdin".into(),
        })?;
        let (conn, _) = x11rb::connect(Some(display)).map_err(|e| x_error(NAME, e))?;
        Ok(GtkText {
            child,
            stdin,
            lines,
            window,
            conn,
        })
    }

    /// The client's window.
    pub fn window(&self) -> Window {
        self.window
    }

    /// The client's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Gives the client the input focus.
    pub fn focus(&self) -> Result<(), ClientError> {
        focus(&self.conn, self.window, "gtk_text")
    }

    /// The text view's text now. GTK handles its stdin between X events: keys still queued are
    /// not in it yet (see [`GtkText::wait_for_text`]).
    pub fn text(&mut self) -> Result<String, ClientError> {
        const NAME: &str = "gtk_text";
        let from = self.lines.len();
        self.stdin.write_all(b"text\n").map_err(io(NAME))?;
        self.stdin.flush().map_err(io(NAME))?;
        self.lines
            .wait(NAME, "its text", from, ANSWER_TIMEOUT, |lines| {
                lines
                    .iter()
                    .find_map(|l| l.strip_prefix("T ").map(str::to_owned))
            })
    }

    /// Reads the text until it holds `n_chars` characters and stays the same for a moment (at
    /// most `timeout`), and returns it.
    pub fn wait_for_text(
        &mut self,
        n_chars: usize,
        timeout: Duration,
    ) -> Result<String, ClientError> {
        let deadline = Instant::now() + timeout;
        let mut last = self.text()?;
        loop {
            std::thread::sleep(Duration::from_millis(50));
            let text = self.text()?;
            if text.chars().count() >= n_chars && text == last {
                return Ok(text);
            }
            if Instant::now() >= deadline {
                return Ok(text);
            }
            last = text;
        }
    }

    /// Empties the text view.
    pub fn clear(&mut self) -> Result<(), ClientError> {
        const NAME: &str = "gtk_text";
        let from = self.lines.len();
        self.stdin.write_all(b"clear\n").map_err(io(NAME))?;
        self.stdin.flush().map_err(io(NAME))?;
        self.lines
            .wait(NAME, "clear", from, ANSWER_TIMEOUT, |lines| {
                lines.iter().any(|l| l == "C").then_some(())
            })
    }
}

impl Drop for GtkText {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Another process keeping every core busy (one shell loop per core), killed on drop: typing
/// must stay exact when clients are starved.
#[derive(Debug)]
pub struct CpuLoad {
    children: Vec<Child>,
}

impl CpuLoad {
    /// Starts one busy process per available core.
    pub fn start() -> Result<CpuLoad, ClientError> {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get());
        let mut children = Vec::with_capacity(n);
        for _ in 0..n {
            let child = Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(io("the load generator"))?;
            children.push(child);
        }
        Ok(CpuLoad { children })
    }

    /// How many busy processes run.
    pub fn n_processes(&self) -> usize {
        self.children.len()
    }
}

impl Drop for CpuLoad {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The five keyboard layouts typing is checked under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// US English.
    Us,
    /// German (QWERTZ, AltGr for `@ { } [ ] \ | ~ €`, dead keys).
    De,
    /// French (AZERTY, digits with Shift).
    Fr,
    /// Russian (Cyrillic only: no Latin letter on any key).
    Ru,
    /// US Dvorak.
    Dvorak,
}

impl Layout {
    /// All five.
    pub const ALL: [Layout; 5] = [
        Layout::Us,
        Layout::De,
        Layout::Fr,
        Layout::Ru,
        Layout::Dvorak,
    ];

    /// The short name.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Us => "us",
            Layout::De => "de",
            Layout::Fr => "fr",
            Layout::Ru => "ru",
            Layout::Dvorak => "dvorak",
        }
    }

    /// Loads the layout on `display` with `setxkbmap` (a new keymap: every client is told).
    pub fn apply(self, display: &str) -> Result<(), ClientError> {
        let (layout, variant) = match self {
            Layout::Dvorak => ("us", "dvorak"),
            other => (other.name(), ""),
        };
        let output = Command::new("setxkbmap")
            .args(["-display", display, "-layout", layout, "-variant", variant])
            .output()
            .map_err(io("setxkbmap"))?;
        if !output.status.success() {
            return Err(ClientError::Io {
                name: "setxkbmap",
                why: String::from_utf8_lossy(&output.stderr).into_owned(),
            });
        }
        Ok(())
    }
}
