//! Strict reading of a proxy request head, and the framing of its body: what the proxy forwards
//! is exactly one request, read the same way the origin server will read it.

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};

use super::ProxyTarget;

/// Why a request head is refused (each says which rule).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeadError {
    /// A byte no HTTP head may hold.
    #[error("the request head holds {0}; refused")]
    BadByte(&'static str),
    /// Not UTF-8.
    #[error("the request head is not UTF-8; refused")]
    NotUtf8,
    /// The request line is not `METHOD target HTTP/1.x`.
    #[error("the request line is not `METHOD target HTTP/1.1`; refused")]
    RequestLine,
    /// A header line is malformed (no colon, a bad name, a folded line, a control byte).
    #[error("a header line is malformed; refused")]
    HeaderLine,
    /// The target is not an absolute `http:`/`ws:` URL (or an authority for `CONNECT`).
    #[error(
        "the request target must be an absolute http:// or ws:// URL (or host:port for CONNECT); refused"
    )]
    Target,
    /// The target names credentials (`http://allowed@evil/`).
    #[error("the request target carries credentials (user@host); refused")]
    Userinfo,
    /// `CONNECT` without an explicit port.
    #[error("CONNECT needs host:port with an explicit port; refused")]
    ConnectPort,
    /// A `Host` header naming another host than the URL.
    #[error("the Host header names another host than the request URL; refused")]
    HostMismatch,
    /// More than one `Host` header.
    #[error("more than one Host header; refused")]
    DuplicateHost,
    /// Both `Transfer-Encoding` and `Content-Length`.
    #[error("both Transfer-Encoding and Content-Length; refused (request smuggling)")]
    LengthAndChunked,
    /// A `Content-Length` that is not one decimal number, or more than one.
    #[error("Content-Length must be one decimal number; refused")]
    ContentLength,
    /// A `Transfer-Encoding` other than exactly `chunked` on HTTP/1.1.
    #[error("Transfer-Encoding other than a single `chunked`; refused")]
    TransferEncoding,
}

/// How the body of a request ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body.
    Empty,
    /// `Content-Length`.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

/// A request head read strictly.
#[derive(Debug, Clone)]
pub struct RequestHead {
    /// The method.
    pub method: String,
    /// Where it goes.
    pub target: ProxyTarget,
    /// `HTTP/1.1` or `HTTP/1.0`.
    pub version: String,
    /// The header lines as sent, in order (name, value with its whitespace trimmed).
    pub headers: Vec<(String, String)>,
    /// How its body ends.
    pub framing: Framing,
    /// Whether it asks for a protocol upgrade (a WebSocket handshake).
    pub upgrade: bool,
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Reads a head (`bytes` ends with the blank line).
pub fn parse_head(bytes: &[u8]) -> Result<RequestHead, HeadError> {
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            0 => return Err(HeadError::BadByte("a NUL byte")),
            b'\r' if bytes.get(i + 1) != Some(&b'\n') => {
                return Err(HeadError::BadByte("a bare CR"));
            }
            b'\n' if i == 0 || bytes[i - 1] != b'\r' => {
                return Err(HeadError::BadByte("a bare LF"));
            }
            _ => {}
        }
    }
    let text = std::str::from_utf8(bytes).map_err(|_| HeadError::NotUtf8)?;
    let text = text
        .strip_suffix("\r\n\r\n")
        .ok_or(HeadError::RequestLine)?;
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HeadError::RequestLine);
    };
    if !is_token(method) || !matches!(version, "HTTP/1.1" | "HTTP/1.0") {
        return Err(HeadError::RequestLine);
    }
    let target = parse_request_target(method, target)?;
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line.split_once(':').ok_or(HeadError::HeaderLine)?;
        // A name with whitespace around it, or a folded line (leading whitespace), is refused.
        if !is_token(name) || value.bytes().any(|b| b.is_ascii_control() && b != b'\t') {
            return Err(HeadError::HeaderLine);
        }
        headers.push((name.to_owned(), value.trim_matches([' ', '\t']).to_owned()));
    }
    let named = |want: &str| -> Vec<&str> {
        headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(want))
            .map(|(_, v)| v.as_str())
            .collect()
    };
    let lengths = named("content-length");
    let encodings = named("transfer-encoding");
    let framing = match (lengths.as_slice(), encodings.as_slice()) {
        ([], []) => Framing::Empty,
        ([_, ..], [_, ..]) => return Err(HeadError::LengthAndChunked),
        ([one], []) => {
            if one.is_empty() || !one.bytes().all(|b| b.is_ascii_digit()) {
                return Err(HeadError::ContentLength);
            }
            Framing::Length(one.parse().map_err(|_| HeadError::ContentLength)?)
        }
        ([], [one]) if version == "HTTP/1.1" && one.eq_ignore_ascii_case("chunked") => {
            Framing::Chunked
        }
        ([], _) => return Err(HeadError::TransferEncoding),
        (_, []) => return Err(HeadError::ContentLength),
    };
    if let ProxyTarget::Forward { url } = &target {
        let hosts = named("host");
        match hosts.as_slice() {
            [] => {}
            [one] => {
                let named = url::Url::parse(&format!("{}://{one}/", url.scheme()))
                    .map_err(|_| HeadError::HostMismatch)?;
                if one.contains(['@', '/', '\\', '?', '#'])
                    || named.host() != url.host()
                    || named.port_or_known_default() != url.port_or_known_default()
                {
                    return Err(HeadError::HostMismatch);
                }
            }
            _ => return Err(HeadError::DuplicateHost),
        }
    }
    let upgrade = !named("upgrade").is_empty();
    Ok(RequestHead {
        method: method.to_owned(),
        target,
        version: version.to_owned(),
        headers,
        framing,
        upgrade,
    })
}

