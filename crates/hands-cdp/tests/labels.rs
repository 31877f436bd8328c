//! Tier 3: a read names labelled controls from one label index per walk (not `el.labels`, which is quadratic), and the names it gives are exactly the ones `el.labels` gives, so the refs it issues stay actionable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use hands_core::browser::args::ReadFilter;
use hands_core::browser::driver::ReadResult;
use hands_core::browser::{Browser, BrowserRead};

/// Two labels on one field (one by `for`, one wrapping it), a label in a shadow root, a
/// document label whose `for` names an id that exists only inside that shadow root (it labels
/// nothing), and a control added after the first read.
const PAGE: &str = r#"<!doctype html><title>Labels</title>
<label for=a>First</label><p>between</p><label>Second <input id=a></label>
<label for=b>Document label</label>
<div id=host></div>
<label for=late>Late</label>
<script>
  const root = host.attachShadow({mode: 'open'});
  root.innerHTML = '<label for=b>Shadow name</label><input id=b>';
</script>"#;

fn structured(read: Option<ReadResult>) -> BrowserRead {
    match read {
        Some(ReadResult::Structured(r)) => r,
        other => panic!("no structured read: {other:?}"),
    }
}

/// The page's own `el.labels` text of a control, as the read would join it.
async fn page_labels(browser: &hands_cdp::CdpBrowser, control: &str) -> String {
    let expr =
        format!("Array.from(({control}).labels).map(l => l.firstChild.data.trim()).join(' ')");
    eval(browser, &expr).await.as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walk_labels_match_el_labels_and_refs_stay_actionable() {
    let (_server, mut browser) = open_page(PAGE).await;
    let c = cancel();

    let read = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    let labels: Vec<&str> = read.elements().iter().map(|e| e.label()).collect();
    assert_eq!(labels, ["First Second", "Shadow name"], "{read:#?}");
    assert_eq!(
        page_labels(&browser, "document.getElementById('a')").await,
        "First Second"
    );
    assert_eq!(
        page_labels(&browser, "host.shadowRoot.getElementById('b')").await,
        "Shadow name"
    );

    // The action re-checks each ref through `el.labels`: a name that differed would be refused.
    let refs: Vec<_> = read
        .elements()
        .iter()
        .map(|e| e.reference().clone())
        .collect();
    browser
        .type_text("one", Some(&refs[0]), None, &c)
        .await
        .unwrap();
    browser
        .type_text("two", Some(&refs[1]), None, &c)
        .await
        .unwrap();
    assert_eq!(
        eval(
            &browser,
            "document.getElementById('a').value + '|' + host.shadowRoot.getElementById('b').value"
        )
        .await,
        "one|two"
    );

    // A control added later is labelled by a label that was already there: each walk builds its
    // own index.
    eval(
        &browser,
        "document.body.insertAdjacentHTML('beforeend', '<input id=late>'); true",
    )
    .await;
    let read = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    let labels: Vec<&str> = read.elements().iter().map(|e| e.label()).collect();
    assert_eq!(labels, ["First Second", "Shadow name", "Late"], "{read:#?}");
}
