//! Tier 3: structured reads and refs against real Chromium — roles, labels, privacy, shadow DOM, frames, scopes, find, and refs that refuse to act once stale while the page proves nothing was clicked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;

use common::*;
use hands_cdp::ValuePolicy;
use hands_core::browser::args::ReadFilter;
use hands_core::browser::driver::ReadResult;
use hands_core::browser::read::{Omitted, ReadElement, Ref, Role};
use hands_core::browser::{Browser, BrowserRead, DriverError};

fn structured(read: Option<ReadResult>) -> BrowserRead {
    match read {
        Some(ReadResult::Structured(r)) => r,
        other => panic!("no structured read: {other:?}"),
    }
}

fn by_label(read: &BrowserRead) -> HashMap<String, ReadElement> {
    read.elements()
        .iter()
        .map(|e| (e.label().to_owned(), e.clone()))
        .collect()
}

fn refused(result: Result<Option<String>, DriverError>) -> String {
    match result {
        Err(DriverError::Refused(e)) => e.text().to_owned(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

const FORM: &str = r#"<!doctype html><title>Form</title>
<h1>Sign up</h1>
<form id=f aria-label="Sign up form" onsubmit="return false">
  <label for=name>Full name</label><input id=name value="Ann">
  <label>Email <input type=email id=email placeholder="you@example.com"></label>
  <input type=password id=pw aria-label="Password" value="hunter2-secret">
  <input type=text autocomplete="cc-number" aria-label="Card" value="4111111111111111">
  <textarea aria-label="Bio">Hello bio</textarea>
  <select id=size aria-label="Size"><option value=s>Small</option><option value=m selected>Medium</option></select>
  <select multiple aria-label="Toppings"><option value=a selected>Cheese</option><option value=b>Olives</option></select>
  <input type=checkbox id=agree checked><label for=agree>I agree</label>
  <input type=radio name=r id=r1><label for=r1>Red</label>
  <input type=range aria-label="Volume" value=30>
  <input type=file aria-label="Avatar">
  <input type=color aria-label="Colour">
  <div role=button tabindex=0>Custom</div>
  <a href="/next">Next page</a>
  <button disabled>Disabled</button>
  <button type=button>Submit</button>
  <div style="display:none"><button>Hidden</button></div>
  <span>Long: <button id=long>LONGLABEL</button></span>
</form>
<my-widget></my-widget>
<script>
  customElements.define('my-widget', class extends HTMLElement {
    constructor() { super(); const r = this.attachShadow({mode: 'open'});
      r.innerHTML = '<p>Inside shadow</p><button onclick="window.shadowClicks=(window.shadowClicks||0)+1">Shadow action</button>'; }
  });
  document.getElementById('long').textContent = 'é'.repeat(300);
</script>
<iframe src="/inner" style="width:400px;height:100px"></iframe>
<iframe src="CROSS/cross" style="width:400px;height:100px"></iframe>
<nav aria-label="Main"><a href="/a">Alpha</a></nav>
<main><h2>Results</h2><section aria-label="Results list"><button>Result one</button></section></main>
<button id=rep onclick="window.repClicks=(window.repClicks||0)+1">Replace me</button>
<button id=ren onclick="window.renClicks=(window.renClicks||0)+1">Rename me</button>
<button id=spa onclick="window.spaClicks=(window.spaClicks||0)+1">Route me</button>
"#;

/// One read reports every control kind with its role, label, value (privacy allowing), options
/// and checked state; open shadow roots and same-origin frames are read, cross-origin frames are
/// reported as left out; passwords never appear.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_report_controls_privately_across_shadow_and_frames() {
    let a = Server::start().await;
    let b = Server::start().await;
    a.html("/", &FORM.replace("CROSS", &b.origin()));
    a.html("/inner", "<p>Inner text</p><button onclick=\"parent.framedClicks=(parent.framedClicks||0)+1\">Framed</button>");
    b.html("/cross", "<p>Cross text</p><button>Cross button</button>");
    a.html(
        "/other",
        "<title>Other</title><button id=rep onclick=\"document.title='hit'\">Replace me</button>",
    );
    let mut browser = launch(config()).await;
    let c = cancel();
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();

    let read = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    let els = by_label(&read);
    let check = |label: &str, role: Role, value: Option<&str>| {
        let e = els
            .get(label)
            .unwrap_or_else(|| panic!("no element {label:?} in {read:#?}"));
        assert_eq!(e.role(), role, "{label}");
        assert_eq!(e.value(), value, "{label}");
    };
    check("Full name", Role::Textbox, Some("Ann"));
    check("Email", Role::Textbox, Some(""));
    check("Password", Role::Textbox, None);
    check("Card", Role::Textbox, None);
    check("Bio", Role::Textbox, Some("Hello bio"));
    check("Size", Role::Combobox, Some("m"));
    check("Toppings", Role::Listbox, None);
    check("I agree", Role::Checkbox, None);
    check("Red", Role::Radio, None);
    check("Volume", Role::Slider, Some("30"));
    check("Custom", Role::Button, None);
    check("Avatar", Role::Button, None);
    assert!(!els.contains_key("Colour"));
    check("Next page", Role::Button, None);
    check("Disabled", Role::Button, None);
    check("Submit", Role::Button, None);
    check("Shadow action", Role::Button, None);
    check("Framed", Role::Button, None);
    assert_eq!(els["I agree"].checked(), Some(true));
    assert_eq!(els["Red"].checked(), Some(false));
    let size: Vec<(&str, &str, Option<bool>)> = els["Size"]
        .options()
        .unwrap()
        .iter()
        .map(|o| (o.label(), o.value(), o.is_selected()))
        .collect();
    assert_eq!(size, vec![("Small", "s", None), ("Medium", "m", None)]);
    let toppings: Vec<Option<bool>> = els["Toppings"]
        .options()
        .unwrap()
        .iter()
        .map(|o| o.is_selected())
        .collect();
    assert_eq!(toppings, vec![Some(true), Some(false)]);
    assert!(!els.contains_key("Hidden"));
    assert!(!els.contains_key("Cross button"));
    let long = read
        .elements()
        .iter()
        .find(|e| e.label().starts_with('é'))
        .unwrap();
    assert_eq!(long.label().len(), 256);
    for code in [
        Omitted::Private,
        Omitted::FrameLimit,
        Omitted::UnsupportedControl,
        Omitted::NameLimit,
    ] {
        assert!(
            read.omitted().contains(&code),
            "{code:?} missing: {:?}",
            read.omitted()
        );
    }
    assert!(read.text().contains("Sign up"), "{}", read.text());
    assert!(read.text().contains("Inside shadow"), "{}", read.text());
    assert!(read.text().contains("Inner text"), "{}", read.text());
    assert!(!read.text().contains("Cross text"));
    let json = serde_json::to_string(&read).unwrap();
    assert!(
        !json.contains("hunter2") && !json.contains("4111111111111111"),
        "{json}"
    );
    let mut refs: Vec<&str> = read
        .elements()
        .iter()
        .map(|e| e.reference().as_str())
        .collect();
    let n = refs.len();
    refs.sort();
    refs.dedup();
    assert_eq!(refs.len(), n);

    // `interactive` leaves out disabled controls; a second read keeps the same refs.
    let interactive = structured(
        browser
            .read_page(ReadFilter::Interactive, None, &c)
            .await
            .unwrap(),
    );
    let ie = by_label(&interactive);
    assert!(!ie.contains_key("Disabled"));
    assert_eq!(ie["Full name"].reference(), els["Full name"].reference());

    // get_page_text: text, no elements.
    let text = structured(browser.get_page_text(None, &c).await.unwrap());
    assert!(text.elements().is_empty());
    assert!(text.text().contains("Sign up"));

    // find ranks by label and role.
    let found = structured(browser.find("size dropdown", None, &c).await.unwrap());
    assert_eq!(found.elements()[0].label(), "Size");
    let found = structured(browser.find("shadow", None, &c).await.unwrap());
    assert_eq!(found.elements()[0].label(), "Shadow action");

    // Values withheld by policy.
    browser.set_value_policy(ValuePolicy::Never);
    let hidden = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    assert!(
        hidden
            .elements()
            .iter()
            .all(|e| e.value().is_none() && e.options().is_none())
    );
    assert!(hidden.omitted().contains(&Omitted::Value));
    browser.set_value_policy(ValuePolicy::NonPrivate);

    // Scoped reads: discover sections, then read one.
    let scoped = browser
        .read_page_scoped(None, 2, ReadFilter::All, None, &c)
        .await
        .unwrap();
    let scopes: HashMap<&str, &Ref> = scoped
        .scopes()
        .iter()
        .map(|s| (s.label(), s.reference()))
        .collect();
    assert!(scopes.contains_key("form: Sign up form"), "{scopes:?}");
    assert!(scopes.contains_key("navigation: Main"), "{scopes:?}");
    let main = scopes["main: Results"].clone();
    let inside = browser
        .read_page_scoped(Some(&main), 5, ReadFilter::All, None, &c)
        .await
        .unwrap();
    let inside_labels: Vec<&str> = inside.read().elements().iter().map(|e| e.label()).collect();
    assert_eq!(inside_labels, vec!["Result one"]);
    assert!(inside.read().text().contains("Results"));
    assert_eq!(
        inside
            .scopes()
            .iter()
            .map(|s| s.label())
            .collect::<Vec<_>>(),
        vec!["section: Results list"]
    );
    let shallow = browser
        .read_page_scoped(Some(&main), 1, ReadFilter::All, None, &c)
        .await
        .unwrap();
    assert!(shallow.read().elements().is_empty());
    assert!(shallow.read().omitted().contains(&Omitted::TargetLimit));
    // A scope ref is refused by every member that acts on an element.
    let text = refused(browser.click(&main, None, &c).await);
    assert!(text.contains("scope ref"), "{text}");
    let err = browser
        .read_page_scoped(
            Some(els["Submit"].reference()),
            2,
            ReadFilter::All,
            None,
            &c,
        )
        .await;
    assert!(matches!(err, Err(DriverError::Refused(_))), "{err:?}");

    // A click through the shadow root and into the frame reaches the page.
    browser
        .click(els["Shadow action"].reference(), None, &c)
        .await
        .unwrap();
    browser
        .click(els["Framed"].reference(), None, &c)
        .await
        .unwrap();
    assert_eq!(eval(&browser, "window.shadowClicks").await, 1);
    assert_eq!(eval(&browser, "window.framedClicks").await, 1);

    // Stale refs, each refused while the page shows nothing was clicked.
    let read = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    let els = by_label(&read);
    eval(
        &browser,
        "const o = document.getElementById('rep'); o.replaceWith(o.cloneNode(true), o.cloneNode(true)); 1",
    )
    .await;
    let text = refused(browser.click(els["Replace me"].reference(), None, &c).await);
    assert!(text.contains("2 elements now match it"), "{text}");
    eval(
        &browser,
        "document.getElementById('ren').textContent = 'Renamed'; 1",
    )
    .await;
    let text = refused(browser.click(els["Rename me"].reference(), None, &c).await);
    assert!(text.contains("role or label changed"), "{text}");
    eval(&browser, "history.pushState({}, '', '/route'); 1").await;
    let text = refused(browser.click(els["Route me"].reference(), None, &c).await);
    assert!(text.contains("navigated"), "{text}");
    assert_eq!(
        eval(
            &browser,
            "[window.repClicks, window.renClicks, window.spaClicks]"
        )
        .await,
        serde_json::json!([null, null, null])
    );

    // After a navigation, the old ref never reaches the new page's look-alike element.
    let old = els["Replace me"].reference().clone();
    browser
        .navigate(&a.page_url("/other"), None, &c)
        .await
        .unwrap();
    let text = refused(browser.click(&old, None, &c).await);
    assert!(text.contains("stale"), "{text}");
    assert_eq!(eval(&browser, "document.title").await, "Other");
    let fresh = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    let fresh_ref = fresh.elements()[0].reference();
    assert!(
        read.elements().iter().all(|e| e.reference() != fresh_ref),
        "a ref was reused"
    );
    browser.click(fresh_ref, None, &c).await.unwrap();
    assert_eq!(eval(&browser, "document.title").await, "hit");
    let unknown = refused(browser.click(&Ref::new("e999999").unwrap(), None, &c).await);
    assert!(unknown.contains("Unknown ref"), "{unknown}");
}

/// Regression: the text around a field ran together ("Display nameUsed by Account.") because
/// the walk skipped the field's box without a separator.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fields_box_separates_the_text_around_it() {
    let a = Server::start().await;
    a.html(
        "/",
        r#"<!doctype html><title>Fields</title>
<p><label for=n>Display name</label><input id=n>Used by Account.</p>
<p>Pick<select aria-label="Pick"><option>A</option></select>then save</p>"#,
    );
    let mut browser = launch(config()).await;
    let c = cancel();
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();
    let read = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    assert!(
        read.text().contains("Display name Used by Account."),
        "{:?}",
        read.text()
    );
    assert!(read.text().contains("Pick then save"), "{:?}", read.text());
}

/// A capped read covers the page up to one point: the text stops where the elements stop, so
/// the model never reads about a control it has no ref for (the rest: find, scoped reads).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capped_read_stops_its_text_where_its_elements_stop() {
    let a = Server::start().await;
    let rows: String = (0..400)
        .map(|i| format!("<p>Row {i:04} <button>Open {i:04}</button></p>"))
        .collect();
    a.html("/", &format!("<!doctype html><title>Rows</title>{rows}"));
    let mut config = config();
    config.read.report_bytes = 4_000;
    let mut browser = launch(config).await;
    let c = cancel();
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();
    let read = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    assert!(read.omitted().contains(&Omitted::ReportLimit));
    assert!(read.omitted().contains(&Omitted::TextLimit));
    let n = read.elements().len();
    assert!(n > 5 && n < 400, "{n} elements");
    let last = read.elements()[n - 1].label().to_owned();
    assert_eq!(last, format!("Open {:04}", n - 1));
    assert!(
        read.text().contains(&format!("Row {:04}", n - 1)),
        "{}",
        read.text()
    );
    assert!(
        !read.text().contains(&format!("Row {:04}", n + 1)),
        "the text goes past the last element: {}",
        read.text()
    );
}

