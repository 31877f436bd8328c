//! The second wall of the network policy: a local HTTP proxy the launched browser must use for every connection, which checks the policy per connection.
//!
//! Request interception (`Fetch`) sees every request a target makes, but not two kinds of
//! traffic: WebSocket handshakes (neither `Fetch` nor `Network.setBlockedURLs` applies to them —
//! measured on Chromium 156) and the browser's own requests (component and extension update
//! checks, account look-ups), which belong to no target. Both go through this proxy
//! (`--proxy-server`, with `<-loopback>` so local addresses are not exempt), which answers 403 to
//! a connection the policy denies. Plain-HTTP requests are forwarded one per connection
//! (`Connection: close`), so a kept-alive connection can never switch to an unchecked host.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use crate::policy::{BlockedRequest, SharedPolicy, Verdict};

/// Most bytes of a request head the proxy reads.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Every host name the browser itself would resolve fails at once, without a DNS query:
/// a page cannot make the browser look up a name it chose (DNS exfiltration through
/// `dns-prefetch`, a STUN server name, a host the proxy would deny anyway). Requests through the
/// proxy name their host in the request line and never need a local resolution; the proxy
/// resolves a name only for a connection the policy allowed. Excluded: the proxy's own address
/// and `localhost` names, which Chromium answers itself (loopback, RFC 6761) without DNS.
pub const HOST_RESOLVER_RULES: &str =
    "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost, EXCLUDE *.localhost";

/// The answer to a denied connection.
pub const DENIED_RESPONSE: &[u8] =
    b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// A running proxy; stops when dropped.
#[derive(Debug)]
pub struct PolicyProxy {
    port: u16,
    blocked: Arc<Mutex<VecDeque<BlockedRequest>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for PolicyProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl PolicyProxy {
    /// Listens on 127.0.0.1 on a port the OS picks.
    pub async fn start(policy: SharedPolicy, capacity: usize) -> std::io::Result<PolicyProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let blocked: Arc<Mutex<VecDeque<BlockedRequest>>> = Arc::default();
        let record = Arc::clone(&blocked);
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let policy = Arc::clone(&policy);
                let record = Arc::clone(&record);
                tokio::spawn(async move {
                    if let Err(e) = serve(client, &policy, &record, capacity).await {
                        tracing::debug!(error = %e, "proxy connection ended");
                    }
                });
            }
        });
        Ok(PolicyProxy {
            port,
            blocked,
            task,
        })
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The browser flags that route every connection through this proxy, and every name
    /// resolution too: the browser resolves no host name itself ([`HOST_RESOLVER_RULES`]).
    pub fn browser_args(&self) -> Vec<String> {
        vec![
            format!("--proxy-server=http://127.0.0.1:{}", self.port),
            // Without this, loopback addresses would bypass the proxy.
            "--proxy-bypass-list=<-loopback>".to_owned(),
            format!("--host-resolver-rules={HOST_RESOLVER_RULES}"),
        ]
    }

    /// Connections denied so far, most recent last (bounded).
    pub fn blocked(&self) -> Vec<BlockedRequest> {
        self.blocked
            .lock()
            .map(|b| b.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Serves a listener someone else bound: a launched browser's, from
    /// [`hands_jail::Launcher::listen_tcp`], on the loopback of the environment the browser runs
    /// in (a jail's own, or the host's). The listener must be bound on `127.0.0.1` (the address
    /// [`PolicyProxy::browser_args`] names). Must be called inside a tokio runtime.
    pub fn serve_listener(
        listener: std::net::TcpListener,
        policy: SharedPolicy,
        capacity: usize,
    ) -> std::io::Result<PolicyProxy> {
        listener.set_nonblocking(true)?;
        let listener = TcpListener::from_std(listener)?;
        let port = listener.local_addr()?.port();
        let blocked: Arc<Mutex<VecDeque<BlockedRequest>>> = Arc::default();
        let record = Arc::clone(&blocked);
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let policy = Arc::clone(&policy);
                let record = Arc::clone(&record);
                tokio::spawn(async move {
                    if let Err(e) = serve(client, &policy, &record, capacity).await {
                        tracing::debug!(error = %e, "proxy connection ended");
                    }
                });
            }
        });
        Ok(PolicyProxy {
            port,
            blocked,
            task,
        })
    }
}

/// Where a request head asks to go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyTarget {
    /// `CONNECT host:port`: a tunnel (HTTPS, `wss:`, or `ws:` through a proxy).
    Tunnel {
        /// Host name or address.
        host: String,
        /// Port.
        port: u16,
    },
    /// An absolute-form request for a plain-HTTP URL.
    Forward {
        /// The URL.
        url: url::Url,
    },
}

/// Reads the request line of a proxy request.
pub fn parse_target(request_line: &str) -> Option<ProxyTarget> {
    let mut parts = request_line.split_whitespace();
    let method = parts.next()?;
    let target = parts.next()?;
    if method.eq_ignore_ascii_case("CONNECT") {
        let url = url::Url::parse(&format!("https://{target}")).ok()?;
        let host = url
            .host_str()?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        return Some(ProxyTarget::Tunnel {
            host,
            port: url.port_or_known_default()?,
        });
    }
    let url = url::Url::parse(target).ok()?;
    (matches!(url.scheme(), "http" | "ws") && url.host_str().is_some())
        .then_some(ProxyTarget::Forward { url })
}

