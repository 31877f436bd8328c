//! Test helpers: a tiny HTTP server on 127.0.0.1:0 that serves fixed routes and records every request it sees, a driver factory, and a browser someone else started (with a DevTools port) to attach to.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use hands_cdp::{CdpBrowser, DriverConfig, SettleConfig};
use hands_core::CancellationToken;
use hands_core::browser::args::PageUrl;

/// What a path answers.
#[derive(Clone, Debug)]
pub enum Route {
    /// 200 with an HTML body.
    Html(String),
    /// 200 with a body of a content type, and extra headers.
    Body {
        content_type: &'static str,
        body: Vec<u8>,
        headers: Vec<(&'static str, String)>,
    },
    /// 302 to a location.
    Redirect(String),
    /// A status with a text body.
    Status(u16, String),
    /// Headers and the start of a body are sent, the rest never comes.
    Hang,
    /// 200 with a text body, sent after a delay (a slow API).
    Delayed(Duration, String),
}

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Hit {
    pub method: String,
    pub path: String,
    pub body: String,
}

/// A local HTTP server; each instance is its own origin.
pub struct Server {
    pub port: u16,
    routes: Arc<Mutex<HashMap<String, Route>>>,
    hits: Arc<Mutex<Vec<Hit>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    pub async fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let routes: Arc<Mutex<HashMap<String, Route>>> = Arc::default();
        let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let (r, h) = (Arc::clone(&routes), Arc::clone(&hits));
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    break;
                };
                let (r, h) = (Arc::clone(&r), Arc::clone(&h));
                tokio::spawn(async move {
                    let _ = serve(stream, r, h).await;
                });
            }
        });
        Server {
            port,
            routes,
            hits,
            task,
        }
    }

    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin())
    }

    pub fn page_url(&self, path: &str) -> PageUrl {
        PageUrl::parse("url", &self.url(path)).unwrap()
    }

    pub fn route(&self, path: &str, route: Route) {
        self.routes.lock().unwrap().insert(path.to_owned(), route);
    }

    pub fn html(&self, path: &str, html: &str) {
        self.route(path, Route::Html(html.to_owned()));
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    pub fn hits_clear(&self) {
        self.hits.lock().unwrap().clear();
    }

    pub fn paths(&self) -> Vec<String> {
        self.hits().into_iter().map(|h| h.path).collect()
    }
}

