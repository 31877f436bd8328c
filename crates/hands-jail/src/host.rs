//! [`HostLauncher`]: programs on the host, as the caller (`--sandbox none`, and the jail's own
//! start). Each child is spawned from one long-lived thread, so its parent-death signal fires
//! when this process dies and not when a worker thread of a pool retires (the kernel sends it
//! when the spawning *thread* exits).

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt as _;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use crate::spawn::{
    ChildIo, Isolation, Launcher, Process, ProcessControl, ProcessSpec, SharedDir, Signal,
    SpawnError, Spawned, UnixAddress,
};

/// Programs on the host, as the caller. Not a boundary: `--sandbox none` only.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostLauncher;

impl Launcher for HostLauncher {
    fn spawn(&self, spec: ProcessSpec) -> Result<Spawned, SpawnError> {
        let program = spec.program_name();
        let mut command = Command::new(&spec.program);
        command
            .args(&spec.args)
            .env_clear()
            .envs(spec.env.iter().map(|(k, v)| (k, v)));
        command.current_dir(spec.cwd.as_deref().unwrap_or("/".as_ref()));
        command.stdin(stdio(spec.stdin));
        command.stdout(stdio(spec.stdout));
        command.stderr(stdio(spec.stderr));
        command.process_group(0);
        let child = spawn_from_long_lived_thread(command, spec.extra_fds)
            .map_err(|source| SpawnError::Exec { program, source })?;
        Ok(host_spawned(child))
    }

    fn connect_unix(&self, address: &UnixAddress) -> io::Result<OwnedFd> {
        connect_unix_here(address)
    }

    fn host_pid(&self, pid: u32) -> Option<u32> {
        Some(pid)
    }

    fn isolation(&self) -> Isolation {
        Isolation::Host
    }

    fn listen_tcp(&self, port: u16) -> io::Result<std::net::TcpListener> {
        std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port))
    }

    fn private_dir(&self, name: &str) -> io::Result<SharedDir> {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let safe = crate::spawn::safe_component(name);
        let dir = std::env::temp_dir().join(format!("hands-{safe}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(SharedDir {
            host: dir.clone(),
            inside: dir,
        })
    }
}

fn stdio(io: ChildIo) -> Stdio {
    match io {
        ChildIo::Null => Stdio::null(),
        ChildIo::Pipe => Stdio::piped(),
    }
}

/// Connects to `address` from this process's own namespaces.
pub(crate) fn connect_unix_here(address: &UnixAddress) -> io::Result<OwnedFd> {
    match address {
        UnixAddress::Path(path) => Ok(UnixStream::connect(path)?.into()),
        UnixAddress::Abstract(name) => {
            let addr = rustix::net::SocketAddrUnix::new_abstract_name(name)?;
            let socket = rustix::net::socket_with(
                rustix::net::AddressFamily::UNIX,
                rustix::net::SocketType::STREAM,
                rustix::net::SocketFlags::CLOEXEC,
                None,
            )?;
            rustix::net::connect(&socket, &addr)?;
            Ok(socket)
        }
    }
}

/// Wraps a host child with its pipes.
pub(crate) fn host_spawned(mut child: Child) -> Spawned {
    let stdin = child.stdin.take().map(OwnedFd::from);
    let stdout = child.stdout.take().map(OwnedFd::from);
    let stderr = child.stderr.take().map(OwnedFd::from);
    let id = child.id();
    Spawned {
        process: Process::new(Arc::new(HostChild {
            id,
            child: Mutex::new(child),
        })),
        stdin,
        stdout,
        stderr,
    }
}

/// A child of this process.
#[derive(Debug)]
pub(crate) struct HostChild {
    id: u32,
    child: Mutex<Child>,
}

impl ProcessControl for HostChild {
    fn id(&self) -> u32 {
        self.id
    }

    fn host_id(&self) -> Option<u32> {
        Some(self.id)
    }

    fn signal_group(&self, signal: Signal) -> io::Result<()> {
        let pid = rustix::process::Pid::from_raw(self.id as i32)
            .ok_or_else(|| io::Error::other("pid 0"))?;
        rustix::process::kill_process_group(pid, signal).map_err(io::Error::from)
    }

    fn try_wait(&self) -> io::Result<Option<ExitStatus>> {
        self.child
            .lock()
            .map_err(|_| io::Error::other("poisoned"))?
            .try_wait()
    }

