//! The bash tool `bash_20250124`: one shell session that persists across calls, with a
//! per-command timeout, an output cap, and stdout, stderr and the exit status kept apart.

mod capture;
pub mod env;
mod session;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hands_jail::{HostLauncher, Launcher};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::input::{self, InputError};
use crate::outcome::ToolOutcome;
use crate::strings;

pub use capture::StreamText;
pub use env::Inherit;
use session::{RunEnd, Session};

/// How the bash tool starts its shell and bounds each command.
#[derive(Debug, Clone)]
pub struct BashConfig {
    /// Where the shell runs: every start (and restart) goes through this launcher. Default
    /// [`HostLauncher`] (`--sandbox none`: on the host, as the caller); an episode's jail
    /// otherwise (issue 17 item 1). Paths below ([`BashConfig::shell`],
    /// [`BashConfig::working_dir`]) are as the launcher's programs see them.
    pub launcher: Arc<dyn Launcher>,
    /// The shell, started as `SHELL --noprofile --norc`. Default `/bin/bash`.
    pub shell: PathBuf,
    /// The shell's working directory at start, as the launcher's programs see it (an inside
    /// path). `None`: with the host launcher the caller's, with any other the launcher's
    /// default (`/`).
    pub working_dir: Option<PathBuf>,
    /// Which of the caller's variables the shell starts with. The default is an allow-list
    /// ([`env::SAFE_VARIABLES`]: `PATH`, `HOME`, the locale, `TERM`, `DISPLAY`…); a variable
    /// whose name looks like a credential (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, anything
    /// with `KEY`, `TOKEN`, `SECRET`, `PASS`, `AUTH`… in its name, see
    /// [`env::looks_like_credential`]) and `BASH_ENV` / `ENV` are never inherited, whatever
    /// the list says.
    pub inherit: Inherit,
    /// Variables set for the shell, after the inheritance above, as given: a credential set
    /// here is the caller's deliberate choice.
    pub env: Vec<(String, String)>,
    /// How long one command may run before the session is killed. Default 120 s, the
    /// reference demo's (anchors: computer-use §1).
    pub timeout: Duration,
    /// At most this many characters of output per command, stdout and stderr together.
    /// Default 16,000, the reference demo's.
    pub max_output_chars: usize,
}

impl BashConfig {
    /// The reference demo's per-command timeout.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
    /// The reference demo's output cap.
    pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 16_000;
}

impl Default for BashConfig {
    fn default() -> Self {
        Self {
            launcher: Arc::new(HostLauncher),
            shell: PathBuf::from("/bin/bash"),
            working_dir: None,
            inherit: Inherit::default(),
            env: Vec::new(),
            timeout: Self::DEFAULT_TIMEOUT,
            max_output_chars: Self::DEFAULT_MAX_OUTPUT_CHARS,
        }
    }
}

/// A validated bash tool input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BashInput {
    /// `{"command": "…"}`: run this in the session.
    Run {
        /// The command, free of NUL characters.
        command: String,
    },
    /// `{"restart": true}`: kill the session and start a fresh one.
    Restart,
}

impl BashInput {
    /// Parses a `tool_use` input. `restart: false` counts as absent; `restart: true` together
    /// with a `command` is refused rather than dropping the command as the reference does.
    pub fn parse(input: &Value) -> Result<Self, InputError> {
        let obj = input::object(input)?;
        let restart = input::opt_bool(obj, "restart")?.unwrap_or(false);
        let command = input::opt_str(obj, "command")?;
        match (restart, command) {
            (true, None) => Ok(Self::Restart),
            (true, Some(_)) => Err(InputError::RestartWithCommand),
            (false, None) => Err(InputError::NoBashCommand),
            (false, Some(command)) => {
                input::no_nul(command, "command")?;
                Ok(Self::Run {
                    command: command.to_owned(),
                })
            }
        }
    }
}

/// What one command printed and how it exited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    /// Standard output.
    pub stdout: StreamText,
    /// Standard error: not by itself a failure (compilers and `git` write progress there).
    pub stderr: StreamText,
    /// The command's exit status (`$?`; 128+n when a signal killed it).
    pub exit_status: i32,
}

