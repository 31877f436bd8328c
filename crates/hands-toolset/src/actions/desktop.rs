//! The desktop's actions, wire-neutral: what Claude's computer toolset (and its legacy shapes),
//! OpenAI's `computer_call`, the MCP server and the Python package all ask a [`Desktop`] to do,
//! as one typed vocabulary, and the one executor that runs them ([`DesktopActor`]).
//!
//! A surface is a codec over this module: it parses its wire shape into [`DesktopAction`]s
//! (every coordinate checked against the frame the model saw, every count and key resolved) and
//! presents the [`DesktopOutcome`] in its wire shape. Nothing here knows a wire name.
//!
//! Spec: claude-computer-use-tool, "Acciones disponibles", "Dimensiona las capturas de pantalla
//! para ajustarse a los límites de imagen"; openai-browser-desktop-drivers, "Contrato del
//! controlador de computadora".

use std::fmt;
use std::time::{Duration, Instant};

use hands_core::CancellationToken;
use hands_core::desktop::{Desktop, DesktopError, SettleBudget};
use hands_core::geometry::{Frame, ScreenshotSizing, ShotPoint, ShotRegion};
use hands_core::image::{EncodedImage, ImageFormat, MAX_IMAGE_BASE64_BYTES};
use hands_core::input::{Button, KeyChord, KeySequence, Modifier, ModifierSet, ScrollDirection};

use super::screen::{self, ShotFrames};

/// Which way a button goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ButtonState {
    /// Pressed and held.
    Pressed,
    /// Let go.
    Released,
}

/// How long the screen must be quiet before a [`DesktopAction::Settle`] returns: the budgets
/// are the actor's ([`ScreenConfig::settle`], [`ScreenConfig::wait`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quiet {
    /// As before a screenshot.
    Screen,
    /// The longer quiet of an explicit wait.
    Wait,
}

/// Wheel notches on both axes: positive `y` scrolls down, positive `x` right. Claude's
/// `scroll {scroll_direction, scroll_amount}` is one axis; OpenAI's `scroll {scroll_x,
/// scroll_y}` may turn both (vertical first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Wheel {
    /// Horizontal notches.
    pub x: i32,
    /// Vertical notches.
    pub y: i32,
}

impl Wheel {
    /// `amount` notches one way.
    pub fn toward(direction: ScrollDirection, amount: u32) -> Wheel {
        let n = i32::try_from(amount).unwrap_or(i32::MAX);
        match direction {
            ScrollDirection::Up => Wheel { x: 0, y: -n },
            ScrollDirection::Down => Wheel { x: 0, y: n },
            ScrollDirection::Left => Wheel { x: -n, y: 0 },
            ScrollDirection::Right => Wheel { x: n, y: 0 },
        }
    }

    /// The turns the driver makes, vertical first. A wheel that turns nowhere still makes one
    /// turn of zero notches downward (the pointer moves to where the wheel would turn).
    pub fn turns(self) -> impl Iterator<Item = (ScrollDirection, u32)> {
        let vertical = (self.y != 0 || self.x == 0).then(|| {
            let dir = if self.y < 0 {
                ScrollDirection::Up
            } else {
                ScrollDirection::Down
            };
            (dir, self.y.unsigned_abs())
        });
        let horizontal = (self.x != 0).then(|| {
            let dir = if self.x < 0 {
                ScrollDirection::Left
            } else {
                ScrollDirection::Right
            };
            (dir, self.x.unsigned_abs())
        });
        vertical.into_iter().chain(horizontal)
    }
}

