//! The opt-in `upload_file` (an approved file into the page's pending file chooser) and `download_file` (the page's latest download delivered to an approved destination), each answering the exact `BrowserFileOutcome`.
//!
//! Spec: openai-browser-desktop-drivers, "Habilitar diagnósticos, scripts y transferencias de
//! archivos": status/effect pairs completed/completed, refused/none, unknown/unknown,
//! interrupted/none or unknown; cleanup not_started, pending or completed.
//!
//! Issue 17 item 3: every file touched here is opened beneath a directory fd without following
//! symlinks ([`crate::beneath`]):
//! - a download is read from the browser's download directory through the fd opened when the
//!   driver started, by its guid, `O_NOFOLLOW` with `RESOLVE_NO_SYMLINKS`, and only if `fstat`
//!   says it is a regular file: a symlink (or FIFO) the browser left at that name is refused;
//! - it is written beside its destination under a temporary name (`O_CREAT | O_EXCL`) and
//!   renamed into place with `RENAME_NOREPLACE`: never through a symlink planted at the
//!   destination, never over anything there;
//! - an upload's granted file (a host path, out of a jailed browser's sight) is read the same
//!   way, copied into a fresh [`Launcher::private_dir`] and given to the browser's uid
//!   ([`Launcher::adopt`]), and the browser is handed the copy's `inside` path. The copy is
//!   staged on the host launcher too: the browser then reads a file only hands and it can
//!   reach, not the original that could be swapped after the check. The page reads a chosen
//!   file when it likes (a `FileReader`, a form post), so the copy stays until the driver is
//!   dropped: a delivered upload answers cleanup `pending`, one that never reached the page
//!   `completed` (its copy removed at once).

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use hands_core::browser::args::GrantId;
use hands_core::browser::driver::{FileCleanup, FileEffect, FileStatus};
use hands_core::browser::{DriverError, FileOutcome};
use hands_jail::{Launcher, SharedDir};

use crate::beneath::{self, CopyError};
use crate::driver::CdpBrowser;
use crate::events::FileChooser;
use crate::files::{DownloadGrant, UploadGrant};

fn outcome(
    status: FileStatus,
    effect: FileEffect,
    cleanup: FileCleanup,
) -> Result<FileOutcome, DriverError> {
    FileOutcome::new(status, effect, cleanup)
        .ok_or_else(|| DriverError::Failed("an impossible file outcome".into()))
}

/// Nothing happened, nothing to clean.
fn refused() -> Result<FileOutcome, DriverError> {
    outcome(
        FileStatus::Refused,
        FileEffect::None,
        FileCleanup::NotStarted,
    )
}

/// `completed` when a removal worked, else `pending`.
fn cleanup_of(removed: std::io::Result<()>) -> FileCleanup {
    match removed {
        Ok(()) => FileCleanup::Completed,
        Err(e) => {
            tracing::warn!(error = %e, "could not remove a transfer's file");
            FileCleanup::Pending
        }
    }
}

/// The driver's side of transfers: the download directory's fd, and the upload copies staged
/// for the browser.
#[derive(Debug, Default)]
pub(crate) struct Transfers {
    /// The download directory, opened as the driver starts (before any page loads), its last
    /// component not followed; `None` when there is none or it could not be opened (downloads
    /// are then refused).
    downloads: Option<Arc<OwnedFd>>,
    /// The private directories holding staged upload copies (host paths), removed on drop.
    staged: Vec<PathBuf>,
}

impl Transfers {
    /// Opens `download_dir` (its `host` path).
    pub(crate) fn new(download_dir: Option<&SharedDir>) -> Transfers {
        let downloads = download_dir.and_then(|dir| match beneath::open_dir(&dir.host) {
            Ok(fd) => Some(Arc::new(fd)),
            Err(e) => {
                tracing::warn!(dir = %dir.host.display(), error = %e, "downloads will be refused: the directory did not open");
                None
            }
        });
        Transfers {
            downloads,
            staged: Vec::new(),
        }
    }
}

impl Drop for Transfers {
    fn drop(&mut self) {
        // `remove_dir_all` never follows a symlink it meets.
        for dir in &self.staged {
            match std::fs::remove_dir_all(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), error = %e, "could not remove staged uploads");
                }
            }
        }
    }
}

/// An upload copy staged for the browser.
#[derive(Debug)]
struct Staged {
    /// The private directory (host path), removed with everything in it.
    dir: PathBuf,
    /// The copy as the browser names it.
    inside: PathBuf,
}

/// Why an upload was not staged.
#[derive(Debug)]
enum StageError {
    /// The granted file is not a regular file within its limit (or cannot be opened without
    /// following a symlink).
    Refused,
    /// Staging failed after the private directory was made (removed again or not).
    Failed(FileCleanup),
}

