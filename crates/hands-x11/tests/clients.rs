//! Typing and keys checked at real clients — hands-testkit's recorder (a core-protocol client),
//! an Xlib client that reads keys as xev does, and a GTK client — under the five layouts, while
//! another process keeps every core busy. One display serves the whole scenario.

use std::time::Duration;

use hands_core::input::{KeyChord, keysym};
use hands_core::{CancellationToken, Desktop as _, DesktopError, geometry::Size};
use hands_testkit::texts::{cjk, long_mixed, missing_pool};
use hands_testkit::{
    Area, CpuLoad, EventKind, GtkText, InputRecorder, Layout, RecorderConfig, XlibKeys,
};
use hands_x11::{X11Desktop, Xvfb, XvfbConfig};

const SHIFT: u16 = 1;
const CONTROL: u16 = 4;
const ALT: u16 = 8;
const SUPER: u16 = 64;

/// Characters and keysym names of characters, each expected to arrive as named, alone.
const CHARACTERS: &[&str] = &[
    "a",
    "z",
    "A",
    "Z",
    "0",
    "9",
    "!",
    "@",
    "#",
    "$",
    "%",
    "^",
    "&",
    "*",
    "(",
    ")",
    "-",
    "_",
    "=",
    "plus",
    "minus",
    "[",
    "]",
    "{",
    "}",
    "\\",
    "|",
    ";",
    ":",
    "'",
    "\"",
    ",",
    ".",
    "<",
    ">",
    "/",
    "?",
    "`",
    "~",
    "period",
    "comma",
    "slash",
    "bracketleft",
    "backslash",
    "grave",
    "asciitilde",
    "é",
    "ß",
    "ж",
    "Ж",
    "€",
    "日",
    "☺",
    "Aacute",
    "aacute",
    "Cyrillic_zhe",
    "EuroSign",
];

/// Lock keys, pressed on purpose elsewhere: pressing them here would change what follows.
const LOCKS: &[u32] = &[
    0xffe5, 0xffe6, 0xff7f, 0xff14, 0xfe01, 0xfe04, 0xfe07, 0xfe0c, 0xfe0d, 0xfe0e, 0xfe0f, 0xfe13,
];

/// Every name of the key grammar that names a key (each alias spelling, F1–F35, every keysym
/// name of a keyboard function) but the locks, a few in another case, and characters.
fn lone_keys() -> Vec<String> {
    let mut names: Vec<String> = hands_core::input::key_names()
        .into_iter()
        .filter(|name| {
            KeyChord::parse(name)
                .map(|c| !LOCKS.contains(&c.keys()[0].keysym()))
                .unwrap_or(false)
        })
        .map(str::to_owned)
        .collect();
    for name in [
        "kp_enter",
        "KP_ENTER",
        "ENTER",
        "PgDn",
        "ArrowLeft",
        "RIGHT",
        "kp_7",
        "F35",
    ] {
        names.push(name.to_owned());
    }
    names.extend(CHARACTERS.iter().map(|c| (*c).to_owned()));
    names
}

/// Chords: the named modifiers and exactly those are held, and the other key is the named one
/// (its first-level keysym; Shift may then change what it types, as on a real keyboard).
const CHORDS: &[&str] = &[
    "ctrl+a",
    "ctrl+S",
    "CTRL+C",
    "ctrl+shift+t",
    "shift+Tab",
    "alt+Tab",
    "super+e",
    "ctrl+plus",
    "ctrl++",
    "ctrl+minus",
    "ctrl+KP_Add",
    "shift+KP_0",
    "ctrl+alt+Delete",
    "alt+F4",
    "ctrl+Return",
    "shift+a",
    "ctrl+é",
    "alt+ж",
    "ctrl+日",
    "ctrl+shift+Z",
    "super+KP_ENTER",
];

fn modifier_mask(chord: &KeyChord) -> u16 {
    chord
        .keys()
        .iter()
        .filter_map(|k| k.modifier())
        .map(|m| match m {
            hands_core::input::Modifier::Shift => SHIFT,
            hands_core::input::Modifier::Control => CONTROL,
            hands_core::input::Modifier::Alt => ALT,
            hands_core::input::Modifier::Super => SUPER,
        })
        .fold(0, |a, b| a | b)
}

