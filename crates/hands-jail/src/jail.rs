//! [`Jail`]: one episode's jail — bubblewrap with every namespace unshared, no capabilities, the
//! seccomp filter, an empty network namespace, a private filesystem, the episode's own uid and
//! limits — and its init, through which every program of the episode starts.
//!
//! Why bubblewrap and not raw namespaces from Rust: it is Debian's packaged, audited tool for
//! exactly this (Flatpak's, Codex CLI's and Anthropic's sandbox-runtime's), it sets up the mount
//! namespace, `/proc`, `/dev` and the uid map in the right order with the right flags, and it
//! keeps all of that out of a multi-threaded process (a fork of hands' tokio process may only
//! call async-signal-safe functions before `exec`). What bwrap cannot do — run several programs
//! in one jail on request, pass descriptors both ways — the init does ([`crate::init`]).
//!
//! Spec: claude-computer-use-tool, precautions 1 and 3; issue 17 items 1–6.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, Read as _, Write as _};
use std::os::fd::{AsFd as _, AsRawFd as _, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

use crate::layout::{self, EpisodeDirs, JAIL_HOME, JAIL_INIT, JAIL_SCRATCH, JAIL_WORKSPACE};
use crate::limits::{self, Applied, Limits};
use crate::proto::{self, Reply, Request};
use crate::seccomp::{self, FilterKind};
use crate::spawn::{
    ChildIo, Isolation, Launcher, Process, ProcessControl, ProcessSpec, SharedDir, Signal,
    SpawnError, Spawned, UnixAddress,
};

/// The proxy port inside every jail: hands serves it ([`Launcher::listen_tcp`]) and
/// [`Jail::base_env`] points every proxy variable at it.
pub const PROXY_PORT: u16 = 3128;

/// How long a jail may take to start its init.
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// How long the init may take to answer a request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// What a jail is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JailKind {
    /// The desktop (Xvfb, the window manager, the model's apps), the shell and the editor's
    /// files. No user namespaces inside, no mount calls.
    Desktop,
    /// Chromium alone, in a sibling jail: the shell cannot ptrace it or reopen its descriptors.
    /// User namespaces stay available for Chromium's own sandbox.
    Browser,
}

/// What the episode's `/workspace` is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Workspace {
    /// A new empty directory, removed with the jail.
    #[default]
    Empty,
    /// The operator's directory itself, read and written in place. As root, the episode then
    /// runs as the directory's owner (a root-owned directory is refused).
    Bind(PathBuf),
    /// A copy of the operator's directory (symlinks copied as symlinks), removed with the jail.
    Copy(PathBuf),
}

/// Where the init program comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum InitProgram {
    /// `$HANDS_JAIL_INIT`, else `hands-jail-init` beside the running executable or one
    /// directory up (test binaries live in `target/*/deps`), else on `PATH`.
    #[default]
    Find,
    /// This program.
    Path(PathBuf),
    /// The running executable itself, started with this one argument (the `hands` binary
    /// answers `hands __jail-init` as the init).
    SelfExec(String),
    /// This program, started with these arguments (`hands` with `__jail-init`, from a test or
    /// a benchmark of the binary).
    WithArgs(PathBuf, Vec<String>),
}

/// How to make a jail.
#[derive(Debug, Clone)]
pub struct JailConfig {
    /// What it is for.
    pub kind: JailKind,
    /// Its `/workspace`.
    pub workspace: Workspace,
    /// Its limits.
    pub limits: Limits,
    /// The init program.
    pub init: InitProgram,
    /// The bubblewrap program.
    pub bwrap: PathBuf,
}

impl JailConfig {
    /// Defaults for a jail of `kind`: an empty workspace, default limits, Debian's `bwrap`
    /// (`$HANDS_BWRAP` names another, e.g. to try how hands fails where it is missing).
    pub fn new(kind: JailKind) -> JailConfig {
        JailConfig {
            kind,
            workspace: Workspace::Empty,
            limits: Limits::default(),
            init: InitProgram::Find,
            bwrap: std::env::var_os("HANDS_BWRAP")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/usr/bin/bwrap")),
        }
    }
}

