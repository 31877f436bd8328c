//! OpenAI's computer tool: a `computer_call` item (one `action`, or an `actions` batch) parsed
//! into validated actions, executed once each and in order on a [`Desktop`], then answered by a
//! `computer_call_output` carrying one final screenshot.
//!
//! The runner owns the approvals around it (`pending_safety_checks`, `before_action`); this module
//! owns what an action means. Every action of a call is validated before the first one runs, so a
//! call with one input the driver cannot honour has no effect at all, and nothing is ever silently
//! ignored or retried.
//!
//! Spec: openai-browser-desktop-drivers, "Contrato del controlador de computadora";
//! api-contracts B, "computer_call", "Actions", "computer_call_output".

use hands_core::CancellationToken;
use hands_core::desktop::{Desktop, DesktopError};
use hands_core::geometry::{BoundsError, Frame, ShotPoint};
use hands_core::image::EncodedImage;
use hands_core::input::{Button, Key, KeyChord, KeyError, KeySequence, Modifier, ModifierSet};
use serde_json::{Map, Value, json};

use crate::actions::{DesktopAction, DesktopActor, Quiet, ScreenConfig, Wheel};

/// The `type` of the GA computer tool declaration: `{"type": "computer"}`, no other field.
pub const COMPUTER_TOOL_TYPE: &str = "computer";
/// The preview declaration's type.
pub const COMPUTER_PREVIEW_TOOL_TYPE: &str = "computer_use_preview";
/// The output item answering a call.
pub const COMPUTER_CALL_OUTPUT_TYPE: &str = "computer_call_output";
/// The output's content type.
pub const COMPUTER_SCREENSHOT_TYPE: &str = "computer_screenshot";

/// CSS/screen pixels per wheel notch when turning `scroll_x`/`scroll_y` into wheel clicks: 100 px,
/// what a notch scrolls in Chromium and Firefox on Linux at 100 % zoom. A non-zero delta always
/// turns the wheel at least once.
pub const PIXELS_PER_WHEEL_NOTCH: u32 = 100;
/// Most wheel notches one scroll turns (larger deltas are refused, not clamped).
pub const MAX_WHEEL_NOTCHES: u32 = 200;
/// Most points of a drag path.
pub const MAX_DRAG_POINTS: usize = 1000;

/// A safety check the model's provider attached to a call, kept verbatim: acknowledging it means
/// echoing exactly what came.
#[derive(Debug, Clone, PartialEq)]
pub struct SafetyCheck {
    /// `cu_sc_…`.
    pub id: String,
    /// A code such as `malicious_instructions`, when given.
    pub code: Option<String>,
    /// The human-readable message, when given.
    pub message: Option<String>,
    raw: Value,
}

impl SafetyCheck {
    /// The check as received, for `acknowledged_safety_checks`.
    pub fn raw(&self) -> &Value {
        &self.raw
    }
}

/// One validated action of a call: its wire type (what an approver is told) and the
/// [`DesktopAction`] it means, in screenshot coordinates checked against the frame of the last
/// screenshot the model saw.
#[derive(Debug, Clone, PartialEq)]
pub struct CallAction {
    kind: &'static str,
    action: DesktopAction,
}

impl CallAction {
    /// The wire name of the action type (`click`, `keypress` …).
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// What it does.
    pub fn action(&self) -> &DesktopAction {
        &self.action
    }
}

/// A parsed `computer_call`.
#[derive(Debug, Clone, PartialEq)]
pub struct ComputerCall {
    /// `call_…`, answered by the output with the same `call_id`.
    pub call_id: String,
    /// The actions, in order (one for a preview-style `action`).
    pub actions: Vec<CallAction>,
    /// Checks a person must approve before any action runs.
    pub pending_safety_checks: Vec<SafetyCheck>,
}

