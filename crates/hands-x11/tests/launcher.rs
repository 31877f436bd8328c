//! The desktop across the launcher boundary (issue 17, "X across the boundary"), against a real
//! Xvfb: every program starts through the launcher with an explicit environment and no
//! credential, hands' connection is the stream the launcher connects, captures go through a
//! memfd (no System V segment), and the pids the server reports are mapped by the launcher.

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hands_core::geometry::{ScreenPoint, Size};
use hands_core::input::{Button, ModifierSet};
use hands_core::{CancellationToken, Desktop as _};
use hands_jail::{
    HostLauncher, Isolation, Launcher, ProcessSpec, SharedDir, SpawnError, Spawned, UnixAddress,
};
use hands_testkit::EventKind::{ButtonPress, ButtonRelease};
use hands_testkit::InputRecorder;
use hands_x11::{X11Desktop, X11Error, XvfbConfig};
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};

/// What the recording launcher saw.
#[derive(Debug, Default)]
struct Seen {
    /// Each spawn's program and environment.
    spawns: Vec<(PathBuf, Vec<(OsString, OsString)>)>,
    /// Each unix address connected to, and whether it worked.
    connects: Vec<(UnixAddress, bool)>,
    /// Each pid asked to be mapped.
    mapped: Vec<u32>,
}

/// The host launcher, recording what it is asked; it can refuse abstract or all unix connects.
#[derive(Debug, Default)]
struct Recording {
    seen: Mutex<Seen>,
    refuse_abstract: bool,
    refuse_all: bool,
}

impl Recording {
    fn seen<T>(&self, f: impl FnOnce(&Seen) -> T) -> T {
        f(&self.seen.lock().expect("not poisoned"))
    }
}

impl Launcher for Recording {
    fn spawn(&self, spec: ProcessSpec) -> Result<Spawned, SpawnError> {
        self.seen
            .lock()
            .expect("not poisoned")
            .spawns
            .push((spec.program.clone(), spec.env.clone()));
        HostLauncher.spawn(spec)
    }

    fn connect_unix(&self, address: &UnixAddress) -> io::Result<OwnedFd> {
        let refused = self.refuse_all
            || (self.refuse_abstract && matches!(address, UnixAddress::Abstract(_)));
        let result = if refused {
            Err(io::Error::from(io::ErrorKind::ConnectionRefused))
        } else {
            HostLauncher.connect_unix(address)
        };
        self.seen
            .lock()
            .expect("not poisoned")
            .connects
            .push((address.clone(), result.is_ok()));
        result
    }

    fn host_pid(&self, pid: u32) -> Option<u32> {
        self.seen.lock().expect("not poisoned").mapped.push(pid);
        HostLauncher.host_pid(pid)
    }

    fn isolation(&self) -> Isolation {
        HostLauncher.isolation()
    }

    fn listen_tcp(&self, port: u16) -> io::Result<std::net::TcpListener> {
        HostLauncher.listen_tcp(port)
    }

    fn private_dir(&self, name: &str) -> io::Result<SharedDir> {
        HostLauncher.private_dir(name)
    }
}

fn size(width: u32, height: u32) -> Size {
    Size::new(width, height).expect("a non-empty size")
}

/// System V shared-memory segments this process created (`/proc/sysvipc/shm`, column `cpid`).
fn own_sysv_segments() -> usize {
    let table = std::fs::read_to_string("/proc/sysvipc/shm").expect("/proc/sysvipc/shm");
    let pid = std::process::id().to_string();
    table
        .lines()
        .skip(1)
        .filter(|row| row.split_whitespace().nth(4) == Some(pid.as_str()))
        .count()
}

