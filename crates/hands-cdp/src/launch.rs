//! The Chromium process: started headless on a fresh profile through a [`Launcher`] (the host,
//! or a jail of its own), spoken to over `--remote-debugging-pipe`, killed with its whole process
//! group on drop.
//!
//! Why the pipe (issue 17): with `--remote-debugging-port` the browser listened on loopback and
//! wrote its port to `DevToolsActivePort`, so any local process — of any uid, the model's own
//! shell included — could attach over CDP, send `Fetch.disable` and browse past the URL fence.
//! Now the browser reads commands from its descriptor 3 and writes answers to its descriptor 4
//! (the `transport` module), whose other ends only this process holds: there is no DevTools port
//! and no `DevToolsActivePort` file at all.
//!
//! Why the [`Launcher`]: the same code starts the browser on the host (`--sandbox none`) or in a
//! jail of its own, a sibling of the desktop's, so the model's shell can neither ptrace it nor
//! reopen its descriptors. Nothing is assumed about where it runs: its environment is given whole
//! (no variable of this process is inherited, so no credential reaches it), its profile, home and
//! download directories come from [`Launcher::private_dir`] and are named to the browser by their
//! `inside` paths while this process writes them through their `host` paths, its pid may be a
//! jail's, and the parent-death signal is the launcher's.
//!
//! Spec: claude-computer-use-tool, precautions 1 and 3 ("una máquina virtual o contenedor dedicado
//! con privilegios mínimos"; internet limited to an allow-list); issue 17.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{BufRead as _, BufReader};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hands_jail::{
    ChildIo, HostLauncher, Isolation, Launcher, Process, ProcessSpec, SharedDir, SpawnError,
};
use tokio::sync::watch;

use crate::connection::{CdpError, Connection};

/// How many of the browser's last stderr lines are kept for error reports.
const STDERR_TAIL_LINES: usize = 12;

/// How often the exit watch asks whether the browser ended (it also stops within this long once
/// the [`Chromium`] is dropped).
const EXIT_POLL: Duration = Duration::from_millis(100);

/// The `PATH` the browser gets.
pub const BROWSER_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Variables passed on from this process when set (locale and time zone: what a page can see of
/// the person's settings), unless their names look like credentials.
const PASSED_ON: [&str; 3] = ["LANG", "LANGUAGE", "TZ"];

/// Where Chromium lives, where it runs, how big its window is, how long to wait for it.
#[derive(Debug, Clone)]
pub struct LaunchConfig {
    /// The browser program (Debian's wrapper script by default, which `exec`s the real binary),
    /// as the launcher's environment names it.
    pub program: PathBuf,
    /// Viewport width and height in CSS pixels (the window size; pages also get a device-metrics
    /// override of the same size so screenshots are exactly this big).
    pub viewport: (u32, u32),
    /// How long to wait for the browser's first answer on its DevTools pipe.
    pub ready_timeout: Duration,
    /// Flags added after the built-in ones. A second `--disable-features` replaces the built-in
    /// list rather than adding to it.
    pub extra_args: Vec<String>,
    /// Open a first tab (`about:blank`) as the browser starts; without, `--no-startup-window`
    /// (and [`crate::CdpBrowser::launch`] makes the first tab itself, attached paused like every
    /// later one). On by default: the browser makes its first tab while it starts, which was as
    /// fast or faster than making it after connecting (measured, 8 launches each).
    pub first_tab: bool,
    /// Where the browser runs: the host ([`HostLauncher`], the default) or an episode's jail.
    /// The launcher spawns it in a process group of its own with a parent-death signal, and gives
    /// it its private directories and, for the policy proxy, its loopback listener.
    pub launcher: Arc<dyn Launcher>,
}

impl Default for LaunchConfig {
    /// `/usr/bin/chromium` on the host, a 1280x800 viewport (the size the design's numbers were
    /// measured at), 20 s to start.
    fn default() -> LaunchConfig {
        LaunchConfig {
            program: PathBuf::from("/usr/bin/chromium"),
            viewport: (1280, 800),
            ready_timeout: Duration::from_secs(20),
            extra_args: Vec::new(),
            first_tab: true,
            launcher: Arc::new(HostLauncher),
        }
    }
}

/// Why the browser could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// The program does not exist.
    #[error(
        "the browser program {program} does not exist: install Chromium (scripts/install-system-deps.sh) or set LaunchConfig::program"
    )]
    Missing {
        /// The configured program.
        program: String,
    },
    /// The program exists but could not be started.
    #[error("could not start the browser {program}: {source}")]
    Spawn {
        /// The configured program.
        program: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A directory of the browser's (profile, home, downloads) could not be made.
    #[error("could not create the browser's directory {parent}: {source}")]
    Profile {
        /// Which directory.
        parent: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The browser exited before it answered on its DevTools pipe.
    #[error("the browser exited before it was ready ({status}); its last output: {stderr_tail}")]
    Exited {
        /// The exit status.
        status: String,
        /// The last lines it wrote to stderr.
        stderr_tail: String,
    },
    /// The browser did not answer in time.
    #[error(
        "the browser did not answer on its DevTools pipe within {after:?}; its last output: {stderr_tail}"
    )]
    NotReady {
        /// How long we waited.
        after: Duration,
        /// The last lines it wrote to stderr.
        stderr_tail: String,
    },
    /// The DevTools pipe failed before the browser was ready, and the browser did not exit.
    #[error(
        "the browser's DevTools pipe failed before it was ready ({reason}); its last output: {stderr_tail}"
    )]
    Pipe {
        /// What failed.
        reason: String,
        /// The last lines it wrote to stderr.
        stderr_tail: String,
    },
}