/// Why a jail could not be made. Each says what to do; none is worked around silently (hands
/// then refuses to expose the shell, the desktop or the browser, unless `--sandbox none`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JailError {
    /// bubblewrap is not installed.
    #[error(
        "bubblewrap ({bwrap}) is not installed, so no jail can be made: install it (apt-get install bubblewrap, or scripts/install-system-deps.sh), or run with --sandbox none to run unjailed on purpose"
    )]
    BwrapMissing {
        /// The path looked for.
        bwrap: String,
    },
    /// The init program was not found.
    #[error(
        "the jail's init program was not found ({looked}): build it (cargo build -p hands-jail --bin hands-jail-init) or set HANDS_JAIL_INIT"
    )]
    InitMissing {
        /// Where it was looked for.
        looked: String,
    },
    /// bubblewrap ran but the jail did not come up (user namespaces blocked, a mount refused).
    #[error(
        "the jail did not start: {why}. User namespaces may be blocked on this machine (sysctl user.max_user_namespaces, kernel.apparmor_restrict_unprivileged_userns); fix that, or run with --sandbox none to run unjailed on purpose"
    )]
    Start {
        /// What bwrap or the init said.
        why: String,
    },
    /// Preparing the episode's files, uid or filter failed.
    #[error("preparing the jail failed: {0}")]
    Prepare(String),
}

/// One episode's jail. Programs start in it through [`Launcher`]; dropping the jail (and every
/// [`Process`] it started) kills everything in it and removes its files.
#[derive(Debug, Clone)]
pub struct Jail {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct ExitBook {
    /// Wait statuses of ended programs, by jail pid.
    statuses: HashMap<i32, i32>,
    /// Why the jail is gone, once it is.
    gone: Option<String>,
}

type Pending = Mutex<HashMap<u64, mpsc::Sender<(Reply, Vec<OwnedFd>)>>>;

#[derive(Debug)]
struct Inner {
    kind: JailKind,
    control: OwnedFd,
    send_lock: Mutex<()>,
    next_id: AtomicU64,
    pending: Arc<Pending>,
    exits: Arc<(Mutex<ExitBook>, Condvar)>,
    bwrap: Process,
    dirs: EpisodeDirs,
    remove_workspace: bool,
    limits: Applied,
    uid: crate::uid::EpisodeUid,
    pid_ns: OnceLock<Option<String>>,
    host_pids: Mutex<HashMap<u32, u32>>,
    n_private: AtomicU64,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The init sees its socket close and kills every group it started; killing bwrap (pid 1
        // of the jail's pid namespace) then takes down anything left.
        let _ = rustix::net::shutdown(&self.control, rustix::net::Shutdown::Both);
        let _ = self.bwrap.kill();
        limits::remove(&self.limits.enforcement);
        for dir in [&self.dirs.home, &self.dirs.scratch] {
            layout::unmount(dir);
            remove_tree(dir);
        }
        if self.remove_workspace {
            layout::unmount(&self.dirs.workspace);
            remove_tree(&self.dirs.workspace);
        }
        remove_tree(&self.dirs.root);
    }
}

/// Removes a directory tree without following symlinks out of it.
fn remove_tree(path: &Path) {
    if let Err(e) = fs::remove_dir_all(path)
        && e.kind() != io::ErrorKind::NotFound
    {
        tracing::warn!("could not remove {}: {e}", path.display());
    }
}

fn find_init(init: &InitProgram) -> Result<(PathBuf, Vec<String>), JailError> {
    match init {
        InitProgram::Path(path) => {
            if path.is_file() {
                Ok((path.clone(), Vec::new()))
            } else {
                Err(JailError::InitMissing {
                    looked: path.display().to_string(),
                })
            }
        }
        InitProgram::WithArgs(path, args) => {
            if path.is_file() {
                Ok((path.clone(), args.clone()))
            } else {
                Err(JailError::InitMissing {
                    looked: path.display().to_string(),
                })
            }
        }
        InitProgram::SelfExec(arg) => std::env::current_exe()
            .map(|exe| (exe, vec![arg.clone()]))
            .map_err(|e| JailError::InitMissing {
                looked: format!("the running executable ({e})"),
            }),
        InitProgram::Find => {
            let mut looked = Vec::new();
            let mut candidates: Vec<PathBuf> = Vec::new();
            if let Some(path) = std::env::var_os("HANDS_JAIL_INIT") {
                candidates.push(PathBuf::from(path));
            }
            if let Ok(exe) = std::env::current_exe()
                && let Some(dir) = exe.parent()
            {
                candidates.push(dir.join("hands-jail-init"));
                if let Some(up) = dir.parent() {
                    candidates.push(up.join("hands-jail-init"));
                }
            }
            if let Some(path) = std::env::var_os("PATH") {
                candidates.extend(std::env::split_paths(&path).map(|d| d.join("hands-jail-init")));
            }
            for candidate in candidates {
                if candidate.is_file() {
                    return Ok((candidate, Vec::new()));
                }
                looked.push(candidate.display().to_string());
            }
            Err(JailError::InitMissing {
                looked: looked.join(", "),
            })
        }
    }
}

/// Copies a directory tree, symlinks as symlinks, owned by `uid`.
fn copy_tree(from: &Path, to: &Path, uid: u32) -> io::Result<()> {
    fs::create_dir_all(to)?;
    layout::chown(to, uid)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target, uid)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(entry.path())?, &target)?;
            let _ = std::os::unix::fs::lchown(&target, Some(uid), Some(uid));
        } else if kind.is_file() {
            fs::copy(entry.path(), &target)?;
            layout::chown(&target, uid)?;
        }
    }
    Ok(())
}