#[tokio::test]
async fn capture_uses_a_memfd_not_a_sysv_segment() {
    let before = own_sysv_segments();
    let mut desktop = X11Desktop::spawn(&XvfbConfig::new(size(1280, 800))).expect("Xvfb");
    let recorder = InputRecorder::start(desktop.display()).expect("recorder");
    let pixels = desktop.capture().await.expect("capture");
    let pattern = recorder.pattern();
    for y in 0..800 {
        for x in 0..1280 {
            assert_eq!(
                pixels.rgb_at(x, y),
                Some(pattern.rgb_at(x, y)),
                "pixel ({x}, {y})"
            );
        }
    }
    let mut times = Vec::new();
    for _ in 0..30 {
        let start = Instant::now();
        let again = desktop.capture().await.expect("capture");
        times.push(start.elapsed());
        assert!(again == pixels, "a static screen captures the same");
    }
    times.sort();
    eprintln!(
        "capture 1280x800: median {:.2} ms, min {:.2} ms, max {:.2} ms (30 captures)",
        times[15].as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        times[29].as_secs_f64() * 1e3
    );
    assert_eq!(own_sysv_segments(), before, "no System V segment was made");
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    assert!(
        maps.lines()
            .any(|line| line.contains("/memfd:hands-x11-capture")),
        "the capture memfd is mapped here"
    );
}

#[tokio::test]
async fn the_connection_is_built_from_a_passed_in_stream() {
    let launcher = Arc::new(Recording::default());
    let config = XvfbConfig::new(size(640, 480)).with_launcher(launcher.clone());
    let mut desktop = X11Desktop::spawn(&config).expect("Xvfb");
    let number = desktop.display().trim_start_matches(':').to_owned();
    let abstract_name = format!("/tmp/.X11-unix/X{number}").into_bytes();
    assert_eq!(
        launcher.seen(|s| s.connects.clone()),
        vec![(UnixAddress::Abstract(abstract_name), true)],
        "one connect, to the abstract socket, through the launcher"
    );

    // The desktop works on that stream: a click reaches a client, whose pid the server reports
    // and the launcher maps before /proc is read.
    let recorder = InputRecorder::start(desktop.display()).expect("recorder");
    desktop
        .click(
            Some(ScreenPoint { x: 30, y: 40 }),
            Button::Left,
            1,
            ModifierSet::NONE,
        )
        .await
        .expect("click");
    desktop
        .settle(Default::default(), &CancellationToken::new())
        .await
        .expect("settle");
    let events = recorder.sync().expect("sync");
    let buttons: Vec<_> = events
        .iter()
        .filter(|e| e.is_button())
        .map(|e| (e.kind, e.detail, e.position()))
        .collect();
    assert_eq!(
        buttons,
        vec![(ButtonPress, 1, (30, 40)), (ButtonRelease, 1, (30, 40))]
    );
    assert!(
        launcher.seen(|s| s.mapped.contains(&std::process::id())),
        "the recorder's pid went through the launcher: {:?}",
        launcher.seen(|s| s.mapped.clone())
    );
    drop(desktop);

    // Without an abstract socket, the socket file.
    let launcher = Arc::new(Recording {
        refuse_abstract: true,
        ..Recording::default()
    });
    let config = XvfbConfig::new(size(320, 240)).with_launcher(launcher.clone());
    let mut desktop = X11Desktop::spawn(&config).expect("Xvfb");
    let path = format!(
        "/tmp/.X11-unix/X{}",
        desktop.display().trim_start_matches(':')
    );
    assert_eq!(
        launcher.seen(|s| s.connects.clone()),
        vec![
            (UnixAddress::Abstract(path.clone().into_bytes()), false),
            (UnixAddress::Path(path.into()), true)
        ]
    );
    assert_eq!(
        desktop.capture().await.expect("capture").size(),
        size(320, 240)
    );
    drop(desktop);

    // And nothing else: a launcher that cannot connect leaves no desktop, even though the
    // display's sockets are reachable from here.
    let launcher = Arc::new(Recording {
        refuse_all: true,
        ..Recording::default()
    });
    let config = XvfbConfig::new(size(320, 240)).with_launcher(launcher.clone());
    let err = X11Desktop::spawn(&config).expect_err("no stream, no desktop");
    assert!(matches!(err, X11Error::Connect { .. }), "{err}");
    assert_eq!(launcher.seen(|s| s.connects.len()), 2);
}