/// The flags every launch uses: headless, quiet (as little traffic of the browser's own as flags
/// allow: no component or safe-browsing updates, no sync, no network-time queries, no QUIC —
/// Chromium 156 still checks `update.googleapis.com` and `accounts.google.com`, which the policy
/// proxy answers), without the two APIs whose requests the browser makes itself where request
/// interception cannot see them (`FedCm`: identity-provider look-ups; `WebPayments`: payment
/// method manifests), deterministic (no GPU, scale factor 1,
/// no throttling of background tabs, no back/forward cache so a navigation always makes a new
/// document), and DevTools over the pipes of descriptors 3 and 4, never a port.
///
/// `profile` is the profile directory as the browser sees it; `isolation` is where it runs
/// ([`Launcher::isolation`]), which decides whether it keeps its own sandbox
/// ([`without_own_sandbox`]).
pub fn base_args(profile: &Path, viewport: (u32, u32), isolation: &Isolation) -> Vec<String> {
    let mut args: Vec<String> = [
        "--headless",
        // Commands on descriptor 3, answers on 4: no DevTools port, no `DevToolsActivePort`.
        "--remote-debugging-pipe",
        // Shared memory in the temp dir: a container's /dev/shm is often too small (Debian's
        // wrapper adds this below 3.8 GB; the driver starts the binary itself).
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--disable-gpu",
        "--mute-audio",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        "--disable-extensions",
        "--disable-default-apps",
        "--disable-domain-reliability",
        "--disable-breakpad",
        "--disable-client-side-phishing-detection",
        "--disable-hang-monitor",
        "--disable-background-timer-throttling",
        "--disable-backgrounding-occluded-windows",
        "--disable-renderer-backgrounding",
        "--disable-ipc-flooding-protection",
        "--disable-back-forward-cache",
        "--disable-smooth-scrolling",
        "--disable-field-trial-config",
        "--metrics-recording-only",
        "--no-pings",
        "--password-store=basic",
        "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,\
         AutofillServerCommunication,CertificateTransparencyComponentUpdater,\
         InterestFeedContentSuggestions,PrivacySandboxSettings4,HttpsUpgrades,\
         HttpsFirstBalancedModeAutoEnable,LensOverlay,GlobalMediaControls,\
         NetworkTimeServiceQuerying,FedCm,WebPayments",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    args.push(format!("--window-size={},{}", viewport.0, viewport.1));
    if without_own_sandbox(isolation) {
        args.push("--no-sandbox".to_owned());
    }
    args
}

/// Whether the browser must run with `--no-sandbox`.
///
/// - On the host as root: yes (Chromium refuses to start its sandbox as root).
/// - On the host as another user: no, its own sandbox (user namespaces) works.
/// - In a jail: no. The browser runs as uid 1000 in the jail's user namespace, and the browser
///   jail keeps user namespaces (no `--disable-userns`), so Chromium's namespace sandbox nests
///   its own user, pid and network namespaces and its seccomp-bpf filters inside the jail's:
///   a renderer is then sandboxed twice (`a_jailed_browser_reads_a_page` launches one this
///   way).
pub fn without_own_sandbox(isolation: &Isolation) -> bool {
    match isolation {
        Isolation::Jail { .. } => false,
        _ => rustix::process::geteuid().is_root(),
    }
}

/// Debian's wrapper script and the binary it runs.
const DEBIAN_WRAPPER: &str = "/usr/bin/chromium";
const DEBIAN_BINARY: &str = "/usr/lib/chromium/chromium";

/// The program to start: Debian's real binary when the wrapper script is configured, which
/// saves the script's shell and the eight processes it runs (`grep /proc/cpuinfo`, `findmnt`,
/// `ls`, …) on every launch; its flags that matter here are in [`base_args`]
/// (`--disable-dev-shm-usage`) or off on purpose (its extension loading).
fn direct_binary(program: &Path) -> PathBuf {
    if program == Path::new(DEBIAN_WRAPPER) && Path::new(DEBIAN_BINARY).exists() {
        PathBuf::from(DEBIAN_BINARY)
    } else {
        program.to_path_buf()
    }
}

/// The settings a fresh profile starts with (`Default/Preferences`), for what no flag sets:
/// - `webrtc.ip_handling_policy: disable_non_proxied_udp` (with UDP off and one route): WebRTC
///   gathers no UDP candidate and sends no UDP at all, so it can only go through the proxy as TCP.
///   The `--force-webrtc-ip-handling-policy` flag alone left host candidates sending STUN to a
///   page-chosen address on Chromium 156 (measured), the preference does not;
/// - `net.network_prediction_options: 2` (no predictions): no DNS prefetch, no preconnect, no
///   speculation-rules prefetch or prerender — each a request the browser makes on a page's
///   behalf that request interception never sees.
pub const PROFILE_PREFERENCES: &str = r#"{"webrtc":{"ip_handling_policy":"disable_non_proxied_udp","multiple_routes_enabled":false,"nonproxied_udp_enabled":false},"net":{"network_prediction_options":2}}"#;

/// `O_NOFOLLOW` as `OpenOptions::custom_flags` takes it.
fn libc_o_nofollow() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}

