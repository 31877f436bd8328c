//! The bash tool against a real `/bin/bash`: persistence, streams, exit status, timeout,
//! cap, stdin, background jobs, cancellation and the shell's own exit.

use std::path::Path;
use std::time::Duration;

use hands_sandbox::strings;
use hands_sandbox::{
    BashConfig, BashError, BashInput, BashReply, BashTool, CommandOutput, Inherit,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A tool with a short timeout so failure paths stay fast.
fn tool(timeout: Duration) -> BashTool {
    BashTool::new(BashConfig {
        timeout,
        ..BashConfig::default()
    })
}

async fn run(bash: &mut BashTool, command: &str) -> Result<CommandOutput, BashError> {
    let input = BashInput::Run {
        command: command.to_owned(),
    };
    match bash.run(input, &CancellationToken::new()).await? {
        BashReply::Output(output) => Ok(output),
        BashReply::Restarted => panic!("a command answered like a restart"),
    }
}

async fn ok(bash: &mut BashTool, command: &str) -> CommandOutput {
    match run(bash, command).await {
        Ok(output) => output,
        Err(err) => panic!("{command:?} failed: {}", err.text()),
    }
}

#[tokio::test]
async fn cd_exports_and_functions_persist_across_calls() {
    let dir = tempfile::tempdir().unwrap();
    let mut bash = tool(Duration::from_secs(20));
    let cd = format!(
        "cd '{}' && export GREETING=hello && greet() {{ echo \"$GREETING $1\"; }}",
        dir.path().display()
    );
    assert_eq!(ok(&mut bash, &cd).await.exit_status, 0);
    let out = ok(&mut bash, "pwd; greet world; echo \"$GREETING\" | wc -c").await;
    let canonical = dir.path().canonicalize().unwrap();
    assert_eq!(
        out.stdout.text,
        format!("{}\nhello world\n6", canonical.display())
    );
}

#[tokio::test]
async fn stdout_stderr_and_exit_status_are_kept_apart() {
    let mut bash = tool(Duration::from_secs(20));
    let out = ok(&mut bash, "echo out; echo err >&2; echo out2").await;
    assert_eq!(out.stdout.text, "out\nout2");
    assert_eq!(out.stderr.text, "err");
    assert_eq!(out.exit_status, 0);

    let out = ok(&mut bash, "echo partial; (exit 3)").await;
    assert_eq!(out.stdout.text, "partial");
    assert_eq!(out.exit_status, 3);
    assert_eq!(out.text(), "partial\n<exit_status>3</exit_status>");

    // Output on stderr alone is not a failure of the tool (the reference's known failure).
    let outcome = bash
        .call(
            &json!({"command": "echo 'warning: x' >&2"}),
            &CancellationToken::new(),
        )
        .await;
    assert!(!outcome.is_error);
    assert_eq!(outcome.text, "<stderr>\nwarning: x\n</stderr>");

    let outcome = bash
        .call(&json!({"command": "true"}), &CancellationToken::new())
        .await;
    assert_eq!(outcome.text, "<exit_status>0</exit_status>");
}

#[tokio::test]
async fn syntax_errors_and_odd_commands_leave_the_session_usable() {
    let mut bash = tool(Duration::from_secs(20));
    // An unclosed quote cannot swallow the wrapper: it is the command's own error.
    let out = ok(&mut bash, "echo \"unterminated").await;
    assert_eq!(out.exit_status, 2);
    assert!(
        out.stderr.text.contains("unexpected EOF"),
        "{:?}",
        out.stderr
    );
    // Single quotes, `}` and a heredoc travel intact.
    let out = ok(
        &mut bash,
        "echo 'it'\\''s' }; cat <<'EOF'\n$HOME stays\nEOF",
    )
    .await;
    assert_eq!(out.stdout.text, "it's }\n$HOME stays");
    // Output without a final newline, and bytes that are not UTF-8.
    assert_eq!(ok(&mut bash, "printf abc").await.stdout.text, "abc");
    assert_eq!(
        ok(&mut bash, "printf 'a\\377b'").await.stdout.text,
        "a\u{fffd}b"
    );
    // Tracing echoes the wrapper's own lines; the markers must still be found.
    let out = ok(&mut bash, "set -x; echo traced").await;
    assert_eq!(out.stdout.text, "traced");
    let out = ok(&mut bash, "set +x; echo after").await;
    assert_eq!(out.stdout.text, "after");
    // Functions shadowing the builtins the wrapper uses do not break it.
    ok(
        &mut bash,
        "printf() { echo hijacked; }; eval() { :; }; unset() { :; }",
    )
    .await;
    assert_eq!(ok(&mut bash, "echo fine").await.stdout.text, "fine");
}

#[tokio::test]
async fn a_command_reading_stdin_does_not_hang() {
    let mut bash = tool(Duration::from_secs(20));
    let out = ok(&mut bash, "cat; read line; echo \"read status $?\"").await;
    assert_eq!(out.stdout.text, "read status 1");
    // The session still reads its next command from its own stdin.
    assert_eq!(ok(&mut bash, "echo next").await.stdout.text, "next");
}

#[tokio::test]
async fn timeout_kills_the_session_until_restart() {
    let mut bash = tool(Duration::from_millis(500));
    let dir = tempfile::tempdir().unwrap();
    ok(&mut bash, &format!("cd '{}'", dir.path().display())).await;
    let err = run(&mut bash, "echo before; sleep 30").await.unwrap_err();
    let BashError::TimedOut { stdout, .. } = &err else {
        panic!("expected a timeout, got {err:?}");
    };
    assert_eq!(stdout.text, "before");
    assert_eq!(
        err.text(),
        "timed out: bash has not returned in 0.5 seconds and must be restarted\nbefore"
    );

    // Every later command says the session must be restarted.
    let outcome = bash
        .call(&json!({"command": "echo hi"}), &CancellationToken::new())
        .await;
    assert!(outcome.is_error);
    assert_eq!(
        outcome.text,
        "timed out: bash has not returned in 0.5 seconds and must be restarted"
    );

    let outcome = bash
        .call(&json!({"restart": true}), &CancellationToken::new())
        .await;
    assert_eq!(outcome.text, strings::BASH_RESTARTED);
    assert!(!outcome.is_error);
    // A fresh shell: the old working directory is gone with the old session.
    let out = ok(&mut bash, "pwd").await;
    assert_ne!(
        Path::new(&out.stdout.text),
        dir.path().canonicalize().unwrap()
    );
    assert_eq!(ok(&mut bash, "echo alive").await.stdout.text, "alive");
}

#[tokio::test]
async fn huge_output_is_cut_at_the_cap_with_a_count() {
    let mut bash = tool(Duration::from_secs(20));
    let out = ok(&mut bash, "yes | head -c 100000").await;
    assert_eq!(out.stdout.text.chars().count(), 16_000);
    assert!(out.stdout.text.starts_with("y\ny\n"));
    assert_eq!(out.stdout.n_cut_chars, 84_000);
    assert!(
        out.text()
            .ends_with("\n[output cut: 84000 more characters not shown]")
    );

    // Both streams flooding at once: neither pipe may fill up and block the shell, and the
    // cap is shared so both show.
    let out = ok(
        &mut bash,
        "head -c 300000 /dev/zero | tr '\\0' a & head -c 300000 /dev/zero | tr '\\0' b >&2; wait",
    )
    .await;
    assert_eq!(out.stdout.text, "a".repeat(8_000));
    assert_eq!(out.stderr.text, "b".repeat(8_000));
    assert_eq!(out.stdout.n_cut_chars, 292_000);
    assert_eq!(out.stderr.n_cut_chars, 292_000);
    assert_eq!(
        ok(&mut bash, "echo still here").await.stdout.text,
        "still here"
    );
}

/// `sleep 100 &` answers at once: the command ends at the shell's marker, not when every
/// writer of the pipes has closed them. The job lives on in the session's process group, and
/// dies with it.
#[tokio::test]
async fn a_background_job_does_not_block_and_dies_with_the_session() {
    let mut bash = tool(Duration::from_secs(20));
    let out = ok(&mut bash, "sleep 100 & echo $!").await;
    let pid: u32 = out.stdout.text.parse().unwrap();
    assert!(alive(pid), "the job runs after the answer");
    assert_eq!(ok(&mut bash, "echo next").await.stdout.text, "next");
    drop(bash);
    assert!(wait_until_gone(pid).await, "the job outlived its session");
}

#[tokio::test]
async fn restart_kills_background_jobs() {
    let mut bash = tool(Duration::from_secs(20));
    let out = ok(&mut bash, "sleep 100 >/dev/null 2>&1 & echo $!").await;
    let pid: u32 = out.stdout.text.parse().unwrap();
    let reply = bash
        .run(BashInput::Restart, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(reply, BashReply::Restarted);
    assert!(wait_until_gone(pid).await);
}

#[tokio::test]
async fn cancellation_kills_the_running_command() {
    let mut bash = tool(Duration::from_secs(60));
    let cancel = CancellationToken::new();
    let canceller = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel.cancel();
        })
    };
    let input = BashInput::Run {
        command: "echo started; sleep 60".to_owned(),
    };
    let err = bash.run(input, &cancel).await.unwrap_err();
    canceller.await.unwrap();
    let BashError::Cancelled { stdout, .. } = &err else {
        panic!("expected cancellation, got {err:?}");
    };
    assert_eq!(stdout.text, "started");
    let outcome = bash
        .call(&json!({"command": "echo hi"}), &CancellationToken::new())
        .await;
    assert!(outcome.is_error);
    assert_eq!(outcome.text, strings::BASH_CANCELLED);

    // Already cancelled before the call: nothing runs, and a live session stays alive.
    bash.run(BashInput::Restart, &CancellationToken::new())
        .await
        .unwrap();
    ok(&mut bash, "export KEEP=1").await;
    let err = bash
        .run(
            BashInput::Run {
                command: "echo never".to_owned(),
            },
            &cancel,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, BashError::CancelledBeforeStart), "{err:?}");
    assert_eq!(err.text(), strings::BASH_NOT_RUN);
    assert_eq!(ok(&mut bash, "echo $KEEP").await.stdout.text, "1");
}