/// A password's value never reaches any read, whatever role or label the field claims: not as
/// a label, not as page text, not through find, scoped reads, page text or a text wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_never_reaches_a_read_whatever_its_role() {
    let a = Server::start().await;
    a.html(
        "/",
        "<title>Login</title><main aria-label=Login><h1>Sign in</h1>\
         <input type=password role=button value=hunter2-a>\
         <input type=password role=checkbox value=hunter2-b>\
         <input type=password role=slider aria-valuenow=3 value=hunter2-c>\
         <input type=password list=opts value=hunter2-d><datalist id=opts><option value=x></datalist>\
         <label>Code <input autocomplete=one-time-code role=button value=hunter2-e></label>\
         <textarea autocomplete=current-password>hunter2-f</textarea>\
         <input type=PASSWORD role=link value=hunter2-g aria-labelledby=self id=self>\
         <button type=button>Go</button></main>",
    );
    let mut browser = launch(config()).await;
    let c = cancel();
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();
    let mut seen = Vec::new();
    let read = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    assert!(read.omitted().contains(&Omitted::Private), "{read:?}");
    assert!(
        read.elements()
            .iter()
            .filter(|e| e.label() != "Go")
            .all(|e| e.role() == Role::Textbox && e.value().is_none()),
        "{read:#?}"
    );
    seen.push(serde_json::to_string(&read).unwrap());
    seen.push(read.to_compact());
    for query in ["button", "hunter2", "checkbox", "slider", "Code"] {
        let found = structured(browser.find(query, None, &c).await.unwrap());
        seen.push(serde_json::to_string(&found).unwrap());
    }
    let scoped = browser
        .read_page_scoped(None, 8, ReadFilter::All, None, &c)
        .await
        .unwrap();
    seen.push(serde_json::to_string(&scoped).unwrap());
    seen.push(scoped.to_compact());
    let text = structured(browser.get_page_text(None, &c).await.unwrap());
    seen.push(text.text().to_owned());
    for s in &seen {
        assert!(!s.contains("hunter2"), "a password leaked: {s}");
    }
    let waited = browser
        .wait_for(
            &hands_core::browser::args::WaitText::parse("hunter2").unwrap(),
            std::time::Duration::from_millis(300),
            None,
            &c,
        )
        .await;
    assert!(waited.is_err(), "a wait found a password: {waited:?}");
}

