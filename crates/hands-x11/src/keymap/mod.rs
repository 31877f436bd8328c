//! Keysym → key resolution over the server's current keyboard, whatever the layout, with spare
//! keycodes bound in batches for keysyms the layout lacks.
//!
//! The keyboard is read through XKB ([`xkb`]): a character is typed with the key (and Shift or
//! not) that makes XKB and core clients alike read exactly its keysym under the current lock
//! state and group. What no key produces that way (`☺`, `日`, `€` on a US layout, `KP_0` with Num
//! Lock off, `@` under a German layout, where it needs AltGr) goes to the spare keycodes — keys
//! with no symbol at all — two keysyms per keycode ([`spares`]). A text's missing keysyms are
//! bound a stretch at a time in one XKB `SetMap` request (one MappingNotify per client) covering
//! the range of spare keycodes changed; keycodes in between are sent back unchanged. Bindings
//! stay until their slot is needed for something else or the desktop drops.

pub(crate) mod spares;
pub(crate) mod xkb;

use std::collections::HashMap;

use x11rb::connection::{Connection as _, RequestConnection as _};
use x11rb::protocol::xkb::{self as proto, ConnectionExt as _};
use x11rb::protocol::xproto::{ConnectionExt as _, Keycode};
use x11rb::rust_connection::RustConnection;

use crate::X11Error;
use spares::{Plan, Slot, Spares};
use xkb::{KeyState, KeySyms, Keyboard, Stroke};

/// The core keyboard, as XKB names it.
const CORE_KEYBOARD: u16 = 0x100;

/// The client's copy of the keyboard, the lock state, and its own spare-keycode bindings.
pub(crate) struct Keymap {
    keyboard: Keyboard,
    state: KeyState,
    /// Strokes for layout keys under `state`, by canonical keysym.
    strokes: HashMap<u32, Stroke>,
    spares: Spares,
    /// Modifiers locked (Caps Lock, Num Lock …) when the state was last read.
    locked_mods: u8,
    /// Someone (maybe us) changed the mapping since it was read.
    stale: bool,
    /// Mapping changes this keymap sent (each one MappingNotify to every client).
    pub n_mapping_changes: u64,
}

impl Keymap {
    /// Reads the keyboard; selects the XKB events that say it changed.
    pub(crate) fn load(conn: &RustConnection) -> Result<Keymap, X11Error> {
        if conn
            .extension_information(proto::X11_EXTENSION_NAME)?
            .is_none()
        {
            return Err(X11Error::MissingExtension("XKEYBOARD"));
        }
        let version = conn.xkb_use_extension(1, 0)?.reply()?;
        if !version.supported {
            return Err(X11Error::MissingExtension("XKEYBOARD 1.0"));
        }
        let parts = proto::MapPart::KEY_TYPES
            | proto::MapPart::KEY_SYMS
            | proto::MapPart::MODIFIER_MAP
            | proto::MapPart::VIRTUAL_MODS;
        conn.xkb_select_events(
            CORE_KEYBOARD,
            proto::EventType::from(0u16),
            proto::EventType::NEW_KEYBOARD_NOTIFY | proto::EventType::MAP_NOTIFY,
            parts,
            parts,
            &proto::SelectEventsAux::default(),
        )?
        .check()?;
        let mut keymap = Keymap {
            keyboard: Keyboard::default(),
            state: KeyState::default(),
            strokes: HashMap::new(),
            spares: Spares::default(),
            locked_mods: 0,
            stale: true,
            n_mapping_changes: 0,
        };
        keymap.reload(conn)?;
        Ok(keymap)
    }

