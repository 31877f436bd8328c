//! Screen capture: MIT-SHM into memory shared with the server, plain GetImage as the fallback.
//!
//! The shared memory is a `memfd` passed to the server (`ShmAttachFd`, MIT-SHM 1.2) and mapped
//! read-only here (issue 17, "X across the boundary"; spec: Claude computer use, "Precauciones"
//! 1). A System V segment, the older way, fails across an IPC namespace (`BadAccess` from a
//! server in a jail) and can be attached by any process of the same uid that guesses its id: it
//! is only the first fallback, for a server older than MIT-SHM 1.2. GetImage (a remote display,
//! a server without the extension, or shared memory refused) is the last. 1280x800 takes
//! 5–8 ms through the memfd on a 2-core machine.

use std::fmt;
use std::os::fd::OwnedFd;

use hands_core::geometry::Size;
use hands_core::image::{PixelFormat, Pixels};
use x11rb::connection::{Connection as _, RequestConnection as _};
use x11rb::protocol::shm::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat, Window};
use x11rb::rust_connection::RustConnection;

use crate::X11Error;

/// How captures reach this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    /// A memfd the server writes into (`ShmAttachFd`).
    Memfd,
    /// A System V segment (`ShmAttach`).
    SysV,
    /// The pixels inside the reply (`GetImage`).
    GetImage,
}

impl Method {
    /// What to try when this method fails.
    fn fallback(self) -> Method {
        match self {
            Method::Memfd => Method::SysV,
            Method::SysV | Method::GetImage => Method::GetImage,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Memfd => "MIT-SHM through a memfd",
            Method::SysV => "MIT-SHM through a System V segment",
            Method::GetImage => "GetImage",
        })
    }
}

/// A read-only mapping of memory the server writes into, attached to the server as `seg`.
struct Segment {
    addr: *mut libc::c_void,
    len: usize,
    seg: shm::Seg,
    kind: SegmentKind,
}

#[derive(Debug, Clone, Copy)]
enum SegmentKind {
    /// `addr` is an `mmap` of a memfd: unmapped on drop.
    Memfd,
    /// `addr` is a `shmat` of a System V segment: detached on drop.
    SysV,
}

// SAFETY: the mapping is plain memory owned by this value; it is only read through `&self`
// after the server has finished writing a reply, and released once in Drop.
#[allow(unsafe_code)]
unsafe impl Send for Segment {}

