//! Clicks of every kind, modifiers held only during their action, the wheel, drags, the left
//! button held across actions, and the cursor position — checked at the recorder's window.

use hands_core::input::{Modifier, keysym};
use hands_testkit::EventKind::{ButtonPress, ButtonRelease, KeyPress, KeyRelease, Motion};
use hands_testkit::{BUTTON1_MASK, InputEvent};
use serde_json::{Value, json};

use crate::support::{Rig, presses};

/// Every click member, with and without `coordinate`, on one screen size: each press and release
/// arrives at the screen pixel that holds the centre of the screenshot pixel named, double and
/// triple clicks as two and three press/release pairs at the same spot.
async fn clicks_land_where_the_scaled_coordinates_say(width: u32, height: u32) {
    let mut rig = Rig::new(width, height);
    let shot = rig.screenshot_size().await;
    assert_eq!(
        shot.long_edge(),
        1024,
        "the sizing downscales {width}x{height}"
    );
    // The aspect ratio is kept: the short edge is within one pixel of the exact ratio.
    let exact_short =
        f64::from(shot.long_edge()) * f64::from(width.min(height)) / f64::from(width.max(height));
    assert!((f64::from(shot.width.min(shot.height)) - exact_short).abs() <= 1.0);

    let (w, h) = (shot.width, shot.height);
    let spots = [
        (0, 0),
        (w - 1, h - 1),
        (w / 3, h / 2),
        (w * 7 / 9, h / 5),
        (w - 1, 0),
        (0, h - 1),
    ];
    let kinds = [
        ("left_click", 1u8, 1usize),
        ("right_click", 3, 1),
        ("middle_click", 2, 1),
        ("double_click", 1, 2),
        ("triple_click", 1, 3),
    ];
    for (i, (member, button, count)) in kinds.into_iter().enumerate() {
        let expect = |at: (i32, i32)| {
            (0..count)
                .flat_map(|_| [(ButtonPress, button, at), (ButtonRelease, button, at)])
                .collect::<Vec<_>>()
        };
        for (x, y) in [spots[i], spots[i + 1]] {
            rig.reset();
            rig.one(member, json!({"coordinate": [x, y]}))
                .await
                .assert_ok();
            assert_eq!(
                presses(&rig.events()),
                expect(rig.expected_screen(x, y)),
                "{member} at [{x}, {y}] on {width}x{height} (screenshot {shot})"
            );
        }
        // Without a coordinate the click lands where the cursor is, without moving it.
        let (x, y) = spots[(i + 3) % spots.len()];
        rig.one("mouse_move", json!({"coordinate": [x, y]}))
            .await
            .assert_ok();
        rig.reset();
        rig.one(member, json!({})).await.assert_ok();
        let events = rig.events();
        assert_eq!(
            presses(&events),
            expect(rig.expected_screen(x, y)),
            "{member} at the cursor, moved to [{x}, {y}], on {width}x{height}"
        );
        assert!(events.iter().all(|e| e.kind != Motion), "{events:?}");
    }
}

#[tokio::test]
async fn clicks_land_where_scaled_coordinates_say_1920x1080() {
    clicks_land_where_the_scaled_coordinates_say(1920, 1080).await;
}

#[tokio::test]
async fn clicks_land_where_scaled_coordinates_say_1280x800() {
    clicks_land_where_the_scaled_coordinates_say(1280, 800).await;
}

#[tokio::test]
async fn clicks_land_where_scaled_coordinates_say_1000x1700_portrait() {
    clicks_land_where_the_scaled_coordinates_say(1000, 1700).await;
}

#[tokio::test]
async fn clicks_land_where_scaled_coordinates_say_3440x1440_ultrawide() {
    clicks_land_where_the_scaled_coordinates_say(3440, 1440).await;
}

fn index_of(events: &[InputEvent], what: impl Fn(&InputEvent) -> bool) -> Vec<usize> {
    events
        .iter()
        .enumerate()
        .filter(|(_, e)| what(e))
        .map(|(i, _)| i)
        .collect()
}

