//! When to send a request again, and how long to wait first.
//!
//! Retrying a *request* is all this crate ever repeats: a request has no side effect on the
//! caller's machine, so sending it again is safe. A streamed response that has delivered an
//! event is never retried here, because the caller may already have executed what it received
//! (spec: openai-browser-desktop-drivers, "Manejar fallos": "Un reintento HTTP del SDK no
//! vuelve a ejecutar una acción del controlador").

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// Header with which the API overrides the retry decision (`true` / `false`).
pub const HEADER_SHOULD_RETRY: &str = "x-should-retry";
/// Header with the wait before a retry, in milliseconds.
pub const HEADER_RETRY_AFTER_MS: &str = "retry-after-ms";
/// Header with the wait before a retry, in seconds or as an HTTP date.
pub const HEADER_RETRY_AFTER: &str = "retry-after";

/// How a client retries failed requests: exponential backoff with full jitter, unless the
/// server says how long to wait.
///
/// Retried: HTTP 408, 409, 429, every 5xx (529 included), and connection errors or timeouts
/// before any response byte. Never retried: any other status (400, 401, 403, 404, 413...), a
/// 429 that reports a quota or spend limit, or a stream once it has started. `x-should-retry:
/// true|false` overrides the status rule. Spec: api-contracts A, "Errors".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt; 0 disables retries.
    pub max_retries: u32,
    /// Backoff before the first retry (before jitter); doubles each retry.
    pub base_delay: Duration,
    /// Cap of the exponential backoff.
    pub max_delay: Duration,
    /// Cap of a server-requested wait (`retry-after-ms` / `retry-after`).
    pub max_retry_after: Duration,
}

impl RetryPolicy {
    /// Two retries, like the official SDKs.
    pub const DEFAULT_MAX_RETRIES: u32 = 2;
    /// First backoff 0.5 s, as the official SDKs.
    pub const DEFAULT_BASE_DELAY: Duration = Duration::from_millis(500);
    /// Backoff cap 8 s, as the official SDKs.
    pub const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(8);
    /// A server-requested wait is honoured up to 60 s, as the official SDKs.
    pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

    /// No retries at all: runs that declare MCP tools use this (spec: "Las solicitudes que
    /// declaran herramientas MCP deshabilitan los reintentos automáticos del SDK").
    pub const fn disabled() -> RetryPolicy {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::DEFAULT
        }
    }

    /// The default policy as a constant.
    pub const DEFAULT: RetryPolicy = RetryPolicy {
        max_retries: RetryPolicy::DEFAULT_MAX_RETRIES,
        base_delay: RetryPolicy::DEFAULT_BASE_DELAY,
        max_delay: RetryPolicy::DEFAULT_MAX_DELAY,
        max_retry_after: RetryPolicy::DEFAULT_MAX_RETRY_AFTER,
    };

    /// The exponential backoff bound for retry number `n_retries_done` (0 for the first).
    pub fn backoff_bound(&self, n_retries_done: u32) -> Duration {
        let factor = 1u32.checked_shl(n_retries_done.min(30)).unwrap_or(u32::MAX);
        self.base_delay
            .checked_mul(factor)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }

    /// The wait before retry number `n_retries_done`: the server's wait (capped) when it gave
    /// a positive one, else full jitter `unit * backoff_bound` with `unit` in `[0, 1)`.
    pub fn delay(&self, n_retries_done: u32, server_wait: Option<Duration>, unit: f64) -> Duration {
        match server_wait {
            Some(wait) if !wait.is_zero() => wait.min(self.max_retry_after),
            _ => self
                .backoff_bound(n_retries_done)
                .mul_f64(unit.clamp(0.0, 1.0)),
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy::DEFAULT
    }
}

/// Whether an HTTP error answer may be retried: `x-should-retry` first, then the quota rule,
/// then the status (408, 409, 429, 5xx).
pub(crate) fn is_retryable(status: u16, should_retry: Option<bool>, quota_exceeded: bool) -> bool {
    if let Some(should_retry) = should_retry {
        return should_retry;
    }
    if quota_exceeded {
        return false;
    }
    matches!(status, 408 | 409 | 429 | 500..=599)
}

