//! Opening files beneath a directory fd, never through a symlink: the one primitive both the
//! text editor (hands-sandbox) and the browser's file transfers (hands-cdp) build on.
//!
//! Issue 17 item 3: "Everything hands itself touches in the workspace (screenshots saved,
//! downloads handed over, uploads granted, editor operations) is opened beneath a directory fd
//! without following symlinks." Checking a name and then opening it by path leaves a window in
//! which a jailed program (or a compromised browser) swaps in a symlink and hands reads or
//! writes through it with its own privileges. Here the kernel resolves every component beneath
//! the fd with `openat2` (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`, and
//! `O_NOFOLLOW`), so there is no window.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// How every name is resolved beneath its directory: never above it, never through a symlink or
/// a `/proc` magic link.
const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// How many times a resolution is retried when the kernel answers `EAGAIN` (a rename elsewhere
/// raced the walk).
const N_RETRIES: usize = 8;

/// The longest part of a file's name kept in its temporary name, so that name stays within
/// `NAME_MAX` (255 bytes).
const MAX_STEM: usize = 200;

/// `openat2` of `rest` beneath `dir`, retried on `EAGAIN`; an empty `rest` is `dir` itself.
/// `O_NOFOLLOW` and `O_CLOEXEC` always go along (a symlink in the last place is refused with
/// `ELOOP`, or, with `O_PATH`, opened as the link itself), and so does `O_NOCTTY` unless
/// `O_PATH` is asked for (`openat2` refuses it there): a terminal planted beneath `dir` must not
/// become this process's.
pub fn open<Fd: AsFd>(dir: Fd, rest: &Path, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
    let rest: &Path = if rest.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rest
    };
    let flags = if flags.contains(OFlags::PATH) {
        flags | OFlags::NOFOLLOW | OFlags::CLOEXEC
    } else {
        flags | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY
    };
    let mut attempt = 0;
    loop {
        match rustix::fs::openat2(dir.as_fd(), rest, flags, mode, RESOLVE) {
            Err(Errno::AGAIN) if attempt < N_RETRIES => attempt += 1,
            other => return other.map_err(io::Error::from),
        }
    }
}

/// What kind of file `fd` is.
pub fn file_type<Fd: AsFd>(fd: Fd) -> io::Result<FileType> {
    Ok(FileType::from_raw_mode(rustix::fs::fstat(fd)?.st_mode))
}

/// Opens the regular file at `rest` beneath `dir` for reading and tells its size. A symlink is
/// refused (`ELOOP`), and so is a FIFO or a device (which would block or read forever):
/// `InvalidInput`, checked on the very fd that is read.
pub fn open_regular<Fd: AsFd>(dir: Fd, rest: &Path) -> io::Result<(File, u64)> {
    let fd = open(dir, rest, OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty())?;
    let stat = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", rest.display()),
        ));
    }
    Ok((File::from(fd), u64::try_from(stat.st_size).unwrap_or(0)))
}

/// A fresh temporary name beside `name` for a file being written:
/// `.NAME.hands-<pid>-<n>.tmp`, with `NAME` cut to 200 bytes so it stays a valid name. Made
/// with `O_EXCL` by the caller, so a name someone planted is never opened.
pub fn temp_name(name: &OsStr) -> OsString {
    static N: AtomicU64 = AtomicU64::new(0);
    let mut temp = OsString::from(".");
    temp.push(OsStr::from_bytes(
        &name.as_bytes()[..name.len().min(MAX_STEM)],
    ));
    temp.push(format!(
        ".hands-{}-{}.tmp",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    temp
}

/// Whether `e` is `errno`.
pub fn is(e: &io::Error, errno: Errno) -> bool {
    e.raw_os_error() == Some(errno.raw_os_error())
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use super::*;

    #[test]
    fn symlinks_fifos_and_escapes_are_refused() {
        let dir = tempfile_dir();
        std::fs::create_dir(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/real"), "real").unwrap();
        std::os::unix::fs::symlink(dir.join("sub/real"), dir.join("link")).unwrap();
        std::os::unix::fs::symlink(dir.join("sub"), dir.join("dirlink")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.join("fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let fd = rustix::fs::open(&dir, OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).unwrap();
        let (mut file, size) = open_regular(&fd, Path::new("sub/real")).unwrap();
        let mut text = String::new();
        file.read_to_string(&mut text).unwrap();
        assert_eq!((text.as_str(), size), ("real", 4));
        // A symlink, last or on the way, is not followed.
        let err = open_regular(&fd, Path::new("link")).unwrap_err();
        assert!(is(&err, Errno::LOOP), "{err}");
        let err = open_regular(&fd, Path::new("dirlink/real")).unwrap_err();
        assert!(is(&err, Errno::LOOP), "{err}");
        // With `O_PATH` the link itself is opened, never what it points to.
        let link = open(&fd, Path::new("link"), OFlags::PATH, Mode::empty()).unwrap();
        assert_eq!(file_type(&link).unwrap(), FileType::Symlink);
        // A FIFO is refused at once rather than read.
        let err = open_regular(&fd, Path::new("fifo")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        // `..` and absolute paths leave the directory: refused by the kernel.
        assert!(is(
            &open_regular(&fd, Path::new("../x")).unwrap_err(),
            Errno::XDEV
        ));
        assert!(open_regular(&fd, Path::new("/etc/passwd")).is_err());
        // The empty path is the directory itself.
        let itself = open(&fd, Path::new(""), OFlags::PATH, Mode::empty()).unwrap();
        assert_eq!(file_type(&itself).unwrap(), FileType::Directory);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temporary_names_are_fresh_hidden_and_short_enough() {
        let a = temp_name(OsStr::new("notes.txt"));
        let b = temp_name(OsStr::new("notes.txt"));
        assert_ne!(a, b);
        assert!(a.to_string_lossy().starts_with(".notes.txt.hands-"));
        assert!(a.to_string_lossy().ends_with(".tmp"));
        let long = "x".repeat(255);
        assert!(temp_name(OsStr::new(&long)).len() <= 255);
    }

    fn tempfile_dir() -> std::path::PathBuf {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hands-jail-beneath-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