#[tokio::test]
async fn modifiers_are_held_only_during_their_click_scroll_or_drag() {
    let mut rig = Rig::new(1280, 800);
    let mask = |m| rig.recorder.modifier_mask(m);
    let (shift, ctrl, alt, sup) = (
        mask(Modifier::Shift),
        mask(Modifier::Control),
        mask(Modifier::Alt),
        mask(Modifier::Super),
    );
    let all = rig.recorder.all_modifiers_mask();
    assert_eq!(all.count_ones(), 4, "four distinct modifier bits");
    let (shift_l, control_l, alt_l, super_l) = (
        keysym::SHIFT_L,
        keysym::CONTROL_L,
        keysym::ALT_L,
        keysym::SUPER_L,
    );
    let cases: Vec<(&str, Value, u16, Vec<u32>)> = vec![
        (
            "left_click",
            json!({"coordinate": [100, 100], "text": "shift"}),
            shift,
            vec![shift_l],
        ),
        (
            "right_click",
            json!({"coordinate": [500, 300], "text": "ctrl+shift"}),
            ctrl | shift,
            vec![control_l, shift_l],
        ),
        (
            "middle_click",
            json!({"coordinate": [700, 200], "text": "alt"}),
            alt,
            vec![alt_l],
        ),
        (
            "double_click",
            json!({"coordinate": [300, 600], "text": "super"}),
            sup,
            vec![super_l],
        ),
        (
            "triple_click",
            json!({"text": "cmd+alt"}),
            alt | sup,
            vec![alt_l, super_l],
        ),
        (
            "scroll",
            json!({"coordinate": [300, 200], "scroll_direction": "down", "scroll_amount": 2,
                   "text": "super"}),
            sup,
            vec![super_l],
        ),
        (
            "left_click_drag",
            json!({"start_coordinate": [50, 50], "coordinate": [400, 300], "text": "ctrl"}),
            ctrl,
            vec![control_l],
        ),
    ];
    for (member, input, held, mod_keys) in cases {
        rig.reset();
        rig.one(member, input.clone()).await.assert_ok();
        // A plain click afterwards: its events must carry no modifier.
        rig.one("left_click", json!({"coordinate": [10, 10]}))
            .await
            .assert_ok();
        let events = rig.events();
        let what = format!("{member} {input}: {events:#?}");

        let key_presses = index_of(&events, |e| e.kind == KeyPress);
        let key_releases = index_of(&events, |e| e.kind == KeyRelease);
        let pressed: Vec<u32> = key_presses
            .iter()
            .map(|&i| events[i].keysym.unwrap_or(0))
            .collect();
        let mut released: Vec<u32> = key_releases
            .iter()
            .map(|&i| events[i].keysym.unwrap_or(0))
            .collect();
        assert_eq!(pressed, mod_keys, "modifier presses of {what}");
        released.reverse();
        assert_eq!(
            released, mod_keys,
            "modifier releases, in reverse, of {what}"
        );

        let (first_press, last_press) = (key_presses[0], key_presses[key_presses.len() - 1]);
        let (first_release, last_release) = (key_releases[0], key_releases[key_releases.len() - 1]);
        assert!(last_press < first_release, "{what}");
        // Before the modifiers go down: at most the pointer moving to the spot.
        assert!(
            events[..first_press].iter().all(|e| e.kind == Motion),
            "{what}"
        );
        // While they are down: the action, every event of it with exactly those bits.
        let during = &events[last_press + 1..first_release];
        assert!(during.iter().any(InputEvent::is_button), "{what}");
        for e in during {
            assert_eq!(e.state & all, held, "state of {e:?} in {what}");
        }
        // After: the plain click, with none.
        let after = &events[last_release + 1..];
        assert_eq!(after.iter().filter(|e| e.is_button()).count(), 2, "{what}");
        for e in after {
            assert_eq!(e.state & all, 0, "state of {e:?} after {what}");
        }
    }
}

#[tokio::test]
async fn scroll_turns_the_wheel_by_direction_and_amount() {
    let mut rig = Rig::new(1920, 1080);
    let cases = [
        ("down", 3u32, 5u8, [100u32, 100u32]),
        ("up", 2, 4, [1000, 500]),
        ("left", 1, 6, [5, 570]),
        ("right", 4, 7, [1023, 575]),
        ("down", 0, 5, [512, 300]),
    ];
    for (direction, amount, button, [x, y]) in cases {
        rig.reset();
        rig.one(
            "scroll",
            json!({"coordinate": [x, y], "scroll_direction": direction, "scroll_amount": amount}),
        )
        .await
        .assert_ok();
        let at = rig.expected_screen(x, y);
        let expect: Vec<_> = (0..amount)
            .flat_map(|_| [(ButtonPress, button, at), (ButtonRelease, button, at)])
            .collect();
        assert_eq!(
            presses(&rig.events()),
            expect,
            "scroll {direction} {amount}"
        );
    }
    // Without a coordinate: at the cursor.
    rig.one("mouse_move", json!({"coordinate": [640, 320]}))
        .await
        .assert_ok();
    rig.reset();
    rig.one(
        "scroll",
        json!({"scroll_direction": "up", "scroll_amount": 5}),
    )
    .await
    .assert_ok();
    let at = rig.expected_screen(640, 320);
    let expect: Vec<_> = (0..5)
        .flat_map(|_| [(ButtonPress, 4, at), (ButtonRelease, 4, at)])
        .collect();
    assert_eq!(presses(&rig.events()), expect);
}

