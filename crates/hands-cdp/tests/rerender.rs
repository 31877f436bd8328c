//! Tier 3: refs across re-renders on real Chromium — a ref follows its replaced element only when no reader could tell the two apart, says so, and otherwise refuses saying what changed; then a fuzz of re-render events that clicks old refs and asks the page which element got each click.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;

use common::*;
use hands_core::browser::args::ReadFilter;
use hands_core::browser::driver::ReadResult;
use hands_core::browser::read::{ReadElement, Ref};
use hands_core::browser::{Browser, BrowserRead, DriverError};

/// The page's list: three ways a framework renders it (`keyed`: nodes follow their item;
/// `unkeyed`: every row made anew; `patch`: the i-th row's nodes show the i-th item), rows
/// whose "Done" and "Delete" controls look alike, and a record of every click by item and
/// control (`window.hits`).
const LIST_PAGE: &str = r#"<!doctype html><title>List</title>
<h1>Tasks</h1><ul id=list></ul>
<script>
let items = [];
let mode = 'keyed';
let nextId = 1;
window.hits = [];
const byId = new Map();
const list = document.getElementById('list');
function rowHtml(it) {
  return `<label><input type=checkbox data-c=done> Done</label> <span>${it.text}</span> ` +
    `<button data-c=open>Open ${it.text}</button> <button data-c=del>Delete</button>`;
}
function fill(li, it) {
  li.dataset.id = it.id;
  li.innerHTML = rowHtml(it);
}
function render() {
  if (mode === 'unkeyed') {
    list.innerHTML = items.map((it) => `<li data-id=${it.id}>${rowHtml(it)}</li>`).join('');
    return;
  }
  if (mode === 'patch') {
    const lis = Array.from(list.children);
    items.forEach((it, i) => {
      let li = lis[i];
      if (!li) { li = document.createElement('li'); list.appendChild(li); li.innerHTML = rowHtml(it); }
      li.dataset.id = it.id;
      li.querySelector('span').textContent = it.text;
      li.querySelector('[data-c=open]').textContent = 'Open ' + it.text;
    });
    for (const li of lis.slice(items.length)) li.remove();
    return;
  }
  const keep = new Set(items.map((it) => it.id));
  for (const [id, li] of byId) if (!keep.has(id)) { li.remove(); byId.delete(id); }
  items.forEach((it, i) => {
    let li = byId.get(it.id);
    if (!li) { li = document.createElement('li'); fill(li, it); byId.set(it.id, li); li.dataset.text = it.text; }
    if (li.dataset.text !== it.text) {
      li.dataset.text = it.text;
      li.querySelector('span').textContent = it.text;
      li.querySelector('[data-c=open]').textContent = 'Open ' + it.text;
    }
    if (list.children[i] !== li) list.insertBefore(li, list.children[i] || null);
  });
}
document.addEventListener('click', (e) => {
  const c = e.target.closest('[data-c]');
  if (!c) return;
  window.hits.push({ id: Number(c.closest('li').dataset.id), c: c.dataset.c });
});
function setItems(texts, m) {
  mode = m;
  list.innerHTML = '';
  byId.clear();
  items = texts.map((text) => ({ id: nextId++, text }));
  render();
}
// The controls in document order, as [item id, control, item text].
function controls() {
  return Array.from(list.querySelectorAll('[data-c]'))
    .map((c) => [Number(c.closest('li').dataset.id), c.dataset.c, c.closest('li').querySelector('span').textContent]);
}
</script>"#;

fn structured(read: Option<ReadResult>) -> BrowserRead {
    match read {
        Some(ReadResult::Structured(r)) => r,
        other => panic!("no structured read: {other:?}"),
    }
}

/// The list's controls as read, each with the item and control the page says it is.
async fn read_list(browser: &mut hands_cdp::CdpBrowser) -> Vec<(ReadElement, (i64, String))> {
    let c = cancel();
    let read = structured(
        browser
            .read_page(ReadFilter::Interactive, None, &c)
            .await
            .unwrap(),
    );
    let page: Vec<(i64, String, String)> =
        serde_json::from_value(eval(browser, "controls()").await).unwrap();
    assert_eq!(read.elements().len(), page.len(), "{read:#?}");
    read.elements()
        .iter()
        .zip(page)
        .map(|(e, (id, control, text))| {
            let want = match control.as_str() {
                "done" => "Done".to_owned(),
                "open" => format!("Open {text}"),
                _ => "Delete".to_owned(),
            };
            assert_eq!(e.label(), want);
            (e.clone(), (id, control))
        })
        .collect()
}

