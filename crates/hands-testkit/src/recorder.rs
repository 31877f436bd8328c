//! The recorder: an X client with one window that shows a [`Pattern`], takes the input focus, and
//! writes down every pointer and keyboard event it receives, on its own thread.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hands_core::input::{Modifier, keysym};
use x11rb::connection::{Connection as _, RequestConnection as _};
use x11rb::errors::{ConnectionError, ReplyError, ReplyOrIdError};
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ButtonPressEvent, ClientMessageEvent, ConnectionExt as _, CreateGCAux,
    CreateWindowAux, EventMask, ImageFormat, ImageOrder, InputFocus, KeyPressEvent, MapState,
    Mapping, MappingNotifyEvent, PropMode, Rectangle, Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use crate::events::{EventKind, InputEvent};
use crate::keyboard::KeyboardMap;
use crate::pattern::Pattern;

/// Why the recorder could not start or answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecorderError {
    /// Connecting to the display failed.
    #[error("cannot connect to X display {display}: {source}")]
    Connect {
        /// The display name.
        display: String,
        /// Why.
        source: x11rb::errors::ConnectError,
    },
    /// The connection broke or a request failed.
    #[error("X request failed: {0}")]
    X(String),
    /// The screen's pixel layout is not 24-bit TrueColor, so the pattern cannot be drawn exactly.
    #[error("unsupported visual: {0}")]
    UnsupportedVisual(String),
    /// The window did not become mapped, drawn and focused in time.
    #[error("the recorder window was not ready after {timeout:?}: {why}")]
    NotReady {
        /// How long was waited.
        timeout: Duration,
        /// What was missing.
        why: String,
    },
    /// A wait ran out; `events` is what had been recorded by then.
    #[error("timed out after {timeout:?} waiting for {what}; recorded {} events: {events:?}", events.len())]
    Timeout {
        /// What was awaited.
        what: String,
        /// How long.
        timeout: Duration,
        /// The events recorded so far.
        events: Vec<InputEvent>,
    },
    /// The event thread stopped (the display went away).
    #[error("the recorder's event thread stopped: {0}")]
    Stopped(String),
}

impl From<ConnectionError> for RecorderError {
    fn from(e: ConnectionError) -> RecorderError {
        RecorderError::X(e.to_string())
    }
}
impl From<ReplyError> for RecorderError {
    fn from(e: ReplyError) -> RecorderError {
        RecorderError::X(e.to_string())
    }
}
impl From<ReplyOrIdError> for RecorderError {
    fn from(e: ReplyOrIdError) -> RecorderError {
        RecorderError::X(e.to_string())
    }
}

/// A rectangle of the screen, in screen pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Area {
    /// Left edge.
    pub x: i16,
    /// Top edge.
    pub y: i16,
    /// Width, at least 1.
    pub width: u16,
    /// Height, at least 1.
    pub height: u16,
}

impl Area {
    /// Whether screen pixel `(x, y)` lies inside.
    pub fn contains(self, x: i32, y: i32) -> bool {
        x >= i32::from(self.x)
            && y >= i32::from(self.y)
            && x < i32::from(self.x) + i32::from(self.width)
            && y < i32::from(self.y) + i32::from(self.height)
    }
}

/// How to start a recorder.
#[derive(Debug, Clone)]
pub struct RecorderConfig {
    /// Where the window goes; `None` covers the whole screen.
    pub area: Option<Area>,
    /// The pattern's cell size in pixels.
    pub cell: u32,
    /// How long to wait for the window to be mapped, drawn and focused.
    pub ready_timeout: Duration,
    /// How long [`InputRecorder::sync`] waits for the server.
    pub sync_timeout: Duration,
    /// Whether the window lists `_NET_WM_PING` in `WM_PROTOCOLS` and answers pings, as GTK,
    /// Qt and browsers do (an answer comes after every earlier event was recorded).
    pub answer_pings: bool,
}

