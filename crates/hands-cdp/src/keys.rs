//! From X keysyms (the key vocabulary of hands-core) to the DOM `key`, `code` and Windows virtual key code that `Input.dispatchKeyEvent` needs, on a US layout.

use hands_core::input::{Key, Modifier, ModifierSet, keysym};

/// The CDP `modifiers` bit of Alt.
pub const MOD_ALT: i64 = 1;
/// The CDP `modifiers` bit of Control.
pub const MOD_CONTROL: i64 = 2;
/// The CDP `modifiers` bit of Meta (Command, Windows).
pub const MOD_META: i64 = 4;
/// The CDP `modifiers` bit of Shift.
pub const MOD_SHIFT: i64 = 8;

/// One key as the DOM names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomKey {
    /// `KeyboardEvent.key` without Shift (`a`, `Enter`, `ArrowDown`, `é`).
    pub key: String,
    /// `KeyboardEvent.key` with Shift held (`A`, `!`); the same as `key` when Shift changes
    /// nothing.
    pub shifted: String,
    /// `KeyboardEvent.code` (`KeyA`, `Enter`, `ShiftLeft`); empty for characters with no key on
    /// a US keyboard.
    pub code: &'static str,
    /// `windowsVirtualKeyCode` / `keyCode`.
    pub key_code: i64,
    /// `KeyboardEvent.location`: 0 standard, 1 left, 2 right, 3 numpad.
    pub location: i64,
    /// The text the key types without modifiers (`\r` for Enter), if any.
    pub text: Option<String>,
    /// The text with Shift held.
    pub shifted_text: Option<String>,
    /// The modifier this key is, if it is one.
    pub modifier: Option<Modifier>,
}

impl DomKey {
    fn named(key: &str, code: &'static str, key_code: i64, location: i64) -> DomKey {
        DomKey {
            key: key.to_owned(),
            shifted: key.to_owned(),
            code,
            key_code,
            location,
            text: None,
            shifted_text: None,
            modifier: None,
        }
    }

    fn typing(key: &str, shifted: &str, code: &'static str, key_code: i64) -> DomKey {
        DomKey {
            key: key.to_owned(),
            shifted: shifted.to_owned(),
            code,
            key_code,
            location: 0,
            text: Some(key.to_owned()),
            shifted_text: Some(shifted.to_owned()),
            modifier: None,
        }
    }

    fn with_text(mut self, text: &str) -> DomKey {
        self.text = Some(text.to_owned());
        self.shifted_text = Some(text.to_owned());
        self
    }

    fn modifier(mut self, m: Modifier) -> DomKey {
        self.modifier = Some(m);
        self
    }

    /// The `key` value with these modifiers held.
    pub fn key_with(&self, modifiers: ModifierSet) -> &str {
        if modifiers.contains(Modifier::Shift) {
            &self.shifted
        } else {
            &self.key
        }
    }

    /// The text typed with these modifiers held: none when Control, Alt or Meta is held (a
    /// shortcut types nothing).
    pub fn text_with(&self, modifiers: ModifierSet) -> Option<&str> {
        if modifiers.contains(Modifier::Control)
            || modifiers.contains(Modifier::Alt)
            || modifiers.contains(Modifier::Super)
        {
            return None;
        }
        if modifiers.contains(Modifier::Shift) {
            self.shifted_text.as_deref()
        } else {
            self.text.as_deref()
        }
    }
}

/// The CDP `modifiers` bit mask of a set.
pub fn modifier_bits(set: ModifierSet) -> i64 {
    set.iter()
        .map(|m| match m {
            Modifier::Alt => MOD_ALT,
            Modifier::Control => MOD_CONTROL,
            Modifier::Super => MOD_META,
            Modifier::Shift => MOD_SHIFT,
        })
        .fold(0, |a, b| a | b)
}

/// The US-layout row of shifted punctuation: (unshifted, shifted, code, keyCode).
const PUNCTUATION: [(char, char, &str, i64); 11] = [
    ('`', '~', "Backquote", 192),
    ('-', '_', "Minus", 189),
    ('=', '+', "Equal", 187),
    ('[', '{', "BracketLeft", 219),
    (']', '}', "BracketRight", 221),
    ('\\', '|', "Backslash", 220),
    (';', ':', "Semicolon", 186),
    ('\'', '"', "Quote", 222),
    (',', '<', "Comma", 188),
    ('.', '>', "Period", 190),
    ('/', '?', "Slash", 191),
];

