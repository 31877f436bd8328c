//! Every exact string of the bash and text editor tools, in one place.
//!
//! "Reference" marks a text copied from Anthropic's reference implementation (the
//! computer-use demo of `anthropics/claude-quickstarts`, `tools/bash.py`, `tools/edit.py` and
//! `tools/run.py`), which models have seen in training; "ours" marks a text hands wrote where
//! the reference has none or is known to be wrong.

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The `type` of the bash tool's declaration.
///
/// Spec: claude-computer-use-tool, quick start (`{"type": "bash_20250124", "name": "bash"}`).
pub const BASH_TOOL_TYPE: &str = "bash_20250124";

/// The fixed `name` of the bash tool.
///
/// Spec: claude-computer-use-tool, quick start.
pub const BASH_TOOL_NAME: &str = "bash";

/// The `type` of the text editor tool's declaration.
///
/// Spec: claude-computer-use-tool, quick start
/// (`{"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}`).
pub const EDITOR_TOOL_TYPE: &str = "text_editor_20250728";

/// The fixed `name` of the text editor tool.
///
/// Spec: claude-computer-use-tool, quick start.
pub const EDITOR_TOOL_NAME: &str = "str_replace_based_edit_tool";

/// The optional declaration field of `text_editor_20250728` that caps what `view` shows.
pub const EDITOR_MAX_CHARACTERS_FIELD: &str = "max_characters";

// ---------------------------------------------------------------------------------------------
// Bash
// ---------------------------------------------------------------------------------------------

/// The answer to `{"restart": true}`. Reference.
pub const BASH_RESTARTED: &str = "tool has been restarted.";

/// The answer to an input with neither `command` nor `restart`. Reference.
pub const BASH_NO_COMMAND: &str = "no command provided.";

/// Added after [`bash_exited`]: the session is gone until a restart. Reference.
pub const BASH_MUST_RESTART: &str = "tool must be restarted";

/// The answer when the caller cancelled the running command. Ours.
pub const BASH_CANCELLED: &str =
    "cancelled: the command was stopped and bash must be restarted (send {\"restart\": true})";

/// The answer when the caller had cancelled before the command was sent. Ours.
pub const BASH_NOT_RUN: &str = "cancelled: the command was not run";

/// The answer when the previous call was dropped while its command ran. Ours.
pub const BASH_INTERRUPTED: &str = "the previous command was interrupted before it finished \
     and its session was killed; bash must be restarted (send {\"restart\": true})";

/// Refusal of an input that names both `restart` and `command`. Ours: the reference restarts
/// and silently drops the command.
pub const BASH_RESTART_WITH_COMMAND: &str = "`restart` and `command` cannot be combined: restart \
     first with {\"restart\": true}, then send the command in a separate call.";

/// Refusal of a command holding a NUL character, which no shell can receive. Ours.
pub const BASH_NUL_IN_COMMAND: &str =
    "The command contains a NUL character (\\u0000), which bash cannot receive; remove it.";

/// The answer when a command outlives the timeout. Reference: `timed out: bash has not returned
/// in 120.0 seconds and must be restarted` (the seconds printed as Python prints a float).
pub fn bash_timed_out(timeout: Duration) -> String {
    format!(
        "timed out: bash has not returned in {:?} seconds and must be restarted",
        timeout.as_secs_f64()
    )
}

/// The answer when the shell itself exited (for instance after `exit 3`). Reference.
pub fn bash_exited(code: impl Display) -> String {
    format!("bash has exited with returncode {code}")
}

/// The note after a stream cut at the output cap. Ours.
pub fn output_cut(n_cut_chars: u64) -> String {
    format!("[output cut: {n_cut_chars} more characters not shown]")
}

/// The answer when the shell cannot be started. Ours.
pub fn bash_spawn_failed(shell: &Path, err: impl Display) -> String {
    format!("could not start {}: {err}", shell.display())
}