impl CommandOutput {
    /// The text the model reads: stdout; then stderr inside `<stderr>…</stderr>` when there is
    /// any; then `<exit_status>N</exit_status>` when N is not 0, or when there is no output at
    /// all (so an empty answer still says the command ran). Ours: the reference joins nothing
    /// and drops stdout whenever stderr is not empty.
    pub fn text(&self) -> String {
        let mut parts = streams_text(&self.stdout, &self.stderr);
        if self.exit_status != 0 || parts.is_empty() {
            parts.push(format!("<exit_status>{}</exit_status>", self.exit_status));
        }
        parts.join("\n")
    }
}

fn streams_text(stdout: &StreamText, stderr: &StreamText) -> Vec<String> {
    let mut parts = Vec::new();
    if !stdout.text.is_empty() || stdout.n_cut_chars > 0 {
        parts.push(with_cut_note(stdout));
    }
    if !stderr.text.is_empty() || stderr.n_cut_chars > 0 {
        parts.push(format!("<stderr>\n{}\n</stderr>", with_cut_note(stderr)));
    }
    parts
}

fn with_cut_note(stream: &StreamText) -> String {
    if stream.n_cut_chars == 0 {
        stream.text.clone()
    } else {
        format!(
            "{}\n{}",
            stream.text,
            strings::output_cut(stream.n_cut_chars)
        )
    }
}

/// What a successful bash call did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BashReply {
    /// A command ran to its end (whatever its exit status).
    Output(CommandOutput),
    /// The session was restarted.
    Restarted,
}

impl BashReply {
    /// The text the model reads.
    pub fn text(&self) -> String {
        match self {
            Self::Output(output) => output.text(),
            Self::Restarted => strings::BASH_RESTARTED.to_owned(),
        }
    }
}

/// Why a bash call failed. After `TimedOut`, `Cancelled`, `ShellExited` and `MustRestart` the
/// session is dead until `{"restart": true}`; the other variants leave it as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BashError {
    /// The input was refused; nothing ran.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The shell could not be started.
    #[error("{}", strings::bash_spawn_failed(.shell, .source))]
    Spawn {
        /// The shell program.
        shell: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The command outlived the timeout; the session was killed.
    #[error("{}", strings::bash_timed_out(*.timeout))]
    TimedOut {
        /// The timeout.
        timeout: Duration,
        /// What the command printed before.
        stdout: StreamText,
        /// What it wrote to stderr before.
        stderr: StreamText,
    },
    /// The caller cancelled; the session was killed.
    #[error("{}", strings::BASH_CANCELLED)]
    Cancelled {
        /// What the command printed before.
        stdout: StreamText,
        /// What it wrote to stderr before.
        stderr: StreamText,
    },
    /// The caller had cancelled before the command was sent; the session is untouched.
    #[error("{}", strings::BASH_NOT_RUN)]
    CancelledBeforeStart,
    /// The shell itself exited (`exit`, `set -e`, killed).
    #[error("{}; {}", strings::bash_exited(exit_code_text(*.status)), strings::BASH_MUST_RESTART)]
    ShellExited {
        /// The shell's exit code, or `-N` for signal N; `None` if it could not be read.
        status: Option<i32>,
        /// What the command printed before.
        stdout: StreamText,
        /// What it wrote to stderr before.
        stderr: StreamText,
    },
    /// A command came while the session is dead from an earlier failure.
    #[error("{reason}")]
    MustRestart {
        /// The earlier failure's text.
        reason: String,
    },
}

fn exit_code_text(status: Option<i32>) -> String {
    status.map_or_else(|| "unknown".to_owned(), |code| code.to_string())
}

impl BashError {
    /// The text the model reads: the error, then whatever the command printed before.
    pub fn text(&self) -> String {
        let (stdout, stderr) = match self {
            Self::TimedOut { stdout, stderr, .. }
            | Self::Cancelled { stdout, stderr }
            | Self::ShellExited { stdout, stderr, .. } => (stdout, stderr),
            _ => return self.to_string(),
        };
        let mut parts = vec![self.to_string()];
        parts.extend(streams_text(stdout, stderr));
        parts.join("\n")
    }
}

/// The shell's life as the tool sees it.
#[derive(Debug)]
enum Shell {
    /// Not started yet, or its start failed: the next command starts it.
    NotStarted,
    Running(Box<Session>),
    /// Killed or exited; only `restart` brings it back. Holds the text of why.
    Dead(String),
}