/// The last lines the browser wrote to stderr.
#[derive(Debug, Clone, Default)]
struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: String) {
        if let Ok(mut lines) = self.0.lock() {
            if lines.len() == STDERR_TAIL_LINES {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    fn text(&self) -> String {
        match self.0.lock() {
            Ok(lines) if !lines.is_empty() => lines.iter().cloned().collect::<Vec<_>>().join(" | "),
            _ => "(nothing)".to_owned(),
        }
    }
}

/// The environment the browser gets, whole: nothing of this process's is inherited but the
/// locale and time zone (`LANG`, `LANGUAGE`, `TZ`), and no variable whose name looks like a
/// credential. `HOME` is the browser's own private directory (where NSS, fontconfig and GTK keep their
/// files), as the browser sees it.
pub fn browser_env(home: &Path, program: &Path, binary: &Path) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), BROWSER_PATH.into()),
        ("HOME".into(), home.into()),
    ];
    for name in PASSED_ON {
        if let Some(value) = std::env::var_os(name) {
            env.push((name.into(), value));
        }
    }
    if !env.iter().any(|(name, _)| name == "LANG") {
        env.push(("LANG".into(), "C.UTF-8".into()));
    }
    if binary != program {
        // What Debian's wrapper would have told the browser about itself.
        env.push(("CHROME_WRAPPER".into(), program.into()));
        env.push(("CHROME_DESKTOP".into(), "chromium.desktop".into()));
    }
    env.retain(|(name, _)| !hands_core::process::looks_like_credential(&name.to_string_lossy()));
    env
}

/// The browser's directories, each from [`Launcher::private_dir`]: removed (with everything the
/// browser wrote) on drop, through their `host` paths.
#[derive(Debug)]
struct Dirs {
    profile: SharedDir,
    home: SharedDir,
    downloads: SharedDir,
}

