//! Tier 3: a browser that cannot leak — WebRTC sends no UDP, the browser resolves no host name, browser-side requests (FedCM, payment manifests, speculation rules, sandboxed frames) never reach an origin off the allow-list, launched or attached; untitled documents are reported by origin.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use hands_cdp::{CdpBrowser, RequestInfo, Verdict};
use hands_core::browser::Browser;
use hands_core::browser::args::{PageUrl, WaitText};

/// A local UDP listener counting what arrives.
struct UdpSink {
    port: u16,
    count: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl UdpSink {
    async fn start() -> UdpSink {
        let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let port = socket.local_addr().unwrap().port();
        let count = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&count);
        let task = tokio::spawn(async move {
            let mut buf = [0u8; 2048];
            while socket.recv_from(&mut buf).await.is_ok() {
                seen.fetch_add(1, Ordering::SeqCst);
            }
        });
        UdpSink { port, count, task }
    }

    fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }
}

impl Drop for UdpSink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A page that tries every WebRTC way out: STUN and TURN servers at the listener, and a forged
/// remote candidate pointing at it; the title says when it is done trying (or could not start).
fn webrtc_page(udp: u16) -> String {
    format!(
        r#"<title>rtc</title><p>rtc</p><script>
(async () => {{
  if (typeof RTCPeerConnection !== 'function') {{ document.title = 'no webrtc'; return; }}
  const pc = new RTCPeerConnection({{iceServers: [{{urls: 'stun:127.0.0.1:{udp}'}},
    {{urls: 'turn:127.0.0.1:{udp}?transport=udp', username: 'u', credential: 'p'}}]}});
  pc.createDataChannel('x');
  const gathered = new Promise((r) => pc.addEventListener('icegatheringstatechange',
    () => pc.iceGatheringState === 'complete' && r()));
  await pc.setLocalDescription(await pc.createOffer());
  const other = new RTCPeerConnection();
  await other.setRemoteDescription(pc.localDescription);
  await pc.setRemoteDescription(await other.createAnswer());
  await pc.addIceCandidate({{candidate: 'candidate:1 1 udp 2122260223 127.0.0.1 {udp} typ host',
    sdpMid: '0', sdpMLineIndex: 0}});
  await gathered;
  document.title = 'tried';
}})().catch((e) => document.title = 'error ' + e.message);
</script>"#
    )
}

