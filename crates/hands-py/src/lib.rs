//! `hands._hands`: hands' X11 desktop and Chromium drivers as a Python extension module (the
//! `hands` package on top of it adds the typed API, the sync wrappers and the SDK adapters).
//!
//! Every driver operation is one Rust future, run either as an asyncio awaitable (the default)
//! or to completion with the GIL released (`blocking=True`, what the sync wrappers use). Both
//! honour cancellation: a cancelled asyncio task drops the future, and a `cancelled` callable
//! (the SDKs' cooperative cancellation) is polled while the operation runs; either way the
//! operation's [`hands_core::CancellationToken`] is cancelled, so a long `type` or a settle stops
//! between characters or events. Errors become the exception classes of `hands.errors`
//! ([`errors`]).
//!
//! Layout: [`run`] (awaitable or blocking, cancellation, results), [`desktop`] (the X11
//! desktop with both computer-tool surfaces), [`browser`] (Chromium over CDP, the allow-list and
//! file grants), [`sandbox`] (the jails both run in, and their proxy), `testing` (feature
//! `testing`: the model-API stand-in and the booking app).

mod browser;
mod desktop;
mod errors;
mod run;
mod sandbox;
#[cfg(feature = "testing")]
mod testing;

use pyo3::prelude::*;

/// The module: the runtime every operation runs on, and the classes.
#[pymodule]
fn _hands(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // Two workers: the drivers do little work on the runtime (X11 has its own thread, Chromium
    // its own processes); more threads would only compete with them on small machines.
    builder.worker_threads(2).enable_all();
    pyo3_async_runtimes::tokio::init(builder);
    m.add_class::<run::Image>()?;
    m.add_class::<desktop::Desktop>()?;
    m.add_class::<desktop::Settings>()?;
    m.add_class::<desktop::Client>()?;
    m.add_class::<browser::Browser>()?;
    m.add_class::<browser::Settings>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("HAS_TESTING", cfg!(feature = "testing"))?;
    // The text a model reads for a browser failure whose details it must not see (one constant,
    // hands-toolset's, for hands' own toolsets and the SDK adapters alike).
    m.add("BROWSER_FAILED", hands_toolset::strings::BROWSER_FAILED)?;
    #[cfg(feature = "testing")]
    testing::register(m)?;
    Ok(())
}
