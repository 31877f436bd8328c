//! The text editor tool `text_editor_20250728` (`str_replace_based_edit_tool`): `view`,
//! `create`, `str_replace` and `insert` on UTF-8 text files, answered with the reference
//! implementation's texts.
//!
//! Spec: claude-computer-use-tool, the text editor tool. Under configured roots (an episode's HOME
//! and workspace), issue 17 item 3 holds: "Everything hands itself touches in the workspace …
//! is opened beneath a directory fd without following symlinks." Each root's directory is
//! opened once; every look, read, listing, `mkdir` and write afterwards is an `openat2`
//! beneath it with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`
//! (`beneath.rs`), so a symlink a program in the workspace swaps in is refused by the kernel at
//! the moment of the call, not checked before and followed after. Writes there are atomic (a
//! temporary file made with `O_EXCL`, synced, renamed over the target). Answers always name
//! the model's path (the inside one).
//!
//! With no root (the default, `--sandbox none`) the editor behaves as before: paths are used as
//! given, symlinks followed, writes in place (same inode), as the reference does. That mode is
//! unsandboxed and guards nothing.

mod beneath;
mod command;
mod listing;
mod paths;
mod text;

use std::io::Write as _;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::input::InputError;
use crate::outcome::ToolOutcome;
use crate::strings;

pub use command::EditorCommand;
use paths::{OpenRoot, PathState, Place, Target};

/// One directory the editor may touch: the path the model names it by and where it is for
/// hands, e.g. `/workspace` → `<episode>/workspace`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorRoot {
    /// The absolute path prefix the model uses (as the programs in its environment see it).
    pub inside: PathBuf,
    /// The directory on this side.
    pub host: PathBuf,
}

impl EditorRoot {
    /// A root the model names by its host path (no jail between them).
    pub fn same(dir: impl Into<PathBuf>) -> EditorRoot {
        let dir = dir.into();
        EditorRoot {
            inside: dir.clone(),
            host: dir,
        }
    }
}

/// What the editor may touch and how much it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorConfig {
    /// The directories the editor may touch. A model path is mapped to the root with the
    /// longest matching `inside` prefix; a path under none is refused, and so is one that is
    /// or goes through a symlink. Every operation happens beneath the root's directory fd
    /// (issue 17 item 3). Empty (the default, `--sandbox none`): any path, used as given.
    pub roots: Vec<EditorRoot>,
    /// The `max_characters` of the declaration: `view` shows at most this many characters of
    /// a file and tells the model it was cut. `None` leaves it out of the declaration.
    pub max_characters: Option<NonZeroUsize>,
    /// The cap on `view` when `max_characters` is not set: the reference's 16,000
    /// (`MAX_RESPONSE_LEN`). It also bounds directory listings.
    pub view_chars: usize,
    /// Whether `create` makes missing parent directories (default `true`). Ours: the reference
    /// fails with "No such file or directory"; a model that names a new directory means it.
    pub create_parent_dirs: bool,
    /// Files larger than this are refused rather than read whole. Default 10 MiB. Ours.
    pub max_file_bytes: u64,
}

impl EditorConfig {
    /// The reference's `MAX_RESPONSE_LEN`.
    pub const DEFAULT_VIEW_CHARS: usize = 16_000;
    /// The largest file read by default.
    pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
}

impl Default for EditorConfig {
    fn default() -> Self {
        Self {
            roots: Vec::new(),
            max_characters: None,
            view_chars: Self::DEFAULT_VIEW_CHARS,
            create_parent_dirs: true,
            max_file_bytes: Self::DEFAULT_MAX_FILE_BYTES,
        }
    }
}

/// The configuration cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditorConfigError {
    /// A root's inside path is not absolute.
    #[error("the editor root's inside path {} must be absolute", .inside.display())]
    InsideNotAbsolute {
        /// The configured inside path.
        inside: PathBuf,
    },
    /// The root cannot be opened (it does not exist, is not reachable, or this kernel has no
    /// `openat2`, Linux 5.6 and later).
    #[error("the editor root {} cannot be used: {source}", .root.display())]
    Root {
        /// The configured root.
        root: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The root is not a directory.
    #[error("the editor root {} is not a directory", .root.display())]
    RootNotADirectory {
        /// The configured root.
        root: PathBuf,
    },
}

