//! The keyboard: chords pressed as named, and text typed a stretch at a time, each stretch's
//! missing keysyms bound to spare keycodes in one mapping change.

use hands_core::CancellationToken;
use hands_core::desktop::DesktopError;
use hands_core::input::{KeyChord, Modifier, ModifierSet, text_keysyms};
use x11rb::protocol::xproto::{KEY_PRESS_EVENT, KEY_RELEASE_EVENT, Keycode};

use super::{InputKind, XState, settle};
use crate::X11Error;
use crate::catchup::Target;
use crate::keymap::xkb::Stroke;

/// Most keys typed between two round trips: bounds how far input can run ahead of the server.
const TYPE_BATCH: usize = 64;

impl XState {
    /// Presses `keycode`; `level` says how a spare keycode's press is read (0 alone, 1 with
    /// Shift, `None` with a chord's modifiers).
    fn key_down(&mut self, keycode: Keycode, level: Option<u8>) -> Result<(), X11Error> {
        self.fake(KEY_PRESS_EVENT, keycode)?;
        self.input_seq += 1;
        self.held_keys.push(keycode);
        self.keymap.note_pressed(keycode, level, self.input_seq);
        Ok(())
    }

    fn key_up(&mut self, keycode: Keycode) -> Result<(), X11Error> {
        self.fake(KEY_RELEASE_EVENT, keycode)?;
        if let Some(pos) = self.held_keys.iter().rposition(|&k| k == keycode) {
            self.held_keys.remove(pos);
        }
        Ok(())
    }

    /// A modifier's keycode; modifiers must exist in the layout (a spare keycode bound to
    /// Shift_L would not act as Shift).
    fn modifier_keycode(&self, m: Modifier) -> Result<Keycode, X11Error> {
        let sym = m.key().keysym();
        self.keymap
            .modifier_key(sym)
            .ok_or(X11Error::NoModifierKey { keysym: sym })
    }

    pub(super) fn modifiers_down(&mut self, mods: ModifierSet) -> Result<Vec<Keycode>, X11Error> {
        if !mods.is_empty() {
            self.keymap.refresh(&self.conn)?;
        }
        let mut pressed = Vec::new();
        for m in mods.iter() {
            let keycode = self.modifier_keycode(m)?;
            self.key_down(keycode, None)?;
            pressed.push(keycode);
        }
        Ok(pressed)
    }

    pub(super) fn modifiers_up(&mut self, pressed: &[Keycode]) -> Result<(), X11Error> {
        for &keycode in pressed.iter().rev() {
            self.key_up(keycode)?;
        }
        Ok(())
    }

    /// The keycodes of a chord, in press order: each modifier's layout key, and for every other
    /// key the one that *is* that key with nothing pressed — a layout key, else a spare keycode
    /// bound to the keysym alone, so the key event carries exactly the modifiers the chord
    /// names (`ctrl+plus` on a US layout is Control and a key that means plus, not
    /// Control+Shift+equal).
    fn chord_keycodes(&mut self, chord: &KeyChord) -> Result<Vec<Keycode>, X11Error> {
        self.keymap.refresh(&self.conn)?;
        let mut codes: Vec<Keycode> = Vec::new();
        for key in chord.keys() {
            let code = match key.modifier() {
                Some(m) => self.modifier_keycode(m)?,
                None => self.chord_key(key.keysym(), &codes)?,
            };
            codes.push(code);
        }
        Ok(codes)
    }

    fn chord_key(&mut self, sym: u32, keep: &[Keycode]) -> Result<Keycode, X11Error> {
        if let Some(code) = self.keymap.chord_key(sym) {
            return Ok(code);
        }
        let mut plan = self
            .keymap
            .plan_single(sym, keep, self.proven_seq)
            .ok_or(X11Error::NoSpareKeycode { keysym: sym })?;
        if plan.needs_proof {
            self.prove_caught_up(
                Target::Keyboard,
                settle::PROOF_CAP,
                settle::ProofNeed::AfterInput,
            )?;
            plan = self
                .keymap
                .plan_single(sym, keep, self.proven_seq)
                .ok_or(X11Error::NoSpareKeycode { keysym: sym })?;
        }
        self.keymap.apply(&self.conn, &plan)?;
        self.keymap
            .chord_key(sym)
            .ok_or(X11Error::NoSpareKeycode { keysym: sym })
    }

