//! Response bodies: one JSON document, or SSE events sent one chunk each, optionally ending in
//! an aborted connection.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::body::{Body, Bytes, Frame};
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
#[derive(Debug)]
pub(crate) struct ChunkBody {
    chunks: VecDeque<Bytes>,
    ending: Ending,
}

impl ChunkBody {
    pub(crate) fn new(chunks: Vec<Bytes>, ending: Ending) -> ChunkBody {
        ChunkBody {
            chunks: chunks.into(),
            ending,
        }
    }
}

impl Body for ChunkBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Some(chunk) = this.chunks.pop_front() {
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
