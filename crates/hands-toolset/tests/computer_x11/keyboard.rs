//! `type`, `key` (chords, aliases, `repeat`) and `hold_key`, checked by the characters and keysyms
//! the recorder's window translated from the key events it received.

use hands_core::input::keysym;
use hands_testkit::EventKind::{KeyPress, KeyRelease};
use serde_json::json;

use crate::support::{Rig, keys};

const LINEFEED: u32 = 0xff0a;
const ESCAPE: u32 = 0xff1b;

/// Types `text` through the toolset and asserts the window received exactly `expect`, with no
/// Control, Alt or Super held on any key.
async fn check_typed(rig: &mut Rig, text: &str, expect: &str) {
    rig.reset();
    rig.one("type", json!({"text": text})).await.assert_ok();
    let events = rig.events();
    assert_eq!(rig.typed(), expect, "typing {text:?}");
    let chords = rig.recorder.all_modifiers_mask() & !1;
    assert!(events.iter().all(|e| e.state & chords == 0));
    // Every key that went down came up.
    let n_presses = events.iter().filter(|e| e.kind == KeyPress).count();
    let n_releases = events.iter().filter(|e| e.kind == KeyRelease).count();
    assert_eq!(n_presses, n_releases);
    assert!(
        events.iter().all(|e| e.keysym != Some(LINEFEED)),
        "newline is Return"
    );
}

#[tokio::test]
async fn typed_ascii_newlines_and_tabs_arrive_exactly_in_order() {
    let mut rig = Rig::new(1024, 768);
    let printable: String = (0x20u8..=0x7e).map(char::from).collect();
    let text = format!("{printable}\nsecond line\twith a tab\n\tindented\n");
    check_typed(&mut rig, &text, &text).await;
    let events = rig.events();
    let count = |sym| events.iter().filter(|e| e.is_key_press(sym)).count();
    assert_eq!(count(keysym::RETURN), 3);
    assert_eq!(count(keysym::TAB), 2);
    // Windows line ends and a lone carriage return are one Return each.
    check_typed(&mut rig, "a\r\nb\rc", "a\nb\nc").await;
}

#[tokio::test]
async fn typed_non_ascii_arrives_exactly() {
    let mut rig = Rig::new(1024, 768);
    for text in [
        "é ß € Ж 日 ☺",
        "naïve façade, Übermaß, ¿qué? ñ Ω ½ ° « » — “quotes” …",
        "Жизнь прекрасна. 日本語のテキスト。 Ελληνικά. ☺☻♥",
    ] {
        check_typed(&mut rig, text, text).await;
    }
}

#[tokio::test]
async fn typed_text_with_more_missing_characters_than_spare_keycodes_arrives_exactly() {
    let mut rig = Rig::new(1024, 768);
    let n_spares = rig.recorder.n_empty_keycodes();
    assert!(n_spares > 0 && n_spares < 200, "{n_spares} spare keycodes");
    // Three times as many distinct CJK ideographs as spare keycodes, with ASCII between them,
    // then the same ideographs backwards: every binding is reused, some while just pressed.
    let ideographs: Vec<char> = (0..3 * n_spares as u32 + 7)
        .map(|i| char::from_u32(0x4e00 + i).expect("a CJK ideograph"))
        .collect();
    let mut text = String::new();
    for (i, c) in ideographs.iter().enumerate() {
        text.push(*c);
        if i % 5 == 0 {
            text.push_str(" a");
        }
    }
    text.push('\n');
    text.extend(ideographs.iter().rev());
    check_typed(&mut rig, &text, &text).await;
    // The driver restores nothing mid-turn, but never binds more than the spare keycodes.
    assert_eq!(rig.recorder.n_empty_keycodes(), 0);
}

