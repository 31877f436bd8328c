//! A loopback HTTP/1.1 server for the client tests: answers scripted replies in order, as the
//! real APIs would on the wire (JSON errors with headers, chunked SSE, dropped connections),
//! and records every request it received. The server task is aborted on drop.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// How a scripted SSE body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseEnd {
    /// The final zero-length chunk, then close.
    Clean,
    /// Close the socket mid-body: the client sees a broken chunked body.
    Drop,
    /// Keep the connection open and send nothing more.
    Hang,
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A whole response.
    Json {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// `200 text/event-stream`, chunked, written in `chunks` pieces.
    Sse { chunks: Vec<String>, end: SseEnd },
    /// Read the request and never answer.
    Hang,
}

impl Reply {
    pub fn json(status: u16, body: &str) -> Reply {
        Reply::Json {
            status,
            headers: Vec::new(),
            body: body.to_owned(),
        }
    }

    pub fn json_with(status: u16, headers: &[(&str, &str)], body: &str) -> Reply {
        Reply::Json {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            body: body.to_owned(),
        }
    }

    /// An SSE body cut into pieces of `piece` bytes (at char boundaries), to exercise
    /// the client's parser across chunk edges.
    pub fn sse(body: &str, piece: usize, end: SseEnd) -> Reply {
        let mut chunks = Vec::new();
        let mut rest = body;
        while !rest.is_empty() {
            let mut cut = piece.min(rest.len());
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            chunks.push(rest[..cut].to_owned());
            rest = &rest[cut..];
        }
        Reply::Sse { chunks, end }
    }
}

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

pub struct Server {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// Listens on 127.0.0.1:0 and answers `replies` in order (a 500 once they run out).
    pub async fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let queue = Arc::new(Mutex::new(VecDeque::from(replies)));
        let recorded = Arc::clone(&requests);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let queue = Arc::clone(&queue);
                let recorded = Arc::clone(&recorded);
                // Connection tasks end with the test's runtime.
                tokio::spawn(serve(stream, queue, recorded));
            }
        });
        Server {
            addr,
            requests,
            task,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

async fn serve(
    mut stream: TcpStream,
    queue: Arc<Mutex<VecDeque<Reply>>>,
    recorded: Arc<Mutex<Vec<Recorded>>>,
) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    recorded.lock().unwrap().push(request);
    let reply = queue.lock().unwrap().pop_front().unwrap_or(Reply::Json {
        status: 500,
        headers: Vec::new(),
        body: r#"{"error":{"type":"api_error","message":"no scripted reply left"}}"#.into(),
    });
    match reply {
        Reply::Json {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                reason(status),
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let _ = stream.write_all(head.as_bytes()).await;
            let _ = stream.write_all(body.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
        Reply::Sse { chunks, end } => {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nrequest-id: req_stream_1\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
            if stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            for chunk in chunks {
                let framed = format!("{:x}\r\n{chunk}\r\n", chunk.len());
                if stream.write_all(framed.as_bytes()).await.is_err() {
                    return;
                }
                let _ = stream.flush().await;
            }
            match end {
                SseEnd::Clean => {
                    let _ = stream.write_all(b"0\r\n\r\n").await;
                    let _ = stream.shutdown().await;
                }
                SseEnd::Drop => {
                    let _ = stream.shutdown().await;
                }
                SseEnd::Hang => tokio::time::sleep(Duration::from_secs(3600)).await,
            }
        }
        Reply::Hang => tokio::time::sleep(Duration::from_secs(3600)).await,
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

async fn read_request(stream: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Recorded {
        method,
        path,
        headers,
        body,
    })
}

/// A fixture's text.
pub fn fixture(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|err| panic!("{}: {err}", full.display()))
}
