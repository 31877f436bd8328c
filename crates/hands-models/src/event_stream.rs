//! An open model stream, the same for both APIs: SSE events are parsed, applied to the
//! provider's accumulator, then delivered; a failure ends the stream with how many events were
//! delivered, and [`EventStream::finish`] drains the rest into the final value.
//!
//! A failure after the stream started is returned as [`Error::Stream`] and never retried: the
//! caller may already have acted on delivered events, so only it can decide to send again.

use tokio_util::sync::CancellationToken;

use crate::error::{Error, Provider, StreamError, StreamErrorKind};
use crate::http::{CallMeta, Completed, SseBody, SseStop};

mod sealed {
    pub trait Sealed {}
}

/// What one API's stream is made of: its events, its accumulator, its final value.
/// Implemented by [`crate::anthropic::Messages`] and [`crate::openai::Responses`].
pub trait StreamProtocol: sealed::Sealed {
    /// Named in errors.
    const PROVIDER: Provider;
    /// One parsed event.
    type Event;
    /// Folds events into the final value.
    type Accumulator: std::fmt::Debug;
    /// What a finished stream returns.
    type Final;

    /// An empty accumulator.
    fn accumulator() -> Self::Accumulator;
    /// Parses one SSE event; `Ok(None)` when the stream says it is done (`[DONE]`).
    fn parse(sse_name: Option<&str>, data: &str) -> Result<Option<Self::Event>, StreamErrorKind>;
    /// Applies an event.
    fn apply(acc: &mut Self::Accumulator, event: &Self::Event) -> Result<(), StreamErrorKind>;
    /// Whether the final event was applied (nothing is read after it).
    fn is_complete(acc: &Self::Accumulator) -> bool;
    /// The final value.
    fn finish(acc: Self::Accumulator) -> Result<Self::Final, StreamErrorKind>;
}

/// An open stream of one API; see the module doc. Named [`crate::anthropic::MessageStream`]
/// and [`crate::openai::ResponseStream`].
#[derive(Debug)]
pub struct EventStream<P: StreamProtocol> {
    body: SseBody,
    accumulator: P::Accumulator,
    meta: CallMeta,
    n_delivered: usize,
    finished: bool,
}

impl<P: StreamProtocol> EventStream<P> {
    pub(crate) fn open(
        response: reqwest::Response,
        cancel: &CancellationToken,
        idle_timeout: std::time::Duration,
        meta: CallMeta,
    ) -> EventStream<P> {
        EventStream {
            body: SseBody::new(response, cancel, idle_timeout),
            accumulator: P::accumulator(),
            meta,
            n_delivered: 0,
            finished: false,
        }
    }

    /// Request id and retries of the request that opened the stream.
    pub fn meta(&self) -> &CallMeta {
        &self.meta
    }

    /// The accumulator, with every event delivered so far applied.
    pub fn accumulator(&self) -> &P::Accumulator {
        &self.accumulator
    }

    pub(crate) fn accumulator_mut(&mut self) -> &mut P::Accumulator {
        &mut self.accumulator
    }

    /// How many events were delivered.
    pub fn events_delivered(&self) -> usize {
        self.n_delivered
    }

    fn fail(&mut self, kind: StreamErrorKind) -> Error {
        self.finished = true;
        stream_error::<P>(kind, self.n_delivered, &self.meta)
    }

    /// The next event, or `None` after the final event (or after an error was returned).
    pub async fn next(&mut self) -> Option<Result<P::Event, Error>> {
        if self.finished {
            return None;
        }
        let sse = match self.body.next_event().await {
            Ok(sse) => sse,
            Err(SseStop::End) => return Some(Err(self.fail(StreamErrorKind::Ended))),
            Err(SseStop::Failed(kind)) => return Some(Err(self.fail(kind))),
            Err(SseStop::Cancelled) => {
                self.finished = true;
                return Some(Err(Error::Cancelled {
                    provider: P::PROVIDER,
                }));
            }
        };
        let event = match P::parse(sse.event.as_deref(), &sse.data) {
            Ok(Some(event)) => event,
            // Done before the final event: the stream ended early.
            Ok(None) => return Some(Err(self.fail(StreamErrorKind::Ended))),
            Err(kind) => return Some(Err(self.fail(kind))),
        };
        if let Err(kind) = P::apply(&mut self.accumulator, &event) {
            return Some(Err(self.fail(kind)));
        }
        self.n_delivered += 1;
        self.finished = P::is_complete(&self.accumulator);
        Some(Ok(event))
    }

    /// Reads the remaining events and returns the final value, equal to what the
    /// non-streaming call would have returned.
    pub async fn finish(mut self) -> Result<Completed<P::Final>, Error> {
        while let Some(event) = self.next().await {
            event?;
        }
        let EventStream {
            accumulator,
            meta,
            n_delivered,
            ..
        } = self;
        let value =
            P::finish(accumulator).map_err(|kind| stream_error::<P>(kind, n_delivered, &meta))?;
        Ok(Completed { value, meta })
    }
}

fn stream_error<P: StreamProtocol>(
    kind: StreamErrorKind,
    n_delivered: usize,
    meta: &CallMeta,
) -> Error {
    Error::Stream(Box::new(StreamError {
        provider: P::PROVIDER,
        events_delivered: n_delivered,
        kind,
        request_id: meta.request_id.clone(),
    }))
}

pub(crate) use sealed::Sealed;
