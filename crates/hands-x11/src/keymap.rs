//! Keysym → keycode resolution over the server's current keyboard mapping, whatever the layout,
//! with spare keycodes bound on demand for keysyms the layout lacks.
//!
//! Typing a character means finding a keycode (and whether Shift is needed) that produces its
//! keysym in the *current* mapping, so a German or French layout types the right characters too.
//! A keysym no keycode produces (`☺`, `日`, `€` on a US layout) is bound to a spare keycode with
//! ChangeKeyboardMapping. Bindings are reused least-recently-used first and left in place until a
//! slot is needed again, because a client translates a key event with the mapping it fetched after
//! the MappingNotify: rebinding right after the key press could race it. Every binding is undone
//! when the keymap is dropped.
//!
//! Reuse is still a race when a text holds more distinct missing characters than there are spare
//! keycodes: a client reads the mapping only when it gets to the MappingNotify (Xlib even waits for
//! the next key it translates), so a keycode pressed a moment ago may not have been translated
//! yet. The keymap therefore remembers which bound keycodes were pressed since clients were last
//! given time to read the mapping ([`Keymap::rebind_needs_wait`]); the driver lets the screen go
//! quiet before rebinding one of those.

use std::collections::HashMap;

use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{ConnectionExt as _, Keycode, Keysym};
use x11rb::rust_connection::RustConnection;

use crate::X11Error;

const NO_SYMBOL: Keysym = 0;

/// A key to press: the keycode, and whether Shift must be held for the keysym.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stroke {
    pub keycode: Keycode,
    pub shift: bool,
}

/// The client's copy of the keyboard mapping plus its own spare-keycode bindings.
pub(crate) struct Keymap {
    min_keycode: Keycode,
    per_keycode: usize,
    syms: Vec<Keysym>,
    lookup: HashMap<Keysym, Stroke>,
    /// Keycodes with no keysyms at all, free for temporary bindings.
    spares: Vec<Keycode>,
    /// Our bindings, least recently used first: (keycode, keysym).
    bound: Vec<(Keycode, Keysym)>,
    /// MappingNotify events our own ChangeKeyboardMapping requests will cause.
    own_notifies: u32,
    /// Bound keycodes pressed since clients were last given time to read the mapping: rebinding
    /// one now could change what a client reads for a key event it has not translated yet.
    unread: Vec<Keycode>,
}

impl Keymap {
    pub(crate) fn load(conn: &RustConnection) -> Result<Keymap, X11Error> {
        let mut keymap = Keymap {
            min_keycode: 0,
            per_keycode: 0,
            syms: Vec::new(),
            lookup: HashMap::new(),
            spares: Vec::new(),
            bound: Vec::new(),
            own_notifies: 0,
            unread: Vec::new(),
        };
        keymap.reload(conn)?;
        Ok(keymap)
    }

    /// Re-reads the whole mapping (after someone else changed it), keeping those of our bindings
    /// that are still in place.
    pub(crate) fn reload(&mut self, conn: &RustConnection) -> Result<(), X11Error> {
        let setup = conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let reply = conn.get_keyboard_mapping(min, max - min + 1)?.reply()?;
        self.min_keycode = min;
        self.per_keycode = usize::from(reply.keysyms_per_keycode).max(1);
        self.syms = reply.keysyms;
        self.bound.retain(|&(code, sym)| {
            let i = usize::from(code - min) * self.per_keycode;
            self.syms.get(i) == Some(&sym)
        });
        let bound = &self.bound;
        self.unread
            .retain(|code| bound.iter().any(|&(c, _)| c == *code));
        self.rebuild();
        Ok(())
    }

