//! The contract every place a program can run implements: [`Launcher`] starts a [`ProcessSpec`]
//! and hands back a [`Process`] to signal and wait on, with the pipes it asked for.
//!
//! Drivers (Xvfb and X clients, Chromium, the bash shell) take a `&dyn Launcher` and never build
//! a `std::process::Command` themselves, so one switch — the host or the episode's jail — moves
//! every program of an episode at once.
//!
//! Spec: claude-computer-use-tool, precautions 1 ("una máquina virtual o contenedor dedicado con
//! privilegios mínimos").

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

pub use rustix::process::Signal;

/// What one of the child's standard streams is connected to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChildIo {
    /// `/dev/null`.
    #[default]
    Null,
    /// A pipe whose other end is handed back in [`Spawned`].
    Pipe,
}

/// One program to start: everything it gets is named here, nothing is inherited from the caller
/// (no environment variable, no file descriptor but the ones listed).
#[derive(Debug, Default)]
pub struct ProcessSpec {
    /// The program: an absolute path, or a name looked up on `PATH` as given in `env` (inside the
    /// environment it runs in).
    pub program: PathBuf,
    /// The arguments after the program name.
    pub args: Vec<OsString>,
    /// The whole environment of the child.
    pub env: Vec<(OsString, OsString)>,
    /// The working directory (inside the environment); `/` when `None`.
    pub cwd: Option<PathBuf>,
    /// Standard input.
    pub stdin: ChildIo,
    /// Standard output.
    pub stdout: ChildIo,
    /// Standard error.
    pub stderr: ChildIo,
    /// Descriptors the child gets as 3, 4, … in this order (Chromium's
    /// `--remote-debugging-pipe` takes 3 and 4).
    pub extra_fds: Vec<OwnedFd>,
}

impl ProcessSpec {
    /// A spec for `program` with no arguments, an empty environment and every stream on
    /// `/dev/null`.
    pub fn new(program: impl Into<PathBuf>) -> ProcessSpec {
        ProcessSpec {
            program: program.into(),
            ..ProcessSpec::default()
        }
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> ProcessSpec
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one variable (replacing an earlier value of the same name).
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> ProcessSpec {
        let name = name.into();
        self.env.retain(|(n, _)| *n != name);
        self.env.push((name, value.into()));
        self
    }

    /// Sets every variable of `vars`.
    pub fn envs<I, K, V>(mut self, vars: I) -> ProcessSpec
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        for (name, value) in vars {
            self = self.env(name, value);
        }
        self
    }

    /// Sets the working directory.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> ProcessSpec {
        self.cwd = Some(dir.into());
        self
    }

    /// Sets the three standard streams.
    pub fn stdio(mut self, stdin: ChildIo, stdout: ChildIo, stderr: ChildIo) -> ProcessSpec {
        self.stdin = stdin;
        self.stdout = stdout;
        self.stderr = stderr;
        self
    }

    /// Adds a descriptor the child gets as the next number from 3 up.
    pub fn extra_fd(mut self, fd: OwnedFd) -> ProcessSpec {
        self.extra_fds.push(fd);
        self
    }

    /// The program's name for messages.
    pub fn program_name(&self) -> String {
        self.program.display().to_string()
    }
}

/// A started program and the pipe ends it asked for (`None` for a stream on `/dev/null`).
#[derive(Debug)]
pub struct Spawned {
    /// The process.
    pub process: Process,
    /// The write end of its standard input.
    pub stdin: Option<OwnedFd>,
    /// The read end of its standard output.
    pub stdout: Option<OwnedFd>,
    /// The read end of its standard error.
    pub stderr: Option<OwnedFd>,
}

