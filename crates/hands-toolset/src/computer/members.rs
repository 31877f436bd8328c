//! The 17 members of `computer_toolset_20260801`, the fields each takes, and the validated
//! [`DesktopAction`] each input becomes.
//!
//! Spec: claude-computer-use-tool, "Acciones disponibles".

use std::fmt;
use std::time::Duration;

use hands_core::geometry::Frame;
use hands_core::input::{Button, KeyChord, KeySequence, ModifierSet, ScrollDirection};
use serde_json::Value;

use super::args::{Args, InputError};
use crate::actions::{ButtonState, DesktopAction, EffectClass, Wheel};

/// A member tool of the computer toolset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Member {
    /// `screenshot {}`.
    Screenshot,
    /// `zoom {region}`.
    Zoom,
    /// `left_click {coordinate?, text?}`.
    LeftClick,
    /// `right_click`.
    RightClick,
    /// `middle_click`.
    MiddleClick,
    /// `double_click`.
    DoubleClick,
    /// `triple_click`.
    TripleClick,
    /// `left_click_drag {start_coordinate, coordinate, text?}`.
    LeftClickDrag,
    /// `mouse_move {coordinate}`.
    MouseMove,
    /// `left_mouse_down {}`.
    LeftMouseDown,
    /// `left_mouse_up {}`.
    LeftMouseUp,
    /// `cursor_position {}`.
    CursorPosition,
    /// `scroll {scroll_direction, scroll_amount, coordinate?, text?}`.
    Scroll,
    /// `type {text}`.
    Type,
    /// `key {text, repeat?}`.
    Key,
    /// `hold_key {text, duration}`.
    HoldKey,
    /// `wait {duration}`.
    Wait,
}

impl Member {
    /// The members that send keyboard input: the ones the SDK's computer toolset runs only
    /// after its `confirm` callback approves (`CONFIRM_REQUIRED` in the `anthropic` package's
    /// `_computer_registry.py`), because keys go to whichever window has focus and what the
    /// screen shows can steer what the model types. Use them as
    /// [`super::ComputerConfig::confirm_members`].
    ///
    /// Spec: api-contracts B, "Helpers" ("`type`, `key` and `hold_key` require a `confirm`
    /// callback").
    pub const KEYBOARD: [Member; 3] = [Member::Type, Member::Key, Member::HoldKey];

    /// All 17, in the spec's order.
    pub const ALL: [Member; 17] = [
        Member::Screenshot,
        Member::Zoom,
        Member::LeftClick,
        Member::RightClick,
        Member::MiddleClick,
        Member::DoubleClick,
        Member::TripleClick,
        Member::LeftClickDrag,
        Member::MouseMove,
        Member::LeftMouseDown,
        Member::LeftMouseUp,
        Member::CursorPosition,
        Member::Scroll,
        Member::Type,
        Member::Key,
        Member::HoldKey,
        Member::Wait,
    ];

    /// The wire name.
    pub const fn name(self) -> &'static str {
        match self {
            Member::Screenshot => "screenshot",
            Member::Zoom => "zoom",
            Member::LeftClick => "left_click",
            Member::RightClick => "right_click",
            Member::MiddleClick => "middle_click",
            Member::DoubleClick => "double_click",
            Member::TripleClick => "triple_click",
            Member::LeftClickDrag => "left_click_drag",
            Member::MouseMove => "mouse_move",
            Member::LeftMouseDown => "left_mouse_down",
            Member::LeftMouseUp => "left_mouse_up",
            Member::CursorPosition => "cursor_position",
            Member::Scroll => "scroll",
            Member::Type => "type",
            Member::Key => "key",
            Member::HoldKey => "hold_key",
            Member::Wait => "wait",
        }
    }

    /// The member a wire name means.
    pub fn from_name(name: &str) -> Option<Member> {
        Member::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The input fields the member takes.
    pub const fn fields(self) -> &'static [&'static str] {
        match self {
            Member::Screenshot
            | Member::LeftMouseDown
            | Member::LeftMouseUp
            | Member::CursorPosition => &[],
            Member::Zoom => &["region"],
            Member::LeftClick
            | Member::RightClick
            | Member::MiddleClick
            | Member::DoubleClick
            | Member::TripleClick => &["coordinate", "text"],
            Member::LeftClickDrag => &["start_coordinate", "coordinate", "text"],
            Member::MouseMove => &["coordinate"],
            Member::Scroll => &["scroll_direction", "scroll_amount", "coordinate", "text"],
            Member::Type => &["text"],
            Member::Key => &["text", "repeat"],
            Member::HoldKey => &["text", "duration"],
            Member::Wait => &["duration"],
        }
    }

    /// What the member's action does to the machine (the class of every [`DesktopAction`] it
    /// parses into; a test checks they agree).
    pub const fn effect(self) -> EffectClass {
        match self {
            Member::Screenshot | Member::Zoom | Member::CursorPosition | Member::Wait => {
                EffectClass::Observe
            }
            Member::Type | Member::Key | Member::HoldKey => EffectClass::Keyboard,
            _ => EffectClass::Pointer,
        }
    }

    /// Whether the member's result is an image.
    pub const fn returns_image(self) -> bool {
        matches!(self, Member::Screenshot | Member::Zoom)
    }
}

