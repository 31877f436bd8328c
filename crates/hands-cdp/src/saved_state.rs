//! A named saved sign-in kept between runs (issue 22, `--state NAME`): where the files live
//! ([`StateStore`]), what a name may be ([`StateName`]), and one run's use of a state
//! ([`RunState`]: opened before the browser starts, loaded before its first page, saved at the
//! end). The `hands` binary (`hands run`, `hands mcp`, `hands state`) and the Python package
//! both keep their states through this module, so a state saved by one is loaded by the other.
//!
//! Counts only leave this module ([`LoadReport`], [`SavedCounts`]): the values go from the
//! browser to the sealed file and back.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use hands_core::browser::DriverError;

use crate::CdpBrowser;
use crate::state_file::{self, KdfParams, StateFileError, StateKey, StorageState};
use crate::storage_state::{LoadedState, StateOrigins, StateSaver};

/// The variable that overrides where state files live.
pub const STATE_DIR_ENV: &str = "HANDS_STATE_DIR";
/// The ending of a state file's name.
const STATE_EXT: &str = "state";

/// What went wrong keeping a state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// A name outside the allowed characters.
    #[error(
        "bad state name {0:?}: use 1 to 64 letters, digits, '.', '_' or '-', not starting with '.'"
    )]
    BadName(String),
    /// No directory to keep states in.
    #[error("set {STATE_DIR_ENV} or HOME to keep states")]
    NoDirectory,
    /// No file of that name.
    #[error("no state named {name:?} in {} (see `hands state list`)", dir.display())]
    NotFound {
        /// The name asked for.
        name: String,
        /// The directory searched.
        dir: PathBuf,
    },
    /// A file could not be read or written.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done (`reading`, `writing`…).
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The key, or the sealed file.
    #[error("opening state {name} ({}): {source}", path.display())]
    File {
        /// The state's name.
        name: String,
        /// Its file.
        path: PathBuf,
        /// What was wrong.
        source: StateFileError,
    },
    /// No usable key.
    #[error(transparent)]
    Key(StateFileError),
    /// The state could not be sealed.
    #[error("sealing the state: {0}")]
    Seal(StateFileError),
    /// An allowed origin that cannot keep a state.
    #[error("origin {origin}: {reason}")]
    Origin {
        /// The origin as given.
        origin: String,
        /// Why.
        reason: String,
    },
    /// The browser failed while the state was read or put back.
    #[error("{what}: {source}")]
    Browser {
        /// What was being done.
        what: &'static str,
        /// The driver's error.
        source: DriverError,
    },
}

/// A state's name: 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with a dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateName(String);

impl StateName {
    /// Checks a name.
    pub fn parse(name: &str) -> Result<Self, StateError> {
        let ok = (1..=64).contains(&name.len())
            && !name.starts_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if !ok {
            return Err(StateError::BadName(name.to_owned()));
        }
        Ok(Self(name.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The directory of state files: `$HANDS_STATE_DIR`, else `$XDG_DATA_HOME/hands/state`, else
/// `~/.local/share/hands/state`.
#[derive(Debug, Clone)]
pub struct StateStore {
    dir: PathBuf,
}

impl StateStore {
    /// From the environment.
    pub fn from_env() -> Result<Self, StateError> {
        let var = |v: &str| {
            std::env::var_os(v)
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
        };
        let dir = match (var(STATE_DIR_ENV), var("XDG_DATA_HOME"), var("HOME")) {
            (Some(dir), _, _) => dir,
            (None, Some(data), _) => data.join("hands/state"),
            (None, None, Some(home)) => home.join(".local/share/hands/state"),
            (None, None, None) => return Err(StateError::NoDirectory),
        };
        Ok(Self { dir })
    }

    /// In a given directory.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of a state.
    pub fn path(&self, name: &StateName) -> PathBuf {
        self.dir.join(format!("{}.{STATE_EXT}", name.0))
    }

    /// The saved states: name and size in bytes, by name.
    pub fn list(&self) -> Result<Vec<(String, u64)>, StateError> {
        let io = |source| StateError::Io {
            what: "reading",
            path: self.dir.clone(),
            source,
        };
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(e)),
        };
        let mut states = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io)?;
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some(STATE_EXT) {
                continue;
            }
            if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                states.push((stem.to_owned(), entry.metadata().map_err(io)?.len()));
            }
        }
        states.sort();
        Ok(states)
    }

    /// Deletes a state; a name with no file is an error.
    pub fn delete(&self, name: &StateName) -> Result<(), StateError> {
        std::fs::remove_file(self.path(name)).map_err(|_| StateError::NotFound {
            name: name.0.clone(),
            dir: self.dir.clone(),
        })
    }
}

/// What [`RunState::load`] did (counts only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadReport {
    /// No file yet: it is written when the run ends.
    New,
    /// The file's state of the allowed origins was put into the browser.
    Loaded(LoadedState),
}

/// What [`RunState::save`] wrote (counts only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SavedCounts {
    /// Cookies.
    pub cookies: usize,
    /// Origins with localStorage.
    pub origins: usize,
    /// IndexedDB databases.
    pub databases: usize,
}