// ---------------------------------------------------------------------------------------------
// Text editor
// ---------------------------------------------------------------------------------------------

/// How many lines around an edit the success snippet shows. Reference (`SNIPPET_LINES`).
pub const SNIPPET_LINES: usize = 4;

/// The note after a `view` cut at its character limit. Reference (`TRUNCATED_MESSAGE`).
pub const TRUNCATED_MESSAGE: &str = "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>";

/// The commands `text_editor_20250728` takes, as the reference lists them.
pub const EDITOR_COMMANDS: &str = "view, create, str_replace, insert";

/// Refusal of a relative path. Reference; its suggestion is ours (the reference suggests the
/// same relative path back): the path under the editor's root, or under `/`.
pub fn not_absolute(path: &str, suggestion: &Path) -> String {
    format!(
        "The path {path} is not an absolute path, it should start with `/`. Maybe you meant {}?",
        suggestion.display()
    )
}

/// Refusal of a missing path for any command but `create`. Reference.
pub fn path_missing(path: &Path) -> String {
    format!(
        "The path {} does not exist. Please provide a valid path.",
        path.display()
    )
}

/// Refusal of `create` on an existing path. Reference.
pub fn file_exists(path: &Path) -> String {
    format!(
        "File already exists at: {}. Cannot overwrite files using command `create`.",
        path.display()
    )
}

/// Refusal of any command but `view` on a directory. Reference.
pub fn is_directory(path: &Path) -> String {
    format!(
        "The path {} is a directory and only the `view` command can be used on directories",
        path.display()
    )
}

/// Refusal of a path outside every directory the editor may touch. Ours. With one root:
/// "… is outside the directory this editor may touch (ROOT). Use a path under ROOT."; with
/// several: "… is outside the directories this editor may touch: /home/user, /workspace. Use a
/// path under one of them."
pub fn outside_root(path: &Path, roots: &[PathBuf]) -> String {
    match roots {
        [root] => format!(
            "The path {} is outside the directory this editor may touch ({}). Use a path under {}.",
            path.display(),
            root.display(),
            root.display()
        ),
        roots => {
            let names: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
            format!(
                "The path {} is outside the directories this editor may touch: {}. Use a path \
                 under one of them.",
                path.display(),
                names.join(", ")
            )
        }
    }
}

/// Refusal of a path that is, or goes through, a symbolic link under a root: the editor never
/// follows one (issue 17 item 3). Ours.
pub fn through_symlink(path: &Path, link: &Path) -> String {
    if path == link {
        format!(
            "The path {} is a symbolic link, which this editor does not follow. Name the file \
             by a path without symbolic links.",
            path.display()
        )
    } else {
        format!(
            "The path {} goes through the symbolic link {}, which this editor does not follow. \
             Name the file by a path without symbolic links.",
            path.display(),
            link.display()
        )
    }
}

/// Refusal of a file that is not UTF-8 text. Ours: the reference answers with Python's
/// decoding exception.
pub fn not_utf8(path: &Path, byte_offset: usize) -> String {
    format!(
        "The file {} is not UTF-8 text (invalid byte at offset {byte_offset}); this editor only \
         views and edits UTF-8 text files. Use the bash tool to inspect binary files.",
        path.display()
    )
}

/// Refusal of a file larger than the editor reads. Ours.
pub fn file_too_large(path: &Path, n_bytes: u64, max_bytes: u64) -> String {
    format!(
        "The file {} is {n_bytes} bytes, more than this editor reads ({max_bytes} bytes). Use \
         the bash tool (grep -n, sed -n) to work on it.",
        path.display()
    )
}

/// A read that failed for another reason. Reference (Python prints its exception as `e`).
pub fn read_failed(path: &Path, err: impl Display) -> String {
    format!("Ran into {err} while trying to read {}", path.display())
}

/// A write that failed. Reference.
pub fn write_failed(path: &Path, err: impl Display) -> String {
    format!("Ran into {err} while trying to write to {}", path.display())
}