impl fmt::Display for Member {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Longest `duration` of `hold_key` and `wait`, in seconds.
pub const MAX_DURATION_SECONDS: f64 = 300.0;
/// Largest `repeat` of `key`.
pub const MAX_KEY_REPEAT: u64 = 100;
/// Largest `scroll_amount`, in wheel clicks. The spec sets no ceiling; 100 clicks is far beyond
/// any page a model would scroll in one action and keeps one call bounded.
pub const MAX_SCROLL_AMOUNT: u64 = 100;

/// Which wire shapes a member's input follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputShape {
    /// `computer_toolset_20260801`: anthropic 2.10's `beta_computer_<member>_input.py`, where
    /// `hold_key` and `wait` take a whole number of seconds (`duration: int`).
    Toolset,
    /// The legacy `computer` tool: `input.action` names the member (the caller consumed it) and
    /// a `duration` may be fractional, as the reference implementation reads it.
    Legacy,
}

/// Parses and validates `input` for `member` against the current screenshot `frame`, in the wire
/// `shape` of the tool that sent it: the member's [`DesktopAction`].
pub fn parse(
    member: Member,
    input: &Value,
    frame: Frame,
    shape: InputShape,
) -> Result<DesktopAction, InputError> {
    // The legacy tool's `action` is the member's name, consumed by the caller.
    let ignore: &[&str] = match shape {
        InputShape::Toolset => &[],
        InputShape::Legacy => &["action"],
    };
    let args = Args::new(member, input, frame, ignore)?;
    let seconds = |args: &Args<'_>| -> Result<Duration, InputError> {
        match shape {
            InputShape::Toolset => args.whole_seconds(
                "duration",
                MAX_DURATION_SECONDS as u64,
                "a whole number of seconds from 0 to 300",
            ),
            InputShape::Legacy => args.seconds(
                "duration",
                MAX_DURATION_SECONDS,
                "a number of seconds from 0 to 300",
            ),
        }
    };
    let modifiers = |args: &Args<'_>| -> Result<ModifierSet, InputError> {
        match args.string("text")? {
            None => Ok(ModifierSet::NONE),
            Some(text) if text.trim().is_empty() => Ok(ModifierSet::NONE),
            Some(text) => ModifierSet::parse(text).map_err(|e| args.key_error(e)),
        }
    };
    let click = |button, count| -> Result<DesktopAction, InputError> {
        Ok(DesktopAction::Click {
            at: args.point("coordinate")?,
            button,
            count,
            modifiers: modifiers(&args)?,
        })
    };
    Ok(match member {
        Member::Screenshot => DesktopAction::Screenshot,
        Member::Zoom => DesktopAction::Zoom {
            region: args.region("region")?,
        },
        Member::LeftClick => click(Button::Left, 1)?,
        Member::RightClick => click(Button::Right, 1)?,
        Member::MiddleClick => click(Button::Middle, 1)?,
        Member::DoubleClick => click(Button::Left, 2)?,
        Member::TripleClick => click(Button::Left, 3)?,
        Member::LeftClickDrag => DesktopAction::Drag {
            path: vec![
                args.required_point("start_coordinate")?,
                args.required_point("coordinate")?,
            ],
            modifiers: modifiers(&args)?,
        },
        Member::MouseMove => DesktopAction::Move {
            to: args.required_point("coordinate")?,
            modifiers: ModifierSet::NONE,
        },
        Member::LeftMouseDown => DesktopAction::Button {
            button: Button::Left,
            state: ButtonState::Pressed,
        },
        Member::LeftMouseUp => DesktopAction::Button {
            button: Button::Left,
            state: ButtonState::Released,
        },
        Member::CursorPosition => DesktopAction::CursorPosition,
        Member::Scroll => {
            const DIRECTION: &str = "one of \"up\", \"down\", \"left\", \"right\"";
            let raw = args.required_string("scroll_direction", DIRECTION)?;
            let direction = ScrollDirection::parse(raw).ok_or_else(|| InputError::WrongType {
                member,
                field: "scroll_direction",
                expected: DIRECTION,
                got: format!("{raw:?}"),
            })?;
            const AMOUNT: &str = "an integer number of wheel clicks, 0 to 100";
            let amount = args
                .integer_in("scroll_amount", 0, MAX_SCROLL_AMOUNT, AMOUNT)?
                .ok_or(InputError::Missing {
                    member,
                    field: "scroll_amount",
                    expected: AMOUNT,
                })?;
            DesktopAction::Scroll {
                at: args.point("coordinate")?,
                wheel: Wheel::toward(direction, amount as u32),
                modifiers: modifiers(&args)?,
            }
        }
        Member::Type => {
            let text = args.required_string("text", "the string to type")?;
            // Refused before anything is typed: no key types a control character other
            // than newline, return and tab.
            if let Err(source) = hands_core::input::text_keysyms(text) {
                return Err(InputError::Text { member, source });
            }
            DesktopAction::Type {
                text: text.to_owned(),
            }
        }
        Member::Key => {
            let text =
                args.required_string("text", "a key or chord such as \"Return\" or \"ctrl+s\"")?;
            let keys = KeySequence::parse(text).map_err(|e| args.key_error(e))?;
            let repeat = args
                .integer_in("repeat", 1, MAX_KEY_REPEAT, "an integer from 1 to 100")?
                .unwrap_or(1);
            DesktopAction::Keys {
                sequence: keys,
                repeat: repeat as u32,
            }
        }
        Member::HoldKey => {
            let text = args.required_string("text", "a key or chord such as \"shift\"")?;
            let chord = KeyChord::parse(text).map_err(|e| args.key_error(e))?;
            DesktopAction::HoldKeys {
                chord,
                duration: seconds(&args)?,
            }
        }
        Member::Wait => DesktopAction::Pause {
            duration: seconds(&args)?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hands_core::geometry::{ScreenshotSizing, Size};
    use serde_json::json;

    fn frame() -> Frame {
        Frame::new(
            Size::new(1280, 800).unwrap(),
            1.0,
            ScreenshotSizing::default(),
        )
    }

    fn ok(member: &str, input: Value) -> DesktopAction {
        let m = Member::from_name(member).unwrap();
        parse(m, &input, frame(), InputShape::Toolset)
            .unwrap_or_else(|e| panic!("{member} {input}: {e}"))
    }

    fn err(member: &str, input: Value) -> String {
        let m = Member::from_name(member).unwrap();
        parse(m, &input, frame(), InputShape::Toolset)
            .map(|a| panic!("{member} {input} parsed as {a:?}"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_text_no_key_can_type_is_refused_before_typing() {
        for (text, code) in [
            ("bell\u{7}", "U+0007"),
            ("\u{1b}[2J", "U+001B"),
            ("x\u{85}", "U+0085"),
        ] {
            let why = err("type", json!({ "text": text }));
            assert!(why.contains(code) && why.contains("key action"), "{why}");
        }
        // Newline, return and tab are keys.
        for text in ["a\nb", "a\r\nb", "a\tb"] {
            assert!(matches!(
                ok("type", json!({ "text": text })),
                DesktopAction::Type { .. }
            ));
        }
    }

    #[test]
    fn a_members_effect_class_is_its_actions() {
        for member in Member::ALL {
            let input = match member {
                Member::Zoom => json!({"region": [0, 0, 10, 10]}),
                Member::LeftClickDrag => json!({"start_coordinate": [1, 1], "coordinate": [2, 2]}),
                Member::MouseMove => json!({"coordinate": [1, 1]}),
                Member::Scroll => json!({"scroll_direction": "down", "scroll_amount": 1}),
                Member::Type | Member::Key => json!({"text": "a"}),
                Member::HoldKey => json!({"text": "a", "duration": 1}),
                Member::Wait => json!({"duration": 1}),
                _ => json!({}),
            };
            assert_eq!(
                ok(member.name(), input).effect(),
                member.effect(),
                "{member}"
            );
        }
    }

    #[test]
    fn there_are_seventeen_distinct_members() {
        let mut names: Vec<_> = Member::ALL.iter().map(|m| m.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 17);
    }

    #[test]
    fn valid_inputs() {
        assert_eq!(ok("screenshot", json!({})), DesktopAction::Screenshot);
        assert!(matches!(
            ok("left_click", json!({})),
            DesktopAction::Click {
                at: None,
                button: Button::Left,
                count: 1,
                ..
            }
        ));
        let DesktopAction::Click {
            at: Some(p),
            modifiers,
            ..
        } = ok(
            "left_click",
            json!({"coordinate": [500, 300], "text": "shift"}),
        )
        else {
            panic!()
        };
        assert_eq!((p.x(), p.y()), (500, 300));
        assert!(modifiers.contains(hands_core::input::Modifier::Shift));
        assert!(matches!(
            ok("triple_click", json!({"coordinate": [1, 1]})),
            DesktopAction::Click { count: 3, .. }
        ));
        assert!(matches!(
            ok("key", json!({"text": "Tab", "repeat": 4})),
            DesktopAction::Keys { repeat: 4, .. }
        ));
        assert!(matches!(
            ok("key", json!({"text": "Return"})),
            DesktopAction::Keys { repeat: 1, .. }
        ));
        assert!(matches!(
            ok(
                "scroll",
                json!({"scroll_direction": "down", "scroll_amount": 3, "coordinate": [500, 400]})
            ),
            DesktopAction::Scroll {
                wheel: Wheel { x: 0, y: 3 },
                ..
            }
        ));
        assert_eq!(
            ok("wait", json!({"duration": 2.0})),
            DesktopAction::Pause {
                duration: Duration::from_secs(2)
            }
        );
        // The legacy tool reads fractional seconds.
        assert_eq!(
            parse(
                Member::Wait,
                &json!({"action": "wait", "duration": 1.5}),
                frame(),
                InputShape::Legacy
            ),
            Ok(DesktopAction::Pause {
                duration: Duration::from_millis(1500)
            })
        );
        assert!(matches!(
            ok("zoom", json!({"region": [100, 200, 400, 350]})),
            DesktopAction::Zoom { .. }
        ));
        // null stands for an absent optional field.
        assert!(matches!(
            ok("left_click", json!({"coordinate": null})),
            DesktopAction::Click { at: None, .. }
        ));
    }

    #[test]
    fn malformed_inputs_say_what_was_wrong() {
        assert_eq!(
            err("left_click", json!({"coordinate": [1280, 10]})),
            "`left_click`: coordinate [1280, 10] is outside the screenshot, which is 1280x800 pixels: x must be 0..=1279 and y 0..=799"
        );
        assert_eq!(
            err("left_click", json!({"coordinate": [-1, 10]})),
            "`left_click`: `coordinate` must be an array of two non-negative integers [x, y] in screenshot pixels, got [-1,10]"
        );
        assert!(err("left_click", json!({"coordinate": "1,2"})).contains("got \"1,2\""));
        assert!(
            err("left_click", json!({"coordinate": [1.5, 2]})).contains("non-negative integers")
        );
        assert_eq!(
            err("key", json!({"text": "Tab", "repeat": 101})),
            "`key`: `repeat` must be an integer from 1 to 100, got 101"
        );
        assert!(err("key", json!({"text": "Tab", "repeat": 0})).contains("1 to 100"));
        assert!(err("key", json!({})).contains("requires `text`"));
        assert!(err("key", json!({"text": "ctrl+bogus"})).contains("unknown key name \"bogus\""));
        assert!(err("wait", json!({"duration": 301})).contains("0 to 300"));
        assert!(err("hold_key", json!({"text": "shift", "duration": -1})).contains("0 to 300"));
        // anthropic 2.10's `duration: int`: a fraction is refused, as pydantic refuses it.
        assert_eq!(
            err("wait", json!({"duration": 1.5})),
            "`wait`: `duration` must be a whole number of seconds from 0 to 300, got 1.5"
        );
        assert!(
            err("hold_key", json!({"text": "shift", "duration": 0.5})).contains("whole number")
        );
        assert!(err("wait", json!({"duration": "2"})).contains("whole number"));
        assert!(
            err("wait", json!({"action": "wait", "duration": 1}))
                .contains("does not take `action`")
        );
        assert!(err("zoom", json!({"region": [10, 10, 5, 20]})).contains("x0 < x1"));
        assert!(
            err("zoom", json!({"region": [0, 0, 1281, 20]})).contains("outside the screenshot")
        );
        assert!(err("zoom", json!({"region": [0, 0, 10]})).contains("four non-negative integers"));
        assert!(
            err(
                "scroll",
                json!({"scroll_direction": "sideways", "scroll_amount": 1})
            )
            .contains("\"up\"")
        );
        assert!(
            err("scroll", json!({"scroll_direction": "up"})).contains("requires `scroll_amount`")
        );
        assert_eq!(
            err("screenshot", json!({"action": "screenshot"})),
            "`screenshot` does not take `action`; it takes no fields (send {})"
        );
        assert!(err("left_click", json!({"text": "ctrl+q"})).contains("not a modifier"));
        assert!(err("type", json!("hello")).contains("takes a JSON object"));
        assert!(
            err("left_click_drag", json!({"coordinate": [1, 1]}))
                .contains("requires `start_coordinate`")
        );
    }
}