impl Default for RecorderConfig {
    fn default() -> RecorderConfig {
        RecorderConfig {
            area: None,
            cell: crate::pattern::DEFAULT_CELL,
            ready_timeout: Duration::from_secs(5),
            sync_timeout: Duration::from_secs(5),
            answer_pings: true,
        }
    }
}

/// What the event thread shares with the test.
#[derive(Default)]
struct Shared {
    events: Vec<InputEvent>,
    /// The highest sync token the event thread has seen come back.
    synced: u32,
    mapped: bool,
    exposed: bool,
    /// Set when the thread stopped, with the reason.
    stopped: Option<String>,
    keyboard: KeyboardMap,
    /// Keyboard MappingNotify events received.
    n_mapping_notifies: u64,
    /// A slow key handler to act out: on a press of this keysym, work this long, then paint
    /// the window in this colour.
    slow_key: Option<(u32, Duration, [u8; 3])>,
    /// Pings answered.
    n_pings: u64,
}

struct State {
    shared: Mutex<Shared>,
    changed: Condvar,
}

impl State {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// An X client the tests own: one window showing a known [`Pattern`], holding the input focus,
/// recording every button, motion and key event it receives (with the keysym and character each
/// key means under the mapping current at that moment).
///
/// The window and the connection close when this value is dropped.
pub struct InputRecorder {
    conn: Arc<RustConnection>,
    window: Window,
    area: Area,
    pattern: Pattern,
    atoms: Atoms,
    state: Arc<State>,
    next_token: AtomicU32,
    sync_timeout: Duration,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for InputRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputRecorder")
            .field("window", &self.window)
            .field("area", &self.area)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, Copy)]
struct Atoms {
    sync: Atom,
    quit: Atom,
    stall: Atom,
    wm_protocols: Atom,
    net_wm_ping: Atom,
    root: Window,
    window: Window,
}

impl InputRecorder {
    /// A full-screen recorder on `display` (e.g. `:93`).
    pub fn start(display: &str) -> Result<InputRecorder, RecorderError> {
        InputRecorder::start_with(display, &RecorderConfig::default())
    }

