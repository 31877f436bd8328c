//! Reading a tool's `input` object field by field, with errors that say which field was wrong
//! and what came instead.

use serde_json::{Map, Value};

use crate::strings;

/// Why a tool input was refused before anything ran. Each becomes an `is_error` result whose
/// text is this error's `Display`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The input is not a JSON object.
    #[error("{}", strings::input_not_object(.got))]
    NotAnObject {
        /// What came, e.g. "an array".
        got: &'static str,
    },
    /// The editor input names no `command`.
    #[error("{}", strings::missing_command())]
    MissingCommand,
    /// A parameter the command requires is absent.
    #[error("{}", strings::missing_parameter(.field, .command))]
    MissingParameter {
        /// The parameter.
        field: &'static str,
        /// The command that requires it.
        command: &'static str,
    },
    /// A parameter has the wrong JSON type.
    #[error("{}", strings::wrong_type(.field, .expected, .got))]
    WrongType {
        /// The parameter.
        field: &'static str,
        /// What it should hold, e.g. "a string".
        expected: &'static str,
        /// What came, e.g. "a number".
        got: &'static str,
    },
    /// A string parameter holds a NUL character.
    #[error("{}", strings::nul_in(.field))]
    NulCharacter {
        /// The parameter.
        field: &'static str,
    },
    /// `view_range` is not a list of two integers.
    #[error("{}", strings::VIEW_RANGE_NOT_TWO_INTEGERS)]
    ViewRangeShape,
    /// The editor command is not one of `view`, `create`, `str_replace`, `insert`.
    #[error("{}", strings::unrecognized_command(.command))]
    UnknownCommand {
        /// The command as sent.
        command: String,
    },
    /// `undo_edit`, which `text_editor_20250728` no longer has.
    #[error(
        "{}{}",
        strings::unrecognized_command("undo_edit"),
        strings::UNDO_EDIT_REMOVED
    )]
    UndoEditRemoved,
    /// `insert` got `insert_text` and a different `new_str`.
    #[error("{}", strings::INSERT_TEXT_CONFLICT)]
    InsertTextConflict,
    /// The bash input has neither `command` nor `restart`.
    #[error("{}", strings::BASH_NO_COMMAND)]
    NoBashCommand,
    /// The bash input has both `restart: true` and a `command`.
    #[error("{}", strings::BASH_RESTART_WITH_COMMAND)]
    RestartWithCommand,
}

/// The JSON object of an input, or why it is not one.
pub(crate) fn object(input: &Value) -> Result<&Map<String, Value>, InputError> {
    input
        .as_object()
        .ok_or(InputError::NotAnObject { got: kind(input) })
}

/// A JSON value's kind as the error texts name it.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An optional string field; `null` counts as absent.
pub(crate) fn opt_str<'a>(
    obj: &'a Map<String, Value>,
    field: &'static str,
) -> Result<Option<&'a str>, InputError> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(InputError::WrongType {
            field,
            expected: "a string",
            got: kind(other),
        }),
    }
}

/// A string field the command requires.
pub(crate) fn req_str<'a>(
    obj: &'a Map<String, Value>,
    field: &'static str,
    command: &'static str,
) -> Result<&'a str, InputError> {
    opt_str(obj, field)?.ok_or(InputError::MissingParameter { field, command })
}

/// An optional boolean field; `null` counts as absent.
pub(crate) fn opt_bool(
    obj: &Map<String, Value>,
    field: &'static str,
) -> Result<Option<bool>, InputError> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(InputError::WrongType {
            field,
            expected: "a boolean",
            got: kind(other),
        }),
    }
}

/// An integer field the command requires (`2`, not `2.0` or `"2"`).
pub(crate) fn req_int(
    obj: &Map<String, Value>,
    field: &'static str,
    command: &'static str,
) -> Result<i64, InputError> {
    match obj.get(field) {
        None | Some(Value::Null) => Err(InputError::MissingParameter { field, command }),
        Some(value) => value.as_i64().ok_or(InputError::WrongType {
            field,
            expected: "an integer",
            got: match value {
                Value::Number(_) => "a number that is not an integer",
                other => kind(other),
            },
        }),
    }
}

/// Refuses a string holding NUL, which neither a path nor a shell command can carry.
pub(crate) fn no_nul(value: &str, field: &'static str) -> Result<(), InputError> {
    if value.contains('\0') {
        Err(InputError::NulCharacter { field })
    } else {
        Ok(())
    }
}