/// The seccomp program in a memfd bwrap reads from.
fn seccomp_fd(kind: JailKind) -> Result<OwnedFd, JailError> {
    let filter = match kind {
        JailKind::Desktop => FilterKind::Desktop,
        JailKind::Browser => FilterKind::Browser,
    };
    let bytes = seccomp::program_bytes(filter).map_err(|e| JailError::Prepare(e.to_string()))?;
    let fd = rustix::fs::memfd_create("hands-seccomp", rustix::fs::MemfdFlags::CLOEXEC)
        .map_err(|e| JailError::Prepare(format!("memfd_create: {e}")))?;
    let mut file = fs::File::from(fd);
    file.write_all(&bytes)
        .map_err(|e| JailError::Prepare(format!("writing the seccomp filter: {e}")))?;
    rustix::fs::seek(&file, rustix::fs::SeekFrom::Start(0))
        .map_err(|e| JailError::Prepare(format!("seek: {e}")))?;
    Ok(file.into())
}

/// bubblewrap's arguments for a jail (after the program, before `--`).
fn bwrap_args(kind: JailKind, dirs: &EpisodeDirs, limits: &Limits, init: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |items: &[&OsStr]| args.extend(items.iter().map(|s| s.to_os_string()));
    let s = |text: &'static str| OsStr::new(text);
    push(&[
        s("--unshare-all"),
        s("--unshare-user"),
        s("--die-with-parent"),
        s("--new-session"),
        // The init is the jail's pid 1 (it reaps every orphan): no bwrap reaper stays inside,
        // dumpable, holding its stderr pipe to hands and its exit eventfd for a jailed program
        // to take with pidfd_getfd or to rewrite through /proc/1/mem.
        s("--as-pid-1"),
        s("--cap-drop"),
        s("ALL"),
        s("--hostname"),
        s("hands"),
        s("--uid"),
        s("1000"),
        s("--gid"),
        s("1000"),
    ]);
    if kind == JailKind::Desktop {
        push(&[s("--disable-userns")]);
    }
    push(&[
        s("--ro-bind"),
        s("/usr"),
        s("/usr"),
        s("--symlink"),
        s("usr/bin"),
        s("/bin"),
        s("--symlink"),
        s("usr/lib"),
        s("/lib"),
        s("--symlink"),
        s("usr/lib64"),
        s("/lib64"),
        s("--symlink"),
        s("usr/sbin"),
        s("/sbin"),
        s("--proc"),
        s("/proc"),
        s("--dev"),
        s("/dev"),
    ]);
    let size = |bytes: u64| OsString::from(bytes.to_string());
    args.extend([
        OsString::from("--perms"),
        "1777".into(),
        "--size".into(),
        size(limits.shm_size),
        "--tmpfs".into(),
        "/dev/shm".into(),
        "--perms".into(),
        "1777".into(),
        "--size".into(),
        size(limits.tmp_size),
        "--tmpfs".into(),
        "/tmp".into(),
        "--tmpfs".into(),
        "/etc".into(),
    ]);
    for (name, _) in layout::generated_etc(0) {
        args.extend([
            OsString::from("--ro-bind"),
            dirs.etc.join(name).into(),
            format!("/etc/{name}").into(),
        ]);
    }
    for name in layout::HOST_ETC {
        let host = Path::new("/etc").join(name);
        args.extend([
            OsString::from("--ro-bind-try"),
            host.clone().into(),
            host.into(),
        ]);
    }
    args.extend([OsString::from("--remount-ro"), "/etc".into()]);
    // The system's font cache: without it every program that draws text (Chromium, GTK apps)
    // scans every font and builds a cache of its own in the episode's fresh home first.
    args.extend([
        OsString::from("--ro-bind-try"),
        "/var/cache/fontconfig".into(),
        "/var/cache/fontconfig".into(),
    ]);
    for (host, inside) in [
        (&dirs.home, JAIL_HOME),
        (&dirs.workspace, JAIL_WORKSPACE),
        (&dirs.scratch, JAIL_SCRATCH),
    ] {
        args.extend([OsString::from("--bind"), host.into(), inside.into()]);
    }
    args.extend([
        OsString::from("--ro-bind"),
        init.into(),
        JAIL_INIT.into(),
        // The jail's root is bwrap's tmpfs, writable by the jail's user and with no size cap:
        // read-only once every mount point is made (its own mounts — /tmp, home — stay writable).
        "--remount-ro".into(),
        "/".into(),
        "--seccomp".into(),
        "4".into(),
        "--chdir".into(),
        JAIL_HOME.into(),
        "--clearenv".into(),
        "--setenv".into(),
        "PATH".into(),
        "/usr/local/bin:/usr/bin:/bin".into(),
    ]);
    args
}

