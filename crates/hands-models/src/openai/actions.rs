//! The computer tool's action objects (`computer_call.action` / `.actions[]`), typed.
//!
//! Spec: api-contracts B, "Actions"; openai-browser-desktop-drivers, "Contrato del
//! controlador de computadora". An action this crate cannot type stays [`ComputerAction::Unknown`]
//! or [`ComputerAction::Malformed`]: the runner refuses it, it is never silently dropped.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// `type` of a click action.
pub const ACTION_CLICK: &str = "click";
/// `type` of a double click action.
pub const ACTION_DOUBLE_CLICK: &str = "double_click";
/// `type` of a drag action.
pub const ACTION_DRAG: &str = "drag";
/// `type` of a key press action.
pub const ACTION_KEYPRESS: &str = "keypress";
/// `type` of a pointer move action.
pub const ACTION_MOVE: &str = "move";
/// `type` of a scroll action.
pub const ACTION_SCROLL: &str = "scroll";
/// `type` of a typing action.
pub const ACTION_TYPE: &str = "type";
/// `type` of a wait action.
pub const ACTION_WAIT: &str = "wait";
/// `type` of a screenshot action.
pub const ACTION_SCREENSHOT: &str = "screenshot";

/// A mouse button of a `click`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MouseButton {
    /// `left`.
    Left,
    /// `right`.
    Right,
    /// `wheel` (the middle button).
    Wheel,
    /// `back`.
    Back,
    /// `forward`.
    Forward,
}

/// One point of a drag path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathPoint {
    /// Screenshot x.
    pub x: i64,
    /// Screenshot y.
    pub y: i64,
}

/// One computer action. Coordinates are in the screenshot's pixels; `keys` are the modifiers
/// held during the action, in OpenAI's key names (`CTRL`, `SHIFT`, `CMD`…).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ComputerAction {
    /// `click {button, x, y, keys?}`.
    Click {
        /// The button.
        button: MouseButton,
        /// x.
        x: i64,
        /// y.
        y: i64,
        /// Held modifiers.
        keys: Vec<String>,
    },
    /// `double_click {x, y, keys?}`.
    DoubleClick {
        /// x.
        x: i64,
        /// y.
        y: i64,
        /// Held modifiers.
        keys: Vec<String>,
    },
    /// `drag {path, keys?}`: press at the first point, move through the rest, release.
    Drag {
        /// The path, at least two points in a valid call.
        path: Vec<PathPoint>,
        /// Held modifiers.
        keys: Vec<String>,
    },
    /// `keypress {keys}`: the keys pressed together as one chord.
    Keypress {
        /// The keys.
        keys: Vec<String>,
    },
    /// `move {x, y, keys?}`.
    Move {
        /// x.
        x: i64,
        /// y.
        y: i64,
        /// Held modifiers.
        keys: Vec<String>,
    },
    /// `scroll {x, y, scroll_x, scroll_y, keys?}`, amounts in pixels.
    Scroll {
        /// x of the pointer.
        x: i64,
        /// y of the pointer.
        y: i64,
        /// Horizontal pixels (positive: right).
        scroll_x: i64,
        /// Vertical pixels (positive: down).
        scroll_y: i64,
        /// Held modifiers.
        keys: Vec<String>,
    },
    /// `type {text}`.
    Type {
        /// The text.
        text: String,
    },
    /// `wait {}`.
    Wait,
    /// `screenshot {}`.
    Screenshot,
    /// An action type this crate does not know, verbatim.
    Unknown(Value),
    /// A known action type whose fields are wrong (missing `x`, an unknown button…).
    Malformed {
        /// The action's `type`.
        action_type: String,
        /// What was wrong.
        reason: String,
        /// The action, verbatim.
        raw: Value,
    },
}

