//! The recorder checked on its own, against a real Xvfb and raw XTEST input from a second
//! connection, so the driver tests that rely on it rest on something tested without the driver.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

use hands_core::input::Modifier;
use hands_testkit::{Area, EventKind, InputRecorder, RecorderConfig};
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{
    BUTTON_PRESS_EVENT, BUTTON_RELEASE_EVENT, ConnectionExt as _, ImageFormat, KEY_PRESS_EVENT,
    KEY_RELEASE_EVENT, MOTION_NOTIFY_EVENT,
};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

/// An Xvfb for one test, killed on drop.
struct Server {
    child: Child,
    display: String,
}

impl Server {
    fn start(width: u32, height: u32) -> Server {
        let mut child = Command::new("Xvfb")
            .args(["-displayfd", "1", "-nolisten", "tcp", "-screen", "0"])
            .arg(format!("{width}x{height}x24"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb is installed (scripts/install-system-deps.sh)");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout is piped");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("Xvfb reports its display");
        Server {
            child,
            display: format!(":{}", line.trim()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn connect(display: &str) -> (RustConnection, u32) {
    let (conn, screen) = x11rb::connect(Some(display)).expect("connect");
    let root = conn.setup().roots[screen].root;
    (conn, root)
}

#[test]
fn window_shows_the_pattern_exactly_where_asked() {
    let server = Server::start(640, 480);
    let area = Area {
        x: 100,
        y: 50,
        width: 300,
        height: 200,
    };
    let recorder = InputRecorder::start_with(
        &server.display,
        &RecorderConfig {
            area: Some(area),
            cell: 7,
            ..RecorderConfig::default()
        },
    )
    .expect("recorder starts");
    let (conn, root) = connect(&server.display);
    let image = conn
        .get_image(ImageFormat::Z_PIXMAP, root, 0, 0, 640, 480, !0)
        .expect("request")
        .reply()
        .expect("reply");
    let pattern = recorder.pattern();
    let mut n_inside = 0;
    for y in 0..480u32 {
        for x in 0..640u32 {
            let i = ((y * 640 + x) * 4) as usize;
            let rgb = [image.data[i + 2], image.data[i + 1], image.data[i]];
            if area.contains(x as i32, y as i32) {
                assert_eq!(rgb, pattern.rgb_at(x, y), "pixel ({x}, {y})");
                n_inside += 1;
            }
        }
    }
    assert_eq!(n_inside, 300 * 200);
    let focus = conn
        .get_input_focus()
        .expect("request")
        .reply()
        .expect("reply");
    assert_eq!(focus.focus, recorder.window());
}

#[test]
fn records_raw_xtest_input_and_follows_mapping_changes() {
    let server = Server::start(640, 480);
    let recorder = InputRecorder::start(&server.display).expect("recorder starts");
    let (conn, root) = connect(&server.display);
    let fake = |kind: u8, detail: u8, x: i16, y: i16| {
        conn.xtest_fake_input(kind, detail, x11rb::CURRENT_TIME, root, x, y, 0)
            .expect("fake input");
    };
    fake(MOTION_NOTIFY_EVENT, 0, 321, 123);
    fake(BUTTON_PRESS_EVENT, 3, 0, 0);
    fake(BUTTON_RELEASE_EVENT, 3, 0, 0);
    conn.get_input_focus()
        .expect("request")
        .reply()
        .expect("sync");
    let events = recorder.sync().expect("sync");
    let kinds: Vec<(EventKind, u8, (i32, i32))> = events
        .iter()
        .map(|e| (e.kind, e.detail, e.position()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (EventKind::Motion, 0, (321, 123)),
            (EventKind::ButtonPress, 3, (321, 123)),
            (EventKind::ButtonRelease, 3, (321, 123)),
        ]
    );
    // Button 3 is down during its own release.
    assert_eq!(events[2].state & 0x400, 0x400);

    // Bind an empty keycode to ☺ and type it with Shift held: the recorder reads the new mapping
    // on MappingNotify and applies the core rule (a non-letter alone means itself with Shift).
    let n_empty = recorder.n_empty_keycodes();
    assert!(n_empty > 0, "Xvfb's default map has empty keycodes");
    let setup = conn.setup();
    let (min, max) = (setup.min_keycode, setup.max_keycode);
    let map = conn
        .get_keyboard_mapping(min, max - min + 1)
        .expect("request")
        .reply()
        .expect("reply");
    let per = usize::from(map.keysyms_per_keycode);
    let empty = (0..=(max - min))
        .find(|i| {
            map.keysyms[usize::from(*i) * per..][..per]
                .iter()
                .all(|&s| s == 0)
        })
        .map(|i| min + i)
        .expect("an empty keycode");
    let shift = (0..=(max - min))
        .find(|i| map.keysyms[usize::from(*i) * per] == 0xffe1)
        .map(|i| min + i)
        .expect("a Shift_L key");
    let mut row = vec![0u32; per];
    row[0] = 0x0100_263a;
    conn.change_keyboard_mapping(1, empty, per as u8, &row)
        .expect("request")
        .check()
        .expect("bind");
    recorder.clear().expect("clear");
    fake(KEY_PRESS_EVENT, shift, 0, 0);
    fake(KEY_PRESS_EVENT, empty, 0, 0);
    fake(KEY_RELEASE_EVENT, empty, 0, 0);
    fake(KEY_RELEASE_EVENT, shift, 0, 0);
    conn.get_input_focus()
        .expect("request")
        .reply()
        .expect("sync");
    let events = recorder.sync().expect("sync");
    assert_eq!(recorder.typed_text(), "☺");
    let smiley = events
        .iter()
        .find(|e| e.kind == EventKind::KeyPress && e.detail == empty)
        .expect("the key press");
    assert_eq!(smiley.keysym, Some(0x0100_263a));
    assert_eq!(smiley.state & recorder.modifier_mask(Modifier::Shift), 1);
    assert_eq!(recorder.n_empty_keycodes(), n_empty - 1);
    assert_eq!(recorder.modifier_mask(Modifier::Control), 4);
    assert_ne!(recorder.modifier_mask(Modifier::Alt), 0);
    assert_ne!(recorder.modifier_mask(Modifier::Super), 0);
}

#[test]
fn wait_for_reports_what_it_saw_when_it_times_out() {
    let server = Server::start(320, 240);
    let recorder = InputRecorder::start(&server.display).expect("recorder starts");
    let err = recorder
        .wait_for(
            "a key press",
            std::time::Duration::from_millis(50),
            |events| events.iter().any(|e| e.kind == EventKind::KeyPress),
        )
        .expect_err("nothing was typed");
    assert!(
        matches!(err, hands_testkit::RecorderError::Timeout { ref events, .. } if events.is_empty()),
        "{err}"
    );
}
