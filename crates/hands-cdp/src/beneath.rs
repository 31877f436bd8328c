//! Files hands itself touches for a transfer, opened beneath a directory fd without following
//! symlinks: the staged download it takes from the browser's download directory, the destination
//! it writes, the granted file it reads for an upload and the copy it stages for the browser.
//!
//! Issue 17 item 3: "Everything hands itself touches in the workspace (screenshots saved,
//! downloads handed over, uploads granted, editor operations) is opened beneath a directory fd
//! without following symlinks." The browser (possibly compromised by a page) can write its
//! download directory, and jailed programs can write the workspace: a name checked and then
//! opened by path leaves a window in which a symlink is swapped in and hands reads or writes
//! through it with its own privileges. Here every name is resolved by the kernel beneath a
//! directory fd with `openat2` (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS`, and `O_NOFOLLOW`), what is read is checked by `fstat` on the fd it is
//! read from (a regular file, not a FIFO or a device), and a destination is created with
//! `O_CREAT | O_EXCL` under a temporary name and renamed into place with `RENAME_NOREPLACE`:
//! nothing is ever written through a symlink or over an existing file.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

use hands_jail::beneath::{file_type, open as open_beneath};
pub(crate) use hands_jail::beneath::{is, temp_name};

/// Opens the directory at `path` as an `O_PATH` handle. Its last component is not followed (a
/// symlink there is refused); the components before it are the caller's to vouch for.
pub(crate) fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    let fd = rustix::fs::open(
        path,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    if file_type(&fd)? != FileType::Directory {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{} is not a directory", path.display()),
        ));
    }
    Ok(fd)
}

/// The directory holding `path` (opened by [`open_dir`]) and `path`'s last component, which
/// must be a plain name (not `..`, `.` or empty).
pub(crate) fn parent_and_name(path: &Path) -> io::Result<(OwnedFd, OsString)> {
    let name = match path.components().next_back() {
        Some(Component::Normal(name)) => name.to_os_string(),
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} does not end in a file name", path.display()),
            ));
        }
    };
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok((open_dir(parent)?, name))
}

/// Opens the regular file `name` beneath `dir` for reading and tells its size. A symlink is
/// refused (`ELOOP`), and so is a FIFO or device (which would block or read forever).
pub(crate) fn open_regular<Fd: AsFd>(dir: Fd, name: &OsStr) -> io::Result<(File, u64)> {
    hands_jail::beneath::open_regular(dir, Path::new(name))
}

/// Creates the new file `name` beneath `dir` (`O_CREAT | O_EXCL | O_NOFOLLOW`: it fails with
/// `EEXIST` when anything, a symlink included, is there already).
pub(crate) fn create_new<Fd: AsFd>(dir: Fd, name: &OsStr, mode: u32) -> io::Result<File> {
    let fd = open_beneath(
        dir,
        Path::new(name),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
        Mode::from_raw_mode(mode),
    )?;
    Ok(File::from(fd))
}

/// Whether anything (a symlink included) is at `name` beneath `dir`.
pub(crate) fn exists<Fd: AsFd>(dir: Fd, name: &OsStr) -> io::Result<bool> {
    match open_beneath(dir, Path::new(name), OFlags::PATH, Mode::empty()) {
        Ok(_) => Ok(true),
        Err(e) if is(&e, Errno::NOENT) => Ok(false),
        // A symlink the resolution refused is something there.
        Err(e) if is(&e, Errno::LOOP) => Ok(true),
        Err(e) => Err(e),
    }
}

/// Removes the file `name` beneath `dir` (never what a symlink there points to); a missing
/// file is already removed.
pub(crate) fn remove<Fd: AsFd>(dir: Fd, name: &OsStr) -> io::Result<()> {
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Why a copy stopped.
#[derive(Debug)]
pub(crate) enum CopyError {
    /// The source had more than the limit (it grew after it was measured).
    TooBig,
    /// Reading or writing failed.
    Io(io::Error),
}

/// Copies `from` into `to`, at most `max` bytes: more is [`CopyError::TooBig`]. Flushed to
/// disk before it returns.
pub(crate) fn copy_at_most(from: &mut File, to: &mut File, max: u64) -> Result<u64, CopyError> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut copied: u64 = 0;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(CopyError::Io(e)),
        };
        copied += n as u64;
        if copied > max {
            return Err(CopyError::TooBig);
        }
        to.write_all(&buf[..n]).map_err(CopyError::Io)?;
    }
    to.sync_all().map_err(CopyError::Io)?;
    Ok(copied)
}

