//! The shell process: one `/bin/bash` started through the configured
//! [`hands_jail::Launcher`] in its own process group, fed commands on stdin, read until a
//! per-command marker on stdout and stderr, killed with its whole group on drop.
//!
//! The launcher decides where the shell runs (the host for `--sandbox none`, the episode's jail
//! otherwise: issue 17 item 1); this file only names what it starts (the program, the
//! environment the allow-list admits, the working directory as the shell sees it) and talks to
//! it through the three pipes the launcher hands back. Spec: claude-computer-use-tool, the bash
//! tool (`bash_20250124`).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher as _, Hasher as _};
use std::process::ExitStatus;
use std::time::Duration;

use hands_jail::{ChildIo, Isolation, Process, ProcessSpec, Signal};
use tokio::io::AsyncWriteExt as _;
use tokio::net::unix::pipe;
use tokio_util::sync::CancellationToken;

use super::BashConfig;
use super::capture::{self, MarkedStream, StreamText};

/// The variables the wrapper uses in the shell. A user command can see them; their names make
/// a clash unlikely.
const CMD_VAR: &str = "__hands_cmd";
const STATUS_VAR: &str = "__hands_status";

/// How long to wait for the stderr marker once the stdout marker came. The wrapper prints the
/// stderr marker first, so it is already in the pipe; this bound only matters when a command
/// redirected the shell's own stderr away (`exec 2>/dev/null`).
const STDERR_GRACE: Duration = Duration::from_secs(1);

/// How long to read what is left in the pipes once the group is killed.
const DRAIN_BOUND: Duration = Duration::from_secs(2);

/// How often a running command checks whether the shell itself has exited. The launcher's
/// `try_wait` does not block; a shell that exits usually closes stdout first, so this only
/// bounds the case where a background job still holds the pipes.
const EXIT_POLL: Duration = Duration::from_millis(25);

/// How one command ended.
#[derive(Debug)]
pub(crate) enum RunEnd {
    /// The command finished; the shell waits for the next one.
    Done {
        stdout: StreamText,
        stderr: StreamText,
        exit_status: i32,
    },
    /// The timeout passed; the group is killed.
    TimedOut {
        stdout: StreamText,
        stderr: StreamText,
    },
    /// The caller cancelled; the group is killed.
    Cancelled {
        stdout: StreamText,
        stderr: StreamText,
    },
    /// The shell itself exited (`exit`, `set -e`, a signal); the group is killed.
    ShellExited {
        stdout: StreamText,
        stderr: StreamText,
        status: Option<ExitStatus>,
    },
}

/// A running shell. Owned by the bash tool from start to restart; dropping it kills the whole
/// process group (the shell, the command it runs, background jobs).
#[derive(Debug)]
pub(crate) struct Session {
    /// The shell as its launcher started it; `Some` until the session is dropped, when it is
    /// handed to a blocking thread so its reaping never holds up the runtime.
    process: Option<Process>,
    stdin: pipe::Sender,
    stdout: MarkedStream<pipe::Receiver>,
    stderr: MarkedStream<pipe::Receiver>,
    /// A random token unique to this session; with `n_commands` it makes each marker.
    token: String,
    n_commands: u64,
    cap_chars: usize,
}

