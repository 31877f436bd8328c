//! Taking the wheel of a live run (issue 22): the person clicks "Take over" on the page, the
//! run pauses when its turn ends (the runner asks between turns, never mid-action), the page
//! shows the screen and sends the person's clicks, keys and text to it, and "Give back" lets the
//! run go on. Who holds the wheel is a small state machine: the model, asked for (the person
//! clicked, the run has not reached a turn's end yet), or the person (with the [`Screen`] the
//! run handed over).
//!
//! What it is not: an observer. What the person did is observed by whoever provides the screen
//! (the `hands` binary, through the browser or the desktop driver) and told to the model by the
//! runner.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// A boxed future, for [`Screen`]'s methods.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the person sees and acts on while they hold the wheel: the browser tab or the desktop
/// the run handed over.
pub trait Screen: Send + Sync {
    /// The picture now, as a JPEG.
    fn frame(&self) -> BoxFuture<'_, Result<Vec<u8>, String>>;
    /// Sends one input of the person's.
    fn input(&self, input: PersonInput) -> BoxFuture<'_, Result<(), String>>;
}

/// A key the page forwards as a key press (characters go as [`PersonInput::Text`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub enum PersonKey {
    /// Enter.
    Enter,
    /// Backspace.
    Backspace,
    /// Tab.
    Tab,
    /// Escape.
    Escape,
    /// Delete.
    Delete,
    /// Arrow up.
    ArrowUp,
    /// Arrow down.
    ArrowDown,
    /// Arrow left.
    ArrowLeft,
    /// Arrow right.
    ArrowRight,
    /// Home.
    Home,
    /// End.
    End,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
}

impl PersonKey {
    /// Its X keysym name (hands' one key grammar).
    pub fn keysym_name(self) -> &'static str {
        match self {
            PersonKey::Enter => "Return",
            PersonKey::Backspace => "BackSpace",
            PersonKey::Tab => "Tab",
            PersonKey::Escape => "Escape",
            PersonKey::Delete => "Delete",
            PersonKey::ArrowUp => "Up",
            PersonKey::ArrowDown => "Down",
            PersonKey::ArrowLeft => "Left",
            PersonKey::ArrowRight => "Right",
            PersonKey::Home => "Home",
            PersonKey::End => "End",
            PersonKey::PageUp => "Prior",
            PersonKey::PageDown => "Next",
        }
    }
}

/// The most text one input carries.
pub const MAX_TEXT: usize = 1000;

/// The largest coordinate the page may send (CSS pixels).
const MAX_COORD: f64 = 100_000.0;

/// One input of the person's, checked ([`PersonInput::parse`]).
#[derive(Debug, Clone, PartialEq)]
pub enum PersonInput {
    /// A left click at a point of the screen's picture.
    Click {
        /// Pixels from the left.
        x: f64,
        /// Pixels from the top.
        y: f64,
    },
    /// The mouse wheel turned at a point.
    Scroll {
        /// Pixels from the left.
        x: f64,
        /// Pixels from the top.
        y: f64,
        /// How far, down when positive.
        dy: f64,
    },
    /// A key pressed and released.
    Key(PersonKey),
    /// Text typed.
    Text(String),
}

/// The page's input as posted: `{"type": "click", "x": …, "y": …}`, `{"type": "scroll", …,
/// "dy": …}`, `{"type": "key", "key": "Enter"}`, `{"type": "text", "text": "…"}`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum RawInput {
    /// A click.
    Click {
        /// x.
        x: f64,
        /// y.
        y: f64,
    },
    /// A wheel turn.
    Scroll {
        /// x.
        x: f64,
        /// y.
        y: f64,
        /// Distance.
        dy: f64,
    },
    /// A key.
    Key {
        /// Its DOM name.
        key: PersonKey,
    },
    /// Text.
    Text {
        /// The characters.
        text: String,
    },
}

