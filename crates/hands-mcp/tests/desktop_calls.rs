//! The desktop surface reads a call before anyone is asked about it: on a real Xvfb desktop, a
//! call that cannot run is refused by `prepare` with what is wrong (and so never reaches
//! consent), a valid one is read once into the action the person is asked about, and that action
//! runs.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use hands_core::CancellationToken;
use hands_core::geometry::Size;
use hands_core::image::ImageFormat;
use hands_mcp::budget::Budget;
use hands_mcp::desktop::{DesktopSurface, Then};
use hands_toolset::actions::DesktopAction;
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
            .prepare(member, &arguments(input.clone()))
            .unwrap_err();
        assert!(why.starts_with("Error: "), "{why}");
        assert!(why.contains(says), "{member} {input}: {why}");
    }
    // The surface's own `screenshot` option is read before consent too.
    let why = surface
        .prepare(
            Member::MouseMove,
            &arguments(json!({"coordinate": [40, 30], "screenshot": "yes"})),
        )
        .unwrap_err();
    assert!(why.contains("true or false"), "{why}");
    // A valid call is read once: the person sees the action that runs.
    let valid = arguments(json!({"coordinate": [40, 30], "screenshot": false}));
    let request = surface.prepare(Member::MouseMove, &valid).unwrap();
    assert_eq!(request.then, Then::Nothing);
    let DesktopAction::Move { to, .. } = &request.action else {
        panic!("{:?}", request.action)
    };
    assert_eq!((to.x(), to.y()), (40, 30));
    assert_eq!(request.action.to_string(), "move the pointer to (40, 30)");
    let cancel = CancellationToken::new();
    let answer = surface.call(&request, &cancel).await;
    assert!(!answer.is_error, "{:?}", answer.content);
    assert!(answer.fault.is_none());
}