    fn rebuild(&mut self) {
        self.lookup.clear();
        self.spares.clear();
        let n_codes = self.syms.len() / self.per_keycode;
        // Two passes so that an unshifted binding anywhere wins over a shifted one.
        for want_shift in [false, true] {
            for idx in 0..n_codes {
                let keycode = self.min_keycode + idx as u8;
                let row = &self.syms[idx * self.per_keycode..(idx + 1) * self.per_keycode];
                let (lower, upper) = columns(row);
                let sym = if want_shift { upper } else { lower };
                if sym != NO_SYMBOL {
                    self.lookup.entry(sym).or_insert(Stroke {
                        keycode,
                        shift: want_shift,
                    });
                }
            }
        }
        for idx in 0..n_codes {
            let keycode = self.min_keycode + idx as u8;
            let row = &self.syms[idx * self.per_keycode..(idx + 1) * self.per_keycode];
            let ours = self.bound.iter().any(|&(code, _)| code == keycode);
            // Keycode 8 and below are never produced by real keyboards' first row; any keycode
            // with no symbols is fair game.
            if ours || row.iter().all(|&s| s == NO_SYMBOL) {
                self.spares.push(keycode);
            }
        }
    }

    /// How many keysyms can be bound at once.
    pub(crate) fn n_spares(&self) -> usize {
        self.spares.len()
    }

    /// Handles a MappingNotify for the keyboard: the single-keycode changes our own bindings
    /// caused are already known; anything else reloads the mapping.
    pub(crate) fn on_mapping_notify(
        &mut self,
        conn: &RustConnection,
        first_keycode: Keycode,
        count: u8,
    ) -> Result<(), X11Error> {
        let ours = count == 1 && self.bound.iter().any(|&(code, _)| code == first_keycode);
        if ours && self.own_notifies > 0 {
            self.own_notifies -= 1;
            return Ok(());
        }
        self.reload(conn)
    }

    /// Notes that `keycode` was pressed: if it is one of our bindings, clients must read the
    /// mapping before it may be rebound.
    pub(crate) fn note_pressed(&mut self, keycode: Keycode) {
        if self.bound.iter().any(|&(c, _)| c == keycode) && !self.unread.contains(&keycode) {
            self.unread.push(keycode);
        }
    }

    /// Notes that clients have had time to read the mapping: every binding may be reused.
    pub(crate) fn mapping_read(&mut self) {
        self.unread.clear();
    }

    /// Whether [`Keymap::resolve`] for `sym` (with `keep` about to be pressed) would rebind a
    /// keycode that clients may not have translated yet, or could only succeed once the strokes
    /// in `keep` have been sent: the caller sends what is pending, lets clients read the mapping
    /// ([`Keymap::mapping_read`]), and resolves with nothing kept.
    pub(crate) fn rebind_needs_wait(&self, sym: Keysym, keep: &[Keycode]) -> bool {
        if self.find(sym).is_some() {
            return false;
        }
        let free = self
            .spares
            .iter()
            .any(|code| !self.bound.iter().any(|&(c, _)| c == *code) && !keep.contains(code));
        if free {
            return false;
        }
        match self
            .bound
            .iter()
            .map(|&(c, _)| c)
            .find(|c| !keep.contains(c))
        {
            Some(victim) => self.unread.contains(&victim),
            None => !keep.is_empty(),
        }
    }

    /// The stroke that produces `sym` in the current mapping, if any.
    pub(crate) fn find(&self, sym: Keysym) -> Option<Stroke> {
        self.lookup.get(&sym).copied()
    }

    /// The stroke for `sym`, binding a spare keycode when the layout lacks it. `keep` lists
    /// keycodes that must not be rebound now (they are about to be pressed).
    pub(crate) fn resolve(
        &mut self,
        conn: &RustConnection,
        sym: Keysym,
        keep: &[Keycode],
    ) -> Result<Stroke, X11Error> {
        if let Some(stroke) = self.find(sym) {
            if let Some(pos) = self
                .bound
                .iter()
                .position(|&(code, _)| code == stroke.keycode)
            {
                let entry = self.bound.remove(pos);
                self.bound.push(entry);
            }
            return Ok(stroke);
        }
        let keycode = self
            .spares
            .iter()
            .copied()
            .find(|code| !self.bound.iter().any(|&(c, _)| c == *code) && !keep.contains(code))
            .or_else(|| {
                self.bound
                    .iter()
                    .map(|&(c, _)| c)
                    .find(|c| !keep.contains(c))
            })
            .ok_or(X11Error::NoSpareKeycode { keysym: sym })?;
        self.bind(conn, keycode, sym)?;
        Ok(Stroke {
            keycode,
            shift: false,
        })
    }

