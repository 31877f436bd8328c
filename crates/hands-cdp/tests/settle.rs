//! Tier 3: settling without waiting on animations — a page whose only changes are animations (CSS, canvas, an element moved by script every frame, an SVG attribute tweened by script) settles once its DOM and network are quiet, while a page that keeps changing its content still waits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use hands_core::browser::Browser;

/// Navigations and clicks on a page that animates forever settle by quiet, not by the cap (a
/// navigation that hit the cap says "still loading").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn animations_do_not_hold_a_settle() {
    let a = Server::start().await;
    a.html("/animated", ANIMATED_PAGE);
    let mut config = config();
    config.settle.cap = Duration::from_secs(5);
    config.load_cap = Duration::from_secs(5);
    let mut browser = launch(config).await;
    let c = cancel();
    for _ in 0..2 {
        let text = browser
            .navigate(&a.page_url("/animated"), None, &c)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(text, "Navigated.", "the settle waited for the cap");
    }
    // The animation really runs: its element keeps moving.
    let left = eval(&browser, "document.getElementById('mover').style.left").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_ne!(
        eval(&browser, "document.getElementById('mover').style.left").await,
        left
    );
}

/// Content that keeps changing (text streaming in) is not an animation: the settle waits for it
/// until the cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_content_still_holds_a_settle() {
    let a = Server::start().await;
    a.html(
        "/stream",
        "<title>Stream</title><p id=s></p><script>let n = 0; \
         setInterval(() => { document.getElementById('s').textContent += 'word' + (n++) + ' '; }, 20);</script>",
    );
    let mut config = config();
    config.settle.cap = Duration::from_millis(800);
    config.load_cap = Duration::from_millis(800);
    let mut browser = launch(config).await;
    let c = cancel();
    let text = browser
        .navigate(&a.page_url("/stream"), None, &c)
        .await
        .unwrap()
        .unwrap();
    assert!(text.contains("still loading"), "{text}");
}
