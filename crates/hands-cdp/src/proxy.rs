//! The second wall of the network policy, and the only way out of an episode's jail: a local HTTP proxy that checks the policy per connection, resolves names itself, and connects only to the address it checked.
//!
//! Spec: claude-computer-use-tool, precaution 3: "acceso a internet limitado a una lista de
//! dominios permitidos"; issue 17, item 2 ("One allow-list for every process"): a jail has an empty
//! network namespace, its bash, curl, X apps and Chromium reach the world only through this proxy
//! (`HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` = `http://127.0.0.1:3128`, a listener made in the jail's
//! namespace and served here by [`PolicyProxy::serve_listener`]), and no DNS answers there. So the
//! proxy holds against a client the attacker writes, not only against a browser.
//!
//! For the launched browser: request interception (`Fetch`) sees every request a target makes,
//! but not WebSocket handshakes (measured on Chromium 156) nor the browser's own requests
//! (update checks, account look-ups). Both go through this proxy (`--proxy-server`, with
//! `<-loopback>` so local addresses are not exempt).
//!
//! Rules, in the order they apply (every refusal is a `403` whose one-line body starts with
//! [`REFUSAL_PREFIX`] and names the rule, and is recorded in [`PolicyProxy::blocked`]):
//! 1. **Strict head** ([`head::parse_head`]): `METHOD target HTTP/1.x` with single spaces; no
//!    NUL, bare CR or bare LF anywhere in the head, no folded or malformed header lines, UTF-8.
//!    The target is `CONNECT host:port` (no credentials, an explicit port; the `Host` header is
//!    irrelevant) or an absolute `http:`/`ws:` URL without credentials
//!    (`http://allowed@evil/` is refused, so is an empty `http://@evil/`) and without
//!    backslashes. Hosts are normalised by the `url` crate's host parser before anything else
//!    (`2130706433`, `0x7f.1`, `017700000001` are `127.0.0.1`). A `Host` header that names
//!    another host or port than the URL is refused; so are two `Host` headers, `Transfer-Encoding`
//!    together with `Content-Length`, a `Transfer-Encoding` other than one `chunked`, and a
//!    `Content-Length` that is not one decimal number.
//! 2. **The policy, by name**: the same [`RequestPolicy`](crate::policy::RequestPolicy) the
//!    browser obeys is asked about the URL (a tunnel: `https:` or `wss:` at that host and port).
//! 3. **Resolve, then check every address**: an address literal is its own address; a name is
//!    resolved here (tokio's `lookup_host`). Each address is classified ([`address::classify`]):
//!    loopback, unspecified, `0.0.0.0/8`, link-local (`169.254/16`, where cloud metadata lives,
//!    `fe80::/10`), private (`10/8`, `172.16/12`, `192.168/16`), shared `100.64/10`, ULA
//!    `fc00::/7`, multicast, broadcast, reserved and documentation ranges, and the IPv6 forms
//!    that carry such an IPv4 address (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64
//!    `64:ff9b::/96`, 6to4). **How a local address is allowed**: only explicitly, by the policy
//!    allowing the request with that address written as the host — `http://127.0.0.1:8080` in
//!    an origin allow-list reaches `127.0.0.1:8080`. A name that the list allows but that
//!    resolves to a local address (`http://localhost:8080` listed, or an allowed name rebound
//!    to `10.0.0.5`) is refused unless the list also names that address (`http://127.0.0.1:8080`);
//!    a literal is allowed only in the spelling the list uses after normalisation
//!    (`[::ffff:127.0.0.1]` is not `127.0.0.1`). Of several addresses, only those that pass are
//!    used; none passing is a refusal. (A policy that allows everything, [`AllowAll`](crate::AllowAll),
//!    therefore allows every address: a jail must be given an allow-list.)
//! 4. **Connect to the checked address**: the connection goes to exactly the `SocketAddr`s
//!    checked, never to the name again (no second resolution, so DNS rebinding through an
//!    allowed name cannot switch the address after the check).
//! 5. **One request per connection**: a plain-HTTP request is forwarded in origin form with the
//!    URL's own `Host`, no proxy headers and `Connection: close`; exactly its body goes up (by
//!    `Content-Length` or chunked framing) and whatever the client sends after it (a pipelined
//!    second request) is never forwarded; the answer goes down with `Connection: close`. After
//!    a `101` answer to an upgrade (a WebSocket handshake) the two sides are joined.
//! 6. **A tunnel's ClientHello**: after `200 Connection Established`, when the client's first
//!    bytes are a TLS handshake record, the ClientHello must be whole in that record and its
//!    server name (SNI), if any, must be the `CONNECT` host (none at all for an address
//!    literal); otherwise the tunnel is closed (after the `200` there is no HTTP answer left to
//!    give) and the refusal recorded. Not TLS (a `ws:` handshake through a tunnel): relayed,
//!    it goes to the checked address anyway.
//!
//! **Domain fronting is accepted, knowingly.** The proxy sees the `CONNECT` authority and the
//! ClientHello's name, never what is inside TLS: a client can open a tunnel to an allowed HTTPS
//! origin on a CDN, with the right SNI, and send `Host: evil.example` inside; the CDN routes it
//! to another of its customers. Likewise an Encrypted Client Hello hides the real name behind
//! the allowed one. Stopping that would need TLS interception (a CA the jail trusts), which
//! breaks certificate pinning and puts every secret through hands. Every proxy-based sandbox
//! makes the same trade (OpenAI's Codex CLI, Anthropic's sandbox-runtime): the allow-list means
//! "these hosts' front doors", and an operator who allows a shared CDN name allows what that
//! CDN serves under it.
//!
//! Not handled here: UDP (a jail has none), name resolution for the jail (nothing answers).

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use crate::policy::{BlockedRequest, SharedPolicy, Verdict};

