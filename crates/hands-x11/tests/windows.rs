//! What a person's wheel reads from a real Xvfb without a window manager: the mapped top-level
//! windows and their titles, a window closed and another opened (the server may give the new one
//! the old one's id), the person's input counted, frames as JPEG, a point off the screen refused.

use std::time::Duration;

use hands_core::geometry::Size;
use hands_x11::wheel::{DesktopWheel, OpenedWindow};
use hands_x11::{X11Desktop, XvfbConfig};

/// Waits until a top-level window titled `title` is listed.
async fn wait_for_title(desktop: &X11Desktop, title: &str) {
    for _ in 0..300 {
        let now = desktop.windows().await.expect("reading the windows");
        if now.windows.iter().any(|w| w.title == title) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no window titled {title:?} appeared");
}

#[tokio::test]
async fn a_window_closed_and_another_opened_are_told_apart_without_a_window_manager() {
    let desktop = X11Desktop::spawn(&XvfbConfig::new(Size::new(640, 400).expect("size")))
        .expect("spawning Xvfb");
    let wheel = DesktopWheel::new(desktop.another_connection().expect("a second connection"));
    let first = desktop
        .spawn_client("xmessage", &["-title", "First", "one"])
        .expect("starting xmessage");
    wait_for_title(&desktop, "First").await;

    let watching = wheel.watch().await.expect("watching");
    let jpeg = wheel.frame().await.expect("a frame");
    assert_eq!(&jpeg[..2], &[0xff, 0xd8], "a JPEG");
    wheel.click(5.0, 5.0).await.expect("a click on the screen");
    assert!(
        wheel.click(640.0, 10.0).await.is_err(),
        "a point off the 640x400 screen"
    );
    wheel.type_text("abc").await.expect("typing");
    wheel.press("Return").await.expect("a key");
    drop(first);
    let _second = desktop
        .spawn_client("xmessage", &["-title", "Second", "two"])
        .expect("starting xmessage");
    wait_for_title(&desktop, "Second").await;
    // Xvfb gives the second xmessage the first one's window id (seen every time here): only
    // the window's creation tells them apart.
    let observed = watching.finish().await;

    assert_eq!(
        observed.opened,
        vec![OpenedWindow {
            title: "Second".into(),
            open: true,
        }]
    );
    assert_eq!(observed.closed, vec!["First".to_owned()]);
    assert_eq!(
        observed.inputs.clicks, 1,
        "the refused click is not counted"
    );
    assert_eq!(observed.inputs.keys, vec!["Return".to_owned()]);
    assert_eq!(observed.inputs.chars, 3);
    assert!(!observed.clipboard_changed);
}
