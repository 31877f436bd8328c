//! Tier 3: settling without waiting on animations — a page whose only changes are animations (CSS, canvas, an element moved by script every frame, an SVG attribute tweened by script) settles once its DOM and network are quiet, while a page that keeps changing its content still waits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use hands_core::browser::Browser;

/// Every kind of animation at once, none of which ever stops.
pub const ANIMATED: &str = r#"<!doctype html><title>Animated</title>
<style>@keyframes spin { to { transform: rotate(360deg); } }
#spinner { width: 40px; height: 40px; background: #36c; animation: spin 1s linear infinite; }
#mover { position: absolute; top: 120px; width: 30px; height: 30px; background: #c33; }</style>
<h1>Dashboard</h1><div id=spinner></div><canvas id=c width=200 height=80></canvas>
<div id=mover></div><svg width=200 height=60><circle id=dot cx=10 cy=30 r=8 fill=#3c3></circle></svg>
<button onclick="document.getElementById('out').textContent = 'Saved'">Save</button><p id=out></p>
<script>
const ctx = document.getElementById('c').getContext('2d');
const mover = document.getElementById('mover');
const dot = document.getElementById('dot');
let t = 0;
(function frame() {
  t += 1;
  ctx.clearRect(0, 0, 200, 80); ctx.fillRect(t % 200, 20, 20, 20);
  mover.style.left = (t % 300) + 'px';
  mover.style.opacity = String(0.5 + 0.5 * Math.sin(t / 10));
  dot.setAttribute('cx', String(10 + (t % 180)));
  requestAnimationFrame(frame);
})();
</script>"#;

/// Navigations and clicks on a page that animates forever settle by quiet, not by the cap (a
/// navigation that hit the cap says "still loading").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn animations_do_not_hold_a_settle() {
    let a = Server::start().await;
    a.html("/animated", ANIMATED);
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
