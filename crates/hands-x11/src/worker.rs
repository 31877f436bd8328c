//! The thread that owns the X connection: it runs the driver's jobs in order, watches DAMAGE
//! and MappingNotify events between and during them, and injects input through XTEST.

use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use hands_core::CancellationToken;
use hands_core::desktop::{DesktopError, ScreenInfo, SettleBudget, SettleReport};
use hands_core::geometry::{ScreenPoint, Size};
use hands_core::image::Pixels;
use hands_core::input::{Button, KeyChord, Modifier, ModifierSet, ScrollDirection, keysym};
use x11rb::connection::{Connection as _, RequestConnection as _};
use x11rb::protocol::Event;
use x11rb::protocol::damage::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    self, BUTTON_PRESS_EVENT, BUTTON_RELEASE_EVENT, ChangeWindowAttributesAux, ConnectionExt as _,
    EventMask, KEY_PRESS_EVENT, KEY_RELEASE_EVENT, Keycode, MOTION_NOTIFY_EVENT, Window,
};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use crate::X11Error;
use crate::capture::Capturer;
use crate::keymap::{Keymap, Stroke};

/// A unit of work run on the X thread.
pub(crate) type Job = Box<dyn FnOnce(&mut XState) + Send>;

/// How often the idle thread drains events, so DAMAGE and mapping changes are tracked even when
/// no job arrives.
const IDLE_TICK: Duration = Duration::from_millis(100);
/// Most keys typed between two round trips: bounds how far input can run ahead of the server.
const TYPE_BATCH: usize = 64;
/// Steps per drag segment, so toolkits see motion between press and release.
const DRAG_STEPS: u32 = 12;
/// Before a spare keycode pressed a moment ago is bound to another character, input and screen
/// must have been quiet this long: clients read a changed mapping only when they get to the
/// MappingNotify (or to the next key), and one that has not would translate the earlier key
/// press with the new binding. Costs one wait per `n_spares` (19 on Xvfb's default map)
/// distinct characters the layout lacks, and nothing for texts with fewer. 50 ms still let a
/// starved client fall behind on a loaded 2-core machine; 100 ms held in repeated runs there.
const MAPPING_READ_QUIET: Duration = Duration::from_millis(100);
/// Longest wait for [`MAPPING_READ_QUIET`], for a screen that never stops changing.
const MAPPING_READ_CAP: Duration = Duration::from_secs(1);

/// Everything the X thread owns.
pub(crate) struct XState {
    conn: RustConnection,
    root: Window,
    size: Size,
    screen_info: Arc<Mutex<ScreenInfo>>,
    capturer: Capturer,
    keymap: Keymap,
    damage: Option<damage::Damage>,
    last_input: Instant,
    last_change: Instant,
    n_changes: u32,
    /// Keycodes and buttons we pressed and have not released: released on shutdown.
    held_keys: Vec<Keycode>,
    held_buttons: Vec<u8>,
}