    /// A recorder as `config` says. Returns once the window is viewable, has been exposed (its
    /// pattern is on screen), and holds the input focus.
    pub fn start_with(
        display: &str,
        config: &RecorderConfig,
    ) -> Result<InputRecorder, RecorderError> {
        let (conn, screen_num) =
            x11rb::connect(Some(display)).map_err(|source| RecorderError::Connect {
                display: display.to_owned(),
                source,
            })?;
        let conn = Arc::new(conn);
        let screen = conn.setup().roots[screen_num].clone();
        check_visual(&conn, &screen)?;
        let area = config.area.unwrap_or(Area {
            x: 0,
            y: 0,
            width: screen.width_in_pixels,
            height: screen.height_in_pixels,
        });
        let pattern = Pattern::new(config.cell);

        let keyboard = fetch_keyboard(&conn)?;
        let intern = |name: &[u8]| -> Result<Atom, RecorderError> {
            Ok(conn.intern_atom(false, name)?.reply()?.atom)
        };
        let atoms = Atoms {
            sync: intern(b"HANDS_TESTKIT_SYNC")?,
            quit: intern(b"HANDS_TESTKIT_QUIT")?,
            stall: intern(b"HANDS_TESTKIT_STALL")?,
            wm_protocols: intern(b"WM_PROTOCOLS")?,
            net_wm_ping: intern(b"_NET_WM_PING")?,
            root: screen.root,
            window: x11rb::NONE,
        };

        // The pattern lives in a pixmap that is the window's background, so the server repaints
        // it on every exposure by itself.
        let pixmap = conn.generate_id()?;
        conn.create_pixmap(
            screen.root_depth,
            pixmap,
            screen.root,
            area.width,
            area.height,
        )?;
        let gc = conn.generate_id()?;
        conn.create_gc(gc, pixmap, &CreateGCAux::new())?;
        draw_pattern(&conn, pixmap, gc, screen.root_depth, area, pattern)?;
        conn.free_gc(gc)?;

        let window = conn.generate_id()?;
        let atoms = Atoms { window, ..atoms };
        let events = EventMask::BUTTON_PRESS
            | EventMask::BUTTON_RELEASE
            | EventMask::POINTER_MOTION
            | EventMask::KEY_PRESS
            | EventMask::KEY_RELEASE
            | EventMask::EXPOSURE
            | EventMask::STRUCTURE_NOTIFY;
        conn.create_window(
            screen.root_depth,
            window,
            screen.root,
            area.x,
            area.y,
            area.width,
            area.height,
            0,
            WindowClass::INPUT_OUTPUT,
            screen.root_visual,
            &CreateWindowAux::new()
                .background_pixmap(pixmap)
                .event_mask(events)
                // No window manager may move or decorate it: tests rely on its exact place.
                .override_redirect(1),
        )?;
        conn.free_pixmap(pixmap)?;
        if config.answer_pings {
            conn.change_property32(
                PropMode::REPLACE,
                window,
                atoms.wm_protocols,
                AtomEnum::ATOM,
                &[atoms.net_wm_ping],
            )?;
        }
        conn.map_window(window)?;
        conn.flush()?;

        let state = Arc::new(State {
            shared: Mutex::new(Shared {
                keyboard,
                ..Shared::default()
            }),
            changed: Condvar::new(),
        });
        let thread = {
            let conn = Arc::clone(&conn);
            let state = Arc::clone(&state);
            std::thread::Builder::new()
                .name(format!("hands-testkit recorder {display}"))
                .spawn(move || event_loop(&conn, &state, atoms))
                .map_err(|e| RecorderError::Stopped(e.to_string()))?
        };
        let recorder = InputRecorder {
            conn,
            window,
            area,
            pattern,
            atoms,
            state,
            next_token: AtomicU32::new(1),
            sync_timeout: config.sync_timeout,
            thread: Some(thread),
        };
        recorder.become_ready(config.ready_timeout)?;
        Ok(recorder)
    }