/// The bash tool `bash_20250124`: a persistent shell session behind the `bash` tool name.
///
/// Spec: claude-computer-use-tool, quick start (declared beside the computer toolset);
/// anchors computer-use §1 for the reference's timeout, cap and known failures.
///
/// The shell starts at the first command. `cd`, exported variables and shell functions carry
/// over between calls. Background jobs (`server &`) do not hold up the answer: the command is
/// over when the shell prints its marker, not when the pipes close; a job's later output shows
/// up in whichever call is running when it arrives, so redirect it (`server >log 2>&1 &`) to
/// keep answers clean. Jobs die with the session (restart, timeout, cancel, drop), since the
/// whole process group is killed; a job that calls `setsid` leaves the group and survives.
/// The shell has no terminal: programs that need one fail or run until the timeout.
///
/// The shell starts from an environment with every credential removed ([`BashConfig::inherit`]):
/// a model that runs `env`, `echo $ANTHROPIC_API_KEY` or `cat /proc/self/environ` finds no API
/// key, token, secret or password of the caller's. Where the shell runs is the launcher's
/// ([`BashConfig::launcher`]): with the host launcher it runs as the calling user and can read
/// what that user can read, the environment of the user's other processes under `/proc`
/// included, unless they are non-dumpable (`hands run` makes itself so) or the user is root;
/// an episode's jail keeps it from the caller's files, network and processes (issue 17).
#[derive(Debug)]
pub struct BashTool {
    config: BashConfig,
    shell: Shell,
}

impl BashTool {
    /// A tool whose shell is not started yet.
    pub fn new(config: BashConfig) -> Self {
        Self {
            config,
            shell: Shell::NotStarted,
        }
    }

    /// The entry of the request's `tools` array: `{"type":"bash_20250124","name":"bash"}`.
    pub fn declaration(&self) -> Value {
        json!({"type": strings::BASH_TOOL_TYPE, "name": strings::BASH_TOOL_NAME})
    }

    /// Runs one `tool_use` input and answers it; every failure becomes an `is_error` outcome.
    pub async fn call(&mut self, input: &Value, cancel: &CancellationToken) -> ToolOutcome {
        match BashInput::parse(input) {
            Ok(bash_input) => self.answer(bash_input, cancel).await,
            Err(err) => ToolOutcome::error(BashError::from(err).text()),
        }
    }

    /// Runs one parsed input (e.g. once a person approved it) and answers it; every failure
    /// becomes an `is_error` outcome.
    pub async fn answer(&mut self, input: BashInput, cancel: &CancellationToken) -> ToolOutcome {
        match self.run(input, cancel).await {
            Ok(reply) => ToolOutcome::ok(reply.text()),
            Err(err) => ToolOutcome::error(err.text()),
        }
    }

    /// Runs one validated input.
    pub async fn run(
        &mut self,
        input: BashInput,
        cancel: &CancellationToken,
    ) -> Result<BashReply, BashError> {
        match input {
            BashInput::Restart => {
                // Dropping the old session kills its group before the new one starts.
                self.shell = Shell::NotStarted;
                self.shell = Shell::Running(Box::new(self.start()?));
                Ok(BashReply::Restarted)
            }
            BashInput::Run { command } => {
                if cancel.is_cancelled() {
                    // Nothing ran, so the session is left as it was.
                    return Err(BashError::CancelledBeforeStart);
                }
                let mut session = match std::mem::replace(&mut self.shell, Shell::NotStarted) {
                    Shell::Running(session) => session,
                    Shell::Dead(reason) => {
                        self.shell = Shell::Dead(reason.clone());
                        return Err(BashError::MustRestart { reason });
                    }
                    Shell::NotStarted => Box::new(self.start()?),
                };
                // If the caller drops this future mid-command, the session dies with it; the
                // next call must then say so rather than silently start a fresh shell.
                self.shell = Shell::Dead(strings::BASH_INTERRUPTED.to_owned());
                let end = session.run(&command, self.config.timeout, cancel).await;
                let err = match end {
                    RunEnd::Done {
                        stdout,
                        stderr,
                        exit_status,
                    } => {
                        self.shell = Shell::Running(session);
                        return Ok(BashReply::Output(CommandOutput {
                            stdout,
                            stderr,
                            exit_status,
                        }));
                    }
                    RunEnd::TimedOut { stdout, stderr } => BashError::TimedOut {
                        timeout: self.config.timeout,
                        stdout,
                        stderr,
                    },
                    RunEnd::Cancelled { stdout, stderr } => BashError::Cancelled { stdout, stderr },
                    RunEnd::ShellExited {
                        stdout,
                        stderr,
                        status,
                    } => BashError::ShellExited {
                        status: status.and_then(|s| {
                            use std::os::unix::process::ExitStatusExt as _;
                            s.code().or_else(|| s.signal().map(|n| -n))
                        }),
                        stdout,
                        stderr,
                    },
                };
                drop(session);
                self.shell = Shell::Dead(err.to_string());
                Err(err)
            }
        }
    }

