//! Console and network history for `read_diagnostics`: bounded rings, filtered when recorded (no headers, cookies, query strings, credentials, token-like strings or e-mail addresses).
//!
//! Spec: openai-browser-desktop-drivers, "Habilitar diagnósticos, scripts y transferencias de
//! archivos": "El controlador debe filtrar los datos privados y limitar el historial que conserva.
//! No devuelvas encabezados sin procesar, cookies, credenciales ni mensajes de consola sin filtrar."

use std::collections::VecDeque;

use hands_core::browser::truncate_utf8;

use crate::policy::BlockedRequest;

/// Most bytes of one console message as kept.
pub const MAX_CONSOLE_BYTES: usize = 300;
/// Most bytes of one filtered URL as kept.
pub const MAX_URL_BYTES: usize = 200;
/// What replaces a token-like string.
pub const REDACTED: &str = "[redacted]";
/// What replaces an e-mail address.
pub const REDACTED_EMAIL: &str = "[email]";
/// What replaces a token-like path segment.
pub const REDACTED_SEGMENT: &str = ":redacted";

/// One console line, filtered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleEntry {
    /// `log`, `warning`, `error`, `exception`, `dialog`, …
    pub level: String,
    /// The filtered text.
    pub text: String,
}

impl ConsoleEntry {
    /// Filters a raw console message.
    pub fn new(level: &str, raw: &str) -> ConsoleEntry {
        ConsoleEntry {
            level: truncate_utf8(level, 16).to_owned(),
            text: redact_text(raw, MAX_CONSOLE_BYTES),
        }
    }

    fn render(&self) -> String {
        format!("[{}] {}", self.level, self.text)
    }
}

/// One network request, filtered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkEntry {
    request_id: String,
    method: String,
    url: String,
    kind: String,
    status: Option<u16>,
    failed: Option<String>,
    blocked: Option<String>,
    /// The order it was recorded in, across tabs ([`NetworkRecord::seq`]).
    seq: u64,
    /// Bytes received, once it finished.
    bytes: Option<u64>,
}

/// Orders network entries across every tab of the process.
static NEXT_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_seq() -> u64 {
    NEXT_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// One request as a trace records it: filtered as `read_diagnostics` shows it (no query,
/// credentials, headers or bodies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkRecord {
    /// The order it was recorded in (grows across tabs).
    pub seq: u64,
    /// The tab (`t1`, …).
    pub tab: String,
    /// `GET`, `POST`, …
    pub method: String,
    /// Scheme, host, port and path, token-like segments replaced.
    pub url: String,
    /// `Document`, `Script`, `XHR`, `Fetch`, …
    pub kind: String,
    /// The HTTP status, once answered.
    pub status: Option<u16>,
    /// Why it failed (`net::ERR_…`).
    pub failed: Option<String>,
    /// Why the policy refused it.
    pub blocked: Option<String>,
    /// Bytes received, once it finished.
    pub bytes: Option<u64>,
}

impl NetworkEntry {
    /// A request that started.
    pub fn started(request_id: &str, method: &str, raw_url: &str, kind: &str) -> NetworkEntry {
        NetworkEntry {
            request_id: request_id.to_owned(),
            method: truncate_utf8(method, 16).to_owned(),
            url: filter_url(raw_url),
            kind: truncate_utf8(kind, 32).to_owned(),
            status: None,
            failed: None,
            blocked: None,
            seq: next_seq(),
            bytes: None,
        }
    }

    /// A request the policy blocked (recorded by origin only).
    pub fn blocked(blocked: &BlockedRequest, method: &str) -> NetworkEntry {
        NetworkEntry {
            request_id: String::new(),
            method: truncate_utf8(method, 16).to_owned(),
            url: blocked.origin.clone(),
            kind: blocked.resource_type.clone(),
            status: None,
            failed: None,
            blocked: Some(redact_text(&blocked.reason, 200)),
            seq: next_seq(),
            bytes: None,
        }
    }

    fn render(&self) -> String {
        if let Some(reason) = &self.blocked {
            return format!(
                "BLOCKED {} {} [{}]: {reason}",
                self.method, self.url, self.kind
            );
        }
        let outcome = match (&self.failed, self.status) {
            (Some(error), _) => format!("failed {error}"),
            (None, Some(status)) => status.to_string(),
            (None, None) => "pending".to_owned(),
        };
        format!("{} {} [{}] {outcome}", self.method, self.url, self.kind)
    }
}