impl Jail {
    /// Makes a jail and starts its init. Fails closed: every reason a jail cannot be made is an
    /// error that says what to do.
    pub fn start(config: &JailConfig) -> Result<Jail, JailError> {
        if !config.bwrap.is_file() {
            return Err(JailError::BwrapMissing {
                bwrap: config.bwrap.display().to_string(),
            });
        }
        let (init, init_args) = find_init(&config.init)?;
        crate::janitor::sweep_once();
        static N: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "ep-{}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed),
            match config.kind {
                JailKind::Desktop => "desktop",
                JailKind::Browser => "browser",
            }
        );
        // SAFETY: geteuid takes no arguments and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        let uid = match &config.workspace {
            // A bound directory is written as its owner (the caller's uid when not root).
            Workspace::Bind(dir) if root => crate::uid::owner_of(dir),
            _ => crate::uid::take(),
        }
        .map_err(|e| JailError::Prepare(format!("episode uid: {e}")))?;
        let bound = match &config.workspace {
            Workspace::Bind(dir) => Some(dir.as_path()),
            _ => None,
        };
        let (dirs, dirs_capped) = layout::create(&name, uid.uid, bound, config.limits.dir_size)
            .map_err(|e| JailError::Prepare(format!("episode directories: {e}")))?;
        if let Workspace::Copy(from) = &config.workspace {
            copy_tree(from, &dirs.workspace, uid.uid).map_err(|e| {
                JailError::Prepare(format!("copying the workspace {}: {e}", from.display()))
            })?;
        }
        let mut applied = limits::apply(config.limits, &name);
        applied.dirs_capped = dirs_capped;
        let _ = fs::write(
            dirs.root.join("cgroups"),
            match &applied.enforcement {
                limits::Enforcement::CgroupV2(dir) => dir.display().to_string(),
                limits::Enforcement::CgroupV1(dirs) => dirs
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join("\n"),
                limits::Enforcement::Rlimits => String::new(),
            },
        );
        let (ours, theirs) = rustix::net::socketpair(
            rustix::net::AddressFamily::UNIX,
            rustix::net::SocketType::SEQPACKET,
            rustix::net::SocketFlags::CLOEXEC,
            None,
        )
        .map_err(|e| JailError::Prepare(format!("socketpair: {e}")))?;
        let filter = seccomp_fd(config.kind)?;

        let mut command = Command::new(&config.bwrap);
        command
            .args(bwrap_args(config.kind, &dirs, &config.limits, &init))
            .arg("--")
            .arg(JAIL_INIT)
            .args(&init_args)
            // bwrap's own environment becomes the init's: nothing of the caller's.
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        prepare_identity(&mut command, &applied, uid.uid, &config.limits)?;
        let child = crate::host::spawn_from_long_lived_thread(command, vec![theirs, filter])
            .map_err(|e| JailError::Start {
                why: format!("could not run {}: {e}", config.bwrap.display()),
            })?;
        let mut spawned = crate::host::host_spawned(child);
        let stderr = spawned.stderr.take();

        let pending: Arc<Pending> = Arc::default();
        let exits: Arc<(Mutex<ExitBook>, Condvar)> = Arc::default();
        // Wait for the init's first word.
        let ready = wait_ready(&ours, START_TIMEOUT);
        if let Err(why) = ready {
            let _ = spawned.process.kill();
            let said = stderr.map(read_tail).unwrap_or_default();
            limits::remove(&applied.enforcement);
            for own in [&dirs.home, &dirs.scratch, &dirs.workspace] {
                if !matches!(config.workspace, Workspace::Bind(_)) || own != &dirs.workspace {
                    layout::unmount(own);
                }
            }
            remove_tree(&dirs.root);
            return Err(JailError::Start {
                why: if said.is_empty() {
                    why
                } else {
                    format!("{why}; bwrap said: {said}")
                },
            });
        }
        if let Some(stderr) = stderr {
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = fs::File::from(stderr).read_to_string(&mut text);
                for line in text.lines() {
                    tracing::debug!(target: "hands_jail::bwrap", "{line}");
                }
            });
        }
        let reader = ours
            .try_clone()
            .map_err(|e| JailError::Prepare(format!("dup: {e}")))?;
        spawn_reader(reader, pending.clone(), exits.clone());
        tracing::debug!("jail {name} up: uid {}, limits {applied}", uid.uid);
        Ok(Jail {
            inner: Arc::new(Inner {
                kind: config.kind,
                control: ours,
                send_lock: Mutex::new(()),
                next_id: AtomicU64::new(1),
                pending,
                exits,
                bwrap: spawned.process,
                dirs,
                remove_workspace: !matches!(config.workspace, Workspace::Bind(_)),
                limits: applied,
                uid,
                pid_ns: OnceLock::new(),
                host_pids: Mutex::new(HashMap::new()),
                n_private: AtomicU64::new(0),
            }),
        })
    }

    /// Whether a jail can be made on this machine (bwrap present, user namespaces allowed, the
    /// init found): starts and drops one.
    pub fn probe(config: &JailConfig) -> Result<(), JailError> {
        Jail::start(config).map(drop)
    }

    /// What the jail is for.
    pub fn kind(&self) -> JailKind {
        self.inner.kind
    }

    /// The host uid its programs run as.
    pub fn host_uid(&self) -> u32 {
        self.inner.uid.uid
    }

    /// The host directory bound at `/workspace`.
    pub fn workspace_dir(&self) -> &Path {
        &self.inner.dirs.workspace
    }

    /// The host directory bound at the jail's home.
    pub fn home_dir(&self) -> &Path {
        &self.inner.dirs.home
    }

    /// The episode's directory on the host.
    pub fn episode_dir(&self) -> &Path {
        &self.inner.dirs.root
    }

    /// The limits in force, in words.
    pub fn limits_in_force(&self) -> String {
        self.inner.limits.to_string()
    }

    /// The host pid of bubblewrap's outer process.
    pub fn bwrap_host_pid(&self) -> Option<u32> {
        self.inner.bwrap.host_id()
    }

    /// The environment every program in the jail should start from: its user, home, a private
    /// runtime dir, a UTF-8 locale, and every proxy variable pointing at [`PROXY_PORT`] (the
    /// only way out; names are resolved by the proxy, so `socks5h`-style remote resolution is
    /// what `ALL_PROXY` says).
    pub fn base_env() -> Vec<(OsString, OsString)> {
        let proxy = format!("http://127.0.0.1:{PROXY_PORT}");
        let mut env: Vec<(OsString, OsString)> = [
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("HOME", JAIL_HOME),
            ("USER", layout::JAIL_USER),
            ("LOGNAME", layout::JAIL_USER),
            ("SHELL", "/bin/bash"),
            ("LANG", "C.UTF-8"),
            ("TMPDIR", "/tmp"),
            ("XDG_RUNTIME_DIR", "/tmp"),
            ("NO_PROXY", ""),
            ("no_proxy", ""),
            // No session bus in a jail: GSettings keeps settings in memory for the episode
            // instead of trying dconf's bus (whose failed commits left GTK apps such as
            // mousepad unshown in about one start in ten), and GTK does not look for the
            // accessibility bus.
            ("GSETTINGS_BACKEND", "memory"),
            ("NO_AT_BRIDGE", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
        for name in [
            "http_proxy",
            "https_proxy",
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "all_proxy",
        ] {
            env.push((name.into(), proxy.clone().into()));
        }
        env
    }

    fn request(
        &self,
        request: Request,
        id: u64,
        fds: &[BorrowedFd<'_>],
    ) -> Result<(Reply, Vec<OwnedFd>), SpawnError> {
        let gone = |why: String| SpawnError::EnvironmentGone { why };
        let (tx, rx) = mpsc::channel();
        self.inner
            .pending
            .lock()
            .map_err(|_| gone("poisoned".into()))?
            .insert(id, tx);
        {
            let _guard = self
                .inner
                .send_lock
                .lock()
                .map_err(|_| gone("poisoned".into()))?;
            if let Err(e) = proto::send(self.inner.control.as_fd(), &request, fds) {
                if let Ok(mut pending) = self.inner.pending.lock() {
                    pending.remove(&id);
                }
                return Err(gone(format!("the jail's init is not reachable: {e}")));
            }
        }
        rx.recv_timeout(REQUEST_TIMEOUT).map_err(|_| {
            let why = self
                .inner
                .exits
                .0
                .lock()
                .ok()
                .and_then(|b| b.gone.clone())
                .unwrap_or_else(|| {
                    format!("the jail's init did not answer within {REQUEST_TIMEOUT:?}")
                });
            gone(why)
        })
    }

    fn id(&self) -> u64 {
        self.inner.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The jail's pid namespace (`pid:[inode]`), from the child of bwrap's outer process.
    fn pid_namespace(&self) -> Option<String> {
        self.inner
            .pid_ns
            .get_or_init(|| {
                let bwrap = self.inner.bwrap.host_id()?;
                let children =
                    fs::read_to_string(format!("/proc/{bwrap}/task/{bwrap}/children")).ok()?;
                let child = children.split_whitespace().next()?;
                fs::read_link(format!("/proc/{child}/ns/pid"))
                    .ok()
                    .map(|p| p.display().to_string())
            })
            .clone()
    }
}

/// Puts the bwrap process in the episode's cgroups, gives it the episode's uid (as root) and
/// resource limits, before it runs. The parent-death signal is armed after this (changing
/// credentials clears it).
fn prepare_identity(
    command: &mut Command,
    applied: &Applied,
    uid: u32,
    limits: &Limits,
) -> Result<(), JailError> {
    let procs: Vec<OwnedFd> = applied
        .procs_files
        .iter()
        .map(|path| {
            fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map(OwnedFd::from)
                .map_err(|e| JailError::Prepare(format!("{}: {e}", path.display())))
        })
        .collect::<Result<_, _>>()?;
    let raw: Vec<i32> = procs.iter().map(|fd| fd.as_raw_fd()).collect();
    // SAFETY: geteuid takes no arguments and cannot fail.
    #[allow(unsafe_code)]
    let root = unsafe { libc::geteuid() } == 0;
    let own_uid = root && uid != 0;
    let nproc = u64::from(limits.max_pids);
    let fsize = limits.max_file_size;
    // SAFETY: runs in the forked child before exec and calls only async-signal-safe functions
    // (write, setrlimit, setgroups, setresgid, setresuid, getpid) on plain integers and a stack
    // buffer. `procs` stays alive in the parent until the spawn returns (moved into the closure).
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            let _keep = &procs;
            let mut digits = [0u8; 16];
            let mut n = libc::getpid() as u32;
            let mut i = digits.len();
            loop {
                i -= 1;
                digits[i] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            for fd in &raw {
                if libc::write(*fd, digits[i..].as_ptr().cast(), digits.len() - i) < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            let set = |resource, value: u64| {
                let limit = libc::rlimit {
                    rlim_cur: value,
                    rlim_max: value,
                };
                libc::setrlimit(resource, &limit)
            };
            set(libc::RLIMIT_CORE, 0);
            set(libc::RLIMIT_FSIZE, fsize);
            if own_uid {
                // The episode's uid owns nothing else, so a per-uid process cap is a
                // per-episode one.
                set(libc::RLIMIT_NPROC, nproc);
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setresgid(uid, uid, uid) != 0
                    || libc::setresuid(uid, uid, uid) != 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    Ok(())
}

/// Waits up to `timeout` for the init's `Ready`.
fn wait_ready(control: &OwnedFd, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("the init did not start within {timeout:?}"));
        }
        let mut polled = [rustix::event::PollFd::new(
            control,
            rustix::event::PollFlags::IN,
        )];
        let spec = rustix::event::Timespec::try_from(left).unwrap_or(rustix::event::Timespec {
            tv_sec: 1,
            tv_nsec: 0,
        });
        match rustix::event::poll(&mut polled, Some(&spec)) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.to_string()),
        }
        return match proto::recv::<Reply>(control.as_fd()) {
            Ok(Some((Reply::Ready { .. }, _))) => Ok(()),
            Ok(Some((other, _))) => Err(format!("the init said {other:?} first")),
            Ok(None) => Err("bwrap exited before the init started".into()),
            Err(e) => Err(e.to_string()),
        };
    }
}

fn read_tail(fd: OwnedFd) -> String {
    let mut text = String::new();
    let _ = fs::File::from(fd).take(64 * 1024).read_to_string(&mut text);
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_owned()
}

/// The thread that reads the init's messages for as long as the jail lives.
fn spawn_reader(control: OwnedFd, pending: Arc<Pending>, exits: Arc<(Mutex<ExitBook>, Condvar)>) {
    std::thread::Builder::new()
        .name("hands-jail-reader".into())
        .spawn(move || {
            let why = loop {
                match proto::recv::<Reply>(control.as_fd()) {
                    Ok(Some((Reply::Exited { pid, status }, _))) => {
                        let (book, cond) = &*exits;
                        if let Ok(mut book) = book.lock() {
                            book.statuses.insert(pid, status);
                        }
                        cond.notify_all();
                    }
                    Ok(Some((
                        reply @ (Reply::Done { id, .. } | Reply::Failed { id, .. }),
                        fds,
                    ))) => {
                        let tx = pending.lock().ok().and_then(|mut p| p.remove(&id));
                        if let Some(tx) = tx {
                            let _ = tx.send((reply, fds));
                        }
                    }
                    Ok(Some((Reply::Ready { .. }, _))) => {}
                    Ok(None) => break "the jail's init exited".to_owned(),
                    Err(e) => break format!("reading from the jail's init failed: {e}"),
                }
            };
            let (book, cond) = &*exits;
            if let Ok(mut book) = book.lock() {
                book.gone = Some(why);
            }
            cond.notify_all();
            if let Ok(mut pending) = pending.lock() {
                pending.clear();
            }
        })
        .expect("the jail's reader thread starts");
}

/// A pipe: (read end, write end), both close-on-exec.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(io::Error::from)
}