/// What a launcher does for one process it started. Implemented by each launcher; callers use
/// [`Process`].
pub trait ProcessControl: Send + Sync + fmt::Debug {
    /// The process id as the environment it runs in sees it.
    fn id(&self) -> u32;
    /// The process id on the host, when it is known.
    fn host_id(&self) -> Option<u32>;
    /// Sends `signal` to the process's whole group (every program starts in a group of its own).
    fn signal_group(&self, signal: Signal) -> io::Result<()>;
    /// How it ended, if it has (does not block).
    fn try_wait(&self) -> io::Result<Option<ExitStatus>>;
    /// Waits up to `timeout` for it to end.
    fn wait_timeout(&self, timeout: Duration) -> io::Result<Option<ExitStatus>>;
}

/// A program a [`Launcher`] started. Cloning shares it. When the last clone is dropped the
/// process's whole group is killed and reaped, unless [`Process::detach`] was called.
#[derive(Debug, Clone)]
pub struct Process {
    control: Arc<dyn ProcessControl>,
    guard: Arc<KillOnDrop>,
}

#[derive(Debug)]
struct KillOnDrop {
    control: Arc<dyn ProcessControl>,
    armed: std::sync::atomic::AtomicBool,
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if self.armed.load(std::sync::atomic::Ordering::Relaxed)
            && let Ok(None) = self.control.try_wait()
        {
            let _ = self.control.signal_group(Signal::KILL);
            let _ = self.control.wait_timeout(Duration::from_secs(2));
        }
    }
}

impl Process {
    /// Wraps a launcher's control of one process.
    pub fn new(control: Arc<dyn ProcessControl>) -> Process {
        Process {
            guard: Arc::new(KillOnDrop {
                control: control.clone(),
                armed: std::sync::atomic::AtomicBool::new(true),
            }),
            control,
        }
    }

    /// The process id as its environment sees it (in a jail, the jail's pid namespace).
    pub fn id(&self) -> u32 {
        self.control.id()
    }

    /// The process id on the host, when known.
    pub fn host_id(&self) -> Option<u32> {
        self.control.host_id()
    }

    /// Sends `signal` to the process's group.
    pub fn signal_group(&self, signal: Signal) -> io::Result<()> {
        self.control.signal_group(signal)
    }

    /// Kills the process's group and waits (up to 2 s) for the process to be reaped.
    pub fn kill(&self) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.control.try_wait()? {
            return Ok(Some(status));
        }
        match self.control.signal_group(Signal::KILL) {
            Ok(()) => {}
            // Already gone between the check and the signal.
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            Err(e) => return Err(e),
        }
        self.control.wait_timeout(Duration::from_secs(2))
    }

    /// How it ended, if it has.
    pub fn try_wait(&self) -> io::Result<Option<ExitStatus>> {
        self.control.try_wait()
    }

    /// Waits up to `timeout` for it to end.
    pub fn wait_timeout(&self, timeout: Duration) -> io::Result<Option<ExitStatus>> {
        self.control.wait_timeout(timeout)
    }

    /// Leaves the process running when the last clone is dropped.
    pub fn detach(&self) {
        self.guard
            .armed
            .store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A unix socket address as a program inside the environment would name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnixAddress {
    /// A path in the environment's filesystem.
    Path(PathBuf),
    /// A name in the abstract namespace (without the leading NUL), which belongs to the
    /// environment's network namespace.
    Abstract(Vec<u8>),
}

/// A directory seen by this process and by a launcher's programs, at two paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedDir {
    /// Where this process reaches it.
    pub host: PathBuf,
    /// Where the launcher's programs reach it.
    pub inside: PathBuf,
}

/// How isolated the programs a launcher starts are; recorded in a run's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Isolation {
    /// On the host, as the caller (`--sandbox none`).
    Host,
    /// In a jail of its own (namespaces, no capabilities, seccomp, a private filesystem).
    Jail {
        /// The host uid the jail's programs run as.
        host_uid: u32,
        /// The resource limits in force and how they are enforced.
        limits: String,
    },
}

impl fmt::Display for Isolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Isolation::Host => f.write_str("none (host, as the caller)"),
            Isolation::Jail { host_uid, limits } => {
                write!(f, "jail (host uid {host_uid}; limits: {limits})")
            }
        }
    }
}

