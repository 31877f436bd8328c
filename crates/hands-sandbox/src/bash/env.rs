//! The shell's environment: an allow-list of the caller's variables, and no credential ever
//! inherited, whatever the allow-list says.
//!
//! A model that runs `env`, `echo $ANTHROPIC_API_KEY` or `cat /proc/self/environ` reads the
//! shell's environment. The process that starts the shell usually holds an API key in its own
//! (that is how `hands run` gets it), so the shell never starts from it: it starts empty and
//! takes only the variables a program needs to behave (search path, home, locale, terminal, the
//! display), minus any whose name looks like a credential.

use std::ffi::OsString;

/// The variables a shell inherits by default: what programs need to find each other, write
/// their files, speak the user's language and reach the display. Nothing here holds a secret.
pub const SAFE_VARIABLES: [&str; 24] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_COLLATE",
    "LC_MESSAGES",
    "LC_NUMERIC",
    "LC_TIME",
    "LC_MONETARY",
    "LC_PAPER",
    "LC_NAME",
    "LC_ADDRESS",
    "LC_TELEPHONE",
    "LC_MEASUREMENT",
    "LC_IDENTIFICATION",
    "TZ",
    "TERM",
    "DISPLAY",
    "TMPDIR",
];

/// The credential marks and test are shared with every program hands starts (hands-core).
pub use hands_core::process::{CREDENTIAL_MARKS, looks_like_credential};

/// Variables that make a non-interactive shell run a file at start: never inherited.
const STARTUP_FILES: [&str; 2] = ["BASH_ENV", "ENV"];

/// Which of the caller's variables the shell starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inherit {
    /// The variables of these names that the caller has, except any that
    /// [`looks_like_credential`] and `BASH_ENV` / `ENV`. The default is [`SAFE_VARIABLES`].
    AllowList(Vec<String>),
    /// None: the shell has only `BashConfig::env` (bash then falls back to its built-in
    /// default `PATH`).
    Nothing,
}

impl Default for Inherit {
    fn default() -> Inherit {
        Inherit::AllowList(SAFE_VARIABLES.iter().map(|&name| name.to_owned()).collect())
    }
}

impl Inherit {
    /// Whether a variable of this name is inherited.
    pub fn admits(&self, name: &str) -> bool {
        match self {
            Inherit::Nothing => false,
            Inherit::AllowList(names) => {
                names.iter().any(|allowed| allowed == name)
                    && !looks_like_credential(name)
                    && !STARTUP_FILES.contains(&name)
            }
        }
    }

    /// The variables of `environment` (the caller's, `std::env::vars_os()`) the shell inherits.
    /// A name that is not UTF-8 is never inherited.
    pub fn select(
        &self,
        environment: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        environment
            .into_iter()
            .filter(|(name, _)| name.to_str().is_some_and(|name| self.admits(name)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn environment(names: &[&str]) -> Vec<(OsString, OsString)> {
        names
            .iter()
            .map(|&n| (OsString::from(n), OsString::from(format!("value of {n}"))))
            .collect()
    }

    fn names(selected: Vec<(OsString, OsString)>) -> Vec<String> {
        selected
            .into_iter()
            .map(|(n, _)| n.into_string().unwrap_or_default())
            .collect()
    }

    #[test]
    fn only_the_allow_list_is_inherited_by_default() {
        let caller = environment(&[
            "PATH",
            "HOME",
            "LANG",
            "DISPLAY",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "ANTHROPIC_BASE_URL",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "PGPASSWORD",
            "SSH_AUTH_SOCK",
            "XAUTHORITY",
            "DBUS_SESSION_BUS_ADDRESS",
            "CARGO_HOME",
            "BASH_ENV",
            "LD_PRELOAD",
        ]);
        assert_eq!(
            names(Inherit::default().select(caller)),
            ["PATH", "HOME", "LANG", "DISPLAY"]
        );
    }

    #[test]
    fn a_credential_on_the_allow_list_is_still_not_inherited() {
        let listed = [
            "PATH",
            "MY_API_KEY",
            "npm_token",
            "Db_Password",
            "CLIENT_SECRET",
            "GPG_PASSPHRASE",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "XAUTHORITY",
            "BASH_ENV",
            "ENV",
        ];
        let allow = Inherit::AllowList(listed.map(str::to_owned).to_vec());
        assert_eq!(names(allow.select(environment(&listed))), ["PATH"]);
    }

    #[test]
    fn nothing_inherits_nothing() {
        assert!(Inherit::Nothing.select(environment(&["PATH"])).is_empty());
    }

    #[test]
    fn no_safe_variable_looks_like_a_credential() {
        for name in SAFE_VARIABLES {
            assert!(!looks_like_credential(name), "{name}");
            assert!(Inherit::default().admits(name), "{name}");
        }
    }
}
