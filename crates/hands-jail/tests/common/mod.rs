//! Shared helpers of the jail's tests: a jail of each kind and a shell command run in it.

#![allow(dead_code)]

use std::io::Read as _;
use std::path::PathBuf;
use std::time::Duration;

use hands_jail::{ChildIo, InitProgram, Jail, JailConfig, JailKind, Launcher, ProcessSpec};

/// The init built with these tests.
pub fn init() -> InitProgram {
    InitProgram::Path(PathBuf::from(env!("CARGO_BIN_EXE_hands-jail-init")))
}

/// A jail of `kind` with default limits.
pub fn jail(kind: JailKind) -> Jail {
    let mut config = JailConfig::new(kind);
    config.init = init();
    Jail::start(&config).expect("a jail starts on this machine")
}

/// What a shell command printed (stdout, stderr) and its exit code, run by `launcher`.
pub fn sh(launcher: &dyn Launcher, script: &str) -> (String, String, i32) {
    let spec = ProcessSpec::new("/bin/bash")
        .args(["-c", script])
        .envs(Jail::base_env())
        .stdio(ChildIo::Null, ChildIo::Pipe, ChildIo::Pipe);
    let spawned = launcher.spawn(spec).expect("the shell starts");
    let stderr = spawned.stderr.expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::fs::File::from(stderr).read_to_string(&mut text);
        text
    });
    let mut out = String::new();
    let _ = std::fs::File::from(spawned.stdout.expect("stdout")).read_to_string(&mut out);
    let status = spawned
        .process
        .wait_timeout(Duration::from_secs(60))
        .expect("wait")
        .expect("the command ends within 60 s");
    let err = reader.join().expect("stderr reader");
    (out, err, status.code().unwrap_or(-1))
}