impl Segment {
    /// A memfd of `len` bytes, sealed against resizing (so the server cannot shrink it under
    /// our mapping), mapped read-only here and passed to the server.
    fn memfd(conn: &RustConnection, len: usize) -> Result<Segment, X11Error> {
        use rustix::fs::{MemfdFlags, SealFlags};
        let shm_error = |what: &str, e: rustix::io::Errno| {
            X11Error::Shm(format!("{what} ({len} bytes): {}", std::io::Error::from(e)))
        };
        let fd: OwnedFd = rustix::fs::memfd_create(
            "hands-x11-capture",
            MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
        )
        .map_err(|e| shm_error("memfd_create", e))?;
        rustix::fs::ftruncate(&fd, len as u64).map_err(|e| shm_error("ftruncate", e))?;
        rustix::fs::fcntl_add_seals(&fd, SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL)
            .map_err(|e| shm_error("sealing the memfd", e))?;
        // SAFETY: a fresh shared read-only mapping of the whole memfd (which is exactly `len`
        // bytes and sealed against shrinking) at an address the kernel chooses; nothing else
        // in this process refers to that memory.
        #[allow(unsafe_code)]
        let addr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                rustix::mm::ProtFlags::READ,
                rustix::mm::MapFlags::SHARED,
                &fd,
                0,
            )
        }
        .map_err(|e| shm_error("mmap", e))?;
        let segment = |seg| Segment {
            addr,
            len,
            seg,
            kind: SegmentKind::Memfd,
        };
        let seg = match conn.generate_id() {
            Ok(seg) => seg,
            Err(e) => {
                drop(segment(0));
                return Err(X11Error::Shm(e.to_string()));
            }
        };
        // The server maps it read-write (it writes the image); the descriptor is sent and
        // closed here, the mapping keeps the memory.
        let attached = conn
            .shm_attach_fd(seg, fd, false)
            .map_err(|e| X11Error::Shm(e.to_string()))
            .and_then(|cookie| cookie.check().map_err(|e| X11Error::Shm(e.to_string())));
        match attached {
            Ok(()) => Ok(segment(seg)),
            Err(e) => {
                drop(segment(0));
                Err(e)
            }
        }
    }

    /// A System V segment of `len` bytes, attached read-only here and by the server.
    fn sysv(conn: &RustConnection, len: usize) -> Result<Segment, X11Error> {
        // SAFETY: shmget with IPC_PRIVATE creates a fresh segment; arguments are plain values.
        #[allow(unsafe_code)]
        let id = unsafe { libc::shmget(libc::IPC_PRIVATE, len, libc::IPC_CREAT | 0o600) };
        if id < 0 {
            return Err(X11Error::Shm(format!(
                "shmget of {len} bytes failed: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: `id` is the segment just created; a null address lets the kernel choose.
        #[allow(unsafe_code)]
        let addr = unsafe { libc::shmat(id, std::ptr::null(), libc::SHM_RDONLY) };
        if addr as isize == -1 {
            // SAFETY: removing the segment we created and failed to attach.
            #[allow(unsafe_code)]
            unsafe {
                libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
            }
            return Err(X11Error::Shm(format!(
                "shmat failed: {}",
                std::io::Error::last_os_error()
            )));
        }
        let segment = |seg| Segment {
            addr,
            len,
            seg,
            kind: SegmentKind::SysV,
        };
        let attached = conn
            .generate_id()
            .map_err(|e| X11Error::Shm(e.to_string()))
            .and_then(|seg| {
                conn.shm_attach(seg, id as u32, false)
                    .map_err(|e| X11Error::Shm(e.to_string()))
                    .and_then(|cookie| cookie.check().map_err(|e| X11Error::Shm(e.to_string())))
                    .map(|()| seg)
            });
        // Mark for removal now: the segment lives until both sides detach, and nothing leaks if
        // this process dies.
        // SAFETY: `id` names our segment; IPC_RMID takes no buffer.
        #[allow(unsafe_code)]
        unsafe {
            libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
        }
        match attached {
            Ok(seg) => Ok(segment(seg)),
            Err(e) => {
                drop(segment(0));
                Err(e)
            }
        }
    }

    fn bytes(&self, len: usize) -> &[u8] {
        // SAFETY: `addr` points to `self.len` mapped bytes that live as long as `self`; the
        // caller asks for no more than the reply's length, which the server wrote before replying.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts(self.addr as *const u8, len.min(self.len))
        }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        match self.kind {
            SegmentKind::Memfd => {
                // SAFETY: `addr` and `len` are the mapping made in `Segment::memfd`, unmapped
                // exactly once; no slice of it outlives `self`.
                #[allow(unsafe_code)]
                unsafe {
                    let _ = rustix::mm::munmap(self.addr, self.len);
                }
            }
            SegmentKind::SysV => {
                // SAFETY: `addr` came from shmat and is detached exactly once.
                #[allow(unsafe_code)]
                unsafe {
                    libc::shmdt(self.addr);
                }
            }
        }
    }
}

/// Captures the root window, reusing one shared segment sized to the screen.
pub(crate) struct Capturer {
    shm: Option<Segment>,
    method: Method,
    format: PixelFormat,
}

impl Capturer {
    /// Checks the screen's pixel layout and whether MIT-SHM can be used.
    pub(crate) fn new(conn: &RustConnection, screen_num: usize) -> Result<Capturer, X11Error> {
        let setup = conn.setup();
        let screen = &setup.roots[screen_num];
        let depth = screen.root_depth;
        let bpp = setup
            .pixmap_formats
            .iter()
            .find(|f| f.depth == depth)
            .map(|f| f.bits_per_pixel)
            .unwrap_or(0);
        let visual = screen
            .allowed_depths
            .iter()
            .flat_map(|d| d.visuals.iter())
            .find(|v| v.visual_id == screen.root_visual);
        let masks = visual.map(|v| (v.red_mask, v.green_mask, v.blue_mask));
        let lsb = setup.image_byte_order == x11rb::protocol::xproto::ImageOrder::LSB_FIRST;
        if depth != 24 && depth != 32
            || bpp != 32
            || masks != Some((0xff_0000, 0xff00, 0xff))
            || !lsb
        {
            return Err(X11Error::UnsupportedVisual(format!(
                "depth {depth}, {bpp} bits per pixel, masks {masks:x?}, LSB first {lsb}: only 24-bit TrueColor BGRX is supported"
            )));
        }
        let version = conn
            .extension_information(shm::X11_EXTENSION_NAME)
            .ok()
            .flatten()
            .and_then(|_| conn.shm_query_version().ok())
            .and_then(|c| c.reply().ok())
            .map(|v| (v.major_version, v.minor_version));
        // ShmAttachFd came with MIT-SHM 1.2.
        let method = match version {
            Some(v) if v >= (1, 2) => Method::Memfd,
            Some(_) => Method::SysV,
            None => Method::GetImage,
        };
        tracing::debug!(?version, "capture by {method}");
        Ok(Capturer {
            shm: None,
            method,
            format: PixelFormat::Bgrx,
        })
    }

    /// Whether captures go through shared memory.
    pub(crate) fn uses_shm(&self) -> bool {
        self.method != Method::GetImage
    }

    /// How captures reach this process now.
    pub(crate) fn method(&self) -> Method {
        self.method
    }

    /// Captures `size` pixels of `root`.
    pub(crate) fn capture(
        &mut self,
        conn: &RustConnection,
        root: Window,
        size: Size,
    ) -> Result<Pixels, X11Error> {
        let len = size.pixels() as usize * 4;
        while self.method != Method::GetImage {
            match self.capture_shm(conn, root, size, len) {
                Ok(pixels) => return Ok(pixels),
                // A broken connection is no reason to change methods.
                Err(e @ X11Error::Connection(_)) => return Err(e),
                Err(e) => {
                    let next = self.method.fallback();
                    tracing::warn!(error = %e, "capture by {} failed; falling back to {next}", self.method);
                    self.method = next;
                    if let Some(old) = self.shm.take() {
                        let _ = conn.shm_detach(old.seg);
                    }
                }
            }
        }
        let reply = conn
            .get_image(
                ImageFormat::Z_PIXMAP,
                root,
                0,
                0,
                size.width as u16,
                size.height as u16,
                !0,
            )
            .map_err(X11Error::from)?
            .reply()
            .map_err(X11Error::from)?;
        Pixels::new(size, self.format, reply.data).map_err(|e| X11Error::Shm(e.to_string()))
    }

    fn capture_shm(
        &mut self,
        conn: &RustConnection,
        root: Window,
        size: Size,
        len: usize,
    ) -> Result<Pixels, X11Error> {
        if self.shm.as_ref().is_none_or(|s| s.len < len) {
            if let Some(old) = self.shm.take() {
                let _ = conn.shm_detach(old.seg);
            }
            self.shm = Some(match self.method {
                Method::Memfd => Segment::memfd(conn, len)?,
                _ => Segment::sysv(conn, len)?,
            });
        }
        let Some(segment) = self.shm.as_ref() else {
            return Err(X11Error::Shm("no segment".into()));
        };
        let reply = conn
            .shm_get_image(
                root,
                0,
                0,
                size.width as u16,
                size.height as u16,
                !0,
                ImageFormat::Z_PIXMAP.into(),
                segment.seg,
                0,
            )
            .map_err(X11Error::from)?
            .reply()
            .map_err(X11Error::from)?;
        let got = reply.size as usize;
        if got < len {
            return Err(X11Error::Shm(format!(
                "server wrote {got} bytes, expected {len}"
            )));
        }
        Pixels::new(size, self.format, segment.bytes(len).to_vec())
            .map_err(|e| X11Error::Shm(e.to_string()))
    }
}