/// An article with a few controls among its paragraphs.
const ARTICLE: &str = r#"<!doctype html><title>Article</title>
<h1>The history of the lighthouse</h1>
<p>Lighthouses have guided sailors for more than two thousand years, from the Pharos of
Alexandria to the automated beacons of today. Their keepers lived hard lives on rocks.</p>
<label>Search <input id=q value="lamps"></label>
<p>The Fresnel lens, invented in 1822, let a small flame be seen twenty miles out to sea, and
every coastal nation soon rebuilt its lights around it, at great cost and greater benefit.</p>
<button type=button>Subscribe</button>
<p>Electric lamps replaced oil at the end of the nineteenth century; by the late twentieth
most lights were automated, and the keepers' cottages became museums and holiday homes.</p>
<select aria-label="Sort"><option value=new>Newest</option><option value=old>Oldest</option></select>
<input type=checkbox id=keep><label for=keep>Keep me posted</label>
<p>Today a lighthouse is as much a monument as a navigational aid, though many still shine
every night, their beams sweeping the same waters their first keepers watched.</p>
<a href="/more">Read more</a>
<button disabled>Disabled action</button>
"#;

/// `filter: "interactive"` carries the operable elements only: no page text, every enabled
/// control with the same ref the full read gave it, at most half the size of the full read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interactive_read_carries_controls_only() {
    let a = Server::start().await;
    a.html("/", ARTICLE);
    let mut browser = launch(config()).await;
    let c = cancel();
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();

    let all = structured(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    let interactive = structured(
        browser
            .read_page(ReadFilter::Interactive, None, &c)
            .await
            .unwrap(),
    );
    assert!(all.text().contains("Fresnel lens"), "{all:#?}");
    assert_eq!(interactive.text(), "", "{interactive:#?}");
    let compact = interactive.to_compact();
    assert!(!compact.contains("Lighthouses"), "{compact}");

    let full = by_label(&all);
    let controls = by_label(&interactive);
    for label in ["Search", "Subscribe", "Sort", "Keep me posted", "Read more"] {
        let (f, i) = (&full[label], &controls[label]);
        assert_eq!(i.reference(), f.reference(), "{label}");
        assert_eq!(i.role(), f.role(), "{label}");
        assert_eq!(i.value(), f.value(), "{label}");
    }
    assert!(full.contains_key("Disabled action"));
    assert!(!controls.contains_key("Disabled action"));
    assert_eq!(interactive.elements().len(), all.elements().len() - 1);

    let (n_all, n_interactive) = (all.to_compact().len(), compact.len());
    let json_all = serde_json::to_string(&all).unwrap().len();
    let json_interactive = serde_json::to_string(&interactive).unwrap().len();
    println!(
        "compact: all {n_all} B, interactive {n_interactive} B; JSON: all {json_all} B, \
         interactive {json_interactive} B"
    );
    assert!(2 * n_interactive <= n_all, "{n_interactive} vs {n_all}");
    assert!(
        2 * json_interactive <= json_all,
        "{json_interactive} vs {json_all}"
    );

    // The scoped read under the same filter: the controls of the scope, no text.
    let scoped = browser
        .read_page_scoped(None, 32, ReadFilter::Interactive, None, &c)
        .await
        .unwrap();
    assert_eq!(scoped.read().text(), "");
    assert!(
        scoped
            .read()
            .elements()
            .iter()
            .any(|e| e.label() == "Subscribe" && e.reference() == full["Subscribe"].reference())
    );
}