async fn serve(
    mut stream: tokio::net::TcpStream,
    routes: Arc<Mutex<HashMap<String, Route>>>,
    hits: Arc<Mutex<Vec<Hit>>>,
) -> std::io::Result<()> {
    loop {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let mut lines = head.lines();
        let mut first = lines.next().unwrap_or("").split_whitespace();
        let method = first.next().unwrap_or("").to_owned();
        let path = first.next().unwrap_or("/").to_owned();
        let length: usize = lines
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + length {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        let body = String::from_utf8_lossy(&buf[head_end..]).to_string();
        hits.lock().unwrap().push(Hit {
            method,
            path: path.clone(),
            body,
        });
        let key = path.split('?').next().unwrap_or("").to_owned();
        let route = routes.lock().unwrap().get(&key).cloned();
        let (status, content_type, body, headers): (u16, &str, Vec<u8>, Vec<(&str, String)>) =
            match route {
                Some(Route::Html(html)) => {
                    (200, "text/html; charset=utf-8", html.into_bytes(), vec![])
                }
                Some(Route::Body {
                    content_type,
                    body,
                    headers,
                }) => (200, content_type, body, headers),
                Some(Route::Redirect(to)) => {
                    (302, "text/plain", Vec::new(), vec![("Location", to)])
                }
                Some(Route::Status(code, text)) => (code, "text/plain", text.into_bytes(), vec![]),
                Some(Route::Hang) => {
                    stream
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<html><body><p>partial</p>")
                    .await?;
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    return Ok(());
                }
                Some(Route::Delayed(delay, text)) => {
                    tokio::time::sleep(delay).await;
                    (200, "text/plain", text.into_bytes(), vec![])
                }
                None => (404, "text/plain", b"not found".to_vec(), vec![]),
            };
        let mut head = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n",
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(&body).await?;
    }
}

/// A driver config with short caps so tests stay fast.
pub fn config() -> DriverConfig {
    DriverConfig {
        settle: SettleConfig {
            cap: Duration::from_secs(3),
            ..SettleConfig::default()
        },
        load_cap: Duration::from_secs(3),
        call_timeout: Duration::from_secs(15),
        ..DriverConfig::default()
    }
}

pub async fn launch(config: DriverConfig) -> CdpBrowser {
    CdpBrowser::launch(config).await.expect("Chromium starts")
}

/// A page server holding `html` at `/`, and a launched browser (the test config) at it.
pub async fn open_page(html: &str) -> (Server, CdpBrowser) {
    let server = Server::start().await;
    server.html("/", html);
    let mut browser = launch(config()).await;
    hands_core::browser::Browser::navigate(&mut browser, &server.page_url("/"), None, &cancel())
        .await
        .unwrap();
    (server, browser)
}

pub fn cancel() -> CancellationToken {
    CancellationToken::new()
}

/// Evaluates an expression in the page's own world and returns its value as JSON.
pub async fn eval(browser: &CdpBrowser, expr: &str) -> serde_json::Value {
    let value = browser
        .call_raw(
            None,
            "Runtime.evaluate",
            serde_json::json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        )
        .await
        .expect("evaluate");
    value["result"]["value"].clone()
}

/// Every kind of animation at once, none of which ever stops.
pub const ANIMATED_PAGE: &str = r#"<!doctype html><title>Animated</title>
<style>@keyframes spin { to { transform: rotate(360deg); } }
#spinner { width: 40px; height: 40px; background: #36c; animation: spin 1s linear infinite; }
#mover { position: absolute; top: 120px; width: 30px; height: 30px; background: #c33; }</style>
<h1>Dashboard</h1><div id=spinner></div><canvas id=c width=200 height=80></canvas>
<div id=mover></div><svg width=200 height=60><circle id=dot cx=10 cy=30 r=8 fill=#3c3></circle></svg>
<button onclick="document.getElementById('out').textContent = 'Saved'">Save</button><p id=out></p>
<script>
const ctx = document.getElementById('c').getContext('2d');
const mover = document.getElementById('mover');
const dot = document.getElementById('dot');
let t = 0;
(function frame() {
  t += 1;
  ctx.clearRect(0, 0, 200, 80); ctx.fillRect(t % 200, 20, 20, 20);
  mover.style.left = (t % 300) + 'px';
  mover.style.opacity = String(0.5 + 0.5 * Math.sin(t / 10));
  dot.setAttribute('cx', String(10 + (t % 180)));
  requestAnimationFrame(frame);
})();
</script>"#;

/// A policy that allows `origin` and the schemes that reach no origin (`about:`, `data:`,
/// `blob:`), and denies everything else.
pub fn allow_only(origin: String) -> std::sync::Arc<dyn hands_cdp::RequestPolicy> {
    std::sync::Arc::new(move |r: &hands_cdp::RequestInfo<'_>| {
        let o = hands_cdp::policy::origin_of(r.url);
        if o == origin || matches!(r.url.scheme(), "about" | "data" | "blob") {
            hands_cdp::Verdict::Allow
        } else {
            hands_cdp::Verdict::Deny {
                reason: "not on the test allow-list".into(),
            }
        }
    })
}

/// A plain Chromium on a fresh profile, none of hands' settings, with a DevTools port to attach
/// to (what a browser someone else started has; hands' own launches have none), killed on drop.
pub struct ForeignChromium {
    child: Child,
    profile: std::path::PathBuf,
}

impl ForeignChromium {
    pub fn start() -> ForeignChromium {
        static N: AtomicUsize = AtomicUsize::new(0);
        let profile = std::env::temp_dir().join(format!(
            "hands-foreign-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&profile).unwrap();
        let mut command = Command::new("/usr/bin/chromium");
        command
            .args([
                "--headless",
                "--remote-debugging-port=0",
                "--no-first-run",
                // Its own look-ups (update checks) stay on this machine; pages are unaffected.
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if rustix::process::geteuid().is_root() {
            command.arg("--no-sandbox");
        }
        let child = command.arg("about:blank").spawn().unwrap();
        ForeignChromium { child, profile }
    }

    pub async fn ws_url(&self) -> String {
        let file = self.profile.join("DevToolsActivePort");
        for _ in 0..400 {
            if let Ok(text) = std::fs::read_to_string(&file)
                && let Some(url) = hands_cdp::launch::parse_active_port(&text)
            {
                return url;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the foreign browser did not start");
    }
}

impl ForeignChromium {
    /// Whether it is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for ForeignChromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
