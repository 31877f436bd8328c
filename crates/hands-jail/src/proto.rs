//! The messages between hands and a jail's init, one JSON object per `SOCK_SEQPACKET` datagram,
//! descriptors riding along as `SCM_RIGHTS`.
//!
//! hands creates every descriptor a jailed program gets (its pipes, Chromium's CDP pipes) and
//! sends them in with the request; the init sends back what only exists inside the jail (a
//! connection to the jail's X server, a listener on the jail's loopback). Nothing else crosses.

use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};
use serde::{Deserialize, Serialize};

/// Largest message (a spawn request with a long command line and environment).
pub const MAX_MESSAGE: usize = 256 * 1024;

/// Most descriptors one message carries.
pub const MAX_FDS: usize = 8;

/// A request from hands to the init.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Start a program; the message carries its descriptors in the order: stdin, stdout, stderr
    /// (each only when `true`), then the extra ones (3, 4, …).
    Spawn {
        /// Request id.
        id: u64,
        /// Program path or name.
        program: Vec<u8>,
        /// Arguments.
        args: Vec<Vec<u8>>,
        /// The whole environment.
        env: Vec<(Vec<u8>, Vec<u8>)>,
        /// Working directory.
        cwd: Vec<u8>,
        /// Which standard streams come as descriptors (the rest are `/dev/null`).
        stdio: [bool; 3],
        /// How many extra descriptors follow.
        n_extra: usize,
    },
    /// Send a signal to a process group.
    Signal {
        /// Request id.
        id: u64,
        /// The group (the jail's pid of its leader).
        pgid: i32,
        /// The signal number.
        signal: i32,
    },
    /// Connect to a unix socket inside the jail.
    Connect {
        /// Request id.
        id: u64,
        /// A path, or an abstract name.
        path: Vec<u8>,
        /// Whether `path` is an abstract name.
        abstract_name: bool,
    },
    /// Listen on the jail's loopback.
    Listen {
        /// Request id.
        id: u64,
        /// The port (0: any).
        port: u16,
    },
}

/// A message from the init to hands.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Reply {
    /// The init is up (its jail pid).
    Ready {
        /// The init's pid in the jail.
        pid: i32,
    },
    /// A request done; `Connect` and `Listen` carry one descriptor.
    Done {
        /// Request id.
        id: u64,
        /// The new process's pid (spawn only).
        pid: Option<i32>,
        /// The listener's port (listen only).
        port: Option<u16>,
    },
    /// A request failed.
    Failed {
        /// Request id.
        id: u64,
        /// The OS error number, when there is one.
        errno: Option<i32>,
        /// What failed.
        message: String,
    },
    /// A program the init started ended (the raw wait status).
    Exited {
        /// Its pid in the jail.
        pid: i32,
        /// The wait status.
        status: i32,
    },
}

/// Sends `message` with `fds` on `socket`.
pub fn send<T: Serialize>(
    socket: BorrowedFd<'_>,
    message: &T,
    fds: &[BorrowedFd<'_>],
) -> io::Result<()> {
    let bytes = serde_json::to_vec(message).map_err(io::Error::other)?;
    if bytes.len() > MAX_MESSAGE {
        return Err(io::Error::other(format!(
            "a message of {} bytes is over the {MAX_MESSAGE}-byte limit",
            bytes.len()
        )));
    }
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !fds.is_empty()
        && (fds.len() > MAX_FDS || !control.push(SendAncillaryMessage::ScmRights(fds)))
    {
        return Err(io::Error::other("too many descriptors for one message"));
    }
    loop {
        match rustix::net::sendmsg(
            socket,
            &[IoSlice::new(&bytes)],
            &mut control,
            SendFlags::NOSIGNAL,
        ) {
            Ok(_) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Receives one message and its descriptors; `Ok(None)` when the other side closed.
pub fn recv<T: for<'de> Deserialize<'de>>(
    socket: BorrowedFd<'_>,
) -> io::Result<Option<(T, Vec<OwnedFd>)>> {
    let mut buf = vec![0u8; MAX_MESSAGE];
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let received = loop {
        match rustix::net::recvmsg(
            socket,
            &mut [IoSliceMut::new(&mut buf)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        ) {
            Ok(r) => break r,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    };
    let mut fds = Vec::new();
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = message {
            fds.extend(rights);
        }
    }
    if received.bytes == 0 {
        return Ok(None);
    }
    let message = serde_json::from_slice(&buf[..received.bytes]).map_err(io::Error::other)?;
    Ok(Some((message, fds)))
}

/// Borrows a list of owned descriptors.
pub fn borrow_all(fds: &[OwnedFd]) -> Vec<BorrowedFd<'_>> {
    fds.iter().map(|fd| fd.as_fd()).collect()
}