    fn start(&self) -> Result<Session, BashError> {
        Session::start(&self.config).map_err(|source| BashError::Spawn {
            shell: self.config.shell.clone(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_inputs() {
        let run = |c: &str| {
            Ok(BashInput::Run {
                command: c.to_owned(),
            })
        };
        let cases: Vec<(Value, Result<BashInput, InputError>)> = vec![
            (json!({"command": "ls"}), run("ls")),
            (json!({"command": "ls", "restart": false}), run("ls")),
            (json!({"command": ""}), run("")),
            (json!({"restart": true}), Ok(BashInput::Restart)),
            (
                json!({"restart": true, "command": null}),
                Ok(BashInput::Restart),
            ),
            (json!({}), Err(InputError::NoBashCommand)),
            (json!({"restart": false}), Err(InputError::NoBashCommand)),
            (
                json!({"restart": true, "command": "ls"}),
                Err(InputError::RestartWithCommand),
            ),
            (
                json!({"command": 3}),
                Err(InputError::WrongType {
                    field: "command",
                    expected: "a string",
                    got: "a number",
                }),
            ),
            (
                json!({"restart": "yes"}),
                Err(InputError::WrongType {
                    field: "restart",
                    expected: "a boolean",
                    got: "a string",
                }),
            ),
            (
                json!(["ls"]),
                Err(InputError::NotAnObject { got: "an array" }),
            ),
            (
                json!({"command": "echo \u{0}"}),
                Err(InputError::NulCharacter { field: "command" }),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(BashInput::parse(&input), want, "{input}");
        }
    }

    #[test]
    fn input_error_texts() {
        assert_eq!(
            InputError::NoBashCommand.to_string(),
            strings::BASH_NO_COMMAND
        );
        assert_eq!(
            InputError::RestartWithCommand.to_string(),
            strings::BASH_RESTART_WITH_COMMAND
        );
    }

    fn stream(text: &str, n_cut_chars: u64) -> StreamText {
        StreamText {
            text: text.to_owned(),
            n_cut_chars,
        }
    }

    #[test]
    fn output_text() {
        let cases = [
            ((stream("hi", 0), stream("", 0), 0), "hi"),
            (
                (stream("", 0), stream("", 0), 0),
                "<exit_status>0</exit_status>",
            ),
            (
                (stream("", 0), stream("boom", 0), 2),
                "<stderr>\nboom\n</stderr>\n<exit_status>2</exit_status>",
            ),
            (
                (stream("out", 0), stream("warn", 0), 0),
                "out\n<stderr>\nwarn\n</stderr>",
            ),
            (
                (stream("yyy", 97), stream("", 0), 0),
                "yyy\n[output cut: 97 more characters not shown]",
            ),
        ];
        for ((stdout, stderr, exit_status), want) in cases {
            let output = CommandOutput {
                stdout,
                stderr,
                exit_status,
            };
            assert_eq!(output.text(), want);
        }
    }

    #[test]
    fn error_texts() {
        let timed_out = BashError::TimedOut {
            timeout: Duration::from_secs(120),
            stdout: stream("partial", 0),
            stderr: stream("", 0),
        };
        assert_eq!(
            timed_out.text(),
            "timed out: bash has not returned in 120.0 seconds and must be restarted\npartial"
        );
        let exited = BashError::ShellExited {
            status: Some(3),
            stdout: stream("", 0),
            stderr: stream("", 0),
        };
        assert_eq!(
            exited.text(),
            "bash has exited with returncode 3; tool must be restarted"
        );
    }

    #[test]
    fn declaration() {
        let tool = BashTool::new(BashConfig::default());
        assert_eq!(
            tool.declaration(),
            json!({"type": "bash_20250124", "name": "bash"})
        );
    }

    #[test]
    fn defaults_are_the_reference_numbers() {
        let config = BashConfig::default();
        assert_eq!(config.timeout, Duration::from_secs(120));
        assert_eq!(config.max_output_chars, 16_000);
        assert_eq!(config.shell, PathBuf::from("/bin/bash"));
    }
}