/// A caller that drops the call mid-command (a `select!` elsewhere, a task aborted) kills the
/// session with it; the next call says so instead of silently starting a fresh shell.
#[tokio::test]
async fn dropping_a_call_mid_command_kills_the_session() {
    let mut bash = tool(Duration::from_secs(60));
    let out = ok(&mut bash, "sleep 100 >/dev/null 2>&1 & echo $!").await;
    let pid: u32 = out.stdout.text.parse().unwrap();
    let input = BashInput::Run {
        command: "sleep 60".to_owned(),
    };
    let cancel = CancellationToken::new();
    let dropped = tokio::time::timeout(Duration::from_millis(200), bash.run(input, &cancel)).await;
    assert!(dropped.is_err(), "the call was still running");
    assert!(
        wait_until_gone(pid).await,
        "the session's group was not killed"
    );
    let outcome = bash
        .call(&json!({"command": "echo hi"}), &CancellationToken::new())
        .await;
    assert!(outcome.is_error);
    assert_eq!(outcome.text, strings::BASH_INTERRUPTED);
}

#[tokio::test]
async fn the_shell_exiting_is_reported_with_its_code() {
    let mut bash = tool(Duration::from_secs(20));
    let err = run(&mut bash, "echo bye; exit 7").await.unwrap_err();
    assert!(
        matches!(
            err,
            BashError::ShellExited {
                status: Some(7),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.text(),
        "bash has exited with returncode 7; tool must be restarted\nbye"
    );
    let outcome = bash
        .call(&json!({"command": "echo hi"}), &CancellationToken::new())
        .await;
    assert!(outcome.is_error);
    assert_eq!(
        outcome.text,
        "bash has exited with returncode 7; tool must be restarted"
    );
    // Exiting while a background job holds the pipes open is noticed too.
    bash.run(BashInput::Restart, &CancellationToken::new())
        .await
        .unwrap();
    let err = run(&mut bash, "sleep 100 & exit 4").await.unwrap_err();
    assert!(
        matches!(
            err,
            BashError::ShellExited {
                status: Some(4),
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn working_dir_and_env_come_from_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let mut bash = BashTool::new(BashConfig {
        working_dir: Some(dir.path().to_path_buf()),
        env: vec![("HANDS_TEST_VAR".to_owned(), "from config".to_owned())],
        inherit: Inherit::Nothing,
        timeout: Duration::from_secs(20),
        ..BashConfig::default()
    });
    let out = ok(&mut bash, "pwd; echo \"$HANDS_TEST_VAR\"; echo \"[$HOME]\"").await;
    assert_eq!(
        out.stdout.text,
        format!(
            "{}\nfrom config\n[]",
            dir.path().canonicalize().unwrap().display()
        )
    );
}

#[tokio::test]
async fn a_shell_that_cannot_start_is_an_error_result() {
    let mut bash = BashTool::new(BashConfig {
        shell: "/nonexistent/bash".into(),
        ..BashConfig::default()
    });
    let outcome = bash
        .call(&json!({"command": "echo hi"}), &CancellationToken::new())
        .await;
    assert!(outcome.is_error);
    assert!(
        outcome
            .text
            .starts_with("could not start /nonexistent/bash: "),
        "{}",
        outcome.text
    );
}

#[tokio::test]
async fn wire_inputs_through_call() {
    let mut bash = tool(Duration::from_secs(20));
    let cancel = CancellationToken::new();
    let outcome = bash.call(&json!({"command": "echo hi"}), &cancel).await;
    assert_eq!((outcome.is_error, outcome.text.as_str()), (false, "hi"));
    let outcome = bash.call(&json!({}), &cancel).await;
    assert_eq!(
        (outcome.is_error, outcome.text.as_str()),
        (true, "no command provided.")
    );
    let outcome = bash.call(&json!({"command": 42}), &cancel).await;
    assert_eq!(
        (outcome.is_error, outcome.text.as_str()),
        (true, "Parameter `command` must be a string, got a number.")
    );
}

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised name: gone or a zombie is dead.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// Waits (bounded) for a killed process to disappear.
async fn wait_until_gone(pid: u32) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// The names of the variables `env` prints in the shell, minus those bash sets itself.
async fn shell_variables(bash: &mut BashTool) -> Vec<String> {
    let out = ok(bash, "env -0 | tr '\\0' '\\n' | cut -d= -f1 | sort").await;
    out.stdout
        .text
        .lines()
        .filter(|name| !["PWD", "OLDPWD", "SHLVL", "_"].contains(name))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn the_shell_inherits_only_the_allow_list() {
    // The test runner's environment is full of variables (CARGO_*, NEXTEST_*, RUST_*…): none
    // of them reaches the shell, nor does anything else off the list.
    let mut bash = tool(Duration::from_secs(20));
    let seen = shell_variables(&mut bash).await;
    assert!(seen.iter().any(|n| n == "PATH"), "{seen:?}");
    for name in &seen {
        assert!(
            hands_sandbox::bash::env::SAFE_VARIABLES.contains(&name.as_str()),
            "{name} leaked into the shell: {seen:?}"
        );
    }
    // What a model would try: the shell's own /proc entry and a child process see the same.
    let proc_environ = ok(
        &mut bash,
        "tr '\\0' '\\n' < /proc/self/environ | cut -d= -f1",
    )
    .await;
    let child = ok(
        &mut bash,
        "sh -c 'cat /proc/$$/environ' | tr '\\0' '\\n' | cut -d= -f1",
    )
    .await;
    for text in [proc_environ.stdout.text, child.stdout.text] {
        for name in text
            .lines()
            .filter(|n| !["PWD", "OLDPWD", "SHLVL", "_"].contains(n))
        {
            assert!(
                hands_sandbox::bash::env::SAFE_VARIABLES.contains(&name),
                "{name} in /proc environ"
            );
        }
    }
}

#[tokio::test]
async fn an_allow_list_admits_exactly_its_names() {
    // Cargo sets CARGO_PKG_NAME for every test it runs.
    let mut bash = BashTool::new(BashConfig {
        inherit: Inherit::AllowList(vec!["CARGO_PKG_NAME".into(), "PATH".into()]),
        timeout: Duration::from_secs(20),
        ..BashConfig::default()
    });
    assert_eq!(shell_variables(&mut bash).await, ["CARGO_PKG_NAME", "PATH"]);
    let out = ok(&mut bash, "echo \"$CARGO_PKG_NAME\"").await;
    assert_eq!(out.stdout.text, "hands-sandbox");
}

/// What the recording launcher saw of one start: the spec's program, environment and working
/// directory, and the pid the host launcher gave the process.
#[derive(Debug, Clone)]
struct Start {
    program: std::path::PathBuf,
    env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    cwd: Option<std::path::PathBuf>,
    pid: u32,
}

/// A launcher that records each spec it is handed, then starts it with the host launcher.
#[derive(Debug, Default)]
struct Recording {
    starts: std::sync::Mutex<Vec<Start>>,
}

impl hands_jail::Launcher for Recording {
    fn spawn(
        &self,
        spec: hands_jail::ProcessSpec,
    ) -> Result<hands_jail::Spawned, hands_jail::SpawnError> {
        let (program, env, cwd) = (spec.program.clone(), spec.env.clone(), spec.cwd.clone());
        let spawned = hands_jail::HostLauncher.spawn(spec)?;
        let pid = spawned.process.id();
        if let Ok(mut starts) = self.starts.lock() {
            starts.push(Start {
                program,
                env,
                cwd,
                pid,
            });
        }
        Ok(spawned)
    }

    fn connect_unix(
        &self,
        address: &hands_jail::UnixAddress,
    ) -> std::io::Result<std::os::fd::OwnedFd> {
        hands_jail::HostLauncher.connect_unix(address)
    }

    fn host_pid(&self, pid: u32) -> Option<u32> {
        hands_jail::HostLauncher.host_pid(pid)
    }

    fn isolation(&self) -> hands_jail::Isolation {
        hands_jail::HostLauncher.isolation()
    }

    fn listen_tcp(&self, port: u16) -> std::io::Result<std::net::TcpListener> {
        hands_jail::HostLauncher.listen_tcp(port)
    }

    fn private_dir(&self, name: &str) -> std::io::Result<hands_jail::SharedDir> {
        hands_jail::HostLauncher.private_dir(name)
    }
}

#[tokio::test]
async fn the_shell_starts_through_the_launcher() {
    use hands_jail::Launcher as _;
    // Cargo sets CARGO_PKG_AUTHORS for every test it runs: a name with `AUTH` in it, so a
    // credential by the shell's rule, even when the allow-list names it.
    assert!(
        std::env::var_os("CARGO_PKG_AUTHORS").is_some(),
        "the test process must hold a credential-like variable for this test to mean anything"
    );
    let dir = tempfile::tempdir().unwrap();
    let inside = dir.path().canonicalize().unwrap();
    let recording = std::sync::Arc::new(Recording::default());
    let mut bash = BashTool::new(BashConfig {
        launcher: recording.clone(),
        working_dir: Some(inside.clone()),
        inherit: Inherit::AllowList(vec!["PATH".into(), "CARGO_PKG_AUTHORS".into()]),
        env: vec![("GREETING".into(), "hi".into())],
        timeout: Duration::from_secs(20),
        ..BashConfig::default()
    });
    let out = ok(&mut bash, "echo $$; pwd; echo \"$GREETING\"").await;
    let starts = recording.starts.lock().unwrap().clone();
    assert_eq!(starts.len(), 1, "{starts:?}");
    let start = &starts[0];
    assert_eq!(start.program, Path::new("/bin/bash"));
    assert_eq!(start.cwd.as_deref(), Some(inside.as_path()));
    let names: Vec<String> = start
        .env
        .iter()
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["PATH", "GREETING"], "{start:?}");
    // The shell that answered is the process the launcher started, in the directory it named.
    assert_eq!(
        out.stdout.text,
        format!("{}\n{}\nhi", start.pid, inside.display())
    );
    // A restart goes through the launcher again.
    bash.run(BashInput::Restart, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(recording.starts.lock().unwrap().len(), 2);
    assert_eq!(recording.isolation(), hands_jail::Isolation::Host);
}