const SHIFTED_DIGITS: [char; 10] = [')', '!', '@', '#', '$', '%', '^', '&', '*', '('];

/// The DOM definition of a key. Every key has one: a character with no US key becomes a key whose
/// `key` and text are that character (Chromium inserts it as typed).
pub fn dom_key(key: &Key) -> DomKey {
    let sym = key.keysym();
    if let Some(dom) = named(sym) {
        return dom;
    }
    let Some(c) = keysym::to_char(sym) else {
        return DomKey::named("Unidentified", "", 0, 0);
    };
    if c.is_ascii_lowercase() || c.is_ascii_uppercase() {
        let lower = c.to_ascii_lowercase();
        let upper = c.to_ascii_uppercase();
        let mut dom = DomKey::typing(
            &lower.to_string(),
            &upper.to_string(),
            letter_code(upper),
            upper as i64,
        );
        // An upper-case key name ("A") types the upper-case letter, as xdotool does.
        if c.is_ascii_uppercase() {
            dom.key = upper.to_string();
            dom.text = Some(upper.to_string());
        }
        return dom;
    }
    if let Some(d) = c.to_digit(10) {
        let shifted = SHIFTED_DIGITS[d as usize];
        return DomKey::typing(
            &c.to_string(),
            &shifted.to_string(),
            digit_code(d),
            48 + i64::from(d),
        );
    }
    if c == ' ' {
        return DomKey::typing(" ", " ", "Space", 32);
    }
    for (plain, shifted, code, key_code) in PUNCTUATION {
        if c == plain || c == shifted {
            let mut dom = DomKey::typing(&plain.to_string(), &shifted.to_string(), code, key_code);
            if c == shifted {
                // Naming the shifted character types it without Shift being named.
                dom.key = shifted.to_string();
                dom.text = Some(shifted.to_string());
            }
            return dom;
        }
    }
    if let Some(d) = SHIFTED_DIGITS.iter().position(|s| *s == c) {
        let mut dom = DomKey::typing(
            &c.to_string(),
            &c.to_string(),
            digit_code(d as u32),
            48 + d as i64,
        );
        dom.key = c.to_string();
        return dom;
    }
    DomKey::typing(&c.to_string(), &c.to_string(), "", 0)
}

fn letter_code(upper: char) -> &'static str {
    const CODES: [&str; 26] = [
        "KeyA", "KeyB", "KeyC", "KeyD", "KeyE", "KeyF", "KeyG", "KeyH", "KeyI", "KeyJ", "KeyK",
        "KeyL", "KeyM", "KeyN", "KeyO", "KeyP", "KeyQ", "KeyR", "KeyS", "KeyT", "KeyU", "KeyV",
        "KeyW", "KeyX", "KeyY", "KeyZ",
    ];
    CODES[(upper as u8 - b'A') as usize]
}

fn digit_code(d: u32) -> &'static str {
    const CODES: [&str; 10] = [
        "Digit0", "Digit1", "Digit2", "Digit3", "Digit4", "Digit5", "Digit6", "Digit7", "Digit8",
        "Digit9",
    ];
    CODES[d as usize % 10]
}