/// Parses `x-should-retry`.
pub(crate) fn parse_should_retry(value: Option<&str>) -> Option<bool> {
    match value.map(str::trim) {
        Some(v) if v.eq_ignore_ascii_case("true") => Some(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

/// The server-requested wait: `retry-after-ms` (milliseconds, may be fractional), else
/// `retry-after` (whole seconds, or an HTTP date relative to `now`). A date in the past is a
/// zero wait; an unparseable value is ignored.
pub(crate) fn parse_retry_after(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    now: SystemTime,
) -> Option<Duration> {
    if let Some(ms) = retry_after_ms
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = retry_after?.trim();
    if let Some(secs) = value
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
    {
        return Some(Duration::from_secs_f64(secs));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A number in `[0, 1)` for jitter. Not cryptographic: std's randomly keyed hasher over a
/// counter, which is all jitter needs and keeps a random-number crate out of the build.
pub(crate) fn jitter_unit() -> f64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    // 53 random bits make an exactly representable fraction below 1.
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// A fresh idempotency key: `hands-` and 128 bits from the process's random hasher keys and a
/// counter (unique per logical request; not a secret).
pub(crate) fn idempotency_key() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let half = |salt: u64| {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(n);
        hasher.write_u64(salt);
        hasher.finish()
    };
    format!("hands-{:016x}{:016x}", half(1), half(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_statuses_and_overrides() {
        let cases = [
            (408, None, false, true),
            (409, None, false, true),
            (429, None, false, true),
            (500, None, false, true),
            (502, None, false, true),
            (503, None, false, true),
            (529, None, false, true),
            (400, None, false, false),
            (401, None, false, false),
            (403, None, false, false),
            (404, None, false, false),
            (413, None, false, false),
            (429, None, true, false),
            (500, Some(false), false, false),
            (400, Some(true), false, true),
            (429, Some(true), true, true),
        ];
        for (status, should_retry, quota, expect) in cases {
            assert_eq!(
                is_retryable(status, should_retry, quota),
                expect,
                "{status} {should_retry:?} {quota}"
            );
        }
    }

    #[test]
    fn should_retry_header_values() {
        assert_eq!(parse_should_retry(Some("true")), Some(true));
        assert_eq!(parse_should_retry(Some(" FALSE ")), Some(false));
        assert_eq!(parse_should_retry(Some("maybe")), None);
        assert_eq!(parse_should_retry(None), None);
    }

    #[test]
    fn retry_after_ms_then_seconds_then_date() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2026 07:28:00 GMT").unwrap();
        let cases: [(Option<&str>, Option<&str>, Option<Duration>); 8] = [
            (Some("250"), Some("9"), Some(Duration::from_millis(250))),
            (Some("1.5"), None, Some(Duration::from_micros(1500))),
            (Some("junk"), Some("3"), Some(Duration::from_secs(3))),
            (None, Some("0.5"), Some(Duration::from_millis(500))),
            (
                None,
                Some("Wed, 21 Oct 2026 07:28:07 GMT"),
                Some(Duration::from_secs(7)),
            ),
            (
                None,
                Some("Wed, 21 Oct 2026 07:27:00 GMT"),
                Some(Duration::ZERO),
            ),
            (None, Some("soon"), None),
            (Some("-5"), None, None),
        ];
        for (ms, secs, expect) in cases {
            assert_eq!(parse_retry_after(ms, secs, now), expect, "{ms:?} {secs:?}");
        }
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let policy = RetryPolicy::default();
        let bounds: Vec<_> = (0..6).map(|n| policy.backoff_bound(n)).collect();
        assert_eq!(
            bounds,
            [500, 1000, 2000, 4000, 8000, 8000].map(Duration::from_millis)
        );
        assert_eq!(policy.backoff_bound(1000), Duration::from_secs(8));
    }

    #[test]
    fn delay_uses_server_wait_capped_else_full_jitter() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.delay(0, Some(Duration::from_millis(1200)), 0.9),
            Duration::from_millis(1200)
        );
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(600)), 0.9),
            Duration::from_secs(60)
        );
        // A zero wait falls back to backoff, so a server cannot make a client spin.
        assert_eq!(
            policy.delay(1, Some(Duration::ZERO), 0.5),
            Duration::from_millis(500)
        );
        assert_eq!(policy.delay(2, None, 0.0), Duration::ZERO);
        assert_eq!(policy.delay(2, None, 0.25), Duration::from_millis(500));
    }

    #[test]
    fn jitter_stays_in_unit_interval_and_varies() {
        let units: Vec<f64> = (0..64).map(|_| jitter_unit()).collect();
        assert!(units.iter().all(|u| (0.0..1.0).contains(u)));
        let first = units[0];
        assert!(units.iter().any(|u| *u != first));
    }

    #[test]
    fn disabled_policy_has_no_retries() {
        assert_eq!(RetryPolicy::disabled().max_retries, 0);
        assert_eq!(RetryPolicy::default().max_retries, 2);
    }
}