/// Reads the granted file (a regular file within `max_bytes`, its name not a symlink) and copies
/// it into a new private directory of `launcher`, as `<dir>/file/<its name>`, given to the
/// launcher's programs. The inner `file` directory is this process's alone (`0700`) until the
/// copy is whole and adopted, so nothing of the launcher's can swap the copy while it is made.
fn stage_upload(launcher: &dyn Launcher, grant: &UploadGrant) -> Result<Staged, StageError> {
    let (parent, name) = beneath::parent_and_name(&grant.path).map_err(|_| StageError::Refused)?;
    let (mut source, size) =
        beneath::open_regular(&parent, &name).map_err(|_| StageError::Refused)?;
    if size > grant.max_bytes {
        return Err(StageError::Refused);
    }
    let shared = launcher.private_dir("upload").map_err(|e| {
        tracing::warn!(error = %e, "no private directory for an upload");
        StageError::Failed(FileCleanup::Completed)
    })?;
    let mut copy = || -> Result<(), CopyError> {
        let io = CopyError::Io;
        let dir = beneath::open_dir(&shared.host).map_err(io)?;
        let inner = beneath::make_dir(&dir, "file".as_ref()).map_err(io)?;
        let mut file = beneath::create_new(&inner, &name, 0o600).map_err(io)?;
        beneath::copy_at_most(&mut source, &mut file, grant.max_bytes)?;
        let file_dir = shared.host.join("file");
        launcher.adopt(&file_dir.join(&name)).map_err(io)?;
        launcher.adopt(&file_dir).map_err(io)
    };
    match copy() {
        Ok(()) => Ok(Staged {
            inside: shared.inside.join("file").join(&name),
            dir: shared.host,
        }),
        Err(e) => {
            let removed = std::fs::remove_dir_all(&shared.host);
            match e {
                CopyError::TooBig => {
                    let _ = removed;
                    Err(StageError::Refused)
                }
                CopyError::Io(e) => {
                    tracing::warn!(error = %e, "could not stage an upload");
                    Err(StageError::Failed(cleanup_of(removed)))
                }
            }
        }
    }
}

/// How a delivery ended.
#[derive(Debug, PartialEq, Eq)]
enum Delivered {
    /// Refused before anything was written.
    Refused,
    /// Refused once the temporary copy existed (the file grew past its limit, or something
    /// appeared at the destination meanwhile); the copy's removal as cleanup.
    RefusedLate(FileCleanup),
    /// Reading or writing failed; nothing is at the destination.
    Failed(FileCleanup),
    /// At the destination; the staged download's removal as cleanup.
    Done(FileCleanup),
}

/// Delivers the staged download `guid` beneath `downloads` to `grant.destination`: read without
/// following a symlink and only if a regular file within the limit, written beside the
/// destination under a temporary name and renamed into place only if nothing is there.
fn deliver(downloads: &OwnedFd, guid: &str, grant: &DownloadGrant) -> Delivered {
    let guid = OsString::from(guid);
    let Ok((mut source, size)) = beneath::open_regular(downloads, &guid) else {
        return Delivered::Refused;
    };
    if size > grant.max_bytes {
        return Delivered::Refused;
    }
    let Ok((parent, name)) = beneath::parent_and_name(&grant.destination) else {
        return Delivered::Refused;
    };
    if !matches!(beneath::exists(&parent, &name), Ok(false)) {
        return Delivered::Refused;
    }
    let temp = beneath::temp_name(&name);
    let mut file = match beneath::create_new(&parent, &temp, 0o644) {
        Ok(file) => file,
        Err(e) => {
            tracing::warn!(error = %e, "could not create a download's destination");
            return Delivered::Failed(FileCleanup::NotStarted);
        }
    };
    let written = beneath::copy_at_most(&mut source, &mut file, grant.max_bytes).and_then(|_| {
        beneath::rename_new(&parent, &temp, &name).map_err(|e| {
            if beneath::is(&e, rustix::io::Errno::EXIST) {
                CopyError::TooBig
            } else {
                CopyError::Io(e)
            }
        })
    });
    match written {
        Ok(()) => Delivered::Done(cleanup_of(beneath::remove(downloads, &guid))),
        // Too big, or the destination appeared meanwhile: refused, the copy removed.
        Err(CopyError::TooBig) => {
            Delivered::RefusedLate(cleanup_of(beneath::remove(&parent, &temp)))
        }
        Err(CopyError::Io(e)) => {
            tracing::warn!(error = %e, "could not deliver a download");
            Delivered::Failed(cleanup_of(beneath::remove(&parent, &temp)))
        }
    }
}

