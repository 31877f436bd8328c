//! Tier 3: targets without text are named by what a person sees (MiniWoB++'s click-color,
//! click-shape and click-pie kinds, image buttons, icon-font buttons): `title` / `aria-*` first,
//! then an SVG shape and its fill, an image's file name, an icon font's class, a palette
//! swatch's colour — never the bare kind — and a click on the ref so named reaches that target.
//! A zero-size control the keyboard reaches (a skip link) stays in a full read, marked off-screen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use hands_core::browser::args::ReadFilter;
use hands_core::browser::driver::ReadResult;
use hands_core::browser::read::OFF_SCREEN_MARK;
use hands_core::browser::{Browser, BrowserRead};

const PAGE: &str = r##"<!doctype html><title>Unnamed</title>
<style>.color{width:40px;height:40px;display:inline-block;margin:4px;border:1px solid black}</style>
<p id=query>Click on the blue colour.</p>
<div id=area><div class=color style="background:red"></div><div class=color
style="background:rgb(0,0,230)"></div><div class=color style="background:yellow"></div><div
class=color style="background:#008000"></div><div class=color style="background:pink"
title="Pink swatch"></div></div>
<p>Shapes</p>
<svg width=300 height=60><circle id=c cx=30 cy=30 r=20 fill=red></circle><rect id=r x=70
y=10 width=40 height=40 fill=blue></rect><polygon id=t points="150,10 170,50 130,50"
fill=green></polygon><ellipse id=o cx=230 cy=30 rx=30 ry=15 style="fill:orange"
aria-label="Sun"></ellipse></svg>
<p>Pie</p>
<svg width=120 height=120><path id=p1 d="M60,60 L60,0 A60,60 0 0,1 120,60 Z" fill=purple></path><path
id=p2 d="M60,60 L120,60 A60,60 0 0,1 60,120 Z" fill=teal></path></svg>
<p>Tools</p>
<img id=img src="/icons/trash-can@2x.png" width=24 height=24>
<button id=gear><i class="fa fa-gear"></i></button>
<a href="#top" id=skip role=button tabindex=0 aria-label="Custom action"
style="position:absolute;width:0;height:0;overflow:hidden;padding:0;border:0"></a>
<div role=button aria-label="Not a tab stop" style="width:0;height:0;overflow:hidden"></div>
<script>
window.clicked = [];
for (const el of document.querySelectorAll('.color, circle, rect, polygon, ellipse, path, img, #gear'))
  el.addEventListener('click', () => clicked.push(el.id || el.style.background));
for (const el of document.querySelectorAll('.color, circle, rect, polygon, ellipse, path, img'))
  el.style.cursor = 'pointer';
</script>"##;

fn structured(read: Option<ReadResult>) -> BrowserRead {
    match read {
        Some(ReadResult::Structured(r)) => r,
        other => panic!("no structured read: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn targets_without_text_are_named_by_what_they_look_like() {
    let (_server, mut browser) = open_page(PAGE).await;
    let c = cancel();
    let read = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    let labels: Vec<&str> = read.elements().iter().map(|e| e.label()).collect();
    println!("{}", read.to_compact());
    assert_eq!(
        labels,
        [
            "red box",
            "blue box",
            "yellow box",
            "green box",
            "Pink swatch",
            "red circle",
            "blue square",
            "green triangle",
            "Sun",
            "purple shape",
            "teal shape",
            "trash can",
            "gear",
            "Custom action",
        ],
        "{read:#?}"
    );
    let by = |label: &str| {
        read.elements()
            .iter()
            .find(|e| e.label() == label)
            .unwrap()
            .reference()
            .clone()
    };
    for (label, id) in [
        ("blue box", "rgb(0, 0, 230)"),
        ("blue square", "r"),
        ("teal shape", "p2"),
        ("trash can", "img"),
        ("gear", "gear"),
    ] {
        eval(&browser, "clicked.length = 0").await;
        browser.click(&by(label), None, &c).await.unwrap();
        assert_eq!(eval(&browser, "clicked.join()").await, id, "{label}");
    }

    // The zero-size tab stop: in the full read, marked off-screen; not among the controls a
    // pointer can use.
    let skip = read
        .elements()
        .iter()
        .find(|e| e.label() == "Custom action")
        .unwrap();
    assert!(skip.is_off_screen());
    let line = format!(
        "[{}] button Custom action {OFF_SCREEN_MARK}",
        skip.reference()
    );
    assert!(read.to_compact().contains(&line), "{}", read.to_compact());
    assert_eq!(
        read.elements().iter().filter(|e| e.is_off_screen()).count(),
        1
    );
    let controls = structured(
        browser
            .read_page(ReadFilter::Interactive, None, &c)
            .await
            .unwrap(),
    );
    assert!(
        controls
            .elements()
            .iter()
            .all(|e| e.label() != "Custom action")
    );
    assert_eq!(controls.elements().len(), read.elements().len() - 1);
}
