//! The server's keyboard as XKB describes it (key types, each key's groups and levels, the
//! modifier map) next to the core mapping it derives for core clients, and which key, with or
//! without Shift, makes *every* client read a given keysym under the current lock state.
//!
//! XKB picks a key's level from its *type*: `KEYPAD` keys reach their digits through Num Lock,
//! not Shift; `FOUR_LEVEL` keys reach AltGr levels through LevelThree; Caps Lock is part of
//! `ALPHABETIC`. Core clients apply the protocol's fixed rules to the core mapping instead. A
//! key is used for a keysym only where both agree, so Xlib, GTK, Qt and core clients (our
//! recorder) all receive the same keysym; anything else is bound to a spare keycode.

use std::collections::HashMap;

use hands_core::input::keysym::{self, CoreState, Lock, NO_SYMBOL};
use x11rb::protocol::xkb;
use x11rb::protocol::xproto::Keycode;

/// The Shift modifier bit.
pub(crate) const SHIFT_MASK: u8 = 1;
/// The Lock modifier bit.
pub(crate) const LOCK_MASK: u8 = 2;
/// The index of the canonical `ONE_LEVEL` type in every XKB keymap.
pub(crate) const ONE_LEVEL: u8 = 0;
/// The index of the canonical `TWO_LEVEL` type (Shift selects level 2).
pub(crate) const TWO_LEVEL: u8 = 1;

/// One key type: the modifiers it looks at and the level each combination selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyType {
    /// The real modifiers the type considers.
    pub mods: u8,
    /// `(modifiers, level)` of each active map entry; combinations not listed select level 0.
    pub entries: Vec<(u8, u8)>,
    /// How many levels a key of this type has.
    pub n_levels: u8,
}

impl KeyType {
    /// The level `mods` selects.
    pub(crate) fn level(&self, mods: u8) -> u8 {
        let relevant = mods & self.mods;
        self.entries
            .iter()
            .find(|(m, _)| *m == relevant)
            .map_or(0, |(_, level)| *level)
    }
}

impl From<&xkb::KeyType> for KeyType {
    fn from(t: &xkb::KeyType) -> KeyType {
        KeyType {
            mods: u16::from(t.mods_mask) as u8,
            entries: t
                .map
                .iter()
                .filter(|e| e.active)
                .map(|e| (u16::from(e.mods_mask) as u8, e.level))
                .collect(),
            n_levels: t.num_levels,
        }
    }
}

/// The keysyms of one keycode as XKB holds them (the wire form, so unchanged keys can be sent
/// back byte for byte).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct KeySyms {
    /// The type index of each group.
    pub kt_index: [u8; 4],
    /// The number of groups (low nibble) and what an out-of-range group does (high bits).
    pub group_info: u8,
    /// Keysyms per group.
    pub width: u8,
    /// `width` keysyms for each group.
    pub syms: Vec<u32>,
}

impl KeySyms {
    /// A key of one group whose levels are `levels` (one keysym: `ONE_LEVEL`; two:
    /// `TWO_LEVEL`, the second with Shift). No keysyms at all: an empty key. A lone letter is
    /// put on both levels: core clients read a lone `A` as the key of `a` and `A`, so `A`
    /// without Shift would reach them as `a`.
    pub(crate) fn of_levels(levels: &[u32]) -> KeySyms {
        match levels {
            [] => KeySyms::default(),
            [one] if keysym::to_lower(*one) != keysym::to_upper(*one) => KeySyms {
                kt_index: [TWO_LEVEL; 4],
                group_info: 1,
                width: 2,
                syms: vec![*one, *one],
            },
            [one] => KeySyms {
                kt_index: [ONE_LEVEL; 4],
                group_info: 1,
                width: 1,
                syms: vec![*one],
            },
            [plain, shifted, ..] => KeySyms {
                kt_index: [TWO_LEVEL; 4],
                group_info: 1,
                width: 2,
                syms: vec![*plain, *shifted],
            },
        }
    }

    fn n_groups(&self) -> u8 {
        self.group_info & 0x0f
    }

    /// Whether the key holds exactly `levels` in one group, as [`KeySyms::of_levels`] binds
    /// them (the server may normalise the rest of the wire form).
    pub(crate) fn holds(&self, levels: &[u32]) -> bool {
        let expected = KeySyms::of_levels(levels);
        let width = usize::from(self.width);
        let first_group: Vec<u32> = self.syms.iter().take(width).copied().collect();
        self.n_groups() == 1
            && self.kt_index[0] == expected.kt_index[0]
            && first_group == expected.syms
    }

