//! The janitor: removes what a hands that died left behind — episode directories whose owner
//! process is gone, the processes still in their cgroups, and the cgroups.
//!
//! A jail's programs die with hands anyway (bwrap's parent-death signal, then the pid
//! namespace); this is for the files and cgroups a `kill -9` leaves. Run once per process
//! before its first jail, and by `hands jail sweep`.
//!
//! Issue 17 item 5 ("a janitor removes what a dead hands left").

use std::fs;
use std::path::PathBuf;
use std::sync::Once;

use crate::layout;

/// What one sweep removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Swept {
    /// Episode directories removed.
    pub episodes: Vec<PathBuf>,
}

/// Sweeps once per process.
pub fn sweep_once() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let swept = sweep();
        if !swept.episodes.is_empty() {
            tracing::info!(
                "removed {} episode(s) left by a hands that died",
                swept.episodes.len()
            );
        }
    });
}

/// Removes every episode whose owner process is gone.
pub fn sweep() -> Swept {
    let mut swept = Swept::default();
    let Ok(entries) = fs::read_dir(layout::base_dir()) else {
        return swept;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        if !entry.file_name().to_string_lossy().starts_with("ep-") {
            continue;
        }
        let owner = fs::read_to_string(dir.join("owner")).unwrap_or_default();
        if layout::owner_alive(&owner) {
            continue;
        }
        // An episode being made right now has no mark yet: only one without a mark for a
        // minute is an orphan.
        let young = || {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_none_or(|age| age < std::time::Duration::from_secs(60))
        };
        if owner.trim().is_empty() && young() {
            continue;
        }
        let cgroups: Vec<PathBuf> = fs::read_to_string(dir.join("cgroups"))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(PathBuf::from)
            .collect();
        crate::limits::remove_dirs(&cgroups);
        for own in ["home", "scratch", "workspace"] {
            layout::unmount(&dir.join(own));
        }
        if fs::remove_dir_all(&dir).is_ok() {
            swept.episodes.push(dir);
        }
    }
    swept
}
