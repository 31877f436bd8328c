//! Turning the model's path into the file to touch: absolute, inside the root with symlinks
//! resolved, and whether it exists.

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use super::EditorError;

/// What is at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathState {
    Missing,
    File,
    Dir,
    /// A symlink whose target does not exist: treated as an existing file by `create` (which
    /// would write through it) and as missing by the other commands.
    DanglingLink,
}

/// A path checked for the editor.
#[derive(Debug)]
pub(crate) struct Target {
    /// The path as the answers show it: the model's, with `//`, `/./` and a trailing `/`
    /// folded as Python's `Path` folds them.
    pub(crate) shown: PathBuf,
    /// The path the file system calls use: under a root, the canonical one (symlinks
    /// resolved, so what was checked is what is touched); otherwise the model's.
    pub(crate) real: PathBuf,
    pub(crate) state: PathState,
}

/// Checks `raw`: absolute, then inside `root` (already canonical) when there is one.
pub(crate) fn resolve(raw: &str, root: Option<&Path>) -> Result<Target, EditorError> {
    let path = Path::new(raw);
    if !path.is_absolute() {
        let base = root.unwrap_or(Path::new("/"));
        return Err(EditorError::NotAbsolute {
            path: raw.to_owned(),
            suggestion: base.join(path).components().collect(),
        });
    }
    let shown: PathBuf = path.components().collect();
    let state = state_of(path, &shown)?;
    let Some(root) = root else {
        return Ok(Target {
            real: path.to_path_buf(),
            shown,
            state,
        });
    };
    let outside = || EditorError::OutsideRoot {
        path: shown.clone(),
        root: root.to_path_buf(),
    };
    let real = match state {
        PathState::File | PathState::Dir => {
            let real = path.canonicalize().map_err(|source| EditorError::Read {
                path: shown.clone(),
                source,
            })?;
            if !real.starts_with(root) {
                return Err(outside());
            }
            real
        }
        // Never read or written: `create` refuses it, the other commands call it missing.
        PathState::DanglingLink => path.to_path_buf(),
        PathState::Missing => {
            // The nearest ancestor that exists decides; what lies below it does not exist yet
            // and so cannot be a symlink, but must not climb out with `..` either.
            let Some(ancestor) = path.ancestors().skip(1).find(|a| a.exists()) else {
                return Err(outside());
            };
            let real_ancestor = ancestor
                .canonicalize()
                .map_err(|source| EditorError::Read {
                    path: shown.clone(),
                    source,
                })?;
            let rest = path.strip_prefix(ancestor).map_err(|_| outside())?;
            if !real_ancestor.starts_with(root)
                || rest
                    .components()
                    .any(|c| !matches!(c, Component::Normal(_)))
            {
                return Err(outside());
            }
            real_ancestor.join(rest)
        }
    };
    Ok(Target { shown, real, state })
}

fn state_of(path: &Path, shown: &Path) -> Result<PathState, EditorError> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Ok(PathState::Dir),
        Ok(_) => Ok(PathState::File),
        Err(err) if matches!(err.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            if std::fs::symlink_metadata(path).is_ok() {
                Ok(PathState::DanglingLink)
            } else {
                Ok(PathState::Missing)
            }
        }
        Err(source) => Err(EditorError::Read {
            path: shown.to_path_buf(),
            source,
        }),
    }
}
