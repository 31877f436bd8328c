//! The policy proxy as the only way out of a jail, attacked from a client the attacker
//! controls: every refused attempt leaves the canary servers without a single byte, and an
//! origin the allow-list names explicitly is reachable (so the refusals are the proxy's, not a
//! broken setup's).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hands_cdp::policy::{SharedPolicy, origin_of};
use hands_cdp::proxy::PolicyProxy;
use hands_cdp::proxy::sni::client_hello;
use hands_cdp::{RequestInfo, Verdict};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// A TCP server that records every connection it gets and everything sent on it, and answers
/// the first request head with `200 canary`.
struct Canary {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Vec<u8>>>>,
    _task: tokio::task::JoinHandle<()>,
}

impl Canary {
    async fn start(bind: &str) -> Canary {
        let listener = TcpListener::bind(bind).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let record = Arc::clone(&seen);
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let index = {
                    let mut seen = record.lock().unwrap();
                    seen.push(Vec::new());
                    seen.len() - 1
                };
                let record = Arc::clone(&record);
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let mut answered = false;
                    // Everything that arrives within a moment of the last byte is recorded.
                    while let Ok(Ok(n)) =
                        tokio::time::timeout(Duration::from_millis(400), stream.read(&mut buf))
                            .await
                    {
                        if n == 0 {
                            break;
                        }
                        let all = {
                            let mut seen = record.lock().unwrap();
                            seen[index].extend_from_slice(&buf[..n]);
                            seen[index].clone()
                        };
                        if !answered && all.windows(4).any(|w| w == b"\r\n\r\n") {
                            answered = true;
                            let _ = stream
                                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: keep-alive\r\n\r\ncanary")
                                .await;
                        }
                    }
                });
            }
        });
        Canary {
            addr,
            seen,
            _task: task,
        }
    }

    fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every connection's bytes.
    fn seen(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect()
    }
}

/// An allow-list of exact origins, compared as the URL parser serialises them.
fn allow(origins: &[String]) -> SharedPolicy {
    let origins = origins.to_vec();
    Arc::new(move |r: &RequestInfo<'_>| {
        if origins.contains(&origin_of(r.url)) {
            Verdict::Allow
        } else {
            Verdict::Deny {
                reason: "not on the test allow-list".into(),
            }
        }
    })
}

/// A proxy served on a listener handed in, as a jail hands its own.
fn proxy(policy: SharedPolicy) -> PolicyProxy {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    PolicyProxy::serve_listener(listener, policy).unwrap()
}

/// Sends `raw` to the proxy and reads its whole answer.
async fn send(proxy: &PolicyProxy, raw: &[u8]) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", proxy.port()))
        .await
        .unwrap();
    stream.write_all(raw).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

