//! A person's hands on the desktop while they hold the wheel (issue 22): the screen's picture,
//! their clicks, wheel turns, keys and text sent with XTEST through the same driver (and so the
//! same keymap) the model's computer actions use, and what hands observed on the desktop
//! meanwhile — top-level windows opened and closed, the focused window at give-back, whether the
//! clipboard changed owner — read from the X server ([`crate::windows`]), never guessed.
//!
//! The window list is read with every new frame the person is shown and once more at
//! give-back: a window that opened and closed between two frames (a fifth of a second) was
//! never on the person's screen and is not reported. What the person typed is counted, not
//! kept: on a desktop hands cannot tell a password field from any other.
//!
//! Each input waits, as the model's actions do, for its client to handle it and the screen to
//! settle (at most 1.5 s) before the next one goes: a key typed right after a click then reaches
//! the window the click focused, not the one the window manager had not yet left.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hands_core::CancellationToken;
use hands_core::desktop::{Desktop as _, DesktopError, SettleBudget};
use hands_core::geometry::ScreenPoint;
use hands_core::image::{ImageFormat, encode};
use hands_core::input::{Button, Key, KeyChord, ModifierSet, ScrollDirection};

use crate::X11Desktop;
use crate::windows::{TopWindow, WindowsNow};

/// The shortest time between two captures: a person is shown at most five frames a second,
/// a faster viewer gets the last one again.
pub const FRAME_INTERVAL: Duration = Duration::from_millis(200);

/// The frames' JPEG quality.
const JPEG_QUALITY: u8 = 70;

/// Wheel pixels per wheel click (a browser's `deltaY` for one notch).
const PIXELS_PER_CLICK: f64 = 100.0;

/// The most wheel clicks one turn sends.
const MAX_CLICKS: u32 = 20;

/// What a person sent through the wheel, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputCounts {
    /// Left clicks.
    pub clicks: u32,
    /// Wheel turns.
    pub scrolls: u32,
    /// Keys pressed, by name (`Return`, `BackSpace`…), in order.
    pub keys: Vec<String>,
    /// Characters typed (the text itself is not kept).
    pub chars: usize,
}

/// A window that appeared while the person held the wheel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenedWindow {
    /// Its last title seen (empty: it had none).
    pub title: String,
    /// Whether it was still open at give-back.
    pub open: bool,
}

/// What hands observed on the desktop while a person held the wheel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DesktopObserved {
    /// Top-level windows that appeared, in the order seen.
    pub opened: Vec<OpenedWindow>,
    /// Titles of the windows open at take-over and gone at give-back.
    pub closed: Vec<String>,
    /// The focused window's title at give-back (`Some("")`: an untitled one; `None`: none).
    pub focused: Option<String>,
    /// Whether the clipboard's owner changed (its content is never read).
    pub clipboard_changed: bool,
    /// The person's input.
    pub inputs: InputCounts,
}

/// The readings of one hold: the first, every window seen since, the last.
#[derive(Debug)]
struct Tracker {
    before: WindowsNow,
    opened: Vec<(TopWindow, bool)>,
    last: WindowsNow,
    inputs: InputCounts,
}

impl Tracker {
    fn new(before: WindowsNow) -> Tracker {
        Tracker {
            last: before.clone(),
            before,
            opened: Vec::new(),
            inputs: InputCounts::default(),
        }
    }

    fn see(&mut self, now: WindowsNow) {
        for window in &now.windows {
            if self.before.windows.iter().any(|b| b.same(window)) {
                continue;
            }
            match self.opened.iter_mut().find(|(o, _)| o.same(window)) {
                Some((seen, open)) => {
                    if !window.title.is_empty() {
                        seen.title.clone_from(&window.title);
                    }
                    *open = true;
                }
                None => self.opened.push((window.clone(), true)),
            }
        }
        for (seen, open) in &mut self.opened {
            if !now.windows.iter().any(|w| w.same(seen)) {
                *open = false;
            }
        }
        self.last = now;
    }

    fn observed(self) -> DesktopObserved {
        let last = &self.last;
        DesktopObserved {
            opened: self
                .opened
                .into_iter()
                .map(|(w, open)| OpenedWindow {
                    title: w.title,
                    open,
                })
                .collect(),
            closed: self
                .before
                .windows
                .iter()
                .filter(|b| !last.windows.iter().any(|w| w.same(b)))
                .map(|b| b.title.clone())
                .collect(),
            focused: last.focused.as_ref().map(|w| w.title.clone()),
            clipboard_changed: last.clipboard_owner != self.before.clipboard_owner,
            inputs: self.inputs,
        }
    }
}

