//! What the end-to-end red team plants and reads on the host: canary servers on host loopback
//! that record every connection and every byte, the attacker's raw client (a Python script the
//! jailed bash runs), and the host's view of a process tree's listening sockets.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A random hex token (16 bytes of the kernel's randomness).
pub fn token() -> String {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("/dev/urandom");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What the allowed origin answers.
pub const ALLOWED_BODY: &str = "allowed-origin-ok";

/// A host TCP (or UDP) server that records every connection (or datagram) and every byte;
/// with an answer, it replies to the first request head with `200` and that body.
pub struct Canary {
    /// Its name in the table.
    pub name: &'static str,
    /// Where it listens on the host.
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Canary {
    /// A TCP canary bound on `bind` (threads are left running until the test process ends).
    pub fn tcp(name: &'static str, bind: &str, answer: bool) -> Canary {
        let listener = TcpListener::bind(bind).expect("tcp canary");
        let addr = listener.local_addr().expect("addr");
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let record = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let peer = stream
                    .peer_addr()
                    .map(|p| p.to_string())
                    .unwrap_or_default();
                let index = {
                    let mut seen = record.lock().unwrap();
                    seen.push(format!("connection from {peer}: "));
                    seen.len() - 1
                };
                let record = Arc::clone(&record);
                std::thread::spawn(move || {
                    let _ = stream.set_read_timeout(Some(Duration::from_millis(400)));
                    let mut all = Vec::new();
                    let mut buf = [0u8; 4096];
                    let mut answered = false;
                    // Everything that arrives within a moment of the last byte is recorded.
                    while let Ok(n) = stream.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        all.extend_from_slice(&buf[..n]);
                        record.lock().unwrap()[index] =
                            format!("connection from {peer}: {}", String::from_utf8_lossy(&all));
                        if answer && !answered && all.windows(4).any(|w| w == b"\r\n\r\n") {
                            answered = true;
                            let _ = stream.write_all(
                                format!(
                                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n{ALLOWED_BODY}",
                                    ALLOWED_BODY.len()
                                )
                                .as_bytes(),
                            );
                        }
                    }
                });
            }
        });
        Canary { name, addr, seen }
    }

    /// A UDP canary on `bind`, else on a port the OS picks beside it.
    pub fn udp(name: &'static str, bind: &str) -> Canary {
        let socket = UdpSocket::bind(bind)
            .or_else(|_| UdpSocket::bind("127.0.0.1:0"))
            .expect("udp canary");
        let addr = socket.local_addr().expect("addr");
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let record = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 512];
            while let Ok((n, peer)) = socket.recv_from(&mut buf) {
                record.lock().unwrap().push(format!(
                    "datagram from {peer}: {}",
                    String::from_utf8_lossy(&buf[..n])
                ));
            }
        });
        Canary { name, addr, seen }
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// How many connections or datagrams so far.
    pub fn count(&self) -> usize {
        self.seen.lock().map(|s| s.len()).unwrap_or(usize::MAX)
    }

    /// What it saw from index `from` on.
    pub fn since(&self, from: usize) -> Vec<String> {
        self.seen
            .lock()
            .map(|s| s.iter().skip(from).cloned().collect())
            .unwrap_or_default()
    }
}

/// The attacker's raw client, run by the jailed bash: `python3 raw.py HOST PORT HEX [HEX]`
/// connects, sends the first bytes, sends the second ones once an answer head has arrived (a
/// tunnel's ClientHello after `200 Connection Established`), and prints everything it got back
/// until the server closes (or `NOCONNECT errno` when the connection itself failed).
pub const RAW_CLIENT: &str = r#"import socket, sys, binascii
host, port = sys.argv[1], int(sys.argv[2])
first = binascii.unhexlify(sys.argv[3])
then = binascii.unhexlify(sys.argv[4]) if len(sys.argv) > 4 else b''
try:
    s = socket.create_connection((host, port), 5)
except OSError as e:
    print('NOCONNECT', e.errno, e)
    sys.exit(0)
s.sendall(first)
s.settimeout(4)
out = b''
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
        if then and b'\r\n\r\n' in out:
            s.sendall(then)
            then = b''
except OSError as e:
    out += ('\n[recv ended: %s]' % e).encode()
sys.stdout.write(out.decode('latin-1'))
"#;

/// Hex of `bytes`, for [`RAW_CLIENT`]'s arguments.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub use hands_cdp::proxy::sni::client_hello;

/// `pid` and every process below it (by parent, or in its process group), read on the host.
pub fn process_tree(pid: u32) -> HashSet<u32> {
    let stat = |p: u32| -> Option<(u32, u32)> {
        let text = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
        // `pid (comm) state ppid pgrp …`; the name may hold spaces and parentheses.
        let fields: Vec<&str> = text[text.rfind(')')? + 2..].split(' ').collect();
        Some((fields.get(1)?.parse().ok()?, fields.get(2)?.parse().ok()?))
    };
    let all: Vec<(u32, u32, u32)> = std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
                .filter_map(|p| stat(p).map(|(ppid, pgrp)| (p, ppid, pgrp)))
                .collect()
        })
        .unwrap_or_default();
    let mut tree: HashSet<u32> = all
        .iter()
        .filter(|(_, _, pgrp)| *pgrp == pid)
        .map(|(p, _, _)| *p)
        .collect();
    tree.insert(pid);
    loop {
        let before = tree.len();
        for (p, ppid, _) in &all {
            if tree.contains(ppid) {
                tree.insert(*p);
            }
        }
        if tree.len() == before {
            return tree;
        }
    }
}

/// The TCP sockets in LISTEN state in `pid`'s network namespace: (inode, port).
pub fn listening_in_netns(pid: u32) -> Vec<(u64, u16)> {
    let mut found = Vec::new();
    for table in ["tcp", "tcp6"] {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // `sl local rem st tx:rx tr:when retrnsmt uid timeout inode`; 0A is LISTEN.
            if fields.get(3) == Some(&"0A")
                && let Some(inode) = fields.get(9).and_then(|i| i.parse().ok())
                && let Some(port) = fields
                    .get(1)
                    .and_then(|a| a.rsplit(':').next())
                    .and_then(|p| u16::from_str_radix(p, 16).ok())
            {
                found.push((inode, port));
            }
        }
    }
    found
}

/// The socket inodes among `pid`'s open descriptors.
pub fn socket_inodes(pid: u32) -> HashSet<u64> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return HashSet::new();
    };
    fds.filter_map(|fd| {
        let target = std::fs::read_link(fd.ok()?.path()).ok()?;
        target
            .to_str()?
            .strip_prefix("socket:[")?
            .strip_suffix(']')?
            .parse()
            .ok()
    })
    .collect()
}

/// The TCP ports `pid` itself listens on.
pub fn listening_ports_of(pid: u32) -> Vec<u16> {
    let mine = socket_inodes(pid);
    listening_in_netns(pid)
        .into_iter()
        .filter(|(inode, _)| mine.contains(inode))
        .map(|(_, port)| port)
        .collect()
}

/// One line of evidence: the text on one line, cut to 200 characters.
pub fn short(text: &str) -> String {
    let text = text.trim().replace("\r\n", " ⏎ ").replace('\n', " | ");
    if text.chars().count() > 200 {
        format!("{}…", text.chars().take(200).collect::<String>())
    } else {
        text
    }
}