#[tokio::test]
async fn left_click_drag_presses_at_the_start_moves_and_releases_at_the_end() {
    let mut rig = Rig::new(1920, 1080);
    rig.one(
        "left_click_drag",
        json!({"start_coordinate": [100, 120], "coordinate": [700, 400]}),
    )
    .await
    .assert_ok();
    let events = rig.events();
    let (start, end) = (rig.expected_screen(100, 120), rig.expected_screen(700, 400));
    assert_eq!(
        presses(&events),
        vec![(ButtonPress, 1, start), (ButtonRelease, 1, end)]
    );
    let press = index_of(&events, |e| e.kind == ButtonPress)[0];
    let release = index_of(&events, |e| e.kind == ButtonRelease)[0];
    let moves = &events[press + 1..release];
    assert!(
        moves.len() >= 2,
        "motion between press and release: {moves:?}"
    );
    assert!(
        moves
            .iter()
            .all(|e| e.kind == Motion && e.state & BUTTON1_MASK != 0)
    );
    assert_eq!(moves[moves.len() - 1].position(), end);
    // The path goes from start to end without detours.
    for pair in moves.windows(2) {
        assert!(pair[0].x <= pair[1].x && pair[0].y <= pair[1].y, "{pair:?}");
    }
    assert!(moves[0].x >= start.0 && moves[0].y >= start.1);
    assert!(events[release].state & BUTTON1_MASK != 0);
}

#[tokio::test]
async fn left_mouse_down_and_up_hold_the_button_across_turns() {
    let mut rig = Rig::new(1280, 800);
    let (a, b) = ([200u32, 150u32], [800u32, 500u32]);
    let blocks = vec![
        rig.call("mouse_move", json!({"coordinate": a})),
        rig.call("left_mouse_down", json!({})),
    ];
    for answer in rig.turn(blocks).await {
        answer.assert_ok();
    }
    rig.one("mouse_move", json!({"coordinate": b}))
        .await
        .assert_ok();
    rig.one("left_mouse_up", json!({})).await.assert_ok();
    let answer = rig.one("cursor_position", json!({})).await;
    assert_eq!(answer.text(), format!("X={}, Y={}", b[0], b[1]));

    let events = rig.events();
    let (at_a, at_b) = (
        rig.expected_screen(a[0], a[1]),
        rig.expected_screen(b[0], b[1]),
    );
    assert_eq!(
        presses(&events),
        vec![(ButtonPress, 1, at_a), (ButtonRelease, 1, at_b)]
    );
    let press = index_of(&events, |e| e.kind == ButtonPress)[0];
    let moves: Vec<&InputEvent> = events[press..]
        .iter()
        .filter(|e| e.kind == Motion)
        .collect();
    assert_eq!(moves.len(), 1, "{events:?}");
    assert_eq!(moves[0].position(), at_b);
    assert!(
        moves[0].state & BUTTON1_MASK != 0,
        "moved with the button held"
    );
}

#[tokio::test]
async fn cursor_position_answers_in_screenshot_space() {
    let mut rig = Rig::new(1000, 1700);
    let shot = rig.shot();
    let spots = [
        (0, 0),
        (shot.width - 1, shot.height - 1),
        (shot.width / 2, shot.height / 3),
        (17, 999),
    ];
    for (x, y) in spots {
        rig.reset();
        rig.one("mouse_move", json!({"coordinate": [x, y]}))
            .await
            .assert_ok();
        let answer = rig.one("cursor_position", json!({})).await;
        assert!(!answer.is_error());
        assert_eq!(
            answer.json["content"],
            json!([{"type": "text", "text": format!("X={x}, Y={y}")}])
        );
        let events = rig.events();
        let last = events.last().expect("a motion event");
        assert_eq!(
            (last.kind, last.position()),
            (Motion, rig.expected_screen(x, y))
        );
    }
    // A click with a coordinate moves the cursor there too.
    rig.one("right_click", json!({"coordinate": [321, 654]}))
        .await
        .assert_ok();
    let answer = rig.one("cursor_position", json!({})).await;
    assert_eq!(answer.text(), "X=321, Y=654");
}

/// The device-pixel-ratio setting: with a ratio of 2, the screen is half the capture in each
/// direction, so a screenshot pixel maps to half its coordinates on screen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_pixel_ratio_setting_maps_coordinates_to_logical_pixels() {
    let config = hands_toolset::computer::ComputerConfig {
        device_pixel_ratio: Some(2.0),
        ..crate::support::config()
    };
    let mut rig = Rig::with(1280, 800, config, &hands_testkit::RecorderConfig::default());
    // The support config caps screenshots at 1024 px: the shot is 1024x640, the screen 640x400.
    assert_eq!(
        rig.shot(),
        hands_core::geometry::Size::new(1024, 640).unwrap()
    );
    rig.one("left_click", json!({"coordinate": [800, 480]}))
        .await
        .assert_ok();
    let presses: Vec<(i32, i32)> = rig
        .events()
        .iter()
        .filter(|e| e.is_button_press(1))
        .map(|e| e.position())
        .collect();
    assert_eq!(presses, vec![(500, 300)]);
}
