//! Saved sign-ins (issue 22): `hands run --browser … --state NAME`, `hands mcp --state NAME` and
//! `hands state list|delete`, on [`hands_cdp::saved_state`] (the same code the Python package
//! keeps its states with). Only counts are printed; the values never reach the model, the log
//! or the ledger.

use anyhow::Context as _;
use hands_cdp::CdpBrowser;
use hands_cdp::saved_state::{self, LoadReport, StateName, StateStore};

use crate::cli::{StateArgs, StateCommand};

/// `hands state`.
pub fn run(args: StateArgs) -> anyhow::Result<()> {
    let store = StateStore::from_env()?;
    match args.command {
        StateCommand::List => {
            let states = store.list()?;
            if states.is_empty() {
                eprintln!("no saved states in {}", store.dir().display());
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

/// A run's saved sign-in ([`saved_state::RunState`]) with the messages of the command that keeps
/// it (`hands run`, `hands mcp`) on stderr.
#[derive(Debug)]
pub struct RunState {
    command: &'static str,
    inner: saved_state::RunState,
}

impl RunState {
    /// Reads the key and, if the state exists, opens it; a wildcard origin is said on stderr.
    pub fn open(command: &'static str, name: &str, origins: &[String]) -> anyhow::Result<Self> {
        let inner = saved_state::RunState::open(name, origins)?;
        for origin in inner.skipped() {
            eprintln!("{command}: --state keeps nothing for the wildcard origin {origin}");
        }
        Ok(Self { command, inner })
    }

    /// Puts the saved state into a browser that has navigated nowhere yet.
    pub async fn load(&mut self, browser: &CdpBrowser) -> anyhow::Result<()> {
        let (command, name) = (self.command, self.inner.name().to_owned());
        match self.inner.load(browser).await? {
            LoadReport::New => {
                eprintln!("{command}: state {name} is new: it is saved when {command} ends");
            }
            LoadReport::Loaded(loaded) => eprintln!(
                "{command}: state {name}: {} cookies, localStorage of {} origins, {} IndexedDB databases loaded ({} outside the allowed origins left out)",
                loaded.cookies, loaded.origins, loaded.databases, loaded.refused
            ),
        }
        Ok(())
    }

    /// Saves the browser's state of the allowed origins, sealed.
    pub async fn save(&self) -> anyhow::Result<()> {
        let saved = self
            .inner
            .save()
            .await
            .with_context(|| format!("saving state {}", self.inner.name()))?;
        if let Some(saved) = saved {
            eprintln!(
                "{}: state {} saved: {} cookies, localStorage of {} origins, {} IndexedDB databases",
                self.command,
                self.inner.name(),
                saved.cookies,
                saved.origins,
                saved.databases
            );
        }
        Ok(())
    }
}
