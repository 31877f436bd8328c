//! What never goes into a trace: API keys, `authorization` / `x-api-key` headers (every value of
//! a `headers` object), MCP servers' authorization tokens, credentials in URLs (`user:pass@`,
//! `?token=` …), bearer tokens, and the values of secrets the exporter was given (the API-key
//! variables of its environment). [`Redactor::redact_line`] scrubs; [`Redactor::leak`] checks
//! the bytes finally written.

use serde_json::Value;

/// What replaces a secret.
pub const REDACTED: &str = "<redacted>";

/// Object keys whose value is a secret, compared lower-case with `-` read as `_`.
const SECRET_KEYS: [&str; 14] = [
    "authorization",
    "proxy_authorization",
    "x_api_key",
    "api_key",
    "apikey",
    "authorization_token",
    "access_token",
    "refresh_token",
    "client_secret",
    "secret",
    "password",
    "cookie",
    "set_cookie",
    "token",
];

/// URL query parameters whose value is a secret.
const SECRET_PARAMS: [&str; 9] = [
    "token",
    "access_token",
    "api_key",
    "apikey",
    "key",
    "secret",
    "password",
    "sig",
    "signature",
];

/// Secrets shorter than this are not searched for by value (too many false hits).
const MIN_SECRET: usize = 8;

/// Scrubs secrets out of log lines.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    values: Vec<String>,
    /// How many secrets were replaced.
    pub replaced: u64,
}

impl Redactor {
    /// A redactor that also replaces each of `values` (known secrets) wherever it appears.
    pub fn new(values: impl IntoIterator<Item = String>) -> Redactor {
        let mut values: Vec<String> = values
            .into_iter()
            .filter(|v| v.len() >= MIN_SECRET)
            .collect();
        // Longest first, so a secret containing another is replaced whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Redactor {
            values,
            replaced: 0,
        }
    }

    /// One log line, scrubbed: a JSON line is walked (secret keys, `headers`, strings); any
    /// other line is scrubbed as text.
    pub fn redact_line(&mut self, line: &str) -> String {
        match serde_json::from_str::<Value>(line) {
            Ok(mut value) => {
                self.redact_value(&mut value, false);
                value.to_string()
            }
            Err(_) => self.redact_text(line),
        }
    }

    fn redact_value(&mut self, value: &mut Value, all: bool) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    let k = key.to_ascii_lowercase().replace('-', "_");
                    let secret = all || SECRET_KEYS.contains(&k.as_str());
                    if secret && !v.is_null() && !matches!(v, Value::Object(_) | Value::Array(_)) {
                        *v = Value::String(REDACTED.to_owned());
                        self.replaced += 1;
                    } else {
                        // Every value of a `headers` object is a secret (MCP servers' custom
                        // auth headers have any name).
                        self.redact_value(v, secret || k == "headers");
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_value(v, all)),
            Value::String(s) => {
                if all {
                    *s = REDACTED.to_owned();
                    self.replaced += 1;
                } else {
                    *s = self.redact_text(s);
                }
            }
            _ => {}
        }
    }

    /// Text with known secret values, bearer tokens and URL credentials replaced.
    pub fn redact_text(&mut self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.values {
            if out.contains(secret.as_str()) {
                self.replaced += out.matches(secret.as_str()).count() as u64;
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        out = self.redact_bearer(&out);
        self.redact_urls(&out)
    }

    fn redact_bearer(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = find_ascii_ci(rest, "bearer ") {
            let (head, tail) = rest.split_at(at + "bearer ".len());
            out.push_str(head);
            let end = tail
                .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';'))
                .unwrap_or(tail.len());
            if end > 0 && &tail[..end] != REDACTED {
                out.push_str(REDACTED);
                self.replaced += 1;
            } else {
                out.push_str(&tail[..end]);
            }
            rest = &tail[end..];
        }
        out.push_str(rest);
        out
    }

    /// `scheme://user:pass@host` loses its user info; secret query parameters their values.
    fn redact_urls(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find("://") {
            let (head, tail) = rest.split_at(at + 3);
            out.push_str(head);
            let end = tail
                .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>'))
                .unwrap_or(tail.len());
            out.push_str(&self.redact_url(&tail[..end]));
            rest = &tail[end..];
        }
        out.push_str(rest);
        out
    }

    fn redact_url(&mut self, url: &str) -> String {
        let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
        let (authority, path) = url.split_at(authority_end);
        let mut out = match authority.rfind('@') {
            Some(at) => {
                self.replaced += 1;
                format!("{REDACTED}@{}", &authority[at + 1..])
            }
            None => authority.to_owned(),
        };
        let Some(q) = path.find('?') else {
            out.push_str(path);
            return out;
        };
        out.push_str(&path[..=q]);
        let query = &path[q + 1..];
        let (query, fragment) = query.split_at(query.find('#').unwrap_or(query.len()));
        let params: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, value))
                    if !value.is_empty()
                        && SECRET_PARAMS.contains(&name.to_ascii_lowercase().as_str()) =>
                {
                    self.replaced += 1;
                    format!("{name}={REDACTED}")
                }
                _ => pair.to_owned(),
            })
            .collect();
        out.push_str(&params.join("&"));
        out.push_str(fragment);
        out
    }

    /// The first known secret found in `bytes`, if any (named by its length only).
    pub fn leak(&self, bytes: &[u8]) -> Option<usize> {
        self.values
            .iter()
            .find(|s| contains(bytes, s.as_bytes()))
            .map(String::len)
    }
}

fn find_ascii_ci(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .as_bytes()
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn headers_tokens_url_credentials_and_known_values_are_replaced() {
        let mut r = Redactor::new(["sk-canary-0123456789".to_owned(), "short".to_owned()]);
        let line = json!({"kind": "request", "body": {
            "mcp_servers": [{"type": "url", "url": "https://bob:hunter22@mcp.example/sse?token=abc&x=1",
                             "name": "m", "authorization_token": "tok-secret-1"}],
            "tools": [{"type": "mcp", "server_url": "https://mcp.example", "headers": {"X-Custom": "v-secret-2"}}],
            "messages": [{"content": "the key is sk-canary-0123456789; Authorization: Bearer abc.def"}]}})
        .to_string();
        let out = r.redact_line(&line);
        for gone in [
            "hunter22",
            "tok-secret-1",
            "v-secret-2",
            "sk-canary-0123456789",
            "abc.def",
            "token=abc",
        ] {
            assert!(!out.contains(gone), "{gone} in {out}");
        }
        assert!(
            out.contains("mcp.example/sse?token=<redacted>&x=1"),
            "{out}"
        );
        assert!(out.contains("short") || !line.contains("short"));
        assert!(r.replaced >= 6, "{}", r.replaced);
        assert_eq!(r.leak(out.as_bytes()), None);
        assert_eq!(r.leak(line.as_bytes()), Some(20));
        // Not JSON: scrubbed as text.
        assert_eq!(
            r.redact_text("x-api-key sk-canary-0123456789"),
            "x-api-key <redacted>"
        );
    }
}