/// One validated desktop action, in the coordinates of the screenshot the model saw.
#[derive(Debug, Clone, PartialEq)]
pub enum DesktopAction {
    /// A settled capture of the whole screen at the model's frame; later coordinates refer to
    /// the frame it was sent in.
    Screenshot,
    /// A region captured at full resolution, scaled to fit the usual screenshot size.
    Zoom {
        /// The region, in screenshot pixels.
        region: ShotRegion,
    },
    /// The pointer's position, in screenshot pixels.
    CursorPosition,
    /// Click one button, once or several times.
    Click {
        /// Where; the current pointer position when absent.
        at: Option<ShotPoint>,
        /// Which button.
        button: Button,
        /// 1, 2 or 3.
        count: u8,
        /// Held only for the click.
        modifiers: ModifierSet,
    },
    /// Press the left button at the path's first point, move through the rest, release.
    Drag {
        /// At least two points.
        path: Vec<ShotPoint>,
        /// Held throughout.
        modifiers: ModifierSet,
    },
    /// Move the pointer.
    Move {
        /// Where.
        to: ShotPoint,
        /// Held only during the move (pressed, moved, released whatever happened).
        modifiers: ModifierSet,
    },
    /// Press or release a button where the pointer is.
    Button {
        /// Which.
        button: Button,
        /// Pressed or released.
        state: ButtonState,
    },
    /// Turn the wheel.
    Scroll {
        /// Where; the current pointer position when absent.
        at: Option<ShotPoint>,
        /// How far, on each axis.
        wheel: Wheel,
        /// Held only for the scroll.
        modifiers: ModifierSet,
    },
    /// Type literal text (every character one a key can type).
    Type {
        /// The text.
        text: String,
    },
    /// Press a key sequence `repeat` times.
    Keys {
        /// The chords, pressed one after another.
        sequence: KeySequence,
        /// At least 1.
        repeat: u32,
    },
    /// Hold a chord, then release it (released whatever happened meanwhile).
    HoldKeys {
        /// The chord.
        chord: KeyChord,
        /// How long.
        duration: Duration,
    },
    /// Do nothing for a while.
    Pause {
        /// How long.
        duration: Duration,
    },
    /// Wait until the screen is quiet (or the budget runs out).
    Settle(Quiet),
}

/// What an action does to the machine: the class an approver or a policy may go by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EffectClass {
    /// Looks only (screenshot, zoom, cursor position, waiting): no input reaches any window.
    Observe,
    /// Pointer input: clicks, drags, moves, the wheel.
    Pointer,
    /// Keyboard input, which goes to whichever window has focus.
    Keyboard,
}

impl DesktopAction {
    /// What the action does to the machine.
    pub fn effect(&self) -> EffectClass {
        match self {
            DesktopAction::Screenshot
            | DesktopAction::Zoom { .. }
            | DesktopAction::CursorPosition
            | DesktopAction::Pause { .. }
            | DesktopAction::Settle(_) => EffectClass::Observe,
            DesktopAction::Click { .. }
            | DesktopAction::Drag { .. }
            | DesktopAction::Move { .. }
            | DesktopAction::Button { .. }
            | DesktopAction::Scroll { .. } => EffectClass::Pointer,
            DesktopAction::Type { .. }
            | DesktopAction::Keys { .. }
            | DesktopAction::HoldKeys { .. } => EffectClass::Keyboard,
        }
    }
}