impl SavedCounts {
    /// The counts of a state.
    pub fn of(state: &StorageState) -> Self {
        Self {
            cookies: state.cookies.len(),
            origins: state.origins.len(),
            databases: state.indexed_db.iter().map(|o| o.databases.len()).sum(),
        }
    }
}

/// A run's saved sign-in: opened before the browser starts (so a wrong key stops the run before
/// anything happens), loaded into the browser before its first navigation, saved at the end.
pub struct RunState {
    name: StateName,
    path: PathBuf,
    key: StateKey,
    origins: StateOrigins,
    skipped: Vec<String>,
    carried: Option<StorageState>,
    saver: Option<StateSaver>,
}

impl std::fmt::Debug for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunState")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl RunState {
    /// Reads the key from [`state_file::STATE_KEY_ENV`] and opens the state in the store of the
    /// environment ([`RunState::open_with`]).
    pub fn open(name: &str, origins: &[String]) -> Result<Self, StateError> {
        let key = StateKey::from_env().map_err(StateError::Key)?;
        Self::open_with(&StateStore::from_env()?, name, origins, key)
    }

    /// Opens a state, if its file exists, with `key`. `origins` are the run's allow-list
    /// entries: a wildcard entry cannot keep a state and is left out ([`RunState::skipped`]).
    pub fn open_with(
        store: &StateStore,
        name: &str,
        origins: &[String],
        key: StateKey,
    ) -> Result<Self, StateError> {
        let name = StateName::parse(name)?;
        let mut urls = Vec::new();
        let mut skipped = Vec::new();
        for origin in origins {
            if origin.contains('*') {
                skipped.push(origin.clone());
                continue;
            }
            urls.push(url::Url::parse(origin).map_err(|e| StateError::Origin {
                origin: origin.clone(),
                reason: e.to_string(),
            })?);
        }
        let origins = StateOrigins::new(&urls).map_err(|reason| StateError::Origin {
            origin: urls
                .iter()
                .map(url::Url::as_str)
                .collect::<Vec<_>>()
                .join(" "),
            reason,
        })?;
        let path = store.path(&name);
        let carried = match std::fs::read(&path) {
            Ok(bytes) => {
                Some(
                    state_file::open(&bytes, &key).map_err(|source| StateError::File {
                        name: name.0.clone(),
                        path: path.clone(),
                        source,
                    })?,
                )
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(StateError::Io {
                    what: "reading",
                    path,
                    source,
                });
            }
        };
        Ok(Self {
            name,
            path,
            key,
            origins,
            skipped,
            carried,
            saver: None,
        })
    }

    /// The state's name.
    pub fn name(&self) -> &str {
        self.name.as_str()
    }

    /// The allow-list entries that keep nothing (wildcards).
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// Puts the saved state into a browser that has navigated nowhere yet, and keeps a handle
    /// to save it at the end.
    pub async fn load(&mut self, browser: &CdpBrowser) -> Result<LoadReport, StateError> {
        self.saver = Some(browser.state_saver());
        let Some(state) = &self.carried else {
            return Ok(LoadReport::New);
        };
        let loaded = browser
            .load_storage_state(state, &self.origins, None)
            .await
            .map_err(|source| StateError::Browser {
                what: "loading the saved state into the browser",
                source,
            })?;
        Ok(LoadReport::Loaded(loaded))
    }

    /// Saves the browser's state of the allowed origins, sealed, replacing the file at once.
    /// `None` when no browser was loaded (the file stays as it was).
    pub async fn save(&self) -> Result<Option<SavedCounts>, StateError> {
        let Some(saver) = &self.saver else {
            return Ok(None);
        };
        let state = saver
            .save(&self.origins, self.carried.as_ref())
            .await
            .map_err(|source| StateError::Browser {
                what: "reading the browser's state",
                source,
            })?;
        let sealed =
            state_file::seal(&state, &self.key, KdfParams::default()).map_err(StateError::Seal)?;
        write_private(&self.path, &sealed)?;
        Ok(Some(SavedCounts::of(&state)))
    }
}

/// Writes a file only its owner can read, through a temporary file renamed over it.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), StateError> {
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    let io = |what, path: &Path| {
        let path = path.to_owned();
        move |source| StateError::Io { what, path, source }
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io("creating", dir))?;
    let tmp = path.with_extension("state.tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io("writing", &tmp))?;
    file.write_all(bytes).map_err(io("writing", &tmp))?;
    file.sync_all().map_err(io("writing", &tmp))?;
    std::fs::rename(&tmp, path).map_err(io("replacing", path))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_names_are_checked() {
        for good in ["shop", "my-site_2.work"] {
            assert!(StateName::parse(good).is_ok(), "{good}");
        }
        for bad in ["", ".hidden", "../x", "a/b", "with space", &"x".repeat(65)] {
            assert!(
                matches!(StateName::parse(bad), Err(StateError::BadName(_))),
                "{bad}"
            );
        }
    }
}