/// Why a call cannot be honoured. The call has had no effect.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The item is not a `computer_call` with a `call_id`.
    #[error("not a computer_call item with a call_id: {0}")]
    NotACall(String),
    /// Neither `action` nor `actions`, or an empty batch.
    #[error(
        "computer_call {call_id} has no action: expected `action` or a non-empty `actions` array"
    )]
    NoActions {
        /// The call.
        call_id: String,
    },
    /// Both `action` and `actions`, or either one present as `null`: which actions were meant is
    /// unclear, so none runs (the SDK: "Computer call requires exactly one of action or
    /// actions").
    #[error(
        "computer_call {call_id} requires exactly one of `action` or `actions` (got both, or one \
         of them as null)"
    )]
    AmbiguousActions {
        /// The call.
        call_id: String,
    },
    /// A preview-style call (`action`) without `pending_safety_checks`: the field is required
    /// there, and a call whose checks are unknown cannot be approved.
    #[error("computer_call {call_id} uses `action` but has no `pending_safety_checks`")]
    LegacyWithoutSafetyChecks {
        /// The call.
        call_id: String,
    },
    /// An action the driver cannot honour.
    #[error("computer_call {call_id}, action {index} (`{kind}`): {why}")]
    Action {
        /// The call.
        call_id: String,
        /// Index in the batch.
        index: usize,
        /// The action type as given.
        kind: String,
        /// What is wrong.
        why: String,
    },
}

