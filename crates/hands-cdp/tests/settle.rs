//! Tier 3: settling without waiting on animations — a page whose only changes are animations (CSS, canvas, an element moved by script every frame, an SVG attribute tweened by script) settles once its DOM and network are quiet, while a page that keeps changing its content still waits — and an action answering only once what it caused is in the page (a render after a slow request, a second render a task later, a navigation).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use std::collections::HashMap;

use common::*;
use hands_core::browser::driver::ReadResult;
use hands_core::browser::read::Ref;
use hands_core::browser::{Browser, ReadFilter};
use serde_json::json;

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

/// A list rendered anew after a slow save, a second render a task after the first, a change 8 ms
/// after the first, and a link to another page: the answers of `click`, `set_checked`, `type` and
/// `select_option` come once what their input did at once shows (the requests it caused and the
/// renders after them are left to the tab's next call), and a read right after each sees all of
/// it.
const AFTER_PAGE: &str = r#"<!doctype html><title>After</title>
<p id="status">idle</p>
<button onclick="save()">Save</button>
<button onclick="twice()">Twice</button>
<button onclick="late()">Late</button>
<button onclick="">Nothing</button>
<label>Name <input id="name" oninput="later('typed ' + this.value)"></label>
<label>Size <select id="size" onchange="later('size ' + this.value)"><option>S</option><option>M</option></select></label>
<div id="list"></div>
<div id="copies"><label><input type="checkbox"> Done: copy</label></div>
<a href="/next">Next page</a>
<script>
let done = false;
function render() {
  document.getElementById('list').innerHTML =
    `<label><input type="checkbox" ${done ? 'checked' : ''}> Done: report</label>`;
}
function later(text) {
  fetch('/slow').then(r => r.text()).then(() => { document.getElementById('status').textContent = text; });
}
function save() { later('saved'); }
function late() {
  document.getElementById('status').textContent = 'early';
  setTimeout(() => { document.getElementById('status').textContent = 'late'; }, 8);
}
function twice() {
  document.getElementById('status').textContent = 'first';
  setTimeout(() => { document.getElementById('status').textContent = 'second'; }, 0);
}
document.getElementById('list').addEventListener('change', e => {
  const on = e.target.checked;
  fetch('/slow').then(() => { done = on; render(); });
});
document.getElementById('copies').addEventListener('change', e => {
  // At once, the control is rendered twice: no one can say which is the one clicked.
  const box = '<label><input type="checkbox" checked> Done: copy</label>';
  document.getElementById('copies').innerHTML = box + box;
});
render();
</script>"#;

fn labelled(read: Option<ReadResult>) -> HashMap<String, Ref> {
    match read {
        Some(ReadResult::Structured(r)) => r
            .elements()
            .iter()
            .map(|e| (e.label().to_owned(), e.reference().clone()))
            .collect(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_answers_once_its_effect_is_in_the_page() {
    let a = Server::start().await;
    a.html("/", AFTER_PAGE);
    a.html("/next", "<title>Next</title><p>the next page</p>");
    a.route(
        "/slow",
        Route::Delayed(Duration::from_millis(150), "ok".into()),
    );
    let mut browser = launch(config()).await;
    let c = cancel();
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();
    let status = "document.getElementById('status').textContent";
    let r = labelled(browser.read_page(ReadFilter::All, None, &c).await.unwrap());

    // The render that follows a slow request is in the page when the click answers.
    browser.click(&r["Save"], None, &c).await.unwrap();
    assert_eq!(eval(&browser, status).await, json!("saved"));
    // A second render a task after the first: the answer waits for it.
    browser.click(&r["Twice"], None, &c).await.unwrap();
    assert_eq!(eval(&browser, status).await, json!("second"));
    // A change 8 ms after the first, with nothing on the network between: the click may answer
    // once the first shows, and then the tab's next call waits for the page's quiet, so a read
    // right after it sees the second.
    browser.click(&r["Late"], None, &c).await.unwrap();
    match browser.read_page(ReadFilter::All, None, &c).await.unwrap() {
        Some(ReadResult::Structured(read)) => {
            assert!(read.text().contains("late"), "{}", read.text());
        }
        other => panic!("{other:?}"),
    }
    // A click that changes nothing answers (and changes nothing).
    browser.click(&r["Nothing"], None, &c).await.unwrap();
    assert_eq!(eval(&browser, status).await, json!("late"));
    // Typing and selecting whose page answers after a request.
    browser
        .type_text("Ada", Some(&r["Name"]), None, &c)
        .await
        .unwrap();
    assert_eq!(eval(&browser, status).await, json!("typed Ada"));
    browser
        .select_option(&r["Size"], &["M".to_owned()], None, &c)
        .await
        .unwrap();
    assert_eq!(eval(&browser, status).await, json!("size M"));

    // A checkbox the page renders anew after a slow save: checked when the answer comes, and the
    // control that replaced it is checked in a read right after.
    let said = browser
        .set_checked(&r["Done: report"], true, None, &c)
        .await
        .unwrap();
    assert_eq!(said.as_deref(), Some("Checked."));
    match browser.read_page(ReadFilter::All, None, &c).await.unwrap() {
        Some(ReadResult::Structured(read)) => {
            let report = read
                .elements()
                .iter()
                .find(|e| e.label() == "Done: report")
                .expect("the re-rendered checkbox");
            assert_eq!(report.checked(), Some(true), "{}", read.text());
        }
        other => panic!("{other:?}"),
    }
    // Rendered twice at once instead: the answer says it clicked and cannot verify.
    let said = browser
        .set_checked(&r["Done: copy"], true, None, &c)
        .await
        .unwrap();
    assert_eq!(said.as_deref(), Some(hands_cdp::SET_CHECKED_REPLACED));
    assert_eq!(
        eval(&browser, "document.querySelector('#list input').checked").await,
        json!(true)
    );

    // A link to another page: the new document has loaded when the click answers.
    browser.click(&r["Next page"], None, &c).await.unwrap();
    assert_eq!(eval(&browser, "document.title").await, json!("Next"));
}
