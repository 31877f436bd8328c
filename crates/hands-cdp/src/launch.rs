//! The Chromium process: spawned headless on a fresh profile, found through its `DevToolsActivePort` file, killed with its whole process group on drop.

use std::collections::VecDeque;
use std::io::{BufRead as _, BufReader};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;

/// How many of the browser's last stderr lines are kept for error reports.
const STDERR_TAIL_LINES: usize = 12;

/// Where Chromium and its optional wrapper live, how big its window is, how long to wait for it.
#[derive(Debug, Clone)]
pub struct LaunchConfig {
    /// The browser program (Debian's wrapper script by default, which `exec`s the real binary).
    pub program: PathBuf,
    /// Viewport width and height in CSS pixels (the window size; pages also get a device-metrics
    /// override of the same size so screenshots are exactly this big).
    pub viewport: (u32, u32),
    /// How long to wait for the DevTools endpoint to appear.
    pub ready_timeout: Duration,
    /// Flags added after the built-in ones. A second `--disable-features` replaces the built-in
    /// list rather than adding to it.
    pub extra_args: Vec<String>,
    /// Run the browser under `setpriv --pdeathsig KILL` so it dies with this process even when
    /// this process is killed without running destructors. Skipped when `setpriv` is missing.
    pub parent_death_signal: bool,
    /// Directory under which the temporary profile is created (the system temp dir when `None`).
    pub profile_parent: Option<PathBuf>,
    /// Open a first tab (`about:blank`) as the browser starts; without, `--no-startup-window`
    /// (and [`crate::CdpBrowser::launch`] makes the first tab itself, attached paused like every
    /// later one). On by default: the browser makes its first tab while it starts, which was as
    /// fast or faster than making it after connecting (measured, 8 launches each).
    pub first_tab: bool,
}

