//! X keysyms: which keysym means exactly which character, key names looked up case-insensitively,
//! and the X core protocol's rule for the keysym a key event means.
//!
//! A *character keysym* is one whose only meaning is a character: Latin-1, the legacy character
//! sets (Cyrillic, Greek, the euro sign …) and Unicode keysyms (`0x0100_0000 | code point`).
//! Function keys (BackSpace, Escape), keypad keys (KP_0), dead keys (dead_acute) and modifiers
//! are not, even where the keysym tables give them a code point: typing U+0301 must produce
//! U+0301, not arm a dead key, and U+0008 is not the BackSpace key.

use std::collections::HashMap;
use std::sync::LazyLock;

/// No symbol: an empty slot in a keycode's list.
pub const NO_SYMBOL: u32 = 0;
/// Return.
pub const RETURN: u32 = 0xff0d;
/// Tab.
pub const TAB: u32 = 0xff09;
/// Left Shift.
pub const SHIFT_L: u32 = 0xffe1;
/// Left Control.
pub const CONTROL_L: u32 = 0xffe3;
/// Left Alt.
pub const ALT_L: u32 = 0xffe9;
/// Left Super.
pub const SUPER_L: u32 = 0xffeb;
/// Caps Lock.
pub const CAPS_LOCK: u32 = 0xffe5;
/// Shift Lock.
pub const SHIFT_LOCK: u32 = 0xffe6;
/// Num Lock.
pub const NUM_LOCK: u32 = 0xff7f;
/// The offset of Unicode keysyms: `0x0100_0000 | code point`.
pub const UNICODE_OFFSET: u32 = 0x0100_0000;
/// The last Unicode keysym.
const UNICODE_LAST: u32 = 0x0110_ffff;
/// Keysyms from here to 0xffff are keyboard functions (ISO and dead keys, TTY functions,
/// cursor, keypad, F keys, modifiers), never characters.
const FUNCTION_FIRST: u32 = 0xfe00;
/// The keypad keysyms KP_Space … KP_Equal (the core protocol's "keypad" test).
const KEYPAD: std::ops::RangeInclusive<u32> = 0xff80..=0xffbd;

/// The keysym that means exactly `c`: newline (and carriage return) is Return, tab is Tab; a
/// Latin-1 character is its own keysym; a character with a legacy character keysym uses it;
/// anything else is its Unicode keysym. `None` for the other control characters (U+0000–U+001F,
/// U+007F–U+009F): no keysym means one of them (BackSpace is a key, not U+0008).
pub fn of_char(c: char) -> Option<u32> {
    match c {
        '\n' | '\r' => Some(RETURN),
        '\t' => Some(TAB),
        c if c.is_control() => None,
        ' '..='~' | '\u{a0}'..='\u{ff}' => Some(c as u32),
        _ => Some(match x11_keysymdef::lookup_by_codepoint(c) {
            Some(record) if char_of(record.keysym) == Some(c) => record.keysym,
            _ => UNICODE_OFFSET | c as u32,
        }),
    }
}

/// The character a character keysym means; `None` for every other keysym (function, keypad,
/// dead and modifier keys, vendor keys, `NoSymbol`).
pub fn char_of(sym: u32) -> Option<char> {
    let c = match sym {
        0x20..=0x7e | 0xa0..=0xff => char::from_u32(sym),
        s if (UNICODE_OFFSET + 0x20..=UNICODE_LAST).contains(&s) => {
            char::from_u32(s - UNICODE_OFFSET)
        }
        0x100..FUNCTION_FIRST => x11_keysymdef::lookup_by_keysym(sym).map(|r| r.unicode),
        _ => None,
    }?;
    (!c.is_control() && c != '\0').then_some(c)
}

/// The character a key with this keysym inserts into a text field: a character keysym's
/// character, `'\n'` for Return and KP_Enter, `'\t'` for Tab, and the keypad's characters
/// (`KP_0` inserts `'0'`). `None` for keys that insert nothing (BackSpace, arrows, dead keys).
pub fn to_char(sym: u32) -> Option<char> {
    match sym {
        RETURN | 0xff8d => Some('\n'),
        TAB | 0xff89 => Some('\t'),
        s if KEYPAD.contains(&s) => x11_keysymdef::lookup_by_keysym(s)
            .map(|r| r.unicode)
            .filter(|c| !c.is_control()),
        s => char_of(s),
    }
}

/// Whether `sym` is a keypad keysym (`KP_Space` … `KP_Equal`).
pub fn is_keypad(sym: u32) -> bool {
    KEYPAD.contains(&sym)
}

/// The lower-case keysym of a cased letter keysym (`A` → `a`, `Cyrillic_ZHE` → `Cyrillic_zhe`),
/// or `sym` itself.
pub fn to_lower(sym: u32) -> u32 {
    convert_case(sym, |c| c.to_lowercase())
}

