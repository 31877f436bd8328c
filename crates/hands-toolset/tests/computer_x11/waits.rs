//! OpenAI's `wait` on a real desktop: calm for its quiet counted from its start, not a settle
//! that answers at once on a screen nothing changed since the last input.
//!
//! Spec: openai-browser-desktop-drivers, "Contrato del controlador de computadora": `wait`,
//! "Solicitud de esperar a que se estabilice el entorno".

use std::time::Instant;

use hands_core::CancellationToken;
use hands_core::geometry::Size;
use hands_toolset::actions::{DesktopAction, DesktopActor, Quiet, ScreenConfig};
use hands_x11::{X11Desktop, XvfbConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_wait_lasts_its_quiet_on_a_screen_that_does_not_change() {
    let size = Size::new(320, 200).expect("a non-empty screen");
    let desktop = X11Desktop::spawn(&XvfbConfig::new(size)).expect("Xvfb starts");
    let screen = ScreenConfig::default();
    let mut actor = DesktopActor::new(desktop, screen);
    let cancel = CancellationToken::new();
    // A screen that nothing changes: a settle answers at once, a wait only after its quiet.
    let started = Instant::now();
    actor
        .run(&DesktopAction::Settle(Quiet::Wait), &cancel)
        .await
        .expect("the wait runs");
    let waited = started.elapsed();
    assert!(waited >= screen.wait.quiet, "waited {waited:?}");
    assert!(
        waited <= screen.wait.cap + screen.wait.quiet,
        "waited {waited:?}"
    );

    // Cancelled, it stops and says so.
    let cancel = CancellationToken::new();
    cancel.cancel();
    let stopped = actor
        .run(&DesktopAction::Settle(Quiet::Wait), &cancel)
        .await;
    assert!(stopped.is_err(), "{stopped:?}");
}