    /// Whether the key produces nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.n_groups() == 0 || self.syms.iter().all(|&s| s == NO_SYMBOL)
    }

    /// The group a key uses when `group` is active: out-of-range groups wrap, clamp or redirect
    /// as the key says.
    fn effective_group(&self, group: u8) -> Option<u8> {
        let n = self.n_groups();
        if n == 0 {
            return None;
        }
        if group < n {
            return Some(group);
        }
        Some(match self.group_info & 0xc0 {
            0x40 => n - 1,
            0x80 => Some((self.group_info >> 4) & 0x03)
                .filter(|g| *g < n)
                .unwrap_or(0),
            _ => group % n,
        })
    }

    /// The keysym the key means in `group` with `mods`.
    pub(crate) fn keysym(&self, types: &[KeyType], group: u8, mods: u8) -> u32 {
        let Some(g) = self.effective_group(group) else {
            return NO_SYMBOL;
        };
        let Some(key_type) = types.get(usize::from(self.kt_index[usize::from(g)])) else {
            return NO_SYMBOL;
        };
        let level = usize::from(key_type.level(mods));
        let width = usize::from(self.width);
        if level >= width {
            return NO_SYMBOL;
        }
        self.syms
            .get(usize::from(g) * width + level)
            .copied()
            .unwrap_or(NO_SYMBOL)
    }
}

impl From<&xkb::KeySymMap> for KeySyms {
    fn from(m: &xkb::KeySymMap) -> KeySyms {
        KeySyms {
            kt_index: m.kt_index,
            group_info: m.group_info,
            width: m.width,
            syms: m.syms.clone(),
        }
    }
}

impl From<&KeySyms> for xkb::KeySymMap {
    fn from(k: &KeySyms) -> xkb::KeySymMap {
        xkb::KeySymMap {
            kt_index: k.kt_index,
            group_info: k.group_info,
            width: k.width,
            syms: k.syms.clone(),
        }
    }
}

/// The keyboard state typing depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct KeyState {
    /// The effective group.
    pub group: u8,
    /// Modifiers in effect without any key we press: locked and latched ones, and keys held.
    pub mods: u8,
}

/// A key to press to produce a keysym: the keycode, and whether Shift is held with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stroke {
    pub keycode: Keycode,
    pub shift: bool,
}

/// The whole keyboard: XKB's description and the core mapping derived from it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Keyboard {
    pub min_keycode: Keycode,
    pub types: Vec<KeyType>,
    /// Indexed by `keycode - min_keycode`.
    pub keys: Vec<KeySyms>,
    /// Real modifiers of each keycode, indexed like `keys`.
    pub modmap: Vec<u8>,
    /// The core mapping: `core_width` keysyms per keycode from `min_keycode`.
    pub core: Vec<u32>,
    pub core_width: usize,
}