impl PersonInput {
    /// Checks the page's input: points on the picture (finite, not negative), a wheel turn of
    /// at most 10,000 pixels, text of 1 to [`MAX_TEXT`] characters without control characters
    /// (keys go as keys).
    pub fn parse(raw: RawInput) -> Result<PersonInput, String> {
        let point = |x: f64, y: f64| {
            if x.is_finite()
                && y.is_finite()
                && (0.0..MAX_COORD).contains(&x)
                && (0.0..MAX_COORD).contains(&y)
            {
                Ok(())
            } else {
                Err(format!("({x}, {y}) is not a point of the screen"))
            }
        };
        match raw {
            RawInput::Click { x, y } => point(x, y).map(|()| PersonInput::Click { x, y }),
            RawInput::Scroll { x, y, dy } => {
                point(x, y)?;
                if !dy.is_finite() || dy.abs() > 10_000.0 {
                    return Err(format!("a wheel turn of {dy} pixels: give at most 10000"));
                }
                Ok(PersonInput::Scroll { x, y, dy })
            }
            RawInput::Key { key } => Ok(PersonInput::Key(key)),
            RawInput::Text { text } => {
                let n = text.chars().count();
                if n == 0 || n > MAX_TEXT {
                    return Err(format!("text of {n} characters: send 1 to {MAX_TEXT}"));
                }
                if text.chars().any(char::is_control) {
                    return Err("text with control characters: send keys as keys".into());
                }
                Ok(PersonInput::Text(text))
            }
        }
    }
}

/// Who holds the wheel, as the page shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Holder {
    /// The model drives.
    Model,
    /// The person asked; the run pauses when its turn ends.
    Asked,
    /// The person drives; the run waits.
    Person,
}

#[derive(Default)]
struct State {
    asked: bool,
    screen: Option<Arc<dyn Screen>>,
    /// Why the run cannot be handed over (no browser or desktop), when it cannot.
    unavailable: Option<String>,
}

/// The wheel of a live run, shared by the page (which asks and gives back) and the run
/// (which hands the screen over between turns and waits).
#[derive(Clone)]
pub struct Wheel {
    state: Arc<Mutex<State>>,
    changed: Arc<watch::Sender<u64>>,
}

impl std::fmt::Debug for Wheel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wheel")
            .field("holder", &self.holder())
            .finish()
    }
}

impl Default for Wheel {
    fn default() -> Wheel {
        Wheel {
            state: Arc::new(Mutex::new(State {
                unavailable: Some(NO_SCREEN.into()),
                ..State::default()
            })),
            changed: Arc::new(watch::channel(0).0),
        }
    }
}

/// Why a run cannot be taken over until the run says it can.
pub const NO_SCREEN: &str = "this run has no browser or desktop the page can hand over";

/// Why a run that ended cannot be taken over.
pub const RUN_ENDED: &str = "the run has ended";

/// The wheel as the page sees it.
#[derive(Debug, Clone, Serialize)]
pub struct WheelStatus {
    /// Who holds it.
    pub holder: Holder,
    /// Why it cannot be taken, when it cannot.
    pub unavailable: Option<String>,
}

impl Wheel {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn bump(&self) {
        self.changed.send_modify(|v| *v += 1);
    }

    /// The run can be handed over (it has a screen to hand).
    pub fn enable(&self) {
        self.lock().unavailable = None;
        self.bump();
    }

    /// The run can no longer be handed over (it ended): says why to the page.
    pub fn disable(&self, why: &str) {
        {
            let mut state = self.lock();
            state.unavailable = Some(why.to_owned());
            state.asked = false;
            state.screen = None;
        }
        self.bump();
    }

    /// Who holds the wheel.
    pub fn holder(&self) -> Holder {
        let state = self.lock();
        match (&state.screen, state.asked) {
            (Some(_), _) => Holder::Person,
            (None, true) => Holder::Asked,
            (None, false) => Holder::Model,
        }
    }

    /// The status for the page.
    pub fn status(&self) -> WheelStatus {
        WheelStatus {
            holder: self.holder(),
            unavailable: self.lock().unavailable.clone(),
        }
    }

    /// The person clicked "Take over". Refused (with why) when the run cannot be handed over.
    pub fn ask(&self) -> Result<Holder, String> {
        {
            let mut state = self.lock();
            if let Some(why) = &state.unavailable {
                return Err(why.clone());
            }
            state.asked = true;
        }
        self.bump();
        Ok(self.holder())
    }

    /// The person clicked "Give back" (or withdrew their request): the model drives again.
    pub fn give_back(&self) -> bool {
        let was = {
            let mut state = self.lock();
            let was = state.asked || state.screen.is_some();
            state.asked = false;
            state.screen = None;
            was
        };
        self.bump();
        was
    }

