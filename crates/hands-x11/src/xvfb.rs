//! A private Xvfb display and the X clients started on it, every one through a
//! [`hands_jail::Launcher`]: on the host, or inside an episode's jail (issue 17, "X across the
//! boundary"; spec: Claude computer use, "Precauciones" 1, "una máquina virtual o contenedor
//! dedicado con privilegios mínimos").
//!
//! Nothing is inherited from this process: Xvfb and each client get the environment named in
//! [`XvfbConfig::env`] (a short allow-list of the host's variables by default), never a variable
//! that looks like a credential. Xvfb picks a free display number itself (`-displayfd` on a
//! piped stdout, the ready check), listens on no TCP port, and is reached by hands through a
//! stream the launcher connects from inside the environment ([`connect_passed_in`]): its socket
//! need not be visible on the host.

use std::ffi::OsString;
use std::io::{BufRead as _, BufReader};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use hands_core::geometry::Size;
use hands_jail::{ChildIo, HostLauncher, Launcher, Process, ProcessSpec, UnixAddress};
use x11rb::rust_connection::{DefaultStream, RustConnection};

use crate::X11Error;

/// The host variables a desktop's programs get by default, when set: what a graphical program
/// needs to find its binaries, its home, its language and its time zone. Nothing else: a host
/// runtime directory or D-Bus address would be a way out of a jail.
pub const BASE_VARIABLES: [&str; 10] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
];

/// `PATH` when this process has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The default environment of a desktop's programs: this process's [`BASE_VARIABLES`] that are
/// set (and `PATH`, with a default when unset).
pub fn base_environment() -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = BASE_VARIABLES
        .iter()
        .filter_map(|name| std::env::var_os(name).map(|value| (OsString::from(name), value)))
        .collect();
    if !env.iter().any(|(name, _)| name == "PATH") {
        env.push(("PATH".into(), DEFAULT_PATH.into()));
    }
    env
}

/// `env` without any variable whose name looks like a credential
/// ([`hands_core::process::looks_like_credential`]) but those named in `keep`.
fn without_credentials(env: &[(OsString, OsString)], keep: &[&str]) -> Vec<(OsString, OsString)> {
    env.iter()
        .filter(|(name, _)| {
            let name = name.to_string_lossy();
            keep.contains(&name.as_ref()) || !hands_core::process::looks_like_credential(&name)
        })
        .cloned()
        .collect()
}

/// How to start Xvfb.
#[derive(Debug, Clone)]
pub struct XvfbConfig {
    /// Screen size in pixels.
    pub size: Size,
    /// The `Xvfb` binary (default: `Xvfb` on the `PATH` of [`XvfbConfig::env`]).
    pub program: PathBuf,
    /// Dots per inch reported to clients.
    pub dpi: u32,
    /// How long to wait for the server to report its display number.
    pub ready_timeout: Duration,
    /// Where the server and its clients run: the host ([`HostLauncher`], the default) or an
    /// episode's jail.
    pub launcher: Arc<dyn Launcher>,
    /// The whole environment of the server and of its clients (which get `DISPLAY` on top).
    /// Any variable that looks like a credential is dropped whatever is set here. Default:
    /// [`base_environment`].
    pub env: Vec<(OsString, OsString)>,
}

impl XvfbConfig {
    /// Defaults for a screen of `size`, on the host.
    pub fn new(size: Size) -> XvfbConfig {
        XvfbConfig {
            size,
            program: PathBuf::from("Xvfb"),
            dpi: 96,
            ready_timeout: Duration::from_secs(10),
            launcher: Arc::new(HostLauncher),
            env: base_environment(),
        }
    }

    /// The same, run by `launcher`.
    pub fn with_launcher(mut self, launcher: Arc<dyn Launcher>) -> XvfbConfig {
        self.launcher = launcher;
        self
    }
}

/// A running Xvfb server this process started.
///
/// The server picks a free display number itself (`-displayfd`) and writes it once it accepts
/// connections, which is the ready check. It dies with this value (its process group is killed),
/// and with this process (the launcher's parent-death signal), so tests never leak servers.
#[derive(Debug)]
pub struct Xvfb {
    process: Process,
    number: u32,
    display: String,
    size: Size,
    clients: XClients,
}

