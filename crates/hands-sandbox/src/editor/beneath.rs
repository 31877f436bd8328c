//! The editor's file operations under a configured root: every open, create, read, write,
//! listing and `mkdir` happens beneath the root's directory fd with `openat2`
//! (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`), and every write is a
//! temporary file renamed over its target.
//!
//! Issue 17 item 3: "Everything hands itself touches in the workspace … is opened beneath a
//! directory fd without following symlinks." Checking a path and then opening it by name (the
//! editor's `canonicalize` before) leaves a window in which a program in the workspace swaps a
//! directory for a symlink and the write lands outside with hands' privileges; here the kernel
//! resolves each component beneath the fd and refuses any symlink on the way, so there is no
//! window. Spec: claude-computer-use-tool, the text editor tool (`text_editor_20250728`).

use std::ffi::{OsStr, OsString};
use std::io::{self, Read as _, Write as _};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};

use hands_jail::beneath::file_type;
pub(crate) use hands_jail::beneath::open;

/// Opens the root directory once, as an `O_PATH` handle every later operation starts from.
/// Fails with `ENOSYS` on kernels without `openat2` (before 5.6).
pub(crate) fn open_root(host: &Path) -> io::Result<OwnedFd> {
    let fd = rustix::fs::open(
        host,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    // Proves `openat2` works here before any command relies on it.
    open(
        &fd,
        Path::new(""),
        OFlags::PATH | OFlags::DIRECTORY,
        Mode::empty(),
    )?;
    Ok(fd)
}

/// What is at `rest` beneath the root, not following a symlink in the last component either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// Nothing (or a component on the way is not a directory).
    Missing,
    /// A regular file or another non-directory (a FIFO, a device).
    File,
    /// A directory.
    Dir,
    /// The path goes through (or ends on) a symlink.
    Symlink,
}

/// Looks at `rest` beneath `root`. `EXDEV` (an escape the kernel caught) is an error the
/// caller reports as outside the root.
pub(crate) fn look(root: &OwnedFd, rest: &Path) -> io::Result<Found> {
    match open(root, rest, OFlags::PATH | OFlags::NOFOLLOW, Mode::empty()) {
        Ok(fd) => Ok(match file_type(&fd)? {
            FileType::Directory => Found::Dir,
            // `O_PATH | O_NOFOLLOW` hands back the link itself rather than failing.
            FileType::Symlink => Found::Symlink,
            _ => Found::File,
        }),
        Err(err) => match err.raw_os_error() {
            Some(libc::ENOENT | libc::ENOTDIR) => Ok(Found::Missing),
            Some(libc::ELOOP) => Ok(Found::Symlink),
            _ => Err(err),
        },
    }
}

/// The first component of `rest` that is a symlink, as a path relative to the root (`None`
/// when none is, e.g. it was swapped back meanwhile).
pub(crate) fn first_symlink(root: &OwnedFd, rest: &Path) -> Option<PathBuf> {
    let mut prefix = PathBuf::new();
    for component in rest.components() {
        prefix.push(component);
        match look(root, &prefix) {
            Ok(Found::Symlink) => return Some(prefix),
            Ok(Found::Dir | Found::File) => {}
            Ok(Found::Missing) | Err(_) => return None,
        }
    }
    None
}

/// Opens the regular file at `rest` for reading and tells its size. A FIFO or device is
/// refused rather than read (a FIFO would block the editor forever).
pub(crate) fn open_file(root: &OwnedFd, rest: &Path) -> io::Result<(std::fs::File, u64)> {
    hands_jail::beneath::open_regular(root, rest)
}

/// Reads at most `max + 1` bytes of the file at `rest` (one more than allowed, so a file that
/// grew after its size was read is still caught by the caller's bound).
pub(crate) fn read(file: std::fs::File, max: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Makes every directory of `rest` that does not exist yet, beneath `root`, and answers the
/// last one. Each step opens one component beneath the one before, so a symlink swapped in on
/// the way is refused, not followed.
pub(crate) fn create_dirs(root: &OwnedFd, rest: &Path) -> io::Result<OwnedFd> {
    let mut dir = open(
        root,
        Path::new(""),
        OFlags::PATH | OFlags::DIRECTORY,
        Mode::empty(),
    )?;
    for component in rest.components() {
        let Component::Normal(name) = component else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the path is not normalized",
            ));
        };
        let name = Path::new(name);
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW;
        dir = match open(&dir, name, flags, Mode::empty()) {
            Ok(next) => next,
            Err(err) if err.raw_os_error() == Some(libc::ENOENT) => {
                match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o777)) {
                    Ok(()) => {
                        if let Ok(made) = open(&dir, name, flags, Mode::empty()) {
                            give_to_directory_owner(&dir, &made);
                        }
                    }
                    // Made by someone else meanwhile: open what is there (a symlink is refused).
                    Err(rustix::io::Errno::EXIST) => {}
                    Err(err) => return Err(err.into()),
                }
                open(&dir, name, flags, Mode::empty())?
            }
            Err(err) => return Err(err),
        };
    }
    Ok(dir)
}

