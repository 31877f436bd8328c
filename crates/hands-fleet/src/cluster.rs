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
    fsync: Fsync,
}

/// `fsync` as the server is started with.
#[derive(Debug, Clone, Copy)]
enum Fsync {
    On,
    Off,
}

impl Fsync {
    fn as_str(self) -> &'static str {
        match self {
            Fsync::On => "on",
            Fsync::Off => "off",
        }
    }
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
            give_to_postgres(dir.path())?;
            Some("postgres".to_owned())
        } else {
            None
        };
        let cluster = LocalCluster {
            dir,
            bin,
            run_as,
            listen,
            fsync: match durability {
                Durability::Synced => Fsync::On,
                Durability::Unsynced => Fsync::Off,
            },
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
        cluster.start_server(cluster.fsync.as_str())?;
        Ok(cluster)
    }

    /// A synchronous standby of this cluster, listening where `listen` says: `pg_basebackup`
    /// of this one (over its unix socket), started streaming from it; this cluster then waits
    /// for the standby before any commit returns (`synchronous_standby_names = '*'`). Returns
    /// once the standby is in sync.
    pub fn start_standby(&self, listen: Listen) -> Result<LocalCluster, FleetError> {
        let dir = tempfile::Builder::new()
            .prefix("hands-pg-standby-")
            .tempdir()
            .map_err(|e| FleetError::Cluster(format!("a temporary directory: {e}")))?;
        if self.run_as.is_some() {
            give_to_postgres(dir.path())?;
        }
        let standby = LocalCluster {
            dir,
            bin: self.bin.clone(),
            run_as: self.run_as.clone(),
            listen,
            fsync: self.fsync,
        };
        let data = standby.data_dir().display().to_string();
        standby.run_client_of(
            self,
            "pg_basebackup",
            &[
                "-D",
                &data,
                "-R",
                "-X",
                "stream",
                "--checkpoint=fast",
                "--no-sync",
            ],
        )?;
        standby.start_server(self.fsync.as_str())?;
        self.sql(&[
            "ALTER SYSTEM SET synchronous_standby_names = '*'",
            "SELECT pg_reload_conf()",
        ])?;
        for _ in 0..400 {
            let state =
                self.query("SELECT string_agg(sync_state, ',') FROM pg_stat_replication")?;
            if state.split(',').any(|s| s.trim() == "sync") {
                return Ok(standby);
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        Err(FleetError::Cluster(
            "the standby did not come in sync within 10 s".into(),
        ))
    }

    /// Kills the server as a crash would: SIGKILL to the postmaster and every process it
    /// started, nothing flushed, no standby told.
    pub fn kill_hard(&self) -> Result<(), FleetError> {
        let pid_file = self.data_dir().join("postmaster.pid");
        let text = std::fs::read_to_string(&pid_file)
            .map_err(|e| FleetError::Cluster(format!("{}: {e}", pid_file.display())))?;
        let pid: i32 = text
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .ok_or_else(|| FleetError::Cluster(format!("{} holds no pid", pid_file.display())))?;
        let mut pids = vec![pid];
        if let Ok(entries) = std::fs::read_dir("/proc") {
            for entry in entries.flatten() {
                let Ok(child) = entry.file_name().to_string_lossy().parse::<i32>() else {
                    continue;
                };
                let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
                // `pid (comm) state ppid …`: the command may hold spaces, the part after the
                // last `)` does not.
                let ppid = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .and_then(|p| p.parse::<i32>().ok());
                if ppid == Some(pid) {
                    pids.push(child);
                }
            }
        }
        for pid in pids {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        Ok(())
    }

    /// Promotes this standby to a primary (`pg_ctl promote`); returns once it accepts writes.
    /// It then waits for no standby (its copy of the old primary's settings said to) until
    /// [`LocalCluster::start_standby`] gives it one.
    pub fn promote(&self) -> Result<(), FleetError> {
        let data = self.data_dir().display().to_string();
        self.run("pg_ctl", &["-D", &data, "-w", "-t", "30", "promote"])?;
        self.sql(&[
            "ALTER SYSTEM RESET synchronous_standby_names",
            "SELECT pg_reload_conf()",
        ])
    }

    /// How a client program (psql, pg_basebackup) reaches this server as its superuser: over
    /// the unix socket, at the cluster's port.
    fn client_args(&self) -> Vec<String> {
        vec![
            "-h".into(),
            self.socket_dir().display().to_string(),
            "-p".into(),
            self.port().to_string(),
            "-U".into(),
            "postgres".into(),
        ]
    }

    /// Runs a client program here (for this cluster's files, as its user) against `server`,
    /// `extra` after the connection arguments.
    fn run_client_of(
        &self,
        server: &LocalCluster,
        program: &str,
        extra: &[&str],
    ) -> Result<(), FleetError> {
        let client = server.client_args();
        let mut args: Vec<&str> = client.iter().map(String::as_str).collect();
        args.extend_from_slice(extra);
        self.run(program, &args)
    }

    /// Runs each statement with psql on this server (each its own transaction).
    fn sql(&self, statements: &[&str]) -> Result<(), FleetError> {
        let mut args = vec!["-v", "ON_ERROR_STOP=1"];
        for statement in statements {
            args.extend(["-c", statement]);
        }
        self.run_client_of(self, "psql", &args)
    }

    /// The one value `sql` returns, as text.
    fn query(&self, sql: &str) -> Result<String, FleetError> {
        let output = self
            .command("psql")
            .args(self.client_args())
            .args(["-At", "-c", sql])
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .map_err(|e| FleetError::Cluster(format!("psql: {e}")))?;
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    /// `pg_ctl start` on the data directory, listening where the cluster says.
    fn start_server(&self, fsync: &str) -> Result<(), FleetError> {
        let data = self.data_dir();
        let tcp = match &self.listen {
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
            self.socket_dir().display()
        );
        self.run(
            "pg_ctl",
            &[
                "-D",
                &data.display().to_string(),
                "-l",
                &self.dir.path().join("log").display().to_string(),
                "-o",
                &options,
                "-w",
                "-t",
                "30",
                "start",
            ],
        )?;
        Ok(())
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
        self.run_client_of(self, "createdb", &[name]).or_else(|_| {
            // createdb lives beside psql in /usr/bin on Debian, not always in the server's
            // directory: fall back to psql's CREATE DATABASE.
            let create = format!("CREATE DATABASE \"{name}\"");
            self.run_client_of(self, "psql", &["-c", &create])
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

/// Gives `dir` to the `postgres` user (hands runs as root; PostgreSQL refuses to).
fn give_to_postgres(dir: &Path) -> Result<(), FleetError> {
    let status = Command::new("chown")
        .args(["-R", "postgres:postgres"])
        .arg(dir)
        .status()
        .map_err(|e| FleetError::Cluster(format!("chown: {e}")))?;
    if status.success() {
        return Ok(());
    }
    Err(FleetError::Cluster(
        "running as root, PostgreSQL needs the `postgres` user (Debian's postgresql package creates it): run scripts/install-system-deps.sh".into(),
    ))
}