fn named(sym: u32) -> Option<DomKey> {
    const F_CODES: [&str; 24] = [
        "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F11", "F12", "F13", "F14",
        "F15", "F16", "F17", "F18", "F19", "F20", "F21", "F22", "F23", "F24",
    ];
    const NUMPAD: [&str; 10] = [
        "Numpad0", "Numpad1", "Numpad2", "Numpad3", "Numpad4", "Numpad5", "Numpad6", "Numpad7",
        "Numpad8", "Numpad9",
    ];
    Some(match sym {
        0xff0d => DomKey::named("Enter", "Enter", 13, 0).with_text("\r"),
        0xff8d => DomKey::named("Enter", "NumpadEnter", 13, 3).with_text("\r"),
        0xff09 | 0xfe20 => DomKey::named("Tab", "Tab", 9, 0),
        0xff1b => DomKey::named("Escape", "Escape", 27, 0),
        0xff08 => DomKey::named("Backspace", "Backspace", 8, 0),
        0xffff => DomKey::named("Delete", "Delete", 46, 0),
        0xff63 => DomKey::named("Insert", "Insert", 45, 0),
        0xff50 => DomKey::named("Home", "Home", 36, 0),
        0xff57 => DomKey::named("End", "End", 35, 0),
        0xff55 => DomKey::named("PageUp", "PageUp", 33, 0),
        0xff56 => DomKey::named("PageDown", "PageDown", 34, 0),
        0xff51 => DomKey::named("ArrowLeft", "ArrowLeft", 37, 0),
        0xff52 => DomKey::named("ArrowUp", "ArrowUp", 38, 0),
        0xff53 => DomKey::named("ArrowRight", "ArrowRight", 39, 0),
        0xff54 => DomKey::named("ArrowDown", "ArrowDown", 40, 0),
        0xffe1 => DomKey::named("Shift", "ShiftLeft", 16, 1).modifier(Modifier::Shift),
        0xffe2 => DomKey::named("Shift", "ShiftRight", 16, 2).modifier(Modifier::Shift),
        0xffe3 => DomKey::named("Control", "ControlLeft", 17, 1).modifier(Modifier::Control),
        0xffe4 => DomKey::named("Control", "ControlRight", 17, 2).modifier(Modifier::Control),
        0xffe9 => DomKey::named("Alt", "AltLeft", 18, 1).modifier(Modifier::Alt),
        0xffea => DomKey::named("Alt", "AltRight", 18, 2).modifier(Modifier::Alt),
        0xffeb | 0xffe7 => DomKey::named("Meta", "MetaLeft", 91, 1).modifier(Modifier::Super),
        0xffec | 0xffe8 => DomKey::named("Meta", "MetaRight", 92, 2).modifier(Modifier::Super),
        0xfe03 => DomKey::named("AltGraph", "AltRight", 225, 2),
        0xffe5 => DomKey::named("CapsLock", "CapsLock", 20, 0),
        0xff7f => DomKey::named("NumLock", "NumLock", 144, 0),
        0xff14 => DomKey::named("ScrollLock", "ScrollLock", 145, 0),
        0xff61 => DomKey::named("PrintScreen", "PrintScreen", 44, 0),
        0xff13 => DomKey::named("Pause", "Pause", 19, 0),
        0xff67 => DomKey::named("ContextMenu", "ContextMenu", 93, 0),
        0x1008_ff12 => DomKey::named("AudioVolumeMute", "AudioVolumeMute", 173, 0),
        0x1008_ff11 => DomKey::named("AudioVolumeDown", "AudioVolumeDown", 174, 0),
        0x1008_ff13 => DomKey::named("AudioVolumeUp", "AudioVolumeUp", 175, 0),
        0x1008_ff14 => DomKey::named("MediaPlayPause", "MediaPlayPause", 179, 0),
        0x1008_ff15 => DomKey::named("MediaStop", "MediaStop", 178, 0),
        0x1008_ff16 => DomKey::named("MediaTrackPrevious", "MediaTrackPrevious", 177, 0),
        0x1008_ff17 => DomKey::named("MediaTrackNext", "MediaTrackNext", 176, 0),
        0x1008_ff26 => DomKey::named("BrowserBack", "BrowserBack", 166, 0),
        0x1008_ff27 => DomKey::named("BrowserForward", "BrowserForward", 167, 0),
        0x1008_ff29 => DomKey::named("BrowserRefresh", "BrowserRefresh", 168, 0),
        0x1008_ff1b => DomKey::named("BrowserSearch", "BrowserSearch", 170, 0),
        0x1008_ff18 => DomKey::named("BrowserHome", "BrowserHome", 172, 0),
        0xffbe..=0xffd5 => {
            let n = (sym - 0xffbe) as usize;
            DomKey::named(F_CODES[n], F_CODES[n], 112 + n as i64, 0)
        }
        0xffb0..=0xffb9 => {
            let d = sym - 0xffb0;
            let digit = char::from_digit(d, 10).unwrap_or('0').to_string();
            let mut dom = DomKey::typing(&digit, &digit, NUMPAD[d as usize], 96 + i64::from(d));
            dom.location = 3;
            dom
        }
        0xffab => numpad_op("+", "NumpadAdd", 107),
        0xffad => numpad_op("-", "NumpadSubtract", 109),
        0xffaa => numpad_op("*", "NumpadMultiply", 106),
        0xffaf => numpad_op("/", "NumpadDivide", 111),
        0xffae => numpad_op(".", "NumpadDecimal", 110),
        _ => return None,
    })
}