/// The keysym a key means, for comparing: a character's canonical keysym.
fn same_key(a: u32, b: u32) -> bool {
    let canon = |s: u32| keysym::char_of(s).and_then(keysym::of_char).unwrap_or(s);
    canon(a) == canon(b)
}

/// Every key name arrives at the Xlib client as named, and lone keys at the recorder too. The
/// chords are pressed one after another and checked once the client has them all.
async fn check_key_grammar(
    desktop: &mut X11Desktop,
    xlib: &mut XlibKeys,
    recorder: &InputRecorder,
    layout: Layout,
) {
    let lone = lone_keys();
    let chords: Vec<(&str, KeyChord)> = lone
        .iter()
        .map(String::as_str)
        .chain(CHORDS.iter().copied())
        .map(|name| (name, KeyChord::parse(name).expect("a chord")))
        .collect();
    xlib.focus().expect("focus");
    xlib.clear().expect("clear");
    for (_, chord) in &chords {
        desktop.key_chord(chord).await.expect("key");
    }
    let presses = xlib.sync().expect("sync");
    assert_eq!(
        presses.len(),
        chords.iter().map(|(_, c)| c.keys().len()).sum::<usize>(),
        "{layout:?}: one press per key"
    );
    let mut at = 0;
    for (name, chord) in &chords {
        let keys = chord.keys();
        at += keys.len();
        let (key, press) = (&keys[keys.len() - 1], presses[at - 1]);
        if let Some(m) = key.modifier() {
            // A lone modifier: its own press carries no state yet.
            assert!(
                same_key(press.keysym, m.key().keysym()),
                "{layout:?} {name:?}: {press:x?}"
            );
            continue;
        }
        let named = modifier_mask(chord);
        let held = press.state & (SHIFT | CONTROL | ALT | SUPER);
        assert_eq!(held, named, "{layout:?} {name:?}: modifiers {press:x?}");
        assert!(
            same_key(press.base, key.keysym()),
            "{layout:?} {name:?}: the key is {:#x}, wanted {:#x} ({press:x?})",
            press.base,
            key.keysym()
        );
        if named == 0 {
            assert!(
                same_key(press.keysym, key.keysym()),
                "{layout:?} {name:?}: read {:#x}, wanted {:#x}",
                press.keysym,
                key.keysym()
            );
        }
    }
    // The core client reads lone keys as named too.
    let lone: Vec<&(&str, KeyChord)> = chords[..lone.len()]
        .iter()
        .filter(|(_, c)| c.keys()[0].modifier().is_none())
        .collect();
    recorder.focus().expect("focus");
    recorder.clear().expect("clear");
    for (_, chord) in &lone {
        desktop.key_chord(chord).await.expect("key");
    }
    let events = recorder.sync().expect("sync");
    let presses: Vec<_> = events
        .iter()
        .filter(|e| e.kind == EventKind::KeyPress)
        .collect();
    assert_eq!(presses.len(), lone.len(), "{layout:?}: the core client");
    for ((name, chord), press) in lone.iter().zip(presses) {
        assert_eq!(press.state & (SHIFT | CONTROL | ALT | SUPER), 0, "{name:?}");
        assert!(
            press
                .keysym
                .is_some_and(|s| same_key(s, chord.keys()[0].keysym())),
            "{layout:?} {name:?}: the recorder read {:x?}",
            press.keysym
        );
    }
}

