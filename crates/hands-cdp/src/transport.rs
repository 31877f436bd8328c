//! The two ways DevTools messages travel: a WebSocket (`attach ws://…`, a browser someone else
//! started) and the pair of pipes of `--remote-debugging-pipe` (every browser hands launches).
//!
//! Over the pipes each message is one JSON text followed by a NUL byte, in both directions:
//! Chromium reads commands from its descriptor 3 and writes answers and events to its descriptor
//! 4 (the framing Puppeteer's `PipeTransport` and Playwright's pipe transport use). A launched
//! browser therefore opens no DevTools port and writes no `DevToolsActivePort` file: only the
//! process holding the other ends of the two pipes can speak CDP to it, where a port on loopback
//! let any local process, of any uid, attach and turn the URL fence off (`Fetch.disable`).
//!
//! Spec: claude-computer-use-tool, precautions 1 and 3; issue 17 ("CDP over
//! `--remote-debugging-pipe`: no DevTools port anywhere").

use std::future::Future;

use futures_util::{SinkExt as _, StreamExt as _};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio_tungstenite::tungstenite::Message;

/// The largest message either transport accepts (screenshots and whole-page reads are large;
/// both ends are local).
pub(crate) const MAX_MESSAGE_BYTES: usize = 512 << 20;

/// How much the pipe transport asks for per read.
const READ_CHUNK: usize = 64 << 10;

/// One duplex channel of DevTools messages, owned by the connection's task.
pub(crate) trait Transport: Send + 'static {
    /// Sends one message.
    fn send(&mut self, text: String) -> impl Future<Output = Result<(), String>> + Send;

    /// The next message, or why the channel is closed. Cancel-safe: dropped before it finishes,
    /// it loses no message (the connection's task races it against outgoing commands).
    fn recv(&mut self) -> impl Future<Output = Result<String, String>> + Send;

    /// Closes the channel, as far as this side can.
    fn close(&mut self) -> impl Future<Output = ()> + Send;
}

/// A DevTools WebSocket.
pub(crate) struct WebSocket<S>(pub(crate) tokio_tungstenite::WebSocketStream<S>);

impl<S> Transport for WebSocket<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    async fn send(&mut self, text: String) -> Result<(), String> {
        self.0
            .send(Message::text(text))
            .await
            .map_err(|e| format!("sending failed: {e}"))
    }

    async fn recv(&mut self) -> Result<String, String> {
        loop {
            // `next` is cancel-safe; a skipped frame is dropped on purpose.
            match self.0.next().await {
                Some(Ok(Message::Text(text))) => return Ok(text.as_str().to_owned()),
                Some(Ok(Message::Binary(bytes))) => {
                    if let Ok(text) = std::str::from_utf8(&bytes) {
                        return Ok(text.to_owned());
                    }
                }
                Some(Ok(Message::Close(frame))) => {
                    return Err(match frame {
                        Some(frame) => format!("the browser closed the socket ({})", frame.reason),
                        None => "the browser closed the socket".to_owned(),
                    });
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(format!("the socket failed: {e}")),
                None => return Err("the socket ended".to_owned()),
            }
        }
    }

    async fn close(&mut self) {
        let _ = self.0.close(None).await;
    }
}

/// The two pipes of `--remote-debugging-pipe`: commands are written to `writer` (the browser's
/// descriptor 3), answers and events read from `reader` (its descriptor 4), each message
/// NUL-terminated.
pub(crate) struct Pipes<R, W> {
    reader: R,
    writer: W,
    /// Bytes read and not yet handed out: the start of the next message(s).
    buf: Vec<u8>,
    /// How much of `buf` is known to hold no NUL.
    scanned: usize,
}

impl<R, W> Pipes<R, W> {
    /// Wraps the two ends.
    pub(crate) fn new(reader: R, writer: W) -> Pipes<R, W> {
        Pipes {
            reader,
            writer,
            buf: Vec::new(),
            scanned: 0,
        }
    }

    /// Takes the first whole message out of the buffer, if one is there.
    fn take_message(&mut self) -> Option<Vec<u8>> {
        let nul = self.buf[self.scanned..].iter().position(|&b| b == 0)?;
        let end = self.scanned + nul;
        let rest = self.buf.split_off(end + 1);
        let mut message = std::mem::replace(&mut self.buf, rest);
        message.truncate(end);
        self.scanned = 0;
        Some(message)
    }
}

