//! The desktop driver trait: what a screen, a pointer and a keyboard can do, in screen pixels.
//!
//! Surfaces (Claude's computer toolset, OpenAI's computer tool) parse model input into these
//! calls; drivers (X11 today, a page over CDP later) execute them. A driver never sees wire JSON.

use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::geometry::{ScreenPoint, Size};
use crate::image::Pixels;
use crate::input::{Button, KeyChord, ModifierSet, ScrollDirection};

/// What a driver reports about its screen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScreenInfo {
    /// Size of a full capture in physical pixels.
    pub capture: Size,
    /// Capture pixels per screen (input) pixel.
    pub device_pixel_ratio: f64,
}

/// How long to wait for the screen to stop changing before a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettleBudget {
    /// The screen counts as settled after this long without a change.
    pub quiet: Duration,
    /// Never wait longer than this in total.
    pub cap: Duration,
}

impl Default for SettleBudget {
    /// 40 ms of quiet (above the 17 ms click-to-repaint floor measured for Chromium under Xvfb,
    /// with room for a toolkit's second frame), capped at 1.5 s.
    fn default() -> SettleBudget {
        SettleBudget {
            quiet: Duration::from_millis(40),
            cap: Duration::from_millis(1500),
        }
    }
}

/// What a settle wait observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SettleReport {
    /// Time spent waiting.
    pub waited: Duration,
    /// How many change notifications arrived while waiting.
    pub n_changes: u32,
    /// False when the cap ran out while the screen was still changing.
    pub settled: bool,
}

/// A driver failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DesktopError {
    /// The display or its connection is gone: a harness fault, not the model's doing.
    #[error("the display is unavailable: {0}")]
    Gone(String),
    /// A capture failed.
    #[error("Failed to capture screenshot: {0}")]
    Capture(String),
    /// Input could not be injected.
    #[error("failed to send input: {0}")]
    Input(String),
    /// The driver cannot do this (e.g. a character that no keycode can be bound to).
    #[error("{0}")]
    Unsupported(String),
    /// The call was cancelled before it finished.
    #[error("cancelled")]
    Cancelled,
}

impl DesktopError {
    /// Whether the run must stop: the driver itself is broken, as opposed to one action failing.
    pub fn is_fault(&self) -> bool {
        matches!(self, DesktopError::Gone(_))
    }
}

/// A screen with a pointer and a keyboard.
///
/// Coordinates are screen (input) pixels. Every method returns once the input has reached the
/// display server (not necessarily the application): call [`Desktop::settle`] before capturing
/// when the effect matters.
#[async_trait]
pub trait Desktop: Send {
    /// The current screen size and pixel ratio.
    fn screen(&self) -> ScreenInfo;

    /// A full-resolution capture of the whole screen.
    async fn capture(&mut self) -> Result<Pixels, DesktopError>;

    /// Waits until the screen is current, or `budget.cap` has passed: the application that got
    /// the last input has handled it (where the driver can tell), the screen has changed if that
    /// input was expected to change it (a key, a click; briefly, since many do not), and the
    /// screen has then not changed for `budget.quiet`. A screen that does not change after the
    /// input is settled without waiting out the quiet period.
    async fn settle(
        &mut self,
        budget: SettleBudget,
        cancel: &CancellationToken,
    ) -> Result<SettleReport, DesktopError>;

    /// Moves the pointer.
    async fn move_pointer(&mut self, to: ScreenPoint) -> Result<(), DesktopError>;

    /// Where the pointer is.
    async fn pointer(&mut self) -> Result<ScreenPoint, DesktopError>;

    /// Clicks `count` times (1–3) at `at` (or where the pointer is) with `modifiers` held only
    /// for the click.
    async fn click(
        &mut self,
        at: Option<ScreenPoint>,
        button: Button,
        count: u8,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError>;

    /// Presses or releases a button where the pointer is.
    async fn button(&mut self, button: Button, pressed: bool) -> Result<(), DesktopError>;

    /// Presses `button` at the first point, moves through the rest, releases at the last, with
    /// `modifiers` held throughout.
    async fn drag(
        &mut self,
        path: &[ScreenPoint],
        button: Button,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError>;

    /// Turns the wheel `clicks` notches at `at` (or where the pointer is).
    async fn scroll(
        &mut self,
        at: Option<ScreenPoint>,
        direction: ScrollDirection,
        clicks: u32,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError>;

    /// Presses the chord's keys in order and releases them in reverse.
    async fn key_chord(&mut self, chord: &KeyChord) -> Result<(), DesktopError>;

    /// Presses (`down`) or releases the chord's keys, for keys held over time.
    async fn key_hold(&mut self, chord: &KeyChord, down: bool) -> Result<(), DesktopError>;

    /// Types `text` literally into the focused window: newline as Return, tab as Tab, any other
    /// character as a key whose keysym means exactly that character (a layout key, or a spare
    /// key bound to it). A text holding any other control character is refused whole
    /// ([`crate::input::text_keysyms`]) before anything is typed.
    async fn type_text(
        &mut self,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<(), DesktopError>;
}

#[async_trait]
impl<D: Desktop + ?Sized> Desktop for Box<D> {
    fn screen(&self) -> ScreenInfo {
        (**self).screen()
    }
    async fn capture(&mut self) -> Result<Pixels, DesktopError> {
        (**self).capture().await
    }
    async fn settle(
        &mut self,
        budget: SettleBudget,
        cancel: &CancellationToken,
    ) -> Result<SettleReport, DesktopError> {
        (**self).settle(budget, cancel).await
    }
    async fn move_pointer(&mut self, to: ScreenPoint) -> Result<(), DesktopError> {
        (**self).move_pointer(to).await
    }
    async fn pointer(&mut self) -> Result<ScreenPoint, DesktopError> {
        (**self).pointer().await
    }
    async fn click(
        &mut self,
        at: Option<ScreenPoint>,
        button: Button,
        count: u8,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError> {
        (**self).click(at, button, count, modifiers).await
    }
    async fn button(&mut self, button: Button, pressed: bool) -> Result<(), DesktopError> {
        (**self).button(button, pressed).await
    }
    async fn drag(
        &mut self,
        path: &[ScreenPoint],
        button: Button,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError> {
        (**self).drag(path, button, modifiers).await
    }
    async fn scroll(
        &mut self,
        at: Option<ScreenPoint>,
        direction: ScrollDirection,
        clicks: u32,
        modifiers: ModifierSet,
    ) -> Result<(), DesktopError> {
        (**self).scroll(at, direction, clicks, modifiers).await
    }
    async fn key_chord(&mut self, chord: &KeyChord) -> Result<(), DesktopError> {
        (**self).key_chord(chord).await
    }
    async fn key_hold(&mut self, chord: &KeyChord, down: bool) -> Result<(), DesktopError> {
        (**self).key_hold(chord, down).await
    }
    async fn type_text(
        &mut self,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<(), DesktopError> {
        (**self).type_text(text, cancel).await
    }
}