impl Xvfb {
    /// Starts a server through `config.launcher` and waits until it is ready.
    pub fn spawn(config: &XvfbConfig) -> Result<Xvfb, X11Error> {
        let env = without_credentials(&config.env, &[]);
        let screen = format!("{}x{}x24", config.size.width, config.size.height);
        let spec = ProcessSpec::new(&config.program)
            .args(["-displayfd", "1", "-screen", "0", &screen])
            .args(["-dpi", &config.dpi.to_string()])
            // No TCP; keep running when the last client leaves. No access-control file: the
            // server is private to its environment (a jail's network namespace, or this user).
            .args(["-nolisten", "tcp", "-noreset"])
            .envs(env.iter().cloned())
            .cwd("/")
            .stdio(ChildIo::Null, ChildIo::Pipe, ChildIo::Pipe);
        let spawned = config.launcher.spawn(spec).map_err(|e| X11Error::Spawn {
            program: config.program.display().to_string(),
            source: e.into(),
        })?;
        let process = spawned.process;
        let stdout = spawned.stdout.ok_or_else(|| X11Error::XvfbNotReady {
            why: "the launcher gave no stdout pipe".into(),
        })?;
        let stderr = spawned.stderr.map(std::fs::File::from);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let result = BufReader::new(std::fs::File::from(stdout))
                .read_line(&mut line)
                .map(|_| line);
            let _ = tx.send(result);
        });
        let number = match rx.recv_timeout(config.ready_timeout) {
            Ok(Ok(line)) if line.trim().parse::<u32>().is_ok() => {
                line.trim().parse::<u32>().unwrap_or_default()
            }
            other => {
                let _ = process.kill();
                let mut why = match other {
                    Ok(Ok(line)) if line.is_empty() => "Xvfb exited before it was ready".to_owned(),
                    Ok(Ok(line)) => format!("unexpected output {line:?}"),
                    Ok(Err(e)) => e.to_string(),
                    Err(_) => format!("not ready after {:?}", config.ready_timeout),
                };
                if let Some(mut stderr) = stderr {
                    let mut text = String::new();
                    let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
                    if let Some(last) = text.lines().rev().find(|l| !l.trim().is_empty()) {
                        why = format!("{why}; Xvfb said: {last}");
                    }
                }
                return Err(X11Error::XvfbNotReady { why });
            }
        };
        // Keep draining stderr so a chatty server never blocks on a full pipe.
        if let Some(stderr) = stderr {
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    tracing::trace!(target: "hands_x11::xvfb", "{line}");
                }
            });
        }
        let display_name = format!(":{number}");
        tracing::debug!(
            isolation = %config.launcher.isolation(),
            display = %display_name,
            size = %config.size,
            "Xvfb ready"
        );
        let clients = XClients {
            launcher: Arc::clone(&config.launcher),
            display: display_name.clone(),
            env,
        };
        Ok(Xvfb {
            process,
            number,
            display: display_name,
            size: config.size,
            clients,
        })
    }

    /// The display name, e.g. `:93` (as programs in the server's environment name it).
    pub fn display(&self) -> &str {
        &self.display
    }

    /// The display number, e.g. 93.
    pub fn number(&self) -> u32 {
        self.number
    }

    /// The screen size it was started with.
    pub fn size(&self) -> Size {
        self.size
    }

    /// The server's process id as its environment sees it (in a jail, the jail's pid namespace).
    pub fn pid(&self) -> u32 {
        self.process.id()
    }

    /// The server's process id on the host, when the launcher knows it.
    pub fn host_pid(&self) -> Option<u32> {
        self.process.host_id()
    }

    /// The launcher the server runs under.
    pub fn launcher(&self) -> &Arc<dyn Launcher> {
        &self.clients.launcher
    }

    /// How to start clients on this display, in the server's environment.
    pub fn clients(&self) -> XClients {
        self.clients.clone()
    }

    /// Starts `program args…` on this display ([`XClients::spawn`]).
    pub fn spawn_client(&self, program: &str, args: &[&str]) -> Result<XClient, X11Error> {
        self.clients.spawn(program, args)
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.process.kill();
    }
}