/// `view_range` given for a directory. Reference.
pub const VIEW_RANGE_ON_DIRECTORY: &str =
    "The `view_range` parameter is not allowed when `path` points to a directory.";

/// `view_range` that is not two integers. Reference.
pub const VIEW_RANGE_NOT_TWO_INTEGERS: &str =
    "Invalid `view_range`. It should be a list of two integers.";

/// `view_range` whose first line is not a line of the file. Reference.
pub fn view_range_bad_start(range: [i64; 2], n_lines: usize) -> String {
    format!(
        "Invalid `view_range`: {}. Its first element `{}` should be within the range of lines of \
         the file: [1, {n_lines}]",
        py_list(range),
        range[0]
    )
}

/// `view_range` whose last line is past the end of the file. Reference.
pub fn view_range_bad_end(range: [i64; 2], n_lines: usize) -> String {
    format!(
        "Invalid `view_range`: {}. Its second element `{}` should be smaller than the number of \
         lines in the file: `{n_lines}`",
        py_list(range),
        range[1]
    )
}

/// `view_range` whose last line comes before its first. Reference.
pub fn view_range_end_before_start(range: [i64; 2]) -> String {
    format!(
        "Invalid `view_range`: {}. Its second element `{}` should be larger or equal than its \
         first `{}`",
        py_list(range),
        range[1],
        range[0]
    )
}

/// The head of a directory listing. Reference.
pub fn directory_listing_header(path: &Path) -> String {
    format!(
        "Here's the files and directories up to 2 levels deep in {}, excluding hidden items:\n",
        path.display()
    )
}

/// The head of every numbered listing. Reference.
pub fn cat_n_header(descriptor: &str) -> String {
    format!("Here's the result of running `cat -n` on {descriptor}:\n")
}

/// The answer to a successful `create`. Reference.
pub fn file_created(path: &Path) -> String {
    format!("File created successfully at: {}", path.display())
}

/// A parameter a command requires is absent. Reference (for `file_text`, `old_str`,
/// `insert_line`; hands uses the same words for `path` and `insert_text`).
pub fn missing_parameter(field: &str, command: &str) -> String {
    format!("Parameter `{field}` is required for command: {command}")
}

/// `old_str` does not occur in the file. Reference.
pub fn no_match(old_str: &str, path: &Path) -> String {
    format!(
        "No replacement was performed, old_str `{old_str}` did not appear verbatim in {}.",
        path.display()
    )
}

/// `old_str` occurs more than once; `lines` are the 1-based lines where occurrences start.
/// Reference.
pub fn several_matches(old_str: &str, lines: &[usize]) -> String {
    let lines: Vec<String> = lines.iter().map(ToString::to_string).collect();
    format!(
        "No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines [{}]. \
         Please ensure it is unique",
        lines.join(", ")
    )
}

/// Refusal of an empty `old_str`, which would match everywhere. Ours.
pub const EMPTY_OLD_STR: &str = "No replacement was performed: `old_str` is empty. Give the exact \
     text to replace, or use the `insert` command to add text.";

/// The start of a successful edit's answer. Reference.
pub fn edited(path: &Path) -> String {
    format!("The file {} has been edited. ", path.display())
}

/// The end of a successful `str_replace` answer. Reference.
pub const STR_REPLACE_REVIEW: &str =
    "Review the changes and make sure they are as expected. Edit the file again if necessary.";

/// The end of a successful `insert` answer. Reference.
pub const INSERT_REVIEW: &str = "Review the changes and make sure they are as expected (correct \
     indentation, no duplicate lines, etc). Edit the file again if necessary.";

/// The descriptor of the snippet after `insert`. Reference.
pub const INSERT_SNIPPET: &str = "a snippet of the edited file";

/// The descriptor of the snippet after `str_replace`. Reference.
pub fn replace_snippet(path: &Path) -> String {
    format!("a snippet of {}", path.display())
}