/// The target of a request line, strictly: `CONNECT host:port` (no credentials, an explicit
/// port), or an absolute `http:`/`ws:` URL without credentials. Hosts are normalised by the URL
/// parser (`2130706433`, `0x7f.1` and `017700000001` are all `127.0.0.1`).
pub fn parse_request_target(method: &str, target: &str) -> Result<ProxyTarget, HeadError> {
    if !target.bytes().all(|b| b.is_ascii_graphic()) || target.contains('\\') {
        return Err(HeadError::Target);
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        if target.contains('@') {
            return Err(HeadError::Userinfo);
        }
        if target.contains(['/', '?', '#']) {
            return Err(HeadError::Target);
        }
        let (host, port) = target.rsplit_once(':').ok_or(HeadError::ConnectPort)?;
        if port.is_empty()
            || !port.bytes().all(|b| b.is_ascii_digit())
            || host.ends_with(']') != host.starts_with('[')
        {
            return Err(HeadError::ConnectPort);
        }
        let port: u16 = port.parse().map_err(|_| HeadError::ConnectPort)?;
        let host = match url::Host::parse(host).map_err(|_| HeadError::Target)? {
            url::Host::Domain(d) if !d.is_empty() => d,
            url::Host::Domain(_) => return Err(HeadError::Target),
            url::Host::Ipv4(ip) => ip.to_string(),
            url::Host::Ipv6(ip) => ip.to_string(),
        };
        if host.contains(':') && !target.starts_with('[') {
            return Err(HeadError::Target);
        }
        return Ok(ProxyTarget::Tunnel { host, port });
    }
    let url = url::Url::parse(target).map_err(|_| HeadError::Target)?;
    if !matches!(url.scheme(), "http" | "ws") || url.host_str().is_none_or(str::is_empty) {
        return Err(HeadError::Target);
    }
    if !url.username().is_empty()
        || url.password().is_some()
        || target.contains('@') && authority_has_at(target)
    {
        return Err(HeadError::Userinfo);
    }
    Ok(ProxyTarget::Forward { url })
}

/// Whether the authority part of an absolute URL (between `//` and the next `/`, `?` or `#`)
/// holds an `@`, even an empty userinfo (`http://@evil/`) the parser would drop.
fn authority_has_at(target: &str) -> bool {
    let rest = target.split_once("//").map_or("", |(_, r)| r);
    rest.split(['/', '?', '#'])
        .next()
        .unwrap_or("")
        .contains('@')
}

/// A body that cannot be framed.
fn bad_chunk(what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("bad chunked body: {what}"),
    )
}

/// The end of a chunked body, found incrementally.
#[derive(Debug)]
struct Chunks {
    state: ChunkState,
    line: Vec<u8>,
}

#[derive(Debug, Clone, Copy)]
enum ChunkState {
    Size,
    Data(u64),
    DataEnd,
    Trailer,
}

/// Longest chunk-size or trailer line.
const MAX_CHUNK_LINE: usize = 8 * 1024;

impl Chunks {
    fn new() -> Chunks {
        Chunks {
            state: ChunkState::Size,
            line: Vec::new(),
        }
    }

