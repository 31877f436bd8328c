//! The input shape of every client toolset member, as the API declares it: anthropic 2.10's
//! generated `anthropic/types/beta/beta_browser_<member>_input.py` and
//! `beta_computer_<member>_input.py`, with the targets of `beta_browser_coordinate_target.py`,
//! `beta_browser_ref_target.py`, `beta_browser_click_target.py` and the value of
//! `beta_browser_form_input_value.py`.
//!
//! A model's `tool_use.input` has these shapes, so a policy's call must too (see
//! [`crate::AnthropicConfig::member_input_schemas`]): a scripted model written in a shape the
//! API never produces would test a client against inputs no real model sends. Types are read
//! as a model writes JSON: an integer is a JSON integer (`3.0` counts), a null is an absent
//! optional field, and a field the type does not declare is refused.

use serde_json::{Map, Value};

use crate::toolsets::ToolsetKind;

/// A field's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Str,
    Int,
    Number,
    /// `List[int]`.
    Ints,
    /// `List[str]`.
    Strs,
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// `{"type": "coordinate", "x": int, "y": int}`.
    Coordinate,
    /// `{"type": "ref", "ref": str}`.
    RefTarget,
    /// Either target, by `type`.
    ClickTarget,
    /// `str | float | bool`.
    FormValue,
}

/// One field: name, type, required.
type Field = (&'static str, Ty, bool);

const TAB: Field = ("tab_id", Ty::Str, false);
const DIRECTIONS: &[&str] = &["up", "down", "left", "right"];

/// A browser member's fields (`beta_browser_<member>_input.py`).
fn browser(member: &str) -> Option<&'static [Field]> {
    use Ty::*;
    Some(match member {
        "navigate" => &[("url", Str, true), TAB],
        "list_tabs" | "new_tab" => &[],
        "switch_tab" | "close_tab" => &[("tab_id", Str, true)],
        "read_page" => &[
            ("depth", Int, false),
            ("filter", OneOf(&["all", "interactive"]), false),
            ("ref", Str, false),
            TAB,
        ],
        "get_page_text" | "read_console" | "read_network" | "screenshot" => &[TAB],
        "find" => &[("query", Str, true), TAB],
        "form_input" => &[("target", RefTarget, true), ("value", FormValue, true), TAB],
        "file_upload" => &[
            ("target", RefTarget, true),
            ("document_ids", Strs, false),
            ("paths", Strs, false),
            TAB,
        ],
        "scroll_to" => &[("target", RefTarget, true), TAB],
        "zoom" => &[("region", Ints, true), TAB],
        "left_click" | "right_click" | "middle_click" | "double_click" | "triple_click" => &[
            ("target", ClickTarget, true),
            ("modifiers", Str, false),
            TAB,
        ],
        "hover" => &[("target", ClickTarget, true), TAB],
        "left_click_drag" => &[
            ("from", Coordinate, true),
            ("target", Coordinate, true),
            TAB,
        ],
        "left_mouse_down" | "left_mouse_up" | "mouse_move" => &[("target", Coordinate, true), TAB],
        "scroll" => &[
            ("scroll_direction", OneOf(DIRECTIONS), true),
            ("target", Coordinate, true),
            ("scroll_amount", Int, false),
            TAB,
        ],
        "type" | "javascript_exec" => &[("text", Str, true), TAB],
        "key" => &[("text", Str, true), ("repeat", Int, false), TAB],
        "hold_key" => &[("duration", Number, true), ("text", Str, true), TAB],
        "wait" => &[("duration", Number, true), TAB],
        _ => return None,
    })
}

/// A computer member's fields (`beta_computer_<member>_input.py`).
fn computer(member: &str) -> Option<&'static [Field]> {
    use Ty::*;
    const MODIFIERS: Field = ("text", Str, false);
    Some(match member {
        "cursor_position" | "left_mouse_down" | "left_mouse_up" | "screenshot" => &[],
        "left_click" | "right_click" | "middle_click" | "double_click" | "triple_click" => {
            &[("coordinate", Ints, false), MODIFIERS]
        }
        "hold_key" => &[("duration", Int, true), ("text", Str, true)],
        "key" => &[("text", Str, true), ("repeat", Int, false)],
        "left_click_drag" => &[
            ("coordinate", Ints, true),
            ("start_coordinate", Ints, true),
            MODIFIERS,
        ],
        "mouse_move" => &[("coordinate", Ints, true)],
        "scroll" => &[
            ("scroll_amount", Int, true),
            ("scroll_direction", OneOf(DIRECTIONS), true),
            ("coordinate", Ints, false),
            MODIFIERS,
        ],
        "type" => &[("text", Str, true)],
        "wait" => &[("duration", Int, true)],
        "zoom" => &[("region", Ints, true)],
        _ => return None,
    })
}

/// Checks a member call's `input` against the API's type for it; the error names the field
/// and what it should hold. A member the toolset does not have passes (the declaration check
/// refuses it).
pub(crate) fn check(kind: ToolsetKind, member: &str, input: &Value) -> Result<(), String> {
    let fields = match kind {
        ToolsetKind::Browser => browser(member),
        ToolsetKind::Computer => computer(member),
    };
    let Some(fields) = fields else {
        return Ok(());
    };
    let Some(input) = input.as_object() else {
        return Err("input: Input should be an object".to_owned());
    };
    object(input, fields, "")
}

