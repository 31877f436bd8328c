//! Tier 3: every acting member against real Chromium, asserting what the page's own listeners recorded (events, values, coordinates, modifiers), not what the driver returned.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::*;
use hands_core::browser::args::{
    CssPoint, CssRegion, DiagnosticsSource, KeyPress, PointerButton, ReadFilter, WaitText,
};
use hands_core::browser::driver::ReadResult;
use hands_core::browser::read::Ref;
use hands_core::browser::{Browser, DriverError};
use hands_core::image::MediaType;
use hands_core::input::{Key, ModifierSet, ScrollDirection};
use serde_json::{Value, json};

const PAGE: &str = r#"<!doctype html><title>Input</title>
<style>body { margin: 0; } #pad { position: fixed; left: 600px; top: 100px; width: 300px; height: 300px; background: #0a0; }</style>
<input id=t aria-label="Text">
<textarea id=area aria-label="Area"></textarea>
<button id=b onclick="log.push('click')">Press</button>
<button onclick="alert('hello alert'); log.push('confirm:' + confirm('sure?'))">Dialogs</button>
<div role=button id=hov onmouseover="log.push('over')" style="width:100px;height:40px">Hover zone</div>
<select aria-label="Pick" onchange="log.push('change:' + this.value)"><option value=x>X</option><option value=y>Y</option></select>
<input type=checkbox aria-label="Accept" onchange="log.push('cb:' + this.checked)">
<div id=pad></div>
<div style="height:3000px">spacer</div>
<button id=far>Far away</button>
<script>
  window.log = [];
  window.keys = [];
  const mods = (e) => (e.ctrlKey ? 'C' : '') + (e.shiftKey ? 'S' : '') + (e.altKey ? 'A' : '') + (e.metaKey ? 'M' : '');
  document.addEventListener('keydown', (e) => keys.push(`down ${e.key} ${e.code} ${e.keyCode} ${mods(e)}`));
  document.addEventListener('keyup', (e) => keys.push(`up ${e.key} ${e.code} ${e.keyCode} ${mods(e)}`));
  const pad = document.getElementById('pad');
  const at = (e) => `${e.offsetX},${e.offsetY}`;
  pad.addEventListener('mousedown', (e) => log.push(`pad-down ${at(e)} b${e.button} ${mods(e)}`));
  pad.addEventListener('mouseup', (e) => log.push(`pad-up ${at(e)} b${e.button}`));
  pad.addEventListener('mousemove', (e) => log.push(`pad-move ${at(e)} ${e.buttons}`));
  pad.addEventListener('click', (e) => log.push(`pad-click ${e.detail} ${mods(e)}`));
  pad.addEventListener('contextmenu', (e) => { e.preventDefault(); log.push('pad-context'); });
  window.arrive = () => setTimeout(() => { const p = document.createElement('p'); p.textContent = 'Late arrival'; document.body.prepend(p); }, 300);
  console.log('secret token eyJhbGciOiJIUzI1NiJ9abc123def456 at https://x.test/p?key=1');
</script>"#;

fn refs(read: Option<ReadResult>) -> HashMap<String, Ref> {
    match read {
        Some(ReadResult::Structured(r)) => r
            .elements()
            .iter()
            .map(|e| (e.label().to_owned(), e.reference().clone()))
            .collect(),
        other => panic!("{other:?}"),
    }
}