#[tokio::test]
async fn typing_and_keys_are_exact_at_real_clients_under_five_layouts_while_cores_are_busy() {
    let xvfb = Xvfb::spawn(&XvfbConfig::new(Size::new(1024, 768).expect("size"))).expect("Xvfb");
    let display = xvfb.display().to_owned();
    let mut desktop = X11Desktop::connect(Some(&display)).expect("attach");
    let recorder = InputRecorder::start_with(
        &display,
        &RecorderConfig {
            area: Some(Area {
                x: 700,
                y: 500,
                width: 300,
                height: 200,
            }),
            ..RecorderConfig::default()
        },
    )
    .expect("recorder");
    let mut xlib = XlibKeys::start(&display).expect("Xlib client");
    let mut gtk = GtkText::start(&display).expect("GTK client");
    let _load = CpuLoad::start().expect("load");
    let cancel = CancellationToken::new();
    // More distinct characters missing from every layout than the spare keycodes hold, so
    // bindings are reused while clients are starved.
    let across: String = missing_pool().into_iter().step_by(5).collect();
    let text = format!("{} @{{}}[]|\\~€µ² {across}", long_mixed(300));
    let n_chars = text.chars().count();
    for layout in Layout::ALL {
        layout.apply(&display).expect("setxkbmap");

        recorder.focus().expect("focus");
        recorder.clear().expect("clear");
        desktop.type_text(&text, &cancel).await.expect("type");
        let got = recorder
            .wait_for_text(n_chars, Duration::from_secs(30))
            .unwrap_or_else(|_| recorder.typed_text());
        assert_eq!(got, text, "{layout:?}: the core client");

        xlib.focus().expect("focus");
        xlib.clear().expect("clear");
        desktop.type_text(&text, &cancel).await.expect("type");
        xlib.sync().expect("sync");
        assert_eq!(xlib.typed_text(), text, "{layout:?}: the Xlib client");

        gtk.focus().expect("focus");
        gtk.clear().expect("clear");
        desktop.type_text(&text, &cancel).await.expect("type");
        let got = gtk
            .wait_for_text(n_chars, Duration::from_secs(30))
            .expect("text");
        assert_eq!(got, text, "{layout:?}: the GTK client");

        check_key_grammar(&mut desktop, &mut xlib, &recorder, layout).await;
    }

    // Caps Lock on: the text still arrives as written, and Caps Lock is on afterwards.
    Layout::Us.apply(&display).expect("setxkbmap");
    xlib.focus().expect("focus");
    let caps = KeyChord::parse("Caps_Lock").expect("chord");
    desktop.key_chord(&caps).await.expect("caps on");
    xlib.clear().expect("clear");
    desktop
        .type_text("abc ABC éÉ жЖ 日", &cancel)
        .await
        .expect("type");
    xlib.sync().expect("sync");
    assert_eq!(xlib.typed_text(), "abc ABC éÉ жЖ 日");
    xlib.clear().expect("clear");
    desktop
        .key_chord(&KeyChord::parse("a").expect("chord"))
        .await
        .expect("key");
    let presses = xlib.sync().expect("sync");
    assert_eq!(presses[0].keysym, 'A' as u32, "Caps Lock is still on");
    desktop.key_chord(&caps).await.expect("caps off");

    // Num Lock on: keypad digits come from the keypad itself.
    let num_lock = KeyChord::parse("Num_Lock").expect("chord");
    desktop.key_chord(&num_lock).await.expect("num lock");
    xlib.clear().expect("clear");
    for name in ["KP_0", "KP_5", "KP_Decimal"] {
        let chord = KeyChord::parse(name).expect("chord");
        desktop.key_chord(&chord).await.expect("key");
    }
    let presses = xlib.sync().expect("sync");
    let read: Vec<u32> = presses.iter().map(|p| p.keysym).collect();
    assert_eq!(read, vec![0xffb0, 0xffb5, 0xffae]);
    desktop.key_chord(&num_lock).await.expect("num lock");

    // A control character refuses the whole text before any key is pressed.
    xlib.clear().expect("clear");
    for bad in ["ab\u{8}", "\u{1b}[0m", "x\u{7f}"] {
        let err = desktop.type_text(bad, &cancel).await.expect_err(bad);
        assert!(
            matches!(err, DesktopError::Unsupported(ref why) if why.contains("control character")),
            "{bad:?}: {err}"
        );
    }
    assert!(xlib.sync().expect("sync").is_empty(), "nothing was typed");
}

