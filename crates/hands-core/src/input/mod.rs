//! The input vocabulary every surface parses into and every driver executes: mouse buttons,
//! scroll directions, held modifiers, and key chords named the way models name them.
//!
//! Key names follow xdotool (X keysym names such as `Return`, `Page_Down`, `KP_Add`, `F5`,
//! `ctrl+s`) plus the aliases models emit (`Enter`, `ESC`, `cmd`, `ARROWDOWN`, `PageUp` …), so one
//! grammar serves Claude's `key` member, OpenAI's `keypress` action and the browser toolsets.
//! Names are case-insensitive on the wire (`kp_enter` is `KP_Enter`), and a chord that names a
//! modifier presses exactly the modifiers it names (`ctrl+S` is Control and the s key).

use std::fmt;

pub mod keysym;

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Button {
    /// Button 1.
    Left,
    /// Button 2.
    Middle,
    /// Button 3.
    Right,
    /// Button 8, "back" on most mice.
    Back,
    /// Button 9, "forward" on most mice.
    Forward,
}

/// A scroll direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScrollDirection {
    /// Content moves down; the view goes up.
    Up,
    /// The view goes down.
    Down,
    /// The view goes left.
    Left,
    /// The view goes right.
    Right,
}

impl ScrollDirection {
    /// Parses `up`, `down`, `left` or `right`.
    pub fn parse(s: &str) -> Option<ScrollDirection> {
        match s {
            "up" => Some(ScrollDirection::Up),
            "down" => Some(ScrollDirection::Down),
            "left" => Some(ScrollDirection::Left),
            "right" => Some(ScrollDirection::Right),
            _ => None,
        }
    }
}

/// A modifier that can be held during a click, drag or scroll.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Modifier {
    /// Shift.
    Shift,
    /// Control.
    Control,
    /// Alt (Option on a Mac).
    Alt,
    /// Super: the Windows or Command key.
    Super,
}

impl Modifier {
    /// All modifiers, in the order they are pressed.
    pub const ALL: [Modifier; 4] = [
        Modifier::Control,
        Modifier::Alt,
        Modifier::Shift,
        Modifier::Super,
    ];

    /// The key pressed for this modifier.
    pub fn key(self) -> Key {
        match self {
            Modifier::Shift => Key::named(keysym::SHIFT_L, "Shift_L"),
            Modifier::Control => Key::named(keysym::CONTROL_L, "Control_L"),
            Modifier::Alt => Key::named(keysym::ALT_L, "Alt_L"),
            Modifier::Super => Key::named(keysym::SUPER_L, "Super_L"),
        }
    }

    fn bit(self) -> u8 {
        match self {
            Modifier::Shift => 1,
            Modifier::Control => 2,
            Modifier::Alt => 4,
            Modifier::Super => 8,
        }
    }

    /// The modifier a name means, case-insensitively: `shift`, `ctrl`/`control`, `alt`/`option`,
    /// `super`/`cmd`/`command`/`win`/`meta`.
    pub fn from_name(name: &str) -> Option<Modifier> {
        match name.to_ascii_lowercase().as_str() {
            "shift" | "shift_l" | "shift_r" => Some(Modifier::Shift),
            "ctrl" | "control" | "ctl" | "control_l" | "control_r" => Some(Modifier::Control),
            "alt" | "option" | "opt" | "alt_l" | "alt_r" => Some(Modifier::Alt),
            "super" | "cmd" | "command" | "win" | "windows" | "meta" | "super_l" | "super_r" => {
                Some(Modifier::Super)
            }
            _ => None,
        }
    }
}

/// A set of held modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ModifierSet(u8);

impl ModifierSet {
    /// No modifiers.
    pub const NONE: ModifierSet = ModifierSet(0);

    /// Whether no modifier is held.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Adds a modifier; false if it was already there.
    pub fn insert(&mut self, m: Modifier) -> bool {
        let had = self.contains(m);
        self.0 |= m.bit();
        !had
    }

    /// Whether `m` is held.
    pub fn contains(self, m: Modifier) -> bool {
        self.0 & m.bit() != 0
    }

    /// The held modifiers, in press order.
    pub fn iter(self) -> impl Iterator<Item = Modifier> {
        Modifier::ALL.into_iter().filter(move |m| self.contains(*m))
    }