impl Default for LaunchConfig {
    /// `/usr/bin/chromium`, a 1280x800 viewport (the size the design's numbers were measured at),
    /// 20 s to start.
    fn default() -> LaunchConfig {
        LaunchConfig {
            program: PathBuf::from("/usr/bin/chromium"),
            viewport: (1280, 800),
            ready_timeout: Duration::from_secs(20),
            extra_args: Vec::new(),
            parent_death_signal: true,
            profile_parent: None,
            first_tab: true,
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
    /// The temporary profile directory could not be created.
    #[error("could not create a browser profile directory under {parent}: {source}")]
    Profile {
        /// Where it was to be created.
        parent: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The browser exited before its DevTools endpoint was ready.
    #[error("the browser exited before it was ready ({status}); its last output: {stderr_tail}")]
    Exited {
        /// The exit status.
        status: String,
        /// The last lines it wrote to stderr.
        stderr_tail: String,
    },
    /// The endpoint did not appear in time.
    #[error(
        "the browser did not open its DevTools endpoint within {after:?}; its last output: {stderr_tail}"
    )]
    NotReady {
        /// How long we waited.
        after: Duration,
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
/// document), and the DevTools endpoint on a port the OS picks.
pub fn base_args(profile: &Path, viewport: (u32, u32)) -> Vec<String> {
    let mut args: Vec<String> = [
        "--headless",
        "--remote-debugging-port=0",
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
    // The sandbox needs user namespaces that root does not get; only then is it turned off.
    if rustix::process::geteuid().is_root() {
        args.push("--no-sandbox".to_owned());
    }
    args
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

/// A fresh profile directory, removed (with everything the browser wrote) on drop.
#[derive(Debug)]
struct Profile {
    path: PathBuf,
}

impl Profile {
    fn create(parent: Option<&Path>) -> Result<Profile, LaunchError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let parent = parent.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let mut last_error = None;
        for _ in 0..16 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let name = format!(
                "hands-chromium-{}-{}-{nanos:x}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            );
            let path = parent.join(name);
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(Profile { path }),
                Err(e) => last_error = Some(e),
            }
        }
        Err(LaunchError::Profile {
            parent: parent.display().to_string(),
            source: last_error.unwrap_or_else(|| std::io::Error::other("no attempt made")),
        })
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

impl Profile {
    fn write_preferences(&self) -> Result<(), LaunchError> {
        let dir = self.path.join("Default");
        std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join("Preferences"), PROFILE_PREFERENCES))
            .map_err(|source| LaunchError::Profile {
                parent: dir.display().to_string(),
                source,
            })
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            tracing::warn!(path = %self.path.display(), error = %e, "could not remove the browser profile");
        }
    }
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

/// How the browser process ended, once it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// The exit status, as text (`exit status 1`, `killed by signal 9`).
    pub status: String,
    /// The last lines the browser wrote to stderr.
    pub stderr_tail: String,
}

/// A running Chromium that this process started and owns.
///
/// Owned by the driver for the whole session. Dropping it kills the browser's whole process group
/// (browser, zygote, renderers, GPU and utility processes), waits for it, and deletes the profile.
#[derive(Debug)]
pub struct Chromium {
    pid: rustix::process::Pid,
    ws_url: String,
    exit: watch::Receiver<Option<Exit>>,
    tail: StderrTail,
    reaper: Option<std::thread::JoinHandle<()>>,
    profile: Option<Profile>,
    viewport: (u32, u32),
}

impl Chromium {
    /// Starts the browser and waits until its DevTools endpoint is written.
    ///
    /// The port is read from `DevToolsActivePort` in the profile directory, which does not depend
    /// on the locale of the browser's console messages.
    pub async fn launch(config: &LaunchConfig) -> Result<Chromium, LaunchError> {
        let program = config.program.display().to_string();
        if !config.program.exists() {
            return Err(LaunchError::Missing { program });
        }
        let profile = Profile::create(config.profile_parent.as_deref())?;
        profile.write_preferences()?;
        let mut args = base_args(&profile.path, config.viewport);
        args.extend(config.extra_args.iter().cloned());
        if config.first_tab {
            args.push("about:blank".to_owned());
        } else {
            args.push("--no-startup-window".to_owned());
        }

        let binary = direct_binary(&config.program);
        let setpriv = Path::new("/usr/bin/setpriv");
        let mut command = if config.parent_death_signal && setpriv.exists() {
            let mut command = Command::new(setpriv);
            command.args(["--pdeathsig", "KILL", "--"]).arg(&binary);
            command
        } else {
            Command::new(&binary)
        };
        if binary != config.program {
            // What Debian's wrapper would have told the browser about itself.
            command
                .env("CHROME_WRAPPER", &config.program)
                .env("CHROME_DESKTOP", "chromium.desktop");
        }
        // Pages cannot read the environment, but a model that can run a command could read the
        // browser's (`/proc/<pid>/environ`): no credential of this process reaches it.
        hands_core::process::scrub_credentials(&mut command);
        command
            .args(&args)
            .current_dir("/")
            // A process group of its own, so the whole tree can be killed at once.
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());

        // The parent-death signal fires when the *thread* that forked the browser exits, so the
        // fork happens on a thread that lives exactly as long as the browser: it spawns, then
        // waits for the exit and publishes it.
        let (exit_tx, exit_rx) = watch::channel(None);
        let (spawned_tx, spawned_rx) = std::sync::mpsc::channel();
        let tail = StderrTail::default();
        let reaper_tail = tail.clone();
        let reaper = std::thread::Builder::new()
            .name("hands-chromium".into())
            .spawn(move || {
                let mut child = match command.spawn() {
                    Ok(child) => child,
                    Err(e) => {
                        let _ = spawned_tx.send(Err(e));
                        return;
                    }
                };
                if let Some(stderr) = child.stderr.take() {
                    let tail = reaper_tail.clone();
                    let _ = std::thread::Builder::new()
                        .name("hands-chromium-stderr".into())
                        .spawn(move || {
                            for line in BufReader::new(stderr).lines() {
                                match line {
                                    Ok(line) if !line.trim().is_empty() => tail.push(line),
                                    Ok(_) => {}
                                    Err(_) => break,
                                }
                            }
                        });
                }
                let _ = spawned_tx.send(Ok(child.id()));
                let status = child.wait();
                // Give the stderr reader a moment to take the last lines of a crash.
                std::thread::sleep(Duration::from_millis(20));
                let status = match status {
                    Ok(status) => describe_status(status),
                    Err(e) => format!("unknown: {e}"),
                };
                let _ = exit_tx.send(Some(Exit {
                    status,
                    stderr_tail: reaper_tail.text(),
                }));
            })
            .map_err(|source| LaunchError::Spawn {
                program: program.clone(),
                source,
            })?;
        let pid = match tokio::task::spawn_blocking(move || spawned_rx.recv()).await {
            Ok(Ok(Ok(pid))) => pid,
            Ok(Ok(Err(source))) => return Err(LaunchError::Spawn { program, source }),
            _ => {
                return Err(LaunchError::Spawn {
                    program,
                    source: std::io::Error::other("the spawning thread ended"),
                });
            }
        };
        let pid = rustix::process::Pid::from_raw(pid as i32).ok_or_else(|| LaunchError::Spawn {
            program: program.clone(),
            source: std::io::Error::other("the OS returned pid 0"),
        })?;
        let mut chromium = Chromium {
            pid,
            ws_url: String::new(),
            exit: exit_rx,
            tail: tail.clone(),
            reaper: Some(reaper),
            profile: Some(profile),
            viewport: config.viewport,
        };
        chromium.ws_url = chromium.wait_ready(config.ready_timeout, &tail).await?;
        Ok(chromium)
    }

    async fn wait_ready(
        &mut self,
        timeout: Duration,
        tail: &StderrTail,
    ) -> Result<String, LaunchError> {
        let port_file = self
            .profile
            .as_ref()
            .map(|p| p.path.join("DevToolsActivePort"))
            .unwrap_or_default();
        let started = Instant::now();
        // The browser writes the file once, early; a short poll costs nothing next to the ~0.5 s
        // start-up and needs no inotify.
        let mut exit = self.exit.clone();
        loop {
            if let Ok(text) = tokio::fs::read_to_string(&port_file).await
                && let Some(url) = parse_active_port(&text)
            {
                return Ok(url);
            }
            if let Some(exit) = exit.borrow().clone() {
                return Err(LaunchError::Exited {
                    status: exit.status,
                    stderr_tail: exit.stderr_tail,
                });
            }
            if started.elapsed() >= timeout {
                return Err(LaunchError::NotReady {
                    after: timeout,
                    stderr_tail: tail.text(),
                });
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(10)) => {}
                _ = exit.changed() => {}
            }
        }
    }