/// The variables of a running process, from `/proc/<pid>/environ`.
fn environ(pid: u32) -> Vec<(String, String)> {
    let raw = std::fs::read(format!("/proc/{pid}/environ")).expect("environ");
    raw.split(|b| *b == 0)
        .filter(|v| !v.is_empty())
        .map(|v| {
            let text = String::from_utf8_lossy(v);
            let (name, value) = text.split_once('=').unwrap_or((&text, ""));
            (name.to_owned(), value.to_owned())
        })
        .collect()
}

/// Whether a top-level window of class `class` is on `display`.
fn has_window_of_class(display: &str, class: &[u8]) -> bool {
    let Ok((conn, screen)) = x11rb::connect(Some(display)) else {
        return false;
    };
    let root = conn.setup().roots[screen].root;
    let Ok(tree) = conn.query_tree(root).expect("request").reply() else {
        return false;
    };
    tree.children.iter().any(|&window| {
        conn.get_property(false, window, AtomEnum::WM_CLASS, AtomEnum::STRING, 0, 64)
            .expect("request")
            .reply()
            .is_ok_and(|r| r.value.split(|b| *b == 0).any(|part| part == class))
    })
}

#[tokio::test]
async fn x_clients_start_through_the_launcher() {
    // SAFETY: set before this test starts any thread of its own (nextest runs each test in a
    // process of its own, and the runtime of `#[tokio::test]` is single-threaded); nothing reads
    // the environment concurrently.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("HANDS_X11_CANARY_API_KEY", "canary-4711");
    }
    let launcher = Arc::new(Recording::default());
    let mut config = XvfbConfig::new(size(640, 480)).with_launcher(launcher.clone());
    // Even one named in the desktop's environment is dropped.
    config
        .env
        .push(("GITHUB_TOKEN".into(), "canary-4712".into()));
    let desktop = X11Desktop::spawn(&config).expect("Xvfb");
    let mut client = desktop
        .spawn_client("xmessage", &["-name", "hands-x11-launcher-test", "hello"])
        .expect("xmessage");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !has_window_of_class(desktop.display(), b"hands-x11-launcher-test") {
        assert!(client.is_running(), "xmessage exited");
        assert!(Instant::now() < deadline, "no xmessage window");
        std::thread::sleep(Duration::from_millis(20));
    }

    let spawns = launcher.seen(|s| s.spawns.clone());
    let programs: Vec<_> = spawns.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(
        programs,
        vec![PathBuf::from("Xvfb"), PathBuf::from("xmessage")],
        "every program went through the launcher"
    );
    for (program, env) in &spawns {
        let names: Vec<String> = env
            .iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().any(|n| n == "PATH"), "{program:?}: {names:?}");
        for name in &names {
            assert!(
                !hands_core::process::looks_like_credential(name),
                "{program:?} got {name}"
            );
        }
        assert!(
            !env.iter()
                .any(|(_, v)| v.to_string_lossy().contains("canary")),
            "{program:?}: {names:?}"
        );
    }
    let display_of = |env: &[(OsString, OsString)]| {
        env.iter()
            .find(|(k, _)| k == "DISPLAY")
            .map(|(_, v)| v.to_string_lossy().into_owned())
    };
    assert_eq!(display_of(&spawns[0].1), None, "Xvfb gets no DISPLAY");
    assert_eq!(
        display_of(&spawns[1].1).as_deref(),
        Some(desktop.display()),
        "the client gets its display"
    );

    // What the running client really has.
    let pid = client.host_pid().expect("a host pid");
    let real = environ(pid);
    assert!(
        real.iter()
            .any(|(k, v)| k == "DISPLAY" && v == desktop.display()),
        "{real:?}"
    );
    assert!(
        !real
            .iter()
            .any(|(k, v)| k.contains("CANARY") || k == "GITHUB_TOKEN" || v.contains("canary")),
        "{real:?}"
    );
    drop(client);
}