    /// Consumes `bytes`; `Some(n)` when the body ends after `bytes[..n]`.
    fn feed(&mut self, bytes: &[u8]) -> std::io::Result<Option<usize>> {
        let mut i = 0;
        while i < bytes.len() {
            match self.state {
                ChunkState::Data(left) => {
                    let take = usize::try_from(left)
                        .unwrap_or(usize::MAX)
                        .min(bytes.len() - i);
                    i += take;
                    let left = left - take as u64;
                    self.state = if left == 0 {
                        ChunkState::DataEnd
                    } else {
                        ChunkState::Data(left)
                    };
                }
                ChunkState::Size | ChunkState::DataEnd | ChunkState::Trailer => {
                    self.line.push(bytes[i]);
                    i += 1;
                    if self.line.len() > MAX_CHUNK_LINE {
                        return Err(bad_chunk("a line is too long"));
                    }
                    if !self.line.ends_with(b"\n") {
                        continue;
                    }
                    let Some(line) = self.line.strip_suffix(b"\r\n") else {
                        return Err(bad_chunk("a bare LF"));
                    };
                    if line.contains(&b'\r') || line.contains(&0) {
                        return Err(bad_chunk("a bare CR or NUL"));
                    }
                    match self.state {
                        ChunkState::Size => {
                            let digits = line.split(|&b| b == b';').next().unwrap_or(b"");
                            let text = std::str::from_utf8(digits)
                                .map_err(|_| bad_chunk("a chunk size"))?;
                            if text.is_empty() || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
                                return Err(bad_chunk("a chunk size"));
                            }
                            let size = u64::from_str_radix(text, 16)
                                .map_err(|_| bad_chunk("a chunk size"))?;
                            self.state = if size == 0 {
                                ChunkState::Trailer
                            } else {
                                ChunkState::Data(size)
                            };
                        }
                        ChunkState::DataEnd => {
                            if !line.is_empty() {
                                return Err(bad_chunk("chunk data longer than its size"));
                            }
                            self.state = ChunkState::Size;
                        }
                        ChunkState::Trailer | ChunkState::Data(_) => {
                            if line.is_empty() {
                                return Ok(Some(i));
                            }
                        }
                    }
                    self.line.clear();
                }
            }
        }
        Ok(None)
    }
}