    /// Parses `shift`, `ctrl+shift`, `cmd+alt` …: modifier names joined with `+`.
    pub fn parse(text: &str) -> Result<ModifierSet, KeyError> {
        let mut set = ModifierSet::NONE;
        for part in text.split('+').map(str::trim) {
            if part.is_empty() {
                return Err(KeyError::Empty {
                    text: text.to_owned(),
                });
            }
            let m = Modifier::from_name(part).ok_or_else(|| KeyError::NotAModifier {
                name: part.to_owned(),
            })?;
            set.insert(m);
        }
        Ok(set)
    }
}

impl FromIterator<Modifier> for ModifierSet {
    fn from_iter<I: IntoIterator<Item = Modifier>>(iter: I) -> ModifierSet {
        let mut set = ModifierSet::NONE;
        for m in iter {
            set.insert(m);
        }
        set
    }
}

/// Why a text cannot be typed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TextError {
    /// A control character other than newline, carriage return and tab.
    #[error(
        "cannot type character {position} of the text, U+{code_point:04X}: it is a control character, and none but newline and tab can be typed (press keys such as BackSpace or Escape with the key action)"
    )]
    ControlCharacter {
        /// Where it is, counting characters from 1.
        position: usize,
        /// Its code point.
        code_point: u32,
    },
}

/// The keysyms that type `text` literally, one per character: newline is Return (`\r\n` and a
/// lone `\r` too), tab is Tab, and every other character the keysym that means exactly it
/// ([`keysym::of_char`]). The whole text is refused, before anything is typed, when it holds any
/// other control character: no key types U+0008 or U+001B as a character.
pub fn text_keysyms(text: &str) -> Result<Vec<u32>, TextError> {
    let mut syms = Vec::with_capacity(text.len());
    let mut chars = text.chars().enumerate().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\r' && chars.peek().is_some_and(|(_, next)| *next == '\n') {
            continue;
        }
        let sym = keysym::of_char(c).ok_or(TextError::ControlCharacter {
            position: i + 1,
            code_point: c as u32,
        })?;
        syms.push(sym);
    }
    Ok(syms)
}

/// One key: an X keysym (the universal vocabulary of key names) and the name it was given.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    keysym: u32,
    name: String,
}

impl Key {
    fn named(keysym: u32, name: &str) -> Key {
        Key {
            keysym,
            name: name.to_owned(),
        }
    }

    /// The key whose keysym means exactly `c` (`\n` is Return, `\t` Tab); an error for the other
    /// control characters, which no key types (BackSpace and Escape are keys: name them).
    pub fn from_char(c: char) -> Result<Key, KeyError> {
        let keysym = keysym::of_char(c).ok_or(KeyError::ControlCharacter {
            code_point: c as u32,
        })?;
        Ok(Key {
            keysym,
            name: c.to_string(),
        })
    }

    /// The same key with a lower-case letter keysym in place of an upper-case one (`S` → `s`,
    /// `Cyrillic_ZHE` → `Cyrillic_zhe`); any other key unchanged.
    pub fn lower_case(self) -> Key {
        let lower = keysym::to_lower(self.keysym);
        if lower == self.keysym {
            return self;
        }
        let name = match (keysym::char_of(lower), self.name.chars().count()) {
            (Some(c), 1) => c.to_string(),
            _ => x11_keysymdef::lookup_by_keysym(lower)
                .and_then(|r| r.names.first().copied())
                .map_or_else(|| format!("{lower:#x}"), str::to_owned),
        };
        Key {
            keysym: lower,
            name,
        }
    }

    /// The X keysym.
    pub fn keysym(&self) -> u32 {
        self.keysym
    }

    /// The canonical name (an X keysym name where one exists).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether this key is one of the four modifiers.
    pub fn modifier(&self) -> Option<Modifier> {
        match self.keysym {
            0xffe1 | 0xffe2 => Some(Modifier::Shift),
            0xffe3 | 0xffe4 => Some(Modifier::Control),
            0xffe9 | 0xffea => Some(Modifier::Alt),
            0xffeb | 0xffec => Some(Modifier::Super),
            _ => None,
        }
    }