#[tokio::test]
async fn a_text_of_many_missing_characters_costs_one_mapping_change_per_stretch() {
    let mut desktop =
        X11Desktop::spawn(&XvfbConfig::new(Size::new(640, 480).expect("size"))).expect("Xvfb");
    let recorder = InputRecorder::start(desktop.display()).expect("recorder");
    let slots = recorder.n_empty_keycodes() * 2;
    let cancel = CancellationToken::new();
    // The first XTEST key makes the server switch the core keyboard to the XTEST device, which
    // itself tells every client the mapping changed: not counted.
    desktop.type_text("x", &cancel).await.expect("type");
    recorder.clear().expect("clear");
    let before = recorder.n_mapping_notifies();
    let text = cjk(1000);
    desktop.type_text(&text, &cancel).await.expect("type");
    let got = recorder
        .wait_for_text(1000, Duration::from_secs(30))
        .unwrap_or_else(|_| recorder.typed_text());
    assert_eq!(got, text);
    let n_notifies = recorder.n_mapping_notifies() - before;
    // Each mapping change binds a full set of spare slots: no more changes than stretches.
    let stretches = 1000usize.div_ceil(slots) as u64;
    assert!(
        n_notifies <= stretches,
        "{n_notifies} MappingNotify for {stretches} stretches of {slots}"
    );
}

#[tokio::test]
async fn bindings_outlive_the_desktop_until_a_busy_client_has_read_its_keys() {
    // The server outlives the desktop: attach to one this test owns.
    let xvfb = Xvfb::spawn(&XvfbConfig::new(Size::new(640, 480).expect("size"))).expect("Xvfb");
    let recorder = InputRecorder::start(xvfb.display()).expect("recorder");
    let n_spares = recorder.n_empty_keycodes();
    let mut desktop = X11Desktop::connect(Some(xvfb.display())).expect("attach");
    // Fewer characters than spare slots: one binding, nothing proven while typing.
    let text = cjk(30);
    assert!(30 < n_spares * 2);
    // The recorder stops reading for a while: the keys and the unbinding queue behind it.
    recorder.stall(Duration::from_millis(600)).expect("stall");
    desktop
        .type_text(&text, &CancellationToken::new())
        .await
        .expect("type");
    drop(desktop);
    let got = recorder
        .wait_for_text(30, Duration::from_secs(10))
        .unwrap_or_else(|_| recorder.typed_text());
    assert_eq!(
        got, text,
        "every key read with the binding it was typed under"
    );
    recorder.sync().expect("sync");
    assert_eq!(recorder.n_empty_keycodes(), n_spares, "bindings undone");
}

#[tokio::test]
async fn a_settled_screen_is_current_static_or_slow() {
    use hands_core::desktop::SettleBudget;
    use hands_core::geometry::ScreenPoint;
    use hands_core::input::{Button, ModifierSet};

    let mut desktop =
        X11Desktop::spawn(&XvfbConfig::new(Size::new(640, 480).expect("size"))).expect("Xvfb");
    let recorder = InputRecorder::start(desktop.display()).expect("recorder");
    let cancel = CancellationToken::new();
    // A click on a static window: the client answers, nothing changes, settled.
    let pings = recorder.n_pings();
    desktop
        .click(
            Some(ScreenPoint { x: 100, y: 100 }),
            Button::Left,
            1,
            ModifierSet::NONE,
        )
        .await
        .expect("click");
    let report = desktop
        .settle(SettleBudget::default(), &cancel)
        .await
        .expect("settle");
    assert!(report.settled && report.n_changes == 0, "{report:?}");
    assert!(recorder.n_pings() > pings, "the client was asked");

    // A key whose handler works 300 ms before it repaints (a dialog being built): the settled
    // screen shows the repaint, though input and screen were quiet far longer than the quiet
    // period in between.
    let red = [200, 30, 40];
    recorder.paint_after_key(0xffc2, Duration::from_millis(300), red);
    let before = desktop.capture().await.expect("capture");
    assert_ne!(before.rgb_at(10, 10), Some(red));
    desktop
        .key_chord(&KeyChord::parse("F5").expect("chord"))
        .await
        .expect("key");
    let report = desktop
        .settle(SettleBudget::default(), &cancel)
        .await
        .expect("settle");
    let after = desktop.capture().await.expect("capture");
    assert_eq!(after.rgb_at(10, 10), Some(red), "{report:?}");
}