async fn wait_title(browser: &CdpBrowser, done: &[&str]) -> String {
    for _ in 0..200 {
        let title = eval(browser, "document.title").await;
        let title = title.as_str().unwrap_or("").to_owned();
        if done.contains(&title.as_str()) || title.starts_with("error") {
            return title;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the page never finished");
}

/// A launched browser under an allow-list: a page that tries STUN, TURN and a forged remote
/// candidate at a local UDP listener gets nothing out (on Chromium's defaults, 76 packets arrive
/// within a second: measured).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webrtc_sends_no_udp_from_a_launched_browser() {
    let a = Server::start().await;
    let sink = UdpSink::start().await;
    a.html("/rtc", &webrtc_page(sink.port));
    let mut config = config();
    config.policy = allow_only(a.origin());
    let mut browser = launch(config).await;
    let c = cancel();
    browser
        .navigate(&a.page_url("/rtc"), None, &c)
        .await
        .unwrap();
    assert_eq!(wait_title(&browser, &["tried"]).await, "tried");
    // Checks would start at once on gathering; give them a second to prove nothing comes.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(sink.count(), 0, "UDP datagrams reached the listener");
}

/// Every host name resolution the browser attempts, as its own net log records it: the name of
/// each `HOST_RESOLVER_MANAGER_REQUEST` after the resolver rules applied.
fn resolutions(net_log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(net_log).unwrap();
    let log: serde_json::Value = serde_json::from_str(&text).unwrap();
    let kinds = &log["constants"]["logEventTypes"];
    let request = kinds["HOST_RESOLVER_MANAGER_REQUEST"].as_i64().unwrap();
    log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"].as_i64() == Some(request))
        .filter_map(|e| e["params"]["host"].as_str().map(str::to_owned))
        .collect()
}

/// A launched browser resolves no host name a page chose, nor any of its own (the proxy
/// resolves names, and only for connections the policy allowed): DNS prefetch, preconnect,
/// fetch, images, WebSocket and WebRTC servers named under `leak.test` never reach the
/// browser's resolver as names. `probe.localhost`, which Chromium answers itself, shows the
/// observation works. (A resolution made without a net-log source, such as WebRTC's, would not
/// show here; WebRTC has no UDP to resolve for in a launched browser, see above.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_resolves_no_host_name_itself() {
    let a = Server::start().await;
    let port = a.port;
    a.html(
        "/dns",
        &format!(
            r#"<title>dns</title>
<link rel=dns-prefetch href="//prefetch.leak.test"><link rel=preconnect href="http://preconnect.leak.test">
<img src="http://img.leak.test/x.png"><p>dns</p><script>
fetch('http://fetch.leak.test/x').catch(() => 0);
fetch('http://probe.localhost:{port}/probe').catch(() => 0);
try {{ new WebSocket('ws://socket.leak.test/'); }} catch (e) {{}}
if (typeof RTCPeerConnection === 'function') {{
  const pc = new RTCPeerConnection({{iceServers: [{{urls: 'stun:stun.leak.test:3478'}}]}});
  pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o));
}}
</script>"#
        ),
    );
    let dir = std::env::temp_dir().join(format!("hands-netlog-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let net_log = dir.join("net.json");
    let mut config = config();
    let (origin, probe) = (a.origin(), format!("http://probe.localhost:{port}"));
    config.policy = Arc::new(move |r: &RequestInfo<'_>| {
        let o = hands_cdp::policy::origin_of(r.url);
        if o == origin || o == probe {
            Verdict::Allow
        } else {
            Verdict::Deny {
                reason: "not on the test allow-list".into(),
            }
        }
    });
    config
        .launch
        .extra_args
        .push(format!("--log-net-log={}", net_log.display()));
    let mut browser = launch(config).await;
    let c = cancel();
    browser
        .navigate(&a.page_url("/dns"), None, &c)
        .await
        .unwrap();
    // The probe is served: by then the page has made every request above.
    for _ in 0..200 {
        if a.paths().iter().any(|p| p == "/probe") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    // The net log is complete once the browser has closed.
    let mut exit = browser.chromium().unwrap().exit_watch();
    let _ = browser
        .connection()
        .call(None, "Browser.close", serde_json::json!({}))
        .await;
    let _ = tokio::time::timeout(Duration::from_secs(10), exit.wait_for(Option::is_some)).await;
    drop(browser);
    let names = resolutions(&net_log);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        names.iter().any(|n| n.contains("probe.localhost")),
        "the net log shows no resolution at all: {names:?}"
    );
    for name in &names {
        let host = name.split("://").last().unwrap_or(name);
        assert!(
            host.starts_with("127.0.0.1")
                || host.starts_with("~notfound")
                || host.contains("localhost"),
            "the browser resolved {name} itself: {names:?}"
        );
    }
}

/// What an attacker page does to reach origin `bo` past request interception: FedCM, payment
/// manifests (from the page and from a fresh frame), speculation rules (a cross-origin prefetch
/// when `prefetch` is set, and a same-origin prerender whose own script fetches `bo`: a page
/// no tab owns), a
/// sandboxed `srcdoc` frame (a process of its own), and WebRTC at `udp`.
fn attack_page(bo: &str, udp: u16, prefetch: bool) -> String {
    let prefetch = if prefetch {
        format!(
            r#"<script type=speculationrules>{{"prefetch":[{{"source":"list","urls":["{bo}/spec-prefetch"]}}]}}</script>"#
        )
    } else {
        String::new()
    };
    format!(
        r#"<title>attack</title><p>attack</p>{prefetch}
<script type=speculationrules>{{"prerender":[{{"source":"list","urls":["/prerendered"]}}]}}</script>
<iframe sandbox="allow-scripts" srcdoc="<script>fetch('{bo}/sandboxed-fetch').catch(() => 0); new Image().src = '{bo}/sandboxed-img';</script>"></iframe>
<script>
const pay = (w, path) => {{ try {{ new w.PaymentRequest([{{supportedMethods: '{bo}/' + path}}],
  {{total: {{label: 'x', amount: {{currency: 'USD', value: '1'}}}}}}).canMakePayment().catch(() => 0); }} catch (e) {{}} }};
const fedcm = (w, path) => {{ try {{ w.navigator.credentials.get({{identity: {{providers:
  [{{configURL: '{bo}/' + path, clientId: '1'}}]}}}}).catch(() => 0); }} catch (e) {{}} }};
pay(window, 'pay'); fedcm(window, 'fedcm.json');
const f = document.createElement('iframe'); document.body.append(f);
pay(f.contentWindow, 'pay-frame'); fedcm(f.contentWindow, 'fedcm-frame.json');
</script>{rtc}"#,
        rtc = webrtc_page(udp).replace("<title>rtc</title><p>rtc</p>", "")
    )
}