    /// Resolves one key name: an alias models use (`Enter`, `esc`, `cmd`, `ArrowDown`, `PgUp`,
    /// `Backspace` …), an X keysym name (`Return`, `Page_Down`, `KP_Add`, `XF86AudioMute`), a
    /// single character (`a`, `é`, `+`), or a hexadecimal keysym (`0xff0d`). Names are
    /// case-insensitive on the wire (`kp_enter`, `KP_ENTER` and `KP_Enter` are one key); a name
    /// that is exactly an X name in another case (`Aacute`, `aacute`) means that keysym, and one
    /// that matches a case pair only loosely (`AACUTE`) means the lower-case letter.
    pub fn parse(name: &str) -> Result<Key, KeyError> {
        if name.is_empty() {
            return Err(KeyError::Empty {
                text: name.to_owned(),
            });
        }
        let mut chars = name.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            return Key::from_char(c);
        }
        if let Some(alias) = alias(&name.to_ascii_lowercase()) {
            return Ok(Key::named(alias.1, alias.0));
        }
        if let Some((sym, canonical)) = keysym::by_name(name) {
            return Ok(Key::named(sym, canonical));
        }
        if let Some(hex) = name.strip_prefix("0x").or_else(|| name.strip_prefix("0X"))
            && let Ok(sym) = u32::from_str_radix(hex, 16)
            && sym != 0
            && sym <= MAX_KEYSYM
            && (sym & 0xff00_0000 != keysym::UNICODE_OFFSET || keysym::char_of(sym).is_some())
        {
            return Ok(Key::named(sym, name));
        }
        Err(KeyError::UnknownKey {
            name: name.to_owned(),
        })
    }
}

/// The largest keysym value (keysyms are 29-bit).
const MAX_KEYSYM: u32 = 0x1fff_ffff;

/// Aliases models emit for keys: their lower-case spellings, and the X keysym name and value
/// they mean.
const ALIASES: &[(&[&str], &str, u32)] = &[
    (&["enter", "return", "ret"], "Return", 0xff0d),
    (&["esc", "escape"], "Escape", 0xff1b),
    (&["tab"], "Tab", 0xff09),
    (&["backspace", "back_space", "bksp"], "BackSpace", 0xff08),
    (&["delete", "del"], "Delete", 0xffff),
    (&["insert", "ins"], "Insert", 0xff63),
    (&["space", "spacebar"], "space", 0x20),
    (&["home"], "Home", 0xff50),
    (&["end"], "End", 0xff57),
    (&["pageup", "page_up", "pgup", "prior"], "Prior", 0xff55),
    (&["pagedown", "page_down", "pgdn", "next"], "Next", 0xff56),
    (&["up", "arrowup", "arrow_up", "uparrow"], "Up", 0xff52),
    (
        &["down", "arrowdown", "arrow_down", "downarrow"],
        "Down",
        0xff54,
    ),
    (
        &["left", "arrowleft", "arrow_left", "leftarrow"],
        "Left",
        0xff51,
    ),
    (
        &["right", "arrowright", "arrow_right", "rightarrow"],
        "Right",
        0xff53,
    ),
    (&["shift", "shift_l"], "Shift_L", 0xffe1),
    (&["shift_r"], "Shift_R", 0xffe2),
    (
        &["ctrl", "control", "ctl", "control_l", "ctrl_l"],
        "Control_L",
        0xffe3,
    ),
    (&["control_r", "ctrl_r"], "Control_R", 0xffe4),
    (&["alt", "option", "opt", "alt_l"], "Alt_L", 0xffe9),
    (&["alt_r"], "Alt_R", 0xffea),
    (&["altgr", "alt_gr"], "ISO_Level3_Shift", 0xfe03),
    // "meta" follows the DOM, where Meta is the Windows/Command key: on X11 that is Super.
    (
        &[
            "super", "super_l", "cmd", "command", "win", "windows", "meta", "os",
        ],
        "Super_L",
        0xffeb,
    ),
    (&["super_r"], "Super_R", 0xffec),
    (&["capslock", "caps_lock", "caps"], "Caps_Lock", 0xffe5),
    (&["numlock", "num_lock"], "Num_Lock", 0xff7f),
    (&["scrolllock", "scroll_lock"], "Scroll_Lock", 0xff14),
    (
        &["printscreen", "print", "prtsc", "print_screen"],
        "Print",
        0xff61,
    ),
    (&["pause", "break"], "Pause", 0xff13),
    (
        &["menu", "apps", "contextmenu", "context_menu"],
        "Menu",
        0xff67,
    ),
    (&["plus"], "plus", 0x2b),
    (&["minus"], "minus", 0x2d),
    // XF86 media keys (not in the core keysym tables).
    (
        &["xf86audiomute", "audiomute", "volumemute", "mute"],
        "XF86AudioMute",
        0x1008_ff12,
    ),
    (
        &["xf86audiolowervolume", "audiovolumedown", "volumedown"],
        "XF86AudioLowerVolume",
        0x1008_ff11,
    ),
    (
        &["xf86audioraisevolume", "audiovolumeup", "volumeup"],
        "XF86AudioRaiseVolume",
        0x1008_ff13,
    ),
    (
        &["xf86audioplay", "mediaplaypause", "audioplay"],
        "XF86AudioPlay",
        0x1008_ff14,
    ),
    (
        &["xf86audiostop", "mediastop"],
        "XF86AudioStop",
        0x1008_ff15,
    ),
    (
        &["xf86audioprev", "mediatrackprevious"],
        "XF86AudioPrev",
        0x1008_ff16,
    ),
    (
        &["xf86audionext", "mediatracknext"],
        "XF86AudioNext",
        0x1008_ff17,
    ),
    (&["xf86monbrightnessup"], "XF86MonBrightnessUp", 0x1008_ff02),
    (
        &["xf86monbrightnessdown"],
        "XF86MonBrightnessDown",
        0x1008_ff03,
    ),
    (&["xf86back", "browserback"], "XF86Back", 0x1008_ff26),
    (
        &["xf86forward", "browserforward"],
        "XF86Forward",
        0x1008_ff27,
    ),
    (
        &["xf86refresh", "browserrefresh"],
        "XF86Refresh",
        0x1008_ff29,
    ),
    (&["xf86search"], "XF86Search", 0x1008_ff1b),
    (&["xf86homepage"], "XF86HomePage", 0x1008_ff18),
];