/// The policy's verdict for a proxy target. A tunnel's scheme is unknown (HTTPS or a
/// WebSocket), so it is allowed when the policy allows `https:` or `wss:` at that host and port.
pub fn verdict(
    policy: &dyn crate::policy::RequestPolicy,
    target: &ProxyTarget,
) -> (Verdict, String) {
    match target {
        ProxyTarget::Forward { url } => {
            crate::policy::decide(policy, url.as_str(), "Connection", "GET", None)
        }
        ProxyTarget::Tunnel { host, port } => {
            let host = if host.contains(':') {
                format!("[{host}]")
            } else {
                host.clone()
            };
            let mut last = (
                Verdict::Deny {
                    reason: crate::policy::UNPARSABLE_URL_REASON.to_owned(),
                },
                format!("https://{host}:{port}"),
            );
            for scheme in ["https", "wss"] {
                let (v, origin) = crate::policy::decide(
                    policy,
                    &format!("{scheme}://{host}:{port}/"),
                    "Connection",
                    "CONNECT",
                    None,
                );
                if v == Verdict::Allow {
                    return (v, origin);
                }
                last = (v, origin);
            }
            last
        }
    }
}

/// What reading an HTTP head gave.
enum Head {
    /// The peer closed before a whole head came.
    Closed,
    /// More than [`MAX_HEAD_BYTES`] without a blank line.
    TooLong,
    /// `buf[..end]` is the head (blank line included); what follows is body already read.
    Complete { buf: Vec<u8>, end: usize },
}

/// Reads up to the end of an HTTP head (`\r\n\r\n`).
async fn read_head<R: tokio::io::AsyncRead + Unpin>(reader: &mut R) -> std::io::Result<Head> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let n = reader.read(&mut chunk).await?;
        if n == 0 {
            return Ok(Head::Closed);
        }
        // Search only where the new bytes could complete the blank line.
        let from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(Head::Complete {
                end: from + i + 4,
                buf,
            });
        }
        if buf.len() > MAX_HEAD_BYTES {
            return Ok(Head::TooLong);
        }
    }
}