pub mod address;
pub mod head;
pub mod sni;

use address::classify;
use head::{Framing, RequestHead, parse_head, relay_body};

/// Most bytes of a request head the proxy reads.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// How long a name resolution, or one connection attempt, may take.
const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(10);

/// How many refusals [`PolicyProxy::serve_listener`] keeps.
pub const DEFAULT_BLOCKED_CAPACITY: usize = 256;

/// The prefix of every refusal's text.
pub const REFUSAL_PREFIX: &str = "hands policy: ";

/// Every host name the browser itself would resolve fails at once, without a DNS query:
/// a page cannot make the browser look up a name it chose (DNS exfiltration through
/// `dns-prefetch`, a STUN server name, a host the proxy would deny anyway). Requests through the
/// proxy name their host in the request line and never need a local resolution; the proxy
/// resolves a name only for a connection the policy allowed. Excluded: the proxy's own address
/// and `localhost` names, which Chromium answers itself (loopback, RFC 6761) without DNS.
pub const HOST_RESOLVER_RULES: &str =
    "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost, EXCLUDE *.localhost";

/// The answer to a denied connection (without a reason; refusals now carry one, see
/// [`refusal_response`]).
pub const DENIED_RESPONSE: &[u8] =
    b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// The 403 answer to a refused request: a one-line text body, `hands policy: ` and the rule