/// `insert_line` outside `0..=n_lines`. Reference.
pub fn insert_line_out_of_range(insert_line: i64, n_lines: usize) -> String {
    format!(
        "Invalid `insert_line` parameter: {insert_line}. It should be within the range of lines \
         of the file: [0, {n_lines}]"
    )
}

/// `insert` given both `insert_text` and a different `new_str`. Ours.
pub const INSERT_TEXT_CONFLICT: &str = "`insert` takes the text to insert in `insert_text`; \
     `new_str` was also given with different text. Send only `insert_text`.";

/// A command this tool does not have. Reference.
pub fn unrecognized_command(command: &str) -> String {
    format!(
        "Unrecognized command {command}. The allowed commands for the {EDITOR_TOOL_NAME} tool \
         are: {EDITOR_COMMANDS}"
    )
}

/// Added after [`unrecognized_command`] for `undo_edit`, which `text_editor_20250728` dropped.
/// Ours.
pub const UNDO_EDIT_REMOVED: &str = " (`undo_edit` is not part of text_editor_20250728: to \
     revert a change, edit the file again with `str_replace`.)";

// ---------------------------------------------------------------------------------------------
// Input shape, both tools (ours)
// ---------------------------------------------------------------------------------------------

/// The tool input is not a JSON object.
pub fn input_not_object(got: &str) -> String {
    format!("The tool input must be a JSON object, got {got}.")
}

/// The editor input has no `command`.
pub fn missing_command() -> String {
    format!("Parameter `command` is required; it is one of: {EDITOR_COMMANDS}.")
}

/// A parameter has the wrong JSON type.
pub fn wrong_type(field: &str, expected: &str, got: &str) -> String {
    format!("Parameter `{field}` must be {expected}, got {got}.")
}

/// A string parameter holds a NUL character, which no path or file name can hold.
pub fn nul_in(field: &str) -> String {
    format!("Parameter `{field}` contains a NUL character (\\u0000); remove it.")
}