/// For a person reviewing the action: what it does, in screenshot pixels.
impl fmt::Display for DesktopAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |p: &Option<ShotPoint>| match p {
            Some(p) => format!(" at ({}, {})", p.x(), p.y()),
            None => " where the pointer is".to_owned(),
        };
        let held = |m: &ModifierSet| {
            if m.is_empty() {
                String::new()
            } else {
                let names: Vec<_> = m.iter().map(|m| m.key().name().to_owned()).collect();
                format!(" holding {}", names.join("+"))
            }
        };
        match self {
            DesktopAction::Screenshot => f.write_str("take a screenshot"),
            DesktopAction::Zoom { region } => write!(f, "zoom into {region:?}"),
            DesktopAction::CursorPosition => f.write_str("report the pointer's position"),
            DesktopAction::Click {
                at: p,
                button,
                count,
                modifiers,
            } => write!(f, "click {button:?} ×{count}{}{}", at(p), held(modifiers)),
            DesktopAction::Drag { path, modifiers } => {
                let points: Vec<_> = path
                    .iter()
                    .map(|p| format!("({}, {})", p.x(), p.y()))
                    .collect();
                write!(f, "drag through {}{}", points.join(" → "), held(modifiers))
            }
            DesktopAction::Move { to, modifiers } => {
                write!(
                    f,
                    "move the pointer to ({}, {}){}",
                    to.x(),
                    to.y(),
                    held(modifiers)
                )
            }
            DesktopAction::Button { button, state } => write!(f, "{state:?} {button:?} button"),
            DesktopAction::Scroll {
                at: p,
                wheel,
                modifiers,
            } => write!(
                f,
                "scroll {} notches down, {} right{}{}",
                wheel.y,
                wheel.x,
                at(p),
                held(modifiers)
            ),
            DesktopAction::Type { text } => write!(f, "type {text:?}"),
            DesktopAction::Keys { sequence, repeat } => {
                let chords: Vec<_> = sequence.chords().iter().map(|c| c.to_string()).collect();
                write!(f, "press {} ×{repeat}", chords.join(" "))
            }
            DesktopAction::HoldKeys { chord, duration } => {
                write!(f, "hold {chord} for {duration:?}")
            }
            DesktopAction::Pause { duration } => write!(f, "wait {duration:?}"),
            DesktopAction::Settle(_) => f.write_str("wait for the screen to settle"),
        }
    }
}

/// What an action gave back.
#[derive(Debug, Clone, PartialEq)]
pub enum DesktopOutcome {
    /// It ran; nothing to show.
    Done,
    /// An image (a screenshot or a zoom).
    Image(EncodedImage),
    /// The pointer's position, in screenshot pixels.
    Pointer(ShotPoint),
}

/// How screenshots are taken and what waiting means, shared by every surface.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScreenConfig {
    /// Screenshot sizing (the model's coordinates are in its pixels).
    pub sizing: ScreenshotSizing,
    /// PNG or JPEG.
    pub image_format: ImageFormat,
    /// Settling before a capture, and [`Quiet::Screen`].
    pub settle: SettleBudget,
    /// [`Quiet::Wait`].
    pub wait: SettleBudget,
    /// Largest base64 text of one image.
    pub max_image_base64: usize,
    /// Capture pixels per screen pixel; `None`: what the driver reports (1 on X11).
    pub device_pixel_ratio: Option<f64>,
}

impl Default for ScreenConfig {
    fn default() -> ScreenConfig {
        ScreenConfig {
            sizing: ScreenshotSizing::default(),
            image_format: ImageFormat::Png,
            settle: SettleBudget::default(),
            wait: SettleBudget {
                quiet: Duration::from_millis(500),
                cap: Duration::from_secs(3),
            },
            max_image_base64: MAX_IMAGE_BASE64_BYTES,
            device_pixel_ratio: None,
        }
    }
}

/// Runs [`DesktopAction`]s on a desktop and keeps the frame the model's coordinates refer to
/// (the last screenshot's, when it had to shrink to fit the payload limit).
pub struct DesktopActor<D> {
    desktop: D,
    screen: ScreenConfig,
    frames: ShotFrames,
}

impl<D: Desktop> DesktopActor<D> {
    /// An actor over `desktop`.
    pub fn new(desktop: D, screen: ScreenConfig) -> DesktopActor<D> {
        DesktopActor {
            desktop,
            frames: ShotFrames::new(screen.device_pixel_ratio),
            screen,
        }
    }

    /// The driver.
    pub fn desktop(&mut self) -> &mut D {
        &mut self.desktop
    }

    /// How screenshots are taken.
    pub fn screen(&self) -> &ScreenConfig {
        &self.screen
    }

    /// The frame the model's coordinates refer to.
    pub fn frame(&self) -> Frame {
        self.frames.current(&self.desktop, self.screen.sizing)
    }