impl Keyboard {
    /// The keycodes from `min_keycode` on, with their index.
    pub(crate) fn keycodes(&self) -> impl Iterator<Item = (usize, Keycode)> + '_ {
        (0..self.keys.len()).filter_map(|i| {
            let code = usize::from(self.min_keycode) + i;
            Keycode::try_from(code).ok().map(|c| (i, c))
        })
    }

    /// The XKB keysyms of `keycode`.
    pub(crate) fn key(&self, keycode: Keycode) -> Option<&KeySyms> {
        self.keys
            .get(usize::from(keycode.checked_sub(self.min_keycode)?))
    }

    fn core_row(&self, index: usize) -> &[u32] {
        let start = index * self.core_width;
        self.core
            .get(start..start + self.core_width)
            .unwrap_or_default()
    }

    fn key_mods(&self, keycode: Keycode) -> u8 {
        keycode
            .checked_sub(self.min_keycode)
            .and_then(|i| self.modmap.get(usize::from(i)).copied())
            .unwrap_or(0)
    }

    /// Whether `keycode` carries nothing: no keysym and no modifier.
    pub(crate) fn is_spare(&self, keycode: Keycode) -> bool {
        self.key(keycode).is_some_and(KeySyms::is_empty) && self.key_mods(keycode) == 0
    }

    /// The keysym of a key's first level in its first group: what the key "is".
    fn base_keysym(&self, index: usize) -> u32 {
        self.keys[index]
            .syms
            .iter()
            .copied()
            .find(|&s| s != NO_SYMBOL)
            .unwrap_or(NO_SYMBOL)
    }

    /// The modifier bits a key whose base keysym is `sym` sets, if such a key is in the
    /// modifier map.
    fn modifier_bits_of(&self, sym: u32) -> u8 {
        self.keycodes()
            .filter(|(i, _)| self.base_keysym(*i) == sym)
            .map(|(i, _)| self.modmap[i])
            .fold(0, |a, b| a | b)
    }

    /// A key that acts as a modifier whose base keysym is `sym` (Shift_L, Control_L …): in the
    /// modifier map, so pressing it really sets the modifier.
    pub(crate) fn modifier_key(&self, sym: u32) -> Option<Keycode> {
        self.keycodes()
            .find(|(i, _)| self.base_keysym(*i) == sym && self.modmap[*i] != 0)
            .map(|(_, code)| code)
    }

    /// How core clients read the Lock modifier: Caps Lock, Shift Lock, or nothing.
    fn lock_kind(&self) -> Lock {
        let lock_keys = self
            .keycodes()
            .filter(|(i, _)| self.modmap[*i] & LOCK_MASK != 0)
            .map(|(i, _)| self.base_keysym(i));
        let mut kind = Lock::Off;
        for sym in lock_keys {
            match sym {
                keysym::CAPS_LOCK => return Lock::Caps,
                keysym::SHIFT_LOCK => kind = Lock::Shift,
                _ => {}
            }
        }
        kind
    }

    /// The core protocol's view of a modifier state.
    fn core_state(&self, state: KeyState, mods: u8, lock: Lock, num_lock_bits: u8) -> CoreState {
        CoreState {
            shift: mods & SHIFT_MASK != 0,
            lock: if mods & LOCK_MASK != 0 {
                lock
            } else {
                Lock::Off
            },
            num_lock: num_lock_bits != 0 && mods & num_lock_bits != 0,
            group2: state.group != 0,
        }
    }

    /// The keysym `keycode` means with `mods` for XKB clients and for core clients, or `None`
    /// when they disagree.
    fn agreed_keysym(&self, index: usize, state: KeyState, mods: u8, lock: Lock, nl: u8) -> u32 {
        let xkb_sym = self.keys[index].keysym(&self.types, state.group, mods);
        let core_sym =
            keysym::core_keysym(self.core_row(index), self.core_state(state, mods, lock, nl));
        if xkb_sym == core_sym {
            xkb_sym
        } else {
            NO_SYMBOL
        }
    }

    /// For every keysym a key produces under `state`, the stroke that types it: without Shift
    /// where a key allows, else with Shift. Keysyms of characters are indexed by
    /// [`canonical`] keysym, so a layout's Unicode keysym for `€` serves `EuroSign`.
    pub(crate) fn strokes(&self, state: KeyState) -> HashMap<u32, Stroke> {
        let lock = self.lock_kind();
        let nl = self.modifier_bits_of(keysym::NUM_LOCK);
        let mut strokes = HashMap::new();
        for shift in [false, true] {
            let mods = if shift {
                state.mods | SHIFT_MASK
            } else {
                state.mods
            };
            for (i, keycode) in self.keycodes() {
                // A modifier key types nothing; pressing it would change the state.
                if self.modmap[i] != 0 {
                    continue;
                }
                let sym = self.agreed_keysym(i, state, mods, lock, nl);
                if sym != NO_SYMBOL {
                    strokes
                        .entry(canonical(sym))
                        .or_insert(Stroke { keycode, shift });
                }
            }
        }
        strokes
    }

    /// The keycode whose key means `sym` with no key pressed (under the state's locks): how a
    /// chord finds its keys. The chord's named modifiers then change what it means as on a real
    /// keyboard (`shift+Tab` arrives as ISO_Left_Tab). Every client must agree on the key.
    pub(crate) fn chord_key(&self, state: KeyState, sym: u32) -> Option<Keycode> {
        let lock = self.lock_kind();
        let nl = self.modifier_bits_of(keysym::NUM_LOCK);
        let want = canonical(sym);
        // A modifier key is found too: naming ISO_Level3_Shift or Caps_Lock means that key.
        self.keycodes()
            .find(|(i, _)| canonical(self.agreed_keysym(*i, state, state.mods, lock, nl)) == want)
            .map(|(_, code)| code)
    }

    /// Whether XKB's canonical `ONE_LEVEL` and `TWO_LEVEL` types are where they must be, so
    /// spare keys can be bound with one or two levels.
    pub(crate) fn levels_available(&self) -> u8 {
        let one = self.types.get(usize::from(ONE_LEVEL));
        let two = self.types.get(usize::from(TWO_LEVEL));
        match (one, two) {
            (Some(one), Some(two))
                if one.n_levels == 1 && two.n_levels == 2 && two.level(SHIFT_MASK) == 1 =>
            {
                2
            }
            (Some(one), _) if one.n_levels == 1 => 1,
            _ => 0,
        }
    }
}

