//! A PostgreSQL connection for callers that cannot await, driven on the caller's own thread.
//!
//! [`hands_runner::ledger::Ledger`] is a synchronous trait, and the runner calls it from inside
//! a tokio runtime. A blocking client that runs its own runtime (the `postgres` crate) panics
//! there ("cannot start a runtime from within a runtime"), and awaiting tokio-postgres on the
//! caller's runtime could starve the connection task of the very runtime it waits on. So
//! [`SyncDb`] owns one tokio-postgres connection on a current-thread runtime of its own, and a
//! call drives that runtime on the calling thread: the query and the connection's I/O are
//! polled right there, so a save wakes nothing but the database server (a thread of its own
//! for the connection cost two more wake-ups per save, which on a loaded machine were most of
//! a save's time). On a multi-thread runtime's worker the call runs inside
//! [`tokio::task::block_in_place`]: the worker's other tasks move to another thread while it
//! waits. Where neither can be done (a current-thread runtime's own thread), the call runs on a
//! short-lived scoped thread.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use tokio::runtime::{Handle, Runtime, RuntimeFlavor};
use tokio_postgres::Client;

use crate::FleetError;

/// The connection and the runtime its I/O runs on.
struct Inner {
    runtime: Option<Runtime>,
    client: Client,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Dropped possibly inside another runtime, where a blocking shutdown would panic.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A handle on a connection called synchronously; clones share it (calls take turns).
#[derive(Clone)]
pub struct SyncDb {
    inner: Arc<Mutex<Inner>>,
    /// What the connection is, for messages (never with a password).
    name: String,
}

impl std::fmt::Debug for SyncDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncDb")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Runs `work`, which blocks, where blocking is allowed (see the module's documentation).
fn blocking<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Err(_) => work(),
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        Ok(_) => std::thread::scope(|scope| match scope.spawn(work).join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        }),
    }
}

impl SyncDb {
    /// Connects to `url` (a `postgres://` URL or a `host=… dbname=…` string), and creates the
    /// schema when missing.
    pub fn connect(url: &str) -> Result<SyncDb, FleetError> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|source| FleetError::BadUrl { source })?;
        let name = crate::describe(&config);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| FleetError::Thread(e.to_string()))?;
        let client = blocking(|| runtime.block_on(crate::connect_on_current(&config, &name)))?;
        Ok(SyncDb {
            inner: Arc::new(Mutex::new(Inner {
                runtime: Some(runtime),
                client,
            })),
            name,
        })
    }

    /// What it is connected to.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the connection has closed (the server went away, or a partition outlasted its
    /// TCP timeout): every later call fails.
    pub fn is_closed(&self) -> bool {
        self.inner
            .lock()
            .map_or(true, |inner| inner.client.is_closed())
    }

    /// Runs `work` with the connection and waits for its result.
    pub fn call<T, F>(&self, work: F) -> Result<T, FleetError>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut Client) -> Pin<Box<dyn Future<Output = T> + 'c>> + Send + 'static,
    {
        let mut inner = self
            .inner
            .lock()
            .map_err(|_| FleetError::Thread("a call on this connection panicked".into()))?;
        let Inner { runtime, client } = &mut *inner;
        let runtime = runtime
            .as_ref()
            .ok_or_else(|| FleetError::Thread("the connection's runtime has ended".into()))?;
        Ok(blocking(|| runtime.block_on(work(client))))
    }
}
