//! Turning the model's path into the file to touch: absolute, inside one of the editor's roots,
//! and what is there.
//!
//! Under roots (each an inside path prefix, the path the model uses, and the host directory it
//! names), the path is mapped to a root and a relative rest, and every look and operation
//! happens beneath that root's directory fd without following any symlink ([`super::beneath`];
//! issue 17 item 3). A path through a symlink is refused, naming the link.
//!
//! With no root (`--sandbox none`, the unsandboxed mode) the path is used as it is, as before:
//! symlinks are followed, a dangling one counts as existing for `create`, and writes go in
//! place. That mode is not a boundary of any kind and claims none.

use std::io::ErrorKind;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::EditorError;
use super::beneath::{self, Found};

/// What is at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathState {
    Missing,
    File,
    Dir,
    /// A symlink whose target does not exist (no-root mode only): treated as an existing file
    /// by `create` (which would write through it) and as missing by the other commands.
    DanglingLink,
}

/// Where the file system calls for a path go.
#[derive(Debug, Clone)]
pub(crate) enum Place {
    /// No root: this path, used as it is.
    Host(PathBuf),
    /// Beneath a root's directory fd: `rest` is relative and has only plain names.
    Beneath {
        /// The root directory, opened once when the editor was made.
        root: Arc<OwnedFd>,
        /// The path below it.
        rest: PathBuf,
    },
}

/// A path checked for the editor.
#[derive(Debug)]
pub(crate) struct Target {
    /// The path as the answers show it: the model's, with `//`, `/./` and a trailing `/`
    /// folded as Python's `Path` folds them.
    pub(crate) shown: PathBuf,
    /// Where the file system calls go.
    pub(crate) place: Place,
    pub(crate) state: PathState,
}

/// One configured root, opened: the prefix the model names it by and its directory fd.
#[derive(Debug, Clone)]
pub(crate) struct OpenRoot {
    pub(crate) inside: PathBuf,
    pub(crate) fd: Arc<OwnedFd>,
}

/// Checks `raw`: absolute (a relative path is suggested under the first root), then inside
/// one of `roots` when there are any (the longest matching prefix wins: `/home/user/work`
/// before `/home/user`).
pub(crate) fn resolve(raw: &str, roots: &[OpenRoot]) -> Result<Target, EditorError> {
    let path = Path::new(raw);
    if !path.is_absolute() {
        let base = roots.first().map_or(Path::new("/"), |r| r.inside.as_path());
        return Err(EditorError::NotAbsolute {
            path: raw.to_owned(),
            suggestion: base.join(path).components().collect(),
        });
    }
    let shown: PathBuf = path.components().collect();
    if roots.is_empty() {
        return resolve_on_host(path, shown);
    }
    let outside = || EditorError::OutsideRoot {
        path: shown.clone(),
        roots: roots.iter().map(|r| r.inside.clone()).collect(),
    };
    let Some((root, rest)) = roots
        .iter()
        .filter_map(|r| shown.strip_prefix(&r.inside).ok().map(|rest| (r, rest)))
        .max_by_key(|(r, _)| r.inside.components().count())
    else {
        return Err(outside());
    };
    let rest = normalize(rest).ok_or_else(outside)?;
    let state = match beneath::look(&root.fd, &rest) {
        Ok(Found::Missing) => PathState::Missing,
        Ok(Found::File) => PathState::File,
        Ok(Found::Dir) => PathState::Dir,
        Ok(Found::Symlink) => {
            let link = beneath::first_symlink(&root.fd, &rest)
                .map_or_else(|| shown.clone(), |link| root.inside.join(link));
            return Err(EditorError::ThroughSymlink { path: shown, link });
        }
        Err(err) if err.raw_os_error() == Some(libc::EXDEV) => return Err(outside()),
        Err(source) => {
            return Err(EditorError::Read {
                path: shown,
                source,
            });
        }
    };
    Ok(Target {
        shown,
        place: Place::Beneath {
            root: root.fd.clone(),
            rest,
        },
        state,
    })
}

/// `rest` with `..` folded into the name before it; `None` when it climbs above its start.
/// Folding by name is what the kernel does when no component is a symlink, and under a root
/// none may be.
fn normalize(rest: &Path) -> Option<PathBuf> {
    let mut names: Vec<&std::ffi::OsStr> = Vec::new();
    for component in rest.components() {
        match component {
            Component::Normal(name) => names.push(name),
            Component::ParentDir => {
                names.pop()?;
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(names.iter().collect())
}

/// The no-root mode: the path as it is, symlinks followed.
fn resolve_on_host(path: &Path, shown: PathBuf) -> Result<Target, EditorError> {
    let state = state_of(path, &shown)?;
    Ok(Target {
        place: Place::Host(path.to_path_buf()),
        shown,
        state,
    })
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
