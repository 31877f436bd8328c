//! Canaries planted on the host for the red team: files holding a random token, an environment
//! variable, TCP, UDP and unix listeners that record every connection and datagram. Removed and
//! stopped on drop.

#![allow(dead_code)]

use std::io::Read as _;
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::os::linux::net::SocketAddrExt as _;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hands_jail::{ChildIo, Jail, Launcher, Process, ProcessSpec};

/// A random hex token (16 bytes of the kernel's randomness).
pub fn token() -> String {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("/dev/urandom");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What every listener heard: (canary name, what it saw).
pub type Log = Arc<Mutex<Vec<(String, String)>>>;

/// Everything planted on the host.
pub struct Canaries {
    /// The token in every file and the environment.
    pub token: String,
    /// Host files holding the token.
    pub files: Vec<PathBuf>,
    /// A host directory the jail must not write into.
    pub dir: PathBuf,
    /// The environment variable's name.
    pub env_name: &'static str,
    /// TCP listeners: name -> address.
    pub tcp: Vec<(String, SocketAddr)>,
    /// UDP listeners: name -> address.
    pub udp: Vec<(String, SocketAddr)>,
    /// The abstract unix socket's name (no leading NUL).
    pub abstract_name: String,
    /// The path unix socket.
    pub socket_path: PathBuf,
    /// Every hit.
    pub log: Log,
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    remove: Vec<PathBuf>,
}

fn record(log: &Log, name: &str, what: String) {
    if let Ok(mut log) = log.lock() {
        log.push((name.to_owned(), what));
    }
}

impl Canaries {
    /// Plants every canary. Call before any thread that matters starts (it sets an environment
    /// variable of this process).
    pub fn plant() -> Canaries {
        let token = token();
        let env_name = "HANDS_CANARY_API_KEY";
        // SAFETY: set before any other thread of this test reads the environment.
        unsafe { std::env::set_var(env_name, &token) };
        let home = PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()));
        let ssh = home.join(".ssh");
        let mut remove = Vec::new();
        if !ssh.exists() {
            std::fs::create_dir_all(&ssh).expect("~/.ssh");
            remove.push(ssh.clone());
        }
        let key = if ssh.join("id_ed25519").exists() {
            ssh.join(format!("id_ed25519_hands_canary_{token}"))
        } else {
            ssh.join("id_ed25519")
        };
        let files = vec![
            home.join(format!("hands-canary-{token}.txt")),
            key,
            std::env::temp_dir().join(format!("hands-canary-{token}.txt")),
            PathBuf::from(format!("/run/hands-canary-{token}.txt")),
            PathBuf::from(format!("/root/hands-canary-root-{token}.txt")),
        ];
        for file in &files {
            if std::fs::write(file, format!("CANARY {token}\n")).is_ok() {
                remove.push(file.clone());
            }
        }
        let dir = std::env::temp_dir().join(format!("hands-canary-dir-{token}"));
        std::fs::create_dir_all(&dir).expect("canary dir");
        remove.push(dir.clone());

        let log: Log = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        let mut tcp = Vec::new();
        for (name, bind) in [
            ("tcp 127.0.0.1", "127.0.0.1:0"),
            ("tcp 0.0.0.0", "0.0.0.0:0"),
            ("tcp [::]", "[::]:0"),
        ] {
            let listener = TcpListener::bind(bind).expect("tcp canary");
            listener.set_nonblocking(true).expect("nonblocking");
            tcp.push((name.to_owned(), listener.local_addr().expect("addr")));
            let (log, stop) = (log.clone(), stop.clone());
            threads.push(std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((mut stream, peer)) => {
                            let _ = stream.set_nonblocking(false);
                            let _ = stream.set_read_timeout(Some(Duration::from_millis(300)));
                            let mut buf = [0u8; 256];
                            let n = stream.read(&mut buf).unwrap_or(0);
                            record(
                                &log,
                                name,
                                format!("from {peer}: {}", String::from_utf8_lossy(&buf[..n])),
                            );
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            }));
        }
        let mut udp = Vec::new();
        let dns = UdpSocket::bind("127.0.0.1:53").or_else(|_| UdpSocket::bind("127.0.0.1:0"));
        for (name, socket) in [
            ("udp 127.0.0.1 (dns)", dns),
            ("udp 0.0.0.0", UdpSocket::bind("0.0.0.0:0")),
        ] {
            let socket = socket.expect("udp canary");
            socket
                .set_read_timeout(Some(Duration::from_millis(20)))
                .expect("timeout");
            udp.push((name.to_owned(), socket.local_addr().expect("addr")));
            let (log, stop) = (log.clone(), stop.clone());
            threads.push(std::thread::spawn(move || {
                let mut buf = [0u8; 512];
                while !stop.load(Ordering::Relaxed) {
                    if let Ok((n, peer)) = socket.recv_from(&mut buf) {
                        record(
                            &log,
                            name,
                            format!("from {peer}: {}", String::from_utf8_lossy(&buf[..n])),
                        );
                    }
                }
            }));
        }
        let abstract_name = format!("hands-canary-{token}");
        let socket_path = std::env::temp_dir().join(format!("hands-canary-{token}.sock"));
        remove.push(socket_path.clone());
        let abstract_addr =
            std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes())
                .expect("abstract address");
        for (name, listener) in [
            ("unix abstract", UnixListener::bind_addr(&abstract_addr)),
            ("unix path", UnixListener::bind(&socket_path)),
        ] {
            let listener = listener.expect("unix canary");
            listener.set_nonblocking(true).expect("nonblocking");
            let (log, stop) = (log.clone(), stop.clone());
            threads.push(std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((mut stream, _)) => {
                            let _ = stream.set_nonblocking(false);
                            let _ = stream.set_read_timeout(Some(Duration::from_millis(300)));
                            let mut buf = [0u8; 256];
                            let n = stream.read(&mut buf).unwrap_or(0);
                            record(
                                &log,
                                name,
                                format!("connection: {}", String::from_utf8_lossy(&buf[..n])),
                            );
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            }));
        }
        Canaries {
            token,
            files,
            dir,
            env_name,
            tcp,
            udp,
            abstract_name,
            socket_path,
            log,
            stop,
            threads,
            remove,
        }
    }

    /// The address of the TCP or UDP canary named `name`.
    pub fn addr(&self, name: &str) -> SocketAddr {
        self.tcp
            .iter()
            .chain(&self.udp)
            .find(|(n, _)| n == name)
            .map(|(_, a)| *a)
            .expect("a canary of that name")
    }

    /// How many hits so far.
    pub fn hits(&self) -> usize {
        self.log.lock().map(|l| l.len()).unwrap_or(usize::MAX)
    }

    /// The hits from index `from` on, in words.
    pub fn hits_since(&self, from: usize) -> Vec<String> {
        self.log
            .lock()
            .map(|l| {
                l.iter()
                    .skip(from)
                    .map(|(n, w)| format!("{n}: {w}"))
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Drop for Canaries {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        for path in self.remove.iter().rev() {
            if path.is_dir() {
                let _ = std::fs::remove_dir_all(path);
            } else {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// Runs `argv` through `launcher` with the jail's base environment: (stdout, stderr, exit code,
/// or -signal when killed). Gives up (and kills it) after `timeout`.
pub fn run(launcher: &dyn Launcher, argv: &[&str], timeout: Duration) -> (String, String, i32) {
    use std::os::unix::process::ExitStatusExt as _;
    let spec = ProcessSpec::new(argv[0])
        .args(&argv[1..])
        .envs(Jail::base_env())
        .stdio(ChildIo::Null, ChildIo::Pipe, ChildIo::Pipe);
    let spawned = match launcher.spawn(spec) {
        Ok(spawned) => spawned,
        Err(e) => return (String::new(), format!("spawn failed: {e}"), -1000),
    };
    let stderr = spawned.stderr.expect("stderr");
    let stdout = spawned.stdout.expect("stdout");
    let read = |fd: std::os::fd::OwnedFd| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = std::fs::File::from(fd)
                .take(1 << 20)
                .read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let (out, err) = (read(stdout), read(stderr));
    let status = spawned.process.wait_timeout(timeout).ok().flatten();
    let code = match status {
        Some(s) => s.code().unwrap_or_else(|| -s.signal().unwrap_or(0)),
        None => {
            let _ = spawned.process.kill();
            -999
        }
    };
    drop(spawned.process);
    (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
        code,
    )
}

/// A bash script through `launcher`, 20 s at most.
pub fn bash(launcher: &dyn Launcher, script: &str) -> (String, String, i32) {
    run(
        launcher,
        &["/bin/bash", "-c", script],
        Duration::from_secs(20),
    )
}

/// A Python program through `launcher` (Debian's python3), 20 s at most.
pub fn python(launcher: &dyn Launcher, code: &str) -> (String, String, i32) {
    run(
        launcher,
        &["/usr/bin/python3", "-c", code],
        Duration::from_secs(20),
    )
}

/// Starts `argv` and leaves it running (stdio to /dev/null); the process is killed on drop.
pub fn background(launcher: &dyn Launcher, argv: &[&str]) -> Process {
    let spec = ProcessSpec::new(argv[0])
        .args(&argv[1..])
        .envs(Jail::base_env())
        .stdio(ChildIo::Null, ChildIo::Null, ChildIo::Null);
    launcher.spawn(spec).expect("starts").process
}

/// Host processes (pid, uid, pid namespace, cmdline) that match `keep`.
pub fn host_processes(keep: impl Fn(u32, u32, &str, &str) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let uid = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|u| u.parse().ok())
            .unwrap_or(u32::MAX);
        let ns = std::fs::read_link(format!("/proc/{pid}/ns/pid"))
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        if keep(pid, uid, &ns, &cmdline) {
            found.push(format!("{pid} uid {uid} {ns} {}", cmdline.trim()));
        }
    }
    found
}