async fn set_items(browser: &mut hands_cdp::CdpBrowser, texts: &[&str], mode: &str) {
    let texts = serde_json::to_string(texts).unwrap();
    eval(browser, &format!("setItems({texts}, '{mode}'); 1")).await;
}

async fn hits(browser: &hands_cdp::CdpBrowser) -> Vec<(i64, String)> {
    let hits = eval(
        browser,
        "(() => { const h = window.hits; window.hits = []; return h; })()",
    )
    .await;
    hits.as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["id"].as_i64().unwrap(),
                h["c"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn find<'a>(read: &'a [(ReadElement, (i64, String))], id: i64, control: &str) -> &'a Ref {
    read.iter()
        .find(|(_, (i, c))| *i == id && c == control)
        .map(|(e, _)| e.reference())
        .unwrap()
}

const REBOUND: &str = "now names its re-rendered element.";

/// Rows re-sorted by a framework that renders every row anew: the look-alike "Delete" of the
/// row that was read follows that row, never the row now in its place.
#[tokio::test]
async fn a_resorted_list_never_sends_a_click_to_the_row_now_in_its_place() {
    let (_server, mut browser) = open_page(LIST_PAGE).await;
    let c = cancel();
    for mode in ["unkeyed", "patch", "keyed"] {
        set_items(&mut browser, &["Bob", "Carol", "Dan"], mode).await;
        let read = read_list(&mut browser).await;
        let first = read[0].1.0;
        let bob = find(&read, first, "del").clone();
        eval(&browser, "items.reverse(); render(); 1").await;
        let answer = browser.click(&bob, None, &c).await.unwrap().unwrap();
        assert_eq!(
            hits(&browser).await,
            vec![(first, "del".to_owned())],
            "{mode}"
        );
        // A keyed framework moved the node itself: nothing to follow.
        assert_eq!(
            answer.contains(REBOUND),
            mode != "keyed",
            "{mode}: {answer}"
        );
        // Bob's row removed: the "Delete" buttons left are other rows'.
        eval(
            &browser,
            "items = items.filter((it) => it.text !== 'Bob'); render(); 1",
        )
        .await;
        let text = match browser.click(&bob, None, &c).await {
            Err(DriverError::Refused(e)) => e.text().to_owned(),
            other => panic!("{mode}: expected a refusal, got {other:?}"),
        };
        assert!(
            text.contains(
                "none of the 2 elements with role button and name \"Delete\" is in its row"
            ) || text.contains("now shows another row's content"),
            "{mode}: {text}"
        );
        assert!(hits(&browser).await.is_empty(), "{mode}");
    }
}

/// Two rows no reader can tell apart when read: neither ref follows a re-render.
#[tokio::test]
async fn twins_when_read_are_refused_after_a_rerender() {
    let (_server, mut browser) = open_page(LIST_PAGE).await;
    let c = cancel();
    set_items(&mut browser, &["Bob", "Bob", "Dan"], "unkeyed").await;
    let read = read_list(&mut browser).await;
    let del = read[2].0.reference().clone();
    // Unchanged, the node itself is certain.
    browser.click(&del, None, &c).await.unwrap();
    assert_eq!(hits(&browser).await.len(), 1);
    eval(&browser, "render(); 1").await;
    let text = match browser.click(&del, None, &c).await {
        Err(DriverError::Refused(e)) => e.text().to_owned(),
        other => panic!("expected a refusal, got {other:?}"),
    };
    assert!(
        text.contains("an identical button \"Delete\" stood beside it"),
        "{text}"
    );
    // A unique name follows a re-render, and the answer says so.
    let dan = read[8].0.reference().clone();
    let answer = browser.click(&dan, None, &c).await.unwrap().unwrap();
    assert!(answer.starts_with("Clicked. Ref "), "{answer}");
    assert!(answer.ends_with(REBOUND), "{answer}");
    assert_eq!(hits(&browser).await, vec![(read[8].1.0, "del".to_owned())]);
}

/// A frame loaded anew shows the same button: its ref does not cross into the new document.
#[tokio::test]
async fn a_ref_never_follows_into_a_new_frame_document() {
    let server = Server::start().await;
    server.html("/", "<h1>Shop</h1><iframe src=\"/inner\"></iframe>");
    server.html(
        "/inner",
        "<p>Basket</p><button onclick=\"parent.paid=(parent.paid||0)+1\">Pay</button>",
    );
    let mut browser = launch(config()).await;
    let c = cancel();
    browser
        .navigate(&server.page_url("/"), None, &c)
        .await
        .unwrap();
    let read = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    let pay = read.elements()[0].reference().clone();
    eval(
        &browser,
        "new Promise((r) => { const f = document.querySelector('iframe'); f.onload = () => r(1); f.src = '/inner?again'; })",
    )
    .await;
    let text = match browser.click(&pay, None, &c).await {
        Err(DriverError::Refused(e)) => e.text().to_owned(),
        other => panic!("expected a refusal, got {other:?}"),
    };
    assert!(text.contains("frame or shadow root"), "{text}");
    assert_eq!(eval(&browser, "window.paid || 0").await, 0);
}