/// The keysym name and value an alias (lower-cased) means, F1–F35 included.
fn alias(lower: &str) -> Option<(&'static str, u32)> {
    ALIASES
        .iter()
        .find(|(names, _, _)| names.contains(&lower))
        .map(|(_, name, sym)| (*name, *sym))
        .or_else(|| function_key(lower))
}

/// Every name of the key grammar that names a key rather than a character: each alias
/// spelling, F1–F35, and every X keysym name of a keyboard function (editing, cursor, keypad,
/// modifier, lock, ISO and dead keys, 0xfd00–0xffff). For tests that press them all, and docs.
pub fn key_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = ALIASES
        .iter()
        .flat_map(|(spellings, _, _)| spellings.iter().copied())
        .collect();
    names.extend(FUNCTION_KEYS);
    for sym in 0xfd00..=0xffff {
        if let Some(record) = x11_keysymdef::lookup_by_keysym(sym) {
            names.extend(record.names.iter().copied());
        }
    }
    names
}

/// F1 … F35.
const FUNCTION_KEYS: [&str; 35] = [
    "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F11", "F12", "F13", "F14", "F15",
    "F16", "F17", "F18", "F19", "F20", "F21", "F22", "F23", "F24", "F25", "F26", "F27", "F28",
    "F29", "F30", "F31", "F32", "F33", "F34", "F35",
];

/// `f1` … `f35`.
fn function_key(lower: &str) -> Option<(&'static str, u32)> {
    let n: usize = lower.strip_prefix('f')?.parse().ok()?;
    (1..=35)
        .contains(&n)
        .then(|| (FUNCTION_KEYS[n - 1], 0xffbe + n as u32 - 1))
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// Keys pressed together in order and released in reverse: `ctrl+shift+t`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyChord {
    keys: Vec<Key>,
}

/// Most keys a chord may hold at once.
pub const MAX_CHORD_KEYS: usize = 8;