    /// Notes that the mapping changed; it is read again before the next lookup.
    pub(crate) fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// Reads the keyboard again, keeping the bindings still in place and forgetting those
    /// someone else replaced.
    fn reload(&mut self, conn: &RustConnection) -> Result<(), X11Error> {
        let full =
            proto::MapPart::KEY_TYPES | proto::MapPart::KEY_SYMS | proto::MapPart::MODIFIER_MAP;
        let map = conn
            .xkb_get_map(
                CORE_KEYBOARD,
                full,
                proto::MapPart::from(0u16),
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                proto::VMod::from(0u16),
                0,
                0,
                0,
                0,
                0,
                0,
            )?
            .reply()?;
        let (min, max) = (map.min_key_code, map.max_key_code);
        let n_keys = usize::from(max.saturating_sub(min)) + 1;
        let mut keys = vec![KeySyms::default(); n_keys];
        if let Some(syms) = &map.map.syms_rtrn {
            let first = usize::from(map.first_key_sym.saturating_sub(min));
            for (i, k) in syms.iter().enumerate() {
                if let Some(slot) = keys.get_mut(first + i) {
                    *slot = KeySyms::from(k);
                }
            }
        }
        let mut modmap = vec![0u8; n_keys];
        for entry in map.map.modmap_rtrn.iter().flatten() {
            if let Some(m) = entry
                .keycode
                .checked_sub(min)
                .and_then(|i| modmap.get_mut(usize::from(i)))
            {
                *m = u16::from(entry.mods) as u8;
            }
        }
        let types = map
            .map
            .types_rtrn
            .iter()
            .flatten()
            .map(xkb::KeyType::from)
            .collect();
        let core = conn
            .get_keyboard_mapping(min, max.saturating_sub(min) + 1)?
            .reply()?;
        self.keyboard = Keyboard {
            min_keycode: min,
            types,
            keys,
            modmap,
            core_width: usize::from(core.keysyms_per_keycode).max(1),
            core: core.keysyms,
        };
        // Keep the bindings the server still holds; what else is spare joins them.
        let mut spare_codes = Vec::new();
        for (_, keycode) in self.keyboard.keycodes() {
            let ours = self.spares.keycodes().contains(&keycode);
            let levels = self.spares.levels_of(keycode);
            let in_place = ours
                && !levels.is_empty()
                && self.keyboard.key(keycode).is_some_and(|k| k.holds(&levels));
            if in_place {
                spare_codes.push(keycode);
                continue;
            }
            if ours && !levels.is_empty() {
                tracing::debug!(
                    keycode,
                    ours = ?levels,
                    server = ?self.keyboard.key(keycode),
                    "a spare keycode was remapped by someone else"
                );
                self.spares.forget(keycode);
            }
            if self.keyboard.is_spare(keycode) {
                spare_codes.push(keycode);
            }
        }
        if self.spares.capacity() == 0 {
            self.spares = Spares::new(spare_codes, self.keyboard.levels_available());
        } else {
            self.spares.set_keycodes(spare_codes);
        }
        self.stale = false;
        self.rebuild_strokes();
        Ok(())
    }

    fn rebuild_strokes(&mut self) {
        let spares = self.spares.keycodes().to_vec();
        self.strokes = self.keyboard.strokes(self.state);
        self.strokes.retain(|_, s| !spares.contains(&s.keycode));
    }

    /// Reads the mapping if it changed and the lock state and group, before resolving keys for
    /// an action.
    pub(crate) fn refresh(&mut self, conn: &RustConnection) -> Result<(), X11Error> {
        if self.stale {
            self.reload(conn)?;
        }
        let reply = conn.xkb_get_state(CORE_KEYBOARD)?.reply()?;
        self.locked_mods = u16::from(reply.locked_mods) as u8;
        let state = KeyState {
            group: u8::from(reply.group),
            mods: u16::from(reply.base_mods) as u8
                | u16::from(reply.latched_mods) as u8
                | u16::from(reply.locked_mods) as u8,
        };
        if state != self.state {
            self.state = state;
            self.rebuild_strokes();
        }
        Ok(())
    }

    /// Whether Caps Lock (the Lock modifier) is locked.
    pub(crate) fn caps_locked(&self) -> bool {
        self.locked_mods & xkb::LOCK_MASK != 0
    }

    /// Locks or unlocks the Lock modifier (Caps Lock), as pressing Caps Lock would.
    pub(crate) fn set_caps_lock(
        &mut self,
        conn: &RustConnection,
        on: bool,
    ) -> Result<(), X11Error> {
        let lock = x11rb::protocol::xproto::ModMask::from(u16::from(xkb::LOCK_MASK));
        conn.xkb_latch_lock_state(
            CORE_KEYBOARD,
            lock,
            if on {
                lock
            } else {
                x11rb::protocol::xproto::ModMask::from(0u16)
            },
            false,
            proto::Group::M1,
            x11rb::protocol::xproto::ModMask::from(0u16),
            false,
            0,
        )?;
        self.refresh(conn)
    }

    /// How many keysyms the spare keycodes hold at once.
    pub(crate) fn capacity(&self) -> usize {
        self.spares.capacity()
    }

    /// The stroke that types `sym` now: a layout key, or a spare slot already bound to it.
    pub(crate) fn typing_stroke(&self, sym: u32) -> Option<Stroke> {
        let sym = xkb::canonical(sym);
        self.strokes.get(&sym).copied().or_else(|| {
            self.spares.find(sym).map(|slot| Stroke {
                keycode: slot.keycode,
                shift: slot.level == 1,
            })
        })
    }

    /// Whether `sym` needs a spare keycode to be typed.
    pub(crate) fn needs_spare(&self, sym: u32) -> bool {
        !self.strokes.contains_key(&xkb::canonical(sym))
    }