/// The upper-case keysym of a cased letter keysym (`a` → `A`, `eacute` → `Eacute`), or `sym`
/// itself.
pub fn to_upper(sym: u32) -> u32 {
    convert_case(sym, |c| c.to_uppercase())
}

fn convert_case<I: Iterator<Item = char>>(sym: u32, convert: impl Fn(char) -> I) -> u32 {
    let Some(c) = char_of(sym) else { return sym };
    let mut converted = convert(c);
    match (converted.next(), converted.next()) {
        (Some(other), None) if other != c => of_char(other).unwrap_or(sym),
        _ => sym,
    }
}

/// Whether `sym` is a lower-case letter with an upper-case form.
pub fn is_lower_letter(sym: u32) -> bool {
    to_upper(sym) != sym
}

/// A keysym by name: the exact X name first (`KP_Enter`, `Aacute`), then the same name in any
/// case (`kp_enter`, `KP_ENTER`, `page_down`). Where two keysyms differ only by case (`aacute`
/// and `Aacute`, `Cyrillic_zhe` and `Cyrillic_ZHE`), a name in neither exact form means the
/// lower-case letter, the key that carries both. Returns the keysym and its canonical name.
pub fn by_name(name: &str) -> Option<(u32, &'static str)> {
    if let Some(record) = x11_keysymdef::lookup_by_name(name) {
        return Some((record.keysym, record.names.first().copied().unwrap_or("")));
    }
    static FOLDED: LazyLock<HashMap<String, (u32, &'static str)>> = LazyLock::new(|| {
        let mut folded: HashMap<String, (u32, &'static str)> = HashMap::new();
        // Every named keysym of the tables lies in these ranges.
        let values = (0..=0x2fffu32).chain(0xf000..=0xffff).chain([0x00ff_ffff]);
        for sym in values {
            let Some(record) = x11_keysymdef::lookup_by_keysym(sym) else {
                continue;
            };
            for name in record.names {
                folded
                    .entry(name.to_ascii_lowercase())
                    .and_modify(|kept| {
                        // Prefer the lower-case letter of a case pair.
                        if to_lower(kept.0) == sym {
                            *kept = (sym, name);
                        }
                    })
                    .or_insert((sym, name));
            }
        }
        folded
    });
    FOLDED.get(&name.to_ascii_lowercase()).copied()
}

/// The state of Lock as the core protocol sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lock {
    /// Lock is off, or the Lock modifier has no Caps Lock or Shift Lock key.
    #[default]
    Off,
    /// Caps Lock is on: letters are upper-cased.
    Caps,
    /// Shift Lock is on: it acts as Shift.
    Shift,
}

/// The modifier state the core protocol's keysym rule looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CoreState {
    /// Shift is held.
    pub shift: bool,
    /// Lock, and what it means.
    pub lock: Lock,
    /// The modifier that Num_Lock is on is set.
    pub num_lock: bool,
    /// The second group (Mode_switch) is active.
    pub group2: bool,
}