/// What the shell is started with: `SHELL --noprofile --norc`, three pipes, the environment
/// the allow-list admits plus the configured variables, and the configured working directory.
pub(crate) fn shell_spec(config: &BashConfig) -> ProcessSpec {
    // Nothing of the caller's environment but what the allow-list admits: no credential, and
    // no `BASH_ENV` / `ENV` (which a non-interactive bash would source) unless the
    // configuration sets one explicitly.
    let mut spec = ProcessSpec::new(&config.shell)
        .args(["--noprofile", "--norc"])
        .stdio(ChildIo::Pipe, ChildIo::Pipe, ChildIo::Pipe)
        .envs(config.inherit.select(std::env::vars_os()))
        .envs(config.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    match &config.working_dir {
        Some(dir) => spec = spec.cwd(dir),
        // Unset: on the host the caller's directory, as before launchers; anywhere else the
        // launcher's default (`/`), since the caller's path means nothing there.
        None if config.launcher.isolation() == Isolation::Host => {
            if let Ok(dir) = std::env::current_dir() {
                spec = spec.cwd(dir);
            }
        }
        None => {}
    }
    spec
}

impl Session {
    /// Starts the shell through the configured launcher: no profile, no rc file, stdin a pipe,
    /// in a new process group.
    pub(crate) fn start(config: &BashConfig) -> std::io::Result<Self> {
        let spawned = config.launcher.spawn(shell_spec(config))?;
        let process = spawned.process;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (spawned.stdin, spawned.stdout, spawned.stderr)
        else {
            return Err(std::io::Error::other("the shell's pipes were not set up"));
        };
        // `from_owned_fd` checks each is a pipe and makes our end non-blocking (the child's
        // ends are separate open files and stay as they are).
        let stdin = pipe::Sender::from_owned_fd(stdin)?;
        let stdout = pipe::Receiver::from_owned_fd(stdout)?;
        let stderr = pipe::Receiver::from_owned_fd(stderr)?;
        let cap_chars = config.max_output_chars;
        Ok(Self {
            process: Some(process),
            stdin,
            stdout: MarkedStream::new(stdout, cap_chars),
            stderr: MarkedStream::new(stderr, cap_chars),
            token: random_token(),
            n_commands: 0,
            cap_chars,
        })
    }

    /// Runs one command to its end, the timeout, the caller's cancellation or the shell's death.
    ///
    /// After anything but [`RunEnd::Done`] the process group is dead and the session must be
    /// dropped.
    pub(crate) async fn run(
        &mut self,
        command: &str,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> RunEnd {
        self.n_commands += 1;
        let script = wrap(command, &self.token, self.n_commands);
        let marker = format!("{}_{}", self.token, self.n_commands);
        let stdout_marker = format!("{marker}_out ");
        let stderr_marker = format!("{marker}_err");

        let process = self.process.clone();
        let Self {
            stdin,
            stdout,
            stderr,
            ..
        } = self;
        let exchange = async {
            stdin.write_all(script.as_bytes()).await?;
            stdin.flush().await?;
            read_markers(stdout, stderr, &stdout_marker, &stderr_marker).await
        };
        let end = tokio::select! {
            biased;
            () = cancel.cancelled() => Ending::Cancelled,
            result = exchange => match result {
                Ok(Some(status)) => Ending::Done(status),
                // End of stdout or a broken stdin: the shell is gone.
                Ok(None) | Err(_) => Ending::ShellGone,
            },
            () = exited(process.as_ref()) => Ending::ShellGone,
            () = tokio::time::sleep(timeout) => Ending::TimedOut,
        };

        match end {
            Ending::Done(exit_status) => {
                let (stdout, stderr) = self.take_output();
                RunEnd::Done {
                    stdout,
                    stderr,
                    exit_status,
                }
            }
            Ending::TimedOut => {
                let (stdout, stderr) = self.kill_and_drain().await;
                RunEnd::TimedOut { stdout, stderr }
            }
            Ending::Cancelled => {
                let (stdout, stderr) = self.kill_and_drain().await;
                RunEnd::Cancelled { stdout, stderr }
            }
            Ending::ShellGone => {
                let (stdout, stderr) = self.kill_and_drain().await;
                let status = match process {
                    // `wait_timeout` blocks: on a blocking thread, never the runtime's.
                    Some(process) => {
                        tokio::task::spawn_blocking(move || process.wait_timeout(DRAIN_BOUND))
                            .await
                            .ok()
                            .and_then(Result::ok)
                            .flatten()
                    }
                    None => None,
                };
                RunEnd::ShellExited {
                    stdout,
                    stderr,
                    status,
                }
            }
        }
    }

    /// Kills the group, then reads what is left in the pipes, so the model sees the command's
    /// last words. Once every writer is dead the pipes end at once; the bound only matters if
    /// a process left the group (`setsid`) and still holds them.
    async fn kill_and_drain(&mut self) -> (StreamText, StreamText) {
        self.kill();
        let Self { stdout, stderr, .. } = self;
        let _ = tokio::time::timeout(DRAIN_BOUND, async {
            let _ = tokio::join!(stdout.drain(), stderr.drain());
        })
        .await;
        // After a bounded drain, bytes still held back as a possible marker are output too.
        self.stdout.flush();
        self.stderr.flush();
        self.take_output()
    }

    /// The current command's output, cut at the cap; starts a fresh capture.
    fn take_output(&mut self) -> (StreamText, StreamText) {
        let out = self.stdout.take_capture(self.cap_chars);
        let err = self.stderr.take_capture(self.cap_chars);
        capture::finish(out, err, self.cap_chars)
    }

    /// Kills the whole process group through the launcher: the shell, its command and
    /// background jobs. Does not wait.
    pub(crate) fn kill(&mut self) {
        if let Some(process) = &self.process {
            // ESRCH (the group is already gone) is the only expected failure and needs nothing.
            let _ = process.signal_group(Signal::KILL);
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.kill();
        let Some(process) = self.process.take() else {
            return;
        };
        // The last handle's drop reaps the shell, which may wait a moment for the kill to land:
        // on a blocking thread when there is a runtime, so a dropped call never stalls it.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(move || drop(process));
            }
            Err(_) => drop(process),
        }
    }
}

/// Resolves once the shell has exited, checking every [`EXIT_POLL`] (`try_wait` does not
/// block). Never resolves when the status cannot be read, so stdout's end decides instead.
async fn exited(process: Option<&Process>) {
    let Some(process) = process else {
        return std::future::pending().await;
    };
    loop {
        match process.try_wait() {
            Ok(Some(_)) => return,
            Ok(None) => tokio::time::sleep(EXIT_POLL).await,
            Err(_) => return std::future::pending().await,
        }
    }
}

enum Ending {
    Done(i32),
    TimedOut,
    Cancelled,
    ShellGone,
}

/// Reads stdout up to its marker and stderr up to its own; returns the command's exit status,
/// or `None` when stdout ended (the shell died).
async fn read_markers(
    stdout: &mut MarkedStream<pipe::Receiver>,
    stderr: &mut MarkedStream<pipe::Receiver>,
    stdout_marker: &str,
    stderr_marker: &str,
) -> std::io::Result<Option<i32>> {
    let mut stderr_done = false;
    let mut out_fut = std::pin::pin!(stdout.read_to_marker(stdout_marker.as_bytes()));
    let mut err_fut = std::pin::pin!(stderr.read_to_marker(stderr_marker.as_bytes()));
    let status_line = loop {
        tokio::select! {
            line = &mut out_fut => break line?,
            line = &mut err_fut, if !stderr_done => {
                // End of stderr alone proves nothing (a command may close it); stdout decides.
                let _ = line?;
                stderr_done = true;
            }
        }
    };
    let Some(status_line) = status_line else {
        return Ok(None);
    };
    if !stderr_done {
        // Printed before the stdout marker, so it is in the pipe already.
        let _ = tokio::time::timeout(STDERR_GRACE, &mut err_fut).await;
    }
    let status = String::from_utf8_lossy(&status_line)
        .trim()
        .parse()
        .unwrap_or(-1);
    Ok(Some(status))
}

/// The text sent to the shell for one command.
///
/// The command travels as a single-quoted string and runs through `eval`, so nothing in it (an
/// unclosed quote, a stray `}`, a heredoc) can swallow the lines that follow: a syntax error
/// is the command's own error, reported on stderr with status 2. `eval` runs in the shell
/// itself, so `cd`, exported variables and functions persist. Its stdin is `/dev/null`: the
/// shell's stdin is the pipe of commands, and a command reading stdin (`cat`, `read`) must see
/// end of input, not the next command. The markers are printed with the token split in the
/// source (`printf '%s_%s…' token n`), so echoing the source (`set -v`, `set -x`) never shows a
/// marker; the stderr marker goes first so it is in its pipe before stdout's marker appears.
/// Each step names `builtin`, so a user function called `printf` or `eval` cannot break it.
fn wrap(command: &str, token: &str, n: u64) -> String {
    format!(
        "{CMD_VAR}={quoted}\n\
         builtin eval \"${CMD_VAR}\" </dev/null\n\
         {STATUS_VAR}=$?\n\
         builtin unset {CMD_VAR}\n\
         builtin printf '%s_%s_err\\n' {token} {n} >&2\n\
         builtin printf '%s_%s_out %s\\n' {token} {n} \"${STATUS_VAR}\"\n\
         builtin unset {STATUS_VAR}\n",
        quoted = single_quote(command)
    )
}

/// `it's` → `'it'\''s'`: a shell word that is exactly `text`.
fn single_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// A random token from the standard library's per-process random hasher keys.
fn random_token() -> String {
    let a = RandomState::new().build_hasher().finish();
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(a);
    format!("__hands_{a:016x}{:016x}", hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_quoting() {
        let cases = [
            ("", "''"),
            ("ls -la", "'ls -la'"),
            ("it's", "'it'\\''s'"),
            ("a\nb", "'a\nb'"),
            ("$HOME \"x\" `y`", "'$HOME \"x\" `y`'"),
        ];
        for (text, want) in cases {
            assert_eq!(single_quote(text), want, "{text:?}");
        }
    }

    #[test]
    fn markers_never_appear_in_the_sent_script() {
        let script = wrap("echo hi", "__hands_tok", 7);
        assert!(!script.contains("__hands_tok_7_out"));
        assert!(!script.contains("__hands_tok_7_err"));
        assert!(script.contains("builtin eval \"$__hands_cmd\" </dev/null"));
    }

    #[test]
    fn tokens_differ() {
        assert_ne!(random_token(), random_token());
    }
}
