//! Tier 3: reads that see everything a person can operate, on a corpus of pages made operable by JavaScript (jQuery- and d3-style handlers, delegation, SVG, clickable rows and cells, custom sliders, icon buttons, href-less links, checkboxes beside their text): every target gets a ref and a click on it reaches the page's handler; nothing decorative or hidden from people gets one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

mod common;

use common::*;
use hands_core::browser::args::ReadFilter;
use hands_core::browser::driver::ReadResult;
use hands_core::browser::read::Kind;
use hands_core::browser::{Browser, BrowserRead};

/// Every page records what its handlers saw in `window.hits`.
const RECORDER: &str = "<script>window.hits = []; window.hit = (id) => hits.push(id);</script>";

/// One page of the corpus: its file, and each target as (the name its ref must have, what its
/// handler records when clicked, the kind when the test pins one).
struct Page {
    file: &'static str,
    html: &'static str,
    targets: &'static [(&'static str, &'static str, Option<Kind>)],
}

const CORPUS: &[Page] = &[
    Page {
        file: "jquery.html",
        html: include_str!("corpus/jquery.html"),
        targets: &[
            ("Home", "item-Home", None),
            ("Products", "item-Products", None),
            ("Contact", "item-Contact", None),
            ("Blue kettle", "card-a", Some(Kind::Clickable)),
            ("Red toaster", "card-b", None),
            ("summer", "tag-summer", None),
            ("sale", "tag-sale", None),
        ],
    },
    Page {
        file: "d3.html",
        html: include_str!("corpus/d3.html"),
        targets: &[
            ("East region", "bar-East", Some(Kind::Clickable)),
            ("West region", "bar-West", None),
            ("Central region", "bar-Central", None),
            ("North hub", "dot-north", None),
            ("South hub", "dot-south", None),
        ],
    },
    Page {
        file: "table.html",
        html: include_str!("corpus/table.html"),
        targets: &[
            ("Invoice 1041 $20", "row-1", None),
            ("Invoice 1041", "cb-1", Some(Kind::Checkbox)),
            ("Invoice 1042 $35", "row-2", None),
            ("Invoice 1042", "cb-2", None),
            ("Mon 9:00", "slot-mon-9", None),
            ("Tue 9:00", "slot-tue-9", None),
        ],
    },
    Page {
        file: "widgets.html",
        html: include_str!("corpus/widgets.html"),
        targets: &[
            ("Volume", "volume-track", None),
            ("Volume", "volume-handle", None),
            ("Brightness", "brightness", Some(Kind::Slider)),
            ("Close", "close", Some(Kind::Button)),
            ("trash", "trash", None),
            ("Add to favourites", "fav", Some(Kind::Clickable)),
            ("Show more", "more", Some(Kind::Link)),
            ("Help centre", "help", Some(Kind::Link)),
            ("Receive the newsletter", "news", Some(Kind::Checkbox)),
            ("I accept the terms", "terms", None),
            ("Join the beta", "beta", None),
            ("Shipping options", "acc-shipping", None),
            ("Shipping options", "acc-shipping", Some(Kind::Button)),
            ("Ok", "ok", None),
            ("previous", "prev", None),
            ("Keyboard card", "focus-card", None),
        ],
    },
];

fn structured(read: Option<ReadResult>) -> BrowserRead {
    match read {
        Some(ReadResult::Structured(r)) => r,
        other => panic!("no structured read: {other:?}"),
    }
}

/// On every page: each target has a ref with its name (matched in page order) and a click on it
/// reaches its handler; there are no other refs (nothing decorative, hidden, covered, inert or
/// of zero size); labels never run together in the text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_target_gets_a_ref_and_nothing_else_does() {
    let server = Server::start().await;
    for page in CORPUS {
        server.html(
            &format!("/{}", page.file),
            &format!("{RECORDER}{}", page.html),
        );
    }
    let mut browser = launch(config()).await;
    let c = cancel();
    let (mut n_targets, mut n_found, mut n_extra) = (0, 0, 0);
    for page in CORPUS {
        browser
            .navigate(&server.page_url(&format!("/{}", page.file)), None, &c)
            .await
            .unwrap();
        let read = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
        let mut used = vec![false; read.elements().len()];
        for (name, hit, kind) in page.targets {
            n_targets += 1;
            let found = read
                .elements()
                .iter()
                .enumerate()
                .find(|(i, e)| !used[*i] && e.label() == *name);
            let Some((i, element)) = found else {
                panic!(
                    "{}: no ref named {name:?} in\n{}",
                    page.file,
                    read.to_compact()
                );
            };
            used[i] = true;
            n_found += 1;
            if let Some(kind) = kind {
                assert_eq!(element.kind(), *kind, "{}: {name}", page.file);
            }
            eval(&browser, "window.hits = [], 1").await;
            browser.click(element.reference(), None, &c).await.unwrap();
            let hits = eval(&browser, "hits").await;
            assert!(
                hits.as_array().unwrap().iter().any(|h| h == hit),
                "{}: a click on {name:?} reached {hits} instead of {hit}",
                page.file
            );
        }
        let extra: Vec<String> = read
            .elements()
            .iter()
            .zip(&used)
            .filter(|(_, u)| !**u)
            .map(|(e, _)| format!("{} {:?}", e.kind(), e.label()))
            .collect();
        n_extra += extra.len();
        assert!(
            extra.is_empty(),
            "{}: refs for what is not a target: {extra:?}\n{}",
            page.file,
            read.to_compact()
        );
        assert!(!read.text().contains("Okprevious"), "{}", read.text());
    }
    println!(
        "corpus: {n_found}/{n_targets} targets with a ref, {n_extra} refs that are not targets"
    );
}
