//! The text editor's input: `{"command": …, "path": …, …}` parsed into one [`EditorCommand`].

use serde_json::{Map, Value};

use crate::input::{self, InputError};

/// A validated text editor command. The path is still as the model sent it (NUL-free); it is
/// checked (absolute, inside the root, existing or not) when the command runs, because the
/// answer depends on the file system.
///
/// Spec: claude-computer-use-tool, quick start (`text_editor_20250728`); the commands and
/// their fields are those of the reference `EditTool20250728`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorCommand {
    /// `view`: a file with line numbers, or a directory two levels deep.
    View {
        /// The file or directory.
        path: String,
        /// `[start, end]`, 1-based and inclusive, `end == -1` meaning to the end of the file.
        /// Checked against the file when the command runs.
        view_range: Option<[i64; 2]>,
    },
    /// `create`: write a new file.
    Create {
        /// The file, which must not exist.
        path: String,
        /// Its whole content.
        file_text: String,
    },
    /// `str_replace`: replace the one occurrence of `old_str`.
    StrReplace {
        /// The file.
        path: String,
        /// The exact text to replace, which must occur exactly once.
        old_str: String,
        /// Its replacement (`new_str` absent means the empty string).
        new_str: String,
    },
    /// `insert`: insert text after a line.
    Insert {
        /// The file.
        path: String,
        /// The line after which to insert, 0 for the top. Checked against the file.
        insert_line: i64,
        /// The text: `insert_text`, the field `text_editor_20250728` models send, or `new_str`,
        /// as the reference implementation and older documentation name it.
        insert_text: String,
    },
}

impl EditorCommand {
    /// Parses a `tool_use` input. Unknown fields are ignored, as the reference does.
    pub fn parse(input: &Value) -> Result<Self, InputError> {
        let obj = input::object(input)?;
        let command = input::opt_str(obj, "command")?.ok_or(InputError::MissingCommand)?;
        let command: &'static str = match command {
            "view" => "view",
            "create" => "create",
            "str_replace" => "str_replace",
            "insert" => "insert",
            "undo_edit" => return Err(InputError::UndoEditRemoved),
            other => {
                return Err(InputError::UnknownCommand {
                    command: other.to_owned(),
                });
            }
        };
        let path = input::req_str(obj, "path", command)?;
        input::no_nul(path, "path")?;
        let path = path.to_owned();
        Ok(match command {
            "view" => Self::View {
                path,
                view_range: view_range(obj)?,
            },
            "create" => Self::Create {
                path,
                file_text: input::req_str(obj, "file_text", command)?.to_owned(),
            },
            "str_replace" => Self::StrReplace {
                path,
                old_str: input::req_str(obj, "old_str", command)?.to_owned(),
                new_str: input::opt_str(obj, "new_str")?
                    .unwrap_or_default()
                    .to_owned(),
            },
            _ => Self::Insert {
                path,
                insert_line: input::req_int(obj, "insert_line", command)?,
                insert_text: insert_text(obj)?,
            },
        })
    }

    /// The path the command names, as sent.
    pub fn path(&self) -> &str {
        match self {
            Self::View { path, .. }
            | Self::Create { path, .. }
            | Self::StrReplace { path, .. }
            | Self::Insert { path, .. } => path,
        }
    }
}

fn view_range(obj: &Map<String, Value>) -> Result<Option<[i64; 2]>, InputError> {
    match obj.get("view_range") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => match items.as_slice() {
            [start, end] => match (start.as_i64(), end.as_i64()) {
                (Some(start), Some(end)) => Ok(Some([start, end])),
                _ => Err(InputError::ViewRangeShape),
            },
            _ => Err(InputError::ViewRangeShape),
        },
        Some(_) => Err(InputError::ViewRangeShape),
    }
}