/// Connects to display `number` from inside `launcher`'s environment and builds an X connection
/// on that stream (screen 0): its abstract socket first (which belongs to the environment's
/// network namespace), its socket file then. No authorization is sent: the server is private to
/// its environment.
pub(crate) fn connect_passed_in(
    launcher: &dyn Launcher,
    number: u32,
) -> Result<RustConnection, X11Error> {
    let path = format!("/tmp/.X11-unix/X{number}");
    let display = format!(":{number}");
    let connect_error = |source: std::io::Error| X11Error::Connect {
        display: display.clone(),
        source: x11rb::errors::ConnectError::IoError(source),
    };
    let fd = match launcher.connect_unix(&UnixAddress::Abstract(path.clone().into_bytes())) {
        Ok(fd) => fd,
        Err(abstract_error) => {
            tracing::debug!(
                error = %abstract_error,
                "no abstract X socket {path:?}; trying the socket file"
            );
            launcher
                .connect_unix(&UnixAddress::Path(PathBuf::from(&path)))
                .map_err(connect_error)?
        }
    };
    let (stream, _peer) =
        DefaultStream::from_unix_stream(UnixStream::from(fd)).map_err(connect_error)?;
    RustConnection::connect_to_stream(stream, 0).map_err(|source| X11Error::Connect {
        display: display.clone(),
        source,
    })
}

/// How to start X clients on one display: the launcher they run under and the environment they
/// get (`DISPLAY` and the desktop's variables, no credential). Cloning shares the launcher.
#[derive(Debug, Clone)]
pub struct XClients {
    launcher: Arc<dyn Launcher>,
    display: String,
    env: Vec<(OsString, OsString)>,
}

impl XClients {
    /// Clients of a display this process attached to (`$DISPLAY`), on the host: the
    /// [`base_environment`], and `XAUTHORITY` when this process has it (an attached display may
    /// need its cookie).
    pub fn attached(display: &str) -> XClients {
        let mut env = base_environment();
        if let Some(file) = std::env::var_os("XAUTHORITY") {
            env.push(("XAUTHORITY".into(), file));
        }
        XClients {
            launcher: Arc::new(HostLauncher),
            display: display.to_owned(),
            env,
        }
    }

    /// The display they start on, e.g. `:93`.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// The launcher they start through.
    pub fn launcher(&self) -> &Arc<dyn Launcher> {
        &self.launcher
    }

    /// Starts `program args…` with the environment named here, `/` as its directory and output
    /// discarded; it is killed (with its process group) when the [`XClient`] is dropped.
    pub fn spawn(&self, program: &str, args: &[&str]) -> Result<XClient, X11Error> {
        // A model that can run a command could read the client's environment.
        let env = without_credentials(&self.env, &hands_core::process::DISPLAY_ACCESS);
        let spec = ProcessSpec::new(program)
            .args(args.iter().copied())
            .envs(env)
            .env("DISPLAY", &self.display)
            .cwd("/")
            .stdio(ChildIo::Null, ChildIo::Null, ChildIo::Null);
        let spawned = self.launcher.spawn(spec).map_err(|e| X11Error::Spawn {
            program: program.to_owned(),
            source: e.into(),
        })?;
        Ok(XClient {
            process: spawned.process,
            program: program.to_owned(),
        })
    }
}

/// An X client program (a window manager, an editor) started on a display by [`XClients`] and
/// killed, with its process group, when this value is dropped.
#[derive(Debug)]
pub struct XClient {
    process: Process,
    program: String,
}

impl XClient {
    /// Whether the program is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.process.try_wait(), Ok(None))
    }

    /// The program's name.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The program's process id as its environment sees it (in a jail, the jail's pid
    /// namespace).
    pub fn pid(&self) -> u32 {
        self.process.id()
    }

    /// The program's process id on the host, when the launcher knows it.
    pub fn host_pid(&self) -> Option<u32> {
        self.process.host_id()
    }
}

impl Drop for XClient {
    fn drop(&mut self) {
        let _ = self.process.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_dropped_but_display_access_when_asked() {
        let env: Vec<(OsString, OsString)> = [
            ("PATH", "/bin"),
            ("OPENAI_API_KEY", "k"),
            ("GITHUB_TOKEN", "t"),
            ("XAUTHORITY", "/x"),
            ("LANG", "C.UTF-8"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
        let names = |env: Vec<(OsString, OsString)>| -> Vec<String> {
            env.into_iter()
                .map(|(k, _)| k.to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names(without_credentials(&env, &[])), ["PATH", "LANG"]);
        assert_eq!(
            names(without_credentials(&env, &["XAUTHORITY"])),
            ["PATH", "XAUTHORITY", "LANG"]
        );
    }

    #[test]
    fn the_base_environment_names_only_allowed_variables_and_always_a_path() {
        let env = base_environment();
        assert!(env.iter().any(|(k, _)| k == "PATH"));
        for (name, _) in &env {
            assert!(
                BASE_VARIABLES.contains(&name.to_string_lossy().as_ref()),
                "{name:?}"
            );
        }
    }
}
