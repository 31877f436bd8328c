//! The recorder's copy of the keyboard and modifier mappings, and the core protocol's rules for
//! turning a key event into a keysym.
//!
//! The rules are those of the X protocol specification, section 5 ("Keyboards"), as
//! [`keysym::core_keysym`] implements them: column 0 without Shift, column 1 with it; a lone
//! letter stands for both its cases; Caps Lock upper-cases letters, Shift Lock acts as Shift;
//! Num Lock picks a keypad key's second keysym unless Shift is held; Mode_switch selects the
//! second group. This is how a client that does not use XKB reads keys, so a driver that types
//! exactly for it types exactly for core clients.

use hands_core::input::Modifier;
use hands_core::input::keysym::{self, CoreState, Lock};
use x11rb::protocol::xproto::{Keycode, Keysym};

const NO_SYMBOL: Keysym = 0;
/// `Shift` in a key or button event's state.
const SHIFT_MASK: u16 = 1;
/// `Lock` in a key or button event's state.
const LOCK_MASK: u16 = 2;

/// The keysyms of every keycode, as last fetched from the server.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeyboardMap {
    min_keycode: Keycode,
    per_keycode: usize,
    syms: Vec<Keysym>,
    /// The state bit each of the four modifiers is on (0 when the layout has none).
    masks: [u16; 4],
    /// What the Lock modifier means.
    lock: Lock,
    /// The state bit Num_Lock is on (0 when none).
    num_lock_mask: u16,
    /// The state bit Mode_switch is on (0 when none).
    mode_switch_mask: u16,
}

fn modifier_slot(m: Modifier) -> usize {
    match m {
        Modifier::Shift => 0,
        Modifier::Control => 1,
        Modifier::Alt => 2,
        Modifier::Super => 3,
    }
}

impl KeyboardMap {
    /// A map from a full GetKeyboardMapping reply starting at `min_keycode`.
    pub(crate) fn new(min_keycode: Keycode, per_keycode: u8, syms: Vec<Keysym>) -> KeyboardMap {
        KeyboardMap {
            min_keycode,
            per_keycode: usize::from(per_keycode).max(1),
            syms,
            masks: [SHIFT_MASK, 4, 0, 0],
            lock: Lock::Caps,
            num_lock_mask: 0,
            mode_switch_mask: 0,
        }
    }

    /// Replaces the keysyms of `count` keycodes from `first` with a partial GetKeyboardMapping
    /// reply (after a MappingNotify). A reply with a different width replaces the whole row.
    pub(crate) fn update(&mut self, first: Keycode, per_keycode: u8, syms: &[Keysym]) {
        let per = usize::from(per_keycode).max(1);
        let n_codes = syms.len() / per;
        for i in 0..n_codes {
            let Some(row) = self.row_range(first.saturating_add(i as u8)) else {
                continue;
            };
            let new = &syms[i * per..(i + 1) * per];
            let dest = &mut self.syms[row];
            for (j, slot) in dest.iter_mut().enumerate() {
                *slot = new.get(j).copied().unwrap_or(NO_SYMBOL);
            }
        }
    }

    fn row_range(&self, keycode: Keycode) -> Option<std::ops::Range<usize>> {
        let idx = usize::from(keycode.checked_sub(self.min_keycode)?);
        let start = idx * self.per_keycode;
        let end = start + self.per_keycode;
        (end <= self.syms.len()).then_some(start..end)
    }

    /// The keysyms of `keycode`, all columns.
    pub(crate) fn row(&self, keycode: Keycode) -> &[Keysym] {
        self.row_range(keycode).map_or(&[], |r| &self.syms[r])
    }

