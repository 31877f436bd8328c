//! The thread that owns the X connection: it runs the driver's jobs in order, watches DAMAGE,
//! keyboard-mapping and window events between and during them, and injects input through XTEST.
//!
//! Layout: this file holds the thread, its events and the pointer; `keys` the keyboard (chords,
//! typing in stretches of spare-keycode bindings); `settle` the wait for clients to catch up
//! and for the screen to change and go quiet.

mod keys;
mod settle;

use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use hands_core::desktop::{DesktopError, ScreenInfo};
use hands_core::geometry::{ScreenPoint, Size};
use hands_core::image::Pixels;
use hands_core::input::{Button, ModifierSet, ScrollDirection};
use x11rb::connection::{Connection as _, RequestConnection as _};
use x11rb::protocol::Event;
use x11rb::protocol::damage::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    self, BUTTON_PRESS_EVENT, BUTTON_RELEASE_EVENT, ChangeWindowAttributesAux, ConnectionExt as _,
    EventMask, KEY_RELEASE_EVENT, Keycode, MOTION_NOTIFY_EVENT, Window,
};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use crate::X11Error;
use crate::capture::Capturer;
use crate::catchup::Catchup;
use crate::keymap::Keymap;

/// Where the X thread connects.
pub(crate) enum Endpoint {
    /// A display by name (`None`: `$DISPLAY`), as any client on the host would.
    Display(Option<String>),
    /// A server this process spawned through `launcher`: connected from inside its environment.
    Spawned {
        /// The launcher the server runs under.
        launcher: Arc<dyn hands_jail::Launcher>,
        /// Its display number.
        number: u32,
        /// Its host pid, when the launcher knows it.
        server_host_pid: Option<u32>,
    },
}

/// A unit of work run on the X thread.
pub(crate) type Job = Box<dyn FnOnce(&mut XState) + Send>;

/// How often the idle thread drains events, so DAMAGE and mapping changes are tracked even when
/// no job arrives.
const IDLE_TICK: Duration = Duration::from_millis(100);
/// Steps per drag segment, so toolkits see motion between press and release.
const DRAG_STEPS: u32 = 12;

/// What an input may do, for settling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InputKind {
    /// The pointer moved: the window under it gets the motion, a change is not expected.
    Move,
    /// A button or wheel: the window under the pointer gets it, a change is expected.
    Pointer,
    /// A key: the focused window gets it, a change is expected.
    Keyboard,
}

/// Input sent since the last settle: whose client must be shown to have handled it, and whether
/// the screen is expected to change.
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    keyboard: bool,
    pointer: bool,
    expect_change: bool,
}

/// Everything the X thread owns.
pub(crate) struct XState {
    conn: RustConnection,
    root: Window,
    size: Size,
    screen_info: Arc<Mutex<ScreenInfo>>,
    capturer: Capturer,
    keymap: Keymap,
    catchup: Catchup,
    damage: Option<damage::Damage>,
    last_input: Instant,
    last_change: Instant,
    n_changes: u32,
    /// `n_changes` when the last input was sent.
    changes_at_input: u32,
    pending: Pending,
    /// Sequence number of the last key or button press sent.
    input_seq: u64,
    /// Input up to this sequence number is known to have been handled by its client.
    proven_seq: u64,
    /// Keycodes and buttons we pressed and have not released: released on shutdown.
    held_keys: Vec<Keycode>,
    held_buttons: Vec<u8>,
    /// Which window of each id this is ([`crate::windows::Creations`]).
    creations: crate::windows::Creations,
}