fn insert_text(obj: &Map<String, Value>) -> Result<String, InputError> {
    let insert_text = input::opt_str(obj, "insert_text")?;
    let new_str = input::opt_str(obj, "new_str")?;
    match (insert_text, new_str) {
        (Some(a), Some(b)) if a != b => Err(InputError::InsertTextConflict),
        (Some(text), _) | (None, Some(text)) => Ok(text.to_owned()),
        (None, None) => Err(InputError::MissingParameter {
            field: "insert_text",
            command: "insert",
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::strings;

    fn check(input: Value, want: Result<EditorCommand, InputError>) {
        assert_eq!(EditorCommand::parse(&input), want, "{input}");
    }

    #[test]
    fn parses_each_command() {
        check(
            json!({"command": "view", "path": "/a"}),
            Ok(EditorCommand::View {
                path: "/a".into(),
                view_range: None,
            }),
        );
        check(
            json!({"command": "view", "path": "/a", "view_range": [3, -1]}),
            Ok(EditorCommand::View {
                path: "/a".into(),
                view_range: Some([3, -1]),
            }),
        );
        check(
            json!({"command": "create", "path": "/a", "file_text": "x\n"}),
            Ok(EditorCommand::Create {
                path: "/a".into(),
                file_text: "x\n".into(),
            }),
        );
        check(
            json!({"command": "str_replace", "path": "/a", "old_str": "x"}),
            Ok(EditorCommand::StrReplace {
                path: "/a".into(),
                old_str: "x".into(),
                new_str: String::new(),
            }),
        );
        let insert = |text: &str| {
            Ok(EditorCommand::Insert {
                path: "/a".into(),
                insert_line: 2,
                insert_text: text.into(),
            })
        };
        check(
            json!({"command": "insert", "path": "/a", "insert_line": 2, "insert_text": "t"}),
            insert("t"),
        );
        check(
            json!({"command": "insert", "path": "/a", "insert_line": 2, "new_str": "n"}),
            insert("n"),
        );
        check(
            json!({"command": "insert", "path": "/a", "insert_line": 2, "insert_text": "t", "new_str": "t"}),
            insert("t"),
        );
        // Relative paths parse: the refusal, with its suggestion, comes when the command runs.
        check(
            json!({"command": "view", "path": "a.txt"}),
            Ok(EditorCommand::View {
                path: "a.txt".into(),
                view_range: None,
            }),
        );
    }

    #[test]
    fn refusals() {
        let wrong = |field, expected, got| {
            Err(InputError::WrongType {
                field,
                expected,
                got,
            })
        };
        let missing = |field, command| Err(InputError::MissingParameter { field, command });
        let cases = vec![
            (
                json!("view"),
                Err(InputError::NotAnObject { got: "a string" }),
            ),
            (json!({"path": "/a"}), Err(InputError::MissingCommand)),
            (
                json!({"command": 1, "path": "/a"}),
                wrong("command", "a string", "a number"),
            ),
            (
                json!({"command": "delete", "path": "/a"}),
                Err(InputError::UnknownCommand {
                    command: "delete".into(),
                }),
            ),
            (
                json!({"command": "undo_edit", "path": "/a"}),
                Err(InputError::UndoEditRemoved),
            ),
            (json!({"command": "view"}), missing("path", "view")),
            (
                json!({"command": "view", "path": ["/a"]}),
                wrong("path", "a string", "an array"),
            ),
            (
                json!({"command": "view", "path": "/a\u{0}b"}),
                Err(InputError::NulCharacter { field: "path" }),
            ),
            (
                json!({"command": "create", "path": "/a"}),
                missing("file_text", "create"),
            ),
            (
                json!({"command": "str_replace", "path": "/a"}),
                missing("old_str", "str_replace"),
            ),
            (
                json!({"command": "str_replace", "path": "/a", "old_str": "x", "new_str": 5}),
                wrong("new_str", "a string", "a number"),
            ),
            (
                json!({"command": "insert", "path": "/a", "insert_text": "t"}),
                missing("insert_line", "insert"),
            ),
            (
                json!({"command": "insert", "path": "/a", "insert_line": 1.5, "insert_text": "t"}),
                wrong(
                    "insert_line",
                    "an integer",
                    "a number that is not an integer",
                ),
            ),
            (
                json!({"command": "insert", "path": "/a", "insert_line": "1", "insert_text": "t"}),
                wrong("insert_line", "an integer", "a string"),
            ),
            (
                json!({"command": "insert", "path": "/a", "insert_line": 1}),
                missing("insert_text", "insert"),
            ),
            (
                json!({"command": "insert", "path": "/a", "insert_line": 1, "insert_text": "a", "new_str": "b"}),
                Err(InputError::InsertTextConflict),
            ),
        ];
        for (input, want) in cases {
            check(input, want);
        }
        for bad in [
            json!([1]),
            json!([1, 2, 3]),
            json!([1, "2"]),
            json!([1.5, 2]),
            json!("1-2"),
        ] {
            check(
                json!({"command": "view", "path": "/a", "view_range": bad}),
                Err(InputError::ViewRangeShape),
            );
        }
    }

    #[test]
    fn refusal_texts() {
        let text = |input: Value| EditorCommand::parse(&input).unwrap_err().to_string();
        assert_eq!(
            text(json!({"command": "undo_edit", "path": "/a"})),
            "Unrecognized command undo_edit. The allowed commands for the \
             str_replace_based_edit_tool tool are: view, create, str_replace, insert (`undo_edit` \
             is not part of text_editor_20250728: to revert a change, edit the file again with \
             `str_replace`.)"
        );
        assert_eq!(
            text(json!({"command": "create", "path": "/a"})),
            "Parameter `file_text` is required for command: create"
        );
        assert_eq!(
            text(json!({"command": "view", "path": "/a", "view_range": [1]})),
            strings::VIEW_RANGE_NOT_TWO_INTEGERS
        );
        assert_eq!(
            text(json!({"command": 1, "path": "/a"})),
            "Parameter `command` must be a string, got a number."
        );
    }
}
