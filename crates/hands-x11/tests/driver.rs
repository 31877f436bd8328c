//! The X11 driver through the `Desktop` trait against a real Xvfb, checked at an X client the test
//! owns: captures against the pattern it draws, input against the events it received.

use hands_core::input::{Button, KeyChord, ModifierSet, keysym};
use hands_core::{
    CancellationToken, Desktop,
    geometry::{ScreenPoint, Size},
};
use hands_testkit::EventKind::{ButtonPress, ButtonRelease, KeyPress, KeyRelease};
use hands_testkit::InputRecorder;
use hands_x11::{X11Desktop, Xvfb, XvfbConfig};
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::ConnectionExt as _;

fn size(width: u32, height: u32) -> Size {
    Size::new(width, height).expect("a non-empty size")
}

#[tokio::test]
async fn capture_is_the_screen_pixel_for_pixel() {
    // An odd width and a portrait shape catch stride and channel-order mistakes.
    let mut desktop = X11Desktop::spawn(&XvfbConfig::new(size(1001, 1700))).expect("Xvfb");
    let recorder = InputRecorder::start(desktop.display()).expect("recorder");
    let pixels = desktop.capture().await.expect("capture");
    assert_eq!(pixels.size(), size(1001, 1700));
    assert_eq!(desktop.screen().capture, size(1001, 1700));
    let pattern = recorder.pattern();
    for y in 0..1700 {
        for x in 0..1001 {
            assert_eq!(
                pixels.rgb_at(x, y),
                Some(pattern.rgb_at(x, y)),
                "pixel ({x}, {y})"
            );
        }
    }
}

#[tokio::test]
async fn pointer_reports_where_input_moved_it() {
    let mut desktop = X11Desktop::spawn(&XvfbConfig::new(size(800, 600))).expect("Xvfb");
    let recorder = InputRecorder::start(desktop.display()).expect("recorder");
    let to = ScreenPoint { x: 799, y: 1 };
    desktop.move_pointer(to).await.expect("move");
    assert_eq!(desktop.pointer().await.expect("pointer"), to);
    let at = ScreenPoint { x: 20, y: 590 };
    desktop
        .click(Some(at), Button::Right, 1, ModifierSet::NONE)
        .await
        .expect("click");
    assert_eq!(desktop.pointer().await.expect("pointer"), at);
    let events = recorder.sync().expect("sync");
    let last = events.last().expect("events");
    assert_eq!(
        (last.kind, last.detail, last.position()),
        (ButtonRelease, 3, (20, 590))
    );
}

/// Swaps the keysyms of two keycodes from another client, as a layout switch (QWERTY to AZERTY)
/// would.
fn swap_keys(display: &str, a: char, b: char) -> (u8, u8) {
    let (conn, _) = x11rb::connect(Some(display)).expect("connect");
    let setup = conn.setup();
    let (min, max) = (setup.min_keycode, setup.max_keycode);
    let map = conn
        .get_keyboard_mapping(min, max - min + 1)
        .expect("request")
        .reply()
        .expect("reply");
    let per = usize::from(map.keysyms_per_keycode);
    let find = |c: char| {
        (0..=(max - min))
            .find(|i| map.keysyms[usize::from(*i) * per] == c as u32)
            .map(|i| min + i)
            .expect("the layout has the key")
    };
    let (code_a, code_b) = (find(a), find(b));
    let row = |code: u8| map.keysyms[usize::from(code - min) * per..][..per].to_vec();
    let (row_a, row_b) = (row(code_a), row(code_b));
    conn.change_keyboard_mapping(1, code_a, per as u8, &row_b)
        .expect("request")
        .check()
        .expect("remap");
    conn.change_keyboard_mapping(1, code_b, per as u8, &row_a)
        .expect("request")
        .check()
        .expect("remap");
    (code_a, code_b)
}

#[tokio::test]
async fn typing_follows_a_layout_change_made_by_another_client() {
    let mut desktop = X11Desktop::spawn(&XvfbConfig::new(size(640, 480))).expect("Xvfb");
    let display = desktop.display().to_owned();
    let recorder = InputRecorder::start(&display).expect("recorder");
    let (code_a, code_q) = swap_keys(&display, 'a', 'q');
    let cancel = CancellationToken::new();
    desktop.type_text("aQuA", &cancel).await.expect("type");
    let events = recorder.sync().expect("sync");
    assert_eq!(recorder.typed_text(), "aQuA");
    // The letters came from the keys that now carry them.
    let press_codes: Vec<u8> = events
        .iter()
        .filter(|e| e.kind == KeyPress && e.ch.is_some())
        .map(|e| e.detail)
        .collect();
    assert_eq!(press_codes[0], code_q, "a is on the old q key now");
    assert_eq!(press_codes[1], code_a, "q is on the old a key now");
}

#[tokio::test]
async fn held_input_and_key_bindings_are_undone_when_the_desktop_drops() {
    // The server outlives the desktop: attach to one this test owns.
    let xvfb = Xvfb::spawn(&XvfbConfig::new(size(640, 480))).expect("Xvfb");
    let recorder = InputRecorder::start(xvfb.display()).expect("recorder");
    let n_spares = recorder.n_empty_keycodes();
    let mut desktop = X11Desktop::connect(Some(xvfb.display())).expect("attach");
    let cancel = CancellationToken::new();
    desktop.type_text("日本☺", &cancel).await.expect("type");
    recorder.sync().expect("sync");
    assert_eq!(recorder.typed_text(), "日本☺");
    assert_eq!(recorder.n_empty_keycodes(), n_spares - 3);

    recorder.clear().expect("clear");
    desktop
        .move_pointer(ScreenPoint { x: 50, y: 60 })
        .await
        .expect("move");
    desktop.button(Button::Left, true).await.expect("press");
    let shift = KeyChord::parse("shift").expect("a chord");
    desktop.key_hold(&shift, true).await.expect("hold");
    drop(desktop);

    let events = recorder.sync().expect("sync");
    let kinds: Vec<_> = events
        .iter()
        .filter(|e| e.is_button() || e.is_key())
        .map(|e| (e.kind, e.keysym.unwrap_or(u32::from(e.detail))))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (ButtonPress, 1),
            (KeyPress, keysym::SHIFT_L),
            (KeyRelease, keysym::SHIFT_L),
            (ButtonRelease, 1),
        ]
    );
    assert_eq!(recorder.n_empty_keycodes(), n_spares, "bindings undone");
}