/// A tab's bounded console and network history.
#[derive(Debug, Clone)]
pub struct Rings {
    capacity: usize,
    console: VecDeque<ConsoleEntry>,
    network: VecDeque<NetworkEntry>,
}

impl Rings {
    /// Empty rings of `capacity` entries each.
    pub fn new(capacity: usize) -> Rings {
        Rings {
            capacity: capacity.max(1),
            console: VecDeque::new(),
            network: VecDeque::new(),
        }
    }

    /// Records a console entry, dropping the oldest when full.
    pub fn push_console(&mut self, entry: ConsoleEntry) {
        if self.console.len() == self.capacity {
            self.console.pop_front();
        }
        self.console.push_back(entry);
    }

    /// Records a request, dropping the oldest when full. A redirect re-uses its request id: the
    /// hop replaces nothing, it is a new line.
    pub fn push_network(&mut self, entry: NetworkEntry) {
        if self.network.len() == self.capacity {
            self.network.pop_front();
        }
        self.network.push_back(entry);
    }

    /// Sets the status of the latest entry of `request_id`.
    pub fn set_status(&mut self, request_id: &str, status: u16) {
        if let Some(e) = self
            .network
            .iter_mut()
            .rev()
            .find(|e| e.request_id == request_id)
        {
            e.status = Some(status);
        }
    }

    /// Sets the bytes received of the latest entry of `request_id`.
    pub fn set_bytes(&mut self, request_id: &str, bytes: u64) {
        if let Some(e) = self
            .network
            .iter_mut()
            .rev()
            .find(|e| e.request_id == request_id)
        {
            e.bytes = Some(bytes);
        }
    }

    /// The requests recorded after `seq` (as far as the ring still holds them), oldest first.
    pub fn network_since(&self, seq: u64, tab: &str) -> Vec<NetworkRecord> {
        self.network
            .iter()
            .filter(|e| e.seq > seq)
            .map(|e| NetworkRecord {
                seq: e.seq,
                tab: tab.to_owned(),
                method: e.method.clone(),
                url: e.url.clone(),
                kind: e.kind.clone(),
                status: e.status,
                failed: e.failed.clone(),
                blocked: e.blocked.clone(),
                bytes: e.bytes,
            })
            .collect()
    }

    /// Marks the latest entry of `request_id` failed.
    pub fn set_failed(&mut self, request_id: &str, error: &str) {
        if let Some(e) = self
            .network
            .iter_mut()
            .rev()
            .find(|e| e.request_id == request_id)
        {
            e.failed = Some(truncate_utf8(error, 64).to_owned());
        }
    }

    /// The last `limit` console lines, oldest first.
    pub fn console_lines(&self, limit: usize) -> Vec<String> {
        let skip = self.console.len().saturating_sub(limit);
        self.console
            .iter()
            .skip(skip)
            .map(ConsoleEntry::render)
            .collect()
    }

    /// The last `limit` network lines, oldest first.
    pub fn network_lines(&self, limit: usize) -> Vec<String> {
        let skip = self.network.len().saturating_sub(limit);
        self.network
            .iter()
            .skip(skip)
            .map(NetworkEntry::render)
            .collect()
    }
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '/' | '=' | '.' | '~' | '%')
}

/// Whether a run looks like a secret: long, with both letters and digits.
fn token_like(run: &str, min_len: usize) -> bool {
    run.len() >= min_len
        && run.chars().any(|c| c.is_ascii_digit())
        && run.chars().any(|c| c.is_ascii_alphabetic())
}

/// A URL reduced to scheme, host, port and path, with token-like path segments replaced; no
/// credentials, query or fragment. Unparsable text is redacted whole.
pub fn filter_url(raw: &str) -> String {
    let Ok(url) = url::Url::parse(raw) else {
        return REDACTED.to_owned();
    };
    let origin = crate::policy::origin_of(&url);
    if !matches!(url.scheme(), "http" | "https" | "ws" | "wss") {
        return origin;
    }
    let path: Vec<&str> = url
        .path()
        .split('/')
        .map(|segment| {
            if token_like(segment, 16) {
                REDACTED_SEGMENT
            } else {
                segment
            }
        })
        .collect();
    let text = format!("{origin}{}", path.join("/"));
    truncate_utf8(&text, MAX_URL_BYTES).to_owned()
}

