//! Whether the X client that receives our input has processed it: the evidence a keymap needs
//! before rebinding a keycode a client may not have translated yet, and settling needs before
//! it looks for the screen change an action causes.
//!
//! Three kinds of evidence, strongest first:
//! - **Ping.** A client that lists `_NET_WM_PING` in `WM_PROTOCOLS` (GTK, Qt, Chromium, Firefox)
//!   answers a ping when its event loop reaches it, in order, so its answer proves every earlier
//!   event was handled (GTK translates a key event with the keymap it holds when it gets to it).
//! - **Idle.** Otherwise, for a client on this machine whose process X-Resource names: every
//!   thread of it and of the X server asleep, twice in a row. The server names pids in its own
//!   pid namespace (a jail's, issue 17): each is mapped to the host's through the launcher
//!   before `/proc` is read, and one the launcher does not know is not watched. A client with an event to handle
//!   is runnable; one asleep has handled them (unless it sleeps on something else with events
//!   still queued, e.g. blocked writing to a full pipe: the caller's quiet wait remains the
//!   fallback when this cannot be told).
//! - **Quiet.** Otherwise, input and screen quiet for a while (the caller's fallback).

use std::collections::HashMap;
use std::os::fd::AsFd as _;
use std::sync::Arc;

use hands_jail::Launcher;

use x11rb::connection::RequestConnection as _;
use x11rb::protocol::res::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    AtomEnum, ClientMessageEvent, ConnectionExt as _, EventMask, InputFocus, Window,
};
use x11rb::rust_connection::RustConnection;

use crate::X11Error;

/// Which window's client receives the input to be proven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// The window with the keyboard focus (the one under the pointer when focus follows it).
    Keyboard,
    /// The window under the pointer.
    Pointer,
}

/// What is known about the client behind a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Client {
    /// Its top-level window (the one with `WM_PROTOCOLS`, or the top-most found).
    pub window: Window,
    /// Whether it answers `_NET_WM_PING`.
    pub ping: bool,
    /// Its process's host pid, when it runs on this machine and the server says (the server
    /// names it in its own pid namespace; the launcher maps it to the host's).
    pub pid: Option<u32>,
}

#[derive(Debug, Clone, Copy)]
struct Atoms {
    wm_protocols: u32,
    net_wm_ping: u32,
    wm_state: u32,
}

/// Most windows remembered; the cache is cleared whenever top-level windows come and go.
const CACHE_LIMIT: usize = 64;
/// How deep to look under a top-level window (a window manager's frame) for the client's.
const SEARCH_DEPTH: usize = 3;

/// Finds the client behind the input and collects the evidence that it caught up.
#[derive(Debug)]
pub(crate) struct Catchup {
    root: Window,
    atoms: Atoms,
    has_res: bool,
    /// Maps the pids the server reports (its pid namespace) to host pids.
    launcher: Arc<dyn Launcher>,
    /// The X server's host pid.
    server_pid: Option<u32>,
    own_pid: u32,
    own_tid: u32,
    cache: HashMap<Window, Client>,
    next_token: u32,
    answered: u32,
}

impl Catchup {
    /// `server_host_pid`: the server's host pid when this process spawned it (else it is read
    /// from the socket's peer credentials).
    pub(crate) fn new(
        conn: &RustConnection,
        root: Window,
        launcher: Arc<dyn Launcher>,
        server_host_pid: Option<u32>,
    ) -> Result<Catchup, X11Error> {
        let intern = |name: &[u8]| -> Result<u32, X11Error> {
            Ok(conn.intern_atom(false, name)?.reply()?.atom)
        };
        let atoms = Atoms {
            wm_protocols: intern(b"WM_PROTOCOLS")?,
            net_wm_ping: intern(b"_NET_WM_PING")?,
            wm_state: intern(b"WM_STATE")?,
        };
        let has_res = conn
            .extension_information(res::X11_EXTENSION_NAME)?
            .is_some()
            && conn.res_query_version(1, 2)?.reply().is_ok();
        // The X server is the peer of our socket (none over TCP). The kernel gives the peer's
        // pid as this process's pid namespace sees it, even for a stream connected inside a jail
        // and passed out (checked: a server in a child pid namespace reads as its host pid; one
        // this namespace cannot see reads as 0), so it needs no mapping.
        let server_pid = server_host_pid.or_else(|| {
            rustix::net::sockopt::socket_peercred(conn.stream().as_fd())
                .ok()
                .map(|cred| cred.pid.as_raw_nonzero().get() as u32)
                .filter(|pid| *pid != 0)
        });
        Ok(Catchup {
            root,
            atoms,
            has_res,
            launcher,
            server_pid,
            own_pid: std::process::id(),
            own_tid: rustix::thread::gettid().as_raw_nonzero().get() as u32,
            cache: HashMap::new(),
            next_token: 1,
            answered: 0,
        })
    }

