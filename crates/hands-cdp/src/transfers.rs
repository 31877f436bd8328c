//! The opt-in `upload_file` (an approved file into the page's pending file chooser) and `download_file` (the page's latest download delivered to an approved destination), each answering the exact `BrowserFileOutcome`.
//!
//! Spec: openai-browser-desktop-drivers, "Habilitar diagnósticos, scripts y transferencias de
//! archivos": status/effect pairs completed/completed, refused/none, unknown/unknown,
//! interrupted/none or unknown; cleanup not_started, pending or completed.

use std::path::Path;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use hands_core::browser::args::GrantId;
use hands_core::browser::driver::{FileCleanup, FileEffect, FileStatus};
use hands_core::browser::{DriverError, FileOutcome};

use crate::driver::CdpBrowser;
use crate::events::FileChooser;

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

/// The size of a regular file (symlinks are not followed), if it is one.
async fn regular_file_size(path: &Path) -> Option<u64> {
    let meta = tokio::fs::symlink_metadata(path).await.ok()?;
    meta.file_type().is_file().then_some(meta.len())
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
        match regular_file_size(&approved.path).await {
            Some(size) if size <= approved.max_bytes => {}
            _ => return refused(),
        }
        if cancel.is_cancelled() {
            return outcome(
                FileStatus::Interrupted,
                FileEffect::None,
                FileCleanup::Completed,
            );
        }
        let result = self
            .shared
            .conn
            .call_with(
                Some(&chooser.session),
                "DOM.setFileInputFiles",
                json!({"files": [approved.path], "backendNodeId": chooser.backend_node_id}),
                self.config.call_timeout,
                Some(cancel),
            )
            .await;
        match result {
            Ok(_) => {
                if let Some(t) = self.shared.lock().tab_mut(&tab) {
                    t.chooser = None;
                }
                outcome(
                    FileStatus::Completed,
                    FileEffect::Completed,
                    FileCleanup::Completed,
                )
            }
            // The call may or may not have reached the page.
            Err(
                crate::connection::CdpError::Cancelled
                | crate::connection::CdpError::Timeout { .. },
            ) => outcome(
                FileStatus::Interrupted,
                FileEffect::Unknown,
                FileCleanup::Completed,
            ),
            Err(e) if e.is_closed() => Err(self.cdp_error(e)),
            // The input is gone (the page changed): nothing was set.
            Err(_) => outcome(
                FileStatus::Interrupted,
                FileEffect::None,
                FileCleanup::Completed,
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
        let (Some(grants), Some(dir)) = (self.config.grants.clone(), self.download_dir.clone())
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
        let source = dir.host.join(&guid);
        let Some(size) = regular_file_size(&source).await else {
            return refused();
        };
        if size > approved.max_bytes
            || tokio::fs::symlink_metadata(&approved.destination)
                .await
                .is_ok()
        {
            return refused();
        }
        if let Some(d) = self
            .shared
            .lock()
            .downloads
            .iter_mut()
            .find(|d| d.guid == guid)
        {
            d.delivered = true;
        }
        let moved = match tokio::fs::rename(&source, &approved.destination).await {
            Ok(()) => Ok(()),
            // Another file system: copy, then remove the staged file.
            Err(_) => match tokio::fs::copy(&source, &approved.destination).await {
                Ok(_) => Ok(()),
                Err(e) => Err(e),
            },
        };
        match moved {
            Ok(()) => {
                let cleanup = match tokio::fs::remove_file(&source).await {
                    Ok(()) => FileCleanup::Completed,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => FileCleanup::Completed,
                    Err(_) => FileCleanup::Pending,
                };
                outcome(FileStatus::Completed, FileEffect::Completed, cleanup)
            }
            Err(_) => {
                let _ = tokio::fs::remove_file(&approved.destination).await;
                outcome(
                    FileStatus::Interrupted,
                    FileEffect::None,
                    FileCleanup::Completed,
                )
            }
        }
    }
}
