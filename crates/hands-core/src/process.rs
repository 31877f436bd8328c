//! What the programs hands starts inherit: never the caller's credentials.
//!
//! `hands run` holds an API key in its environment (that is how it gets it). Every program it
//! starts — the shell, Xvfb, the window manager, an editor, Chromium — would inherit it, and a
//! model that can run a command reads any of them (`cat /proc/<pid>/environ` works for every
//! process of the same user). So no child starts with a variable whose name looks like a
//! credential. The shell goes further (an allow-list: `hands_sandbox::bash::env`); graphical
//! programs keep the rest of the environment, which they need to behave (fonts, locale, D-Bus).

use std::process::Command;

/// Parts of a variable name (compared case-insensitively) that mark it as a credential or a
/// handle to one: API keys, tokens, secrets, passwords and passphrases, credentials, auth
/// sockets and cookie files (`SSH_AUTH_SOCK`, `XAUTHORITY`), session handles, private keys.
pub const CREDENTIAL_MARKS: [&str; 9] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASS",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
];

/// Variables a graphical program needs to reach the display the person named, though their
/// names look like credentials: kept for X clients and the browser, never for the shell.
pub const DISPLAY_ACCESS: [&str; 1] = ["XAUTHORITY"];

/// Whether a variable's name looks like it holds a credential ([`CREDENTIAL_MARKS`]).
pub fn looks_like_credential(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    CREDENTIAL_MARKS.iter().any(|mark| upper.contains(mark))
}

/// The names of this process's variables a graphical child must not inherit.
pub fn credential_variables() -> Vec<std::ffi::OsString> {
    std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|name| {
            let text = name.to_string_lossy();
            looks_like_credential(&text) && !DISPLAY_ACCESS.contains(&text.as_ref())
        })
        .collect()
}

/// Removes from `command`'s environment every variable of this process that looks like a
/// credential ([`credential_variables`]); the rest is inherited as usual.
pub fn scrub_credentials(command: &mut Command) -> &mut Command {
    for name in credential_variables() {
        command.env_remove(name);
    }
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_recognised_by_name() {
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "openai_api_key",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "PGPASSWORD",
            "SSH_AUTH_SOCK",
            "DBUS_SESSION_BUS_ADDRESS",
        ] {
            assert!(looks_like_credential(name), "{name}");
        }
        for name in ["PATH", "HOME", "DISPLAY", "LANG", "XDG_RUNTIME_DIR"] {
            assert!(!looks_like_credential(name), "{name}");
        }
    }

    #[test]
    #[allow(
        unsafe_code,
        reason = "sets a variable of the test's own process; see below"
    )]
    fn a_child_does_not_inherit_a_key_but_keeps_the_rest() {
        // The child inherits this process's environment, so the check needs a real variable
        // here. nextest runs each test in a process of its own, and no other code reads these.
        // SAFETY: set before any thread of this test reads the environment; names unique to it.
        unsafe {
            std::env::set_var("HANDS_TEST_CHILD_API_KEY", "secret-value");
            std::env::set_var("HANDS_TEST_CHILD_PLAIN", "kept");
        }
        let mut command = Command::new("sh");
        command.args([
            "-c",
            "printf '%s|%s' \"$HANDS_TEST_CHILD_API_KEY\" \"$HANDS_TEST_CHILD_PLAIN\"",
        ]);
        scrub_credentials(&mut command);
        let out = command.output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "|kept");
    }
}