/// Why a program could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The program was not found or could not be executed.
    #[error("could not start {program}: {source}")]
    Exec {
        /// The program.
        program: String,
        /// The OS error.
        source: io::Error,
    },
    /// The environment (the jail) is gone or does not answer.
    #[error("the episode's environment is gone: {why}")]
    EnvironmentGone {
        /// What happened.
        why: String,
    },
}

impl From<SpawnError> for io::Error {
    fn from(e: SpawnError) -> io::Error {
        match e {
            SpawnError::Exec { source, .. } => source,
            other => io::Error::other(other.to_string()),
        }
    }
}

/// A place programs run: the host ([`crate::HostLauncher`]) or an episode's jail
/// ([`crate::Jail`]).
pub trait Launcher: Send + Sync + fmt::Debug {
    /// Starts `spec` in a process group of its own. The child gets exactly the environment and
    /// descriptors the spec names, and dies when the launcher's owner dies.
    fn spawn(&self, spec: ProcessSpec) -> Result<Spawned, SpawnError>;

    /// Connects to a unix socket as a program inside the environment would (its filesystem, its
    /// abstract namespace) and hands back the connected stream.
    fn connect_unix(&self, address: &UnixAddress) -> io::Result<OwnedFd>;

    /// The host pid of the process the environment calls `pid`, if it is one of its own.
    fn host_pid(&self, pid: u32) -> Option<u32>;

    /// How isolated this launcher's programs are.
    fn isolation(&self) -> Isolation;

    /// A TCP listener on the environment's loopback (`127.0.0.1:port`, `0` for any port), served
    /// by this process: how hands' policy proxy becomes the only way out of a jail's empty
    /// network namespace. On the host, a listener on host loopback.
    fn listen_tcp(&self, port: u16) -> io::Result<std::net::TcpListener>;

    /// A new empty directory private to this launcher, writable by its programs: at `host` for
    /// this process, at `inside` for the programs (the same path on the host). The caller removes
    /// it when done (a jail's are removed with the jail).
    fn private_dir(&self, name: &str) -> io::Result<SharedDir>;

    /// Gives a file or directory this process created inside one of this launcher's
    /// [`Launcher::private_dir`]s (by its `host` path) to the launcher's programs, so they own
    /// it as they own the directory: a jail changes its owner to the jail's host uid when this
    /// process is root (a symlink at `path` is changed itself, never followed). The default does
    /// nothing: on the host the programs run as this process.
    fn adopt(&self, path: &std::path::Path) -> io::Result<()> {
        let _ = path;
        Ok(())
    }
}

/// A name safe as one path component: ASCII letters, digits and `-`; anything else is `_`.
pub(crate) fn safe_component(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Descriptors moved above 100 (close-on-exec), so that placing them at 3, 4, … in a child
/// ([`place_extra_fds`]) cannot overwrite one still to be placed; and their numbers.
pub(crate) fn lift_extra_fds(
    fds: impl IntoIterator<Item = OwnedFd>,
) -> io::Result<(Vec<OwnedFd>, Vec<i32>)> {
    use std::os::fd::AsRawFd as _;
    let high: Vec<OwnedFd> = fds
        .into_iter()
        .map(|fd| rustix::io::fcntl_dupfd_cloexec(&fd, 100).map_err(io::Error::from))
        .collect::<io::Result<_>>()?;
    let raw = high.iter().map(|fd| fd.as_raw_fd()).collect();
    Ok((high, raw))
}

/// In a forked child before `exec`: puts `raw` at 3, 4, … (`dup2` clears close-on-exec).
/// Async-signal-safe: `dup2` on plain integers.
pub(crate) fn place_extra_fds(raw: &[i32]) -> io::Result<()> {
    for (i, fd) in raw.iter().enumerate() {
        // SAFETY: dup2 on plain integers; an invalid one fails with EBADF.
        if unsafe { libc::dup2(*fd, 3 + i as i32) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