fn failure(reply: Reply, what: &str) -> io::Error {
    match reply {
        Reply::Failed {
            errno: Some(errno),
            message,
            ..
        } => {
            let os = io::Error::from_raw_os_error(errno);
            io::Error::new(os.kind(), format!("{what}: {message}"))
        }
        Reply::Failed { message, .. } => io::Error::other(format!("{what}: {message}")),
        other => io::Error::other(format!("{what}: unexpected answer {other:?}")),
    }
}

impl Launcher for Jail {
    fn spawn(&self, spec: ProcessSpec) -> Result<Spawned, SpawnError> {
        let program = spec.program_name();
        let exec = |source: io::Error| SpawnError::Exec {
            program: program.clone(),
            source,
        };
        let mut ours: [Option<OwnedFd>; 3] = [None, None, None];
        let mut theirs: Vec<OwnedFd> = Vec::new();
        let wanted = [spec.stdin, spec.stdout, spec.stderr];
        for (i, io) in wanted.iter().enumerate() {
            if *io == ChildIo::Pipe {
                let (read, write) = pipe().map_err(exec)?;
                if i == 0 {
                    ours[0] = Some(write);
                    theirs.push(read);
                } else {
                    ours[i] = Some(read);
                    theirs.push(write);
                }
            }
        }
        let n_extra = spec.extra_fds.len();
        theirs.extend(spec.extra_fds);
        if theirs.len() > proto::MAX_FDS {
            return Err(exec(io::Error::other(format!(
                "at most {} descriptors can be passed to a jailed program",
                proto::MAX_FDS
            ))));
        }
        let id = self.id();
        let request = Request::Spawn {
            id,
            program: spec.program.into_os_string().into_vec(),
            args: spec.args.into_iter().map(OsString::into_vec).collect(),
            env: spec
                .env
                .into_iter()
                .map(|(k, v)| (k.into_vec(), v.into_vec()))
                .collect(),
            cwd: spec
                .cwd
                .map(|c| c.into_os_string().into_vec())
                .unwrap_or_else(|| b"/".to_vec()),
            stdio: wanted.map(|io| io == ChildIo::Pipe),
            n_extra,
        };
        let (reply, _) = self.request(request, id, &proto::borrow_all(&theirs))?;
        drop(theirs);
        let pid = match reply {
            Reply::Done { pid: Some(pid), .. } => pid,
            other => return Err(exec(failure(other, "the jail's init could not start it"))),
        };
        let [stdin, stdout, stderr] = ours;
        Ok(Spawned {
            process: Process::new(Arc::new(JailChild {
                jail: self.clone(),
                pid,
            })),
            stdin,
            stdout,
            stderr,
        })
    }