    /// Runs one action. A cancelled token stops it before it starts and between the steps of
    /// one that has several (repeated keys, a pause).
    pub async fn run(
        &mut self,
        action: &DesktopAction,
        cancel: &CancellationToken,
    ) -> Result<DesktopOutcome, DesktopError> {
        if cancel.is_cancelled() {
            return Err(DesktopError::Cancelled);
        }
        match action {
            DesktopAction::Screenshot => {
                return self.screenshot(cancel).await.map(DesktopOutcome::Image);
            }
            DesktopAction::Zoom { region } => {
                return self.zoom(*region, cancel).await.map(DesktopOutcome::Image);
            }
            DesktopAction::CursorPosition => {
                let frame = self.frame();
                let p = frame.to_shot(self.desktop.pointer().await?);
                return Ok(DesktopOutcome::Pointer(p));
            }
            _ => {}
        }
        let start = Instant::now();
        self.input(action, cancel).await?;
        tracing::info!(target: "hands::action", inject_ms = ms(start.elapsed()), "input");
        Ok(DesktopOutcome::Done)
    }

    /// The actions that change the screen or wait.
    async fn input(
        &mut self,
        action: &DesktopAction,
        cancel: &CancellationToken,
    ) -> Result<(), DesktopError> {
        let frame = self.frame();
        let d = &mut self.desktop;
        let screen = |p: &Option<ShotPoint>| p.map(|p| frame.to_screen(p));
        match action {
            DesktopAction::Click {
                at,
                button,
                count,
                modifiers,
            } => d.click(screen(at), *button, *count, *modifiers).await,
            DesktopAction::Drag { path, modifiers } => {
                let path: Vec<_> = path.iter().map(|p| frame.to_screen(*p)).collect();
                d.drag(&path, Button::Left, *modifiers).await
            }
            DesktopAction::Move { to, modifiers } => {
                let to = frame.to_screen(*to);
                if modifiers.is_empty() {
                    return d.move_pointer(to).await;
                }
                let chord = KeyChord::new(modifiers.iter().map(Modifier::key).collect())
                    .map_err(|e| DesktopError::Unsupported(e.to_string()))?;
                d.key_hold(&chord, true).await?;
                let moved = d.move_pointer(to).await;
                d.key_hold(&chord, false).await?;
                moved
            }
            DesktopAction::Button { button, state } => {
                d.button(*button, *state == ButtonState::Pressed).await
            }
            DesktopAction::Scroll {
                at,
                wheel,
                modifiers,
            } => {
                for (direction, notches) in wheel.turns() {
                    d.scroll(screen(at), direction, notches, *modifiers).await?;
                }
                Ok(())
            }
            DesktopAction::Type { text } => d.type_text(text, cancel).await,
            DesktopAction::Keys { sequence, repeat } => {
                for _ in 0..*repeat {
                    for chord in sequence.chords() {
                        if cancel.is_cancelled() {
                            return Err(DesktopError::Cancelled);
                        }
                        d.key_chord(chord).await?;
                    }
                }
                Ok(())
            }
            DesktopAction::HoldKeys { chord, duration } => {
                d.key_hold(chord, true).await?;
                let waited = sleep_or_cancel(*duration, cancel).await;
                // Released whatever happened meanwhile.
                d.key_hold(chord, false).await?;
                waited
            }
            DesktopAction::Pause { duration } => sleep_or_cancel(*duration, cancel).await,
            DesktopAction::Settle(Quiet::Screen) => {
                d.settle(self.screen.settle, cancel).await.map(|_| ())
            }
            DesktopAction::Settle(Quiet::Wait) => calm(d, self.screen.wait, cancel).await,
            DesktopAction::Screenshot
            | DesktopAction::Zoom { .. }
            | DesktopAction::CursorPosition => Ok(()),
        }
    }