impl KeyChord {
    /// A chord of the given keys; an error when empty, longer than [`MAX_CHORD_KEYS`], or
    /// repeating a key.
    ///
    /// A chord that holds a modifier names keys, not characters: its letters are case-insensitive
    /// (`ctrl+S` is Control and the s key; Shift is pressed only when named, as in
    /// `ctrl+shift+s`). A lone key keeps its case: `A` is the character A.
    pub fn new(keys: Vec<Key>) -> Result<KeyChord, KeyError> {
        let keys = if keys.iter().any(|k| k.modifier().is_some()) {
            keys.into_iter().map(Key::lower_case).collect()
        } else {
            keys
        };
        if keys.is_empty() {
            return Err(KeyError::Empty {
                text: String::new(),
            });
        }
        if keys.len() > MAX_CHORD_KEYS {
            return Err(KeyError::TooManyKeys { n_keys: keys.len() });
        }
        for (i, k) in keys.iter().enumerate() {
            if keys[..i].iter().any(|prev| prev.keysym == k.keysym) {
                return Err(KeyError::Repeated {
                    name: k.name.clone(),
                });
            }
        }
        Ok(KeyChord { keys })
    }

    /// Parses `+`-joined key names: `Return`, `ctrl+s`, `alt+Tab`, `ctrl++` (Control and plus),
    /// `+` alone (plus).
    pub fn parse(text: &str) -> Result<KeyChord, KeyError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(KeyError::Empty {
                text: text.to_owned(),
            });
        }
        if text == "+" {
            return KeyChord::new(vec![Key::from_char('+')?]);
        }
        let mut names: Vec<&str> = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            // A `+` right where a name starts is the plus key itself (`ctrl++`, `+`).
            if let Some(after) = rest.strip_prefix('+') {
                names.push("+");
                rest = after.strip_prefix('+').unwrap_or(after);
                continue;
            }
            match rest.find('+') {
                Some(i) => {
                    names.push(&rest[..i]);
                    rest = &rest[i + 1..];
                    if rest.is_empty() {
                        return Err(KeyError::Empty {
                            text: text.to_owned(),
                        });
                    }
                }
                None => {
                    names.push(rest);
                    rest = "";
                }
            }
        }
        let keys = names
            .into_iter()
            .map(|n| Key::parse(n.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        KeyChord::new(keys)
    }

    /// The keys, in press order.
    pub fn keys(&self) -> &[Key] {
        &self.keys
    }
}

impl fmt::Display for KeyChord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, k) in self.keys.iter().enumerate() {
            if i > 0 {
                f.write_str("+")?;
            }
            f.write_str(&k.name)?;
        }
        Ok(())
    }
}

/// Chords pressed one after another, as xdotool's `key` takes them: `ctrl+a Delete`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeySequence {
    chords: Vec<KeyChord>,
}

/// Most chords one key sequence may hold.
pub const MAX_SEQUENCE_CHORDS: usize = 32;

impl KeySequence {
    /// Parses whitespace-separated chords. A text that is a single whitespace character (`" "`)
    /// means that key.
    pub fn parse(text: &str) -> Result<KeySequence, KeyError> {
        let mut chars = text.chars();
        if let (Some(c), None) = (chars.next(), chars.next())
            && c.is_whitespace()
        {
            return Ok(KeySequence {
                chords: vec![KeyChord::new(vec![Key::from_char(c)?])?],
            });
        }
        let chords = text
            .split_whitespace()
            .map(KeyChord::parse)
            .collect::<Result<Vec<_>, _>>()?;
        if chords.is_empty() {
            return Err(KeyError::Empty {
                text: text.to_owned(),
            });
        }
        if chords.len() > MAX_SEQUENCE_CHORDS {
            return Err(KeyError::TooManyChords {
                n_chords: chords.len(),
            });
        }
        Ok(KeySequence { chords })
    }

    /// One chord.
    pub fn single(chord: KeyChord) -> KeySequence {
        KeySequence {
            chords: vec![chord],
        }
    }

    /// The chords, in order.
    pub fn chords(&self) -> &[KeyChord] {
        &self.chords
    }
}

