//! A host uid of its own for each episode when hands runs as root, so two episodes (and the
//! caller) never share an owner: one cannot signal, ptrace or read the other's files.
//!
//! A slot is held by an exclusive `flock` on its lock file for as long as the jail lives; the
//! kernel releases it when the holder dies, so a crashed hands never leaks a uid.

use std::fs::{self, File};
use std::io;
use std::os::fd::AsFd as _;
use std::path::PathBuf;

/// The first uid episodes run as (far above any distribution's and `subuid`'s usual ranges).
pub const FIRST_EPISODE_UID: u32 = 3_000_000;
/// How many episode uids there are.
pub const EPISODE_UIDS: u32 = 65_536;

/// A uid held for one episode.
#[derive(Debug)]
pub struct EpisodeUid {
    /// The host uid.
    pub uid: u32,
    /// The held lock; `None` when the episode runs as the caller (not root).
    _lock: Option<File>,
}

/// The uid of the operator's directory an episode binds as its workspace (as root): the episode
/// runs as that directory's owner, so it can write it; a directory owned by root is refused (an
/// episode never runs as root).
pub fn owner_of(dir: &std::path::Path) -> io::Result<EpisodeUid> {
    use std::os::unix::fs::MetadataExt as _;
    let owner = fs::metadata(dir)?.uid();
    if owner == 0 {
        return Err(io::Error::other(format!(
            "{} is owned by root, and an episode never runs as root: give it to an unprivileged user (chown) or copy it in (--workspace without --workspace-bind)",
            dir.display()
        )));
    }
    Ok(EpisodeUid {
        uid: owner,
        _lock: None,
    })
}

fn lock_dir() -> PathBuf {
    crate::layout::base_dir().join("uids")
}

/// Takes a free episode uid (as root), or the caller's own (otherwise).
pub fn take() -> io::Result<EpisodeUid> {
    // SAFETY: geteuid takes no arguments and cannot fail.
    #[allow(unsafe_code)]
    let euid = unsafe { libc::geteuid() };
    if euid != 0 {
        return Ok(EpisodeUid {
            uid: euid,
            _lock: None,
        });
    }
    let dir = lock_dir();
    fs::create_dir_all(&dir)?;
    // Start at a pseudo-random slot so concurrent starts rarely contend.
    let start = (std::process::id().wrapping_mul(2_654_435_761)) % EPISODE_UIDS;
    for i in 0..EPISODE_UIDS {
        let slot = (start + i) % EPISODE_UIDS;
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(format!("{slot}.lock")))?;
        match rustix::fs::flock(
            file.as_fd(),
            rustix::fs::FlockOperation::NonBlockingLockExclusive,
        ) {
            Ok(()) => {
                return Ok(EpisodeUid {
                    uid: FIRST_EPISODE_UID + slot,
                    _lock: Some(file),
                });
            }
            Err(rustix::io::Errno::WOULDBLOCK) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(io::Error::other("every episode uid is in use"))
}