/// The keysym a key event means under the X core protocol's rules (X Window System Protocol,
/// section 5, "Keyboards"), given all the keysyms of the keycode: the first two for group 1,
/// the next two for group 2; a lone letter stands for both its cases; with Num Lock on,
/// a keypad keysym in the second position wins unless Shift (or Shift Lock) is on; Caps Lock
/// upper-cases letters. [`NO_SYMBOL`] when the key means nothing.
pub fn core_keysym(row: &[u32], state: CoreState) -> u32 {
    let at = |i: usize| row.get(i).copied().unwrap_or(NO_SYMBOL);
    let mut pair = (at(0), at(1));
    if state.group2 && (at(2), at(3)) != (NO_SYMBOL, NO_SYMBOL) {
        pair = (at(2), at(3));
    }
    let (first, second) = match pair {
        // A lone letter with both cases stands for its lower and upper case.
        (first, NO_SYMBOL) if to_lower(first) != to_upper(first) => {
            (to_lower(first), to_upper(first))
        }
        (first, NO_SYMBOL) => (first, first),
        pair => pair,
    };
    let shift_like = state.shift || state.lock == Lock::Shift;
    if state.num_lock && is_keypad(second) {
        return if shift_like { first } else { second };
    }
    match (state.shift, state.lock) {
        (false, Lock::Off) => first,
        (false, Lock::Caps) => to_upper(first),
        (true, Lock::Caps) => to_upper(second),
        _ => second,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_map_to_character_keysyms_only() {
        // Combining marks are characters, never dead keys.
        assert_eq!(of_char('\u{301}'), Some(0x0100_0301));
        assert_eq!(of_char('\u{308}'), Some(0x0100_0308));
        assert_eq!(of_char('\u{30a}'), Some(0x0100_030a));
        // Legacy character keysyms where they mean exactly the character.
        assert_eq!(of_char('€'), Some(0x20ac));
        assert_eq!(of_char('ж'), Some(0x6d6));
        assert_eq!(of_char('é'), Some(0xe9));
        assert_eq!(of_char('日'), Some(0x0100_65e5));
        // Control characters have no keysym, except the three that mean keys.
        assert_eq!(of_char('\u{8}'), None);
        assert_eq!(of_char('\u{1b}'), None);
        assert_eq!(of_char('\u{7f}'), None);
        assert_eq!(of_char('\u{85}'), None);
        assert_eq!(of_char('\u{0}'), None);
        assert_eq!(of_char('\n'), Some(RETURN));
        assert_eq!(of_char('\r'), Some(RETURN));
        assert_eq!(of_char('\t'), Some(TAB));
        // Function, keypad and dead keys are not characters.
        assert_eq!(char_of(0xff08), None, "BackSpace");
        assert_eq!(char_of(0xffb0), None, "KP_0");
        assert_eq!(char_of(0xfe51), None, "dead_acute");
        assert_eq!(char_of(0x1008_ff12), None, "XF86AudioMute");
        assert_eq!(char_of(0x0100_0008), None, "a Unicode keysym of a control");
        // What keys insert.
        assert_eq!(to_char(0xffb0), Some('0'));
        assert_eq!(to_char(0xff8d), Some('\n'));
        assert_eq!(to_char(0xff08), None);
        assert_eq!(to_char(0xfe51), None);
    }

    #[test]
    fn every_non_control_character_round_trips() {
        // Every code point a text can hold (outside the controls) has a keysym that means it.
        for cp in (0x20u32..0x3_0000).chain([0x10_fffd]) {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            if c.is_control() {
                continue;
            }
            let sym = of_char(c).unwrap_or_else(|| panic!("{c:?} has a keysym"));
            assert!(
                !(FUNCTION_FIRST..=0xffff).contains(&sym),
                "U+{cp:04X} maps to function keysym {sym:#x}"
            );
            assert_eq!(char_of(sym), Some(c), "U+{cp:04X} via {sym:#x}");
        }
    }

    #[test]
    fn names_are_case_insensitive() {
        for (name, sym) in [
            ("KP_Enter", 0xff8d),
            ("kp_enter", 0xff8d),
            ("KP_ENTER", 0xff8d),
            ("NEXT", 0xff56),
            ("CAPS_LOCK", 0xffe5),
            ("iso_level3_shift", 0xfe03),
            ("Aacute", 0xc1),
            ("aacute", 0xe1),
            ("AACUTE", 0xe1),
            ("Cyrillic_ZHE", 0x6f6),
            ("cyrillic_zhe", 0x6d6),
            ("DEAD_ACUTE", 0xfe51),
        ] {
            assert_eq!(by_name(name).map(|n| n.0), Some(sym), "{name}");
        }
        assert_eq!(by_name("kp_enter").map(|n| n.1), Some("KP_Enter"));
        assert_eq!(by_name("frobnicate"), None);
    }

    fn core(row: &[u32], shift: bool, lock: Lock, num_lock: bool) -> u32 {
        core_keysym(
            row,
            CoreState {
                shift,
                lock,
                num_lock,
                group2: false,
            },
        )
    }

    #[test]
    fn core_protocol_rules() {
        let (a, big_a) = ('a' as u32, 'A' as u32);
        assert_eq!(core(&[a, 0], false, Lock::Off, false), a);
        assert_eq!(core(&[a, 0], true, Lock::Off, false), big_a);
        assert_eq!(core(&[a, 0], false, Lock::Caps, false), big_a);
        assert_eq!(core(&[big_a, 0], false, Lock::Off, false), a);
        assert_eq!(core(&[a, big_a], true, Lock::Caps, false), big_a);
        let one = ['1' as u32, '!' as u32];
        assert_eq!(core(&one, false, Lock::Caps, false), '1' as u32);
        assert_eq!(core(&one, false, Lock::Shift, false), '!' as u32);
        assert_eq!(core(&[0xff0d, 0], true, Lock::Off, false), 0xff0d);
        // The keypad: Num Lock picks the digit, Shift undoes it.
        let kp0 = [0xff9e, 0xffb0];
        assert_eq!(core(&kp0, false, Lock::Off, false), 0xff9e);
        assert_eq!(core(&kp0, false, Lock::Off, true), 0xffb0);
        assert_eq!(core(&kp0, true, Lock::Off, true), 0xff9e);
        assert_eq!(core(&kp0, true, Lock::Off, false), 0xffb0);
        // Latin-1 and Cyrillic letters follow the letter rule.
        assert_eq!(core(&[0xe9, 0], true, Lock::Off, false), 0xc9);
        assert_eq!(core(&[0x6d6, 0], true, Lock::Off, false), 0x6f6);
        // The second group when it has symbols.
        let row = [a, big_a, 0x6c6, 0x6e6];
        let group2 = CoreState {
            group2: true,
            ..CoreState::default()
        };
        assert_eq!(core_keysym(&row, group2), 0x6c6);
        assert_eq!(core_keysym(&[a, big_a], group2), a);
        assert_eq!(core(&[], false, Lock::Off, false), NO_SYMBOL);
    }
}