    /// Forgets what it knows about windows (top-level windows came or went).
    pub(crate) fn forget_windows(&mut self) {
        self.cache.clear();
    }

    /// The client that receives input aimed at `target` now, if any window does.
    pub(crate) fn client(
        &mut self,
        conn: &RustConnection,
        target: Target,
    ) -> Result<Option<Client>, X11Error> {
        let window = match target {
            Target::Keyboard => {
                let focus = conn.get_input_focus()?.reply()?.focus;
                if focus == u32::from(InputFocus::POINTER_ROOT) || focus == x11rb::NONE {
                    self.pointer_window(conn)?
                } else {
                    Some(focus)
                }
            }
            Target::Pointer => self.pointer_window(conn)?,
        };
        let Some(window) = window.filter(|w| *w != self.root) else {
            return Ok(None);
        };
        if let Some(client) = self.cache.get(&window) {
            return Ok(Some(*client));
        }
        let client = self.discover(conn, window)?;
        if self.cache.len() >= CACHE_LIMIT {
            self.cache.clear();
        }
        self.cache.insert(window, client);
        Ok(Some(client))
    }

    /// The deepest window under the pointer.
    fn pointer_window(&self, conn: &RustConnection) -> Result<Option<Window>, X11Error> {
        let mut window = self.root;
        for _ in 0..16 {
            let child = conn.query_pointer(window)?.reply()?.child;
            if child == x11rb::NONE {
                break;
            }
            window = child;
        }
        Ok((window != self.root).then_some(window))
    }

    fn protocols(&self, conn: &RustConnection, window: Window) -> Result<Vec<u32>, X11Error> {
        let reply = conn
            .get_property(
                false,
                window,
                self.atoms.wm_protocols,
                AtomEnum::ATOM,
                0,
                64,
            )?
            .reply();
        Ok(match reply {
            Ok(r) => r.value32().map(Iterator::collect).unwrap_or_default(),
            Err(_) => Vec::new(),
        })
    }

    fn has_property(
        &self,
        conn: &RustConnection,
        window: Window,
        atom: u32,
    ) -> Result<bool, X11Error> {
        Ok(conn
            .get_property(false, window, atom, AtomEnum::ANY, 0, 0)?
            .reply()
            .is_ok_and(|r| r.type_ != x11rb::NONE))
    }

    /// Walks up from `window` to its top-level window looking for the client window (one with
    /// `WM_PROTOCOLS` or `WM_STATE`), then down inside a window manager's frame if need be.
    fn discover(&self, conn: &RustConnection, window: Window) -> Result<Client, X11Error> {
        let mut found: Option<(Window, Vec<u32>)> = None;
        let mut current = window;
        let mut top = window;
        for _ in 0..32 {
            let protocols = self.protocols(conn, current)?;
            if found.is_none()
                && (!protocols.is_empty()
                    || self.has_property(conn, current, self.atoms.wm_state)?)
            {
                found = Some((current, protocols));
            }
            let Ok(tree) = conn.query_tree(current)?.reply() else {
                break;
            };
            top = current;
            if tree.parent == self.root || tree.parent == x11rb::NONE {
                break;
            }
            current = tree.parent;
        }
        if found.is_none() {
            found = self.search_down(conn, top, SEARCH_DEPTH)?;
        }
        let (client_window, protocols) = found.unwrap_or((top, Vec::new()));
        let pid = if self.has_res {
            self.pid_of(conn, client_window)?
        } else {
            None
        };
        Ok(Client {
            window: client_window,
            ping: protocols.contains(&self.atoms.net_wm_ping),
            pid,
        })
    }

