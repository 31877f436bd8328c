//! A small incremental parser for `text/event-stream` bodies (the WHATWG server-sent events
//! format), fed with the body's chunks as they arrive.
//!
//! Why not `eventsource-stream`: it brings `nom` into the build for a 100-line job, copies the
//! remaining buffer after every line, and drops a truncated trailing event silently, while
//! a model client must tell a clean end from a dropped connection. This parser works on bytes
//! (a UTF-8 sequence or a CR LF split across chunks is fine), decodes a line only once it is
//! complete, and reports whether an event was left half-received.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when one was given.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The `id:` field, when one was given.
    pub id: Option<String>,
}

/// A line that is not UTF-8.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event-stream line {line_no} is not UTF-8")]
pub struct SseError {
    /// 1-based line number in the stream.
    pub line_no: u64,
}

/// Incremental parser state.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    /// Bytes of `buf` already scanned for a line end.
    scanned: usize,
    /// The previous chunk ended with CR: a LF at the start of the next one belongs to it.
    after_cr: bool,
    started: bool,
    line_no: u64,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
    /// A field line was seen since the last dispatch.
    pending: bool,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> SseParser {
        SseParser::default()
    }

    /// Feeds one chunk; returns the events it completed, in order.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut events = Vec::new();
        let mut chunk = chunk;
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
        }
        self.buf.extend_from_slice(chunk);
        if !self.started && self.buf.len() >= 3 {
            self.started = true;
            if self.buf.starts_with(b"\xEF\xBB\xBF") {
                self.buf.drain(..3);
            }
        }
        if !self.started {
            return Ok(events);
        }
        let mut line_start = 0;
        let mut idx = self.scanned;
        while idx < self.buf.len() {
            let byte = self.buf[idx];
            if byte != b'\n' && byte != b'\r' {
                idx += 1;
                continue;
            }
            let line_end = idx;
            idx += 1;
            if byte == b'\r' {
                if idx < self.buf.len() {
                    if self.buf[idx] == b'\n' {
                        idx += 1;
                    }
                } else {
                    self.after_cr = true;
                }
            }
            self.line_no += 1;
            let line =
                std::str::from_utf8(&self.buf[line_start..line_end]).map_err(|_| SseError {
                    line_no: self.line_no,
                })?;
            let line = line.to_owned();
            if let Some(event) = self.take_line(&line) {
                events.push(event);
            }
            line_start = idx;
        }
        self.buf.drain(..line_start);
        self.scanned = self.buf.len();
        Ok(events)
    }

    /// True when bytes or fields of an event arrived that were never dispatched: the stream
    /// was cut inside an event.
    pub fn has_partial_event(&self) -> bool {
        self.pending || !self.buf.is_empty()
    }

    fn take_line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        self.pending = true;
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        self.pending = false;
        let event = self.event.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            id: self.id.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
            id: None,
        }
    }

    /// Feeds `chunks` and returns every event plus whether a partial event remained.
    fn check(chunks: &[&[u8]]) -> (Vec<SseEvent>, bool) {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend(parser.push(chunk).unwrap());
        }
        (out, parser.has_partial_event())
    }

    #[test]
    fn events_across_every_split() {
        let body = "event: message_start\ndata: {\"a\":1}\n\n: comment\nevent: ping\ndata: {}\r\n\r\ndata: x\rdata: y\r\r";
        let expect = vec![
            ev(Some("message_start"), "{\"a\":1}"),
            ev(Some("ping"), "{}"),
            ev(None, "x\ny"),
        ];
        // Every two-way split of the body gives the same events.
        for split in 0..=body.len() {
            let (head, tail) = body.as_bytes().split_at(split);
            let (events, partial) = check(&[head, tail]);
            assert_eq!(events, expect, "split at {split}");
            assert!(!partial, "split at {split}");
        }
        // One byte at a time too.
        let bytes: Vec<&[u8]> = body.as_bytes().chunks(1).collect();
        assert_eq!(check(&bytes).0, expect);
    }

    #[test]
    fn multibyte_utf8_split_inside_a_character() {
        let body = "data: {\"t\":\"héllo ✓\"}\n\n".as_bytes();
        for split in 0..=body.len() {
            let (head, tail) = body.split_at(split);
            assert_eq!(
                check(&[head, tail]).0,
                vec![ev(None, "{\"t\":\"héllo ✓\"}")]
            );
        }
    }

    #[test]
    fn field_rules() {
        let cases: [(&str, Vec<SseEvent>); 5] = [
            // No space after the colon; only one leading space is stripped.
            ("data:a\ndata:  b\n\n", vec![ev(None, "a\n b")]),
            // An event with no data is not dispatched, and its type does not leak.
            ("event: x\n\ndata: 1\n\n", vec![ev(None, "1")]),
            // A line without a colon is a field with an empty value.
            ("data\n\n", vec![ev(None, "")]),
            // Unknown fields and retry are ignored.
            ("retry: 10\nfoo: bar\ndata: z\n\n", vec![ev(None, "z")]),
            // A leading BOM is dropped.
            ("\u{feff}data: b\n\n", vec![ev(None, "b")]),
        ];
        for (body, expect) in cases {
            assert_eq!(check(&[body.as_bytes()]).0, expect, "{body:?}");
        }
    }

    #[test]
    fn id_is_kept_on_following_events() {
        let (events, _) = check(&[b"id: 7\ndata: a\n\ndata: b\n\n"]);
        assert_eq!(events[0].id.as_deref(), Some("7"));
        assert_eq!(events[1].id.as_deref(), Some("7"));
    }

    #[test]
    fn truncated_event_is_reported_not_dispatched() {
        let cases: [(&[u8], bool); 4] = [
            (b"data: {\"a\":1}\n\n", false),
            (b"data: {\"a\":1}\n", true),
            (b"data: {\"a\"", true),
            (b": keep-alive\n", false),
        ];
        for (body, partial) in cases {
            let (events, was_partial) = check(&[body]);
            assert_eq!(was_partial, partial, "{body:?}");
            assert_eq!(
                events.len(),
                usize::from(!partial && body.starts_with(b"data"))
            );
        }
    }

    #[test]
    fn invalid_utf8_line_is_an_error_with_its_line_number() {
        let mut parser = SseParser::new();
        assert_eq!(
            parser.push(b"data: ok\n\ndata: \xff\xfe\n\n"),
            Err(SseError { line_no: 3 })
        );
    }
}