#[tokio::test]
async fn key_chords_and_aliases_press_in_order_and_release_in_reverse() {
    let mut rig = Rig::new(1024, 768);
    let ctrl = rig
        .recorder
        .modifier_mask(hands_core::input::Modifier::Control);
    let shift = rig
        .recorder
        .modifier_mask(hands_core::input::Modifier::Shift);
    let alt = rig.recorder.modifier_mask(hands_core::input::Modifier::Alt);
    let (control_l, shift_l, alt_l, super_l) = (
        keysym::CONTROL_L,
        keysym::SHIFT_L,
        keysym::ALT_L,
        keysym::SUPER_L,
    );
    let s = 's' as u32;
    let big_t = 'T' as u32;
    let cases: Vec<(&str, Vec<u32>, u16)> = vec![
        ("ctrl+s", vec![control_l, s], ctrl),
        ("alt+Tab", vec![alt_l, keysym::TAB], alt),
        // With Shift held, the t key means T.
        (
            "ctrl+shift+t",
            vec![control_l, shift_l, big_t],
            ctrl | shift,
        ),
        ("Enter", vec![keysym::RETURN], 0),
        ("ESC", vec![ESCAPE], 0),
        ("super", vec![super_l], 0),
        ("Page_Down", vec![0xff56], 0),
        ("F5", vec![0xffc2], 0),
    ];
    for (text, chord, last_state) in cases {
        rig.reset();
        rig.one("key", json!({"text": text})).await.assert_ok();
        let events = rig.events();
        let mut expect: Vec<_> = chord.iter().map(|&k| (KeyPress, k)).collect();
        expect.extend(chord.iter().rev().map(|&k| (KeyRelease, k)));
        assert_eq!(keys(&events), expect, "key {text:?}: {events:#?}");
        // The last key of the chord went down with the others held.
        let last = &events[chord.len() - 1];
        assert_eq!(last.kind, KeyPress);
        assert_eq!(
            last.state & rig.recorder.all_modifiers_mask(),
            last_state,
            "{text}"
        );
    }
}

#[tokio::test]
async fn key_repeat_presses_exactly_n_times() {
    let mut rig = Rig::new(1024, 768);
    rig.one("key", json!({"text": "Tab", "repeat": 4}))
        .await
        .assert_ok();
    let tab = keysym::TAB;
    let expect: Vec<_> = (0..4)
        .flat_map(|_| [(KeyPress, tab), (KeyRelease, tab)])
        .collect();
    assert_eq!(keys(&rig.events()), expect);

    // A sequence of chords repeats as a whole.
    rig.reset();
    rig.one("key", json!({"text": "ctrl+a Delete", "repeat": 2}))
        .await
        .assert_ok();
    let (control_l, a, delete) = (keysym::CONTROL_L, 'a' as u32, 0xffff);
    let once = [
        (KeyPress, control_l),
        (KeyPress, a),
        (KeyRelease, a),
        (KeyRelease, control_l),
        (KeyPress, delete),
        (KeyRelease, delete),
    ];
    let expect: Vec<_> = once.iter().chain(once.iter()).copied().collect();
    assert_eq!(keys(&rig.events()), expect);
}

#[tokio::test]
async fn hold_key_presses_then_releases_before_the_next_action() {
    let mut rig = Rig::new(1024, 768);
    let blocks = vec![
        rig.call("hold_key", json!({"text": "shift", "duration": 1})),
        rig.call("key", json!({"text": "a"})),
        rig.call("hold_key", json!({"text": "ctrl+alt", "duration": 0})),
    ];
    for answer in rig.turn(blocks).await {
        answer.assert_ok();
    }
    let events = rig.events();
    let (shift_l, control_l, alt_l, a) = (
        keysym::SHIFT_L,
        keysym::CONTROL_L,
        keysym::ALT_L,
        'a' as u32,
    );
    assert_eq!(
        keys(&events),
        vec![
            (KeyPress, shift_l),
            (KeyRelease, shift_l),
            (KeyPress, a),
            (KeyRelease, a),
            (KeyPress, control_l),
            (KeyPress, alt_l),
            (KeyRelease, alt_l),
            (KeyRelease, control_l),
        ]
    );
    // The release came after the press (server time never runs backwards), and the key after it
    // was typed without Shift.
    assert!(events[1].time >= events[0].time);
    assert_eq!(rig.typed(), "a");
}