impl Dirs {
    fn create(launcher: &dyn Launcher) -> Result<Dirs, LaunchError> {
        let make = |name: &str| {
            launcher
                .private_dir(name)
                .map_err(|source| LaunchError::Profile {
                    parent: format!("{name} (a private directory of the launcher)"),
                    source,
                })
        };
        let profile = make("chromium-profile")?;
        let dirs = Dirs {
            home: make("chromium-home")?,
            downloads: make("chromium-downloads")?,
            profile,
        };
        dirs.write_preferences(launcher)?;
        Ok(dirs)
    }

    /// Writes [`PROFILE_PREFERENCES`] before the browser starts (nothing of the launcher's runs
    /// yet, so nothing can race the writes). The launcher's programs may run as another uid than
    /// this process: what this process creates in the profile is given to them
    /// ([`Launcher::adopt`]), private to them as the directory itself is (`0700`, `0600`).
    fn write_preferences(&self, launcher: &dyn Launcher) -> Result<(), LaunchError> {
        use std::io::Write as _;
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
        let dir = self.profile.host.join("Default");
        let file = dir.join("Preferences");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .and_then(|()| launcher.adopt(&dir))
            .and_then(|()| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .custom_flags(libc_o_nofollow())
                    .open(&file)
            })
            .and_then(|mut f| f.write_all(PROFILE_PREFERENCES.as_bytes()))
            .and_then(|()| launcher.adopt(&file))
            .map_err(|source| LaunchError::Profile {
                parent: dir.display().to_string(),
                source,
            })
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        for dir in [&self.profile, &self.home, &self.downloads] {
            match std::fs::remove_dir_all(&dir.host) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    tracing::warn!(path = %dir.host.display(), error = %e, "could not remove a browser directory");
                }
            }
        }
    }
}

/// How the browser process ended, once it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// The exit status, as text (`exit status 1`, `killed by signal 9`).
    pub status: String,
    /// The last lines the browser wrote to stderr.
    pub stderr_tail: String,
}

/// A running Chromium that this process started and owns, and its DevTools connection.
///
/// Owned by the driver for the whole session. Dropping it kills the browser's whole process group
/// (browser, zygote, renderers, GPU and utility processes), waits for it, and deletes its
/// directories.
#[derive(Debug)]
pub struct Chromium {
    process: Process,
    /// The connection over the DevTools pipes; its task lives until the browser closes them or
    /// the last handle (this one or the driver's) is dropped.
    connection: Connection,
    exit: watch::Receiver<Option<Exit>>,
    tail: StderrTail,
    /// The thread that watches for the exit; told to stop by `stop_watching` on drop.
    watcher: Option<std::thread::JoinHandle<()>>,
    stop_watching: Arc<AtomicBool>,
    dirs: Option<Dirs>,
    viewport: (u32, u32),
}

impl Chromium {
    /// Starts the browser through `config.launcher` and waits until it answers on its DevTools
    /// pipe (at most `config.ready_timeout`). Must be called inside a tokio runtime.
    ///
    /// The connection's calls wait at most `config.ready_timeout` unless given a timeout; take a
    /// handle with another default with [`Connection::with_call_timeout`].
    pub async fn launch(config: &LaunchConfig) -> Result<Chromium, LaunchError> {
        let program = config.program.display().to_string();
        let launcher = Arc::clone(&config.launcher);
        let dirs = Dirs::create(launcher.as_ref())?;
        let mut args = base_args(&dirs.profile.inside, config.viewport, &launcher.isolation());
        args.extend(config.extra_args.iter().cloned());
        if config.first_tab {
            args.push("about:blank".to_owned());
        } else {
            args.push("--no-startup-window".to_owned());
        }
        let binary = direct_binary(&config.program);
        let env = browser_env(&dirs.home.inside, &config.program, &binary);

        // The browser reads commands from descriptor 3 and writes to descriptor 4; this process
        // keeps the other ends only, so the browser's exit closes them (EOF).
        let pipe_error = |source: rustix::io::Errno| LaunchError::Spawn {
            program: program.clone(),
            source: source.into(),
        };
        let (commands_in, commands_out): (OwnedFd, OwnedFd) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(pipe_error)?;
        let (answers_in, answers_out): (OwnedFd, OwnedFd) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(pipe_error)?;
        let spec = ProcessSpec::new(binary)
            .args(args)
            .envs(env)
            .stdio(ChildIo::Null, ChildIo::Null, ChildIo::Pipe)
            .extra_fd(commands_in)
            .extra_fd(answers_out);
        // Spawning blocks for the fork and exec (a jail's launcher may ask its init).
        let spawned = match tokio::task::spawn_blocking(move || launcher.spawn(spec)).await {
            Ok(Ok(spawned)) => spawned,
            Ok(Err(SpawnError::Exec { source, .. }))
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                return Err(LaunchError::Missing { program });
            }
            Ok(Err(e)) => {
                return Err(LaunchError::Spawn {
                    program,
                    source: e.into(),
                });
            }
            Err(e) => {
                return Err(LaunchError::Spawn {
                    program,
                    source: std::io::Error::other(format!("the spawning task failed: {e}")),
                });
            }
        };