    /// Reads the modifier mapping (`keycodes_per_modifier` keycodes for each of the eight
    /// modifiers, Shift first) to learn which state bit Alt, Super, Num Lock and Mode_switch are
    /// on, and what Lock is.
    pub(crate) fn set_modifier_mapping(&mut self, per_modifier: usize, keycodes: &[Keycode]) {
        let mut masks = [0u16; 4];
        let mut lock = Lock::Off;
        let (mut num_lock_mask, mut mode_switch_mask) = (0, 0);
        for (index, codes) in keycodes.chunks(per_modifier.max(1)).take(8).enumerate() {
            let bit = 1u16 << index;
            for &code in codes.iter().filter(|&&c| c != 0) {
                let sym = self
                    .row(code)
                    .iter()
                    .copied()
                    .find(|&s| s != NO_SYMBOL)
                    .unwrap_or(NO_SYMBOL);
                let slot = match sym {
                    0xffe1 | 0xffe2 => Some(Modifier::Shift),
                    0xffe3 | 0xffe4 => Some(Modifier::Control),
                    // Meta_L, Meta_R, Alt_L, Alt_R.
                    0xffe7..=0xffea => Some(Modifier::Alt),
                    0xffeb | 0xffec => Some(Modifier::Super),
                    keysym::CAPS_LOCK if index == 1 => {
                        lock = Lock::Caps;
                        None
                    }
                    keysym::SHIFT_LOCK if index == 1 && lock == Lock::Off => {
                        lock = Lock::Shift;
                        None
                    }
                    keysym::NUM_LOCK => {
                        num_lock_mask |= bit;
                        None
                    }
                    // Mode_switch.
                    0xff7e => {
                        mode_switch_mask |= bit;
                        None
                    }
                    _ => None,
                };
                if let Some(m) = slot {
                    let i = modifier_slot(m);
                    if masks[i] == 0 {
                        masks[i] = bit;
                    }
                }
            }
        }
        // Shift and Control are fixed by the protocol whatever keys carry them.
        masks[0] = SHIFT_MASK;
        masks[1] = 4;
        self.masks = masks;
        self.lock = lock;
        self.num_lock_mask = num_lock_mask;
        self.mode_switch_mask = mode_switch_mask;
    }

    /// The state bit of a modifier (0 when the layout has no key for it).
    pub(crate) fn mask(&self, m: Modifier) -> u16 {
        self.masks[modifier_slot(m)]
    }

    /// How many keycodes carry no keysym at all: the driver's spare keycodes.
    pub(crate) fn n_empty_keycodes(&self) -> usize {
        self.syms
            .chunks(self.per_keycode)
            .filter(|row| row.iter().all(|&s| s == NO_SYMBOL))
            .count()
    }

    /// The keysym a key event of `keycode` with modifier `state` means.
    pub(crate) fn keysym(&self, keycode: Keycode, state: u16) -> Option<Keysym> {
        let core = CoreState {
            shift: state & SHIFT_MASK != 0,
            lock: if state & LOCK_MASK != 0 {
                self.lock
            } else {
                Lock::Off
            },
            num_lock: self.num_lock_mask != 0 && state & self.num_lock_mask != 0,
            group2: self.mode_switch_mask != 0 && state & self.mode_switch_mask != 0,
        };
        let sym = keysym::core_keysym(self.row(keycode), core);
        (sym != NO_SYMBOL).then_some(sym)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_updates_and_masks() {
        // Keycodes 8..=11, two columns each.
        let mut map = KeyboardMap::new(
            8,
            2,
            vec![0xffe1, 0, 0xffe9, 0, 0, 0, 'q' as u32, 'Q' as u32],
        );
        assert_eq!(map.n_empty_keycodes(), 1);
        map.update(10, 2, &[0x0100_65e5, 0x0100_65e5]);
        assert_eq!(map.keysym(10, 0), Some(0x0100_65e5));
        assert_eq!(map.n_empty_keycodes(), 0);
        // Shift on keycode 8, Alt (keycode 9) on Mod1.
        map.set_modifier_mapping(1, &[8, 0, 0, 9, 0, 0, 0, 0]);
        assert_eq!(map.mask(Modifier::Shift), 1);
        assert_eq!(map.mask(Modifier::Alt), 8);
        assert_eq!(map.mask(Modifier::Super), 0);
        assert_eq!(map.keysym(11, 1), Some('Q' as u32));
        // Num_Lock on Mod2 picks a keypad key's digit.
        let mut map = KeyboardMap::new(8, 2, vec![0xff7f, 0, 0xff9e, 0xffb0]);
        map.set_modifier_mapping(1, &[0, 0, 0, 0, 8, 0, 0, 0]);
        assert_eq!(map.keysym(9, 0), Some(0xff9e));
        assert_eq!(map.keysym(9, 16), Some(0xffb0));
        assert_eq!(map.keysym(9, 16 | 1), Some(0xff9e));
    }
}