/// Filters free text: URLs reduced by [`filter_url`], e-mail addresses and token-like runs
/// (24+ characters mixing letters and digits) replaced, the whole cut to `max_bytes`.
pub fn redact_text(raw: &str, max_bytes: usize) -> String {
    let mut out = String::with_capacity(raw.len().min(max_bytes + 16));
    for word in raw.split_inclusive(char::is_whitespace) {
        if out.len() > max_bytes {
            break;
        }
        let trimmed = word.trim_end();
        let tail = &word[trimmed.len()..];
        out.push_str(&redact_word(trimmed));
        out.push_str(tail);
    }
    truncate_utf8(out.trim_end(), max_bytes).to_owned()
}

fn redact_word(word: &str) -> String {
    // URLs first (they may sit inside quotes or parentheses).
    for scheme in ["https://", "http://", "wss://", "ws://"] {
        if let Some(start) = word.find(scheme) {
            let end = word[start..]
                .find(['"', '\'', ')', '>', ',', ']'])
                .map_or(word.len(), |e| start + e);
            return format!(
                "{}{}{}",
                redact_word(&word[..start]),
                filter_url(&word[start..end]),
                redact_word(&word[end..])
            );
        }
    }
    if let Some(at) = word.find('@') {
        let (user, domain) = (&word[..at], &word[at + 1..]);
        if !user.is_empty() && domain.contains('.') {
            return REDACTED_EMAIL.to_owned();
        }
    }
    let mut out = String::with_capacity(word.len());
    let mut run = String::new();
    for c in word.chars() {
        if is_token_char(c) {
            run.push(c);
        } else {
            flush(&mut out, &mut run);
            out.push(c);
        }
    }
    flush(&mut out, &mut run);
    out
}

fn flush(out: &mut String, run: &mut String) {
    if token_like(run, 24) {
        out.push_str(REDACTED);
    } else {
        out.push_str(run);
    }
    run.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_credentials_queries_and_tokens() {
        let check = |raw: &str, expect: &str| assert_eq!(filter_url(raw), expect, "{raw}");
        check(
            "https://u:p@example.com/a/b?token=1#f",
            "https://example.com/a/b",
        );
        check("http://127.0.0.1:8080/", "http://127.0.0.1:8080/");
        check(
            "https://x.test/reset/9f8e7d6c5b4a39281706f5e4/confirm",
            "https://x.test/reset/:redacted/confirm",
        );
        check("data:text/html,<b>secret</b>", "data:");
        check("not a url", REDACTED);
    }

    #[test]
    fn console_text_is_filtered() {
        let check = |raw: &str, expect: &str| assert_eq!(redact_text(raw, 300), expect, "{raw}");
        check("hello world", "hello world");
        check(
            "fetch failed: https://api.test/v1/items?key=abc123 (500)",
            "fetch failed: https://api.test/v1/items (500)",
        );
        check("token eyJhbGciOiJIUzI1NiJ9abc123def456", "token [redacted]");
        check(
            "mail me at jane.doe@example.com now",
            "mail me at [email] now",
        );
        check("user 12345 logged in", "user 12345 logged in");
        let long = "é".repeat(400);
        let cut = redact_text(&long, 300);
        assert!(cut.len() <= 300 && cut.chars().all(|c| c == 'é'));
    }

    #[test]
    fn rings_are_bounded_and_render_outcomes() {
        let mut rings = Rings::new(2);
        for i in 0..3 {
            rings.push_console(ConsoleEntry::new("log", &format!("m{i}")));
        }
        assert_eq!(rings.console_lines(10), vec!["[log] m1", "[log] m2"]);
        assert_eq!(rings.console_lines(1), vec!["[log] m2"]);
        rings.push_network(NetworkEntry::started(
            "1",
            "GET",
            "http://a.test/x?q=1",
            "Document",
        ));
        rings.set_status("1", 200);
        rings.push_network(NetworkEntry::started(
            "2",
            "POST",
            "http://a.test/api",
            "Fetch",
        ));
        rings.set_failed("2", "net::ERR_FAILED");
        assert_eq!(
            rings.network_lines(5),
            vec![
                "GET http://a.test/x [Document] 200",
                "POST http://a.test/api [Fetch] failed net::ERR_FAILED"
            ]
        );
        let blocked = BlockedRequest {
            tab: None,
            origin: "http://evil.test".into(),
            resource_type: "Script".into(),
            reason: "not allowed".into(),
        };
        rings.push_network(NetworkEntry::blocked(&blocked, "GET"));
        assert_eq!(
            rings.network_lines(1),
            vec!["BLOCKED GET http://evil.test [Script]: not allowed"]
        );
    }
}