impl XState {
    /// Whether the root window carries `_NET_SUPPORTING_WM_CHECK` (a window manager runs).
    pub(crate) fn window_manager_ready(&mut self) -> Result<bool, DesktopError> {
        use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};
        let gone = |e: &dyn std::fmt::Display| DesktopError::Gone(format!("X connection: {e}"));
        let atom = self
            .conn
            .intern_atom(true, b"_NET_SUPPORTING_WM_CHECK")
            .map_err(|e| gone(&e))?
            .reply()
            .map_err(|e| gone(&e))?
            .atom;
        if atom == 0 {
            return Ok(false);
        }
        let reply = self
            .conn
            .get_property(false, self.root, atom, AtomEnum::WINDOW, 0, 1)
            .map_err(|e| gone(&e))?
            .reply()
            .map_err(|e| gone(&e))?;
        Ok(reply.value_len > 0)
    }

    pub(crate) fn connect(
        endpoint: Endpoint,
        screen_info: Arc<Mutex<ScreenInfo>>,
    ) -> Result<XState, X11Error> {
        let (conn, screen_num, launcher, server_host_pid): (
            _,
            _,
            Arc<dyn hands_jail::Launcher>,
            _,
        ) = match endpoint {
            Endpoint::Display(display) => {
                let (conn, screen_num) =
                    x11rb::connect(display.as_deref()).map_err(|source| X11Error::Connect {
                        display: display.unwrap_or_else(|| {
                            std::env::var("DISPLAY").unwrap_or_else(|_| "(unset $DISPLAY)".into())
                        }),
                        source,
                    })?;
                (conn, screen_num, Arc::new(hands_jail::HostLauncher), None)
            }
            Endpoint::Spawned {
                launcher,
                number,
                server_host_pid,
            } => {
                let conn = crate::xvfb::connect_passed_in(launcher.as_ref(), number)?;
                (conn, 0, launcher, server_host_pid)
            }
        };
        for ext in [x11rb::protocol::xtest::X11_EXTENSION_NAME] {
            if conn.extension_information(ext)?.is_none() {
                return Err(X11Error::MissingExtension(ext));
            }
        }
        conn.xtest_get_version(2, 2)?.reply()?;
        let screen = &conn.setup().roots[screen_num];
        let root = screen.root;
        let size = Size::new(
            u32::from(screen.width_in_pixels),
            u32::from(screen.height_in_pixels),
        )
        .ok_or_else(|| X11Error::UnsupportedVisual("the screen has no pixels".into()))?;
        let capturer = Capturer::new(&conn, screen_num)?;
        let keymap = Keymap::load(&conn)?;
        let catchup = Catchup::new(&conn, root, launcher, server_host_pid)?;
        // Root StructureNotify tells us when the screen is resized (xrandr); SubstructureNotify
        // brings the answers to our pings and says when top-level windows come and go.
        conn.change_window_attributes(
            root,
            &ChangeWindowAttributesAux::new()
                .event_mask(EventMask::STRUCTURE_NOTIFY | EventMask::SUBSTRUCTURE_NOTIFY),
        )?;
        let damage = if conn
            .extension_information(damage::X11_EXTENSION_NAME)?
            .is_some()
        {
            conn.damage_query_version(1, 1)?.reply()?;
            let id = conn.generate_id()?;
            conn.damage_create(id, root, damage::ReportLevel::NON_EMPTY)?
                .check()?;
            Some(id)
        } else {
            tracing::warn!("no DAMAGE extension: settling falls back to comparing frames");
            None
        };
        conn.flush()?;
        *screen_info.lock().unwrap_or_else(|e| e.into_inner()) = ScreenInfo {
            capture: size,
            device_pixel_ratio: 1.0,
        };
        tracing::debug!(
            %size,
            shm = capturer.uses_shm(),
            capture = %capturer.method(),
            damage = damage.is_some(),
            spare_keysyms = keymap.capacity(),
            "X11 desktop connected"
        );
        let now = Instant::now();
        Ok(XState {
            conn,
            root,
            size,
            screen_info,
            capturer,
            keymap,
            catchup,
            damage,
            last_input: now,
            last_change: now,
            n_changes: 0,
            changes_at_input: 0,
            pending: Pending::default(),
            input_seq: 0,
            proven_seq: 0,
            held_keys: Vec::new(),
            held_buttons: Vec::new(),
            creations: crate::windows::Creations::default(),
        })
    }

    /// Runs jobs until every sender is gone, then releases held input and undoes key bindings.
    pub(crate) fn run(mut self, jobs: mpsc::Receiver<Job>) {
        loop {
            match jobs.recv_timeout(IDLE_TICK) {
                Ok(job) => {
                    self.pump_events();
                    job(&mut self);
                    self.pump_events();
                }
                Err(mpsc::RecvTimeoutError::Timeout) => self.pump_events(),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        self.shutdown();
    }

    /// Releases what we hold; once the focused client has read its last keys, undoes the key
    /// bindings (unbinding sooner would change what it reads for them).
    fn shutdown(&mut self) {
        for keycode in std::mem::take(&mut self.held_keys).into_iter().rev() {
            let _ = self.fake(KEY_RELEASE_EVENT, keycode);
        }
        for button in std::mem::take(&mut self.held_buttons) {
            let _ = self.fake(BUTTON_RELEASE_EVENT, button);
        }
        if self.keymap.any_unproven(self.proven_seq) {
            let _ = self.prove_caught_up(
                crate::catchup::Target::Keyboard,
                settle::SHUTDOWN_PROOF_CAP,
                settle::ProofNeed::AfterInput,
            );
        }
        self.keymap.restore(&self.conn);
        if let Some(d) = self.damage.take() {
            let _ = self.conn.damage_destroy(d);
        }
        let _ = self.sync();
    }

    /// Handles every event already received, without blocking.
    fn pump_events(&mut self) {
        loop {
            match self.conn.poll_for_event() {
                Ok(Some(event)) => self.handle(event),
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "X connection error while reading events");
                    break;
                }
            }
        }
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::DamageNotify(_) => {
                self.last_change = Instant::now();
                self.n_changes = self.n_changes.wrapping_add(1);
                if let Some(d) = self.damage {
                    // NON_EMPTY reports once until the region is emptied again.
                    let _ = self.conn.damage_subtract(d, x11rb::NONE, x11rb::NONE);
                    let _ = self.conn.flush();
                }
            }
            Event::MappingNotify(e) if e.request == xproto::Mapping::KEYBOARD => {
                self.keymap.mark_stale();
            }
            Event::XkbMapNotify(_) | Event::XkbNewKeyboardNotify(_) => self.keymap.mark_stale(),
            Event::ClientMessage(e) => {
                self.catchup.on_client_message(&e);
            }
            Event::ConfigureNotify(e) if e.window == self.root => {
                if let Some(size) = Size::new(u32::from(e.width), u32::from(e.height))
                    && size != self.size
                {
                    tracing::info!(from = %self.size, to = %size, "screen resized");
                    self.size = size;
                    *self.screen_info.lock().unwrap_or_else(|e| e.into_inner()) = ScreenInfo {
                        capture: size,
                        device_pixel_ratio: 1.0,
                    };
                }
            }
            Event::CreateNotify(e) if e.parent == self.root => self.creations.created(e.window),
            Event::DestroyNotify(_) | Event::ReparentNotify(_) | Event::UnmapNotify(_) => {
                self.catchup.forget_windows();
            }
            Event::Error(e) => tracing::debug!(error = ?e, "X error"),
            _ => {}
        }
    }

    /// Blocks until the connection has data or `timeout` passes.
    fn wait_readable(&self, timeout: Duration) {
        use rustix::event::{PollFd, PollFlags, Timespec};
        let timeout = Timespec {
            tv_sec: timeout.as_secs() as i64,
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        let stream = self.conn.stream();
        let mut fds = [PollFd::new(stream, PollFlags::IN)];
        let _ = rustix::event::poll(&mut fds, Some(&timeout));
    }

    fn sync(&self) -> Result<(), X11Error> {
        self.conn.get_input_focus()?.reply()?;
        Ok(())
    }

    fn fake(&self, kind: u8, detail: u8) -> Result<(), X11Error> {
        self.conn
            .xtest_fake_input(kind, detail, x11rb::CURRENT_TIME, self.root, 0, 0, 0)?;
        Ok(())
    }

    /// Waits until the server has the input, and records it for settling.
    fn input_done(&mut self, kind: InputKind) -> Result<(), X11Error> {
        self.sync()?;
        self.last_input = Instant::now();
        self.changes_at_input = self.n_changes;
        match kind {
            InputKind::Move => self.pending.pointer = true,
            InputKind::Pointer => {
                self.pending.pointer = true;
                self.pending.expect_change = true;
            }
            InputKind::Keyboard => {
                self.pending.keyboard = true;
                self.pending.expect_change = true;
            }
        }
        Ok(())
    }

    fn warp(&self, to: ScreenPoint) -> Result<(), X11Error> {
        let x = to.x.min(self.size.width - 1) as i16;
        let y = to.y.min(self.size.height - 1) as i16;
        self.conn.xtest_fake_input(
            MOTION_NOTIFY_EVENT,
            0,
            x11rb::CURRENT_TIME,
            self.root,
            x,
            y,
            0,
        )?;
        Ok(())
    }

    fn button_down(&mut self, button: u8) -> Result<(), X11Error> {
        self.fake(BUTTON_PRESS_EVENT, button)?;
        self.input_seq += 1;
        self.held_buttons.push(button);
        Ok(())
    }

    fn button_up(&mut self, button: u8) -> Result<(), X11Error> {
        self.fake(BUTTON_RELEASE_EVENT, button)?;
        if let Some(pos) = self.held_buttons.iter().rposition(|&b| b == button) {
            self.held_buttons.remove(pos);
        }
        Ok(())
    }

    // ---- the operations behind the Desktop trait ----

    pub(crate) fn capture(&mut self) -> Result<Pixels, DesktopError> {
        self.capturer
            .capture(&self.conn, self.root, self.size)
            .map_err(|e| match e {
                X11Error::Connection(_) => DesktopError::Gone(e.to_string()),
                other => DesktopError::Capture(other.to_string()),
            })
    }

    pub(crate) fn move_pointer(&mut self, to: ScreenPoint) -> Result<(), X11Error> {
        self.warp(to)?;
        self.input_done(InputKind::Move)
    }

    /// The desktop's windows now ([`crate::windows`]).
    pub(crate) fn windows(&mut self) -> Result<crate::windows::WindowsNow, X11Error> {
        // Every window created before this point is counted before the list is read.
        self.sync()?;
        self.pump_events();
        crate::windows::windows_now(&self.conn, self.root, &self.creations)
    }

    pub(crate) fn pointer(&mut self) -> Result<ScreenPoint, X11Error> {
        let reply = self.conn.query_pointer(self.root)?.reply()?;
        Ok(ScreenPoint {
            x: reply.root_x.max(0) as u32,
            y: reply.root_y.max(0) as u32,
        })
    }

    pub(crate) fn click(
        &mut self,
        at: Option<ScreenPoint>,
        button: Button,
        count: u8,
        mods: ModifierSet,
    ) -> Result<(), X11Error> {
        if let Some(p) = at {
            self.warp(p)?;
        }
        let pressed = self.modifiers_down(mods)?;
        let code = button_code(button);
        // Back-to-back presses share a position and land well inside any double-click interval.
        for _ in 0..count.max(1) {
            self.button_down(code)?;
            self.button_up(code)?;
        }
        self.modifiers_up(&pressed)?;
        self.input_done(InputKind::Pointer)
    }

    pub(crate) fn button(&mut self, button: Button, pressed: bool) -> Result<(), X11Error> {
        let code = button_code(button);
        if pressed {
            self.button_down(code)?;
        } else {
            self.button_up(code)?;
        }
        self.input_done(InputKind::Pointer)
    }

    pub(crate) fn drag(
        &mut self,
        path: &[ScreenPoint],
        button: Button,
        mods: ModifierSet,
    ) -> Result<(), X11Error> {
        let Some((&first, rest)) = path.split_first() else {
            return Ok(());
        };
        self.warp(first)?;
        let pressed = self.modifiers_down(mods)?;
        let code = button_code(button);
        self.button_down(code)?;
        let mut from = first;
        for &to in rest {
            for step in 1..=DRAG_STEPS {
                let lerp = |a: u32, b: u32| {
                    (i64::from(a)
                        + (i64::from(b) - i64::from(a)) * i64::from(step) / i64::from(DRAG_STEPS))
                        as u32
                };
                self.warp(ScreenPoint {
                    x: lerp(from.x, to.x),
                    y: lerp(from.y, to.y),
                })?;
            }
            from = to;
        }
        self.button_up(code)?;
        self.modifiers_up(&pressed)?;
        self.input_done(InputKind::Pointer)
    }

    pub(crate) fn scroll(
        &mut self,
        at: Option<ScreenPoint>,
        direction: ScrollDirection,
        clicks: u32,
        mods: ModifierSet,
    ) -> Result<(), X11Error> {
        if let Some(p) = at {
            self.warp(p)?;
        }
        let pressed = self.modifiers_down(mods)?;
        let code = match direction {
            ScrollDirection::Up => 4,
            ScrollDirection::Down => 5,
            ScrollDirection::Left => 6,
            ScrollDirection::Right => 7,
        };
        for _ in 0..clicks {
            self.button_down(code)?;
            self.button_up(code)?;
        }
        self.modifiers_up(&pressed)?;
        self.input_done(InputKind::Pointer)
    }
}

fn button_code(button: Button) -> u8 {
    match button {
        Button::Left => 1,
        Button::Middle => 2,
        Button::Right => 3,
        Button::Back => 8,
        Button::Forward => 9,
    }
}
