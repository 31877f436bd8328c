//! Saved sign-ins (issue 22): `hands run --browser … --state NAME` and `hands state
//! list|delete`. The files live in [`StateStore`]'s directory, sealed with the passphrase in
//! `HANDS_STATE_KEY` ([`hands_cdp::state_file`]); what they hold is read from and put into the
//! browser by [`hands_cdp::storage_state`]. Only counts are printed; the values never reach the
//! model, the log or the ledger.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use hands_cdp::CdpBrowser;
use hands_cdp::state_file::{self, KdfParams, StateKey, StorageState};
use hands_cdp::storage_state::{StateOrigins, StateSaver};

use crate::cli::{StateArgs, StateCommand};

/// The variable that overrides where state files live.
pub const STATE_DIR_ENV: &str = "HANDS_STATE_DIR";
/// The ending of a state file's name.
const STATE_EXT: &str = "state";

/// A state's name: 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with a dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateName(String);

impl StateName {
    /// Checks a name.
    pub fn parse(name: &str) -> anyhow::Result<Self> {
        let ok = (1..=64).contains(&name.len())
            && !name.starts_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        anyhow::ensure!(
            ok,
            "bad state name {name:?}: use 1 to 64 letters, digits, '.', '_' or '-', not starting with '.'"
        );
        Ok(Self(name.to_owned()))
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
    pub fn from_env() -> anyhow::Result<Self> {
        let var = |v: &str| {
            std::env::var_os(v)
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
        };
        let dir = match (var(STATE_DIR_ENV), var("XDG_DATA_HOME"), var("HOME")) {
            (Some(dir), _, _) => dir,
            (None, Some(data), _) => data.join("hands/state"),
            (None, None, Some(home)) => home.join(".local/share/hands/state"),
            (None, None, None) => anyhow::bail!("set {STATE_DIR_ENV} or HOME to keep states"),
        };
        Ok(Self { dir })
    }

    fn path(&self, name: &StateName) -> PathBuf {
        self.dir.join(format!("{}.{STATE_EXT}", name.0))
    }

    /// The saved states: name and size in bytes, by name.
    pub fn list(&self) -> anyhow::Result<Vec<(String, u64)>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", self.dir.display())),
        };
        let mut states = Vec::new();
        for entry in entries {
            let entry = entry?;
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some(STATE_EXT) {
                continue;
            }
            if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                states.push((stem.to_owned(), entry.metadata()?.len()));
            }
        }
        states.sort();
        Ok(states)
    }

    /// Deletes a state; a name with no file is an error.
    pub fn delete(&self, name: &StateName) -> anyhow::Result<()> {
        let path = self.path(name);
        std::fs::remove_file(&path).with_context(|| {
            format!(
                "no state named {:?} in {} (see `hands state list`)",
                name.0,
                self.dir.display()
            )
        })
    }
}

/// `hands state`.
pub fn run(args: StateArgs) -> anyhow::Result<()> {
    let store = StateStore::from_env()?;
    match args.command {
        StateCommand::List => {
            let states = store.list()?;
            if states.is_empty() {
                eprintln!("no saved states in {}", store.dir.display());
            }
            for (name, bytes) in states {
                println!("{name}\t{bytes} bytes");
            }
        }
        StateCommand::Delete { name } => {
            store.delete(&StateName::parse(&name)?)?;
            eprintln!("deleted state {name}");
        }
    }
    Ok(())
}

/// A run's saved sign-in: opened before the browser starts (so a wrong key stops the run before
/// anything happens), loaded into the browser before its first navigation, saved at the end.
pub struct RunState {
    /// The command that keeps it (`hands run`, `hands mcp`), for its messages.
    command: &'static str,
    name: String,
    path: PathBuf,
    key: StateKey,
    origins: StateOrigins,
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
    /// Reads the key and, if the state exists, opens it. `origins` are the run's allow-list
    /// entries: a wildcard entry cannot keep a state and is left out, said on stderr.
    /// `command` names the caller in the messages on stderr (`hands run`, `hands mcp`).
    pub fn open(command: &'static str, name: &str, origins: &[String]) -> anyhow::Result<Self> {
        let name_checked = StateName::parse(name)?;
        let store = StateStore::from_env()?;
        let key = StateKey::from_env()?;
        let mut urls = Vec::new();
        for origin in origins {
            if origin.contains('*') {
                eprintln!("{command}: --state keeps nothing for the wildcard origin {origin}");
                continue;
            }
            urls.push(url::Url::parse(origin).with_context(|| format!("origin {origin}"))?);
        }
        let origins = StateOrigins::new(&urls).map_err(anyhow::Error::msg)?;
        let path = store.path(&name_checked);
        let carried = match std::fs::read(&path) {
            Ok(bytes) => Some(
                state_file::open(&bytes, &key)
                    .with_context(|| format!("opening state {name} ({})", path.display()))?,
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        Ok(Self {
            command,
            name: name.to_owned(),
            path,
            key,
            origins,
            carried,
            saver: None,
        })
    }

    /// Puts the saved state into a browser that has navigated nowhere yet, and keeps a handle
    /// to save it at the end.
    pub async fn load(&mut self, browser: &CdpBrowser) -> anyhow::Result<()> {
        self.saver = Some(browser.state_saver());
        let Some(state) = &self.carried else {
            eprintln!(
                "{}: state {} is new: it is saved when {} ends",
                self.command, self.name, self.command
            );
            return Ok(());
        };
        let loaded = browser
            .load_storage_state(state, &self.origins, None)
            .await
            .context("loading the saved state into the browser")?;
        eprintln!(
            "{}: state {}: {} cookies, localStorage of {} origins loaded ({} outside the allowed origins left out)",
            self.command, self.name, loaded.cookies, loaded.origins, loaded.refused
        );
        Ok(())
    }

    /// Saves the browser's state of the allowed origins, sealed, replacing the file at once.
    pub async fn save(&self) -> anyhow::Result<()> {
        let Some(saver) = &self.saver else {
            return Ok(());
        };
        let state = saver
            .save(&self.origins, self.carried.as_ref())
            .await
            .context("reading the browser's state")?;
        let sealed = state_file::seal(&state, &self.key, KdfParams::default())?;
        write_private(&self.path, &sealed)?;
        eprintln!(
            "{}: state {} saved: {} cookies, localStorage of {} origins",
            self.command,
            self.name,
            state.cookies.len(),
            state.origins.len()
        );
        Ok(())
    }
}

/// Writes a file only its owner can read, through a temporary file renamed over it.
fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    let dir = path.parent().context("a state file has a directory")?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    let tmp = path.with_extension("state.tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .with_context(|| format!("writing {}", tmp.display()))?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))?;
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
            assert!(StateName::parse(bad).is_err(), "{bad}");
        }
    }
}