    /// The key a chord presses for `sym`: a layout key that is `sym` with no modifier, or a
    /// spare keycode holding `sym` alone.
    pub(crate) fn chord_key(&self, sym: u32) -> Option<Keycode> {
        let sym = xkb::canonical(sym);
        let spares = self.spares.keycodes();
        if let Some(code) = self.keyboard.chord_key(self.state, sym)
            && !spares.contains(&code)
        {
            return Some(code);
        }
        self.spares
            .find(sym)
            .filter(|slot| self.spares.is_single(*slot))
            .map(|slot| slot.keycode)
    }

    /// A modifier's key, from the layout (a spare keycode bound to Shift_L would not act as
    /// Shift).
    pub(crate) fn modifier_key(&self, sym: u32) -> Option<Keycode> {
        self.keyboard.modifier_key(sym)
    }

    /// Bindings for the next stretch of keysyms that need spares.
    pub(crate) fn plan(&self, upcoming: &[u32], proven: u64) -> Plan {
        let upcoming: Vec<u32> = upcoming.iter().map(|s| xkb::canonical(*s)).collect();
        self.spares.plan(&upcoming, proven)
    }

    /// A binding of `sym` alone on a spare keycode, for a chord.
    pub(crate) fn plan_single(&self, sym: u32, keep: &[Keycode], proven: u64) -> Option<Plan> {
        self.spares.plan_single(xkb::canonical(sym), keep, proven)
    }

    /// Records that `keycode` was pressed as input number `seq`, alone (`level` 0) or with
    /// Shift (`level` 1), or in a chord (`level` `None`: any modifiers).
    pub(crate) fn note_pressed(&mut self, keycode: Keycode, level: Option<u8>, seq: u64) {
        if !self.spares.keycodes().contains(&keycode) {
            return;
        }
        match level {
            Some(level) => self.spares.pressed(Slot { keycode, level }, seq),
            None => self.spares.pressed_keycode(keycode, seq),
        }
    }

    /// Whether a spare keycode pressed after input `proven` still holds a binding: clients must
    /// catch up before it is unbound.
    pub(crate) fn any_unproven(&self, proven: u64) -> bool {
        self.spares.any_unproven(proven)
    }

    /// Sends a plan's bindings in one mapping change.
    pub(crate) fn apply(&mut self, conn: &RustConnection, plan: &Plan) -> Result<(), X11Error> {
        if plan.binds.is_empty() {
            return Ok(());
        }
        let changed = self.spares.apply(plan);
        self.send(conn, &changed)?;
        tracing::trace!(
            n_keysyms = plan.binds.len(),
            n_keycodes = changed.len(),
            "bound spare keycodes"
        );
        Ok(())
    }

    /// One XKB SetMap for the keycode range `changed` spans: spare keycodes get their slots'
    /// keysyms, the others are sent back as they are.
    fn send(&mut self, conn: &RustConnection, changed: &[Keycode]) -> Result<(), X11Error> {
        let (Some(&first), Some(&last)) = (changed.first(), changed.last()) else {
            return Ok(());
        };
        let spares = self.spares.keycodes().to_vec();
        let mut syms = Vec::with_capacity(usize::from(last - first) + 1);
        for keycode in first..=last {
            let key = if spares.contains(&keycode) {
                KeySyms::of_levels(&self.spares.levels_of(keycode))
            } else {
                self.keyboard.key(keycode).cloned().unwrap_or_default()
            };
            if let Some(slot) = keycode
                .checked_sub(self.keyboard.min_keycode)
                .and_then(|i| self.keyboard.keys.get_mut(usize::from(i)))
            {
                *slot = key.clone();
            }
            syms.push(proto::KeySymMap::from(&key));
        }
        let total: usize = syms.iter().map(|k| k.syms.len()).sum();
        let n_keys = syms.len();
        let max_keycode = self
            .keyboard
            .keycodes()
            .last()
            .map_or(self.keyboard.min_keycode, |(_, c)| c);
        conn.xkb_set_map(
            CORE_KEYBOARD,
            proto::SetMapFlags::from(0u16),
            self.keyboard.min_keycode,
            max_keycode,
            0,
            0,
            first,
            n_keys as u8,
            total as u16,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            proto::VMod::from(0u16),
            &proto::SetMapAux {
                syms: Some(syms),
                ..proto::SetMapAux::default()
            },
        )?;
        self.n_mapping_changes += 1;
        // The server derives a new core mapping; read it before relying on it again.
        self.stale = true;
        Ok(())
    }

    /// Undoes every binding (on shutdown).
    pub(crate) fn restore(&mut self, conn: &RustConnection) {
        let held = self.spares.clear();
        if let Err(e) = self.send(conn, &held) {
            tracing::warn!(error = %e, "could not undo the spare keycode bindings");
        }
        let _ = conn.flush();
    }
}