/// that refused it.
pub fn refusal_response(reason: &str) -> Vec<u8> {
    let body = format!("{REFUSAL_PREFIX}{reason}\n");
    format!(
        "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nProxy-Connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The 502 answer when the checked destination cannot be reached.
fn bad_gateway(what: &str) -> Vec<u8> {
    let body = format!("hands proxy: {what}\n");
    format!(
        "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nProxy-Connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

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
        Self::serve(listener, policy, capacity)
    }

    /// Serves a listener made elsewhere: in a jail, the one bound on the jail's own loopback
    /// (`127.0.0.1:3128` inside its empty network namespace, from
    /// [`hands_jail::Launcher::listen_tcp`]) and handed out, so this proxy is the jail's only way
    /// out. Keeps the last [`DEFAULT_BLOCKED_CAPACITY`] refusals. Must be called within a tokio
    /// runtime (an error otherwise).
    pub fn serve_listener(
        listener: std::net::TcpListener,
        policy: SharedPolicy,
    ) -> std::io::Result<PolicyProxy> {
        Self::serve_listener_keeping(listener, policy, DEFAULT_BLOCKED_CAPACITY)
    }

    /// [`PolicyProxy::serve_listener`] keeping the last `capacity` refusals (a launched browser
    /// keeps as many as its diagnostics).
    pub fn serve_listener_keeping(
        listener: std::net::TcpListener,
        policy: SharedPolicy,
        capacity: usize,
    ) -> std::io::Result<PolicyProxy> {
        tokio::runtime::Handle::try_current().map_err(std::io::Error::other)?;
        listener.set_nonblocking(true)?;
        let listener = TcpListener::from_std(listener)?;
        Self::serve(listener, policy, capacity)
    }

    fn serve(
        listener: TcpListener,
        policy: SharedPolicy,
        capacity: usize,
    ) -> std::io::Result<PolicyProxy> {
        let port = listener.local_addr()?.port();
        let blocked: Arc<Mutex<VecDeque<BlockedRequest>>> = Arc::default();
        let record = Arc::clone(&blocked);
        let task = tokio::spawn(async move {
            loop {
                let client = match listener.accept().await {
                    Ok((client, _)) => client,
                    Err(e) => {
                        // Out of descriptors and the like: keep serving.
                        tracing::debug!(error = %e, "proxy accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let policy = Arc::clone(&policy);
                let record = Arc::clone(&record);
                tokio::spawn(async move {
                    let log = Log {
                        record: &record,
                        capacity,
                    };
                    if let Err(e) = serve(client, &policy, log).await {
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

/// Reads the request line of a proxy request (`METHOD target HTTP/1.x`), as strictly as
/// [`head::parse_request_target`]: `None` for anything it refuses.
pub fn parse_target(request_line: &str) -> Option<ProxyTarget> {
    let mut parts = request_line.split_whitespace();
    let method = parts.next()?;
    let target = parts.next()?;
    head::parse_request_target(method, target).ok()
}

impl ProxyTarget {
    /// The host as it appears in a URL (IPv6 in brackets).
    fn url_host(&self) -> String {
        match self {
            ProxyTarget::Tunnel { host, .. } if host.contains(':') => format!("[{host}]"),
            ProxyTarget::Tunnel { host, .. } => host.clone(),
            ProxyTarget::Forward { url } => match url.host() {
                Some(url::Host::Ipv6(ip)) => format!("[{ip}]"),
                Some(h) => h.to_string(),
                None => String::new(),
            },
        }
    }

    /// The host as a name or an address literal (no brackets).
    fn host(&self) -> String {
        match self {
            ProxyTarget::Tunnel { host, .. } => host.clone(),
            ProxyTarget::Forward { url } => match url.host() {
                Some(url::Host::Ipv6(ip)) => ip.to_string(),
                Some(h) => h.to_string(),
                None => String::new(),
            },
        }
    }

    fn port(&self) -> u16 {
        match self {
            ProxyTarget::Tunnel { port, .. } => *port,
            ProxyTarget::Forward { url } => url.port_or_known_default().unwrap_or(80),
        }
    }

    /// The same request aimed at `ip` instead of the name: what the policy must allow for a
    /// name that resolves outside the public internet.
    fn at_address(&self, ip: IpAddr) -> ProxyTarget {
        match self {
            ProxyTarget::Tunnel { port, .. } => ProxyTarget::Tunnel {
                host: ip.to_string(),
                port: *port,
            },
            ProxyTarget::Forward { url } => {
                let mut url = url.clone();
                // Cannot fail: http and ws URLs have hosts.
                let _ = url.set_ip_host(ip);
                ProxyTarget::Forward { url }
            }
        }
    }
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

/// Where refusals are recorded.
#[derive(Clone, Copy)]
struct Log<'a> {
    record: &'a Mutex<VecDeque<BlockedRequest>>,
    capacity: usize,
}

impl Log<'_> {
    fn push(&self, origin: String, reason: String) {
        tracing::debug!(%origin, %reason, "proxy refused a connection");
        if let Ok(mut blocked) = self.record.lock() {
            if blocked.len() >= self.capacity.max(1) {
                blocked.pop_front();
            }
            blocked.push_back(BlockedRequest {
                tab: None,
                origin,
                resource_type: "Connection".to_owned(),
                reason,
            });
        }
    }
}

/// Records a refusal and answers it with a 403 saying why.
async fn refuse(
    client: &mut TcpStream,
    log: Log<'_>,
    origin: String,
    reason: String,
) -> std::io::Result<()> {
    client.write_all(&refusal_response(&reason)).await?;
    log.push(origin, reason);
    // Read (and drop) what the client still sends for a moment, so closing does not reset the
    // connection before the answer is read.
    let _ = client.shutdown().await;
    let mut sink = [0u8; 4096];
    let _ = tokio::time::timeout(Duration::from_millis(500), async {
        while matches!(client.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
    Ok(())
}

/// The addresses a checked target may connect to, or the refusal.
async fn checked_addresses(
    policy: &dyn crate::policy::RequestPolicy,
    target: &ProxyTarget,
) -> Result<Vec<SocketAddr>, Result<String, String>> {
    let (host, port) = (target.host(), target.port());
    // An address literal was checked as itself: the policy named it.
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let resolved = match tokio::time::timeout(
        UPSTREAM_TIMEOUT,
        tokio::net::lookup_host((host.as_str(), port)),
    )
    .await
    {
        Ok(Ok(addrs)) => addrs.collect::<Vec<_>>(),
        Ok(Err(e)) => return Err(Err(format!("could not resolve {host}: {e}"))),
        Err(_) => return Err(Err(format!("resolving {host} timed out"))),
    };
    let mut usable = Vec::new();
    let mut refusal = None;
    for addr in resolved {
        let Some(special) = classify(addr.ip()) else {
            usable.push(addr);
            continue;
        };
        if verdict(policy, &target.at_address(addr.ip())).0 == Verdict::Allow {
            usable.push(addr);
        } else if refusal.is_none() {
            refusal = Some(format!(
                "{host} resolves to {}, {special}; not in the allow-list (an allow-list names such an address itself, e.g. {}://{}:{port})",
                addr.ip(),
                match target {
                    ProxyTarget::Tunnel { .. } => "https",
                    ProxyTarget::Forward { url } => url.scheme(),
                },
                target.at_address(addr.ip()).url_host(),
            ));
        }
    }
    match (usable.is_empty(), refusal) {
        (false, _) => Ok(usable),
        (true, Some(refusal)) => Err(Ok(refusal)),
        (true, None) => Err(Err(format!("{host} resolves to no address"))),
    }
}

/// Connects to the first of `addrs` that answers.
async fn connect_any(addrs: &[SocketAddr]) -> Result<TcpStream, String> {
    let mut last = String::from("no address");
    for addr in addrs {
        match tokio::time::timeout(UPSTREAM_TIMEOUT, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = format!("could not connect to {addr}: {e}"),
            Err(_) => last = format!("connecting to {addr} timed out"),
        }
    }
    Err(last)
}

async fn serve(mut client: TcpStream, policy: &SharedPolicy, log: Log<'_>) -> std::io::Result<()> {
    let unparsable = || "(unparsable)".to_owned();
    let (buf, head_end) = match read_head(&mut client).await? {
        Head::Complete { buf, end } => (buf, end),
        Head::Closed => return Ok(()),
        Head::TooLong => {
            let reason = format!("the request head is longer than {MAX_HEAD_BYTES} bytes; refused");
            return refuse(&mut client, log, unparsable(), reason).await;
        }
    };
    let request = match parse_head(&buf[..head_end]) {
        Ok(request) => request,
        Err(e) => return refuse(&mut client, log, unparsable(), e.to_string()).await,
    };
    let rest = buf[head_end..].to_vec();
    let (decision, origin) = verdict(policy.as_ref(), &request.target);
    if let Verdict::Deny { reason } = decision {
        let reason = match request
            .target
            .host()
            .parse::<IpAddr>()
            .ok()
            .and_then(|ip| classify(ip).map(|s| (ip, s)))
        {
            Some((ip, special)) => format!("{ip} is {special}; not in the allow-list"),
            None => format!("{origin} is not in the allow-list ({reason})"),
        };
        return refuse(&mut client, log, origin, reason).await;
    }
    let addrs = match checked_addresses(policy.as_ref(), &request.target).await {
        Ok(addrs) => addrs,
        Err(Ok(reason)) => return refuse(&mut client, log, origin, reason).await,
        Err(Err(why)) => return client.write_all(&bad_gateway(&why)).await,
    };
    let mut upstream = match connect_any(&addrs).await {
        Ok(upstream) => upstream,
        Err(why) => return client.write_all(&bad_gateway(&why)).await,
    };
    match &request.target {
        ProxyTarget::Tunnel { host, .. } => {
            client
                .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                .await?;
            let mut first = rest;
            if let Err(reason) = check_client_hello(&mut client, &mut first, host).await? {
                // The tunnel is open already: the refusal can only close it.
                log.push(origin, reason);
                return Ok(());
            }
            if !first.is_empty() {
                upstream.write_all(&first).await?;
            }
            tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
        }
        ProxyTarget::Forward { .. } => {
            upstream
                .write_all(forward_head(&request).as_bytes())
                .await?;
            forward_one(client, upstream, &request, rest).await?;
        }
    }
    Ok(())
}

/// Reads the first TLS record a tunnel's client sends (when it starts with one) into `first`
/// and refuses a ClientHello naming another server than the tunnel's host. Not TLS (a `ws:`
/// handshake through a tunnel): allowed, the bytes go to the checked address anyway.
async fn check_client_hello(
    client: &mut TcpStream,
    first: &mut Vec<u8>,
    host: &str,
) -> std::io::Result<Result<(), String>> {
    if !fill(client, first, 1).await? || first[0] != 0x16 {
        return Ok(Ok(()));
    }
    if !fill(client, first, sni::RECORD_HEADER).await? {
        return Ok(Ok(()));
    }
    let header: [u8; sni::RECORD_HEADER] =
        first[..sni::RECORD_HEADER].try_into().unwrap_or_default();
    let Some(len) = sni::handshake_record_len(&header).filter(|&l| l <= sni::MAX_RECORD) else {
        return Ok(Err(format!(
            "the tunnel to {host} did not start with a TLS handshake record; refused"
        )));
    };
    if !fill(client, first, sni::RECORD_HEADER + len).await? {
        return Ok(Ok(()));
    }
    let body = &first[sni::RECORD_HEADER..sni::RECORD_HEADER + len];
    Ok(match sni::server_name(body) {
        Ok(None) => Ok(()),
        Ok(Some(name)) if sni::names_same_host(&name, host) => Ok(()),
        Ok(Some(name)) => Err(format!(
            "the TLS ClientHello names {name}, not {host} the tunnel was opened for (domain fronting); refused"
        )),
        Err(e) => Err(format!("{e} (tunnel to {host}); refused")),
    })
}

/// Reads until `first` holds `want` bytes; `false` if the client closed first.
async fn fill(client: &mut TcpStream, first: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    let mut chunk = [0u8; 4096];
    while first.len() < want {
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Ok(false);
        }
        first.extend_from_slice(&chunk[..n]);
    }
    Ok(true)
}

/// The head forwarded for an absolute-form request: origin-form target, the URL's own `Host`
/// (the client's agreed with it or was absent), no proxy headers, and `Connection: close`
/// (unless it is an upgrade).
fn forward_head(request: &RequestHead) -> String {
    let ProxyTarget::Forward { url } = &request.target else {
        return String::new();
    };
    let mut path = url.path().to_owned();
    if let Some(q) = url.query() {
        path.push('?');
        path.push_str(q);
    }
    let mut out = format!("{} {path} {}\r\n", request.method, request.version);
    let host = match url.port() {
        Some(port) => format!("{}:{port}", request.target.url_host()),
        None => request.target.url_host(),
    };
    out.push_str(&format!("Host: {host}\r\n"));
    for (name, value) in &request.headers {
        let lower = name.to_ascii_lowercase();
        if lower.starts_with("proxy-")
            || lower == "host"
            || lower == "keep-alive"
            || (!request.upgrade && lower == "connection")
        {
            continue;
        }
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    if !request.upgrade {
        out.push_str("Connection: close\r\n");
    }
    out.push_str("\r\n");
    out
}

/// Relays one request's exchange: exactly the first request's body up (by its
/// `Content-Length` or chunked framing; whatever the client sends after it is never
/// forwarded), the response down with its head rewritten to close the connection, so the
/// client opens a new (checked) connection for its next request. After a `101` answer to an
/// upgrade, the two sides are joined.
async fn forward_one(
    mut client: TcpStream,
    mut upstream: TcpStream,
    request: &RequestHead,
    already: Vec<u8>,
) -> std::io::Result<()> {
    let (mut client_read, mut client_write) = client.split();
    let (mut upstream_read, mut upstream_write) = upstream.split();
    let framing: Framing = request.framing;
    let mut up = Box::pin(relay_body(
        framing,
        already,
        &mut client_read,
        &mut upstream_write,
    ));
    let mut up_result: Option<std::io::Result<Vec<u8>>> = None;
    let head = {
        let down = read_head(&mut upstream_read);
        tokio::pin!(down);
        loop {
            tokio::select! {
                r = &mut up, if up_result.is_none() => up_result = Some(r),
                h = &mut down => break h?,
            }
        }
    };
    let Head::Complete { buf, end: head_end } = head else {
        return Ok(());
    };
    let text = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let switching = request.upgrade && text.split_whitespace().nth(1) == Some("101");
    client_write
        .write_all(close_response_head(&text).as_bytes())
        .await?;
    client_write.write_all(&buf[head_end..]).await?;
    if switching {
        let excess = match up_result {
            Some(r) => r?,
            None => (&mut up).await?,
        };
        drop(up);
        upstream_write.write_all(&excess).await?;
        let up = tokio::io::copy(&mut client_read, &mut upstream_write);
        let down = tokio::io::copy(&mut upstream_read, &mut client_write);
        tokio::try_join!(up, down)?;
        return Ok(());
    }
    let down = async {
        tokio::io::copy(&mut upstream_read, &mut client_write).await?;
        client_write.shutdown().await
    };
    let rest_of_body = async {
        if up_result.is_none() {
            let _ = (&mut up).await;
        }
        // The body is sent (or failed): keep relaying the answer.
        std::future::pending::<()>().await;
    };
    tokio::select! {
        result = down => result,
        () = rest_of_body => Ok(()),
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
