//! A private Xvfb display: spawned on a free display number, ready when it says so, killed on drop.

use std::io::{BufRead as _, BufReader};
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use hands_core::geometry::Size;

use crate::X11Error;

/// How to start Xvfb.
#[derive(Debug, Clone)]
pub struct XvfbConfig {
    /// Screen size in pixels.
    pub size: Size,
    /// The `Xvfb` binary (default: `Xvfb` on `PATH`).
    pub program: PathBuf,
    /// Dots per inch reported to clients.
    pub dpi: u32,
    /// How long to wait for the server to report its display number.
    pub ready_timeout: Duration,
}

impl XvfbConfig {
    /// Defaults for a screen of `size`.
    pub fn new(size: Size) -> XvfbConfig {
        XvfbConfig {
            size,
            program: PathBuf::from("Xvfb"),
            dpi: 96,
            ready_timeout: Duration::from_secs(10),
        }
    }
}

/// A running Xvfb server owned by this process.
///
/// The server picks a free display number itself (`-displayfd`) and writes it once it accepts
/// connections, which is the ready check. It dies with this value, and with this process
/// (parent-death signal), so tests never leak servers.
#[derive(Debug)]
pub struct Xvfb {
    child: Child,
    display: String,
    size: Size,
}

impl Xvfb {
    /// Starts a server and waits until it is ready.
    pub fn spawn(config: &XvfbConfig) -> Result<Xvfb, X11Error> {
        let screen = format!("{}x{}x24", config.size.width, config.size.height);
        let mut command = Command::new(&config.program);
        command
            .args(["-displayfd", "1", "-screen", "0", &screen])
            .args(["-dpi", &config.dpi.to_string()])
            // No TCP; keep running when the last client leaves; no access-control file needed
            // for a server only this user's local clients can reach.
            .args(["-nolisten", "tcp", "-noreset"])
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        hands_core::process::scrub_credentials(&mut command);
        die_with_parent(&mut command);
        let mut child = command.spawn().map_err(|source| X11Error::Spawn {
            program: config.program.display().to_string(),
            source,
        })?;
        let stdout = child.stdout.take().ok_or_else(|| X11Error::XvfbNotReady {
            why: "no stdout pipe".into(),
        })?;
        let stderr = child.stderr.take();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let result = BufReader::new(stdout).read_line(&mut line).map(|_| line);
            let _ = tx.send(result);
        });
        let display = match rx.recv_timeout(config.ready_timeout) {
            Ok(Ok(line)) if line.trim().parse::<u32>().is_ok() => format!(":{}", line.trim()),
            other => {
                let _ = child.kill();
                let _ = child.wait();
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
        let ready = &display;
        tracing::debug!("Xvfb ready on {ready} at {}", config.size);
        Ok(Xvfb {
            child,
            display,
            size: config.size,
        })
    }

    /// The display name, e.g. `:93`.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// The screen size it was started with.
    pub fn size(&self) -> Size {
        self.size
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An X client program (a window manager, an editor) started on a display by this process and
/// killed when this value is dropped.
#[derive(Debug)]
pub struct XClient {
    child: Child,
    program: String,
}

impl XClient {
    /// Starts `program args…` with `DISPLAY=display`, in the current directory, output discarded.
    pub fn spawn(display: &str, program: &str, args: &[&str]) -> Result<XClient, X11Error> {
        let mut command = Command::new(program);
        command
            .args(args)
            .env("DISPLAY", display)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // A model that can run a command could read the client's environment.
        hands_core::process::scrub_credentials(&mut command);
        die_with_parent(&mut command);
        let child = command.spawn().map_err(|source| X11Error::Spawn {
            program: program.to_owned(),
            source,
        })?;
        Ok(XClient {
            child,
            program: program.to_owned(),
        })
    }

    /// Whether the program is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The program's name.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The program's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for XClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Has the child get SIGTERM when this process dies, so no X server or client outlives it.
fn die_with_parent(command: &mut Command) {
    // SAFETY: the closure runs in the child between fork and exec and only calls prctl, which
    // is async-signal-safe; it touches no memory of the parent.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::TERM))
                .map_err(std::io::Error::from)
        });
    }
}