    fn search_down(
        &self,
        conn: &RustConnection,
        window: Window,
        depth: usize,
    ) -> Result<Option<(Window, Vec<u32>)>, X11Error> {
        if depth == 0 {
            return Ok(None);
        }
        let Ok(tree) = conn.query_tree(window)?.reply() else {
            return Ok(None);
        };
        for &child in &tree.children {
            if self.has_property(conn, child, self.atoms.wm_state)? {
                return Ok(Some((child, self.protocols(conn, child)?)));
            }
        }
        for &child in &tree.children {
            if let Some(found) = self.search_down(conn, child, depth - 1)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    fn pid_of(&self, conn: &RustConnection, window: Window) -> Result<Option<u32>, X11Error> {
        let spec = res::ClientIdSpec {
            client: window,
            mask: res::ClientIdMask::LOCAL_CLIENT_PID,
        };
        let Ok(reply) = conn.res_query_client_ids(&[spec])?.reply() else {
            return Ok(None);
        };
        Ok(reply
            .ids
            .iter()
            .find(|id| {
                u32::from(id.spec.mask) & u32::from(res::ClientIdMask::LOCAL_CLIENT_PID) != 0
            })
            .and_then(|id| id.value.first().copied())
            .filter(|pid| *pid != 0)
            // The server's pid namespace (a jail's) to the host's, where /proc is read.
            .and_then(|pid| self.launcher.host_pid(pid)))
    }

    /// Sends `client` a ping; returns the token its answer will carry.
    pub(crate) fn ping(&mut self, conn: &RustConnection, client: Client) -> Result<u32, X11Error> {
        let token = self.next_token;
        self.next_token = self.next_token.wrapping_add(1).max(1);
        let message = ClientMessageEvent::new(
            32,
            client.window,
            self.atoms.wm_protocols,
            [self.atoms.net_wm_ping, token, client.window, 0, 0],
        );
        conn.send_event(false, client.window, EventMask::NO_EVENT, message)?;
        Ok(token)
    }

    /// Takes a ping's answer (a client message sent back to the root window); false for any
    /// other client message.
    pub(crate) fn on_client_message(&mut self, e: &ClientMessageEvent) -> bool {
        if e.window != self.root || e.type_ != self.atoms.wm_protocols || e.format != 32 {
            return false;
        }
        let data = e.data.as_data32();
        if data[0] != self.atoms.net_wm_ping {
            return false;
        }
        // Tokens grow; a late answer to an older ping proves less than a newer one.
        if data[1] > self.answered && data[1] < self.next_token {
            self.answered = data[1];
        }
        true
    }

    /// Whether the ping with `token` (or a later one) has been answered.
    pub(crate) fn answered(&self, token: u32) -> bool {
        self.answered >= token
    }

    /// Whether the client's process and the X server's are both asleep now; `None` when that
    /// cannot be told (a remote client, no X-Resource, an unreadable `/proc`).
    pub(crate) fn idle(&self, client: Client) -> Option<bool> {
        let pid = client.pid?;
        let skip = (pid == self.own_pid).then_some(self.own_tid);
        let client_idle = process_idle(pid, skip)?;
        let server_idle = match self.server_pid {
            Some(server) if server != pid => process_idle(server, None).unwrap_or(true),
            _ => true,
        };
        Some(client_idle && server_idle)
    }
}

/// Whether every thread of process `pid` (but `skip`) is asleep, from `/proc`; `None` when it
/// cannot be read.
fn process_idle(pid: u32, skip: Option<u32>) -> Option<bool> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut any = false;
    for task in tasks {
        let task = task.ok()?;
        let tid: u32 = task.file_name().to_str()?.parse().ok()?;
        if Some(tid) == skip {
            continue;
        }
        // A thread may end between the listing and the read: it is not busy then.
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        any = true;
        if !sleeping(&stat) {
            return Some(false);
        }
    }
    any.then_some(true)
}

/// Whether a `/proc/*/stat` line says the task is asleep (S) or an idle kernel thread (I). The
/// state follows the command name, which is in parentheses and may hold any character.
fn sleeping(stat: &str) -> bool {
    stat.rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next())
        .is_some_and(|state| state == "S" || state == "I")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_states() {
        assert!(sleeping("1234 (xev) S 1 2 3"));
        assert!(sleeping("1234 (a (b) c) S 1"));
        assert!(!sleeping("1234 (busy) R 1"));
        assert!(!sleeping("1234 (disk) D 1"));
        assert!(!sleeping("1234 (stopped) T 1"));
        assert!(!sleeping("garbage"));
    }

    #[test]
    fn this_process_is_busy_while_it_looks() {
        // This thread runs; skipping it, the test harness's other threads may sleep or not,
        // but the answer must be readable.
        let pid = std::process::id();
        assert_eq!(process_idle(pid, None), Some(false));
        let tid = rustix::thread::gettid().as_raw_nonzero().get() as u32;
        assert!(process_idle(pid, Some(tid)).is_some());
        assert_eq!(process_idle(u32::MAX, None), None);
    }
}
