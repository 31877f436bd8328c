//! A jail's lifetime as an attacker would test it: kill hands with SIGKILL (no destructor runs)
//! and nothing of the episode may survive; the janitor then removes its files.
//!
//! The victim is this test itself, run again in a child process with `HANDS_JAIL_VICTIM` set:
//! it makes a jail, starts a detached sleeper inside, prints the pids and waits to be killed.

mod common;

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hands_jail::{ChildIo, Jail, JailKind, Launcher as _, ProcessSpec};

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

/// The victim's side: run by this same test, in a child process, with `HANDS_JAIL_VICTIM` set.
#[allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a test's helper: a failure is the test's failure; its pids go to the parent on stdout"
)]
fn victim() {
    let jail = common::jail(JailKind::Desktop);
    // A program that tries to outlive the episode: its own session, nohup, in the background.
    let spawned = jail
        .spawn(
            ProcessSpec::new("/bin/bash")
                .args([
                    "-c",
                    "setsid nohup sleep 1000 >/dev/null 2>&1 & echo $!; sleep 1000",
                ])
                .envs(Jail::base_env())
                .stdio(ChildIo::Null, ChildIo::Pipe, ChildIo::Null),
        )
        .unwrap();
    let mut line = String::new();
    BufReader::new(std::fs::File::from(spawned.stdout.unwrap()))
        .read_line(&mut line)
        .unwrap();
    let inner: u32 = line.trim().parse().unwrap();
    let sleeper = jail.host_pid(inner).unwrap();
    let shell = spawned.process.host_id().unwrap();
    println!(
        "PIDS {} {shell} {sleeper} {}",
        jail.bwrap_host_pid().unwrap(),
        jail.episode_dir().display()
    );
    std::thread::sleep(Duration::from_secs(120));
}

#[test]
fn a_sigkilled_hands_leaves_no_process_of_the_episode_and_the_janitor_removes_its_files() {
    if std::env::var_os("HANDS_JAIL_VICTIM").is_some() {
        return victim();
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_sigkilled_hands_leaves_no_process_of_the_episode_and_the_janitor_removes_its_files",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("HANDS_JAIL_VICTIM", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let fields = loop {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the victim said nothing"
        );
        if let Some((_, rest)) = line.split_once("PIDS ") {
            break rest
                .split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>();
        }
    };
    let pids: Vec<u32> = fields[..3].iter().map(|p| p.parse().unwrap()).collect();
    let episode_dir = std::path::PathBuf::from(&fields[3]);
    for pid in &pids {
        assert!(alive(*pid), "pid {pid} should be running before the kill");
    }
    child.kill().unwrap();
    let killed = Instant::now();
    child.wait().unwrap();
    while pids.iter().any(|p| alive(*p)) {
        assert!(
            killed.elapsed() < Duration::from_secs(2),
            "still alive 2 s after SIGKILL: {:?}",
            pids.iter().filter(|p| alive(**p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    eprintln!(
        "every episode process dead {:?} after SIGKILL of hands",
        killed.elapsed()
    );
    assert!(
        episode_dir.exists(),
        "a SIGKILL leaves the files for the janitor"
    );
    let swept = hands_jail::janitor::sweep();
    assert!(swept.episodes.contains(&episode_dir), "{swept:?}");
    assert!(!episode_dir.exists());
}