    fn bind(
        &mut self,
        conn: &RustConnection,
        keycode: Keycode,
        sym: Keysym,
    ) -> Result<(), X11Error> {
        // Same keysym in both columns so Shift or Caps Lock cannot change what it types.
        let mut row = vec![NO_SYMBOL; self.per_keycode];
        row[0] = sym;
        if self.per_keycode > 1 {
            row[1] = sym;
        }
        conn.change_keyboard_mapping(1, keycode, self.per_keycode as u8, &row)?;
        self.own_notifies += 1;
        let idx = usize::from(keycode - self.min_keycode) * self.per_keycode;
        self.unread.retain(|&c| c != keycode);
        if let Some(old) = self.bound.iter().position(|&(c, _)| c == keycode) {
            let (_, old_sym) = self.bound.remove(old);
            if self
                .lookup
                .get(&old_sym)
                .is_some_and(|s| s.keycode == keycode)
            {
                self.lookup.remove(&old_sym);
            }
        }
        self.syms[idx..idx + self.per_keycode].copy_from_slice(&row);
        self.bound.push((keycode, sym));
        self.lookup.insert(
            sym,
            Stroke {
                keycode,
                shift: false,
            },
        );
        tracing::trace!(
            keycode,
            keysym = format_args!("{sym:#x}"),
            "bound spare keycode"
        );
        Ok(())
    }

    /// Undoes every binding (on shutdown).
    pub(crate) fn restore(&mut self, conn: &RustConnection) {
        let row = vec![NO_SYMBOL; self.per_keycode];
        for (keycode, _) in self.bound.drain(..) {
            let _ = conn.change_keyboard_mapping(1, keycode, self.per_keycode as u8, &row);
        }
        let _ = conn.flush();
    }
}

/// The keysyms of the first group without and with Shift, with the core protocol's rule that a
/// lone lower-case letter implies its upper case with Shift.
fn columns(row: &[Keysym]) -> (Keysym, Keysym) {
    let lower = row.first().copied().unwrap_or(NO_SYMBOL);
    let upper = row.get(1).copied().unwrap_or(NO_SYMBOL);
    if upper == NO_SYMBOL {
        let implied = upper_case(lower);
        if implied != lower {
            return (lower, implied);
        }
        return (lower, NO_SYMBOL);
    }
    (lower, upper)
}

/// The upper-case keysym of a Latin-1 or Unicode letter keysym, or the keysym itself.
fn upper_case(sym: Keysym) -> Keysym {
    let c = match sym {
        0x61..=0x7a | 0xe0..=0xfe if sym != 0xf7 => char::from_u32(sym),
        s if s & 0xff00_0000 == 0x0100_0000 => char::from_u32(s & 0x00ff_ffff),
        _ => None,
    };
    let Some(c) = c else { return sym };
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) if u != c => hands_core::input::keysym::of_char(u),
        _ => sym,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_lower_case_letter_implies_shifted_upper() {
        assert_eq!(columns(&['a' as u32, 0]), ('a' as u32, 'A' as u32));
        assert_eq!(columns(&[0xe9, 0]), (0xe9, 0xc9));
        assert_eq!(columns(&['1' as u32, '!' as u32]), ('1' as u32, '!' as u32));
        assert_eq!(columns(&[0xff0d, 0]), (0xff0d, 0));
    }
}
