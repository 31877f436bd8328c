//! Where an episode's programs run: `--sandbox jail` (the default: the desktop, the shell and
//! the editor's files in one jail, Chromium in a sibling jail, every jail's only way out hands'
//! policy proxy with the run's allow-list) or `--sandbox none` (on the host, as the caller: only
//! when asked, and recorded).
//!
//! Spec: claude-computer-use-tool, precautions 1 and 3; issue 17.

use std::sync::Arc;

use anyhow::Context as _;
use hands_cdp::policy::SharedPolicy;
use hands_cdp::proxy::PolicyProxy;
use hands_jail::{HostLauncher, InitProgram, Jail, JailConfig, JailKind, Launcher, Workspace};
use hands_sandbox::{BashConfig, EditorConfig, EditorRoot, Inherit};
use hands_x11::XvfbConfig;

/// The hidden first argument that makes `hands` act as a jail's init.
pub const INIT_ARG: &str = "__jail-init";

/// `--sandbox`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum SandboxArg {
    /// Each episode in jails of its own (bubblewrap, seccomp, an empty network namespace, a
    /// private filesystem, limits); refuses to start where a jail cannot be made.
    #[default]
    Jail,
    /// On the host, as the caller, with the caller's files and network. Only on purpose.
    None,
}

/// `--workspace` and how it is given to the episode.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceArg {
    /// The operator's directory, if any.
    pub dir: Option<std::path::PathBuf>,
    /// Bind it in place instead of copying it.
    pub bind: bool,
}

impl WorkspaceArg {
    fn workspace(&self) -> Workspace {
        match (&self.dir, self.bind) {
            (None, _) => Workspace::Empty,
            (Some(dir), true) => Workspace::Bind(dir.clone()),
            (Some(dir), false) => Workspace::Copy(dir.clone()),
        }
    }
}

/// One jail and the policy proxy that is its only way out.
pub struct Jailed {
    /// The jail.
    pub jail: Jail,
    /// The proxy serving the jail's 127.0.0.1:3128 (stops when dropped).
    pub _proxy: PolicyProxy,
}

/// The places one episode's programs run.
pub struct Episode {
    mode: SandboxArg,
    workspace: WorkspaceArg,
    desktop: Option<Jailed>,
}

impl Episode {
    /// An episode under `mode`; no jail is made until one is asked for.
    pub fn new(mode: SandboxArg, workspace: WorkspaceArg) -> Episode {
        Episode {
            mode,
            workspace,
            desktop: None,
        }
    }

    /// The mode.
    pub fn mode(&self) -> SandboxArg {
        self.mode
    }

    fn config(&self, kind: JailKind) -> JailConfig {
        let mut config = JailConfig::new(kind);
        config.init = InitProgram::SelfExec(INIT_ARG.to_owned());
        if kind == JailKind::Desktop {
            config.workspace = self.workspace.workspace();
        }
        config
    }

    /// The launcher of the desktop, the shell and the X apps (a jail made on first use, its
    /// proxy serving `policy`).
    pub fn desktop_launcher(&mut self, policy: SharedPolicy) -> anyhow::Result<Arc<dyn Launcher>> {
        if self.mode == SandboxArg::None {
            return Ok(Arc::new(HostLauncher));
        }
        if self.desktop.is_none() {
            self.desktop = Some(jailed(self.config(JailKind::Desktop), policy)?);
        }
        let jailed = self.desktop.as_ref().context("the desktop jail")?;
        Ok(Arc::new(jailed.jail.clone()))
    }

    /// How to start the episode's desktop of `size`: in the desktop jail (made on first use, its
    /// proxy serving `policy`) with the jail's environment, or on the host.
    pub fn xvfb_config(
        &mut self,
        size: hands_core::geometry::Size,
        policy: SharedPolicy,
    ) -> anyhow::Result<XvfbConfig> {
        let launcher = self.desktop_launcher(policy)?;
        let mut config = XvfbConfig::new(size).with_launcher(launcher);
        if self.mode == SandboxArg::Jail {
            config.env = Jail::base_env();
        }
        Ok(config)
    }

    /// The desktop jail, once made.
    pub fn desktop_jail(&self) -> Option<&Jail> {
        self.desktop.as_ref().map(|j| &j.jail)
    }

    /// A launcher for Chromium: a sibling jail of its own (its proxy is the browser driver's).
    pub fn browser_launcher(&self) -> anyhow::Result<Arc<dyn Launcher>> {
        if self.mode == SandboxArg::None {
            return Ok(Arc::new(HostLauncher));
        }
        let jail =
            Jail::start(&self.config(JailKind::Browser)).context("making the browser's jail")?;
        Ok(Arc::new(jail))
    }

    /// The bash tool's configuration: in the desktop jail (its home, `/workspace` as the working
    /// directory, the jail's environment and the display), or on the host as before.
    pub fn bash_config(&self, display: Option<&str>) -> BashConfig {
        let mut bash = BashConfig::default();
        if let Some(jailed) = &self.desktop {
            bash.launcher = Arc::new(jailed.jail.clone());
            bash.shell = "/bin/bash".into();
            bash.working_dir = Some(hands_jail::layout::JAIL_WORKSPACE.into());
            // Nothing of the caller's environment: the jail's own.
            bash.inherit = Inherit::Nothing;
            bash.env = Jail::base_env()
                .into_iter()
                .map(|(k, v)| {
                    (
                        k.to_string_lossy().into_owned(),
                        v.to_string_lossy().into_owned(),
                    )
                })
                .collect();
        }
        if let Some(display) = display {
            bash.env.push(("DISPLAY".into(), display.to_owned()));
        }
        bash
    }

    /// The text editor's configuration: the jail's home and workspace (every operation beneath
    /// their directory fds, no symlink followed), or the whole host filesystem under
    /// `--sandbox none`.
    pub fn editor_config(&self) -> EditorConfig {
        let mut editor = EditorConfig::default();
        if let Some(jailed) = &self.desktop {
            editor.roots = vec![
                EditorRoot {
                    inside: hands_jail::layout::JAIL_HOME.into(),
                    host: jailed.jail.home_dir().to_owned(),
                },
                EditorRoot {
                    inside: hands_jail::layout::JAIL_WORKSPACE.into(),
                    host: jailed.jail.workspace_dir().to_owned(),
                },
            ];
        }
        editor
    }

    /// How isolated this episode is, in words (run metadata, `hands runs show`).
    pub fn describe(&self) -> String {
        match (&self.mode, &self.desktop) {
            (SandboxArg::None, _) => "none: programs run on the host as the caller (--sandbox none)".to_owned(),
            (SandboxArg::Jail, Some(jailed)) => format!(
                "jail: bubblewrap, all namespaces, no capabilities, seccomp, network only through the policy proxy; desktop jail host uid {}; limits: {}",
                jailed.jail.host_uid(),
                jailed.jail.limits_in_force()
            ),
            (SandboxArg::Jail, None) => "jail: bubblewrap, all namespaces, no capabilities, seccomp, network only through the policy proxy".to_owned(),
        }
    }
}

/// Makes a jail and serves its proxy port with `policy`.
fn jailed(config: JailConfig, policy: SharedPolicy) -> anyhow::Result<Jailed> {
    let jail = Jail::start(&config).map_err(|e| anyhow::anyhow!("{e}"))?;
    let listener = jail
        .listen_tcp(hands_jail::PROXY_PORT)
        .context("placing the policy proxy in the jail")?;
    let proxy =
        PolicyProxy::serve_listener(listener, policy).context("serving the jail's policy proxy")?;
    Ok(Jailed {
        jail,
        _proxy: proxy,
    })
}