    fn connect_unix(&self, address: &UnixAddress) -> io::Result<OwnedFd> {
        let id = self.id();
        let (path, abstract_name) = match address {
            UnixAddress::Path(path) => (path.as_os_str().as_bytes().to_vec(), false),
            UnixAddress::Abstract(name) => (name.clone(), true),
        };
        let (reply, mut fds) = self.request(
            Request::Connect {
                id,
                path,
                abstract_name,
            },
            id,
            &[],
        )?;
        match (reply, fds.pop()) {
            (Reply::Done { .. }, Some(fd)) => Ok(fd),
            (reply, _) => Err(failure(reply, "connecting inside the jail")),
        }
    }

    fn host_pid(&self, pid: u32) -> Option<u32> {
        if let Some(host) = self.inner.host_pids.lock().ok()?.get(&pid).copied()
            && ns_pid_of(host).is_some_and(|(ns, p)| Some(ns) == self.pid_namespace() && p == pid)
        {
            return Some(host);
        }
        let ns = self.pid_namespace()?;
        for entry in fs::read_dir("/proc").ok()?.flatten() {
            let Some(host) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some((their_ns, their_pid)) = ns_pid_of(host)
                && their_ns == ns
                && their_pid == pid
            {
                self.inner.host_pids.lock().ok()?.insert(pid, host);
                return Some(host);
            }
        }
        None
    }