/// A list of integers as Python prints it: `[1, 5]`.
fn py_list(values: [i64; 2]) -> String {
    format!("[{}, {}]", values[0], values[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_identity() {
        assert_eq!(BASH_TOOL_TYPE, "bash_20250124");
        assert_eq!(BASH_TOOL_NAME, "bash");
        assert_eq!(EDITOR_TOOL_TYPE, "text_editor_20250728");
        assert_eq!(EDITOR_TOOL_NAME, "str_replace_based_edit_tool");
        assert_eq!(EDITOR_MAX_CHARACTERS_FIELD, "max_characters");
    }

    #[test]
    fn reference_bash_texts() {
        assert_eq!(BASH_RESTARTED, "tool has been restarted.");
        assert_eq!(BASH_NO_COMMAND, "no command provided.");
        assert_eq!(BASH_MUST_RESTART, "tool must be restarted");
        assert_eq!(
            bash_timed_out(Duration::from_secs(120)),
            "timed out: bash has not returned in 120.0 seconds and must be restarted"
        );
        assert_eq!(
            bash_timed_out(Duration::from_millis(1500)),
            "timed out: bash has not returned in 1.5 seconds and must be restarted"
        );
        assert_eq!(bash_exited(3), "bash has exited with returncode 3");
    }

    #[test]
    fn reference_editor_texts() {
        let p = Path::new("/repo/a.py");
        let cases: &[(String, &str)] = &[
            (
                not_absolute("a.py", Path::new("/a.py")),
                "The path a.py is not an absolute path, it should start with `/`. Maybe you meant /a.py?",
            ),
            (
                path_missing(p),
                "The path /repo/a.py does not exist. Please provide a valid path.",
            ),
            (
                file_exists(p),
                "File already exists at: /repo/a.py. Cannot overwrite files using command `create`.",
            ),
            (
                is_directory(Path::new("/repo")),
                "The path /repo is a directory and only the `view` command can be used on directories",
            ),
            (
                view_range_bad_start([0, 3], 7),
                "Invalid `view_range`: [0, 3]. Its first element `0` should be within the range of lines of the file: [1, 7]",
            ),
            (
                view_range_bad_end([2, 9], 7),
                "Invalid `view_range`: [2, 9]. Its second element `9` should be smaller than the number of lines in the file: `7`",
            ),
            (
                view_range_end_before_start([5, 3]),
                "Invalid `view_range`: [5, 3]. Its second element `3` should be larger or equal than its first `5`",
            ),
            (
                directory_listing_header(Path::new("/repo")),
                "Here's the files and directories up to 2 levels deep in /repo, excluding hidden items:\n",
            ),
            (
                cat_n_header("/repo/a.py"),
                "Here's the result of running `cat -n` on /repo/a.py:\n",
            ),
            (file_created(p), "File created successfully at: /repo/a.py"),
            (
                missing_parameter("file_text", "create"),
                "Parameter `file_text` is required for command: create",
            ),
            (
                no_match("x = 1", p),
                "No replacement was performed, old_str `x = 1` did not appear verbatim in /repo/a.py.",
            ),
            (
                several_matches("x", &[1, 3]),
                "No replacement was performed. Multiple occurrences of old_str `x` in lines [1, 3]. Please ensure it is unique",
            ),
            (edited(p), "The file /repo/a.py has been edited. "),
            (replace_snippet(p), "a snippet of /repo/a.py"),
            (
                insert_line_out_of_range(9, 4),
                "Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 4]",
            ),
            (
                unrecognized_command("undo_edit"),
                "Unrecognized command undo_edit. The allowed commands for the str_replace_based_edit_tool tool are: view, create, str_replace, insert",
            ),
            (
                read_failed(p, "[Errno 13] Permission denied"),
                "Ran into [Errno 13] Permission denied while trying to read /repo/a.py",
            ),
            (
                write_failed(p, "[Errno 13] Permission denied"),
                "Ran into [Errno 13] Permission denied while trying to write to /repo/a.py",
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
        assert_eq!(
            VIEW_RANGE_ON_DIRECTORY,
            "The `view_range` parameter is not allowed when `path` points to a directory."
        );
        assert_eq!(
            VIEW_RANGE_NOT_TWO_INTEGERS,
            "Invalid `view_range`. It should be a list of two integers."
        );
        assert_eq!(
            STR_REPLACE_REVIEW,
            "Review the changes and make sure they are as expected. Edit the file again if necessary."
        );
        assert_eq!(
            INSERT_REVIEW,
            "Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary."
        );
        assert_eq!(INSERT_SNIPPET, "a snippet of the edited file");
        assert_eq!(SNIPPET_LINES, 4);
        assert!(TRUNCATED_MESSAGE.starts_with("<response clipped><NOTE>To save on context"));
        assert!(
            TRUNCATED_MESSAGE.ends_with("the line numbers of what you are looking for.</NOTE>")
        );
    }

    #[test]
    fn our_texts() {
        assert_eq!(
            output_cut(84_000),
            "[output cut: 84000 more characters not shown]"
        );
        assert_eq!(
            wrong_type("command", "a string", "a number"),
            "Parameter `command` must be a string, got a number."
        );
        assert_eq!(
            input_not_object("an array"),
            "The tool input must be a JSON object, got an array."
        );
        assert_eq!(
            missing_command(),
            "Parameter `command` is required; it is one of: view, create, str_replace, insert."
        );
        assert!(BASH_CANCELLED.starts_with("cancelled: "));
        assert_eq!(BASH_NOT_RUN, "cancelled: the command was not run");
        assert!(BASH_INTERRUPTED.contains("must be restarted"));
        assert!(UNDO_EDIT_REMOVED.contains("text_editor_20250728"));
    }
}