/// Parses a `computer_call` output item against the frame the model's coordinates refer to.
pub fn parse_call(item: &Value, frame: Frame) -> Result<ComputerCall, CallError> {
    let call_id = item
        .get("call_id")
        .and_then(Value::as_str)
        .filter(|_| item.get("type").and_then(Value::as_str) == Some("computer_call"))
        .ok_or_else(|| NotACall::show(item))?
        .to_owned();
    // Exactly one of `actions` (GA) and `action` (preview), neither present as `null`: a call
    // that says both, or says one is nothing, runs nothing (as the SDK's `_actions`).
    let raw_actions: Vec<&Value> = match (item.get("actions"), item.get("action")) {
        (Some(_), Some(_)) | (Some(Value::Null), None) | (None, Some(Value::Null)) => {
            return Err(CallError::AmbiguousActions { call_id });
        }
        (Some(Value::Array(list)), None) if !list.is_empty() => list.iter().collect(),
        (None, Some(action)) if action.is_object() => {
            if item.get("pending_safety_checks").is_none() {
                return Err(CallError::LegacyWithoutSafetyChecks { call_id });
            }
            vec![action]
        }
        _ => return Err(CallError::NoActions { call_id }),
    };
    let actions = raw_actions
        .iter()
        .enumerate()
        .map(|(index, raw)| {
            parse_action(raw, frame).map_err(|why| CallError::Action {
                call_id: call_id.clone(),
                index,
                kind: raw
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_owned(),
                why,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let pending_safety_checks = match item.get("pending_safety_checks") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(checks)) => checks
            .iter()
            .map(|c| {
                let id = c.get("id").and_then(Value::as_str).ok_or_else(|| {
                    CallError::NotACall(format!("a pending safety check without an id: {c}"))
                })?;
                Ok(SafetyCheck {
                    id: id.to_owned(),
                    code: c.get("code").and_then(Value::as_str).map(str::to_owned),
                    message: c.get("message").and_then(Value::as_str).map(str::to_owned),
                    raw: c.clone(),
                })
            })
            .collect::<Result<_, CallError>>()?,
        Some(other) => {
            return Err(CallError::NotACall(format!(
                "pending_safety_checks must be an array, got {other}"
            )));
        }
    };
    Ok(ComputerCall {
        call_id,
        actions,
        pending_safety_checks,
    })
}

struct NotACall;
impl NotACall {
    fn show(item: &Value) -> CallError {
        CallError::NotACall(crate::errtext::show(item, 120))
    }
}

/// The action types, each with the fields it takes (`type` included).
const ACTION_FIELDS: [(&str, &[&str]); 9] = [
    ("click", &["type", "button", "x", "y", "keys"]),
    ("double_click", &["type", "x", "y", "keys"]),
    ("drag", &["type", "path", "keys"]),
    ("keypress", &["type", "keys"]),
    ("move", &["type", "x", "y", "keys"]),
    (
        "scroll",
        &["type", "x", "y", "scroll_x", "scroll_y", "keys"],
    ),
    ("type", &["type", "text"]),
    ("wait", &["type"]),
    ("screenshot", &["type"]),
];

/// The action type named `kind` and the fields it takes.
fn allowed_fields(kind: &str) -> Option<(&'static str, &'static [&'static str])> {
    ACTION_FIELDS.into_iter().find(|(name, _)| *name == kind)
}

fn parse_action(raw: &Value, frame: Frame) -> Result<CallAction, String> {
    let Value::Object(map) = raw else {
        return Err(format!("an action must be an object, got {raw}"));
    };
    let kind = map
        .get("type")
        .and_then(Value::as_str)
        .ok_or("an action needs a `type`")?;
    let (kind, allowed) = allowed_fields(kind).ok_or_else(|| {
        format!(
            "unknown action type {kind:?}: the driver does click, double_click, drag, keypress, move, scroll, type, wait, screenshot"
        )
    })?;
    if let Some((field, _)) = map
        .iter()
        .find(|(k, v)| !allowed.contains(&k.as_str()) && !v.is_null())
    {
        return Err(format!(
            "`{kind}` does not take `{field}`; the driver cannot honour it"
        ));
    }
    let point = |map: &Map<String, Value>| -> Result<ShotPoint, String> {
        let x = integer(map, "x")?;
        let y = integer(map, "y")?;
        frame.point(x, y).map_err(|e: BoundsError| e.to_string())
    };
    let action = match kind {
        "click" => {
            let button = match map.get("button").and_then(Value::as_str) {
                Some("left") | None => Button::Left,
                Some("right") => Button::Right,
                Some("wheel") => Button::Middle,
                Some("back") => Button::Back,
                Some("forward") => Button::Forward,
                Some(other) => {
                    return Err(format!(
                        "button {other:?} is not one of left, right, wheel, back, forward"
                    ));
                }
            };
            DesktopAction::Click {
                at: Some(point(map)?),
                button,
                count: 1,
                modifiers: modifiers(map)?,
            }
        }
        "double_click" => DesktopAction::Click {
            at: Some(point(map)?),
            button: Button::Left,
            count: 2,
            modifiers: modifiers(map)?,
        },
        "drag" => {
            let path = map
                .get("path")
                .and_then(Value::as_array)
                .ok_or("`drag` needs `path`, an array of {x, y} points")?;
            if path.len() < 2 || path.len() > MAX_DRAG_POINTS {
                return Err(format!(
                    "`path` must hold 2 to {MAX_DRAG_POINTS} points, got {}",
                    path.len()
                ));
            }
            let path = path
                .iter()
                .map(|p| match p {
                    Value::Object(p) if p.keys().all(|k| k == "x" || k == "y") => point(p),
                    other => Err(format!(
                        "a path point must be exactly {{x, y}}, got {other}"
                    )),
                })
                .collect::<Result<_, _>>()?;
            DesktopAction::Drag {
                path,
                modifiers: modifiers(map)?,
            }
        }
        "keypress" => DesktopAction::Keys {
            sequence: KeySequence::single(keypress_chord(map)?),
            repeat: 1,
        },
        "move" => DesktopAction::Move {
            to: point(map)?,
            modifiers: modifiers(map)?,
        },
        "scroll" => DesktopAction::Scroll {
            at: Some(point(map)?),
            wheel: Wheel {
                x: notches(signed(map, "scroll_x")?)?,
                y: notches(signed(map, "scroll_y")?)?,
            },
            modifiers: modifiers(map)?,
        },
        "type" => DesktopAction::Type {
            text: map
                .get("text")
                .and_then(Value::as_str)
                .ok_or("`type` needs `text`, a string")?
                .to_owned(),
        },
        "wait" => DesktopAction::Settle(Quiet::Wait),
        // In a call, `screenshot` settles the screen: the call's one screenshot answers it.
        _ => DesktopAction::Settle(Quiet::Screen),
    };
    Ok(CallAction { kind, action })
}

fn integer(map: &Map<String, Value>, field: &str) -> Result<u64, String> {
    let v = map.get(field).ok_or_else(|| format!("missing `{field}`"))?;
    v.as_u64()
        .or_else(|| {
            v.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= 9.0e15)
                .map(|f| f as u64)
        })
        .ok_or_else(|| format!("`{field}` must be a non-negative integer, got {v}"))
}

fn signed(map: &Map<String, Value>, field: &str) -> Result<i64, String> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(0),
        Some(v) => v
            .as_i64()
            .or_else(|| {
                v.as_f64()
                    .filter(|f| f.is_finite() && f.abs() <= 9.0e15)
                    .map(|f| f.round() as i64)
            })
            .ok_or_else(|| format!("`{field}` must be a number of pixels, got {v}")),
    }
}

