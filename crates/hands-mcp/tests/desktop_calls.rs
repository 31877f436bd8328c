//! The desktop surface reads a call before anyone is asked about it: on a real Xvfb desktop, a
//! call that cannot run is refused by `check` with what is wrong (and so never reaches consent),
//! a valid one passes `check` and runs.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use hands_core::CancellationToken;
use hands_core::geometry::Size;
use hands_core::image::ImageFormat;
use hands_mcp::budget::Budget;
use hands_mcp::desktop::DesktopSurface;
use hands_toolset::computer::members::Member;
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::{Map, Value, json};

fn arguments(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

#[tokio::test]
async fn a_call_that_cannot_run_is_refused_before_consent_and_a_valid_one_runs() {
    let desktop = X11Desktop::spawn(&XvfbConfig::new(Size::new(800, 600).unwrap())).unwrap();
    let mut surface = DesktopSurface::new(desktop, Budget::default(), ImageFormat::Png).unwrap();
    // Outside the screenshot, a missing coordinate, an unknown key: refused with why.
    for (member, input, says) in [
        (
            Member::MouseMove,
            json!({"coordinate": [5000, 10]}),
            "coordinate",
        ),
        (Member::MouseMove, json!({}), "coordinate"),
        (Member::Key, json!({"text": "ctrl+notakey"}), "notakey"),
    ] {
        let why = surface
            .check(member, &arguments(input.clone()))
            .unwrap_err();
        assert!(why.starts_with("Error: "), "{why}");
        assert!(why.contains(says), "{member} {input}: {why}");
    }
    // The `screenshot` option is the surface's own and does not make a call invalid.
    let valid = arguments(json!({"coordinate": [40, 30], "screenshot": false}));
    surface.check(Member::MouseMove, &valid).unwrap();
    let cancel = CancellationToken::new();
    let answer = surface.call(Member::MouseMove, &valid, &cancel).await;
    assert!(!answer.is_error, "{:?}", answer.content);
    assert!(answer.fault.is_none());
}