    fn isolation(&self) -> Isolation {
        Isolation::Jail {
            host_uid: self.inner.uid.uid,
            limits: self.limits_in_force(),
        }
    }

    fn listen_tcp(&self, port: u16) -> io::Result<std::net::TcpListener> {
        let id = self.id();
        let (reply, mut fds) = self.request(Request::Listen { id, port }, id, &[])?;
        match (reply, fds.pop()) {
            (Reply::Done { .. }, Some(fd)) => Ok(std::net::TcpListener::from(fd)),
            (reply, _) => Err(failure(reply, "listening inside the jail")),
        }
    }

    fn private_dir(&self, name: &str) -> io::Result<SharedDir> {
        let n = self.inner.n_private.fetch_add(1, Ordering::Relaxed);
        let safe = crate::spawn::safe_component(name);
        let leaf = format!("{safe}-{n}");
        let host = self.inner.dirs.scratch.join(&leaf);
        fs::create_dir(&host)?;
        layout::chown(&host, self.inner.uid.uid)?;
        Ok(SharedDir {
            host,
            inside: Path::new(JAIL_SCRATCH).join(leaf),
        })
    }

    fn adopt(&self, path: &Path) -> io::Result<()> {
        layout::lchown(path, self.inner.uid.uid)
    }
}