        // Nothing below returns early once the exit watch holds a handle on the process: from
        // then on the `Chromium`'s drop is what kills it.
        let connection = Connection::over_pipes(commands_out, answers_in, config.ready_timeout)
            .map_err(|e| LaunchError::Pipe {
                reason: e.to_string(),
                stderr_tail: "(nothing)".to_owned(),
            })?;
        let tail = StderrTail::default();
        if let Some(stderr) = spawned.stderr {
            let tail = tail.clone();
            std::thread::Builder::new()
                .name("hands-chromium-stderr".into())
                .spawn(move || {
                    for line in BufReader::new(std::fs::File::from(stderr)).lines() {
                        match line {
                            Ok(line) if !line.trim().is_empty() => tail.push(line),
                            Ok(_) => {}
                            Err(_) => break,
                        }
                    }
                })
                .map_err(|source| LaunchError::Spawn {
                    program: program.clone(),
                    source,
                })?;
        }
        let (exit_tx, exit_rx) = watch::channel(None);
        let stop_watching = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (process, tail, stop) = (
                spawned.process.clone(),
                tail.clone(),
                Arc::clone(&stop_watching),
            );
            std::thread::Builder::new()
                .name("hands-chromium-exit".into())
                .spawn(move || watch_exit(&process, &tail, &stop, &exit_tx))
                .map_err(|source| LaunchError::Spawn {
                    program: program.clone(),
                    source,
                })?
        };
        let mut chromium = Chromium {
            process: spawned.process,
            connection,
            exit: exit_rx,
            tail,
            watcher: Some(watcher),
            stop_watching,
            dirs: Some(dirs),
            viewport: config.viewport,
        };
        chromium.wait_ready(config.ready_timeout).await?;
        Ok(chromium)
    }

    /// Waits for the browser's first answer, its exit, or the timeout.
    async fn wait_ready(&mut self, timeout: Duration) -> Result<(), LaunchError> {
        let mut exit = self.exit.clone();
        let exited = |exit: Exit| LaunchError::Exited {
            status: exit.status,
            stderr_tail: exit.stderr_tail,
        };
        let answer = tokio::select! {
            answer = self.connection.call_with(
                None,
                "Browser.getVersion",
                serde_json::json!({}),
                timeout,
                None,
            ) => answer,
            Ok(exit) = exit.wait_for(Option::is_some) => {
                return Err(exited(exit.clone().unwrap_or_else(|| Exit {
                    status: "unknown".to_owned(),
                    stderr_tail: self.tail.text(),
                })));
            }
        };
        match answer {
            Ok(_) => Ok(()),
            Err(CdpError::Timeout { .. }) => Err(LaunchError::NotReady {
                after: timeout,
                stderr_tail: self.tail.text(),
            }),
            Err(e) => {
                // The pipes close when the browser exits: give the watch a moment to see it.
                let waited =
                    tokio::time::timeout(Duration::from_secs(2), exit.wait_for(Option::is_some))
                        .await;
                match waited {
                    Ok(Ok(exit)) if exit.is_some() => {
                        let exit = exit.clone().unwrap_or_else(|| Exit {
                            status: "unknown".to_owned(),
                            stderr_tail: self.tail.text(),
                        });
                        Err(exited(exit))
                    }
                    _ => Err(LaunchError::Pipe {
                        reason: e.to_string(),
                        stderr_tail: self.tail.text(),
                    }),
                }
            }
        }
    }

    /// The DevTools connection over the browser's pipes (the only way to speak CDP to it).
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// The browser's profile directory (removed on drop): `host` for this process, `inside` as
    /// the browser names it.
    pub fn profile_dir(&self) -> Option<&SharedDir> {
        self.dirs.as_ref().map(|d| &d.profile)
    }

    /// The browser's home directory (`HOME`; removed on drop).
    pub fn home_dir(&self) -> Option<&SharedDir> {
        self.dirs.as_ref().map(|d| &d.home)
    }

    /// A directory for the browser's downloads (removed on drop).
    pub fn download_dir(&self) -> Option<&SharedDir> {
        self.dirs.as_ref().map(|d| &d.downloads)
    }

    /// The viewport it was started with.
    pub fn viewport(&self) -> (u32, u32) {
        self.viewport
    }

    /// The browser process, as its launcher started it.
    pub fn process(&self) -> &Process {
        &self.process
    }

    /// The browser's process id as its environment sees it (in a jail, the jail's pid
    /// namespace).
    pub fn pid(&self) -> u32 {
        self.process.id()
    }

    /// The browser's process id on the host, when the launcher knows it.
    pub fn host_pid(&self) -> Option<u32> {
        self.process.host_id()
    }

    /// The last lines the browser wrote to stderr (its own log, for diagnosing a crash).
    pub fn stderr_tail(&self) -> String {
        self.tail.text()
    }

    /// How the process ended, if it has.
    pub fn exited(&self) -> Option<Exit> {
        self.exit.borrow().clone()
    }

    /// A receiver that changes once, when the process exits.
    pub fn exit_watch(&self) -> watch::Receiver<Option<Exit>> {
        self.exit.clone()
    }
}