impl<R, W> Transport for Pipes<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    async fn send(&mut self, text: String) -> Result<(), String> {
        let mut bytes = text.into_bytes();
        bytes.push(0);
        self.writer
            .write_all(&bytes)
            .await
            .map_err(|e| format!("writing to the DevTools pipe failed: {e}"))
    }

    async fn recv(&mut self) -> Result<String, String> {
        loop {
            while let Some(message) = self.take_message() {
                match String::from_utf8(message) {
                    Ok(text) => return Ok(text),
                    Err(e) => tracing::warn!(error = %e, "a DevTools message that is not UTF-8"),
                }
            }
            self.scanned = self.buf.len();
            if self.buf.len() > MAX_MESSAGE_BYTES {
                return Err(format!(
                    "the browser sent a DevTools message longer than {MAX_MESSAGE_BYTES} bytes"
                ));
            }
            self.buf.reserve(READ_CHUNK);
            // `read_buf` is cancel-safe: nothing is read when the future is dropped, and what a
            // finished read appended stays in `buf`.
            let n = self
                .reader
                .read_buf(&mut self.buf)
                .await
                .map_err(|e| format!("reading the DevTools pipe failed: {e}"))?;
            if n == 0 {
                return Err(if self.buf.is_empty() {
                    "the browser closed the DevTools pipe".to_owned()
                } else {
                    "the browser closed the DevTools pipe in the middle of a message".to_owned()
                });
            }
        }
    }

    async fn close(&mut self) {
        let _ = self.writer.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::OwnedFd;

    use tokio::net::unix::pipe;

    use super::*;

    /// Our reading end of a pipe, and its writing end as a blocking file.
    fn pipe_pair() -> (pipe::Receiver, std::fs::File) {
        let (read, write): (OwnedFd, OwnedFd) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
        (
            pipe::Receiver::from_owned_fd(read).unwrap(),
            std::fs::File::from(write),
        )
    }

    fn transport() -> (Pipes<pipe::Receiver, tokio::io::Sink>, std::fs::File) {
        let (reader, writer) = pipe_pair();
        (Pipes::new(reader, tokio::io::sink()), writer)
    }

    #[tokio::test]
    async fn several_messages_in_one_read_come_out_one_by_one() {
        use std::io::Write as _;
        let (mut pipes, mut browser) = transport();
        browser
            .write_all(b"{\"id\":1}\0{\"id\":2}\0{\"method\":\"X\"}\0")
            .unwrap();
        assert_eq!(pipes.recv().await.unwrap(), r#"{"id":1}"#);
        assert_eq!(pipes.recv().await.unwrap(), r#"{"id":2}"#);
        assert_eq!(pipes.recv().await.unwrap(), r#"{"method":"X"}"#);
        drop(browser);
        assert_eq!(
            pipes.recv().await.unwrap_err(),
            "the browser closed the DevTools pipe"
        );
    }

    #[tokio::test]
    async fn a_message_split_across_reads_is_joined() {
        use std::io::Write as _;
        let (mut pipes, mut browser) = transport();
        let reading = tokio::spawn(async move {
            let first = pipes.recv().await;
            let second = pipes.recv().await;
            (first, second, pipes)
        });
        // Each piece is its own write, with time between them for a read to see it alone; the
        // second piece ends the first message and starts the second.
        for piece in [
            &b"{\"id\":"[..],
            b"7,\"result\":{}}\0{\"id\"",
            b":8}",
            b"\0",
        ] {
            browser.write_all(piece).unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let (first, second, mut pipes) = reading.await.unwrap();
        assert_eq!(first.unwrap(), r#"{"id":7,"result":{}}"#);
        assert_eq!(second.unwrap(), r#"{"id":8}"#);
        // A message cut off by the browser's exit is reported, not handed out.
        browser.write_all(b"{\"id\":9").unwrap();
        drop(browser);
        assert_eq!(
            pipes.recv().await.unwrap_err(),
            "the browser closed the DevTools pipe in the middle of a message"
        );
    }

    #[tokio::test]
    async fn a_message_bigger_than_the_read_buffer_comes_out_whole() {
        use std::io::Write as _;
        let (mut pipes, mut browser) = transport();
        let big = format!(
            "{{\"id\":3,\"result\":{{\"data\":\"{}\"}}}}",
            "x".repeat(READ_CHUNK * 5 + 17)
        );
        let expected = big.clone();
        // A blocking writer on a thread: the pipe holds far less than the message.
        let writer = std::thread::spawn(move || {
            browser.write_all(big.as_bytes()).unwrap();
            browser.write_all(b"\0{\"id\":4}\0").unwrap();
        });
        let first = pipes.recv().await.unwrap();
        assert_eq!(first.len(), expected.len());
        assert!(first == expected, "the big message came out changed");
        assert_eq!(pipes.recv().await.unwrap(), r#"{"id":4}"#);
        writer.join().unwrap();
    }

    #[tokio::test]
    async fn sent_messages_are_nul_terminated() {
        use std::io::Read as _;
        let (read, write): (OwnedFd, OwnedFd) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
        let sender = pipe::Sender::from_owned_fd(write).unwrap();
        let mut pipes = Pipes::new(tokio::io::empty(), sender);
        pipes.send(r#"{"id":1}"#.to_owned()).await.unwrap();
        pipes.send(r#"{"id":2}"#.to_owned()).await.unwrap();
        drop(pipes);
        let mut bytes = Vec::new();
        std::fs::File::from(read).read_to_end(&mut bytes).unwrap();
        assert_eq!(bytes, b"{\"id\":1}\0{\"id\":2}\0");
    }
}