/// Pixels to wheel notches: rounded, at least one for any non-zero delta.
fn notches(pixels: i64) -> Result<i32, String> {
    if pixels == 0 {
        return Ok(0);
    }
    let per = i64::from(PIXELS_PER_WHEEL_NOTCH);
    let n = ((pixels.abs() + per / 2) / per).max(1);
    if n > i64::from(MAX_WHEEL_NOTCHES) {
        return Err(format!(
            "a scroll of {pixels} px is {n} wheel notches; at most {MAX_WHEEL_NOTCHES} ({} px) per action",
            i64::from(MAX_WHEEL_NOTCHES) * per
        ));
    }
    Ok(n as i32 * pixels.signum() as i32)
}

fn string_list<'a>(map: &'a Map<String, Value>, field: &str) -> Result<Vec<&'a str>, String> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| format!("`{field}` must hold strings, got {v}"))
            })
            .collect(),
        Some(other) => Err(format!(
            "`{field}` must be an array of key names, got {other}"
        )),
    }
}

/// The modifiers of `keys` on a pointer action: each must be a modifier (a plain key cannot be
/// "held during a click", so it is an error, not ignored).
fn modifiers(map: &Map<String, Value>) -> Result<ModifierSet, String> {
    let mut set = ModifierSet::NONE;
    for name in string_list(map, "keys")? {
        let m = Modifier::from_name(name).ok_or_else(|| {
            format!("`keys` may only hold modifiers to keep pressed (CTRL, SHIFT, ALT, CMD), got {name:?}")
        })?;
        set.insert(m);
    }
    Ok(set)
}

/// `keypress.keys` as one chord. OpenAI's names (`CTRL`, `ENTER`, `ARROWDOWN`, `CMD`, `ESC`,
/// `PAGEDOWN` …) resolve through the shared key grammar; a single letter is pressed as its
/// lower-case key, so `["CTRL", "C"]` is Control+c, not Control+Shift+c (add `SHIFT` for that).
fn keypress_chord(map: &Map<String, Value>) -> Result<KeyChord, String> {
    let names = string_list(map, "keys")?;
    if names.is_empty() {
        return Err("`keypress` needs `keys`, a non-empty array of key names".into());
    }
    let keys = names
        .iter()
        .map(|name| {
            let mut chars = name.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if c.is_ascii_uppercase() => Key::from_char(c.to_ascii_lowercase()),
                _ => Key::parse(name),
            }
        })
        .collect::<Result<Vec<_>, KeyError>>()
        .map_err(|e| e.to_string())?;
    KeyChord::new(keys).map_err(|e| e.to_string())
}

/// How a computer-call executor takes its screenshot and what `wait` means.
pub type ComputerCallConfig = ScreenConfig;

/// Executes validated computer-call actions on a desktop: a codec between OpenAI's wire and
/// the [`DesktopActor`].
pub struct ComputerCallExecutor<D> {
    actor: DesktopActor<D>,
}

impl<D: Desktop> ComputerCallExecutor<D> {
    /// An executor over `desktop`.
    pub fn new(desktop: D, config: ComputerCallConfig) -> ComputerCallExecutor<D> {
        ComputerCallExecutor {
            actor: DesktopActor::new(desktop, config),
        }
    }

    /// The frame the model's coordinates refer to: the last screenshot's.
    pub fn frame(&self) -> Frame {
        self.actor.frame()
    }

    /// The driver.
    pub fn desktop(&mut self) -> &mut D {
        self.actor.desktop()
    }

    /// The declaration: `{"type": "computer"}` (the GA tool takes no other field).
    pub fn declaration() -> Value {
        json!({"type": COMPUTER_TOOL_TYPE})
    }