    /// Waits for MapNotify and Expose, takes the focus, and checks both with a round trip.
    fn become_ready(&self, timeout: Duration) -> Result<(), RecorderError> {
        let deadline = Instant::now() + timeout;
        {
            let mut shared = self.state.lock();
            while !(shared.mapped && shared.exposed) {
                if let Some(why) = &shared.stopped {
                    return Err(RecorderError::Stopped(why.clone()));
                }
                let now = Instant::now();
                if now >= deadline {
                    return Err(RecorderError::NotReady {
                        timeout,
                        why: format!("mapped: {}, exposed: {}", shared.mapped, shared.exposed),
                    });
                }
                shared = self
                    .state
                    .changed
                    .wait_timeout(shared, deadline - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
        // There may be no window manager: take the focus ourselves, now that the window is
        // viewable (focusing an unmapped window is an error).
        self.conn
            .set_input_focus(InputFocus::PARENT, self.window, x11rb::CURRENT_TIME)?;
        let attributes = self.conn.get_window_attributes(self.window)?.reply()?;
        let focus = self.conn.get_input_focus()?.reply()?;
        if attributes.map_state != MapState::VIEWABLE || focus.focus != self.window {
            return Err(RecorderError::NotReady {
                timeout,
                why: format!(
                    "map state {:?}, focus on {:#x} instead of {:#x}",
                    attributes.map_state, focus.focus, self.window
                ),
            });
        }
        // Whatever arrived while getting ready is not the test's.
        self.clear()
    }

    /// The window's place on the screen.
    pub fn area(&self) -> Area {
        self.area
    }

    /// The pattern the window shows, in screen coordinates (inside [`InputRecorder::area`]).
    pub fn pattern(&self) -> Pattern {
        self.pattern
    }

    /// The window's id.
    pub fn window(&self) -> Window {
        self.window
    }

    /// Takes the input focus back (after another client had it).
    pub fn focus(&self) -> Result<(), RecorderError> {
        self.conn
            .set_input_focus(InputFocus::PARENT, self.window, x11rb::CURRENT_TIME)?;
        self.conn.get_input_focus()?.reply()?;
        Ok(())
    }

    /// Every event recorded since the start or the last [`InputRecorder::clear`], without
    /// waiting for events still on their way (see [`InputRecorder::sync`]).
    pub fn events(&self) -> Vec<InputEvent> {
        self.state.lock().events.clone()
    }

    /// Forgets every event the server generated before this call (after a [`sync`] so none of
    /// them is still on its way).
    ///
    /// [`sync`]: InputRecorder::sync
    pub fn clear(&self) -> Result<(), RecorderError> {
        self.sync()?;
        self.state.lock().events.clear();
        Ok(())
    }

    /// The text of the key presses recorded so far, each press's character in order. Like
    /// [`InputRecorder::events`] it does not wait: call [`InputRecorder::sync`] first to include
    /// everything the server has sent.
    pub fn typed_text(&self) -> String {
        crate::events::typed_text(&self.state.lock().events)
    }

    /// Waits until every event the server generated before this call has been recorded, and
    /// returns all recorded events.
    ///
    /// It sends the window a ClientMessage through the server: the server queues it behind every
    /// event it already sent us, so when the event thread sees it, nothing earlier is pending.
    /// (A driver's input has reached the server once its call returns: drivers sync.)
    pub fn sync(&self) -> Result<Vec<InputEvent>, RecorderError> {
        let token = self.next_token.fetch_add(1, Ordering::Relaxed);
        let message =
            ClientMessageEvent::new(32, self.window, self.atoms.sync, [token, 0, 0, 0, 0]);
        self.conn
            .send_event(false, self.window, EventMask::NO_EVENT, message)?;
        self.conn.flush()?;
        let timeout = self.sync_timeout;
        self.wait_locked(&format!("sync token {token}"), timeout, |shared| {
            shared.synced >= token
        })
        .map(|shared| shared.events.clone())
    }

    /// Waits (at most `timeout`) until `done` holds for the recorded events, and returns them.
    pub fn wait_for(
        &self,
        what: &str,
        timeout: Duration,
        done: impl Fn(&[InputEvent]) -> bool,
    ) -> Result<Vec<InputEvent>, RecorderError> {
        self.wait_locked(what, timeout, |shared| done(&shared.events))
            .map(|shared| shared.events.clone())
    }

    /// Waits until the typed text has at least `n_chars` characters, and returns it.
    pub fn wait_for_text(
        &self,
        n_chars: usize,
        timeout: Duration,
    ) -> Result<String, RecorderError> {
        self.wait_for(&format!("{n_chars} typed characters"), timeout, |events| {
            crate::events::typed_text(events).chars().count() >= n_chars
        })
        .map(|events| crate::events::typed_text(&events))
    }

    fn wait_locked(
        &self,
        what: &str,
        timeout: Duration,
        done: impl Fn(&Shared) -> bool,
    ) -> Result<MutexGuard<'_, Shared>, RecorderError> {
        let deadline = Instant::now() + timeout;
        let mut shared = self.state.lock();
        loop {
            if done(&shared) {
                return Ok(shared);
            }
            if let Some(why) = &shared.stopped {
                return Err(RecorderError::Stopped(why.clone()));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(RecorderError::Timeout {
                    what: what.to_owned(),
                    timeout,
                    events: shared.events.clone(),
                });
            }
            shared = self
                .state
                .changed
                .wait_timeout(shared, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The state bit that a modifier sets in events under the current modifier mapping (Shift 1,
    /// Control 4, Alt and Super usually Mod1 = 8 and Mod4 = 64); 0 when no key carries it.
    pub fn modifier_mask(&self, m: Modifier) -> u16 {
        self.state.lock().keyboard.mask(m)
    }

    /// The state bits of all four modifiers together.
    pub fn all_modifiers_mask(&self) -> u16 {
        let shared = self.state.lock();
        Modifier::ALL
            .iter()
            .fold(0, |mask, m| mask | shared.keyboard.mask(*m))
    }

    /// How many keyboard MappingNotify events the recorder has received (every client gets one
    /// per mapping change).
    pub fn n_mapping_notifies(&self) -> u64 {
        self.state.lock().n_mapping_notifies
    }

    /// Makes the event thread stop reading events for `duration` once it gets to this request
    /// (events sent meanwhile wait in its queue), as a busy application does.
    pub fn stall(&self, duration: Duration) -> Result<(), RecorderError> {
        let ms = u32::try_from(duration.as_millis()).unwrap_or(u32::MAX);
        let message = ClientMessageEvent::new(32, self.window, self.atoms.stall, [ms, 0, 0, 0, 0]);
        self.conn
            .send_event(false, self.window, EventMask::NO_EVENT, message)?;
        self.conn.flush()?;
        Ok(())
    }

    /// Acts out a slow key handler: from now on, a press of `keysym` makes the event thread
    /// work for `delay`, then paint the whole window `rgb` (the pattern returns on the next
    /// exposure).
    pub fn paint_after_key(&self, keysym: u32, delay: Duration, rgb: [u8; 3]) {
        self.state.lock().slow_key = Some((keysym, delay, rgb));
    }

    /// How many pings the recorder has answered.
    pub fn n_pings(&self) -> u64 {
        self.state.lock().n_pings
    }

    /// How many keycodes carry no keysym in the current mapping (the spare keycodes a driver may
    /// bind characters to).
    pub fn n_empty_keycodes(&self) -> usize {
        self.state.lock().keyboard.n_empty_keycodes()
    }
}

impl Drop for InputRecorder {
    fn drop(&mut self) {
        let quit = ClientMessageEvent::new(32, self.window, self.atoms.quit, [0u32; 5]);
        let sent = self
            .conn
            .send_event(false, self.window, EventMask::NO_EVENT, quit)
            .is_ok()
            && self.conn.flush().is_ok();
        if let Some(thread) = self.thread.take()
            && (sent || thread.is_finished())
        {
            let _ = thread.join();
        }
        // Dropping the last handle closes the connection, which destroys the window.
    }
}

fn check_visual(
    conn: &RustConnection,
    screen: &x11rb::protocol::xproto::Screen,
) -> Result<(), RecorderError> {
    let setup = conn.setup();
    let visual = screen
        .allowed_depths
        .iter()
        .flat_map(|d| d.visuals.iter())
        .find(|v| v.visual_id == screen.root_visual);
    let masks = visual.map(|v| (v.red_mask, v.green_mask, v.blue_mask));
    let bpp = setup
        .pixmap_formats
        .iter()
        .find(|f| f.depth == screen.root_depth)
        .map(|f| f.bits_per_pixel);
    if screen.root_depth != 24
        || masks != Some((0xff_0000, 0xff00, 0xff))
        || bpp != Some(32)
        || setup.image_byte_order != ImageOrder::LSB_FIRST
    {
        return Err(RecorderError::UnsupportedVisual(format!(
            "depth {}, masks {masks:x?}, {bpp:?} bits per pixel, {:?}: the recorder draws exact \
             colours only on 24-bit TrueColor, 32 bits per pixel, LSB first",
            screen.root_depth, setup.image_byte_order
        )));
    }
    Ok(())
}

/// Fills `pixmap` (covering `area` of the screen) with the pattern, uploaded in strips of rows
/// with PutImage (one request per strip however small the cells are).
fn draw_pattern(
    conn: &RustConnection,
    pixmap: u32,
    gc: u32,
    depth: u8,
    area: Area,
    pattern: Pattern,
) -> Result<(), RecorderError> {
    let width = usize::from(area.width);
    let row_bytes = width * 4;
    // Leave room for the request header; at most 256 rows per strip.
    let max_rows = (conn.maximum_request_bytes().saturating_sub(64) / row_bytes).clamp(1, 256);
    let (x0, y0) = (i32::from(area.x), i32::from(area.y));
    let mut strip = Vec::with_capacity(row_bytes * max_rows);
    let mut top = 0usize;
    while top < usize::from(area.height) {
        let n_rows = max_rows.min(usize::from(area.height) - top);
        strip.clear();
        for row in top..top + n_rows {
            let sy = (y0 + row as i32).max(0) as u32;
            for column in 0..width {
                let sx = (x0 + column as i32).max(0) as u32;
                let [r, g, b] = pattern.rgb_at(sx, sy);
                // ZPixmap, 32 bits per pixel, LSB first: blue, green, red, unused.
                strip.extend_from_slice(&[b, g, r, 0]);
            }
        }
        conn.put_image(
            ImageFormat::Z_PIXMAP,
            pixmap,
            gc,
            area.width,
            n_rows as u16,
            0,
            top as i16,
            0,
            depth,
            &strip,
        )?;
        top += n_rows;
    }
    Ok(())
}

fn fetch_keyboard(conn: &RustConnection) -> Result<KeyboardMap, RecorderError> {
    let (min, max) = (conn.setup().min_keycode, conn.setup().max_keycode);
    let reply = conn.get_keyboard_mapping(min, max - min + 1)?.reply()?;
    let mut map = KeyboardMap::new(min, reply.keysyms_per_keycode, reply.keysyms);
    fetch_modifiers(conn, &mut map)?;
    Ok(map)
}

fn fetch_modifiers(conn: &RustConnection, map: &mut KeyboardMap) -> Result<(), RecorderError> {
    let reply = conn.get_modifier_mapping()?.reply()?;
    map.set_modifier_mapping(usize::from(reply.keycodes_per_modifier()), &reply.keycodes);
    Ok(())
}

/// Reads events until the quit message arrives or the connection breaks.
fn event_loop(conn: &RustConnection, state: &State, atoms: Atoms) {
    let why = loop {
        let event = match conn.wait_for_event() {
            Ok(event) => event,
            Err(e) => break format!("connection lost: {e}"),
        };
        match handle(conn, state, atoms, event) {
            Ok(true) => {}
            Ok(false) => break "closed".to_owned(),
            Err(e) => break e.to_string(),
        }
    };
    state.lock().stopped = Some(why);
    state.changed.notify_all();
}

/// Records one event; false when asked to quit.
fn handle(
    conn: &RustConnection,
    state: &State,
    atoms: Atoms,
    event: Event,
) -> Result<bool, RecorderError> {
    match event {
        Event::ButtonPress(e) => record_button(state, EventKind::ButtonPress, &e),
        Event::ButtonRelease(e) => record_button(state, EventKind::ButtonRelease, &e),
        Event::MotionNotify(e) => record(
            state,
            InputEvent {
                kind: EventKind::Motion,
                detail: 0,
                x: i32::from(e.root_x),
                y: i32::from(e.root_y),
                state: e.state.into(),
                keysym: None,
                ch: None,
                time: e.time,
            },
        ),
        Event::KeyPress(e) => {
            record_key(state, EventKind::KeyPress, &e);
            answer_slow_key(conn, state, atoms, &e)?;
        }
        Event::KeyRelease(e) => record_key(state, EventKind::KeyRelease, &e),
        Event::MappingNotify(e) => on_mapping_notify(conn, state, &e)?,
        Event::MapNotify(_) => {
            state.lock().mapped = true;
            state.changed.notify_all();
        }
        Event::Expose(e) if e.count == 0 => {
            state.lock().exposed = true;
            state.changed.notify_all();
        }
        Event::ClientMessage(e) if e.type_ == atoms.sync => {
            let token = e.data.as_data32()[0];
            let mut shared = state.lock();
            shared.synced = shared.synced.max(token);
            drop(shared);
            state.changed.notify_all();
        }
        Event::ClientMessage(e) if e.type_ == atoms.quit => return Ok(false),
        Event::ClientMessage(e) if e.type_ == atoms.stall => {
            std::thread::sleep(Duration::from_millis(u64::from(e.data.as_data32()[0])));
        }
        Event::ClientMessage(mut e)
            if e.type_ == atoms.wm_protocols && e.data.as_data32()[0] == atoms.net_wm_ping =>
        {
            // Every earlier event is recorded: answer as EWMH says, back to the root window.
            e.window = atoms.root;
            conn.send_event(
                false,
                atoms.root,
                EventMask::SUBSTRUCTURE_NOTIFY | EventMask::SUBSTRUCTURE_REDIRECT,
                e,
            )?;
            conn.flush()?;
            state.lock().n_pings += 1;
        }
        _ => {}
    }
    Ok(true)
}

/// Appends one event to the log and wakes the waiters.
fn record(state: &State, event: InputEvent) {
    state.lock().events.push(event);
    state.changed.notify_all();
}

/// Records a button press or release (the two share one X event type).
fn record_button(state: &State, kind: EventKind, e: &ButtonPressEvent) {
    record(
        state,
        InputEvent {
            kind,
            detail: e.detail,
            x: i32::from(e.root_x),
            y: i32::from(e.root_y),
            state: e.state.into(),
            keysym: None,
            ch: None,
            time: e.time,
        },
    );
}

/// Records a key press or release (the two share one X event type), with the keysym and
/// character the keyboard mapping gives it at that moment.
fn record_key(state: &State, kind: EventKind, e: &KeyPressEvent) {
    let mut shared = state.lock();
    let sym = shared.keyboard.keysym(e.detail, e.state.into());
    shared.events.push(InputEvent {
        kind,
        detail: e.detail,
        x: i32::from(e.root_x),
        y: i32::from(e.root_y),
        state: e.state.into(),
        keysym: sym,
        ch: sym.and_then(keysym::to_char),
        time: e.time,
    });
    drop(shared);
    state.changed.notify_all();
}

/// When the pressed key is the configured slow key: waits its delay, then paints the window
/// its colour (a client that answers a key late, with something to see).
fn answer_slow_key(
    conn: &RustConnection,
    state: &State,
    atoms: Atoms,
    e: &KeyPressEvent,
) -> Result<(), RecorderError> {
    let slow = {
        let shared = state.lock();
        let pressed = shared.keyboard.keysym(e.detail, e.state.into());
        shared.slow_key.filter(|(sym, _, _)| pressed == Some(*sym))
    };
    let Some((_, delay, [r, g, b])) = slow else {
        return Ok(());
    };
    std::thread::sleep(delay);
    let gc = conn.generate_id()?;
    let pixel = u32::from(r) << 16 | u32::from(g) << 8 | u32::from(b);
    conn.create_gc(gc, atoms.window, &CreateGCAux::new().foreground(pixel))?;
    conn.poly_fill_rectangle(
        atoms.window,
        gc,
        &[Rectangle {
            x: 0,
            y: 0,
            width: u16::MAX,
            height: u16::MAX,
        }],
    )?;
    conn.free_gc(gc)?;
    conn.flush()?;
    Ok(())
}

/// A changed keyboard or modifier mapping: read the new one before translating any later key
/// event, as Xlib does on its next lookup.
fn on_mapping_notify(
    conn: &RustConnection,
    state: &State,
    e: &MappingNotifyEvent,
) -> Result<(), RecorderError> {
    if e.request == Mapping::KEYBOARD {
        state.lock().n_mapping_notifies += 1;
        let reply = conn
            .get_keyboard_mapping(e.first_keycode, e.count)?
            .reply()?;
        state
            .lock()
            .keyboard
            .update(e.first_keycode, reply.keysyms_per_keycode, &reply.keysyms);
    } else if e.request == Mapping::MODIFIER {
        let mut keyboard = state.lock().keyboard.clone();
        fetch_modifiers(conn, &mut keyboard)?;
        state.lock().keyboard = keyboard;
    }
    Ok(())
}
