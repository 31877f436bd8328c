//! Tier 3: refs stay the same from read to read of one document (issue 21, item 3), so a read
//! can be answered with what changed: an element keeps its ref under a new name (an action on
//! the ref before the read that shows the new name is refused), and an element that replaced
//! one a read showed (a list rendered anew) inherits its ref when it is the only one of its
//! kind and name that is new and the one it replaced the only one gone; look-alikes never do.
//! A list whose handler serves the controls in it gets no ref (its name would be theirs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;

use common::*;
use hands_core::browser::args::ReadFilter;
use hands_core::browser::driver::ReadResult;
use hands_core::browser::read::Ref;
use hands_core::browser::{Browser, BrowserRead};

const PAGE: &str = r#"<!doctype html><title>List</title>
<button id=follow onclick="this.textContent = this.textContent === 'Follow' ? 'Unfollow' : 'Follow'">Follow</button>
<div id=app></div>
<script>
let items = ['Milk', 'Bread', 'Eggs'];
window.removed = [];
function render() {
  app.innerHTML = items.map(t =>
    `<p><button onclick="removed.push('${t}')">Remove ${t}</button><button>Remove</button></p>`).join('');
}
render();
// A handler on the list for its buttons: the list is where it listens, not a target.
app.addEventListener('click', () => {});
</script>"#;

fn structured(read: Option<ReadResult>) -> BrowserRead {
    match read {
        Some(ReadResult::Structured(r)) => r,
        other => panic!("no structured read: {other:?}"),
    }
}

/// Label → refs, in page order.
fn refs(read: &BrowserRead) -> HashMap<String, Vec<Ref>> {
    let mut out: HashMap<String, Vec<Ref>> = HashMap::new();
    for e in read.elements() {
        out.entry(e.label().to_owned())
            .or_default()
            .push(e.reference().clone());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refs_survive_a_new_name_and_a_certain_re_render_only() {
    let (_server, mut browser) = open_page(PAGE).await;
    let c = cancel();
    let first = refs(&structured(
        browser.read_page(ReadFilter::All, None, &c).await.unwrap(),
    ));
    assert_eq!(first["Remove"].len(), 3, "{first:?}");
    assert_eq!(first.len(), 5, "the list got a ref of its own: {first:?}");

    // A new name keeps the ref, once a read has shown it.
    let follow = first["Follow"][0].clone();
    browser.click(&follow, None, &c).await.unwrap();
    let refused = browser.click(&follow, None, &c).await;
    assert!(refused.is_err(), "{refused:?}");
    let second = refs(&structured(
        browser.read_page(ReadFilter::All, None, &c).await.unwrap(),
    ));
    assert_eq!(second["Unfollow"], std::slice::from_ref(&follow));
    browser.click(&follow, None, &c).await.unwrap();
    assert_eq!(
        eval(&browser, "document.getElementById('follow').textContent").await,
        "Follow"
    );

    // The list rendered anew, one item gone: the unique buttons keep their refs, the
    // look-alikes get new ones, and the inherited refs act on the new elements.
    eval(&browser, "items = ['Milk', 'Eggs']; render(); true").await;
    let third = refs(&structured(
        browser.read_page(ReadFilter::All, None, &c).await.unwrap(),
    ));
    assert_eq!(third["Remove Milk"], first["Remove Milk"]);
    assert_eq!(third["Remove Eggs"], first["Remove Eggs"]);
    assert!(!third.contains_key("Remove Bread"));
    assert_eq!(third["Remove"].len(), 2);
    for r in &third["Remove"] {
        assert!(
            !first["Remove"].contains(r),
            "{r} was inherited by a look-alike"
        );
    }
    browser
        .click(&third["Remove Eggs"][0], None, &c)
        .await
        .unwrap();
    assert_eq!(eval(&browser, "removed.join()").await, "Eggs");

    // Two new elements of one name for one gone: neither inherits.
    eval(&browser, "items = ['Milk', 'Milk', 'Eggs']; render(); true").await;
    let fourth = refs(&structured(
        browser.read_page(ReadFilter::All, None, &c).await.unwrap(),
    ));
    assert_eq!(fourth["Remove Milk"].len(), 2);
    assert!(
        fourth["Remove Milk"]
            .iter()
            .all(|r| !first["Remove Milk"].contains(r)),
        "{fourth:?}"
    );
    assert_eq!(fourth["Remove Eggs"], first["Remove Eggs"]);
}