    /// The browser's DevTools WebSocket URL (`ws://127.0.0.1:PORT/devtools/browser/ID`).
    pub fn ws_url(&self) -> &str {
        &self.ws_url
    }

    /// The temporary profile directory (removed on drop).
    pub fn profile_dir(&self) -> Option<&Path> {
        self.profile.as_ref().map(|p| p.path.as_path())
    }

    /// The viewport it was started with.
    pub fn viewport(&self) -> (u32, u32) {
        self.viewport
    }

    /// The browser process id.
    pub fn pid(&self) -> i32 {
        self.pid.as_raw_nonzero().get()
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

impl Drop for Chromium {
    fn drop(&mut self) {
        // Kill the whole group: the browser process alone would leave renderers and the zygote.
        let _ = rustix::process::kill_process_group(self.pid, rustix::process::Signal::KILL);
        if let Some(reaper) = self.reaper.take() {
            let _ = reaper.join();
        }
        // Only now is nothing writing into the profile any more.
        self.profile.take();
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

/// The WebSocket URL from a `DevToolsActivePort` file: the port on the first line, the browser
/// target's path on the second. `None` until both are there (the file may be read half-written).
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
        let args = base_args(Path::new("/tmp/p"), (1024, 700));
        for flag in [
            "--headless",
            "--remote-debugging-port=0",
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
        let root = rustix::process::geteuid().is_root();
        assert_eq!(args.iter().any(|a| a == "--no-sandbox"), root);
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

    #[tokio::test]
    async fn a_browser_that_dies_reports_its_status_and_output() {
        // `false` exits 1 at once without writing the port file.
        let config = LaunchConfig {
            program: PathBuf::from("/bin/false"),
            parent_death_signal: false,
            ..LaunchConfig::default()
        };
        let err = Chromium::launch(&config).await.unwrap_err();
        match err {
            LaunchError::Exited { status, .. } => assert_eq!(status, "exit status 1"),
            other => panic!("expected Exited, got {other:?}"),
        }
    }
}
