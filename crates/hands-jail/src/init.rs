//! The jail's init: the one program hands starts in a jail, which starts every other one.
//!
//! It runs inside the jail (its namespaces, its uid, its seccomp filter) and answers hands over
//! one `SOCK_SEQPACKET` socket ([`crate::proto`]): start a program with the descriptors hands
//! sends, signal a process group, connect to a unix socket inside (the jail's X server), listen
//! on the jail's loopback (hands' policy proxy). It reports each of its children's exits. When
//! hands goes away (the socket closes) it kills every group it started and exits; the jail's
//! pid namespace then takes whatever is left.
//!
//! Single-threaded on purpose: it forks, and a forked child of a single-threaded process may run
//! ordinary code before `exec`.

use std::collections::HashSet;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd as _, FromRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStringExt as _;
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};

use crate::proto::{self, Reply, Request};

/// The descriptor the control socket is on when the init starts.
pub const CONTROL_FD: i32 = 3;

/// The init's `main`: `args` are its arguments after the program name (none are needed).
/// Returns the process's exit code.
pub fn main() -> i32 {
    match run() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("hands jail init: {e}");
            1
        }
    }
}

fn run() -> io::Result<()> {
    // SAFETY: fd 3 is the control socket bwrap passed through (the jail's start put it there);
    // nothing else in this process owns it.
    #[allow(unsafe_code)]
    let control = unsafe { OwnedFd::from_raw_fd(CONTROL_FD) };
    close_other_fds();
    // The control socket is hands' alone: no program the init starts inherits it (bwrap passed
    // it without close-on-exec), and no program of the jail's uid may take it with
    // `pidfd_getfd` or rewrite the init through `/proc/<pid>/mem` (a non-dumpable process's
    // `/proc` files are not the jail user's). Either would let a jailed program forge the init's
    // answers to hands or read its requests.
    rustix::io::fcntl_setfd(&control, rustix::io::FdFlags::CLOEXEC)?;
    // SAFETY: prctl with plain integers; changes only this process's dumpable flag.
    #[allow(unsafe_code)]
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let signals = child_signal_fd()?;
    proto::send(
        control.as_fd(),
        &Reply::Ready {
            pid: std::process::id() as i32,
        },
        &[],
    )?;
    let mut children: HashSet<i32> = HashSet::new();
    loop {
        let mut polled = [
            rustix::event::PollFd::new(&control, rustix::event::PollFlags::IN),
            rustix::event::PollFd::new(&signals, rustix::event::PollFlags::IN),
        ];
        match rustix::event::poll(&mut polled, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
        let control_ready = !polled[0].revents().is_empty();
        let signal_ready = !polled[1].revents().is_empty();
        if signal_ready {
            drain_signal_fd(&signals);
            reap(&control, &mut children)?;
        }
        if control_ready {
            match proto::recv::<Request>(control.as_fd()) {
                Ok(Some((request, fds))) => handle(&control, request, fds, &mut children)?,
                Ok(None) | Err(_) => {
                    // hands is gone: take everything down with it.
                    for pgid in &children {
                        // SAFETY: kill with a negative pid signals a group; plain integers.
                        #[allow(unsafe_code)]
                        unsafe {
                            libc::kill(-pgid, libc::SIGKILL);
                        }
                    }
                    return Ok(());
                }
            }
        }
    }
}

/// Closes every descriptor above the control socket (bwrap's seccomp descriptor, anything
/// inherited by mistake).
fn close_other_fds() {
    // SAFETY: close_range on descriptors this process does not use; no memory is touched.
    #[allow(unsafe_code)]
    unsafe {
        libc::syscall(libc::SYS_close_range, CONTROL_FD as u32 + 1, u32::MAX, 0u32);
    }
}

/// A signalfd for SIGCHLD, with SIGCHLD blocked so it is only read there.
fn child_signal_fd() -> io::Result<OwnedFd> {
    // SAFETY: sigset manipulation on a local set, then sigprocmask/signalfd with valid pointers.
    #[allow(unsafe_code)]
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        if libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

fn drain_signal_fd(signals: &OwnedFd) {
    let mut buf = [0u8; 128 * 4];
    while matches!(rustix::io::read(signals, &mut buf), Ok(n) if n > 0) {}
}

/// Reaps every ended child and reports those the init started.
fn reap(control: &OwnedFd, children: &mut HashSet<i32>) -> io::Result<()> {
    loop {
        let mut status = 0;
        // SAFETY: waitpid with a valid pointer to a local.
        #[allow(unsafe_code)]
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return Ok(());
        }
        if children.remove(&pid) {
            proto::send(control.as_fd(), &Reply::Exited { pid, status }, &[])?;
        }
    }
}

fn failed(control: &OwnedFd, id: u64, error: &io::Error) -> io::Result<()> {
    proto::send(
        control.as_fd(),
        &Reply::Failed {
            id,
            errno: error.raw_os_error(),
            message: error.to_string(),
        },
        &[],
    )
}

fn handle(
    control: &OwnedFd,
    request: Request,
    fds: Vec<OwnedFd>,
    children: &mut HashSet<i32>,
) -> io::Result<()> {
    match request {
        Request::Spawn {
            id,
            program,
            args,
            env,
            cwd,
            stdio,
            n_extra,
        } => match spawn(program, args, env, cwd, stdio, n_extra, fds) {
            Ok(pid) => {
                children.insert(pid);
                proto::send(
                    control.as_fd(),
                    &Reply::Done {
                        id,
                        pid: Some(pid),
                        port: None,
                    },
                    &[],
                )
            }
            Err(e) => failed(control, id, &e),
        },
        Request::Signal { id, pgid, signal } => {
            // SAFETY: kill with plain integers.
            #[allow(unsafe_code)]
            let rc = unsafe { libc::kill(-pgid, signal) };
            if rc == 0 {
                proto::send(
                    control.as_fd(),
                    &Reply::Done {
                        id,
                        pid: None,
                        port: None,
                    },
                    &[],
                )
            } else {
                failed(control, id, &io::Error::last_os_error())
            }
        }
        Request::Connect {
            id,
            path,
            abstract_name,
        } => {
            let address = if abstract_name {
                crate::UnixAddress::Abstract(path)
            } else {
                crate::UnixAddress::Path(OsString::from_vec(path).into())
            };
            match crate::host::connect_unix_here(&address) {
                Ok(fd) => proto::send(
                    control.as_fd(),
                    &Reply::Done {
                        id,
                        pid: None,
                        port: None,
                    },
                    &[fd.as_fd()],
                ),
                Err(e) => failed(control, id, &e),
            }
        }
        Request::Listen { id, port } => {
            match std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port)) {
                Ok(listener) => {
                    let port = listener.local_addr().map(|a| a.port()).ok();
                    proto::send(
                        control.as_fd(),
                        &Reply::Done {
                            id,
                            pid: None,
                            port,
                        },
                        &[listener.as_fd()],
                    )
                }
                Err(e) => failed(control, id, &e),
            }
        }
    }
}

