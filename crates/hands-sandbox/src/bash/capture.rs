//! One output stream of the shell: finding the end-of-command marker in it, and keeping at most
//! the output cap of what came before.

use tokio::io::{AsyncRead, AsyncReadExt as _};

/// The output of one stream of one command, cut at the cap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamText {
    /// The text kept (invalid UTF-8 shown as U+FFFD), without the one trailing newline.
    pub text: String,
    /// How many characters after `text` were cut by the output cap.
    pub n_cut_chars: u64,
}

/// What one stream produced during one command: the first bytes up to a bound, and a count of
/// the characters dropped after it, so a command printing gigabytes costs bounded memory.
#[derive(Debug)]
pub(crate) struct Capture {
    kept: Vec<u8>,
    /// `4 * cap` bytes: enough for `cap` characters of any UTF-8.
    keep_bytes: usize,
    /// Characters (UTF-8 lead bytes) dropped after `kept` filled up.
    n_dropped_chars: u64,
}

impl Capture {
    /// An empty capture that keeps enough bytes for `cap_chars` characters.
    pub(crate) fn new(cap_chars: usize) -> Self {
        Self {
            kept: Vec::new(),
            keep_bytes: cap_chars.saturating_mul(4),
            n_dropped_chars: 0,
        }
    }

    /// Appends bytes of the stream.
    pub(crate) fn push(&mut self, data: &[u8]) {
        let room = self.keep_bytes.saturating_sub(self.kept.len());
        let (keep, drop) = data.split_at(room.min(data.len()));
        self.kept.extend_from_slice(keep);
        // A character is counted by its lead byte: every byte that is not a continuation byte.
        self.n_dropped_chars += drop.iter().filter(|b| (**b & 0xC0) != 0x80).count() as u64;
    }

    /// The text, decoded, with one trailing newline removed when nothing was dropped.
    fn decode(self) -> (String, u64) {
        let mut text = String::from_utf8_lossy(&self.kept).into_owned();
        if self.n_dropped_chars == 0 && text.ends_with('\n') {
            text.pop();
        }
        (text, self.n_dropped_chars)
    }
}

/// Cuts the two streams of one command to `cap` characters in all.
///
/// Each stream may use half the cap; what one does not use, the other may. So a command with
/// a huge stdout still shows its stderr, and one huge stream alone gets the whole cap.
pub(crate) fn finish(stdout: Capture, stderr: Capture, cap: usize) -> (StreamText, StreamText) {
    let (out, out_dropped) = stdout.decode();
    let (err, err_dropped) = stderr.decode();
    let n_out = out.chars().count();
    let n_err = err.chars().count();
    let (take_out, take_err) = split_budget(cap, n_out, n_err);
    (
        cut(out, n_out, take_out, out_dropped),
        cut(err, n_err, take_err, err_dropped),
    )
}

/// How many characters of each stream to keep within `cap`.
pub(crate) fn split_budget(cap: usize, n_a: usize, n_b: usize) -> (usize, usize) {
    if n_a.saturating_add(n_b) <= cap {
        return (n_a, n_b);
    }
    let half = cap / 2;
    if n_a < half {
        (n_a, cap - n_a)
    } else if n_b < cap - half {
        (cap - n_b, n_b)
    } else {
        (half, cap - half)
    }
}

fn cut(text: String, n_chars: usize, take: usize, n_dropped: u64) -> StreamText {
    if take >= n_chars {
        return StreamText {
            text,
            n_cut_chars: n_dropped,
        };
    }
    let end = text.char_indices().nth(take).map_or(text.len(), |(i, _)| i);
    StreamText {
        text: text[..end].to_owned(),
        n_cut_chars: (n_chars - take) as u64 + n_dropped,
    }
}

/// A stream of the shell read up to per-command markers.
///
/// Bytes read past a marker (output of a background job arriving between commands) stay in
/// `window` and count as the next command's output.
#[derive(Debug)]
pub(crate) struct MarkedStream<R> {
    reader: R,
    /// Bytes read but not yet known to be output: they may be the start of the marker.
    window: Vec<u8>,
    /// The current command's output.
    pub(crate) capture: Capture,
}

impl<R: AsyncRead + Unpin> MarkedStream<R> {
    pub(crate) fn new(reader: R, cap_chars: usize) -> Self {
        Self {
            reader,
            window: Vec::new(),
            capture: Capture::new(cap_chars),
        }
    }

    /// Starts a new command's capture, returning the previous one.
    pub(crate) fn take_capture(&mut self, cap_chars: usize) -> Capture {
        std::mem::replace(&mut self.capture, Capture::new(cap_chars))
    }

    /// Reads until `marker` and the rest of its line; returns that rest (without the newline),
    /// or `None` at end of stream. Cancel-safe: every byte read is kept in `self`.
    pub(crate) async fn read_to_marker(
        &mut self,
        marker: &[u8],
    ) -> std::io::Result<Option<Vec<u8>>> {
        let mut buf = [0u8; 8192];
        loop {
            if let Some(rest) = self.scan(marker) {
                return Ok(Some(rest));
            }
            let n = self.reader.read(&mut buf).await?;
            if n == 0 {
                self.flush();
                return Ok(None);
            }
            self.window.extend_from_slice(&buf[..n]);
        }
    }

