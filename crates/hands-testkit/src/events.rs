//! What the recorder writes down for each pointer and keyboard event it receives.

/// The kind of an input event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// A mouse button (or wheel notch: buttons 4–7) went down.
    ButtonPress,
    /// A mouse button went up.
    ButtonRelease,
    /// The pointer moved.
    Motion,
    /// A key went down.
    KeyPress,
    /// A key went up.
    KeyRelease,
}

/// One event as the window received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputEvent {
    /// What happened.
    pub kind: EventKind,
    /// The button number (buttons) or keycode (keys); 0 for motion.
    pub detail: u8,
    /// Pointer position on the screen (root coordinates) when it happened.
    pub x: i32,
    /// See `x`.
    pub y: i32,
    /// The modifier and button state mask *before* the event, as X reports it: Shift is 1,
    /// Lock 2, Control 4, Mod1…Mod5 8…128, Button1…Button5 256…4096. Which ModN is Alt or Super
    /// depends on the layout: ask [`crate::InputRecorder::modifier_mask`].
    pub state: u16,
    /// For keys: the keysym the event means under the keyboard mapping current when the recorder
    /// read it (core protocol rules), `None` when the keycode has no keysym.
    pub keysym: Option<u32>,
    /// For keys: the character that keysym types (`'\n'` for Return, `'\t'` for Tab), if any.
    pub ch: Option<char>,
    /// The server's timestamp in milliseconds.
    pub time: u32,
}

/// `Button1` in an event's state mask.
pub const BUTTON1_MASK: u16 = 0x100;

impl InputEvent {
    /// Whether this is a press of mouse button `button`.
    pub fn is_button_press(&self, button: u8) -> bool {
        self.kind == EventKind::ButtonPress && self.detail == button
    }

    /// Whether this is a release of mouse button `button`.
    pub fn is_button_release(&self, button: u8) -> bool {
        self.kind == EventKind::ButtonRelease && self.detail == button
    }

    /// Whether this is a press of a key that means `keysym`.
    pub fn is_key_press(&self, keysym: u32) -> bool {
        self.kind == EventKind::KeyPress && self.keysym == Some(keysym)
    }

    /// Whether this is a release of a key that means `keysym`.
    pub fn is_key_release(&self, keysym: u32) -> bool {
        self.kind == EventKind::KeyRelease && self.keysym == Some(keysym)
    }

    /// Whether this is a key event (press or release).
    pub fn is_key(&self) -> bool {
        matches!(self.kind, EventKind::KeyPress | EventKind::KeyRelease)
    }

    /// Whether this is a button event (press or release).
    pub fn is_button(&self) -> bool {
        matches!(self.kind, EventKind::ButtonPress | EventKind::ButtonRelease)
    }

    /// The position as a pair.
    pub fn position(&self) -> (i32, i32) {
        (self.x, self.y)
    }
}

/// The text the key presses in `events` type, in order: each press's character, skipping keys
/// that type none (modifiers, arrows).
pub fn typed_text(events: &[InputEvent]) -> String {
    events
        .iter()
        .filter(|e| e.kind == EventKind::KeyPress)
        .filter_map(|e| e.ch)
        .collect()
}