/// Why a key name or modifier text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// Nothing to press.
    #[error(
        "key text {text:?} names no key: give a key such as \"Return\" or a chord such as \"ctrl+s\""
    )]
    Empty {
        /// The text as given.
        text: String,
    },
    /// A control character, which no key types.
    #[error(
        "U+{code_point:04X} is a control character, which no key types: name the key instead (BackSpace, Escape, Delete, Return, Tab …)"
    )]
    ControlCharacter {
        /// The character's code point.
        code_point: u32,
    },
    /// A name that is neither an alias, an X keysym name, nor a single character.
    #[error(
        "unknown key name {name:?}: use an X keysym name (Return, Tab, Escape, BackSpace, Page_Down, Up, F1, KP_Enter, …), a single character, or a chord such as ctrl+s"
    )]
    UnknownKey {
        /// The name as given.
        name: String,
    },
    /// A name in a modifier list that is not a modifier.
    #[error(
        "{name:?} is not a modifier: use shift, ctrl, alt or super, joined with + (e.g. ctrl+shift)"
    )]
    NotAModifier {
        /// The name as given.
        name: String,
    },
    /// The same key twice in one chord.
    #[error("key {name:?} appears twice in one chord")]
    Repeated {
        /// The repeated key.
        name: String,
    },
    /// Too many keys held at once.
    #[error("a chord holds at most {MAX_CHORD_KEYS} keys, got {n_keys}")]
    TooManyKeys {
        /// How many were given.
        n_keys: usize,
    },
    /// Too many chords in one sequence.
    #[error("a key sequence holds at most {MAX_SEQUENCE_CHORDS} chords, got {n_chords}")]
    TooManyChords {
        /// How many were given.
        n_chords: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expect: &[&[u32]]) {
        let seq = KeySequence::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        let got: Vec<Vec<u32>> = seq
            .chords()
            .iter()
            .map(|c| c.keys().iter().map(Key::keysym).collect())
            .collect();
        let want: Vec<Vec<u32>> = expect.iter().map(|c| c.to_vec()).collect();
        assert_eq!(got, want, "{text:?}");
    }

    #[test]
    fn key_grammar_table() {
        check("Return", &[&[0xff0d]]);
        check("Enter", &[&[0xff0d]]);
        check("ENTER", &[&[0xff0d]]);
        check("ESC", &[&[0xff1b]]);
        check("ctrl+s", &[&[0xffe3, 's' as u32]]);
        // A chord that names a modifier names keys: letters are case-insensitive.
        check("CTRL+C", &[&[0xffe3, 'c' as u32]]);
        check("ctrl+S", &[&[0xffe3, 's' as u32]]);
        check("ctrl+shift+S", &[&[0xffe3, 0xffe1, 's' as u32]]);
        check("alt+Ж", &[&[0xffe9, 0x6d6]]);
        check("ctrl+Cyrillic_ZHE", &[&[0xffe3, 0x6d6]]);
        // A lone letter is the character.
        check("A", &[&[0x41]]);
        check("Aacute", &[&[0xc1]]);
        // Names in any case.
        check("kp_enter", &[&[0xff8d]]);
        check("KP_ENTER", &[&[0xff8d]]);
        check("kp_0", &[&[0xffb0]]);
        check("ctrl+KP_ADD", &[&[0xffe3, 0xffab]]);
        check("PAGE_DOWN", &[&[0xff56]]);
        check("iso_left_tab", &[&[0xfe20]]);
        check("xf86audiomute", &[&[0x1008_ff12]]);
        check("f13", &[&[0xffca]]);
        check("alt+Tab", &[&[0xffe9, 0xff09]]);
        check("super", &[&[0xffeb]]);
        check("cmd+a", &[&[0xffeb, 'a' as u32]]);
        check("F1", &[&[0xffbe]]);
        check("F12", &[&[0xffc9]]);
        check("f5", &[&[0xffc2]]);
        check("Page_Down", &[&[0xff56]]);
        check("PageUp", &[&[0xff55]]);
        check("Up", &[&[0xff52]]);
        check("ARROWDOWN", &[&[0xff54]]);
        check("KP_Enter", &[&[0xff8d]]);
        check("KP_Add", &[&[0xffab]]);
        check("KP_5", &[&[0xffb5]]);
        check("minus", &[&[0x2d]]);
        check("period", &[&[0x2e]]);
        check("slash", &[&[0x2f]]);
        check("bracketleft", &[&[0x5b]]);
        check("BackSpace", &[&[0xff08]]);
        check("Backspace", &[&[0xff08]]);
        check("ctrl++", &[&[0xffe3, 0x2b]]);
        check("+", &[&[0x2b]]);
        check(" ", &[&[0x20]]);
        check("ctrl+a Delete", &[&[0xffe3, 'a' as u32], &[0xffff]]);
        check("ctrl+shift+t", &[&[0xffe3, 0xffe1, 't' as u32]]);
        check("é", &[&[0xe9]]);
        check("€", &[&[0x20ac]]);
        check("☺", &[&[0x0100_263a]]);
        check("0xff0d", &[&[0xff0d]]);
        check("XF86AudioMute", &[&[0x1008_ff12]]);
    }

    #[test]
    fn every_key_name_parses_in_any_case() {
        let names = key_names();
        assert!(names.len() > 300, "{}", names.len());
        for name in names {
            let key = Key::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            for variant in [name.to_ascii_lowercase(), name.to_ascii_uppercase()] {
                let again = Key::parse(&variant).unwrap_or_else(|e| panic!("{variant}: {e}"));
                // dead_a and dead_A are one name in any case but the exact spelling.
                if keysym::to_lower(again.keysym()) != keysym::to_lower(key.keysym())
                    && !name.starts_with("dead_")
                {
                    panic!(
                        "{variant} is {:#x}, {name} is {:#x}",
                        again.keysym(),
                        key.keysym()
                    );
                }
            }
        }
    }

    #[test]
    fn key_errors_say_what_to_do() {
        let err = KeySequence::parse("ctrl+frobnicate").unwrap_err();
        assert!(matches!(err, KeyError::UnknownKey { ref name } if name == "frobnicate"));
        assert!(err.to_string().contains("X keysym name"));
        assert!(matches!(
            KeySequence::parse("").unwrap_err(),
            KeyError::Empty { .. }
        ));
        assert!(matches!(
            KeySequence::parse("ctrl+").unwrap_err(),
            KeyError::Empty { .. }
        ));
        assert!(matches!(
            KeySequence::parse("a+a").unwrap_err(),
            KeyError::Repeated { .. }
        ));
        assert!(matches!(
            KeySequence::parse("ctrl+s+S").unwrap_err(),
            KeyError::Repeated { .. }
        ));
        let err = KeySequence::parse("\u{8}").unwrap_err();
        assert_eq!(err, KeyError::ControlCharacter { code_point: 8 });
        assert!(err.to_string().contains("BackSpace"), "{err}");
        assert!(matches!(
            KeySequence::parse("0x01000008"),
            Err(KeyError::UnknownKey { .. })
        ));
    }

    #[test]
    fn modifier_sets() {
        let set = ModifierSet::parse("ctrl+shift").unwrap();
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            vec![Modifier::Control, Modifier::Shift]
        );
        assert_eq!(
            ModifierSet::parse("cmd")
                .unwrap()
                .iter()
                .collect::<Vec<_>>(),
            vec![Modifier::Super]
        );
        assert!(matches!(
            ModifierSet::parse("ctrl+x"),
            Err(KeyError::NotAModifier { .. })
        ));
    }

    #[test]
    fn texts_become_keysyms_or_are_refused_whole() {
        assert_eq!(
            text_keysyms("a\r\nb\rc\td").unwrap(),
            vec![0x61, 0xff0d, 0x62, 0xff0d, 0x63, 0xff09, 0x64]
        );
        assert_eq!(
            text_keysyms("Cafe\u{301}").unwrap(),
            vec![0x43, 0x61, 0x66, 0x65, 0x0100_0301]
        );
        for (text, position, code_point) in [
            ("ab\u{8}", 3, 8),
            ("\u{1b}[0m", 1, 0x1b),
            ("x\u{7f}", 2, 0x7f),
            ("日本\u{85}", 3, 0x85),
        ] {
            let err = text_keysyms(text).unwrap_err();
            assert_eq!(
                err,
                TextError::ControlCharacter {
                    position,
                    code_point
                },
                "{text:?}"
            );
            assert!(err.to_string().contains("control character"));
        }
    }

    #[test]
    fn chars_round_trip_through_keysyms() {
        for c in ['a', 'Z', '~', 'é', 'ß', '€', 'Ж', '日', '☺', '\n', '\t'] {
            let sym = keysym::of_char(c).expect("a typeable character");
            assert_eq!(keysym::to_char(sym), Some(c), "{c:?}");
        }
    }
}
