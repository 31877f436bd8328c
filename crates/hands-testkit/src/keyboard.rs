//! The recorder's copy of the keyboard and modifier mappings, and the core protocol's rules for
//! turning a key event into a keysym.
//!
//! The rules are those of the X protocol specification, section 5 ("Keyboards"), for group 1:
//! column 0 without Shift, column 1 with it; a lone lower-case letter in column 0 implies its
//! upper case in column 1; Caps Lock upper-cases letters. Groups (Mode_switch) and Num Lock on the
//! keypad are not interpreted: the driver under test never relies on them.

use hands_core::input::{Modifier, keysym};
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
    /// Whether the Lock modifier is Caps Lock (it upper-cases letters) rather than Shift Lock.
    lock_is_caps: bool,
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
            lock_is_caps: true,
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
    /// modifiers, Shift first) to learn which state bit Alt and Super are on, and what Lock is.
    pub(crate) fn set_modifier_mapping(&mut self, per_modifier: usize, keycodes: &[Keycode]) {
        let mut masks = [0u16; 4];
        let mut lock_is_caps = false;
        for (index, codes) in keycodes.chunks(per_modifier.max(1)).take(8).enumerate() {
            let bit = 1u16 << index;
            for &code in codes.iter().filter(|&&c| c != 0) {
                let sym = self.row(code).first().copied().unwrap_or(NO_SYMBOL);
                let slot = match sym {
                    0xffe1 | 0xffe2 => Some(Modifier::Shift),
                    0xffe3 | 0xffe4 => Some(Modifier::Control),
                    // Meta_L, Meta_R, Alt_L, Alt_R.
                    0xffe7..=0xffea => Some(Modifier::Alt),
                    0xffeb | 0xffec => Some(Modifier::Super),
                    0xffe5 if index == 1 => {
                        lock_is_caps = true;
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
        self.lock_is_caps = lock_is_caps;
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
        let sym = translate(self.row(keycode), state, self.lock_is_caps);
        (sym != NO_SYMBOL).then_some(sym)
    }
}

/// The core protocol's group-1 rule: pick column 0 or 1 by Shift, with a lone lower-case letter
/// implying its upper case, and Caps Lock upper-casing letters.
pub(crate) fn translate(row: &[Keysym], state: u16, lock_is_caps: bool) -> Keysym {
    let first = row.first().copied().unwrap_or(NO_SYMBOL);
    let second = row.get(1).copied().unwrap_or(NO_SYMBOL);
    let (lower, upper) = if second == NO_SYMBOL {
        let implied = upper_case(first);
        (first, implied)
    } else {
        (first, second)
    };
    let shift = state & SHIFT_MASK != 0;
    let lock = state & LOCK_MASK != 0;
    match (shift, lock) {
        (false, false) => lower,
        (false, true) if lock_is_caps => upper_case(lower),
        (true, true) if lock_is_caps => upper_case(upper),
        // Shift, or Shift Lock.
        _ => upper,
    }
}

/// The upper-case keysym of a letter keysym, or the keysym itself.
fn upper_case(sym: Keysym) -> Keysym {
    let Some(c) = keysym::to_char(sym) else {
        return sym;
    };
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) if u != c => keysym::of_char(u),
        _ => sym,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(row: &[Keysym], state: u16, expect: Keysym) {
        assert_eq!(
            translate(row, state, true),
            expect,
            "row {row:x?} state {state:#x}"
        );
    }

    #[test]
    fn core_protocol_columns() {
        let a = 'a' as u32;
        let big_a = 'A' as u32;
        check(&[a, NO_SYMBOL], 0, a);
        check(&[a, NO_SYMBOL], SHIFT_MASK, big_a);
        check(&[a, big_a], SHIFT_MASK, big_a);
        check(&[a, NO_SYMBOL], LOCK_MASK, big_a);
        check(&['1' as u32, '!' as u32], 0, '1' as u32);
        check(&['1' as u32, '!' as u32], SHIFT_MASK, '!' as u32);
        check(&['1' as u32, '!' as u32], LOCK_MASK, '1' as u32);
        // A non-letter alone in column 0 means the same with Shift.
        check(&[0xff0d, NO_SYMBOL], SHIFT_MASK, 0xff0d);
        check(&[0x20ac, NO_SYMBOL], SHIFT_MASK, 0x20ac);
        // Latin-1 and Cyrillic letters (legacy keysyms) follow the letter rule too.
        check(&[0xe9, NO_SYMBOL], SHIFT_MASK, 0xc9);
        check(&[0x6d6, NO_SYMBOL], SHIFT_MASK, 0x6f6);
        // Control does not change the keysym.
        check(&['s' as u32, 'S' as u32], 4, 's' as u32);
        check(&[], 0, NO_SYMBOL);
    }

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
    }
}