/// Renames `from` to `to` in `dir` only if nothing is at `to` (`RENAME_NOREPLACE`; where the
/// file system lacks it, a hard link, which never replaces either, then the unlink of `from`).
/// `EEXIST` when something is there.
pub(crate) fn rename_new<Fd: AsFd>(dir: Fd, from: &OsStr, to: &OsStr) -> io::Result<()> {
    let dir = dir.as_fd();
    match rustix::fs::renameat_with(dir, from, dir, to, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(Errno::INVAL | Errno::NOSYS) => {
            rustix::fs::linkat(dir, from, dir, to, AtFlags::empty())?;
            remove(dir, from)
        }
        Err(e) => Err(e.into()),
    }
}

/// Makes the new directory `name` beneath `dir`, private to this process (`0700`); `EEXIST`
/// when anything is there.
pub(crate) fn make_dir<Fd: AsFd>(dir: Fd, name: &OsStr) -> io::Result<OwnedFd> {
    let dir = dir.as_fd();
    rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700))?;
    open_beneath(
        dir,
        Path::new(name),
        OFlags::PATH | OFlags::DIRECTORY,
        Mode::empty(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("hands-beneath-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn symlinks_are_never_followed_here() {
        let dir = temp("refused");
        std::fs::write(dir.join("real"), "real").unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        let fd = open_dir(&dir).unwrap();
        // What `open_regular` refuses is tested with `hands_jail::beneath`; here, that this
        // module goes through it.
        let (_, size) = open_regular(&fd, OsStr::new("real")).unwrap();
        assert_eq!(size, 4);
        let err = open_regular(&fd, OsStr::new("link")).unwrap_err();
        assert!(is(&err, Errno::LOOP), "{err}");
        // A symlinked directory is not opened as the directory.
        std::os::unix::fs::symlink(&dir, dir.join("dirlink")).unwrap();
        assert!(open_dir(&dir.join("dirlink")).is_err());
        // Nothing is created through a symlink, dangling or not.
        std::os::unix::fs::symlink(dir.join("target"), dir.join("dangling")).unwrap();
        let err = create_new(&fd, OsStr::new("dangling"), 0o600).unwrap_err();
        assert!(is(&err, Errno::EXIST), "{err}");
        assert!(!dir.join("target").exists());
        assert!(exists(&fd, OsStr::new("dangling")).unwrap());
        assert!(!exists(&fd, OsStr::new("nothing")).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_rename_never_replaces() {
        let dir = temp("rename");
        let fd = open_dir(&dir).unwrap();
        let mut new = create_new(&fd, OsStr::new("tmp"), 0o600).unwrap();
        new.write_all(b"new").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.join("taken")).unwrap();
        let err = rename_new(&fd, OsStr::new("tmp"), OsStr::new("taken")).unwrap_err();
        assert!(is(&err, Errno::EXIST), "{err}");
        rename_new(&fd, OsStr::new("tmp"), OsStr::new("free")).unwrap();
        assert_eq!(std::fs::read(dir.join("free")).unwrap(), b"new");
        assert!(!dir.join("tmp").exists());
        // A copy stops past its limit.
        let (mut from, _) = open_regular(&fd, OsStr::new("free")).unwrap();
        let mut to = create_new(&fd, OsStr::new("copy"), 0o600).unwrap();
        assert!(matches!(
            copy_at_most(&mut from, &mut to, 2),
            Err(CopyError::TooBig)
        ));
        remove(&fd, OsStr::new("copy")).unwrap();
        remove(&fd, OsStr::new("copy")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
