//! Response bodies: one JSON document, or SSE events sent one chunk each, optionally ending in
//! an aborted connection.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::body::{Body, Bytes, Frame, SizeHint};
use serde_json::Value;

/// One SSE event: `event: <name>` and one `data:` line of JSON.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Event {
    pub(crate) name: String,
    pub(crate) data: Value,
}

impl Event {
    pub(crate) fn new(name: &str, data: Value) -> Event {
        Event {
            name: name.to_owned(),
            data,
        }
    }

    pub(crate) fn encode(&self) -> Bytes {
        Bytes::from(format!("event: {}\ndata: {}\n\n", self.name, self.data))
    }
}

/// How a stream of events ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The chunked body ends normally.
    Finish,
    /// The connection is aborted after the last chunk: no terminating chunk is sent.
    Abort,
}

/// A body of pre-built chunks, each sent as its own frame.
///
/// Between frames of a stream it yields once to hyper, which then writes what it has to the
/// socket: events leave one by one, as from a real server, and the events before an injected
/// abort reach the client before the connection is cut.
#[derive(Debug)]
pub(crate) struct ChunkBody {
    chunks: VecDeque<Bytes>,
    ending: Ending,
    /// Whether to yield before the next frame.
    yield_next: bool,
    /// Whether frames are separated by yields (streams) or not (one JSON document).
    streaming: bool,
}

impl ChunkBody {
    /// A one-document body.
    pub(crate) fn document(bytes: Bytes) -> ChunkBody {
        ChunkBody {
            chunks: VecDeque::from([bytes]),
            ending: Ending::Finish,
            yield_next: false,
            streaming: false,
        }
    }

    /// A stream of chunks ending as `ending` says.
    pub(crate) fn stream(chunks: Vec<Bytes>, ending: Ending) -> ChunkBody {
        ChunkBody {
            chunks: chunks.into(),
            ending,
            yield_next: false,
            streaming: true,
        }
    }
}

impl Body for ChunkBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.yield_next {
            this.yield_next = false;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        if let Some(chunk) = this.chunks.pop_front() {
            this.yield_next = this.streaming;
            return Poll::Ready(Some(Ok(Frame::data(chunk))));
        }
        match this.ending {
            Ending::Finish => Poll::Ready(None),
            Ending::Abort => {
                // Report the abort once; hyper then closes the connection mid-body.
                this.ending = Ending::Finish;
                Poll::Ready(Some(Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "hands-sim: injected dropped stream",
                ))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty() && self.ending == Ending::Finish
    }

    fn size_hint(&self) -> SizeHint {
        if self.streaming {
            SizeHint::default()
        } else {
            SizeHint::with_exact(self.chunks.iter().map(|c| c.len() as u64).sum())
        }
    }
}

/// Splits text into pieces of at most `n_chars` characters, never inside a character.
pub(crate) fn split_chars(text: &str, n_chars: usize) -> Vec<String> {
    let n_chars = n_chars.max(1);
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(n_chars)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_encode_as_sse() {
        let event = Event::new("ping", serde_json::json!({"type": "ping"}));
        assert_eq!(
            &event.encode()[..],
            b"event: ping\ndata: {\"type\":\"ping\"}\n\n"
        );
    }

    #[test]
    fn splitting_keeps_characters_whole() {
        assert_eq!(split_chars("héllo", 2), vec!["hé", "ll", "o"]);
        assert!(split_chars("", 3).is_empty());
    }
}