async fn serve(
    mut client: TcpStream,
    policy: &SharedPolicy,
    record: &Mutex<VecDeque<BlockedRequest>>,
    capacity: usize,
) -> std::io::Result<()> {
    let (buf, head_end) = match read_head(&mut client).await? {
        Head::Complete { buf, end } => (buf, end),
        Head::Closed => return Ok(()),
        Head::TooLong => return client.write_all(DENIED_RESPONSE).await,
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let rest = buf[head_end..].to_vec();
    let request_line = head.lines().next().unwrap_or("");
    let Some(target) = parse_target(request_line) else {
        return client.write_all(DENIED_RESPONSE).await;
    };
    let (decision, origin) = verdict(policy.as_ref(), &target);
    if let Verdict::Deny { reason } = decision {
        tracing::debug!(%origin, %reason, "proxy denied a connection");
        if let Ok(mut blocked) = record.lock() {
            if blocked.len() >= capacity.max(1) {
                blocked.pop_front();
            }
            blocked.push_back(BlockedRequest {
                tab: None,
                origin,
                resource_type: "Connection".to_owned(),
                reason,
            });
        }
        return client.write_all(DENIED_RESPONSE).await;
    }
    match target {
        ProxyTarget::Tunnel { host, port } => {
            let Ok(mut upstream) = TcpStream::connect((host.as_str(), port)).await else {
                return client
                    .write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .await;
            };
            client
                .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                .await?;
            if !rest.is_empty() {
                upstream.write_all(&rest).await?;
            }
            tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
        }
        ProxyTarget::Forward { url } => {
            let host = url.host_str().unwrap_or("").to_owned();
            let port = url.port_or_known_default().unwrap_or(80);
            let Ok(mut upstream) = TcpStream::connect((host.as_str(), port)).await else {
                return client
                    .write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .await;
            };
            upstream
                .write_all(rewrite_head(&head, &url).as_bytes())
                .await?;
            if !rest.is_empty() {
                upstream.write_all(&rest).await?;
            }
            forward_one(client, upstream).await?;
        }
    }
    Ok(())
}

/// Relays one request's exchange: the request body up, the response down with its head
/// rewritten to close the connection, so the browser opens a new (checked) connection for its
/// next request instead of sending it down this one.
async fn forward_one(mut client: TcpStream, mut upstream: TcpStream) -> std::io::Result<()> {
    let (mut client_read, mut client_write) = client.split();
    let (mut upstream_read, mut upstream_write) = upstream.split();
    let up = async {
        let _ = tokio::io::copy(&mut client_read, &mut upstream_write).await;
        // The browser finished sending: keep relaying the answer.
        std::future::pending::<()>().await;
    };
    let down = async {
        let Head::Complete { buf, end: head_end } = read_head(&mut upstream_read).await? else {
            return Ok(());
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        client_write
            .write_all(close_response_head(&head).as_bytes())
            .await?;
        client_write.write_all(&buf[head_end..]).await?;
        tokio::io::copy(&mut upstream_read, &mut client_write).await?;
        client_write.shutdown().await
    };
    tokio::select! {
        result = down => result,
        () = up => Ok(()),
    }
}

/// A response head with `Connection: close` (switching-protocols answers stay as they are).
pub fn close_response_head(head: &str) -> String {
    let mut lines = head.split("\r\n").filter(|l| !l.is_empty());
    let status = lines.next().unwrap_or("HTTP/1.1 502 Bad Gateway");
    if status.split_whitespace().nth(1) == Some("101") {
        return head.to_owned();
    }
    let mut out = format!("{status}\r\n");
    for h in lines {
        let name = h
            .split(':')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "connection" | "keep-alive" | "proxy-connection"
        ) {
            continue;
        }
        out.push_str(h);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\nProxy-Connection: close\r\n\r\n");
    out
}

/// The head of an absolute-form request rewritten for the origin server: origin-form target,
/// no proxy headers, and `Connection: close` (unless it is an upgrade) so the connection carries
/// exactly this one checked request.
pub fn rewrite_head(head: &str, url: &url::Url) -> String {
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or("");
    let mut parts = first.split_whitespace();
    let method = parts.next().unwrap_or("GET");
    let version = parts.nth(1).unwrap_or("HTTP/1.1");
    let mut path = url.path().to_owned();
    if let Some(q) = url.query() {
        path.push('?');
        path.push_str(q);
    }
    let headers: Vec<&str> = lines.filter(|l| !l.is_empty()).collect();
    let upgrade = headers.iter().any(|h| {
        h.split(':')
            .next()
            .is_some_and(|k| k.trim().eq_ignore_ascii_case("upgrade"))
    });
    let mut out = format!("{method} {path} {version}\r\n");
    for h in headers {
        let name = h
            .split(':')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if name.starts_with("proxy-") || (!upgrade && name == "connection") || name == "keep-alive"
        {
            continue;
        }
        out.push_str(h);
        out.push_str("\r\n");
    }
    if !upgrade {
        out.push_str("Connection: close\r\n");
    }
    out.push_str("\r\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{AllowAll, RequestInfo};

    #[test]
    fn request_lines_name_their_targets() {
        assert_eq!(
            parse_target("CONNECT accounts.google.com:443 HTTP/1.1"),
            Some(ProxyTarget::Tunnel {
                host: "accounts.google.com".into(),
                port: 443
            })
        );
        assert_eq!(
            parse_target("CONNECT [::1]:8443 HTTP/1.1"),
            Some(ProxyTarget::Tunnel {
                host: "::1".into(),
                port: 8443
            })
        );
        assert!(matches!(
            parse_target("GET http://127.0.0.1:8080/a?b=1 HTTP/1.1"),
            Some(ProxyTarget::Forward { .. })
        ));
        assert_eq!(parse_target("GET /relative HTTP/1.1"), None);
        assert_eq!(parse_target("GET ftp://x/ HTTP/1.1"), None);
        assert_eq!(parse_target(""), None);
    }

    #[test]
    fn tunnels_are_checked_as_https_or_wss() {
        let only_wss = |r: &RequestInfo<'_>| {
            if r.url.scheme() == "wss" && r.url.host_str() == Some("ok.test") {
                Verdict::Allow
            } else {
                Verdict::Deny {
                    reason: "no".into(),
                }
            }
        };
        let tunnel = |host: &str| ProxyTarget::Tunnel {
            host: host.into(),
            port: 443,
        };
        assert_eq!(verdict(&only_wss, &tunnel("ok.test")).0, Verdict::Allow);
        let (v, origin) = verdict(&only_wss, &tunnel("update.googleapis.com"));
        assert!(matches!(v, Verdict::Deny { .. }));
        assert_eq!(origin, "wss://update.googleapis.com");
        assert_eq!(verdict(&AllowAll, &tunnel("x.test")).0, Verdict::Allow);
    }

    #[test]
    fn answers_close_their_connection() {
        assert_eq!(
            close_response_head(
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n"
            ),
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\nProxy-Connection: close\r\n\r\n"
        );
        let upgrade =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
        assert_eq!(close_response_head(upgrade), upgrade);
    }

    #[test]
    fn forwarded_heads_carry_one_request() {
        let url = url::Url::parse("http://a.test:81/p?q=1").unwrap();
        let head = "GET http://a.test:81/p?q=1 HTTP/1.1\r\nHost: a.test:81\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\n";
        assert_eq!(
            rewrite_head(head, &url),
            "GET /p?q=1 HTTP/1.1\r\nHost: a.test:81\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let ws = "GET http://a.test:81/p?q=1 HTTP/1.1\r\nHost: a.test:81\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
        assert_eq!(
            rewrite_head(ws, &url),
            "GET /p?q=1 HTTP/1.1\r\nHost: a.test:81\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
        );
    }
}