#[derive(Deserialize)]
struct ClickWire {
    button: MouseButton,
    x: i64,
    y: i64,
    #[serde(default)]
    keys: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct PointWire {
    x: i64,
    y: i64,
    #[serde(default)]
    keys: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct DragWire {
    path: Vec<PathPoint>,
    #[serde(default)]
    keys: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct KeypressWire {
    keys: Vec<String>,
}

#[derive(Deserialize)]
struct ScrollWire {
    x: i64,
    y: i64,
    scroll_x: i64,
    scroll_y: i64,
    #[serde(default)]
    keys: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct TypeWire {
    text: String,
}

impl ComputerAction {
    /// Types an action object.
    pub fn from_value(value: Value) -> ComputerAction {
        let Some(kind) = value.get("type").and_then(Value::as_str).map(str::to_owned) else {
            return ComputerAction::Unknown(value);
        };
        let typed = match kind.as_str() {
            ACTION_CLICK => ClickWire::deserialize(&value).map(|w| ComputerAction::Click {
                button: w.button,
                x: w.x,
                y: w.y,
                keys: w.keys.unwrap_or_default(),
            }),
            ACTION_DOUBLE_CLICK => {
                PointWire::deserialize(&value).map(|w| ComputerAction::DoubleClick {
                    x: w.x,
                    y: w.y,
                    keys: w.keys.unwrap_or_default(),
                })
            }
            ACTION_DRAG => DragWire::deserialize(&value).map(|w| ComputerAction::Drag {
                path: w.path,
                keys: w.keys.unwrap_or_default(),
            }),
            ACTION_KEYPRESS => {
                KeypressWire::deserialize(&value).map(|w| ComputerAction::Keypress { keys: w.keys })
            }
            ACTION_MOVE => PointWire::deserialize(&value).map(|w| ComputerAction::Move {
                x: w.x,
                y: w.y,
                keys: w.keys.unwrap_or_default(),
            }),
            ACTION_SCROLL => ScrollWire::deserialize(&value).map(|w| ComputerAction::Scroll {
                x: w.x,
                y: w.y,
                scroll_x: w.scroll_x,
                scroll_y: w.scroll_y,
                keys: w.keys.unwrap_or_default(),
            }),
            ACTION_TYPE => {
                TypeWire::deserialize(&value).map(|w| ComputerAction::Type { text: w.text })
            }
            ACTION_WAIT => Ok(ComputerAction::Wait),
            ACTION_SCREENSHOT => Ok(ComputerAction::Screenshot),
            _ => return ComputerAction::Unknown(value),
        };
        typed.unwrap_or_else(|err| ComputerAction::Malformed {
            action_type: kind,
            reason: err.to_string(),
            raw: value,
        })
    }

    /// The action's `type` string.
    pub fn action_type(&self) -> &str {
        match self {
            ComputerAction::Click { .. } => ACTION_CLICK,
            ComputerAction::DoubleClick { .. } => ACTION_DOUBLE_CLICK,
            ComputerAction::Drag { .. } => ACTION_DRAG,
            ComputerAction::Keypress { .. } => ACTION_KEYPRESS,
            ComputerAction::Move { .. } => ACTION_MOVE,
            ComputerAction::Scroll { .. } => ACTION_SCROLL,
            ComputerAction::Type { .. } => ACTION_TYPE,
            ComputerAction::Wait => ACTION_WAIT,
            ComputerAction::Screenshot => ACTION_SCREENSHOT,
            ComputerAction::Unknown(value) => {
                value.get("type").and_then(Value::as_str).unwrap_or("")
            }
            ComputerAction::Malformed { action_type, .. } => action_type,
        }
    }
}

impl<'de> Deserialize<'de> for ComputerAction {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(ComputerAction::from_value(Value::deserialize(
            deserializer,
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys(names: &[&str]) -> Vec<String> {
        names.iter().map(|k| (*k).to_owned()).collect()
    }

    #[test]
    fn the_nine_actions() {
        let cases = [
            (
                json!({"type":"click","button":"left","x":10,"y":20}),
                ComputerAction::Click {
                    button: MouseButton::Left,
                    x: 10,
                    y: 20,
                    keys: vec![],
                },
            ),
            (
                json!({"type":"click","button":"wheel","x":1,"y":2,"keys":["CTRL"]}),
                ComputerAction::Click {
                    button: MouseButton::Wheel,
                    x: 1,
                    y: 2,
                    keys: keys(&["CTRL"]),
                },
            ),
            (
                json!({"type":"click","button":"back","x":0,"y":0}),
                ComputerAction::Click {
                    button: MouseButton::Back,
                    x: 0,
                    y: 0,
                    keys: vec![],
                },
            ),
            (
                json!({"type":"click","button":"forward","x":0,"y":0}),
                ComputerAction::Click {
                    button: MouseButton::Forward,
                    x: 0,
                    y: 0,
                    keys: vec![],
                },
            ),
            (
                json!({"type":"double_click","x":5,"y":6}),
                ComputerAction::DoubleClick {
                    x: 5,
                    y: 6,
                    keys: vec![],
                },
            ),
            (
                json!({"type":"drag","path":[{"x":1,"y":1},{"x":9,"y":9}],"keys":["SHIFT"]}),
                ComputerAction::Drag {
                    path: vec![PathPoint { x: 1, y: 1 }, PathPoint { x: 9, y: 9 }],
                    keys: keys(&["SHIFT"]),
                },
            ),
            (
                json!({"type":"keypress","keys":["CTRL","C"]}),
                ComputerAction::Keypress {
                    keys: keys(&["CTRL", "C"]),
                },
            ),
            (
                json!({"type":"move","x":3,"y":4}),
                ComputerAction::Move {
                    x: 3,
                    y: 4,
                    keys: vec![],
                },
            ),
            (
                json!({"type":"scroll","x":3,"y":4,"scroll_x":0,"scroll_y":-300}),
                ComputerAction::Scroll {
                    x: 3,
                    y: 4,
                    scroll_x: 0,
                    scroll_y: -300,
                    keys: vec![],
                },
            ),
            (
                json!({"type":"type","text":"hi"}),
                ComputerAction::Type { text: "hi".into() },
            ),
            (json!({"type":"wait"}), ComputerAction::Wait),
            (json!({"type":"screenshot"}), ComputerAction::Screenshot),
        ];
        for (wire, expect) in cases {
            let action = ComputerAction::from_value(wire.clone());
            assert_eq!(action, expect, "{wire}");
            assert_eq!(Some(action.action_type()), wire["type"].as_str());
        }
    }

    #[test]
    fn unknown_and_malformed_are_kept_for_refusal() {
        let unknown = json!({"type":"triple_click","x":1,"y":1});
        assert_eq!(
            ComputerAction::from_value(unknown.clone()),
            ComputerAction::Unknown(unknown)
        );
        let cases = [
            (
                json!({"type":"click","button":"middle","x":1,"y":1}),
                "middle",
            ),
            (
                json!({"type":"click","button":"left","y":1}),
                "missing field `x`",
            ),
            (json!({"type":"move","x":1.5,"y":1}), "1.5"),
            (json!({"type":"keypress"}), "missing field `keys`"),
        ];
        for (wire, reason_part) in cases {
            match ComputerAction::from_value(wire.clone()) {
                ComputerAction::Malformed { reason, raw, .. } => {
                    assert!(reason.contains(reason_part), "{reason}");
                    assert_eq!(raw, wire);
                }
                other => panic!("{wire} gave {other:?}"),
            }
        }
    }
}