impl CdpBrowser {
    /// `upload_file`: needs a file chooser the page opened (a click on a file input) — the
    /// active tab's first, else any tab's. The grant is redeemed only once that is known, so a
    /// refusal for a missing chooser does not spend it.
    pub(crate) async fn upload_impl(
        &mut self,
        grant: &GrantId,
        cancel: &CancellationToken,
    ) -> Result<FileOutcome, DriverError> {
        self.check_alive()?;
        let Some(grants) = self.config.grants.clone() else {
            return refused();
        };
        let chooser: Option<(hands_core::browser::TabId, FileChooser)> = {
            let state = self.shared.lock();
            let active = state.active.clone();
            let mut tabs: Vec<_> = state.tabs.iter().filter(|t| t.chooser.is_some()).collect();
            tabs.sort_by_key(|t| Some(&t.id) != active.as_ref());
            tabs.first()
                .and_then(|t| t.chooser.clone().map(|c| (t.id.clone(), c)))
        };
        let Some((tab, chooser)) = chooser else {
            return refused();
        };
        let Some(approved) = grants.redeem_upload(grant) else {
            return refused();
        };
        let launcher = Arc::clone(&self.config.launch.launcher);
        let staged =
            tokio::task::spawn_blocking(move || stage_upload(launcher.as_ref(), &approved))
                .await
                .map_err(|e| {
                    DriverError::Failed(format!("the upload's staging task failed: {e}"))
                })?;
        let staged = match staged {
            Ok(staged) => staged,
            Err(StageError::Refused) => return refused(),
            Err(StageError::Failed(cleanup)) => {
                return outcome(FileStatus::Interrupted, FileEffect::None, cleanup);
            }
        };
        let remove_now = |staged: &Staged| cleanup_of(std::fs::remove_dir_all(&staged.dir));
        if cancel.is_cancelled() {
            return outcome(
                FileStatus::Interrupted,
                FileEffect::None,
                remove_now(&staged),
            );
        }
        let result = self
            .shared
            .conn
            .call_with(
                Some(&chooser.session),
                "DOM.setFileInputFiles",
                json!({"files": [staged.inside], "backendNodeId": chooser.backend_node_id}),
                self.config.call_timeout,
                Some(cancel),
            )
            .await;
        match result {
            Ok(_) => {
                if let Some(t) = self.shared.lock().tab_mut(&tab) {
                    t.chooser = None;
                }
                // The page reads the file when it likes: the copy stays until the driver goes.
                self.transfers.staged.push(staged.dir);
                outcome(
                    FileStatus::Completed,
                    FileEffect::Completed,
                    FileCleanup::Pending,
                )
            }
            // The call may or may not have reached the page.
            Err(
                crate::connection::CdpError::Cancelled
                | crate::connection::CdpError::Timeout { .. },
            ) => {
                self.transfers.staged.push(staged.dir);
                outcome(
                    FileStatus::Interrupted,
                    FileEffect::Unknown,
                    FileCleanup::Pending,
                )
            }
            Err(e) if e.is_closed() => {
                let _ = remove_now(&staged);
                Err(self.cdp_error(e))
            }
            // The input is gone (the page changed): nothing was set.
            Err(_) => outcome(
                FileStatus::Interrupted,
                FileEffect::None,
                remove_now(&staged),
            ),
        }
    }

    /// `download_file`: the latest download not yet delivered (waited for while in progress,
    /// at most `download_timeout`) moves to the grant's destination, which must not exist.
    pub(crate) async fn download_impl(
        &mut self,
        grant: &GrantId,
        cancel: &CancellationToken,
    ) -> Result<FileOutcome, DriverError> {
        self.check_alive()?;
        let (Some(grants), Some(downloads)) =
            (self.config.grants.clone(), self.transfers.downloads.clone())
        else {
            return refused();
        };
        let guid = {
            let state = self.shared.lock();
            state
                .downloads
                .iter()
                .rev()
                .find(|d| !d.delivered && d.state != "canceled")
                .map(|d| d.guid.clone())
        };
        let Some(guid) = guid else {
            return refused();
        };
        let finished = {
            let guid = guid.clone();
            self.wait_until(self.config.download_timeout, cancel, move |s| {
                s.downloads
                    .iter()
                    .any(|d| d.guid == guid && d.state != "inProgress")
            })
            .await
        };
        if cancel.is_cancelled() {
            return Err(DriverError::Cancelled);
        }
        let completed = finished
            && self
                .shared
                .lock()
                .downloads
                .iter()
                .any(|d| d.guid == guid && d.state == "completed");
        if !completed {
            return refused();
        }
        let Some(approved) = grants.redeem_download(grant) else {
            return refused();
        };
        let delivered = {
            let guid = guid.clone();
            tokio::task::spawn_blocking(move || deliver(&downloads, &guid, &approved))
                .await
                .map_err(|e| DriverError::Failed(format!("the delivery task failed: {e}")))?
        };
        // Refused before anything was written: the download stays for another grant.
        if delivered != Delivered::Refused
            && let Some(d) = self
                .shared
                .lock()
                .downloads
                .iter_mut()
                .find(|d| d.guid == guid)
        {
            d.delivered = true;
        }
        match delivered {
            Delivered::Refused => refused(),
            Delivered::RefusedLate(cleanup) => {
                outcome(FileStatus::Refused, FileEffect::None, cleanup)
            }
            Delivered::Failed(cleanup) => {
                outcome(FileStatus::Interrupted, FileEffect::None, cleanup)
            }
            Delivered::Done(cleanup) => {
                outcome(FileStatus::Completed, FileEffect::Completed, cleanup)
            }
        }
    }
}
