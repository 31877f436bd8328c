//! Where the programs of an episode run.
//!
//! Every program hands starts for a model — Xvfb, the window manager, the apps the model opens,
//! the bash shell, Chromium — is started through a [`Launcher`]: the [`HostLauncher`] (as the
//! caller, `--sandbox none`) or an episode's jail (bubblewrap with every namespace unshared, no
//! capabilities, a seccomp filter, an empty network namespace whose only way out is hands'
//! policy proxy, a private filesystem, and limits).
//!
//! This crate is not a model-facing surface and knows nothing of X11, CDP or any API's JSON.
//!
//! ```
//! use hands_jail::{ChildIo, HostLauncher, Launcher as _, ProcessSpec};
//! let spawned = HostLauncher
//!     .spawn(ProcessSpec::new("/bin/true").stdio(ChildIo::Null, ChildIo::Null, ChildIo::Null))
//!     .unwrap();
//! let status = spawned.process.wait_timeout(std::time::Duration::from_secs(5)).unwrap();
//! assert!(status.unwrap().success());
//! ```

pub mod beneath;
mod host;
pub mod init;
mod jail;
pub mod janitor;
pub mod layout;
pub mod limits;
pub mod proto;
pub mod seccomp;
mod spawn;
mod uid;

pub use host::HostLauncher;
pub use jail::{InitProgram, Jail, JailConfig, JailError, JailKind, PROXY_PORT, Workspace};
pub use limits::Limits;
pub use spawn::{
    ChildIo, Isolation, Launcher, Process, ProcessControl, ProcessSpec, SharedDir, Signal,
    SpawnError, Spawned, UnixAddress,
};
