//! The desktop's top-level windows, the one with the focus and the clipboard's owner, read from
//! the X server as they are now: what hands tells the model a person did on the desktop while
//! they held the wheel (issue 22) is the difference between two such readings.
//!
//! Top-level windows are the window manager's `_NET_CLIENT_LIST` (EWMH: the managed client
//! windows, which carry the titles) when it publishes one; without a window manager, the
//! root's mapped children that are not override-redirect (menus and tooltips are). The focus is
//! `_NET_ACTIVE_WINDOW` when published, else the input focus walked up to a top-level window.
//!
//! The server gives a closed client's ids to the next client that connects, so a new window
//! may have the id of one just closed (seen with two `xmessage` run one after the other): a
//! window is told apart by its id and its creation, the number of the root's `CreateNotify`
//! for that id the driver's connection has seen ([`Creations`]).

use std::collections::HashMap;

use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _, MapState, Window};
use x11rb::rust_connection::RustConnection;

use crate::X11Error;

/// The most characters of a title kept.
const TITLE_MAX: usize = 200;

/// The most windows read from a client list (a desktop has a few dozen).
const LIST_MAX: u32 = 4096;

/// A top-level window of the desktop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopWindow {
    /// Its X id.
    pub id: u32,
    /// Which window of that id: the serial of its creation as this connection saw it (0: made
    /// before the connection, or too long ago to be remembered).
    pub creation: u64,
    /// Its title (`_NET_WM_NAME`, else `WM_NAME`); empty when it has none.
    pub title: String,
}

impl TopWindow {
    /// Whether `other` is this window (not a later one given the same id).
    pub fn same(&self, other: &TopWindow) -> bool {
        self.id == other.id && self.creation == other.creation
    }
}

/// The desktop's windows at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowsNow {
    /// Top-level windows, bottom to top as the server or the window manager lists them.
    pub windows: Vec<TopWindow>,
    /// The window with the focus, when it is one of `windows`.
    pub focused: Option<TopWindow>,
    /// The owner of the `CLIPBOARD` selection (0: none). Its content is never read.
    pub clipboard_owner: u32,
}

/// The most creations remembered: the oldest are forgotten beyond it.
const CREATIONS_MAX: usize = 4096;

/// The top-level windows created since the connection was made: each id's latest creation.
#[derive(Debug, Default)]
pub(crate) struct Creations {
    n_created: u64,
    latest: HashMap<u32, u64>,
}

impl Creations {
    /// A `CreateNotify` of the root for `window`.
    pub(crate) fn created(&mut self, window: u32) {
        self.n_created += 1;
        self.latest.insert(window, self.n_created);
        if self.latest.len() > CREATIONS_MAX {
            let keep_after = self.n_created - (CREATIONS_MAX as u64) / 2;
            self.latest.retain(|_, &mut n| n > keep_after);
        }
    }

    fn of(&self, window: u32) -> u64 {
        self.latest.get(&window).copied().unwrap_or(0)
    }
}

struct Atoms {
    client_list: u32,
    active: u32,
    net_wm_name: u32,
    utf8: u32,
    clipboard: u32,
}

fn atom(conn: &RustConnection, name: &[u8]) -> Result<u32, X11Error> {
    Ok(conn.intern_atom(false, name)?.reply()?.atom)
}

/// The windows of the screen whose root is `root`, now.
pub(crate) fn windows_now(
    conn: &RustConnection,
    root: Window,
    creations: &Creations,
) -> Result<WindowsNow, X11Error> {
    let atoms = Atoms {
        client_list: atom(conn, b"_NET_CLIENT_LIST")?,
        active: atom(conn, b"_NET_ACTIVE_WINDOW")?,
        net_wm_name: atom(conn, b"_NET_WM_NAME")?,
        utf8: atom(conn, b"UTF8_STRING")?,
        clipboard: atom(conn, b"CLIPBOARD")?,
    };
    let ids = match window_list(conn, root, atoms.client_list)? {
        Some(ids) => ids,
        None => mapped_children(conn, root)?,
    };
    let windows: Vec<TopWindow> = ids
        .into_iter()
        .map(|id| TopWindow {
            id,
            creation: creations.of(id),
            title: title(conn, id, &atoms),
        })
        .collect();
    let focused = focused(conn, root, &atoms, &windows)?;
    let clipboard_owner = conn.get_selection_owner(atoms.clipboard)?.reply()?.owner;
    Ok(WindowsNow {
        windows,
        focused,
        clipboard_owner,
    })
}

/// A `WINDOW` list property of the root (`None` when it is not set).
fn window_list(
    conn: &RustConnection,
    root: Window,
    property: u32,
) -> Result<Option<Vec<u32>>, X11Error> {
    let reply = conn
        .get_property(false, root, property, AtomEnum::WINDOW, 0, LIST_MAX)?
        .reply()?;
    if reply.type_ != u32::from(AtomEnum::WINDOW) || reply.format != 32 {
        return Ok(None);
    }
    Ok(reply.value32().map(Iterator::collect))
}

/// The root's children that are mapped and not override-redirect (no window manager runs).
fn mapped_children(conn: &RustConnection, root: Window) -> Result<Vec<u32>, X11Error> {
    let tree = conn.query_tree(root)?.reply()?;
    let mut out = Vec::new();
    for child in tree.children {
        // A window that went away between the two requests is simply not listed.
        let Ok(attributes) = conn.get_window_attributes(child)?.reply() else {
            continue;
        };
        if attributes.map_state == MapState::VIEWABLE && !attributes.override_redirect {
            out.push(child);
        }
    }
    Ok(out)
}

/// A window's title: `_NET_WM_NAME` (UTF-8), else `WM_NAME` (Latin-1 or UTF-8); empty when it
/// has neither or is gone.
fn title(conn: &RustConnection, window: Window, atoms: &Atoms) -> String {
    let read = |property: u32, kind: u32| {
        conn.get_property(false, window, property, kind, 0, 1024)
            .ok()?
            .reply()
            .ok()
            .filter(|r| r.format == 8 && !r.value.is_empty())
            .map(|r| (r.type_, r.value))
    };
    let text = match read(atoms.net_wm_name, atoms.utf8) {
        Some((_, bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        None => match read(AtomEnum::WM_NAME.into(), AtomEnum::ANY.into()) {
            Some((kind, bytes)) if kind == u32::from(AtomEnum::STRING) => {
                bytes.iter().map(|&b| char::from(b)).collect()
            }
            Some((_, bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            None => String::new(),
        },
    };
    text.chars()
        .filter(|c| !c.is_control())
        .take(TITLE_MAX)
        .collect()
}

/// The top-level window with the focus: `_NET_ACTIVE_WINDOW`, else the input focus or its
/// nearest ancestor among `windows`.
fn focused(
    conn: &RustConnection,
    root: Window,
    atoms: &Atoms,
    windows: &[TopWindow],
) -> Result<Option<TopWindow>, X11Error> {
    let listed = |id: u32| windows.iter().find(|w| w.id == id).cloned();
    if let Some(active) = window_list(conn, root, atoms.active)?
        .and_then(|ids| ids.first().copied())
        .filter(|&id| id != 0)
    {
        return Ok(listed(active));
    }
    let mut current = conn.get_input_focus()?.reply()?.focus;
    // 0 is None and 1 PointerRoot: no window has the focus.
    while current > 1 && current != root {
        if let Some(window) = listed(current) {
            return Ok(Some(window));
        }
        let Ok(tree) = conn.query_tree(current)?.reply() else {
            return Ok(None);
        };
        current = tree.parent;
    }
    Ok(None)
}