/// Copies exactly one request body from `reader` to `writer`, starting with `already` (bytes
/// read after the head); returns what came after the body, which is not forwarded.
pub async fn relay_body<R, W>(
    framing: Framing,
    already: Vec<u8>,
    reader: &mut R,
    writer: &mut W,
) -> std::io::Result<Vec<u8>>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut pending = already;
    let mut buf = vec![0u8; 16 * 1024];
    match framing {
        Framing::Empty => Ok(pending),
        Framing::Length(mut left) => loop {
            let take = usize::try_from(left)
                .unwrap_or(usize::MAX)
                .min(pending.len());
            writer.write_all(&pending[..take]).await?;
            left -= take as u64;
            if left == 0 {
                return Ok(pending.split_off(take));
            }
            let n = reader.read(&mut buf).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            pending = buf[..n].to_vec();
        },
        Framing::Chunked => {
            let mut chunks = Chunks::new();
            loop {
                if let Some(end) = chunks.feed(&pending)? {
                    writer.write_all(&pending[..end]).await?;
                    return Ok(pending.split_off(end));
                }
                writer.write_all(&pending).await?;
                let n = reader.read(&mut buf).await?;
                if n == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                pending = buf[..n].to_vec();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Result<RequestHead, HeadError> {
        parse_head(text.as_bytes())
    }

    #[test]
    fn smuggling_shapes_are_refused() {
        let ok = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n";
        assert_eq!(head(ok).unwrap().framing, Framing::Empty);
        let cases: &[(&str, HeadError)] = &[
            (
                "GET http://a.test/ HTTP/1.1\r\nHost: a.test\rX: y\r\n\r\n",
                HeadError::BadByte("a bare CR"),
            ),
            (
                "GET http://a.test/ HTTP/1.1\r\nHost: a.test\nX: y\r\n\r\n",
                HeadError::BadByte("a bare LF"),
            ),
            (
                "GET http://a.test/ HTTP/1.1\r\nX: a\0b\r\n\r\n",
                HeadError::BadByte("a NUL byte"),
            ),
            (
                "POST http://a.test/ HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
                HeadError::LengthAndChunked,
            ),
            (
                "POST http://a.test/ HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
                HeadError::ContentLength,
            ),
            (
                "POST http://a.test/ HTTP/1.1\r\nContent-Length: +3\r\n\r\n",
                HeadError::ContentLength,
            ),
            (
                "POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
                HeadError::TransferEncoding,
            ),
            (
                "POST http://a.test/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
                HeadError::TransferEncoding,
            ),
            (
                "GET http://a.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n",
                HeadError::HostMismatch,
            ),
            (
                "GET http://a.test/ HTTP/1.1\r\nHost: a.test:81\r\n\r\n",
                HeadError::HostMismatch,
            ),
            (
                "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nHost: a.test\r\n\r\n",
                HeadError::DuplicateHost,
            ),
            (
                "GET http://a.test/ HTTP/1.1\r\n folded: x\r\n\r\n",
                HeadError::HeaderLine,
            ),
            (
                "GET http://a.test/ HTTP/1.1\r\nName : x\r\n\r\n",
                HeadError::HeaderLine,
            ),
            (
                "GET  http://a.test/ HTTP/1.1\r\n\r\n",
                HeadError::RequestLine,
            ),
            ("GET http://a.test/ HTTP/2\r\n\r\n", HeadError::RequestLine),
            ("GET /relative HTTP/1.1\r\n\r\n", HeadError::Target),
            (
                "GET http://allowed.test@evil.test/ HTTP/1.1\r\n\r\n",
                HeadError::Userinfo,
            ),
            (
                "GET http://@evil.test/ HTTP/1.1\r\n\r\n",
                HeadError::Userinfo,
            ),
            (
                "GET http://a:b@evil.test/ HTTP/1.1\r\n\r\n",
                HeadError::Userinfo,
            ),
            (
                "GET http://a.test\\@evil.test/ HTTP/1.1\r\n\r\n",
                HeadError::Target,
            ),
            (
                "CONNECT a.test@evil.test:443 HTTP/1.1\r\n\r\n",
                HeadError::Userinfo,
            ),
            ("CONNECT evil.test HTTP/1.1\r\n\r\n", HeadError::ConnectPort),
            (
                "CONNECT evil.test: HTTP/1.1\r\n\r\n",
                HeadError::ConnectPort,
            ),
            (
                "CONNECT evil.test:443/x HTTP/1.1\r\n\r\n",
                HeadError::Target,
            ),
            ("CONNECT ::1:443 HTTP/1.1\r\n\r\n", HeadError::Target),
        ];
        for (text, want) in cases {
            assert_eq!(head(text).unwrap_err(), *want, "{text:?}");
        }
    }

    #[test]
    fn hosts_are_normalised_before_anything_is_checked() {
        for spelling in [
            "2130706433",
            "0x7f.1",
            "017700000001",
            "127.1",
            "0x7f000001",
        ] {
            let h = head(&format!("GET http://{spelling}:81/ HTTP/1.1\r\n\r\n")).unwrap();
            let ProxyTarget::Forward { url } = h.target else {
                panic!("{spelling}")
            };
            assert_eq!(url.host_str(), Some("127.0.0.1"), "{spelling}");
            let t = parse_request_target("CONNECT", &format!("{spelling}:443")).unwrap();
            assert_eq!(
                t,
                ProxyTarget::Tunnel {
                    host: "127.0.0.1".into(),
                    port: 443
                },
                "{spelling}"
            );
        }
        let t = parse_request_target("CONNECT", "[::ffff:127.0.0.1]:443").unwrap();
        assert_eq!(
            t,
            ProxyTarget::Tunnel {
                host: "::ffff:127.0.0.1".into(),
                port: 443
            }
        );
        // The Host header is compared after the same normalisation; CONNECT ignores it.
        assert!(head("GET http://127.0.0.1:81/ HTTP/1.1\r\nHost: 2130706433:81\r\n\r\n").is_ok());
        assert!(head("CONNECT a.test:443 HTTP/1.1\r\nHost: evil.test\r\n\r\n").is_ok());
    }

    #[tokio::test]
    async fn exactly_one_body_is_relayed() {
        let relay = |framing, sent: &'static [u8]| async move {
            let mut out = Vec::new();
            let mut reader: &[u8] = &sent[3..];
            let rest = relay_body(framing, sent[..3].to_vec(), &mut reader, &mut out).await;
            rest.map(|rest| (out, [rest, reader.to_vec()].concat()))
        };
        let (body, rest) = relay(Framing::Length(5), b"hello GET / HTTP/1.1\r\n\r\n")
            .await
            .unwrap();
        assert_eq!(body, b"hello");
        assert_eq!(rest, b" GET / HTTP/1.1\r\n\r\n");
        let chunked = b"3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\nGET / HTTP/1.1\r\n\r\n";
        let (body, rest) = relay(Framing::Chunked, chunked).await.unwrap();
        assert_eq!(body, b"3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n");
        assert_eq!(rest, b"GET / HTTP/1.1\r\n\r\n");
        let (body, rest) = relay(Framing::Empty, b"GET / HTTP/1.1\r\n\r\n")
            .await
            .unwrap();
        assert!(body.is_empty());
        assert_eq!(rest, b"GET / HTTP/1.1\r\n\r\n");
        assert!(
            relay(Framing::Chunked, b"3\r\nabcd\r\n0\r\n\r\n")
                .await
                .is_err()
        );
        assert!(relay(Framing::Chunked, b"zz\r\n").await.is_err());
        assert!(relay(Framing::Length(10), b"short").await.is_err());
    }
}