fn spawn(
    program: Vec<u8>,
    args: Vec<Vec<u8>>,
    env: Vec<(Vec<u8>, Vec<u8>)>,
    cwd: Vec<u8>,
    stdio: [bool; 3],
    n_extra: usize,
    fds: Vec<OwnedFd>,
) -> io::Result<i32> {
    let n_stdio = stdio.iter().filter(|s| **s).count();
    if fds.len() != n_stdio + n_extra {
        return Err(io::Error::other(format!(
            "expected {} descriptors, got {}",
            n_stdio + n_extra,
            fds.len()
        )));
    }
    let mut fds = fds.into_iter();
    let program = OsString::from_vec(program);
    let mut command = Command::new(&program);
    command
        .args(args.into_iter().map(OsString::from_vec))
        .env_clear()
        .envs(
            env.into_iter()
                .map(|(k, v)| (OsString::from_vec(k), OsString::from_vec(v))),
        )
        .current_dir(OsString::from_vec(cwd))
        .process_group(0);
    let mut streams: Vec<Stdio> = Vec::new();
    for wanted in stdio {
        let fd = if wanted { fds.next() } else { None };
        streams.push(fd.map_or_else(Stdio::null, Stdio::from));
    }
    let mut streams = streams.into_iter();
    if let (Some(i), Some(o), Some(e)) = (streams.next(), streams.next(), streams.next()) {
        command.stdin(i).stdout(o).stderr(e);
    }
    // Move the extra descriptors above where they go, so placing one cannot overwrite another.
    let (high, raw) = crate::spawn::lift_extra_fds(fds)?;
    // SAFETY: runs in the forked child before exec; dup2 and sigprocmask on plain integers and
    // a local set (the init is single-threaded, so nothing else holds a lock).
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            crate::spawn::place_extra_fds(&raw)?;
            // The init blocks SIGCHLD for its signalfd; programs start with nothing blocked.
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
            Ok(())
        });
    }
    let child = command.spawn()?;
    drop(high);
    let pid = child.id() as i32;
    // The child is reaped by `reap`, not through `Child`.
    std::mem::forget(child);
    Ok(pid)
}