    /// A settled, scaled screenshot encoded within the payload limit; later coordinates refer
    /// to its frame.
    pub async fn screenshot(
        &mut self,
        cancel: &CancellationToken,
    ) -> Result<EncodedImage, DesktopError> {
        let frame = self.frame();
        let s = self.screen;
        let (image, seen, t) = screen::screenshot(
            &mut self.desktop,
            frame,
            s.settle,
            s.image_format,
            s.max_image_base64,
            cancel,
        )
        .await?;
        self.frames.seen(&self.desktop, s.sizing, seen);
        tracing::info!(target: "hands::action", member = "screenshot", settle_ms = ms(t.settle),
            capture_ms = ms(t.capture), encode_ms = ms(t.encode), settled = t.settled,
            size = %image.size, bytes = image.base64.len(), "screenshot");
        Ok(image)
    }

    async fn zoom(
        &mut self,
        region: ShotRegion,
        cancel: &CancellationToken,
    ) -> Result<EncodedImage, DesktopError> {
        let frame = self.frame();
        let s = self.screen;
        let (image, t) = screen::zoom(
            &mut self.desktop,
            frame,
            region,
            s.settle,
            s.image_format,
            s.max_image_base64,
            cancel,
        )
        .await?;
        tracing::info!(target: "hands::action", member = "zoom", settle_ms = ms(t.settle),
            capture_ms = ms(t.capture), encode_ms = ms(t.encode), settled = t.settled,
            size = %image.size, bytes = image.base64.len(), "zoom");
        Ok(image)
    }
}

/// OpenAI's `wait` ("esperar a que se estabilice el entorno"): the screen settled, and calm for
/// `budget.quiet` counted from the wait's start, within `budget.cap`. A settle alone answers at
/// once when nothing changed since the last input, yet a program may still be busy without
/// showing it (GTK's file chooser ignores Return while it loads the folder a typed path names).
async fn calm<D: Desktop + ?Sized>(
    d: &mut D,
    budget: SettleBudget,
    cancel: &CancellationToken,
) -> Result<(), DesktopError> {
    let started = Instant::now();
    d.settle(budget, cancel).await?;
    let rest = budget.quiet.saturating_sub(started.elapsed());
    if rest.is_zero() {
        return Ok(());
    }
    sleep_or_cancel(rest, cancel).await?;
    // What changed meanwhile is waited out too.
    let cap = budget.cap.saturating_sub(started.elapsed());
    d.settle(
        SettleBudget {
            quiet: budget.quiet,
            cap,
        },
        cancel,
    )
    .await
    .map(|_| ())
}

async fn sleep_or_cancel(
    duration: Duration,
    cancel: &CancellationToken,
) -> Result<(), DesktopError> {
    tokio::select! {
        () = tokio::time::sleep(duration) => Ok(()),
        () = cancel.cancelled() => Err(DesktopError::Cancelled),
    }
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e5).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wheel_turns_vertical_first_and_at_least_once() {
        let turns = |w: Wheel| w.turns().collect::<Vec<_>>();
        assert_eq!(turns(Wheel::default()), [(ScrollDirection::Down, 0)]);
        assert_eq!(
            turns(Wheel::toward(ScrollDirection::Up, 3)),
            [(ScrollDirection::Up, 3)]
        );
        assert_eq!(
            turns(Wheel::toward(ScrollDirection::Left, 2)),
            [(ScrollDirection::Left, 2)]
        );
        assert_eq!(
            turns(Wheel { x: 4, y: -1 }),
            [(ScrollDirection::Up, 1), (ScrollDirection::Right, 4)]
        );
    }

    #[test]
    fn effect_classes() {
        assert_eq!(DesktopAction::Screenshot.effect(), EffectClass::Observe);
        assert_eq!(
            DesktopAction::Type { text: "x".into() }.effect(),
            EffectClass::Keyboard
        );
        assert_eq!(
            DesktopAction::Button {
                button: Button::Left,
                state: ButtonState::Pressed
            }
            .effect(),
            EffectClass::Pointer
        );
    }
}