fn refused<T: std::fmt::Debug>(result: Result<T, DriverError>) -> String {
    match result {
        Err(DriverError::Refused(e)) => e.text().to_owned(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

async fn take(browser: &hands_cdp::CdpBrowser, name: &str) -> Value {
    eval(
        browser,
        &format!("(() => {{ const v = window.{name}; window.{name} = []; return v; }})()"),
    )
    .await
}

fn keys(names: &[&str]) -> Vec<KeyPress> {
    names.iter().map(|n| KeyPress::parse(n).unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_reaches_the_page_exactly() {
    let a = Server::start().await;
    a.html("/", PAGE);
    let mut browser = launch(config()).await;
    let c = cancel();
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();
    let r = refs(browser.read_page(ReadFilter::All, None, &c).await.unwrap());

    // click: one real click.
    browser.click(&r["Press"], None, &c).await.unwrap();
    assert_eq!(take(&browser, "log").await, json!(["click"]));

    // Dialogs do not block the page: an alert is accepted, a confirm dismissed, both logged.
    browser.click(&r["Dialogs"], None, &c).await.unwrap();
    assert_eq!(take(&browser, "log").await, json!(["confirm:false"]));
    let console = browser
        .read_diagnostics(DiagnosticsSource::Console, 10, None, &c)
        .await
        .unwrap();
    assert!(
        console
            .text()
            .contains("[dialog] alert accepted: hello alert"),
        "{}",
        console.text()
    );
    assert!(
        console.text().contains("[dialog] confirm dismissed: sure?"),
        "{}",
        console.text()
    );

    // type: exact text, non-ASCII included; a target's content is replaced; no target types at
    // the caret.
    browser
        .type_text("héllo 日本 ✓ 👍", Some(&r["Text"]), None, &c)
        .await
        .unwrap();
    assert_eq!(
        eval(&browser, "document.getElementById('t').value").await,
        "héllo 日本 ✓ 👍"
    );
    browser
        .type_text("new", Some(&r["Text"]), None, &c)
        .await
        .unwrap();
    browser.type_text(" more", None, None, &c).await.unwrap();
    assert_eq!(
        eval(&browser, "document.getElementById('t').value").await,
        "new more"
    );
    browser
        .type_text("line1\nline2", Some(&r["Area"]), None, &c)
        .await
        .unwrap();
    assert_eq!(
        eval(&browser, "document.getElementById('area').value").await,
        "line1\nline2"
    );
    take(&browser, "keys").await;

    // key: chords with the right key, code, key code and modifiers.
    browser
        .type_text("abc", Some(&r["Text"]), None, &c)
        .await
        .unwrap();
    take(&browser, "keys").await;
    browser.key(&keys(&["Control+a"]), None, &c).await.unwrap();
    browser.type_text("Z", None, None, &c).await.unwrap();
    assert_eq!(
        eval(&browser, "document.getElementById('t').value").await,
        "Z"
    );
    assert_eq!(
        take(&browser, "keys").await,
        json!([
            "down Control ControlLeft 17 C",
            "down a KeyA 65 C",
            "up a KeyA 65 C",
            "up Control ControlLeft 17 "
        ])
    );
    browser
        .key(&keys(&["Shift+Tab", "Enter", "ArrowDown", "F2"]), None, &c)
        .await
        .unwrap();
    let pressed = take(&browser, "keys").await;
    let downs: Vec<&str> = pressed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .filter(|s| s.starts_with("down"))
        .collect();
    assert_eq!(
        downs,
        vec![
            "down Shift ShiftLeft 16 S",
            "down Tab Tab 9 S",
            "down Enter Enter 13 ",
            "down ArrowDown ArrowDown 40 ",
            "down F2 F2 113 "
        ]
    );

    // hold_keys: all down, held, up in reverse.
    let held = [Key::parse("Shift").unwrap(), Key::parse("a").unwrap()];
    browser
        .hold_keys(&held, Duration::from_millis(50), None, &c)
        .await
        .unwrap();
    assert_eq!(
        take(&browser, "keys").await,
        json!([
            "down Shift ShiftLeft 16 S",
            "down A KeyA 65 S",
            "up A KeyA 65 S",
            "up Shift ShiftLeft 16 "
        ])
    );

    // hover, select_option, set_checked.
    browser.hover(&r["Hover zone"], None, &c).await.unwrap();
    assert_eq!(take(&browser, "log").await, json!(["over"]));
    browser
        .select_option(&r["Pick"], &["y".to_owned()], None, &c)
        .await
        .unwrap();
    browser
        .select_option(&r["Pick"], &["X".to_owned()], None, &c)
        .await
        .unwrap();
    let nope = refused(
        browser
            .select_option(&r["Pick"], &["nope".to_owned()], None, &c)
            .await,
    );
    assert!(nope.contains("No enabled option"), "{nope}");
    let not_select = refused(
        browser
            .select_option(&r["Press"], &["x".to_owned()], None, &c)
            .await,
    );
    assert!(
        not_select.contains("select_option works on"),
        "{not_select}"
    );
    assert_eq!(take(&browser, "log").await, json!(["change:y", "change:x"]));
    assert_eq!(
        browser
            .set_checked(&r["Accept"], true, None, &c)
            .await
            .unwrap()
            .unwrap(),
        "Checked."
    );
    assert_eq!(
        browser
            .set_checked(&r["Accept"], true, None, &c)
            .await
            .unwrap()
            .unwrap(),
        "Already checked."
    );
    browser
        .set_checked(&r["Accept"], false, None, &c)
        .await
        .unwrap();
    assert_eq!(take(&browser, "log").await, json!(["cb:true", "cb:false"]));
    let not_box = refused(browser.set_checked(&r["Press"], true, None, &c).await);
    assert!(not_box.contains("checkboxes and radio"), "{not_box}");

    // Pointer members on viewport coordinates: the pad sits at (600, 100).
    browser
        .click_at(
            CssPoint::new(650, 150).unwrap(),
            PointerButton::Left,
            2,
            ModifierSet::parse("shift").unwrap(),
            None,
            &c,
        )
        .await
        .unwrap();
    let log = take(&browser, "log").await;
    let clicks: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .filter(|s| !s.starts_with("pad-move"))
        .collect();
    assert_eq!(
        clicks,
        vec![
            "pad-down 50,50 b0 S",
            "pad-up 50,50 b0",
            "pad-click 1 S",
            "pad-down 50,50 b0 S",
            "pad-up 50,50 b0",
            "pad-click 2 S"
        ]
    );
    browser
        .click_at(
            CssPoint::new(610, 110).unwrap(),
            PointerButton::Right,
            1,
            ModifierSet::NONE,
            None,
            &c,
        )
        .await
        .unwrap();
    let log = take(&browser, "log").await;
    assert!(
        log.as_array().unwrap().contains(&json!("pad-context")),
        "{log}"
    );
    let outside = refused(
        browser
            .click_at(
                CssPoint::new(5000, 10).unwrap(),
                PointerButton::Left,
                1,
                ModifierSet::NONE,
                None,
                &c,
            )
            .await,
    );
    assert!(
        outside.contains("outside the 1280x800 viewport"),
        "{outside}"
    );
    let path = [
        CssPoint::new(610, 110).unwrap(),
        CssPoint::new(700, 200).unwrap(),
        CssPoint::new(800, 300).unwrap(),
    ];
    eval(&browser, "getSelection().removeAllRanges(); 1").await;
    browser
        .drag_path(&path, ModifierSet::NONE, None, &c)
        .await
        .unwrap();
    assert_eq!(
        take(&browser, "log").await,
        json!([
            "pad-move 10,10 0",
            "pad-down 10,10 b0 ",
            "pad-move 100,100 1",
            "pad-move 200,200 1",
            "pad-up 200,200 b0",
            "pad-click 1 "
        ])
    );
    // The same drag, as Claude's left_mouse_down, mouse_move, left_mouse_up: the button stays
    // down between the calls, and the moves in between drag.
    eval(&browser, "getSelection().removeAllRanges(); 1").await;
    let point = |x, y| CssPoint::new(x, y).unwrap();
    browser
        .mouse_button(point(610, 110), true, None, &c)
        .await
        .unwrap();
    let again = refused(browser.mouse_button(point(610, 110), true, None, &c).await);
    assert!(again.contains("already down"), "{again}");
    browser.hover_at(point(700, 200), None, &c).await.unwrap();
    browser
        .mouse_button(point(800, 300), false, None, &c)
        .await
        .unwrap();
    assert_eq!(
        take(&browser, "log").await,
        json!([
            "pad-move 10,10 0",
            "pad-down 10,10 b0 ",
            "pad-move 100,100 1",
            "pad-move 200,200 1",
            "pad-up 200,200 b0",
            "pad-click 1 "
        ])
    );
    let up = refused(browser.mouse_button(point(800, 300), false, None, &c).await);
    assert!(up.contains("not down"), "{up}");
    // A press on a selection starts a native drag: the path continues as drag events and the
    // page gets its drop.
    eval(
        &browser,
        "scrollTo(0, 0); pad.textContent = 'drag me'; getSelection().selectAllChildren(pad); \
        pad.addEventListener('dragstart', () => log.push('dragstart')); \
        document.getElementById('t').addEventListener('drop', () => log.push('drop')); 1",
    )
    .await;
    let t = eval(
        &browser,
        "(() => { const r = document.getElementById('t').getBoundingClientRect(); \
        return [Math.round(r.left + 10), Math.round(r.top + r.height / 2)]; })()",
    )
    .await;
    let (tx, ty) = (t[0].as_u64().unwrap(), t[1].as_u64().unwrap());
    take(&browser, "log").await;
    let to_text = [
        CssPoint::new(605, 105).unwrap(),
        CssPoint::new(300, 60).unwrap(),
        CssPoint::new(tx, ty).unwrap(),
    ];
    browser
        .drag_path(&to_text, ModifierSet::NONE, None, &c)
        .await
        .unwrap();
    let log = take(&browser, "log").await;
    assert!(
        log.as_array().unwrap().contains(&json!("dragstart")),
        "{log}"
    );
    assert!(log.as_array().unwrap().contains(&json!("drop")), "{log}");
    assert!(
        eval(&browser, "document.getElementById('t').value")
            .await
            .as_str()
            .unwrap()
            .contains("drag me")
    );
    eval(
        &browser,
        "pad.textContent = ''; getSelection().removeAllRanges(); 1",
    )
    .await;
    browser
        .hover_at(CssPoint::new(620, 120).unwrap(), None, &c)
        .await
        .unwrap();
    assert_eq!(take(&browser, "log").await, json!(["pad-move 20,20 0"]));

    // scroll and scroll_to.
    let before = eval(&browser, "window.scrollY").await.as_f64().unwrap();
    browser
        .scroll(ScrollDirection::Down, 500, None, &c)
        .await
        .unwrap();
    assert_eq!(
        eval(&browser, "window.scrollY").await.as_f64().unwrap() - before,
        500.0
    );
    browser
        .scroll(ScrollDirection::Up, 100, None, &c)
        .await
        .unwrap();
    assert_eq!(
        eval(&browser, "window.scrollY").await.as_f64().unwrap() - before,
        400.0
    );
    browser.scroll_to(&r["Far away"], None, &c).await.unwrap();
    let top = eval(
        &browser,
        "document.getElementById('far').getBoundingClientRect().top",
    )
    .await;
    assert!((0.0..800.0).contains(&top.as_f64().unwrap()), "{top}");

    // wait_for: event-driven, and a timeout that says so (the text arrives 300 ms after this;
    // earlier, it moved the buttons under a click).
    eval(&browser, "arrive(), 1").await;
    browser
        .wait_for(
            &WaitText::parse("Late   arrival").unwrap(),
            Duration::from_secs(5),
            None,
            &c,
        )
        .await
        .unwrap();
    let late = refused(
        browser
            .wait_for(
                &WaitText::parse("Never here").unwrap(),
                Duration::from_millis(200),
                None,
                &c,
            )
            .await,
    );
    assert_eq!(late, "The text did not appear within 200 ms.");

    // run_script.
    let s = |src: &str| src.to_owned();
    assert_eq!(
        browser
            .run_script(
                &s("document.getElementById('t').value"),
                Duration::from_secs(5),
                None,
                &c
            )
            .await
            .unwrap(),
        "Zdrag me"
    );
    assert_eq!(
        browser
            .run_script(
                &s("Promise.resolve(41 + 1)"),
                Duration::from_secs(5),
                None,
                &c
            )
            .await
            .unwrap(),
        "42"
    );
    assert_eq!(
        browser
            .run_script(&s("undefined"), Duration::from_secs(5), None, &c)
            .await
            .unwrap(),
        ""
    );
    let threw = refused(
        browser
            .run_script(
                &s("throw new Error('boom')"),
                Duration::from_secs(5),
                None,
                &c,
            )
            .await,
    );
    assert_eq!(threw, "The script threw: Error: boom");
    let slow = refused(
        browser
            .run_script(
                &s("new Promise(() => {})"),
                Duration::from_millis(200),
                None,
                &c,
            )
            .await,
    );
    assert!(slow.contains("did not finish within 200 ms"), "{slow}");

    // screenshot and zoom: the viewport in CSS pixels; zoom magnified and bounds-checked.
    let shot = browser.screenshot(None, &c).await.unwrap();
    assert_eq!(
        (shot.size.width, shot.size.height, shot.media_type),
        (1280, 800, MediaType::Jpeg)
    );
    let zoomed = browser
        .zoom(CssRegion::new([0, 0, 320, 200]).unwrap(), None, &c)
        .await
        .unwrap();
    assert_eq!((zoomed.size.width, zoomed.size.height), (1280, 800));
    let outside = refused(
        browser
            .zoom(CssRegion::new([0, 0, 1300, 200]).unwrap(), None, &c)
            .await,
    );
    assert!(
        outside.contains("outside the 1280x800 viewport"),
        "{outside}"
    );

    // read_diagnostics: console filtered of tokens, queries and credentials.
    let console = browser
        .read_diagnostics(DiagnosticsSource::Console, 10, None, &c)
        .await
        .unwrap();
    assert!(
        console
            .text()
            .contains("[log] secret token [redacted] at https://x.test/p"),
        "{}",
        console.text()
    );
    assert!(!console.text().contains("eyJ") && !console.text().contains("key=1"));
    let network = browser
        .read_diagnostics(DiagnosticsSource::Network, 10, None, &c)
        .await
        .unwrap();
    assert!(
        network
            .text()
            .contains(&format!("GET {}/ [Document] 200", a.origin())),
        "{}",
        network.text()
    );
}

/// Zoom crops the region it names: a page with four coloured quadrants, zoomed on one after
/// scrolling, comes back in that colour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zoom_crops_the_named_region_after_scrolling() {
    let a = Server::start().await;
    a.html(
        "/",
        "<style>body{margin:0} div{position:absolute;width:640px;height:400px}</style>\
         <div style='left:0;top:0;background:#f00'></div><div style='left:640px;top:0;background:#0f0'></div>\
         <div style='left:0;top:400px;background:#00f'></div><div style='left:640px;top:400px;background:#ff0'></div>\
         <div style='left:0;top:800px;background:#0ff;height:2000px'></div>",
    );
    let mut config = config();
    config.image_format = hands_core::image::ImageFormat::Png;
    let mut browser = launch(config).await;
    let c = cancel();
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();
    let colour = |img: &hands_core::image::EncodedImage| {
        let bytes = img.bytes();
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        let px = info.color_type.samples();
        let mid = ((info.height / 2) * info.width + info.width / 2) as usize * px;
        [buf[mid], buf[mid + 1], buf[mid + 2]]
    };
    let green = browser
        .zoom(CssRegion::new([700, 50, 1200, 350]).unwrap(), None, &c)
        .await
        .unwrap();
    assert_eq!(colour(&green), [0, 255, 0]);
    browser
        .scroll(ScrollDirection::Down, 400, None, &c)
        .await
        .unwrap();
    let cyan = browser
        .zoom(CssRegion::new([100, 450, 500, 750]).unwrap(), None, &c)
        .await
        .unwrap();
    assert_eq!(colour(&cyan), [0, 255, 255]);
    let yellow = browser
        .zoom(CssRegion::new([700, 50, 1200, 350]).unwrap(), None, &c)
        .await
        .unwrap();
    assert_eq!(colour(&yellow), [255, 255, 0]);
}

const VALUE_INPUTS: &str = r#"<!doctype html><title>Values</title>
<input type=date aria-label="Check-in" oninput="log.push('input:' + this.value)" onchange="log.push('change:' + this.value)">
<input type=time aria-label="Arrival">
<input type=range min=0 max=10 aria-label="Volume">
<input type=number aria-label="Nights">
<script>window.log = [];</script>"#;

/// Regression: a date field ignored inserted text, so a booking form never submitted; `type`
/// now sets such fields' values as the page sees a person do it, and refuses a value the field
/// cannot hold instead of leaving it silently empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_into_date_time_and_range_inputs_sets_their_value() {
    let a = Server::start().await;
    a.html("/", VALUE_INPUTS);
    let mut browser = launch(config()).await;
    let c = cancel();
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();
    let r = refs(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    browser
        .type_text("2027-03-14", Some(&r["Check-in"]), None, &c)
        .await
        .unwrap();
    assert_eq!(
        take(&browser, "log").await,
        json!(["input:2027-03-14", "change:2027-03-14"])
    );
    let text = refused(
        browser
            .type_text("14/03/2027", Some(&r["Check-in"]), None, &c)
            .await,
    );
    assert!(text.contains("YYYY-MM-DD"), "{text}");
    // The refused value left the earlier one in place.
    assert_eq!(
        eval(&browser, "document.querySelector('[type=date]').value").await,
        "2027-03-14"
    );
    browser
        .type_text("14:30", Some(&r["Arrival"]), None, &c)
        .await
        .unwrap();
    assert_eq!(
        eval(&browser, "document.querySelector('[type=time]').value").await,
        "14:30"
    );
    browser
        .type_text("7", Some(&r["Volume"]), None, &c)
        .await
        .unwrap();
    assert_eq!(
        eval(&browser, "document.querySelector('[type=range]').value").await,
        "7"
    );
    // A number field is typed into as any text field.
    browser
        .type_text("3", Some(&r["Nights"]), None, &c)
        .await
        .unwrap();
    assert_eq!(
        eval(&browser, "document.querySelector('[type=number]').value").await,
        "3"
    );
}

/// Two buttons of one size, stacked; the target's `mousemove` (the move that precedes every
/// press) swaps them, so the press would land on the decoy. `swaps` is how many moves swap.
fn moving_page(swaps: u32) -> String {
    format!(
        r#"<!doctype html><title>Moving</title>
<style>body {{ margin: 0; }} button {{ display: block; width: 200px; height: 60px; }}</style>
<div id=box><button id=target>Target</button><button id=decoy>Decoy</button></div>
<script>
  window.log = [];
  let swaps = {swaps};
  const box = document.getElementById('box');
  const target = document.getElementById('target');
  const decoy = document.getElementById('decoy');
  target.addEventListener('mousemove', () => {{
    if (swaps > 0) {{ swaps--; box.prepend(box.lastElementChild); }}
  }});
  for (const t of ['mousedown', 'mouseup', 'click']) {{
    target.addEventListener(t, () => log.push('target-' + t));
    decoy.addEventListener(t, () => log.push('decoy-' + t));
  }}
</script>"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_never_lands_on_what_moved_under_the_pointer() {
    let a = Server::start().await;
    a.html("/once", &moving_page(1));
    a.html("/always", &moving_page(1000));
    let mut browser = launch(config()).await;
    let c = cancel();

    // The page moves once between finding the point and the press: the stray press reaches
    // nothing, and the second aim clicks the target.
    browser
        .navigate(&a.page_url("/once"), None, &c)
        .await
        .unwrap();
    let r = refs(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    browser.click(&r["Target"], None, &c).await.unwrap();
    assert_eq!(
        take(&browser, "log").await,
        json!(["target-mousedown", "target-mouseup", "target-click"])
    );

    // The page moves before every press: after the attempts, a refusal, and the decoy never
    // saw a press, a release or a click.
    browser
        .navigate(&a.page_url("/always"), None, &c)
        .await
        .unwrap();
    let r = refs(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    assert_eq!(
        refused(browser.click(&r["Target"], None, &c).await),
        hands_cdp::CLICK_KEPT_MISSING
    );
    assert_eq!(take(&browser, "log").await, json!([]));
}