/// Serves the attack on `a`, lets it run until the page says it tried, and returns what the
/// other origin saw and what arrived over UDP.
async fn run_attack(browser: &mut CdpBrowser, a: &Server, b: &Server, sink: &UdpSink) {
    let c = cancel();
    browser
        .navigate(&a.page_url("/attack"), None, &c)
        .await
        .unwrap();
    let title = wait_title(browser, &["tried", "no webrtc"]).await;
    assert!(title == "tried" || title == "no webrtc", "{title}");
    // The sandboxed frame and the speculation rules run on their own; a wait for text in the
    // page is the last thing asked of it before counting.
    browser
        .wait_for(
            &WaitText::parse("attack").unwrap(),
            Duration::from_secs(2),
            None,
            &c,
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        b.paths(),
        Vec::<String>::new(),
        "the other origin was reached"
    );
    assert_eq!(sink.count(), 0, "UDP datagrams reached the listener");
}

fn attack_servers(a: &Server, b: &Server, sink: &UdpSink, prefetch: bool) {
    let bo = b.origin();
    a.html("/attack", &attack_page(&bo, sink.port, prefetch));
    a.html(
        "/prerendered",
        &format!("<p>prerendered</p><script>fetch('{bo}/from-prerender').catch(() => 0)</script>"),
    );
    b.route(
        "/fedcm.json",
        Route::Body {
            content_type: "application/json",
            body: br#"{"accounts_endpoint":"/accounts","id_assertion_endpoint":"/assert","login_url":"/login"}"#.to_vec(),
            headers: vec![],
        },
    );
}

/// A launched browser without the policy proxy is still fenced by its settings, its flags and
/// browser-wide interception: the other origin sees nothing, speculation rules included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launched_browser_without_its_proxy_is_fenced() {
    let (a, b, sink) = (
        Server::start().await,
        Server::start().await,
        UdpSink::start().await,
    );
    attack_servers(&a, &b, &sink, true);
    let mut config = config();
    config.policy = allow_only(a.origin());
    config.network_proxy = false;
    let mut browser = launch(config).await;
    run_attack(&mut browser, &a, &b, &sink).await;
}

/// A Chromium started by someone else (none of hands' flags or settings), then attached to with
/// no proxy: browser-wide interception stops the sandboxed frame and the prerendered page, the
/// page fence takes WebRTC, payments and FedCM away. (A cross-origin speculation-rules prefetch
/// cannot be stopped in such a browser; ARCHITECTURE.md says so.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_browser_without_a_proxy_is_fenced() {
    let (a, b, sink) = (
        Server::start().await,
        Server::start().await,
        UdpSink::start().await,
    );
    attack_servers(&a, &b, &sink, false);
    let foreign = ForeignChromium::start();
    let mut config = config();
    config.policy = allow_only(a.origin());
    let mut browser = CdpBrowser::attach(&foreign.ws_url().await, config)
        .await
        .unwrap();
    assert_eq!(
        eval(&browser, "typeof RTCPeerConnection").await,
        "undefined",
        "the fence is in place from the first document"
    );
    run_attack(&mut browser, &a, &b, &sink).await;
    let c = cancel();
    browser
        .navigate(&a.page_url("/attack"), None, &c)
        .await
        .unwrap();
    // The page cannot put the APIs back.
    assert_eq!(
        eval(
            &browser,
            "(() => { try { delete window.PaymentRequest; window.PaymentRequest = 1; } catch (e) {} \
             return typeof PaymentRequest + ' ' + typeof f.contentWindow.RTCPeerConnection; })()"
        )
        .await,
        "undefined undefined"
    );
    drop(browser);
}

/// A document without a title is reported by its origin, never by the URL Chromium puts in its
/// place (path, query and fragment).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untitled_document_is_reported_by_its_origin() {
    let a = Server::start().await;
    a.html("/untitled", "<p>no title</p>");
    a.html("/titled", "<title>Inbox</title><p>titled</p>");
    let mut browser = launch(config()).await;
    let c = cancel();
    let url = PageUrl::parse("url", &a.url("/untitled?token=s3cret#frag")).unwrap();
    browser.navigate(&url, None, &c).await.unwrap();
    let state = browser.state(&c).await.unwrap();
    assert_eq!(state.tabs()[0].title, a.origin());
    browser
        .navigate(&a.page_url("/titled"), None, &c)
        .await
        .unwrap();
    let state = browser.state(&c).await.unwrap();
    assert_eq!(state.tabs()[0].title, "Inbox");
}