struct Inner {
    /// A connection of the wheel's own, beside the model's.
    desktop: tokio::sync::Mutex<X11Desktop>,
    /// The last frame and when it was captured.
    last_frame: Mutex<Option<(Instant, Vec<u8>)>>,
    /// The readings of the hold under way, from [`DesktopWheel::watch`] to
    /// [`DesktopWatching::finish`].
    tracker: Mutex<Option<Tracker>>,
}

/// A person's hands on a desktop: from [`DesktopWheel::new`] over a connection of its own
/// ([`X11Desktop::another_connection`]).
#[derive(Clone)]
pub struct DesktopWheel {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for DesktopWheel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DesktopWheel")
    }
}

/// Observation under way ([`DesktopWheel::watch`]); [`DesktopWatching::finish`] ends it.
#[derive(Debug)]
pub struct DesktopWatching {
    wheel: DesktopWheel,
}

/// Waits for the input's client and the screen, as after a model's action; a failed wait is
/// only logged (the input itself was sent).
async fn settle(desktop: &mut X11Desktop) {
    if let Err(e) = desktop
        .settle(SettleBudget::default(), &CancellationToken::new())
        .await
    {
        tracing::warn!("settling after a person's input: {e}");
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl DesktopWheel {
    /// The wheel over `desktop` (a connection it keeps for the person's input and frames).
    pub fn new(desktop: X11Desktop) -> DesktopWheel {
        DesktopWheel {
            inner: Arc::new(Inner {
                desktop: tokio::sync::Mutex::new(desktop),
                last_frame: Mutex::new(None),
                tracker: Mutex::new(None),
            }),
        }
    }

    /// Reads the windows into the hold's tracker, if one is under way; a failed reading is
    /// skipped (the next frame or give-back reads again).
    async fn sample(&self) {
        if lock(&self.inner.tracker).is_none() {
            return;
        }
        let read = self.inner.desktop.lock().await.windows().await;
        match read {
            Ok(now) => {
                if let Some(tracker) = lock(&self.inner.tracker).as_mut() {
                    tracker.see(now);
                }
            }
            Err(e) => tracing::warn!("reading the desktop's windows: {e}"),
        }
    }

    fn count(&self, f: impl FnOnce(&mut InputCounts)) {
        if let Some(tracker) = lock(&self.inner.tracker).as_mut() {
            f(&mut tracker.inputs);
        }
    }

    /// The screen as a JPEG: captured at most every [`FRAME_INTERVAL`] (the last one again in
    /// between), the windows read with each capture.
    pub async fn frame(&self) -> Result<Vec<u8>, DesktopError> {
        if let Some((at, jpeg)) = lock(&self.inner.last_frame).as_ref()
            && at.elapsed() < FRAME_INTERVAL
        {
            return Ok(jpeg.clone());
        }
        let pixels = self.inner.desktop.lock().await.capture().await?;
        let jpeg = encode(
            &pixels,
            ImageFormat::Jpeg {
                quality: JPEG_QUALITY,
            },
        )
        .map_err(|e| DesktopError::Capture(e.to_string()))?
        .bytes();
        *lock(&self.inner.last_frame) = Some((Instant::now(), jpeg.clone()));
        self.sample().await;
        Ok(jpeg)
    }

    /// The point (`x`, `y`) of the frame, checked to lie on the screen.
    fn point(desktop: &X11Desktop, x: f64, y: f64) -> Result<ScreenPoint, DesktopError> {
        let size = desktop.screen().capture;
        let (px, py) = (x.round(), y.round());
        if !(px >= 0.0 && py >= 0.0 && px < f64::from(size.width) && py < f64::from(size.height)) {
            return Err(DesktopError::Input(format!(
                "({x}, {y}) is off the {}x{} screen",
                size.width, size.height
            )));
        }
        // Checked above: both lie in 0..size, which fits a u32.
        Ok(ScreenPoint {
            x: px as u32,
            y: py as u32,
        })
    }

    /// A left click at (`x`, `y`), screen pixels.
    pub async fn click(&self, x: f64, y: f64) -> Result<(), DesktopError> {
        let mut desktop = self.inner.desktop.lock().await;
        let at = DesktopWheel::point(&desktop, x, y)?;
        desktop
            .click(Some(at), Button::Left, 1, ModifierSet::NONE)
            .await?;
        settle(&mut desktop).await;
        drop(desktop);
        self.count(|c| c.clicks += 1);
        Ok(())
    }

    /// The wheel turned by `dy` pixels (down when positive) at (`x`, `y`): a click of the
    /// wheel per 100 pixels, at least one, at most 20.
    pub async fn scroll(&self, x: f64, y: f64, dy: f64) -> Result<(), DesktopError> {
        if dy == 0.0 || !dy.is_finite() {
            return Ok(());
        }
        let direction = if dy > 0.0 {
            ScrollDirection::Down
        } else {
            ScrollDirection::Up
        };
        // At most MAX_CLICKS, so the cast cannot overflow.
        let clicks = (dy.abs() / PIXELS_PER_CLICK)
            .ceil()
            .clamp(1.0, f64::from(MAX_CLICKS)) as u32;
        let mut desktop = self.inner.desktop.lock().await;
        let at = DesktopWheel::point(&desktop, x, y)?;
        desktop
            .scroll(Some(at), direction, clicks, ModifierSet::NONE)
            .await?;
        settle(&mut desktop).await;
        drop(desktop);
        self.count(|c| c.scrolls += 1);
        Ok(())
    }

    /// One key pressed and released, by name (hands' key grammar: `Return`, `BackSpace`…).
    pub async fn press(&self, name: &str) -> Result<(), DesktopError> {
        let chord = Key::parse(name)
            .and_then(|key| KeyChord::new(vec![key]))
            .map_err(|e| DesktopError::Input(e.to_string()))?;
        let mut desktop = self.inner.desktop.lock().await;
        desktop.key_chord(&chord).await?;
        settle(&mut desktop).await;
        drop(desktop);
        self.count(|c| c.keys.push(name.to_owned()));
        Ok(())
    }

    /// Text typed into the focused window, as the model's `type` types it.
    pub async fn type_text(&self, text: &str) -> Result<(), DesktopError> {
        let mut desktop = self.inner.desktop.lock().await;
        desktop.type_text(text, &CancellationToken::new()).await?;
        settle(&mut desktop).await;
        drop(desktop);
        self.count(|c| c.chars += text.chars().count());
        Ok(())
    }

    /// Starts observing: the windows now are the ones the person found.
    pub async fn watch(&self) -> Result<DesktopWatching, DesktopError> {
        let before = self.inner.desktop.lock().await.windows().await?;
        *lock(&self.inner.tracker) = Some(Tracker::new(before));
        *lock(&self.inner.last_frame) = None;
        Ok(DesktopWatching {
            wheel: self.clone(),
        })
    }
}

impl DesktopWatching {
    /// Ends the observation (the windows read once more) and says what was seen.
    pub async fn finish(self) -> DesktopObserved {
        self.wheel.sample().await;
        lock(&self.wheel.inner.tracker)
            .take()
            .map(Tracker::observed)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(id: u32, title: &str) -> TopWindow {
        // A title after a slash: a later window of that id.
        let (title, creation) = match title.split_once('/') {
            Some((t, n)) => (t, n.parse().unwrap()),
            None => (title, 0),
        };
        TopWindow {
            id,
            creation,
            title: title.into(),
        }
    }

    fn now(windows: &[(u32, &str)], focused: Option<u32>, clipboard: u32) -> WindowsNow {
        let windows: Vec<TopWindow> = windows.iter().map(|&(id, t)| window(id, t)).collect();
        WindowsNow {
            focused: focused.and_then(|f| windows.iter().find(|w| w.id == f).cloned()),
            windows,
            clipboard_owner: clipboard,
        }
    }

    /// Readings in order; what the tracker reports.
    fn check(readings: &[WindowsNow], expect: DesktopObserved) {
        let mut tracker = Tracker::new(readings[0].clone());
        for reading in &readings[1..] {
            tracker.see(reading.clone());
        }
        assert_eq!(tracker.observed(), expect);
    }

    #[test]
    fn windows_opened_and_closed_are_told_by_their_last_title() {
        check(
            &[
                now(&[(1, "Ask"), (2, "Editor")], Some(1), 0),
                // The new window is mapped before it is named.
                now(&[(1, "Ask"), (2, "Editor"), (3, "")], Some(1), 0),
                now(
                    &[(2, "Editor"), (3, "Second window"), (4, "Flash")],
                    Some(3),
                    0,
                ),
                now(&[(2, "Editor"), (3, "Second window")], Some(3), 9),
            ],
            DesktopObserved {
                opened: vec![
                    OpenedWindow {
                        title: "Second window".into(),
                        open: true,
                    },
                    OpenedWindow {
                        title: "Flash".into(),
                        open: false,
                    },
                ],
                closed: vec!["Ask".into()],
                focused: Some("Second window".into()),
                clipboard_changed: true,
                inputs: InputCounts::default(),
            },
        );
        // The server gave a closed window's id to the next one.
        check(
            &[
                now(&[(1, "Ask")], Some(1), 0),
                now(&[(1, "Second window/7")], Some(1), 0),
            ],
            DesktopObserved {
                opened: vec![OpenedWindow {
                    title: "Second window".into(),
                    open: true,
                }],
                closed: vec!["Ask".into()],
                focused: Some("Second window".into()),
                ..DesktopObserved::default()
            },
        );
        check(
            &[now(&[(1, "Ask")], None, 0), now(&[(1, "Ask")], None, 0)],
            DesktopObserved {
                closed: vec![],
                focused: None,
                ..DesktopObserved::default()
            },
        );
    }
}