/// Lets the canaries record anything late.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(600)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_addresses_are_refused_in_every_spelling() {
    let v4 = Canary::start("127.0.0.1:0").await;
    let v6 = Canary::start("[::1]:0").await;
    let (p4, p6) = (v4.port(), v6.port());
    // The list names the canaries only by the spellings the attempts below do not use (or
    // not at all), and an unrelated public origin.
    let proxy = proxy(allow(&[
        "http://allowed.test".to_owned(),
        "https://allowed.test".to_owned(),
        format!("http://127.0.0.2:{p4}"),
    ]));
    let cases: Vec<(String, &str)> = vec![
        (
            format!("CONNECT 127.0.0.1:{p4} HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n"),
            "127.0.0.1 is a loopback address; not in the allow-list",
        ),
        (
            format!("GET http://127.0.0.1:{p4}/ HTTP/1.1\r\nHost: 127.0.0.1:{p4}\r\n\r\n"),
            "127.0.0.1 is a loopback address; not in the allow-list",
        ),
        (
            format!("GET http://2130706433:{p4}/ HTTP/1.1\r\n\r\n"),
            "127.0.0.1 is a loopback address; not in the allow-list",
        ),
        (
            format!("GET http://0x7f.1:{p4}/ HTTP/1.1\r\n\r\n"),
            "127.0.0.1 is a loopback address; not in the allow-list",
        ),
        (
            format!("GET http://017700000001:{p4}/ HTTP/1.1\r\n\r\n"),
            "127.0.0.1 is a loopback address; not in the allow-list",
        ),
        (
            format!("CONNECT 2130706433:{p4} HTTP/1.1\r\n\r\n"),
            "127.0.0.1 is a loopback address; not in the allow-list",
        ),
        (
            format!("GET http://[::ffff:127.0.0.1]:{p4}/ HTTP/1.1\r\n\r\n"),
            "::ffff:127.0.0.1 is a loopback address (carrying 127.0.0.1); not in the allow-list",
        ),
        (
            format!("CONNECT [::ffff:7f00:1]:{p4} HTTP/1.1\r\n\r\n"),
            "::ffff:127.0.0.1 is a loopback address (carrying 127.0.0.1); not in the allow-list",
        ),
        (
            format!("GET http://[::1]:{p6}/ HTTP/1.1\r\n\r\n"),
            "::1 is a loopback address; not in the allow-list",
        ),
        (
            format!("CONNECT [::1]:{p6} HTTP/1.1\r\n\r\n"),
            "::1 is a loopback address; not in the allow-list",
        ),
        (
            format!("GET http://[::]:{p6}/ HTTP/1.1\r\n\r\n"),
            ":: is the unspecified address (this host); not in the allow-list",
        ),
        (
            format!("GET http://0.0.0.0:{p4}/ HTTP/1.1\r\n\r\n"),
            "0.0.0.0 is the unspecified address (this host); not in the allow-list",
        ),
        (
            "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n\r\n".to_owned(),
            "169.254.169.254 is a link-local address (cloud metadata); not in the allow-list",
        ),
        (
            "CONNECT [64:ff9b::a9fe:a9fe]:80 HTTP/1.1\r\n\r\n".to_owned(),
            "64:ff9b::a9fe:a9fe is a link-local address (cloud metadata) (carrying 169.254.169.254); not in the allow-list",
        ),
        (
            "GET http://10.0.0.1/ HTTP/1.1\r\n\r\n".to_owned(),
            "10.0.0.1 is a private address; not in the allow-list",
        ),
        (
            "GET http://[fd00:ec2::254]/ HTTP/1.1\r\n\r\n".to_owned(),
            "fd00:ec2::254 is a unique local IPv6 address; not in the allow-list",
        ),
        (
            format!("GET http://allowed.test@127.0.0.1:{p4}/ HTTP/1.1\r\n\r\n"),
            "the request target carries credentials (user@host); refused",
        ),
        (
            format!("CONNECT allowed.test@127.0.0.1:{p4} HTTP/1.1\r\n\r\n"),
            "the request target carries credentials (user@host); refused",
        ),
    ];
    for (raw, reason) in &cases {
        let answer = send(&proxy, raw.as_bytes()).await;
        assert!(
            answer.starts_with("HTTP/1.1 403 Forbidden\r\n"),
            "{raw:?}: {answer}"
        );
        assert!(
            answer.ends_with(&format!("\r\n\r\nhands policy: {reason}\n")),
            "{raw:?}: {answer}"
        );
        assert!(
            proxy.blocked().iter().any(|b| b.reason == *reason),
            "{raw:?} not in the blocked log: {:?}",
            proxy.blocked()
        );
    }
    settle().await;
    assert_eq!(v4.seen(), Vec::<String>::new());
    assert_eq!(v6.seen(), Vec::<String>::new());
    assert_eq!(proxy.blocked().len(), cases.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_origin_named_explicitly_is_reachable_and_smuggling_past_it_is_not() {
    let canary = Canary::start("127.0.0.1:0").await;
    let port = canary.port();
    let proxy = proxy(allow(&[
        format!("http://127.0.0.1:{port}"),
        format!("https://127.0.0.1:{port}"),
    ]));

    // Reachable: the request arrives in origin form, with the URL's Host and a close.
    let answer = send(
        &proxy,
        format!("GET http://127.0.0.1:{port}/ok?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nProxy-Connection: keep-alive\r\n\r\n").as_bytes(),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.contains("Connection: close\r\n"), "{answer}");
    assert!(answer.ends_with("canary"), "{answer}");
    settle().await;
    assert_eq!(
        canary.seen(),
        vec![format!(
            "GET /ok?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        )]
    );

    // Refused before anything is sent, though the destination itself is allowed.
    let refusals: Vec<(String, &str)> = vec![
        (
            format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: evil.test\r\n\r\n"),
            "the Host header names another host than the request URL; refused",
        ),
        (
            format!(
                "POST http://127.0.0.1:{port}/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
            ),
            "both Transfer-Encoding and Content-Length; refused (request smuggling)",
        ),
        (
            format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\nX: a\rb\r\n\r\n"),
            "the request head holds a bare CR; refused",
        ),
        (
            format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\nX: a\0b\r\n\r\n"),
            "the request head holds a NUL byte; refused",
        ),
        (
            format!("CONNECT 127.0.0.1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"),
            "CONNECT needs host:port with an explicit port; refused",
        ),
        (
            format!("GET http://a@127.0.0.1:{port}/ HTTP/1.1\r\n\r\n"),
            "the request target carries credentials (user@host); refused",
        ),
    ];
    for (raw, reason) in &refusals {
        let answer = send(&proxy, raw.as_bytes()).await;
        assert!(
            answer.starts_with("HTTP/1.1 403 Forbidden\r\n")
                && answer.ends_with(&format!("hands policy: {reason}\n")),
            "{raw:?}: {answer}"
        );
    }
    settle().await;
    assert_eq!(canary.seen().len(), 1, "{:?}", canary.seen());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipelined_second_request_is_never_forwarded() {
    let canary = Canary::start("127.0.0.1:0").await;
    let port = canary.port();
    let proxy = proxy(allow(&[format!("http://127.0.0.1:{port}")]));
    let second = "GET http://127.0.0.1:{port}/second HTTP/1.1\r\nHost: evil.test\r\n\r\n";
    let firsts = [
        format!("GET http://127.0.0.1:{port}/first HTTP/1.1\r\n\r\n"),
        format!("POST http://127.0.0.1:{port}/first HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"),
        format!(
            "POST http://127.0.0.1:{port}/first HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
        ),
    ];
    for first in &firsts {
        let answer = send(&proxy, format!("{first}{second}").as_bytes()).await;
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.ends_with("canary"), "{answer}");
    }
    settle().await;
    let seen = canary.seen();
    assert_eq!(seen.len(), firsts.len(), "{seen:?}");
    for got in &seen {
        assert_eq!(got.matches("HTTP/1.1\r\n").count(), 1, "{got:?}");
        assert!(
            got.starts_with("GET /first ") || got.starts_with("POST /first "),
            "{got:?}"
        );
        assert!(
            !got.contains("second") && !got.contains("evil.test"),
            "{got:?}"
        );
    }
    assert!(seen[1].ends_with("\r\n\r\nhello"), "{:?}", seen[1]);
    assert!(
        seen[2].ends_with("5\r\nhello\r\n0\r\n\r\n"),
        "{:?}",
        seen[2]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_allowed_by_name_does_not_reach_the_loopback_address_it_resolves_to() {
    let canary = Canary::start("127.0.0.1:0").await;
    let port = canary.port();
    let request =
        format!("GET http://localhost:{port}/ HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n");
    let connect = format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\n");

    // The list names `localhost` only: the proxy resolves it, sees 127.0.0.1, refuses.
    let by_name = proxy(allow(&[
        format!("http://localhost:{port}"),
        format!("https://localhost:{port}"),
    ]));
    let answer = send(&by_name, request.as_bytes()).await;
    let reason = format!(
        "localhost resolves to 127.0.0.1, a loopback address; not in the allow-list (an allow-list names such an address itself, e.g. http://127.0.0.1:{port})"
    );
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    assert!(
        answer.ends_with(&format!("hands policy: {reason}\n")),
        "{answer}"
    );
    let answer = send(&by_name, connect.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    assert!(
        answer.contains("localhost resolves to 127.0.0.1, a loopback address"),
        "{answer}"
    );
    assert_eq!(
        by_name
            .blocked()
            .iter()
            .map(|b| b.origin.as_str())
            .collect::<Vec<_>>(),
        vec![
            format!("http://localhost:{port}"),
            format!("https://localhost:{port}")
        ]
    );
    settle().await;
    assert_eq!(canary.seen(), Vec::<String>::new());

    // Naming the address too opens it: the refusal above was the rule's, not the setup's.
    let named = proxy(allow(&[
        format!("http://localhost:{port}"),
        format!("http://127.0.0.1:{port}"),
    ]));
    let answer = send(&named, request.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    settle().await;
    assert_eq!(canary.seen().len(), 1);
    assert!(canary.seen()[0].starts_with("GET / HTTP/1.1\r\nHost: localhost:"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tunnel_carries_only_a_client_hello_for_its_own_host() {
    let canary = Canary::start("127.0.0.1:0").await;
    let port = canary.port();
    let proxy = proxy(allow(&[format!("https://127.0.0.1:{port}")]));
    let tunnel = |hello: Vec<u8>| {
        let proxy_port = proxy.port();
        async move {
            let mut s = TcpStream::connect(("127.0.0.1", proxy_port)).await.unwrap();
            s.write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut established = [0u8; 39];
            s.read_exact(&mut established).await.unwrap();
            assert_eq!(
                &established[..],
                b"HTTP/1.1 200 Connection Established\r\n\r\n"
            );
            s.write_all(&hello).await.unwrap();
            let mut rest = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(2), s.read_to_end(&mut rest)).await;
        }
    };
    // A ClientHello naming another server than the tunnel's address: closed, nothing relayed.
    tunnel(client_hello(Some("evil.test"))).await;
    settle().await;
    let seen = canary.seen();
    assert!(seen.iter().all(String::is_empty), "{seen:?}");
    assert!(
        proxy.blocked().iter().any(|b| b.reason
            == "the TLS ClientHello names evil.test, not 127.0.0.1 the tunnel was opened for (domain fronting); refused"),
        "{:?}",
        proxy.blocked()
    );
    // Without a name (as for an address), the same tunnel carries it.
    let hello = client_hello(None);
    tunnel(hello.clone()).await;
    settle().await;
    let seen = canary.seen();
    assert_eq!(
        seen.last().cloned(),
        Some(String::from_utf8_lossy(&hello).into_owned())
    );
}