    /// The preview declaration, with the screenshot size as the display size.
    pub fn preview_declaration(&self, environment: &str) -> Value {
        let shot = self.frame().shot();
        json!({"type": COMPUTER_PREVIEW_TOOL_TYPE, "display_width": shot.width,
               "display_height": shot.height, "environment": environment})
    }

    /// Runs one action.
    pub async fn execute(
        &mut self,
        action: &CallAction,
        cancel: &CancellationToken,
    ) -> Result<(), DesktopError> {
        self.actor.run(&action.action, cancel).await.map(|_| ())
    }

    /// The final screenshot: settled, scaled, encoded within the payload limit. Later coordinates
    /// refer to its frame.
    pub async fn screenshot(
        &mut self,
        cancel: &CancellationToken,
    ) -> Result<EncodedImage, DesktopError> {
        self.actor.screenshot(cancel).await
    }
}

/// The `computer_call_output` item answering `call_id` with `image`, acknowledging exactly the
/// checks given (only those a person approved).
pub fn call_output(call_id: &str, image: &EncodedImage, acknowledged: &[SafetyCheck]) -> Value {
    let mut item = json!({
        "type": COMPUTER_CALL_OUTPUT_TYPE,
        "call_id": call_id,
        "output": {"type": COMPUTER_SCREENSHOT_TYPE, "image_url": image.data_url()},
    });
    if !acknowledged.is_empty() {
        item["acknowledged_safety_checks"] =
            Value::Array(acknowledged.iter().map(|c| c.raw.clone()).collect());
    }
    item
}

#[cfg(test)]
mod tests {
    use super::*;
    use hands_core::geometry::{ImageTier, ScreenshotSizing, Size};

    fn frame() -> Frame {
        Frame::new(
            Size::new(1600, 1000).unwrap(),
            1.0,
            ScreenshotSizing {
                tier: ImageTier::Standard,
                max_long_edge: Some(800),
            },
        )
    }

    fn parse(actions: Value) -> Result<ComputerCall, CallError> {
        parse_call(
            &json!({"type": "computer_call", "id": "cu_1", "call_id": "call_1", "actions": actions}),
            frame(),
        )
    }

    #[test]
    fn parses_every_action_type() {
        let call = parse(json!([
            {"type": "click", "button": "wheel", "x": 10, "y": 20, "keys": ["CTRL"]},
            {"type": "double_click", "x": 1, "y": 2},
            {"type": "drag", "path": [{"x": 1, "y": 1}, {"x": 5, "y": 5}], "keys": ["shift"]},
            {"type": "keypress", "keys": ["CTRL", "C"]},
            {"type": "move", "x": 3, "y": 4},
            {"type": "scroll", "x": 5, "y": 6, "scroll_x": 0, "scroll_y": -250},
            {"type": "type", "text": "héllo\n"},
            {"type": "wait"},
            {"type": "screenshot"}
        ]))
        .unwrap();
        let kinds: Vec<_> = call.actions.iter().map(CallAction::kind).collect();
        assert_eq!(
            kinds,
            [
                "click",
                "double_click",
                "drag",
                "keypress",
                "move",
                "scroll",
                "type",
                "wait",
                "screenshot"
            ]
        );
        assert!(
            matches!(call.actions[0].action(), DesktopAction::Click { button: Button::Middle, modifiers, .. } if modifiers.contains(Modifier::Control))
        );
        let DesktopAction::Keys {
            sequence,
            repeat: 1,
        } = call.actions[3].action()
        else {
            panic!()
        };
        let chord = &sequence.chords()[0];
        assert_eq!(chord.keys()[1].keysym(), 'c' as u32, "CTRL+C is Control+c");
        assert!(matches!(
            call.actions[5].action(),
            DesktopAction::Scroll {
                wheel: Wheel { x: 0, y: -3 },
                ..
            }
        ));
        assert_eq!(
            call.actions[7].action(),
            &DesktopAction::Settle(Quiet::Wait)
        );
    }