    /// Whether the person asked for the wheel and does not hold it yet.
    pub fn asked(&self) -> bool {
        self.holder() == Holder::Asked
    }

    /// Between turns: hands `screen` to the person if they asked; false when they did not.
    pub fn hand_over(&self, screen: Arc<dyn Screen>) -> bool {
        let handed = {
            let mut state = self.lock();
            if state.asked && state.screen.is_none() {
                state.screen = Some(screen);
                true
            } else {
                false
            }
        };
        if handed {
            self.bump();
        }
        handed
    }

    /// Waits until the person gives the wheel back. Cancelled (the run stops): the wheel goes
    /// back to the model at once.
    pub async fn returned(&self, cancel: &CancellationToken) {
        let mut rx = self.changed.subscribe();
        loop {
            if self.holder() == Holder::Model {
                return;
            }
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return },
                () = cancel.cancelled() => {
                    self.give_back();
                    return;
                }
            }
        }
    }

    /// The screen, while the person holds the wheel.
    pub fn screen(&self) -> Option<Arc<dyn Screen>> {
        self.lock().screen.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Blank;
    impl Screen for Blank {
        fn frame(&self) -> BoxFuture<'_, Result<Vec<u8>, String>> {
            Box::pin(async { Ok(Vec::new()) })
        }
        fn input(&self, _: PersonInput) -> BoxFuture<'_, Result<(), String>> {
            Box::pin(async { Ok(()) })
        }
    }

    #[tokio::test]
    async fn the_wheel_goes_to_the_person_only_when_asked_and_back_when_given() {
        let wheel = Wheel::default();
        assert_eq!(
            wheel.ask(),
            Err(NO_SCREEN.to_owned()),
            "nothing to hand yet"
        );
        wheel.enable();
        assert!(!wheel.hand_over(Arc::new(Blank)), "nobody asked");
        assert_eq!(wheel.holder(), Holder::Model);
        assert_eq!(wheel.ask(), Ok(Holder::Asked));
        assert!(
            wheel.screen().is_none(),
            "the run has not reached a turn's end"
        );
        assert!(wheel.hand_over(Arc::new(Blank)));
        assert_eq!(wheel.holder(), Holder::Person);
        let waiter = {
            let wheel = wheel.clone();
            tokio::spawn(async move { wheel.returned(&CancellationToken::new()).await })
        };
        assert!(wheel.give_back());
        waiter.await.unwrap();
        assert_eq!(wheel.holder(), Holder::Model);
        assert!(wheel.screen().is_none());
    }

    #[tokio::test]
    async fn a_stopped_run_takes_the_wheel_back() {
        let wheel = Wheel::default();
        wheel.enable();
        wheel.ask().unwrap();
        assert!(wheel.hand_over(Arc::new(Blank)));
        let cancel = CancellationToken::new();
        cancel.cancel();
        wheel.returned(&cancel).await;
        assert_eq!(wheel.holder(), Holder::Model);
    }

    #[test]
    fn the_pages_input_is_checked() {
        let parse = |v: serde_json::Value| {
            serde_json::from_value::<RawInput>(v)
                .map_err(|e| e.to_string())
                .and_then(PersonInput::parse)
        };
        assert_eq!(
            parse(serde_json::json!({"type": "click", "x": 10.5, "y": 3})),
            Ok(PersonInput::Click { x: 10.5, y: 3.0 })
        );
        assert_eq!(
            parse(serde_json::json!({"type": "key", "key": "Enter"})),
            Ok(PersonInput::Key(PersonKey::Enter))
        );
        assert!(parse(serde_json::json!({"type": "click", "x": -1, "y": 3})).is_err());
        assert!(parse(serde_json::json!({"type": "key", "key": "F13"})).is_err());
        assert!(parse(serde_json::json!({"type": "text", "text": ""})).is_err());
        assert!(parse(serde_json::json!({"type": "text", "text": "a\nb"})).is_err());
        assert!(parse(serde_json::json!({"type": "scroll", "x": 1, "y": 1, "dy": 1e9})).is_err());
        assert!(parse(serde_json::json!({"type": "text", "text": "ok", "more": 1})).is_err());
    }
}