/// The keysym that stands for the same character as `sym`, the form lookups and bindings use:
/// a Latin-1 character's own keysym, any other character's Unicode keysym (a layout's
/// `Cyrillic_zhe` and `U0436` are one; `EuroSign` and `U20AC` too), and `sym` itself for
/// keysyms that are not characters. Spare keys are bound to this form: toolkits map every
/// Unicode keysym to its character but not every legacy one (GTK drops U+2500 typed as
/// `horizconnector`).
pub(crate) fn canonical(sym: u32) -> u32 {
    match keysym::char_of(sym) {
        Some(c) if u32::from(c) > 0xff => keysym::UNICODE_OFFSET | u32::from(c),
        Some(c) => u32::from(c),
        None => sym,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_level() -> KeyType {
        KeyType {
            mods: 0,
            entries: vec![],
            n_levels: 1,
        }
    }

    fn two_level() -> KeyType {
        KeyType {
            mods: SHIFT_MASK,
            entries: vec![(SHIFT_MASK, 1)],
            n_levels: 2,
        }
    }

    fn alphabetic() -> KeyType {
        KeyType {
            mods: SHIFT_MASK | LOCK_MASK,
            entries: vec![(SHIFT_MASK, 1), (LOCK_MASK, 1)],
            n_levels: 2,
        }
    }

    /// Num Lock on Mod2 (bit 16) selects the digit; Shift does not (xkeyboard-config's KEYPAD).
    fn keypad() -> KeyType {
        KeyType {
            mods: SHIFT_MASK | 16,
            entries: vec![(16, 1)],
            n_levels: 2,
        }
    }

    fn key(type_index: u8, syms: &[u32]) -> KeySyms {
        KeySyms {
            kt_index: [type_index; 4],
            group_info: 1,
            width: syms.len() as u8,
            syms: syms.to_vec(),
        }
    }

    /// Keycodes 8..: Shift_L, a, 1/!, KP_Insert/KP_0, Num_Lock, Caps_Lock, an empty key, a key
    /// whose core row disagrees with XKB.
    fn keyboard() -> Keyboard {
        let keys = vec![
            key(ONE_LEVEL, &[keysym::SHIFT_L]),
            key(3, &['a' as u32, 'A' as u32]),
            key(TWO_LEVEL, &['1' as u32, '!' as u32]),
            key(4, &[0xff9e, 0xffb0]),
            key(ONE_LEVEL, &[keysym::NUM_LOCK]),
            key(ONE_LEVEL, &[keysym::CAPS_LOCK]),
            KeySyms::default(),
            key(TWO_LEVEL, &['x' as u32, 'y' as u32]),
        ];
        let mut core = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            let mut row = k.syms.clone();
            if i == 7 {
                row = vec!['x' as u32, 'z' as u32];
            }
            row.resize(2, NO_SYMBOL);
            core.extend(row);
        }
        Keyboard {
            min_keycode: 8,
            types: vec![
                one_level(),
                two_level(),
                one_level(),
                alphabetic(),
                keypad(),
            ],
            keys,
            modmap: vec![SHIFT_MASK, 0, 0, 0, 16, LOCK_MASK, 0, 0],
            core,
            core_width: 2,
        }
    }

    #[test]
    fn strokes_follow_types_and_agreement() {
        let kb = keyboard();
        let plain = kb.strokes(KeyState::default());
        let stroke = |code, shift| {
            Some(Stroke {
                keycode: code,
                shift,
            })
        };
        assert_eq!(plain.get(&('a' as u32)).copied(), stroke(9, false));
        assert_eq!(plain.get(&('A' as u32)).copied(), stroke(9, true));
        assert_eq!(plain.get(&('!' as u32)).copied(), stroke(10, true));
        // Shift does not reach the keypad digit, and core clients would read it: no stroke.
        assert_eq!(plain.get(&0xffb0), None);
        assert_eq!(plain.get(&0xff9e).copied(), stroke(11, false));
        // Core clients read z with Shift where XKB says y: neither is used.
        assert_eq!(plain.get(&('x' as u32)).copied(), stroke(15, false));
        assert_eq!(plain.get(&('y' as u32)), None);
        // Modifier keys type nothing.
        assert_eq!(plain.get(&keysym::SHIFT_L), None);

        // Num Lock on: the digit without Shift, for XKB and core clients alike.
        let num_lock = kb.strokes(KeyState { group: 0, mods: 16 });
        assert_eq!(num_lock.get(&0xffb0).copied(), stroke(11, false));
        // Caps Lock on: the upper case without Shift; the lower case with Shift for XKB but
        // not for core clients (they upper-case it), so no key types it.
        let caps = kb.strokes(KeyState {
            group: 0,
            mods: LOCK_MASK,
        });
        assert_eq!(caps.get(&('A' as u32)).copied(), stroke(9, false));
        assert_eq!(caps.get(&('a' as u32)), None);
    }

    #[test]
    fn chords_find_keys_by_what_they_are() {
        let kb = keyboard();
        let state = KeyState::default();
        assert_eq!(kb.chord_key(state, 'a' as u32), Some(9));
        assert_eq!(kb.chord_key(state, '1' as u32), Some(10));
        // Keys reached only through a modifier are not chord keys.
        assert_eq!(kb.chord_key(state, '!' as u32), None);
        assert_eq!(kb.chord_key(state, 0xffb0), None);
        assert_eq!(
            kb.chord_key(KeyState { group: 0, mods: 16 }, 0xffb0),
            Some(11)
        );
        assert_eq!(kb.modifier_key(keysym::SHIFT_L), Some(8));
        assert_eq!(kb.chord_key(state, keysym::CAPS_LOCK), Some(13));
        assert!(kb.is_spare(14));
        assert!(!kb.is_spare(13));
        assert_eq!(kb.levels_available(), 2);
    }

    #[test]
    fn characters_are_looked_up_and_bound_as_unicode_keysyms() {
        assert_eq!(canonical(0x6d6), 0x0100_0436, "Cyrillic_zhe");
        assert_eq!(canonical(0x0100_0436), 0x0100_0436);
        assert_eq!(canonical(0x20ac), 0x0100_20ac, "EuroSign");
        assert_eq!(canonical(0x8a3), 0x0100_2500, "horizconnector");
        assert_eq!(canonical(0xe9), 0xe9);
        assert_eq!(canonical(0x0100_00e9), 0xe9);
        assert_eq!(canonical(0xffb0), 0xffb0, "KP_0 is no character");
    }

    #[test]
    fn out_of_range_groups() {
        let mut k = key(TWO_LEVEL, &['q' as u32, 'Q' as u32, 0x6ca, 0x6ea]);
        k.width = 2;
        k.group_info = 2;
        let types = [one_level(), two_level()];
        assert_eq!(k.keysym(&types, 1, 0), 0x6ca);
        assert_eq!(k.keysym(&types, 2, 0), 'q' as u32, "wraps");
        k.group_info = 2 | 0x40;
        assert_eq!(k.keysym(&types, 3, SHIFT_MASK), 0x6ea, "clamps");
        assert_eq!(KeySyms::default().keysym(&types, 0, 0), NO_SYMBOL);
        assert_eq!(KeySyms::of_levels(&[0x41, 0x42]).kt_index, [TWO_LEVEL; 4]);
        // A lone letter on both levels, anything else on one.
        assert_eq!(KeySyms::of_levels(&[0x41]).syms, vec![0x41, 0x41]);
        assert_eq!(KeySyms::of_levels(&[0x2603]).kt_index, [ONE_LEVEL; 4]);
        assert!(KeySyms::of_levels(&[0x41]).holds(&[0x41]));
        assert!(KeySyms::of_levels(&[]).is_empty());
    }
}