/// A process's pid namespace and its pid there (the last of `NSpid`).
fn ns_pid_of(host: u32) -> Option<(String, u32)> {
    let ns = fs::read_link(format!("/proc/{host}/ns/pid")).ok()?;
    let status = fs::read_to_string(format!("/proc/{host}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("NSpid:"))?;
    let pid = line.split_whitespace().last()?.parse().ok()?;
    Some((ns.display().to_string(), pid))
}

/// A program started in a jail.
#[derive(Debug)]
struct JailChild {
    jail: Jail,
    pid: i32,
}

impl JailChild {
    fn ended(&self) -> Option<ExitStatus> {
        let book = self.jail.inner.exits.0.lock().ok()?;
        if let Some(status) = book.statuses.get(&self.pid) {
            return Some(ExitStatus::from_raw(*status));
        }
        // The jail is gone: so is everything in it (killed with its pid namespace).
        book.gone
            .as_ref()
            .map(|_| ExitStatus::from_raw(libc::SIGKILL))
    }
}

impl ProcessControl for JailChild {
    fn id(&self) -> u32 {
        self.pid as u32
    }

    fn host_id(&self) -> Option<u32> {
        self.jail.host_pid(self.pid as u32)
    }

    fn signal_group(&self, signal: Signal) -> io::Result<()> {
        if self.ended().is_some() {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        let id = self.jail.id();
        let (reply, _) = self.jail.request(
            Request::Signal {
                id,
                pgid: self.pid,
                signal: signal.as_raw(),
            },
            id,
            &[],
        )?;
        match reply {
            Reply::Done { .. } => Ok(()),
            other => Err(failure(other, "signalling inside the jail")),
        }
    }

    fn try_wait(&self) -> io::Result<Option<ExitStatus>> {
        Ok(self.ended())
    }

    fn wait_timeout(&self, timeout: Duration) -> io::Result<Option<ExitStatus>> {
        let deadline = Instant::now() + timeout;
        let (book, cond) = &*self.jail.inner.exits;
        let mut guard = book.lock().map_err(|_| io::Error::other("poisoned"))?;
        loop {
            if let Some(status) = guard.statuses.get(&self.pid) {
                return Ok(Some(ExitStatus::from_raw(*status)));
            }
            if guard.gone.is_some() {
                return Ok(Some(ExitStatus::from_raw(libc::SIGKILL)));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            guard = cond
                .wait_timeout(guard, left)
                .map_err(|_| io::Error::other("poisoned"))?
                .0;
        }
    }
}