fn numpad_op(c: &str, code: &'static str, key_code: i64) -> DomKey {
    let mut dom = DomKey::typing(c, c, code, key_code);
    dom.location = 3;
    dom
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, key: &str, shifted: &str, code: &str, key_code: i64, text: Option<&str>) {
        let dom = dom_key(&Key::parse(name).unwrap());
        assert_eq!(
            (
                dom.key.as_str(),
                dom.shifted.as_str(),
                dom.code,
                dom.key_code,
                dom.text.as_deref()
            ),
            (key, shifted, code, key_code, text),
            "{name}"
        );
    }

    #[test]
    fn keys_map_to_dom_names() {
        check("a", "a", "A", "KeyA", 65, Some("a"));
        check("A", "A", "A", "KeyA", 65, Some("A"));
        check("z", "z", "Z", "KeyZ", 90, Some("z"));
        check("5", "5", "%", "Digit5", 53, Some("5"));
        check("!", "!", "!", "Digit1", 49, Some("!"));
        check("?", "?", "?", "Slash", 191, Some("?"));
        check("/", "/", "?", "Slash", 191, Some("/"));
        check("space", " ", " ", "Space", 32, Some(" "));
        check("Enter", "Enter", "Enter", "Enter", 13, Some("\r"));
        check("Return", "Enter", "Enter", "Enter", 13, Some("\r"));
        check("Tab", "Tab", "Tab", "Tab", 9, None);
        check("Escape", "Escape", "Escape", "Escape", 27, None);
        check("BackSpace", "Backspace", "Backspace", "Backspace", 8, None);
        check("Delete", "Delete", "Delete", "Delete", 46, None);
        check("ArrowDown", "ArrowDown", "ArrowDown", "ArrowDown", 40, None);
        check("PageUp", "PageUp", "PageUp", "PageUp", 33, None);
        check("F5", "F5", "F5", "F5", 116, None);
        check("F12", "F12", "F12", "F12", 123, None);
        check("ctrl", "Control", "Control", "ControlLeft", 17, None);
        check("Shift", "Shift", "Shift", "ShiftLeft", 16, None);
        check("Meta", "Meta", "Meta", "MetaLeft", 91, None);
        check("alt", "Alt", "Alt", "AltLeft", 18, None);
        check("KP_Add", "+", "+", "NumpadAdd", 107, Some("+"));
        check("KP_5", "5", "5", "Numpad5", 101, Some("5"));
        check("é", "é", "é", "", 0, Some("é"));
        check("日", "日", "日", "", 0, Some("日"));
    }

    #[test]
    fn modifiers_change_key_and_text() {
        let a = dom_key(&Key::parse("a").unwrap());
        let shift = ModifierSet::parse("shift").unwrap();
        let ctrl = ModifierSet::parse("ctrl").unwrap();
        assert_eq!(a.key_with(shift), "A");
        assert_eq!(a.text_with(shift), Some("A"));
        assert_eq!(a.text_with(ctrl), None);
        assert_eq!(a.key_with(ctrl), "a");
        assert_eq!(
            modifier_bits(ModifierSet::parse("ctrl+shift").unwrap()),
            MOD_CONTROL | MOD_SHIFT
        );
        assert_eq!(
            modifier_bits(ModifierSet::parse("alt+cmd").unwrap()),
            MOD_ALT | MOD_META
        );
        assert_eq!(
            dom_key(&Key::parse("ctrl").unwrap()).modifier,
            Some(Modifier::Control)
        );
    }
}