/// Components whose item is their host's slotted text: when a framework gives a host another
/// item and the component renders its button anew, the ref refuses rather than follow the
/// button of the host it was read in.
#[tokio::test]
async fn a_component_given_another_item_is_not_followed() {
    let (_server, mut browser) = open_page(
        r#"<h1>Tasks</h1><task-row>Bob</task-row><task-row>Carol</task-row>
<script>
customElements.define('task-row', class extends HTMLElement {
  connectedCallback() { this.attachShadow({ mode: 'open' }); this.draw(); }
  draw() { this.shadowRoot.innerHTML = '<slot></slot> <button>Delete</button>'; }
});
window.hits = [];
document.addEventListener('click', (e) => {
  const b = e.composedPath()[0];
  if (b.tagName === 'BUTTON') window.hits.push(b.getRootNode().host.textContent);
});
</script>"#,
    )
    .await;
    let c = cancel();
    let read = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    let bob = read.elements()[0].reference().clone();
    browser.click(&bob, None, &c).await.unwrap();
    eval(
        &browser,
        "const [a, b] = document.querySelectorAll('task-row'); \
         a.textContent = 'Carol'; b.textContent = 'Bob'; a.draw(); b.draw(); 1",
    )
    .await;
    assert!(browser.click(&bob, None, &c).await.is_err());
    assert_eq!(
        eval(&browser, "window.hits").await,
        serde_json::json!(["Bob"])
    );
}

/// A detail view whose only "Delete" has no row: its heading says which item it is, so the view
/// showing another item refuses the ref, whether its button was made anew or kept.
#[tokio::test]
async fn a_detail_view_showing_another_item_refuses_its_button() {
    let (_server, mut browser) = open_page(
        r#"<h1>Contacts</h1><h2 id=name>Bob</h2><div id=tools><button>Delete</button></div>
<script>
window.hits = [];
document.addEventListener('click', () => window.hits.push(document.getElementById('name').textContent));
function redraw() { document.getElementById('tools').innerHTML = '<button>Delete</button>'; }
</script>"#,
    )
    .await;
    let c = cancel();
    let read = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    let delete = read.elements()[0].reference().clone();
    // Drawn anew for the same contact: followed.
    eval(&browser, "redraw(); 1").await;
    let answer = browser.click(&delete, None, &c).await.unwrap().unwrap();
    assert!(answer.ends_with(REBOUND), "{answer}");
    // Another contact, the button drawn anew or kept: refused.
    for script in [
        "document.getElementById('name').textContent = 'Carol'; redraw(); 1",
        "document.getElementById('name').textContent = 'Dan'; 1",
    ] {
        eval(&browser, script).await;
        let text = match browser.click(&delete, None, &c).await {
            Err(DriverError::Refused(e)) => e.text().to_owned(),
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert!(text.contains("under another heading"), "{text}");
    }
    assert_eq!(
        eval(&browser, "window.hits").await,
        serde_json::json!(["Bob"])
    );
}

/// A tiny seeded generator (xorshift64*), so a failing run can be replayed by its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One re-render event, applied by the page in one call: lists re-sorted, reversed, look-alike
/// rows swapped, items inserted (some the twin of another) and removed, a text changed, or a
/// render with nothing changed.
const EVENT_JS: &str = r#"(function (r, fresh) {
  const pick = (n) => { r = (r * 1103515245 + 12345) % 2147483648; return r % Math.max(1, n); };
  const kind = pick(8);
  if (kind === 0) items.sort(() => pick(3) - 1);
  else if (kind === 1) items.reverse();
  else if (kind === 2 && items.length > 1) {
    const i = pick(items.length), j = pick(items.length);
    [items[i], items[j]] = [items[j], items[i]];
  } else if (kind === 3 || (kind === 4 && items.length < 3)) {
    const twin = pick(4) === 0 && items.length;
    const text = twin ? items[pick(items.length)].text : fresh;
    items.splice(pick(items.length + 1), 0, { id: nextId++, text });
  } else if (kind === 4) items.splice(pick(items.length), 1);
  else if (kind === 5 && items.length) items[pick(items.length)].text = fresh;
  else if (kind === 6 && items.length > 8) items.splice(pick(items.length), 2);
  render();
  return items.map((it) => [it.id, it.text]);
})"#;

