//! Screen capture: MIT-SHM into a System V segment shared with the server, plain GetImage as the
//! fallback when shared memory is unavailable (a remote display, a server without the extension).

use hands_core::geometry::Size;
use hands_core::image::{PixelFormat, Pixels};
use x11rb::connection::{Connection as _, RequestConnection as _};
use x11rb::protocol::shm::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat, Window};
use x11rb::rust_connection::RustConnection;

use crate::X11Error;

/// A System V shared-memory segment attached both here and in the X server.
struct ShmSegment {
    id: i32,
    addr: *mut libc::c_void,
    len: usize,
    seg: shm::Seg,
}

// SAFETY: the segment is plain memory owned by this value; it is only read through `&self`
// after the server has finished writing a reply, and freed once in Drop.
#[allow(unsafe_code)]
unsafe impl Send for ShmSegment {}

impl ShmSegment {
    fn new(conn: &RustConnection, len: usize) -> Result<ShmSegment, X11Error> {
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
        let segment = |seg| ShmSegment { id, addr, len, seg };
        let seg = conn
            .generate_id()
            .map_err(|e| X11Error::Shm(e.to_string()))?;
        let attached = conn
            .shm_attach(seg, id as u32, false)
            .map_err(|e| X11Error::Shm(e.to_string()))
            .and_then(|cookie| cookie.check().map_err(|e| X11Error::Shm(e.to_string())));
        // Mark for removal now: the segment lives until both sides detach, and nothing leaks if
        // this process dies.
        // SAFETY: `id` names our segment; IPC_RMID takes no buffer.
        #[allow(unsafe_code)]
        unsafe {
            libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
        }
        match attached {
            Ok(()) => Ok(segment(seg)),
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

impl Drop for ShmSegment {
    fn drop(&mut self) {
        // SAFETY: `addr` came from shmat and is detached exactly once.
        #[allow(unsafe_code)]
        unsafe {
            libc::shmdt(self.addr);
        }
        let _ = self.id;
    }
}

/// Captures the root window, reusing one shared segment sized to the screen.
pub(crate) struct Capturer {
    shm: Option<ShmSegment>,
    shm_available: bool,
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
        let shm_available = conn
            .extension_information(shm::X11_EXTENSION_NAME)
            .ok()
            .flatten()
            .is_some()
            && conn
                .shm_query_version()
                .ok()
                .and_then(|c| c.reply().ok())
                .is_some();
        Ok(Capturer {
            shm: None,
            shm_available,
            format: PixelFormat::Bgrx,
        })
    }

    /// Whether captures go through shared memory.
    pub(crate) fn uses_shm(&self) -> bool {
        self.shm_available
    }

    /// Captures `size` pixels of `root`.
    pub(crate) fn capture(
        &mut self,
        conn: &RustConnection,
        root: Window,
        size: Size,
    ) -> Result<Pixels, X11Error> {
        let len = size.pixels() as usize * 4;
        if self.shm_available {
            match self.capture_shm(conn, root, size, len) {
                Ok(pixels) => return Ok(pixels),
                Err(e) => {
                    tracing::warn!(error = %e, "MIT-SHM capture failed; falling back to GetImage");
                    self.shm_available = false;
                    self.shm = None;
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
            self.shm = Some(ShmSegment::new(conn, len)?);
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