    /// Counts what is still held back as a possible marker start as output: the command
    /// ended without its marker (timeout, cancellation).
    pub(crate) fn flush(&mut self) {
        self.capture.push(&self.window);
        self.window.clear();
    }

    /// Reads to end of stream into the capture (after the shell died).
    pub(crate) async fn drain(&mut self) -> std::io::Result<()> {
        let mut buf = [0u8; 8192];
        self.flush();
        loop {
            let n = self.reader.read(&mut buf).await?;
            if n == 0 {
                return Ok(());
            }
            self.capture.push(&buf[..n]);
        }
    }

    /// Moves what is certainly output from the window to the capture; finds the marker line.
    fn scan(&mut self, marker: &[u8]) -> Option<Vec<u8>> {
        if let Some(at) = find(&self.window, marker) {
            self.capture.push(&self.window[..at]);
            self.window.drain(..at);
            let after = &self.window[marker.len()..];
            let newline = after.iter().position(|b| *b == b'\n')?;
            let rest = after[..newline].to_vec();
            self.window.drain(..marker.len() + newline + 1);
            return Some(rest);
        }
        // Keep only what could still be the start of the marker.
        let keep = marker.len().saturating_sub(1);
        if self.window.len() > keep {
            let n_out = self.window.len() - keep;
            self.capture.push(&self.window[..n_out]);
            self.window.drain(..n_out);
        }
        None
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_split() {
        // (cap, n_a, n_b) -> (take_a, take_b)
        let cases = [
            ((10, 3, 4), (3, 4)),
            ((10, 10, 0), (10, 0)),
            ((10, 100, 0), (10, 0)),
            ((10, 0, 100), (0, 10)),
            ((10, 2, 100), (2, 8)),
            ((10, 100, 2), (8, 2)),
            ((10, 100, 100), (5, 5)),
            ((11, 100, 100), (5, 6)),
            ((10, 5, 6), (5, 5)),
        ];
        for ((cap, a, b), want) in cases {
            assert_eq!(split_budget(cap, a, b), want, "cap {cap}, a {a}, b {b}");
        }
    }

    fn capture_of(data: &[u8], cap: usize) -> Capture {
        let mut c = Capture::new(cap);
        for chunk in data.chunks(7) {
            c.push(chunk);
        }
        c
    }

    #[test]
    fn cut_on_char_boundary_and_count() {
        // 30 two-byte characters, cap 10: 10 kept, 20 cut, no half character.
        let data = "é".repeat(30);
        let (out, err) = finish(capture_of(data.as_bytes(), 10), Capture::new(10), 10);
        assert_eq!(out.text, "é".repeat(10));
        assert_eq!(out.n_cut_chars, 20);
        assert_eq!(err, StreamText::default());
    }

    #[test]
    fn dropped_bytes_are_counted_as_characters() {
        // Far more than 4 * cap bytes: most are dropped while reading, and still counted.
        let data = "€".repeat(1000); // 3 bytes each
        let (out, _) = finish(capture_of(data.as_bytes(), 8), Capture::new(8), 8);
        assert_eq!(out.text, "€".repeat(8));
        assert_eq!(out.n_cut_chars, 992);
    }

    #[test]
    fn one_trailing_newline_is_removed() {
        let (out, _) = finish(capture_of(b"a\nb\n\n", 100), Capture::new(100), 100);
        assert_eq!(out.text, "a\nb\n");
        assert_eq!(out.n_cut_chars, 0);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let (out, _) = finish(capture_of(b"ok \xff\xfe!", 100), Capture::new(100), 100);
        assert_eq!(out.text, "ok \u{fffd}\u{fffd}!");
    }

    #[tokio::test]
    async fn marker_split_across_reads_and_leftover_kept() {
        // The marker arrives in pieces; bytes after its line belong to the next command.
        let (mut tx, rx) = tokio::io::duplex(64);
        let mut stream = MarkedStream::new(rx, 100);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt as _;
            for part in [&b"hello wo"[..], b"rld\nMA", b"RK", b"ER 7", b"\nlate\n"] {
                tx.write_all(part).await.unwrap();
                tx.flush().await.unwrap();
                tokio::task::yield_now().await;
            }
            tx
        });
        let rest = stream.read_to_marker(b"MARKER").await.unwrap();
        assert_eq!(rest.as_deref(), Some(&b" 7"[..]));
        let first = stream.take_capture(100);
        assert_eq!(first.decode().0, "hello world");
        let tx = writer.await.unwrap();
        drop(tx);
        assert_eq!(stream.read_to_marker(b"MARKER").await.unwrap(), None);
        assert_eq!(stream.take_capture(100).decode().0, "late");
    }

    #[tokio::test]
    async fn output_without_final_newline_before_marker() {
        let data: &[u8] = b"no newline MARKER 0\n";
        let mut stream = MarkedStream::new(data, 100);
        let rest = stream.read_to_marker(b"MARKER").await.unwrap();
        assert_eq!(rest.as_deref(), Some(&b" 0"[..]));
        assert_eq!(stream.take_capture(100).decode().0, "no newline ");
    }
}
