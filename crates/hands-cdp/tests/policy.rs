//! Tier 3: the request-level network policy against real Chromium, asserting what the disallowed origin's server saw (nothing), plus tab bookkeeping.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use hands_cdp::NAVIGATION_BLOCKED;
use hands_core::browser::args::{DiagnosticsSource, PageUrl, ReadFilter};
use hands_core::browser::read::Ref;
use hands_core::browser::{Browser, DriverError};

fn refused_text(result: Result<Option<String>, DriverError>) -> String {
    match result {
        Err(DriverError::Refused(e)) => e.text().to_owned(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Every way a page can reach another origin, and none of them does: the disallowed server sees
/// zero requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disallowed_origin_sees_zero_requests() {
    let a = Server::start().await;
    let b = Server::start().await;
    let bo = b.origin();
    let b_ws = format!("ws://127.0.0.1:{}/ws", b.port);
    a.html("/", "<title>A</title><p>home</p>");
    a.route("/redirect1", Route::Redirect("/redirect2".into()));
    a.route("/redirect2", Route::Redirect(format!("{bo}/from-redirect")));
    a.html(
        "/popup",
        &format!(
            "<button id=open onclick=\"window.open('{bo}/popup-target')\">Open popup</button>\
             <a id=blank href='{bo}/blank-target' target=_blank>Blank link</a>"
        ),
    );
    a.route(
        "/worker.js",
        Route::Body {
            content_type: "text/javascript",
            body: format!("fetch('{bo}/worker-fetch').catch(() => {{}}); postMessage('ran');")
                .into_bytes(),
            headers: vec![],
        },
    );
    a.html(
        "/embeds",
        &format!(
            "<p>embeds</p><iframe src='{bo}/iframe'></iframe><img src='{bo}/img.png'>\
             <link rel=stylesheet href='{bo}/style.css'><script src='{bo}/script.js'></script>\
             <iframe name=sink></iframe>\
             <form id=f method=post action='{bo}/form-post' target=sink><input name=q value=1></form>\
             <script>\
               fetch('{bo}/fetch').catch(() => {{}});\
               navigator.sendBeacon('{bo}/beacon', 'x');\
               try {{ new EventSource('{bo}/sse'); }} catch (e) {{}}\
               try {{ new WebSocket('{b_ws}'); }} catch (e) {{}}\
               const x = new XMLHttpRequest(); x.open('GET', '{bo}/xhr'); x.send();\
               const w = new Worker('/worker.js'); w.onmessage = (m) => document.title = 'worker ' + m.data;\
               document.getElementById('f').submit();\
             </script>"
        ),
    );
    a.html(
        "/meta",
        &format!("<meta http-equiv=refresh content='0;url={bo}/meta-target'><p>meta</p>"),
    );
    a.html(
        "/jsnav",
        &format!(
            "<p>js</p><script>setTimeout(() => location.href = '{bo}/jsnav-target', 10)</script>"
        ),
    );
    a.route(
        "/sw.js",
        Route::Body {
            content_type: "text/javascript",
            body: format!(
                "self.addEventListener('install', (e) => {{ e.waitUntil(fetch('{bo}/sw-install').catch(() => 0)); self.skipWaiting(); }});\
                 self.addEventListener('activate', (e) => e.waitUntil(clients.claim()));\
                 self.addEventListener('fetch', (e) => {{ if (e.request.url.endsWith('/via-sw')) \
                   e.respondWith(fetch('{bo}/sw-fetch').then(() => new Response('reached'), () => new Response('blocked'))); }});"
            )
            .into_bytes(),
            headers: vec![],
        },
    );
    a.html(
        "/sw",
        "<p>sw</p><script>navigator.serviceWorker.register('/sw.js')\
           .then(() => navigator.serviceWorker.ready).then(() => {\
             const done = () => document.title = 'ready';\
             if (navigator.serviceWorker.controller) done();\
             else navigator.serviceWorker.addEventListener('controllerchange', done); })</script>",
    );

    let mut config = config();
    config.policy = allow_only(a.origin());
    let mut browser = launch(config).await;
    let c = cancel();

    // Direct navigation, and a redirect chain that ends at the disallowed origin.
    let direct = browser.navigate(&b.page_url("/direct"), None, &c).await;
    assert_eq!(refused_text(direct), NAVIGATION_BLOCKED);
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();
    let redirected = browser.navigate(&a.page_url("/redirect1"), None, &c).await;
    assert_eq!(refused_text(redirected), NAVIGATION_BLOCKED);
    assert!(
        a.paths().contains(&"/redirect2".to_owned()),
        "{:?}",
        a.paths()
    );

    // Embedded resources, fetch, beacon, EventSource, WebSocket, XHR, a worker's fetch, a form post.
    browser
        .navigate(&a.page_url("/embeds"), None, &c)
        .await
        .unwrap();
    let worker_ran = browser
        .wait_for(
            &hands_core::browser::args::WaitText::parse("embeds").unwrap(),
            std::time::Duration::from_secs(5),
            None,
            &c,
        )
        .await;
    assert!(worker_ran.is_ok());
    // Let the worker post back: it ran (and so did its fetch, which is blocked below).
    let title = hands_core::browser::args::WaitText::parse("embeds").unwrap();
    let _ = title;
    for _ in 0..50 {
        if eval(&browser, "document.title").await == "worker ran" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(eval(&browser, "document.title").await, "worker ran");
    // Let the worker and the form finish trying.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        a.paths().contains(&"/worker.js".to_owned()),
        "{:?}",
        a.paths()
    );

    // Meta refresh and script navigation.
    browser
        .navigate(&a.page_url("/meta"), None, &c)
        .await
        .unwrap();
    browser
        .navigate(&a.page_url("/jsnav"), None, &c)
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;

    // A pop-up from a click and a target=_blank link: each is a new tab, and active.
    browser
        .navigate(&a.page_url("/popup"), None, &c)
        .await
        .unwrap();
    let read = browser.read_page(ReadFilter::All, None, &c).await.unwrap();
    let refs = refs_by_label(&read);
    browser.click(&refs["Open popup"], None, &c).await.unwrap();
    let state = browser.state(&c).await.unwrap();
    assert_eq!(state.tabs().len(), 2, "{state:?}");
    assert_eq!(state.active().unwrap().id.as_str(), "t2");
    browser.switch_tab(&state.tabs()[0].id, &c).await.unwrap();
    browser.click(&refs["Blank link"], None, &c).await.unwrap();
    let state = browser.state(&c).await.unwrap();
    assert_eq!(state.tabs().len(), 3, "{state:?}");
    assert_eq!(state.active().unwrap().id.as_str(), "t3");

    // A service worker (last: it then serves every page of its origin): attached paused like
    // any target, its own requests (at install, and on behalf of the page) are checked.
    browser.switch_tab(&state.tabs()[0].id, &c).await.unwrap();
    browser
        .navigate(&a.page_url("/sw"), None, &c)
        .await
        .unwrap();
    for _ in 0..100 {
        if eval(&browser, "document.title").await == "ready" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(eval(&browser, "document.title").await, "ready");
    assert_eq!(
        eval(&browser, "fetch('/via-sw').then((r) => r.text())").await,
        "blocked"
    );

    // The disallowed server saw nothing at all.
    assert_eq!(b.paths(), Vec::<String>::new());
    let blocked = browser.blocked_requests();
    // fetch() and EventSource report as XHR, sendBeacon as Ping; the WebSocket handshake, which
    // interception never sees, is refused by the proxy as a connection.
    for kind in ["Document", "Image", "Script", "Stylesheet", "XHR", "Ping"] {
        assert!(
            blocked
                .iter()
                .any(|r| r.resource_type == kind && r.origin == bo),
            "no blocked {kind}: {blocked:?}"
        );
    }
    let ws_origin = format!("wss://127.0.0.1:{}", b.port);
    assert!(
        blocked
            .iter()
            .any(|r| r.resource_type == "Connection" && r.origin == ws_origin),
        "{blocked:?}"
    );
    assert!(blocked.iter().all(|r| !r.origin.contains("/from-redirect")));
    // Every HTTP request to the disallowed origin was stopped by interception already; the proxy
    // saw none of them.
    assert!(
        !blocked
            .iter()
            .any(|r| r.resource_type == "Connection" && r.origin == bo),
        "{blocked:?}"
    );

    // Blocked requests show in the tab's network history, by origin only.
    let diag = browser
        .read_diagnostics(DiagnosticsSource::Network, 100, None, &c)
        .await
        .unwrap();
    assert!(
        diag.text().contains(&format!("BLOCKED GET {bo} [Script]")),
        "{}",
        diag.text()
    );
    assert!(!diag.text().contains("popup-target"));
    assert_eq!(browser.unintercepted_targets(), 0);
}

fn refs_by_label(
    read: &Option<hands_core::browser::driver::ReadResult>,
) -> std::collections::HashMap<String, Ref> {
    match read {
        Some(hands_core::browser::driver::ReadResult::Structured(r)) => r
            .elements()
            .iter()
            .map(|e| (e.label().to_owned(), e.reference().clone()))
            .collect(),
        other => panic!("no structured read: {other:?}"),
    }
}

/// Tabs keep stable ids that are never reused; exactly one is active; closing the active tab
/// activates the one used before it; a page whose `load` never fires answers within the cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tabs_keep_ids_and_one_active() {
    let a = Server::start().await;
    a.html("/one", "<title>One</title><p>one</p>");
    a.html("/two", "<title>Two</title><p>two</p>");
    a.route("/never", Route::Hang);
    let mut config = config();
    config.load_cap = std::time::Duration::from_secs(1);
    let mut browser = launch(config).await;
    let c = cancel();
    browser
        .navigate(&a.page_url("/one"), None, &c)
        .await
        .unwrap();
    let text = browser
        .new_tab(Some(&a.page_url("/two")), &c)
        .await
        .unwrap()
        .unwrap();
    assert!(text.starts_with("Opened tab t2."), "{text}");
    let state = browser.state(&c).await.unwrap();
    let titles: Vec<(&str, &str, bool)> = state
        .tabs()
        .iter()
        .map(|t| (t.id.as_str(), t.title.as_str(), t.active))
        .collect();
    assert_eq!(titles, vec![("t1", "One", false), ("t2", "Two", true)]);
    assert_eq!(state.tabs()[1].url, a.url("/two"));

    browser.new_tab(None, &c).await.unwrap();
    let t1 = hands_core::browser::TabId::new("t1").unwrap();
    let t3 = hands_core::browser::TabId::new("t3").unwrap();
    browser.switch_tab(&t1, &c).await.unwrap();
    browser.switch_tab(&t3, &c).await.unwrap();
    browser.close_tab(&t3, &c).await.unwrap();
    let state = browser.state(&c).await.unwrap();
    assert_eq!(state.active().unwrap().id.as_str(), "t1");
    // Actions on the active tab reach t1's page.
    assert_eq!(eval(&browser, "document.title").await, "One");
    let text = browser.new_tab(None, &c).await.unwrap().unwrap();
    assert_eq!(text, "Opened tab t4.");
    let closed = browser.switch_tab(&t3, &c).await;
    assert!(matches!(closed, Err(DriverError::Refused(_))), "{closed:?}");

    // A page that never finishes loading: the navigation still answers.
    let never = browser
        .navigate(&a.page_url("/never"), None, &c)
        .await
        .unwrap()
        .unwrap();
    assert!(never.contains("still loading"), "{never}");
    let read = browser.get_page_text(None, &c).await.unwrap();
    match read {
        Some(hands_core::browser::driver::ReadResult::Structured(r)) => {
            assert_eq!(r.text(), "partial")
        }
        other => panic!("{other:?}"),
    }

    // Cancellation reaches navigations and waits: each stops when its token fires.
    let cancel_soon = || {
        let token = cancel();
        let fire = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            fire.cancel();
        });
        token
    };
    let token = cancel_soon();
    let stopped = browser.navigate(&a.page_url("/never"), None, &token).await;
    assert!(
        matches!(stopped, Err(DriverError::Cancelled)),
        "{stopped:?}"
    );
    let token = cancel_soon();
    let text = hands_core::browser::args::WaitText::parse("never there").unwrap();
    let stopped = browser
        .wait_for(&text, std::time::Duration::from_secs(20), None, &token)
        .await;
    assert!(
        matches!(stopped, Err(DriverError::Cancelled)),
        "{stopped:?}"
    );
    let _ = PageUrl::parse("url", "about:blank").unwrap();
}