/// Whether a write may replace what is at the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replace {
    /// `create`: the target must not exist (checked again at the rename, `RENAME_NOREPLACE`).
    Never,
    /// An edit of an existing file: its mode and owner carry over to the new content.
    Existing,
}

/// Writes `content` to `rest` atomically: a temporary file made with `O_EXCL` beside the target
/// (beneath the same root, no symlink followed), written, synced, then renamed over the target.
/// A reader sees the old file or the new one, never a part; a crash leaves at most a stray
/// temporary file, never half a file. The file gets a new inode.
pub(crate) fn write_atomic(
    root: &OwnedFd,
    rest: &Path,
    content: &[u8],
    replace: Replace,
) -> io::Result<()> {
    let (parent, name) = split(rest)?;
    let dir = open(
        root,
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW,
        Mode::empty(),
    )?;
    let old = match replace {
        Replace::Existing => {
            let fd = open(
                &dir,
                Path::new(name),
                OFlags::PATH | OFlags::NOFOLLOW,
                Mode::empty(),
            )?;
            Some(rustix::fs::fstat(&fd)?)
        }
        Replace::Never => None,
    };
    let (tmp_name, tmp) = create_temporary(&dir, name)?;
    let result: io::Result<()> = (|| {
        let mut file = std::fs::File::from(tmp);
        file.write_all(content)?;
        match &old {
            Some(old) => {
                rustix::fs::fchmod(&file, Mode::from_raw_mode(old.st_mode & 0o7777))?;
                give_to(&file, old.st_uid, old.st_gid);
            }
            None => give_to_directory_owner(&dir, &file),
        }
        file.sync_all()?;
        let flags = match replace {
            Replace::Never => RenameFlags::NOREPLACE,
            Replace::Existing => RenameFlags::empty(),
        };
        rustix::fs::renameat_with(&dir, &tmp_name, &dir, name, flags)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(&dir, &tmp_name, AtFlags::empty());
    }
    result?;
    // The rename itself is durable once the directory is synced; a failure here loses nothing
    // already visible.
    let _ = rustix::fs::fsync(&dir);
    Ok(())
}

/// `rest` as its parent and its last component (which must be a plain name).
fn split(rest: &Path) -> io::Result<(&Path, &OsStr)> {
    match (rest.parent(), rest.components().next_back()) {
        (Some(parent), Some(Component::Normal(name))) => Ok((parent, name)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path names no file",
        )),
    }
}

/// A new file `.NAME.hands-PID-N.tmp` in `dir`, made with `O_EXCL` (so nothing already there,
/// a symlink included, is ever opened).
fn create_temporary(dir: &OwnedFd, name: &OsStr) -> io::Result<(OsString, OwnedFd)> {
    loop {
        let tmp_name = hands_jail::beneath::temp_name(name);
        match open(
            dir,
            Path::new(&tmp_name),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
            Mode::from_raw_mode(0o666),
        ) {
            Ok(fd) => return Ok((tmp_name, fd)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err),
        }
    }
}

/// When hands runs as root (a jail's programs run as another uid), a file or directory it makes
/// belongs to the owner of the directory it is in, so the model's shell can keep editing it.
/// Best effort: elsewhere the file is simply the caller's, as any file the caller writes.
fn give_to_directory_owner(dir: &OwnedFd, made: &impl AsFd) {
    if !rustix::process::geteuid().is_root() {
        return;
    }
    if let Ok(stat) = rustix::fs::fstat(dir) {
        give_to(made, stat.st_uid, stat.st_gid);
    }
}

/// Gives `file` to `uid:gid` when it is not theirs already; best effort (only root may).
fn give_to(file: &impl AsFd, uid: u32, gid: u32) {
    if let Ok(stat) = rustix::fs::fstat(file)
        && (stat.st_uid != uid || stat.st_gid != gid)
    {
        let _ = rustix::fs::fchown(
            file,
            Some(rustix::fs::Uid::from_raw(uid)),
            Some(rustix::fs::Gid::from_raw(gid)),
        );
    }
}

/// The non-hidden entries of the directory at `rest`, sorted by name, and whether each is a
/// directory (a symlink is not, whatever it points to).
pub(crate) fn visible_entries(root: &OwnedFd, rest: &Path) -> io::Result<Vec<(OsString, bool)>> {
    let fd = open(
        root,
        rest,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW,
        Mode::empty(),
    )?;
    let mut entries = Vec::new();
    for entry in rustix::fs::Dir::new(fd)? {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name.as_bytes().starts_with(b".") {
            continue;
        }
        let is_dir = match entry.file_type() {
            FileType::Unknown => look(root, &rest.join(name)).is_ok_and(|f| f == Found::Dir),
            file_type => file_type == FileType::Directory,
        };
        entries.push((name.to_os_string(), is_dir));
    }
    entries.sort();
    Ok(entries)
}