/// The exit watch: publishes how the browser ended (with its last stderr lines), or returns
/// without a word once `stop` is set.
fn watch_exit(
    process: &Process,
    tail: &StderrTail,
    stop: &AtomicBool,
    exit_tx: &watch::Sender<Option<Exit>>,
) {
    let status = loop {
        match process.wait_timeout(EXIT_POLL) {
            Ok(Some(status)) => break describe_status(status),
            Ok(None) if stop.load(Ordering::Relaxed) => return,
            Ok(None) => {}
            Err(e) => break format!("unknown: {e}"),
        }
    };
    // Give the stderr reader a moment to take the last lines of a crash.
    std::thread::sleep(Duration::from_millis(20));
    let _ = exit_tx.send(Some(Exit {
        status,
        stderr_tail: tail.text(),
    }));
}

impl Drop for Chromium {
    fn drop(&mut self) {
        // The whole group, even when the browser itself is gone already: renderers and the
        // zygote would outlive it.
        let _ = self.process.signal_group(hands_jail::Signal::KILL);
        if let Err(e) = self.process.kill() {
            tracing::warn!(error = %e, "could not kill the browser");
        }
        self.stop_watching.store(true, Ordering::Relaxed);
        if let Some(watcher) = self.watcher.take() {
            let _ = watcher.join();
        }
        // Only now is nothing writing into the directories any more.
        self.dirs.take();
    }
}

/// `exit status 1`, `killed by signal 9`.
fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => status.to_string(),
    }
}