    fn wait_timeout(&self, timeout: Duration) -> io::Result<Option<ExitStatus>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(Some(status));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

type SpawnJob = Box<dyn FnOnce() + Send>;

/// The thread every child is spawned from: it lives as long as the process.
fn spawner() -> &'static Mutex<mpsc::Sender<SpawnJob>> {
    static SPAWNER: std::sync::OnceLock<Mutex<mpsc::Sender<SpawnJob>>> = std::sync::OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("hands-spawner".into())
            .spawn(move || {
                for job in rx {
                    job();
                }
            })
            .expect("the spawner thread starts");
        Mutex::new(tx)
    })
}

/// Spawns `command` from the long-lived spawner thread with `extra_fds` as 3, 4, … and a
/// parent-death SIGKILL.
pub(crate) fn spawn_from_long_lived_thread(
    mut command: Command,
    extra_fds: Vec<OwnedFd>,
) -> io::Result<Child> {
    // Move the descriptors out of the way of 3, 4, … first, so placing one cannot overwrite
    // another that is still to be placed.
    let (high, raw) = crate::spawn::lift_extra_fds(extra_fds)?;
    let parent = std::process::id() as i32;
    // SAFETY: the closure runs in the forked child before exec and calls only async-signal-safe
    // functions (dup2, prctl, getppid, kill) on plain integers captured by value.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            crate::spawn::place_extra_fds(&raw)?;
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before the signal was armed.
            if libc::getppid() != parent {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            Ok(())
        });
    }
    let (tx, rx) = mpsc::channel();
    let job: SpawnJob = Box::new(move || {
        let result = command.spawn();
        drop(high);
        let _ = tx.send(result);
    });
    spawner()
        .lock()
        .map_err(|_| io::Error::other("the spawner thread is gone"))?
        .send(job)
        .map_err(|_| io::Error::other("the spawner thread is gone"))?;
    rx.recv()
        .map_err(|_| io::Error::other("the spawner thread is gone"))?
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use super::*;

    fn read_all(fd: OwnedFd) -> String {
        let mut text = String::new();
        std::fs::File::from(fd).read_to_string(&mut text).unwrap();
        text
    }

    #[test]
    fn a_child_gets_exactly_its_environment_and_extra_descriptors() {
        let (reader, writer) = rustix::pipe::pipe().unwrap();
        let spec = ProcessSpec::new("/bin/sh")
            .args(["-c", "echo \"[$HOME|$ONLY]\"; echo via-fd-3 >&3"])
            .env("ONLY", "this")
            .stdio(ChildIo::Null, ChildIo::Pipe, ChildIo::Null)
            .extra_fd(writer);
        let spawned = HostLauncher.spawn(spec).unwrap();
        let status = spawned
            .process
            .wait_timeout(Duration::from_secs(5))
            .unwrap();
        assert!(status.unwrap().success());
        assert_eq!(read_all(spawned.stdout.unwrap()), "[|this]\n");
        assert_eq!(read_all(reader), "via-fd-3\n");
    }

    #[test]
    fn dropping_the_last_handle_kills_the_whole_group() {
        let spec = ProcessSpec::new("/bin/sh")
            .args(["-c", "sleep 30 & echo $!; wait"])
            .stdio(ChildIo::Null, ChildIo::Pipe, ChildIo::Null);
        let spawned = HostLauncher.spawn(spec).unwrap();
        let mut line = String::new();
        let mut out = std::fs::File::from(spawned.stdout.unwrap());
        let mut byte = [0u8; 1];
        while out.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
            line.push(byte[0] as char);
        }
        let sleeper: i32 = line.trim().parse().unwrap();
        drop(spawned.process);
        let deadline = Instant::now() + Duration::from_secs(3);
        // The grandchild is reaped by init; it is gone once kill(pid, 0) fails.
        while rustix::process::test_kill_process(rustix::process::Pid::from_raw(sleeper).unwrap())
            .is_ok()
        {
            let zombie = std::fs::read_to_string(format!("/proc/{sleeper}/stat"))
                .map(|s| s.contains(") Z "))
                .unwrap_or(true);
            if zombie {
                break;
            }
            assert!(Instant::now() < deadline, "the group's sleeper survived");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn a_missing_program_is_an_exec_error_naming_it() {
        let err = HostLauncher
            .spawn(ProcessSpec::new("/nonexistent/program"))
            .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/program"), "{err}");
    }
}
