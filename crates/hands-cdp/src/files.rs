//! File grants: the caller's store of single-use, approved files that `upload_file` and `download_file` redeem by id (a grant is never a path or URL the model picks).
//!
//! Spec: openai-browser-desktop-drivers, "Habilitar diagnósticos, scripts y transferencias de
//! archivos": "Los métodos de archivo solo aceptan un grant_id emitido por quien realiza la
//! llamada … Debe volver a verificar la vigencia y la titularidad, aplicar los límites de tamaño
//! y permitir que la autorización se use una sola vez."

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use hands_core::browser::args::GrantId;

/// An approved file to put into the page's pending file chooser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadGrant {
    /// The file (the store vouches it is the approved one; the driver re-checks it is a regular
    /// file within `max_bytes` right before use).
    pub path: PathBuf,
    /// Largest size accepted.
    pub max_bytes: u64,
}

/// An approved destination for the page's latest download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadGrant {
    /// Where the downloaded file goes; it must not exist yet.
    pub destination: PathBuf,
    /// Largest size accepted.
    pub max_bytes: u64,
}

/// The caller's grants. Each `redeem_*` call consumes the grant: a second call with the same id
/// answers `None`.
pub trait FileGrants: Send + Sync + 'static {
    /// Takes an upload grant.
    fn redeem_upload(&self, grant: &GrantId) -> Option<UploadGrant>;
    /// Takes a download grant.
    fn redeem_download(&self, grant: &GrantId) -> Option<DownloadGrant>;
}

/// Grants kept in memory, for tests and single-process tools.
#[derive(Debug, Default)]
pub struct MemoryGrants {
    uploads: Mutex<HashMap<String, UploadGrant>>,
    downloads: Mutex<HashMap<String, DownloadGrant>>,
}

impl MemoryGrants {
    /// An empty store.
    pub fn new() -> MemoryGrants {
        MemoryGrants::default()
    }

    /// Issues an upload grant under `id`.
    pub fn grant_upload(&self, id: &str, grant: UploadGrant) {
        if let Ok(mut map) = self.uploads.lock() {
            map.insert(id.to_owned(), grant);
        }
    }

    /// Issues a download grant under `id`.
    pub fn grant_download(&self, id: &str, grant: DownloadGrant) {
        if let Ok(mut map) = self.downloads.lock() {
            map.insert(id.to_owned(), grant);
        }
    }
}

impl FileGrants for MemoryGrants {
    fn redeem_upload(&self, grant: &GrantId) -> Option<UploadGrant> {
        self.uploads.lock().ok()?.remove(grant.as_str())
    }

    fn redeem_download(&self, grant: &GrantId) -> Option<DownloadGrant> {
        self.downloads.lock().ok()?.remove(grant.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_are_single_use() {
        let store = MemoryGrants::new();
        store.grant_upload(
            "g1",
            UploadGrant {
                path: "/tmp/x".into(),
                max_bytes: 10,
            },
        );
        let id = GrantId::parse("g1").unwrap();
        assert!(store.redeem_upload(&id).is_some());
        assert!(store.redeem_upload(&id).is_none());
        assert!(store.redeem_download(&id).is_none());
    }
}