    pub(crate) fn key_chord(&mut self, chord: &KeyChord) -> Result<(), X11Error> {
        let codes = self.chord_keycodes(chord)?;
        for &code in &codes {
            self.key_down(code, None)?;
        }
        for &code in codes.iter().rev() {
            self.key_up(code)?;
        }
        self.input_done(InputKind::Keyboard)
    }

    pub(crate) fn key_hold(&mut self, chord: &KeyChord, down: bool) -> Result<(), X11Error> {
        let codes = self.chord_keycodes(chord)?;
        if down {
            for &code in &codes {
                self.key_down(code, None)?;
            }
        } else {
            for &code in codes.iter().rev() {
                self.key_up(code)?;
            }
        }
        self.input_done(InputKind::Keyboard)
    }

    /// Types `text`: each character as the key that makes every client read exactly its
    /// keysym. Characters the layout lacks are bound a stretch at a time: when the next one is
    /// not bound, the keys so far are sent, and one mapping change binds as many of the coming
    /// ones as the spare slots hold (after proving the client read the keys of any slot it
    /// takes back). Caps Lock, if on, is off while typing (clients disagree on what it does to
    /// a letter on a key bound without case) and on again afterwards.
    pub(crate) fn type_text(
        &mut self,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<(), DesktopError> {
        let syms = text_keysyms(text).map_err(|e| DesktopError::Unsupported(e.to_string()))?;
        self.keymap.refresh(&self.conn)?;
        let caps = self.keymap.caps_locked();
        if caps {
            self.keymap.set_caps_lock(&self.conn, false)?;
        }
        let typed = self.type_keysyms(&syms, cancel);
        if caps {
            self.keymap.set_caps_lock(&self.conn, true)?;
        }
        typed
    }

    fn type_keysyms(
        &mut self,
        syms: &[u32],
        cancel: &CancellationToken,
    ) -> Result<(), DesktopError> {
        let mut pending: Vec<Stroke> = Vec::with_capacity(TYPE_BATCH);
        let mut i = 0;
        while i < syms.len() {
            if let Some(stroke) = self.keymap.typing_stroke(syms[i]) {
                pending.push(stroke);
                i += 1;
                if pending.len() >= TYPE_BATCH {
                    self.emit(&mut pending)?;
                    if cancel.is_cancelled() {
                        return Err(DesktopError::Cancelled);
                    }
                }
                continue;
            }
            // The next character needs a binding: send what is typed so far, then bind the
            // stretch ahead.
            self.emit(&mut pending)?;
            if cancel.is_cancelled() {
                return Err(DesktopError::Cancelled);
            }
            let upcoming = self.upcoming_spares(&syms[i..]);
            let mut plan = self.keymap.plan(&upcoming, self.proven_seq);
            if plan.needs_proof {
                self.prove_caught_up(
                    Target::Keyboard,
                    settle::PROOF_CAP,
                    settle::ProofNeed::AfterInput,
                )?;
                plan = self.keymap.plan(&upcoming, self.proven_seq);
            }
            if plan.binds.is_empty() || plan.covered == 0 {
                return Err(X11Error::NoSpareKeycode { keysym: syms[i] }.into());
            }
            self.keymap.apply(&self.conn, &plan)?;
        }
        self.emit(&mut pending)?;
        Ok(())
    }

    /// The keysyms ahead that need spare slots, in order, as far as a plan can look: until
    /// more distinct ones than the slots hold.
    fn upcoming_spares(&self, ahead: &[u32]) -> Vec<u32> {
        let capacity = self.keymap.capacity();
        let mut distinct = std::collections::HashSet::new();
        let mut upcoming = Vec::new();
        for &sym in ahead {
            if !self.keymap.needs_spare(sym) {
                continue;
            }
            if distinct.insert(sym) && distinct.len() > capacity {
                break;
            }
            upcoming.push(sym);
        }
        upcoming
    }

    fn emit(&mut self, strokes: &mut Vec<Stroke>) -> Result<(), X11Error> {
        if strokes.is_empty() {
            return Ok(());
        }
        let shift = self.modifier_keycode(Modifier::Shift)?;
        let mut shift_held = false;
        for stroke in std::mem::take(strokes) {
            if stroke.shift != shift_held {
                if stroke.shift {
                    self.key_down(shift, None)?;
                } else {
                    self.key_up(shift)?;
                }
                shift_held = stroke.shift;
            }
            self.key_down(stroke.keycode, Some(u8::from(stroke.shift)))?;
            self.key_up(stroke.keycode)?;
        }
        if shift_held {
            self.key_up(shift)?;
        }
        self.input_done(InputKind::Keyboard)
    }
}