impl XState {
    pub(crate) fn connect(
        display: Option<&str>,
        screen_info: Arc<Mutex<ScreenInfo>>,
    ) -> Result<XState, X11Error> {
        let (conn, screen_num) = x11rb::connect(display).map_err(|source| X11Error::Connect {
            display: display.map(str::to_owned).unwrap_or_else(|| {
                std::env::var("DISPLAY").unwrap_or_else(|_| "(unset $DISPLAY)".into())
            }),
            source,
        })?;
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
        // Root StructureNotify tells us when the screen is resized (xrandr).
        conn.change_window_attributes(
            root,
            &ChangeWindowAttributesAux::new().event_mask(EventMask::STRUCTURE_NOTIFY),
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
            damage = damage.is_some(),
            spare_keycodes = keymap.n_spares(),
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
            damage,
            last_input: now,
            last_change: now,
            n_changes: 0,
            held_keys: Vec::new(),
            held_buttons: Vec::new(),
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

    fn shutdown(&mut self) {
        for keycode in std::mem::take(&mut self.held_keys).into_iter().rev() {
            let _ = self.fake(KEY_RELEASE_EVENT, keycode);
        }
        for button in std::mem::take(&mut self.held_buttons) {
            let _ = self.fake(BUTTON_RELEASE_EVENT, button);
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
                if let Err(err) =
                    self.keymap
                        .on_mapping_notify(&self.conn, e.first_keycode, e.count)
                {
                    tracing::warn!(error = %err, "could not reload the keyboard mapping");
                }
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

    fn input_done(&mut self) -> Result<(), X11Error> {
        self.sync()?;
        self.last_input = Instant::now();
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

    fn key_down(&mut self, keycode: Keycode) -> Result<(), X11Error> {
        self.fake(KEY_PRESS_EVENT, keycode)?;
        self.held_keys.push(keycode);
        self.keymap.note_pressed(keycode);
        Ok(())
    }

    /// Gives clients time to read the keyboard mapping before a keycode they may not have
    /// translated yet is rebound: waits until input and screen have been quiet for
    /// [`MAPPING_READ_QUIET`] (a client that repaints after each key keeps it waiting until it is
    /// done), at most [`MAPPING_READ_CAP`].
    fn let_clients_read_mapping(&mut self) -> Result<(), X11Error> {
        self.sync()?;
        let start = Instant::now();
        let cap = start + MAPPING_READ_CAP;
        loop {
            self.pump_events();
            let quiet_until = self.last_input.max(self.last_change) + MAPPING_READ_QUIET;
            let now = Instant::now();
            if now >= quiet_until || now >= cap {
                break;
            }
            self.wait_readable(quiet_until.min(cap) - now);
        }
        self.keymap.mapping_read();
        tracing::trace!(
            waited_ms = start.elapsed().as_secs_f64() * 1e3,
            "let clients read the keyboard mapping"
        );
        Ok(())
    }

    /// The stroke for `sym`, binding a spare keycode if needed, after letting clients read the
    /// mapping if that binding would reuse a keycode they may not have translated yet. `keep`
    /// must hold no keycode that has not been pressed yet: chords resolve before pressing.
    fn resolve_for_chord(&mut self, sym: u32, keep: &[Keycode]) -> Result<Stroke, X11Error> {
        if self.keymap.rebind_needs_wait(sym, keep) {
            self.let_clients_read_mapping()?;
        }
        self.keymap.resolve(&self.conn, sym, keep)
    }

    fn key_up(&mut self, keycode: Keycode) -> Result<(), X11Error> {
        self.fake(KEY_RELEASE_EVENT, keycode)?;
        if let Some(pos) = self.held_keys.iter().rposition(|&k| k == keycode) {
            self.held_keys.remove(pos);
        }
        Ok(())
    }

    fn button_down(&mut self, button: u8) -> Result<(), X11Error> {
        self.fake(BUTTON_PRESS_EVENT, button)?;
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

    /// A modifier's keycode; modifiers must exist in the layout (a spare keycode bound to
    /// Shift_L would not act as Shift).
    fn modifier_keycode(&self, m: Modifier) -> Result<Keycode, X11Error> {
        let sym = m.key().keysym();
        self.keymap
            .find(sym)
            .map(|s| s.keycode)
            .ok_or(X11Error::NoModifierKey { keysym: sym })
    }

    fn modifiers_down(&mut self, mods: ModifierSet) -> Result<Vec<Keycode>, X11Error> {
        let mut pressed = Vec::new();
        for m in mods.iter() {
            let keycode = self.modifier_keycode(m)?;
            self.key_down(keycode)?;
            pressed.push(keycode);
        }
        Ok(pressed)
    }

    fn modifiers_up(&mut self, pressed: &[Keycode]) -> Result<(), X11Error> {
        for &keycode in pressed.iter().rev() {
            self.key_up(keycode)?;
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

    pub(crate) fn settle(
        &mut self,
        budget: SettleBudget,
        cancel: &CancellationToken,
    ) -> Result<SettleReport, DesktopError> {
        let start = Instant::now();
        let cap = start + budget.cap;
        let changes_before = self.n_changes;
        if self.damage.is_none() {
            return self.settle_by_frames(budget, cancel);
        }
        self.pump_events();
        let settled = loop {
            let quiet_until = self.last_input.max(self.last_change) + budget.quiet;
            let now = Instant::now();
            if now >= quiet_until {
                break true;
            }
            if now >= cap {
                break false;
            }
            if cancel.is_cancelled() {
                return Err(DesktopError::Cancelled);
            }
            // Wake at least every 50 ms to notice cancellation.
            let wait = (quiet_until.min(cap) - now).min(Duration::from_millis(50));
            self.wait_readable(wait);
            self.pump_events();
        };
        Ok(SettleReport {
            waited: start.elapsed(),
            n_changes: self.n_changes.wrapping_sub(changes_before),
            settled,
        })
    }

    /// Without DAMAGE: settled once two captures `quiet` apart are identical.
    fn settle_by_frames(
        &mut self,
        budget: SettleBudget,
        cancel: &CancellationToken,
    ) -> Result<SettleReport, DesktopError> {
        let start = Instant::now();
        let step = (budget.quiet / 2).max(Duration::from_millis(5));
        let mut previous = self.capture()?;
        let mut stable_since = Instant::now();
        let mut n_changes = 0;
        loop {
            if cancel.is_cancelled() {
                return Err(DesktopError::Cancelled);
            }
            if stable_since.elapsed() >= budget.quiet && self.last_input.elapsed() >= budget.quiet {
                return Ok(SettleReport {
                    waited: start.elapsed(),
                    n_changes,
                    settled: true,
                });
            }
            if start.elapsed() >= budget.cap {
                return Ok(SettleReport {
                    waited: start.elapsed(),
                    n_changes,
                    settled: false,
                });
            }
            // Polling interval between frame comparisons, not a settle delay.
            std::thread::sleep(step);
            let frame = self.capture()?;
            if frame != previous {
                n_changes += 1;
                stable_since = Instant::now();
                previous = frame;
            }
        }
    }

    pub(crate) fn move_pointer(&mut self, to: ScreenPoint) -> Result<(), X11Error> {
        self.warp(to)?;
        self.input_done()
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
        self.input_done()
    }

    pub(crate) fn button(&mut self, button: Button, pressed: bool) -> Result<(), X11Error> {
        let code = button_code(button);
        if pressed {
            self.button_down(code)?;
        } else {
            self.button_up(code)?;
        }
        self.input_done()
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
        self.input_done()
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
        self.input_done()
    }

    /// The strokes of a chord: a key whose keysym needs Shift gets Shift pressed before it,
    /// unless the chord already holds Shift.
    fn chord_strokes(&mut self, chord: &KeyChord) -> Result<Vec<Keycode>, X11Error> {
        let has_shift = chord
            .keys()
            .iter()
            .any(|k| k.modifier() == Some(Modifier::Shift));
        let mut codes: Vec<Keycode> = Vec::new();
        for key in chord.keys() {
            let stroke = if let Some(m) = key.modifier() {
                Stroke {
                    keycode: self.modifier_keycode(m)?,
                    shift: false,
                }
            } else {
                self.resolve_for_chord(key.keysym(), &codes)?
            };
            if stroke.shift && !has_shift {
                let shift = self.modifier_keycode(Modifier::Shift)?;
                if !codes.contains(&shift) {
                    codes.push(shift);
                }
            }
            codes.push(stroke.keycode);
        }
        Ok(codes)
    }

    pub(crate) fn key_chord(&mut self, chord: &KeyChord) -> Result<(), X11Error> {
        let codes = self.chord_strokes(chord)?;
        for &code in &codes {
            self.key_down(code)?;
        }
        for &code in codes.iter().rev() {
            self.key_up(code)?;
        }
        self.input_done()
    }

    pub(crate) fn key_hold(&mut self, chord: &KeyChord, down: bool) -> Result<(), X11Error> {
        let codes = self.chord_strokes(chord)?;
        if down {
            for &code in &codes {
                self.key_down(code)?;
            }
        } else {
            for &code in codes.iter().rev() {
                self.key_up(code)?;
            }
        }
        self.input_done()
    }

    pub(crate) fn type_text(
        &mut self,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<(), DesktopError> {
        let mut pending: Vec<Stroke> = Vec::with_capacity(TYPE_BATCH);
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            // "\r\n" is one Return; a lone "\r" is Return too.
            if c == '\r' && chars.peek() == Some(&'\n') {
                continue;
            }
            let sym = keysym::of_char(c);
            let mut keep: Vec<Keycode> = pending.iter().map(|s| s.keycode).collect();
            if self.keymap.rebind_needs_wait(sym, &keep) {
                // Every spare keycode is bound to a character pressed a moment ago or about to
                // be: send the batch, let clients translate it, then rebind.
                self.emit(&mut pending)?;
                if cancel.is_cancelled() {
                    return Err(DesktopError::Cancelled);
                }
                self.let_clients_read_mapping()?;
                keep.clear();
            }
            let stroke = self.keymap.resolve(&self.conn, sym, &keep)?;
            pending.push(stroke);
            if pending.len() >= TYPE_BATCH {
                self.emit(&mut pending)?;
                if cancel.is_cancelled() {
                    return Err(DesktopError::Cancelled);
                }
            }
        }
        self.emit(&mut pending)
    }

    fn emit(&mut self, strokes: &mut Vec<Stroke>) -> Result<(), DesktopError> {
        if strokes.is_empty() {
            return Ok(());
        }
        let shift = self.modifier_keycode(Modifier::Shift)?;
        let mut shift_held = false;
        for stroke in strokes.drain(..) {
            if stroke.shift != shift_held {
                if stroke.shift {
                    self.key_down(shift)?;
                } else {
                    self.key_up(shift)?;
                }
                shift_held = stroke.shift;
            }
            self.key_down(stroke.keycode)?;
            self.key_up(stroke.keycode)?;
        }
        if shift_held {
            self.key_up(shift)?;
        }
        self.input_done()?;
        Ok(())
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