fn object(obj: &Map<String, Value>, fields: &[Field], path: &str) -> Result<(), String> {
    if let Some(key) = obj
        .keys()
        .find(|k| !fields.iter().any(|(name, _, _)| name == k))
    {
        return Err(format!("{path}{key}: not a field of this input"));
    }
    for (name, ty, required) in fields {
        match obj.get(*name) {
            None | Some(Value::Null) if *required => {
                return Err(format!("{path}{name}: Field required"));
            }
            None | Some(Value::Null) => {}
            Some(value) => typed(value, *ty, &format!("{path}{name}"))?,
        }
    }
    Ok(())
}

fn is_int(value: &Value) -> bool {
    value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn typed(value: &Value, ty: Ty, path: &str) -> Result<(), String> {
    let fits = match ty {
        Ty::Str => value.is_string(),
        Ty::Int => is_int(value),
        Ty::Number => value.is_number(),
        Ty::Ints => value.as_array().is_some_and(|a| a.iter().all(is_int)),
        Ty::Strs => value
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_string)),
        Ty::OneOf(allowed) => value.as_str().is_some_and(|s| allowed.contains(&s)),
        Ty::FormValue => value.is_string() || value.is_number() || value.is_boolean(),
        Ty::Coordinate | Ty::RefTarget | Ty::ClickTarget => {
            return target(value, ty, path);
        }
    };
    if fits {
        Ok(())
    } else {
        Err(format!("{path}: Input should be {}", expected(ty)))
    }
}

fn target(value: &Value, ty: Ty, path: &str) -> Result<(), String> {
    const COORDINATE: &[Field] = &[
        ("type", Ty::Str, true),
        ("x", Ty::Int, true),
        ("y", Ty::Int, true),
    ];
    const REF: &[Field] = &[("ref", Ty::Str, true), ("type", Ty::Str, true)];
    let Some(obj) = value.as_object() else {
        return Err(format!("{path}: Input should be {}", expected(ty)));
    };
    let fields = match (obj.get("type").and_then(Value::as_str), ty) {
        (Some("coordinate"), Ty::Coordinate | Ty::ClickTarget) => COORDINATE,
        (Some("ref"), Ty::RefTarget | Ty::ClickTarget) => REF,
        _ => return Err(format!("{path}: Input should be {}", expected(ty))),
    };
    object(obj, fields, &format!("{path}."))
}

fn expected(ty: Ty) -> &'static str {
    match ty {
        Ty::Str => "a valid string",
        Ty::Int => "a valid integer",
        Ty::Number => "a valid number",
        Ty::Ints => "a valid list of integers",
        Ty::Strs => "a valid list of strings",
        Ty::OneOf(_) => "one of the listed values",
        Ty::Coordinate => "a coordinate target {\"type\": \"coordinate\", \"x\", \"y\"}",
        Ty::RefTarget => "a ref target {\"type\": \"ref\", \"ref\"}",
        Ty::ClickTarget => "a coordinate target or a ref target",
        Ty::FormValue => "a string, a number or a boolean",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolsets::{BROWSER_MEMBERS, COMPUTER_MEMBERS};
    use serde_json::json;

    #[test]
    fn every_member_has_its_type() {
        for member in BROWSER_MEMBERS {
            assert!(browser(member).is_some(), "{member}");
        }
        for member in COMPUTER_MEMBERS {
            assert!(computer(member).is_some(), "{member}");
        }
    }

    #[test]
    fn the_sdks_shapes_pass_and_others_do_not() {
        let b = |member: &str, input: Value| check(ToolsetKind::Browser, member, &input);
        let at = json!({"type": "coordinate", "x": 3, "y": 4});
        assert_eq!(
            b("scroll", json!({"scroll_direction": "down", "target": at})),
            Ok(())
        );
        assert_eq!(
            b(
                "form_input",
                json!({"target": {"type": "ref", "ref": "e1"}, "value": 3, "tab_id": null})
            ),
            Ok(())
        );
        assert_eq!(
            b(
                "left_click",
                json!({"target": {"type": "ref", "ref": "e1"}})
            ),
            Ok(())
        );
        // The shapes hands once guessed.
        assert_eq!(
            b(
                "left_click",
                json!({"target": {"type": "coordinate", "coordinate": [1, 2]}})
            ),
            Err("target.coordinate: not a field of this input".to_owned())
        );
        assert_eq!(
            b("form_input", json!({"ref": "e1", "value": "x"})),
            Err("ref: not a field of this input".to_owned())
        );
        assert_eq!(
            b(
                "scroll",
                json!({"scroll_direction": "down", "scroll_amount": 3})
            ),
            Err("target: Field required".to_owned())
        );
        assert!(
            b(
                "left_click_drag",
                json!({"from": {"type": "ref", "ref": "e1"}, "target": at})
            )
            .is_err()
        );
        assert!(
            b(
                "form_input",
                json!({"target": {"type": "ref", "ref": "e1"}, "value": ["a"]})
            )
            .is_err()
        );
        let c = |member: &str, input: Value| check(ToolsetKind::Computer, member, &input);
        assert_eq!(c("wait", json!({"duration": 2})), Ok(()));
        assert_eq!(
            c("wait", json!({"duration": 1.5})),
            Err("duration: Input should be a valid integer".to_owned())
        );
        assert_eq!(
            c("left_click", json!({"coordinate": [1, 2], "text": "shift"})),
            Ok(())
        );
        assert!(c("scroll", json!({"scroll_direction": "down"})).is_err());
        assert_eq!(c("no_such_member", json!({"x": 1})), Ok(()));
    }
}