/// Why an editor command failed. Its `Display` is the text the model reads.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditorError {
    /// The input was refused.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The path is relative.
    #[error("{}", strings::not_absolute(.path, .suggestion))]
    NotAbsolute {
        /// The path as sent.
        path: String,
        /// The absolute path it probably meant.
        suggestion: PathBuf,
    },
    /// The path lies outside every root.
    #[error("{}", strings::outside_root(.path, .roots))]
    OutsideRoot {
        /// The path.
        path: PathBuf,
        /// The roots' inside paths.
        roots: Vec<PathBuf>,
    },
    /// Under a root, the path is or goes through a symlink, which the editor never follows.
    #[error("{}", strings::through_symlink(.path, .link))]
    ThroughSymlink {
        /// The path.
        path: PathBuf,
        /// The symlink on the way (the path itself when it is the link), as the model names it.
        link: PathBuf,
    },
    /// Nothing is at the path.
    #[error("{}", strings::path_missing(.path))]
    Missing {
        /// The path.
        path: PathBuf,
    },
    /// `create` on an existing path.
    #[error("{}", strings::file_exists(.path))]
    AlreadyExists {
        /// The path.
        path: PathBuf,
    },
    /// A command other than `view` on a directory.
    #[error("{}", strings::is_directory(.path))]
    IsDirectory {
        /// The path.
        path: PathBuf,
    },
    /// `view_range` on a directory.
    #[error("{}", strings::VIEW_RANGE_ON_DIRECTORY)]
    ViewRangeOnDirectory,
    /// `view_range` starts outside the file.
    #[error("{}", strings::view_range_bad_start(*.range, *.n_lines))]
    ViewRangeStart {
        /// The range as sent.
        range: [i64; 2],
        /// The file's line count.
        n_lines: usize,
    },
    /// `view_range` ends past the file.
    #[error("{}", strings::view_range_bad_end(*.range, *.n_lines))]
    ViewRangeEnd {
        /// The range as sent.
        range: [i64; 2],
        /// The file's line count.
        n_lines: usize,
    },
    /// `view_range` ends before it starts.
    #[error("{}", strings::view_range_end_before_start(*.range))]
    ViewRangeOrder {
        /// The range as sent.
        range: [i64; 2],
    },
    /// `insert_line` outside `0..=n_lines`.
    #[error("{}", strings::insert_line_out_of_range(*.insert_line, *.n_lines))]
    InsertLine {
        /// The line as sent.
        insert_line: i64,
        /// The file's line count.
        n_lines: usize,
    },
    /// `old_str` is empty.
    #[error("{}", strings::EMPTY_OLD_STR)]
    EmptyOldStr,
    /// `old_str` does not occur.
    #[error("{}", strings::no_match(.old_str, .path))]
    NoMatch {
        /// The text looked for.
        old_str: String,
        /// The file.
        path: PathBuf,
    },
    /// `old_str` occurs more than once.
    #[error("{}", strings::several_matches(.old_str, .lines))]
    SeveralMatches {
        /// The text looked for.
        old_str: String,
        /// The 1-based lines where occurrences start.
        lines: Vec<usize>,
    },
    /// The file is not UTF-8.
    #[error("{}", strings::not_utf8(.path, *.byte_offset))]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// The first invalid byte.
        byte_offset: usize,
    },
    /// The file is larger than the editor reads.
    #[error("{}", strings::file_too_large(.path, *.n_bytes, *.max_bytes))]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        n_bytes: u64,
        /// The configured bound.
        max_bytes: u64,
    },
    /// Reading failed.
    #[error("{}", strings::read_failed(.path, .source))]
    Read {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Writing failed.
    #[error("{}", strings::write_failed(.path, .source))]
    Write {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The caller cancelled before the command ran; nothing was changed. Ours.
    #[error("cancelled: the editor command was not run")]
    Cancelled,
    /// The blocking task running the command did not finish (it panicked or the runtime is
    /// shutting down); whether a write happened is unknown. Ours.
    #[error("the editor command did not complete: {0}")]
    Aborted(String),
}

/// The text editor tool `text_editor_20250728` behind the name `str_replace_based_edit_tool`.
///
/// Spec: claude-computer-use-tool, quick start. Behaviour and texts follow the reference
/// `EditTool20250728`; where hands differs (line counting, tabs, overlapping matches, parent
/// directories, `insert_text`), the item's doc comment says so.
#[derive(Debug, Clone)]
pub struct EditorTool {
    config: Arc<EditorConfig>,
    /// The roots' directories, opened once at construction and shared by every clone, in the
    /// configured order.
    roots: Arc<Vec<OpenRoot>>,
}

impl EditorTool {
    /// An editor; opens each root, which must be an existing directory.
    pub fn new(config: EditorConfig) -> Result<Self, EditorConfigError> {
        let mut roots = Vec::with_capacity(config.roots.len());
        for root in &config.roots {
            if !root.inside.is_absolute() {
                return Err(EditorConfigError::InsideNotAbsolute {
                    inside: root.inside.clone(),
                });
            }
            let fd = beneath::open_root(&root.host).map_err(|source| {
                if source.raw_os_error() == Some(libc::ENOTDIR) {
                    EditorConfigError::RootNotADirectory {
                        root: root.host.clone(),
                    }
                } else {
                    EditorConfigError::Root {
                        root: root.host.clone(),
                        source,
                    }
                }
            })?;
            roots.push(OpenRoot {
                inside: root.inside.components().collect(),
                fd: Arc::new(fd),
            });
        }
        Ok(Self {
            config: Arc::new(config),
            roots: Arc::new(roots),
        })
    }

    /// The entry of the request's `tools` array:
    /// `{"type":"text_editor_20250728","name":"str_replace_based_edit_tool"}`, with
    /// `max_characters` when configured.
    pub fn declaration(&self) -> Value {
        let mut declaration =
            json!({"type": strings::EDITOR_TOOL_TYPE, "name": strings::EDITOR_TOOL_NAME});
        if let (Some(max), Some(obj)) = (self.config.max_characters, declaration.as_object_mut()) {
            obj.insert(
                strings::EDITOR_MAX_CHARACTERS_FIELD.to_owned(),
                json!(max.get()),
            );
        }
        declaration
    }

    /// Runs one `tool_use` input and answers it; every failure becomes an `is_error` outcome.
    pub async fn call(&mut self, input: &Value, cancel: &CancellationToken) -> ToolOutcome {
        match EditorCommand::parse(input) {
            Ok(command) => self.answer(command, cancel).await,
            Err(err) => ToolOutcome::error(EditorError::from(err).to_string()),
        }
    }

    /// Runs one parsed command (e.g. once a person approved it) and answers it; every failure
    /// becomes an `is_error` outcome.
    pub async fn answer(&self, command: EditorCommand, cancel: &CancellationToken) -> ToolOutcome {
        match self.execute(command, cancel).await {
            Ok(text) => ToolOutcome::ok(text),
            Err(err) => ToolOutcome::error(err.to_string()),
        }
    }

    /// Runs one validated command on a blocking thread; answers the success text.
    ///
    /// Cancellation is checked before the command starts; a started command (one read and at
    /// most one write) runs to its end, so a file is never left half-written.
    pub async fn execute(
        &self,
        command: EditorCommand,
        cancel: &CancellationToken,
    ) -> Result<String, EditorError> {
        if cancel.is_cancelled() {
            return Err(EditorError::Cancelled);
        }
        let editor = self.clone();
        tokio::task::spawn_blocking(move || editor.execute_blocking(command))
            .await
            .map_err(|err| EditorError::Aborted(err.to_string()))?
    }

    /// Runs one validated command on this thread.
    pub fn execute_blocking(&self, command: EditorCommand) -> Result<String, EditorError> {
        let target = paths::resolve(command.path(), &self.roots)?;
        let is_create = matches!(command, EditorCommand::Create { .. });
        match target.state {
            PathState::Missing | PathState::DanglingLink if !is_create => {
                return Err(EditorError::Missing { path: target.shown });
            }
            PathState::File | PathState::Dir | PathState::DanglingLink if is_create => {
                return Err(EditorError::AlreadyExists { path: target.shown });
            }
            PathState::Dir if !matches!(command, EditorCommand::View { .. }) => {
                return Err(EditorError::IsDirectory { path: target.shown });
            }
            _ => {}
        }
        match command {
            EditorCommand::View { view_range, .. } => self.view(&target, view_range),
            EditorCommand::Create { file_text, .. } => self.create(&target, &file_text),
            EditorCommand::StrReplace {
                old_str, new_str, ..
            } => self.str_replace(&target, old_str, &new_str),
            EditorCommand::Insert {
                insert_line,
                insert_text,
                ..
            } => self.insert(&target, insert_line, &insert_text),
        }
    }

    fn view_limit(&self) -> usize {
        self.config
            .max_characters
            .map_or(self.config.view_chars, NonZeroUsize::get)
    }

    /// `view`. A file: numbered lines, `view_range` checked as the reference checks it (first
    /// in `1..=n`, last `<= n`, `-1` for the end, last not before first), cut at the view
    /// limit with the reference's note. A directory: see [`listing::list`].
    fn view(&self, target: &Target, view_range: Option<[i64; 2]>) -> Result<String, EditorError> {
        let limit = self.view_limit();
        if target.state == PathState::Dir {
            if view_range.is_some() {
                return Err(EditorError::ViewRangeOnDirectory);
            }
            let lines = listing::list(&target.place, &target.shown).map_err(|source| {
                EditorError::Read {
                    path: target.shown.clone(),
                    source,
                }
            })?;
            let listing = lines.join("\n");
            let (listing, cut) = text::truncate_chars(&listing, limit);
            let mut out = strings::directory_listing_header(&target.shown);
            out.push_str(listing);
            out.push('\n');
            if cut {
                out.push_str(strings::TRUNCATED_MESSAGE);
                out.push('\n');
            }
            return Ok(out);
        }
        let content = self.read(target)?;
        let lines = text::Lines::new(&content);
        let n_lines = lines.len();
        let (first, end) = match view_range {
            None => (0, n_lines),
            Some(range @ [start, last]) => {
                let n = i64::try_from(n_lines).unwrap_or(i64::MAX);
                if start < 1 || start > n {
                    return Err(EditorError::ViewRangeStart { range, n_lines });
                }
                if last > n {
                    return Err(EditorError::ViewRangeEnd { range, n_lines });
                }
                if last != -1 && last < start {
                    return Err(EditorError::ViewRangeOrder { range });
                }
                let end = if last == -1 { n } else { last };
                // Both are within 1..=n_lines here, so they fit a usize.
                (to_index(start - 1), to_index(end))
            }
        };
        let shown = target.shown.display().to_string();
        let selected = lines.slice(first, end);
        let body = selected.join("\n");
        let (body, cut) = text::truncate_chars(&body, limit);
        let shown_lines: Vec<&str> = if selected.is_empty() {
            Vec::new()
        } else {
            body.split('\n').collect()
        };
        let mut out = text::cat_n(&shown_lines, &shown, first + 1);
        if cut {
            out.push_str(strings::TRUNCATED_MESSAGE);
            out.push('\n');
        }
        Ok(out)
    }

    /// `create`: writes the file, making parent directories when configured. Under a root the
    /// rename never replaces a file that appeared meanwhile.
    fn create(&self, target: &Target, file_text: &str) -> Result<String, EditorError> {
        let write_err = |source| EditorError::Write {
            path: target.shown.clone(),
            source,
        };
        if self.config.create_parent_dirs {
            match &target.place {
                Place::Host(real) => {
                    if let Some(parent) = real.parent() {
                        std::fs::create_dir_all(parent).map_err(write_err)?;
                    }
                }
                Place::Beneath { root, rest } => {
                    if let Some(parent) = rest.parent() {
                        beneath::create_dirs(root, parent).map_err(write_err)?;
                    }
                }
            }
        }
        match self.write(target, file_text, beneath::Replace::Never) {
            Err(EditorError::Write { source, .. })
                if source.kind() == std::io::ErrorKind::AlreadyExists =>
            {
                return Err(EditorError::AlreadyExists {
                    path: target.shown.clone(),
                });
            }
            other => other?,
        }
        Ok(strings::file_created(&target.shown))
    }

    /// `str_replace`: the one occurrence of `old_str`, replaced in place. Tabs stay tabs (the
    /// reference expands every tab of the file to spaces on each replace).
    fn str_replace(
        &self,
        target: &Target,
        old_str: String,
        new_str: &str,
    ) -> Result<String, EditorError> {
        let content = self.read(target)?;
        let edit =
            text::replace_once(&content, &old_str, new_str).map_err(|refusal| match refusal {
                text::ReplaceRefusal::Empty => EditorError::EmptyOldStr,
                text::ReplaceRefusal::NoMatch => EditorError::NoMatch {
                    old_str,
                    path: target.shown.clone(),
                },
                text::ReplaceRefusal::Several(lines) => {
                    EditorError::SeveralMatches { old_str, lines }
                }
            })?;
        self.write(target, &edit.text, beneath::Replace::Existing)?;
        Ok(edited_answer(
            target,
            &edit,
            &strings::replace_snippet(&target.shown),
            strings::STR_REPLACE_REVIEW,
        ))
    }

    /// `insert`: the text after line `insert_line`, `0..=n_lines`.
    fn insert(
        &self,
        target: &Target,
        insert_line: i64,
        insert_text: &str,
    ) -> Result<String, EditorError> {
        let content = self.read(target)?;
        let n_lines = text::Lines::new(&content).len();
        let after = usize::try_from(insert_line)
            .ok()
            .filter(|after| *after <= n_lines)
            .ok_or(EditorError::InsertLine {
                insert_line,
                n_lines,
            })?;
        let edit = text::insert_after(&content, after, insert_text);
        self.write(target, &edit.text, beneath::Replace::Existing)?;
        Ok(edited_answer(
            target,
            &edit,
            strings::INSERT_SNIPPET,
            strings::INSERT_REVIEW,
        ))
    }

    fn read(&self, target: &Target) -> Result<String, EditorError> {
        let read_err = |source| EditorError::Read {
            path: target.shown.clone(),
            source,
        };
        let max_bytes = self.config.max_file_bytes;
        let too_large = |n_bytes| EditorError::TooLarge {
            path: target.shown.clone(),
            n_bytes,
            max_bytes,
        };
        let bytes = match &target.place {
            Place::Host(real) => {
                let n_bytes = std::fs::metadata(real).map_err(read_err)?.len();
                if n_bytes > max_bytes {
                    return Err(too_large(n_bytes));
                }
                std::fs::read(real).map_err(read_err)?
            }
            Place::Beneath { root, rest } => {
                let (file, n_bytes) = beneath::open_file(root, rest).map_err(read_err)?;
                if n_bytes > max_bytes {
                    return Err(too_large(n_bytes));
                }
                let bytes = beneath::read(file, max_bytes).map_err(read_err)?;
                // It grew between the size and the read.
                if bytes.len() as u64 > max_bytes {
                    return Err(too_large(bytes.len() as u64));
                }
                bytes
            }
        };
        String::from_utf8(bytes).map_err(|err| EditorError::NotUtf8 {
            path: target.shown.clone(),
            byte_offset: err.utf8_error().valid_up_to(),
        })
    }

    /// Writes `content`. No root: in place (same inode, mode and owner), as the reference
    /// does. Under a root: atomically beneath the root's fd (a temporary file renamed over the
    /// target, mode and owner carried over), see [`beneath::write_atomic`].
    fn write(
        &self,
        target: &Target,
        content: &str,
        replace: beneath::Replace,
    ) -> Result<(), EditorError> {
        let write_err = |source| EditorError::Write {
            path: target.shown.clone(),
            source,
        };
        match &target.place {
            Place::Host(real) => match replace {
                // `create_new` so a file that appeared since the check is not replaced.
                beneath::Replace::Never if target.state == PathState::Missing => {
                    std::fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(real)
                        .and_then(|mut file| file.write_all(content.as_bytes()))
                        .map_err(write_err)
                }
                _ => std::fs::write(real, content).map_err(write_err),
            },
            Place::Beneath { root, rest } => {
                beneath::write_atomic(root, rest, content.as_bytes(), replace).map_err(write_err)
            }
        }
    }

    /// The configured roots, as given.
    pub fn roots(&self) -> &[EditorRoot] {
        &self.config.roots
    }
}

/// "The file … has been edited. " + the numbered snippet + the review request. Reference.
fn edited_answer(target: &Target, edit: &text::Edit, descriptor: &str, review: &str) -> String {
    let (lines, first_line_no) = &edit.snippet;
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut out = strings::edited(&target.shown);
    out.push_str(&text::cat_n(&lines, descriptor, *first_line_no));
    out.push_str(review);
    out
}

fn to_index(line: i64) -> usize {
    usize::try_from(line).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations() {
        let plain = EditorTool::new(EditorConfig::default()).unwrap();
        assert_eq!(
            plain.declaration(),
            json!({"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"})
        );
        let capped = EditorTool::new(EditorConfig {
            max_characters: NonZeroUsize::new(10_000),
            ..EditorConfig::default()
        })
        .unwrap();
        assert_eq!(
            capped.declaration(),
            json!({"type": "text_editor_20250728", "name": "str_replace_based_edit_tool",
                   "max_characters": 10_000})
        );
    }

    #[test]
    fn missing_root_is_refused() {
        let err = EditorTool::new(EditorConfig {
            roots: vec![EditorRoot {
                inside: PathBuf::from("/workspace"),
                host: PathBuf::from("/nonexistent/hands-sandbox-root"),
            }],
            ..EditorConfig::default()
        })
        .unwrap_err();
        assert!(matches!(err, EditorConfigError::Root { .. }), "{err}");
    }
}