    #[test]
    fn a_call_with_both_action_and_actions_or_a_null_one_is_refused() {
        let shot = json!({"type": "screenshot"});
        for item in [
            json!({"type": "computer_call", "call_id": "c", "action": shot, "actions": [shot],
                   "pending_safety_checks": []}),
            json!({"type": "computer_call", "call_id": "c", "actions": null}),
            json!({"type": "computer_call", "call_id": "c", "action": null, "pending_safety_checks": []}),
            json!({"type": "computer_call", "call_id": "c", "actions": [shot], "action": null}),
        ] {
            assert_eq!(
                parse_call(&item, frame()),
                Err(CallError::AmbiguousActions {
                    call_id: "c".into()
                }),
                "{item}"
            );
        }
        assert_eq!(
            parse_call(
                &json!({"type": "computer_call", "call_id": "c", "action": shot}),
                frame()
            ),
            Err(CallError::LegacyWithoutSafetyChecks {
                call_id: "c".into()
            })
        );
    }

    #[test]
    fn single_preview_action_and_safety_checks() {
        let call = parse_call(
            &json!({"type": "computer_call", "call_id": "call_9", "action": {"type": "screenshot"},
                    "pending_safety_checks": [{"id": "cu_sc_1", "code": "malicious_instructions", "message": "m"}]}),
            frame(),
        )
        .unwrap();
        assert_eq!(call.actions.len(), 1);
        assert_eq!(call.actions[0].kind(), "screenshot");
        assert_eq!(
            call.actions[0].action(),
            &DesktopAction::Settle(Quiet::Screen)
        );
        assert_eq!(call.pending_safety_checks[0].id, "cu_sc_1");
        let image = EncodedImage {
            size: Size::new(1, 1).unwrap(),
            media_type: hands_core::image::MediaType::Png,
            base64: "AAAA".into(),
        };
        assert_eq!(
            call_output("call_9", &image, &call.pending_safety_checks),
            json!({"type": "computer_call_output", "call_id": "call_9",
                   "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AAAA"},
                   "acknowledged_safety_checks": [{"id": "cu_sc_1", "code": "malicious_instructions", "message": "m"}]})
        );
        assert!(
            call_output("call_9", &image, &[])
                .get("acknowledged_safety_checks")
                .is_none()
        );
    }

    #[test]
    fn inputs_the_driver_cannot_honour_are_errors() {
        let err = |actions: Value| parse(actions).unwrap_err().to_string();
        // The frame is 800x500 (1600x1000 scaled to a long edge of 800).
        assert!(
            err(json!([{"type": "click", "x": 800, "y": 1}])).contains("outside the screenshot")
        );
        assert!(
            err(json!([{"type": "click", "button": "extra", "x": 1, "y": 1}]))
                .contains("not one of")
        );
        assert!(
            err(json!([{"type": "click", "x": 1, "y": 1, "keys": ["A"]}]))
                .contains("only hold modifiers")
        );
        assert!(err(json!([{"type": "teleport"}])).contains("unknown action type"));
        assert!(err(json!([{"type": "wait", "ms": 500}])).contains("does not take `ms`"));
        assert!(err(json!([{"type": "drag", "path": [{"x": 1, "y": 1}]}])).contains("2 to"));
        assert!(
            err(json!([{"type": "drag", "path": [{"x": 1, "y": 1}, {"x": 1, "y": 1, "z": 0}]}]))
                .contains("exactly {x, y}")
        );
        assert!(err(json!([{"type": "keypress", "keys": []}])).contains("non-empty"));
        assert!(err(json!([{"type": "keypress", "keys": ["NOSUCHKEY"]}])).contains("unknown key"));
        assert!(
            err(json!([{"type": "scroll", "x": 1, "y": 1, "scroll_y": 1_000_000}]))
                .contains("wheel notches")
        );
        assert!(err(json!([{"type": "type"}])).contains("needs `text`"));
        assert!(err(json!([])).contains("no action"));
        // The failing index is named, and nothing before it counts as executed.
        assert!(
            err(json!([{"type": "wait"}, {"type": "click", "x": -1, "y": 0}])).contains("action 1")
        );
    }

    #[test]
    fn pixel_deltas_become_notches() {
        assert_eq!(notches(0), Ok(0));
        assert_eq!(notches(1), Ok(1));
        assert_eq!(notches(-1), Ok(-1));
        assert_eq!(notches(149), Ok(1));
        assert_eq!(notches(150), Ok(2));
        assert_eq!(notches(-700), Ok(-7));
        assert!(notches(20_100).is_err());
    }
}
