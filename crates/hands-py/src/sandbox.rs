//! Where the programs of a spawned desktop or a launched browser run: in a jail of their own
//! (`sandbox="jail"`, the default: bubblewrap with every namespace unshared, no capabilities,
//! seccomp, an empty network namespace whose only way out is a policy proxy serving the
//! caller's allow-list, a private filesystem, its own uid and limits) or on the host as the
//! caller (`sandbox="none"`, only when asked).
//!
//! The jail's init is the program `hands-jail-init`, which the package ships beside its Python
//! files (crates/hands-py/build.rs puts it there); `$HANDS_JAIL_INIT` overrides it, and without
//! either it is looked for on `PATH`.
//!
//! Spec: claude-computer-use-tool, precautions 1 and 3; issue 17 items 1 and 2.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hands_cdp::policy::SharedPolicy;
use hands_cdp::proxy::PolicyProxy;
use hands_cdp::{RequestInfo, Verdict};
use hands_jail::{InitProgram, Jail, JailConfig, JailError, JailKind, Launcher, Workspace};
use hands_toolset::browser::url_policy::OriginAllowList;

use crate::browser::AllowListPolicy;
use crate::errors::Error;

/// Why a desktop with no `allow` list reaches nothing.
pub const NO_ORIGIN_REASON: &str =
    "this desktop may reach no origin (pass allow=[...] to Desktop.spawn to open one)";

/// What the caller may do when no jail can be made, in the Python API's words.
const UNJAILED_HINT: &str =
    "from Python: pass sandbox=\"none\" to run unjailed on purpose, on the host as the caller";

/// `sandbox=`: where the programs run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// In a jail of their own.
    Jail,
    /// On the host, as the caller.
    None,
}

impl Mode {
    /// Parses `"jail"` or `"none"`.
    pub fn parse(text: &str) -> Result<Mode, Error> {
        match text {
            "jail" => Ok(Mode::Jail),
            "none" => Ok(Mode::None),
            other => Err(Error::Argument(format!(
                "sandbox must be \"jail\" or \"none\", not {other:?}"
            ))),
        }
    }
}

/// The init program: `$HANDS_JAIL_INIT` when set, else the package's copy (`package_init`,
/// passed from Python) when it exists, else `hands-jail-init` on `PATH`.
pub fn init_program(package_init: Option<&Path>) -> InitProgram {
    if std::env::var_os("HANDS_JAIL_INIT").is_some() {
        return InitProgram::Find;
    }
    match package_init {
        Some(path) if path.is_file() => InitProgram::Path(path.to_owned()),
        _ => InitProgram::Find,
    }
}

/// A jail error as the Python exception `SandboxUnavailable`: the jail's own text (what to
/// do), and how to run unjailed from Python.
pub fn unavailable(e: JailError) -> Error {
    Error::SandboxUnavailable(format!("{e} ({UNJAILED_HINT})"))
}

/// The policy of a desktop jail's proxy: the allowed origins, or nothing at all.
pub fn desktop_policy(allow: Option<Vec<String>>) -> Result<SharedPolicy, Error> {
    match allow {
        Some(list) if !list.is_empty() => {
            let list =
                OriginAllowList::new(list).map_err(|e| Error::Argument(format!("allow: {e}")))?;
            Ok(Arc::new(AllowListPolicy(list)))
        }
        _ => Ok(Arc::new(|_: &RequestInfo<'_>| Verdict::Deny {
            reason: NO_ORIGIN_REASON.to_owned(),
        })),
    }
}

/// How a jail is made.
#[derive(Debug, Clone)]
pub struct JailSpec {
    /// Its kind.
    pub kind: JailKind,
    /// The init program.
    pub init: InitProgram,
    /// Its `/workspace` (a desktop's).
    pub workspace: Workspace,
}

impl JailSpec {
    fn config(&self) -> JailConfig {
        let mut config = JailConfig::new(self.kind);
        config.init = self.init.clone();
        config.workspace = self.workspace.clone();
        config
    }
}

/// Makes a jail (blocking: it waits for the jail's init).
pub fn start(spec: &JailSpec) -> Result<Jail, Error> {
    Jail::start(&spec.config()).map_err(unavailable)
}

/// A desktop's jail and the policy proxy that is its only way out (stops when dropped).
pub struct Jailed {
    /// The jail.
    pub jail: Jail,
    /// The proxy serving the jail's `127.0.0.1:3128`.
    _proxy: PolicyProxy,
}

impl Jailed {
    /// Makes the jail and serves its proxy port with `policy` on the module's runtime.
    pub fn start(spec: &JailSpec, policy: SharedPolicy) -> Result<Jailed, Error> {
        let jail = start(spec)?;
        let listener = jail.listen_tcp(hands_jail::PROXY_PORT).map_err(|e| {
            Error::SandboxUnavailable(format!("placing the policy proxy in the jail: {e}"))
        })?;
        let _runtime = pyo3_async_runtimes::tokio::get_runtime().enter();
        let proxy = PolicyProxy::serve_listener(listener, policy).map_err(|e| {
            Error::SandboxUnavailable(format!("serving the jail's policy proxy: {e}"))
        })?;
        Ok(Jailed {
            jail,
            _proxy: proxy,
        })
    }

    /// The jail as a launcher.
    pub fn launcher(&self) -> Arc<dyn Launcher> {
        Arc::new(self.jail.clone())
    }
}

/// How isolated the programs of a jail are, in words.
pub fn describe(jail: &Jail, network: &str) -> String {
    format!(
        "jail: bubblewrap, all namespaces, no capabilities, seccomp, {network}; host uid {}; limits: {}",
        jail.host_uid(),
        jail.limits_in_force()
    )
}

/// How a workspace directory is given to a desktop jail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkspacePlacement {
    /// A copy of it (removed with the jail).
    Copy,
    /// The directory itself, bound in place (`bind_workspace=True`).
    Bind,
}

impl WorkspacePlacement {
    /// The Python side's `bind_workspace` argument.
    pub fn from_bind(bind: bool) -> WorkspacePlacement {
        if bind {
            WorkspacePlacement::Bind
        } else {
            WorkspacePlacement::Copy
        }
    }
}

/// The workspace of a desktop jail: none, a copy of `dir`, or `dir` itself.
pub fn workspace(dir: Option<PathBuf>, placement: WorkspacePlacement) -> Workspace {
    match (dir, placement) {
        (None, _) => Workspace::Empty,
        (Some(dir), WorkspacePlacement::Bind) => Workspace::Bind(dir),
        (Some(dir), WorkspacePlacement::Copy) => Workspace::Copy(dir),
    }
}
