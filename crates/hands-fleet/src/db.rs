//! A PostgreSQL connection on a thread of its own, for callers that cannot await.
//!
//! [`hands_runner::ledger::Ledger`] is a synchronous trait, and the runner calls it from inside
//! a tokio runtime. A blocking client that runs its own runtime (the `postgres` crate) panics
//! there ("cannot start a runtime from within a runtime"), and awaiting tokio-postgres on the
//! caller's runtime would need `block_in_place` (multi-thread runtimes only) or could starve
//! the connection task of the very runtime it waits on. So [`DbThread`] owns one tokio-postgres
//! connection on a dedicated thread with a current-thread runtime; each call sends a job over a
//! channel and blocks on its reply. The thread ends when the last handle is dropped.

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc as std_mpsc;

use tokio::sync::mpsc;
use tokio_postgres::Client;

use crate::FleetError;

/// A job run on the connection's thread.
type Job = Box<dyn for<'c> FnOnce(&'c mut Client) -> Pin<Box<dyn Future<Output = ()> + 'c>> + Send>;

/// A handle on a connection that lives on its own thread; clones share it.
#[derive(Clone)]
pub struct DbThread {
    jobs: mpsc::UnboundedSender<Job>,
    /// What the connection is, for messages (never with a password).
    name: String,
}

impl std::fmt::Debug for DbThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbThread")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl DbThread {
    /// Connects to `url` (a `postgres://` URL or a `host=… dbname=…` string) on a new thread,
    /// and creates the schema when missing.
    pub fn connect(url: &str) -> Result<DbThread, FleetError> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|source| FleetError::BadUrl { source })?;
        let name = crate::describe(&config);
        let (jobs, mut rx) = mpsc::unbounded_channel::<Job>();
        let (ready_tx, ready_rx) = std_mpsc::sync_channel::<Result<(), FleetError>>(1);
        let thread_name = name.clone();
        std::thread::Builder::new()
            .name("hands-fleet-db".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(FleetError::Thread(e.to_string())));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let mut client = match crate::connect_on_current(&config, &thread_name).await {
                        Ok(client) => client,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(()));
                    while let Some(job) = rx.recv().await {
                        job(&mut client).await;
                    }
                });
            })
            .map_err(|e| FleetError::Thread(e.to_string()))?;
        ready_rx
            .recv()
            .map_err(|_| FleetError::Thread("the database thread ended at start".into()))??;
        Ok(DbThread { jobs, name })
    }

    /// What it is connected to.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `work` with the connection on its thread and waits for its result. Must not be
    /// called from the connection's own thread (it is not: that thread runs only jobs).
    pub fn call<T, F>(&self, work: F) -> Result<T, FleetError>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut Client) -> Pin<Box<dyn Future<Output = T> + 'c>> + Send + 'static,
    {
        let (reply_tx, reply_rx) = std_mpsc::sync_channel::<T>(1);
        let job: Job = Box::new(move |client| {
            Box::pin(async move {
                let result = work(client).await;
                let _ = reply_tx.send(result);
            })
        });
        self.jobs
            .send(job)
            .map_err(|_| FleetError::Thread("the database thread has ended".into()))?;
        reply_rx
            .recv()
            .map_err(|_| FleetError::Thread("the database thread ended during a call".into()))
    }
}
