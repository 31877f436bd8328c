//! A private PostgreSQL cluster on a temporary directory, reached by a unix socket: for tests
//! and benchmarks (Debian's `postgresql-15`, installed by `scripts/install-system-deps.sh`).
//! Stopped (`pg_ctl stop -m immediate`) and removed when dropped.
//!
//! PostgreSQL refuses to run as root; as root the cluster runs as the `postgres` user that
//! Debian's package creates (through `setpriv`), in a directory given to that user.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::FleetError;

/// Where Debian installs PostgreSQL 15's server programs.
pub const DEBIAN_BIN_DIR: &str = "/usr/lib/postgresql/15/bin";

/// Whether commits wait for the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `fsync` on, synchronous commits (as a real deployment runs): for measurements.
    Synced,
    /// `fsync` off: faster, for tests that do not measure.
    Unsynced,
}

/// Where a cluster listens besides its unix socket.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Listen {
    /// The unix socket only.
    #[default]
    SocketOnly,
    /// Also TCP on this address and port (trusting every client: for tests across network
    /// namespaces on one machine).
    Tcp {
        /// The address (e.g. `10.77.0.2`).
        address: String,
        /// The port.
        port: u16,
    },
}

/// A running private cluster.
#[derive(Debug)]
pub struct LocalCluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    run_as: Option<String>,
    listen: Listen,
}

fn missing() -> FleetError {
    FleetError::Cluster(format!(
        "PostgreSQL's server programs are not in {DEBIAN_BIN_DIR} (nor on PATH): run scripts/install-system-deps.sh"
    ))
}

impl LocalCluster {
    /// `initdb` and `pg_ctl start` on a new temporary directory; returns once it accepts
    /// connections.
    pub fn start(durability: Durability) -> Result<LocalCluster, FleetError> {
        LocalCluster::start_listening(durability, Listen::SocketOnly)
    }

    /// [`LocalCluster::start`], listening also where `listen` says.
    pub fn start_listening(
        durability: Durability,
        listen: Listen,
    ) -> Result<LocalCluster, FleetError> {
        let bin = [PathBuf::from(DEBIAN_BIN_DIR)]
            .into_iter()
            .chain(
                std::env::var_os("PATH")
                    .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
                    .unwrap_or_default(),
            )
            .find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
            .ok_or_else(missing)?;
        let dir = tempfile::Builder::new()
            .prefix("hands-pg-")
            .tempdir()
            .map_err(|e| FleetError::Cluster(format!("a temporary directory: {e}")))?;
        let run_as = if rustix::process::geteuid().is_root() {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .map_err(|e| FleetError::Cluster(format!("chown: {e}")))?;
            if !status.success() {
                return Err(FleetError::Cluster(
                    "running as root, PostgreSQL needs the `postgres` user (Debian's postgresql package creates it): run scripts/install-system-deps.sh".into(),
                ));
            }
            Some("postgres".to_owned())
        } else {
            None
        };
        let cluster = LocalCluster {
            dir,
            bin,
            run_as,
            listen,
        };
        let data = cluster.data_dir();
        cluster.run(
            "initdb",
            &[
                "-D",
                &data.display().to_string(),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
        )?;
        let fsync = match durability {
            Durability::Synced => "on",
            Durability::Unsynced => "off",
        };
        let tcp = match &cluster.listen {
            Listen::SocketOnly => "-c listen_addresses=''".to_owned(),
            Listen::Tcp { address, port } => {
                let hba = data.join("pg_hba.conf");
                let mut rules = std::fs::read_to_string(&hba)
                    .map_err(|e| FleetError::Cluster(format!("{}: {e}", hba.display())))?;
                rules.push_str("\nhost all all 0.0.0.0/0 trust\n");
                std::fs::write(&hba, rules)
                    .map_err(|e| FleetError::Cluster(format!("{}: {e}", hba.display())))?;
                format!("-c listen_addresses='{address}' -p {port}")
            }
        };
        let options = format!(
            "{tcp} -k {} -c fsync={fsync} -c max_connections=200",
            cluster.socket_dir().display()
        );
        cluster.run(
            "pg_ctl",
            &[
                "-D",
                &data.display().to_string(),
                "-l",
                &cluster.dir.path().join("log").display().to_string(),
                "-o",
                &options,
                "-w",
                "-t",
                "30",
                "start",
            ],
        )?;
        Ok(cluster)
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The directory holding the server's socket.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// A connection string for database `postgres` as user `postgres`.
    pub fn url(&self) -> String {
        format!("{} user=postgres dbname=postgres", self.host())
    }

    /// `host=… port=…` of the unix socket (the port names the socket's file).
    fn host(&self) -> String {
        match &self.listen {
            Listen::SocketOnly => format!("host={}", self.socket_dir().display()),
            Listen::Tcp { port, .. } => {
                format!("host={} port={port}", self.socket_dir().display())
            }
        }
    }

    /// A connection string for database `name` over TCP, when the cluster listens on TCP.
    pub fn tcp_url(&self, name: &str) -> Option<String> {
        match &self.listen {
            Listen::SocketOnly => None,
            Listen::Tcp { address, port } => Some(format!(
                "host={address} port={port} user=postgres dbname={name} connect_timeout=5"
            )),
        }
    }

    /// Creates database `name` (each test its own) and returns its connection string.
    pub fn database(&self, name: &str) -> Result<String, FleetError> {
        self.run(
            "createdb",
            &[
                "-h",
                &self.socket_dir().display().to_string(),
                "-p",
                &self.port().to_string(),
                "-U",
                "postgres",
                name,
            ],
        )
        .or_else(|_| {
            // createdb lives beside psql in /usr/bin on Debian, not always in the server's
            // directory: fall back to psql's CREATE DATABASE.
            self.run(
                "psql",
                &[
                    "-h",
                    &self.socket_dir().display().to_string(),
                    "-p",
                    &self.port().to_string(),
                    "-U",
                    "postgres",
                    "-c",
                    &format!("CREATE DATABASE \"{name}\""),
                ],
            )
        })?;
        Ok(format!("{} user=postgres dbname={name}", self.host()))
    }

    /// The server's port (5432 unless it listens on TCP elsewhere).
    fn port(&self) -> u16 {
        match &self.listen {
            Listen::SocketOnly => 5432,
            Listen::Tcp { port, .. } => *port,
        }
    }

    fn command(&self, program: &str) -> Command {
        let path = if self.bin.join(program).is_file() {
            self.bin.join(program)
        } else {
            PathBuf::from(program)
        };
        match &self.run_as {
            Some(user) => {
                let mut command = Command::new("setpriv");
                command
                    .args(["--reuid", user, "--regid", user, "--init-groups", "--"])
                    .arg(path);
                command
            }
            None => Command::new(path),
        }
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<(), FleetError> {
        let output = self
            .command(program)
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .map_err(|e| FleetError::Cluster(format!("{program}: {e}")))?;
        if output.status.success() {
            return Ok(());
        }
        let log = std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default();
        Err(FleetError::Cluster(format!(
            "{program} failed ({}): {}{}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim(),
            String::from_utf8_lossy(&output.stdout).trim(),
            if log.is_empty() {
                String::new()
            } else {
                format!("\nserver log:\n{log}")
            }
        )))
    }
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        let data = self.data_dir().display().to_string();
        if let Err(e) = self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]) {
            tracing::warn!("stopping the private PostgreSQL: {e}");
        }
    }
}