/// The WebSocket URL from the `DevToolsActivePort` file of a browser someone else started with
/// `--remote-debugging-port` (to attach to it; hands' own launches write none): the port on the
/// first line, the browser target's path on the second. `None` until both are there (the file may be read half-written).
pub fn parse_active_port(text: &str) -> Option<String> {
    let mut lines = text.lines();
    let port: u16 = lines.next()?.trim().parse().ok()?;
    let path = lines.next()?.trim();
    if port == 0 || !path.starts_with("/devtools/browser/") {
        return None;
    }
    Some(format!("ws://127.0.0.1:{port}{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn active_port_files() {
        let check = |text: &str, expect: Option<&str>| {
            assert_eq!(parse_active_port(text).as_deref(), expect, "{text:?}");
        };
        check(
            "46659\n/devtools/browser/ec1655f7-ae66\n",
            Some("ws://127.0.0.1:46659/devtools/browser/ec1655f7-ae66"),
        );
        check("46659\n", None);
        check("46659", None);
        check("", None);
        check("0\n/devtools/browser/x\n", None);
        check("abc\n/devtools/browser/x\n", None);
        check("9222\n/devtools/page/x\n", None);
    }

    #[test]
    fn flags_keep_the_browser_quiet_and_sized() {
        let args = base_args(Path::new("/tmp/p"), (1024, 700), &Isolation::Host);
        for flag in [
            "--headless",
            "--remote-debugging-pipe",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--no-first-run",
            "--user-data-dir=/tmp/p",
            "--window-size=1024,700",
        ] {
            assert!(args.iter().any(|a| a == flag), "missing {flag}");
        }
        assert!(
            !args
                .iter()
                .any(|a| a.starts_with("--remote-debugging-port")),
            "a DevTools port: {args:?}"
        );
        let root = rustix::process::geteuid().is_root();
        assert_eq!(args.iter().any(|a| a == "--no-sandbox"), root);
        // In a jail the browser keeps its own sandbox, whoever this process is.
        let jailed = Isolation::Jail {
            host_uid: 3_000_000,
            limits: String::new(),
        };
        let args = base_args(Path::new("/scratch/p"), (1024, 700), &jailed);
        assert!(!args.iter().any(|a| a == "--no-sandbox"), "{args:?}");
    }

    #[test]
    fn the_environment_is_whole_and_holds_no_credential() {
        let env = browser_env(
            Path::new("/jail/home"),
            Path::new(DEBIAN_WRAPPER),
            Path::new(DEBIAN_BINARY),
        );
        let get = |name: &str| {
            env.iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        assert_eq!(get("HOME").as_deref(), Some("/jail/home"));
        assert_eq!(get("PATH").as_deref(), Some(BROWSER_PATH));
        assert!(get("LANG").is_some());
        assert_eq!(get("CHROME_WRAPPER").as_deref(), Some(DEBIAN_WRAPPER));
        for (name, _) in &env {
            let name = name.to_string_lossy();
            assert!(
                ["PATH", "HOME", "CHROME_WRAPPER", "CHROME_DESKTOP"].contains(&name.as_ref())
                    || PASSED_ON.contains(&name.as_ref()),
                "{name} is not one of the browser's variables"
            );
            assert!(!hands_core::process::looks_like_credential(&name));
        }
        // The binary named directly gets no wrapper variables.
        let direct = browser_env(Path::new("/h"), Path::new("/opt/c"), Path::new("/opt/c"));
        assert!(!direct.iter().any(|(n, _)| n == "CHROME_WRAPPER"));
    }

    #[tokio::test]
    async fn a_missing_binary_says_so() {
        let config = LaunchConfig {
            program: PathBuf::from("/nonexistent/chromium"),
            ..LaunchConfig::default()
        };
        let err = Chromium::launch(&config).await.unwrap_err();
        assert!(matches!(err, LaunchError::Missing { .. }), "{err:?}");
        assert!(err.to_string().contains("install Chromium"));
    }

    /// An executable script standing in for the browser.
    fn fake_browser(name: &str, body: &str) -> PathBuf {
        let script = std::env::temp_dir().join(format!("hands-{name}-{}", std::process::id()));
        std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        script
    }

    #[tokio::test]
    async fn a_browser_that_dies_reports_its_status_and_output() {
        // It says why on stderr and exits 3 without answering on the pipe.
        let script = fake_browser("dying", "echo \"no GPU for $HOME\" >&2; exit 3");
        let config = LaunchConfig {
            program: script.clone(),
            ..LaunchConfig::default()
        };
        let err = Chromium::launch(&config).await.unwrap_err();
        std::fs::remove_file(&script).unwrap();
        match err {
            LaunchError::Exited {
                status,
                stderr_tail,
            } => {
                assert_eq!(status, "exit status 3");
                assert!(
                    stderr_tail.starts_with("no GPU for /")
                        && stderr_tail.contains("chromium-home"),
                    "{stderr_tail}"
                );
            }
            other => panic!("expected Exited, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_browser_that_never_answers_is_not_ready_in_time_and_is_killed() {
        let script = fake_browser("silent", "echo $$ >&2; exec sleep 30");
        let config = LaunchConfig {
            program: script.clone(),
            ready_timeout: Duration::from_millis(500),
            ..LaunchConfig::default()
        };
        let err = Chromium::launch(&config).await.unwrap_err();
        std::fs::remove_file(&script).unwrap();
        let LaunchError::NotReady { after, stderr_tail } = err else {
            panic!("expected NotReady, got {err:?}");
        };
        assert_eq!(after, Duration::from_millis(500));
        let pid: i32 = stderr_tail.trim().parse().unwrap();
        // Killed and reaped when the failed launch dropped it.
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "{pid} survived"
        );
    }
}