#[derive(Default, Debug)]
struct Counts {
    events: usize,
    acted: usize,
    rebound: usize,
    refused: usize,
    wrong: usize,
    twin: usize,
    twin_rebound: usize,
    lost: usize,
}

/// The fuzz: after each re-render event, a click on a ref read before it (up to a few events
/// before), and the page says which item's which control got the click. A click on anything but
/// the read element's item and control is a wrong target, except on the same control of an item
/// showing exactly the read item's text (a twin row: no reader, and nothing in the page, tells
/// the two apart), counted apart. `HANDS_REFS_FUZZ_EVENTS` sets the
/// number of events (500 by default; the whole campaign is 10,000).
#[tokio::test]
async fn rerender_fuzz_never_clicks_a_wrong_element() {
    let events: usize = std::env::var("HANDS_REFS_FUZZ_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let seed: u64 = std::env::var("HANDS_REFS_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_2121);
    let (_server, mut browser) = open_page(LIST_PAGE).await;
    let c = cancel();
    let mut rng = Rng(seed | 1);
    let mut counts = Counts::default();
    let modes = ["keyed", "unkeyed", "patch"];
    let words = [
        "Milk", "Bank", "Rent", "Dog", "Bike", "Book", "Mail", "Plants",
    ];
    let mut read = Vec::new();
    // What each item's text was when last read.
    let mut read_texts: HashMap<i64, String> = HashMap::new();
    let mut fresh = 0usize;
    while counts.events < events {
        if counts.events % 40 == 0 {
            let n = 3 + rng.below(6);
            let texts: Vec<String> = (0..n)
                .map(|_| words[rng.below(words.len())].to_owned())
                .collect();
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            set_items(&mut browser, &texts, modes[rng.below(modes.len())]).await;
        }
        if counts.events % 40 == 0 || rng.below(4) == 0 || read.is_empty() {
            read = read_list(&mut browser).await;
            let page: Vec<(i64, String, String)> =
                serde_json::from_value(eval(&browser, "controls()").await).unwrap();
            read_texts = page.into_iter().map(|(id, _, text)| (id, text)).collect();
            if read.is_empty() {
                set_items(&mut browser, &["Milk", "Bank"], "unkeyed").await;
                continue;
            }
        }
        fresh += 1;
        let event = format!("{EVENT_JS}({}, 'Task {fresh}')", rng.next() % 2_147_483_648);
        let now: Vec<(i64, String)> = serde_json::from_value(eval(&browser, &event).await).unwrap();
        counts.events += 1;
        let (element, (id, control)) = &read[rng.below(read.len())];
        let result = browser.click(element.reference(), None, &c).await;
        let got = hits(&browser).await;
        match result {
            Ok(answer) => {
                counts.acted += 1;
                let rebound = answer.as_deref().is_some_and(|a| a.contains(REBOUND));
                if rebound {
                    counts.rebound += 1;
                }
                match got.as_slice() {
                    [(hit_id, hit_c)] if hit_id == id && hit_c == control => {}
                    // Rows of the same text: a framework patching a list in place shows
                    // another item in the read node, and nothing in the page tells them apart.
                    [(hit_id, hit_c)]
                        if hit_c == control
                            && now
                                .iter()
                                .any(|(i, t)| i == hit_id && Some(t) == read_texts.get(id)) =>
                    {
                        counts.twin += 1;
                        if rebound {
                            counts.twin_rebound += 1;
                        }
                    }
                    [] => counts.lost += 1,
                    other => {
                        counts.wrong += 1;
                        eprintln!(
                            "wrong target: read ({id}, {control}) {:?}, clicked {other:?}; items {now:?}",
                            element.label()
                        );
                    }
                }
            }
            Err(DriverError::Refused(_)) => {
                counts.refused += 1;
                assert!(got.is_empty(), "a refused click reached the page: {got:?}");
            }
            Err(e) => panic!("the driver failed: {e:?}"),
        }
    }
    println!(
        "re-render fuzz (seed {seed}): {} events, {} clicks made, {} wrong targets, {} re-bound, \
         {} refused, {} twin substitutions ({} of them after a re-bind), {} clicks lost",
        counts.events,
        counts.acted,
        counts.wrong,
        counts.rebound,
        counts.refused,
        counts.twin,
        counts.twin_rebound,
        counts.lost
    );
    assert_eq!(counts.wrong, 0, "{counts:?}");
    assert_eq!(counts.lost, 0, "{counts:?}");
    assert!(counts.rebound > 0 && counts.refused > 0, "{counts:?}");
}
