//! The network policy enforced inside the browser: every request of every attached target, each redirect hop included, is checked before it leaves.
//!
//! Spec: openai-browser-desktop-drivers, "Restringir las URL": "Aplica también una política de red
//! en el navegador o el entorno. El callback verifica la navegación solicitada, pero no puede
//! restringir redirecciones, ventanas emergentes, scripts de la página ni recursos incrustados."

use std::fmt;
use std::sync::Arc;

use hands_core::browser::TabId;

/// The CDP error reason a denied request fails with (the page sees `net::ERR_BLOCKED_BY_CLIENT`).
pub const BLOCKED_ERROR_REASON: &str = "BlockedByClient";

/// The reason recorded when a URL cannot be parsed (denied: the policy fails closed).
pub const UNPARSABLE_URL_REASON: &str = "the URL could not be parsed";

/// One request as the policy sees it, before it leaves the browser.
#[derive(Debug, Clone, Copy)]
pub struct RequestInfo<'a> {
    /// The parsed URL (WHATWG rules).
    pub url: &'a url::Url,
    /// The CDP resource type: `Document`, `Script`, `XHR`, `Fetch`, `WebSocket`, `EventSource`,
    /// `Ping` (beacons), `Image`, `Stylesheet`, `Other`, …
    pub resource_type: &'a str,
    /// `GET`, `POST`, …
    pub method: &'a str,
    /// The tab the request belongs to (through its frame, worker or pop-up), when known.
    pub tab: Option<&'a TabId>,
}

impl RequestInfo<'_> {
    /// Whether this loads a document into a frame (a navigation, including each redirect hop).
    pub fn is_navigation(&self) -> bool {
        self.resource_type == "Document"
    }
}

/// What the policy decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Let it go.
    Allow,
    /// Fail it with [`BLOCKED_ERROR_REASON`]; the reason is recorded for diagnostics.
    Deny {
        /// Why (safe to show: it must not quote secrets of the URL).
        reason: String,
    },
}

/// Decides, for each request, whether it may leave the browser. Called on the driver's event
/// loop for every paused request, so it must be quick and must not block.
pub trait RequestPolicy: Send + Sync + 'static {
    /// The verdict for one request.
    fn check(&self, request: &RequestInfo<'_>) -> Verdict;
}

/// Lets every request through (the default; interception still runs, so switching policies
/// never changes what is attached).
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl RequestPolicy for AllowAll {
    fn check(&self, _: &RequestInfo<'_>) -> Verdict {
        Verdict::Allow
    }
}

impl<F> RequestPolicy for F
where
    F: Fn(&RequestInfo<'_>) -> Verdict + Send + Sync + 'static,
{
    fn check(&self, request: &RequestInfo<'_>) -> Verdict {
        self(request)
    }
}

/// A shared policy.
pub type SharedPolicy = Arc<dyn RequestPolicy>;

/// A request the policy denied, as recorded for the state report and `read_diagnostics`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedRequest {
    /// The tab it came from, when known.
    pub tab: Option<TabId>,
    /// The URL's origin only (`https://host:port`, or the scheme for other URLs): never the path,
    /// query or credentials.
    pub origin: String,
    /// The CDP resource type.
    pub resource_type: String,
    /// The policy's reason.
    pub reason: String,
}

impl fmt::Display for BlockedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "blocked {} {}: {}",
            self.resource_type, self.origin, self.reason
        )
    }
}

/// The origin of a URL without credentials, path, query or fragment: `scheme://host[:port]`
/// for hierarchical URLs, `scheme:` for the others (`data:`, `blob:` of an opaque origin,
/// `about:`).
pub fn origin_of(url: &url::Url) -> String {
    match url.origin() {
        url::Origin::Tuple(..) => url.origin().ascii_serialization(),
        url::Origin::Opaque(_) => format!("{}:", url.scheme()),
    }
}

/// The decision for a raw URL: unparsable URLs are denied.
pub fn decide(
    policy: &dyn RequestPolicy,
    raw_url: &str,
    resource_type: &str,
    method: &str,
    tab: Option<&TabId>,
) -> (Verdict, String) {
    match url::Url::parse(raw_url) {
        Ok(url) => {
            let request = RequestInfo {
                url: &url,
                resource_type,
                method,
                tab,
            };
            (policy.check(&request), origin_of(&url))
        }
        Err(_) => (
            Verdict::Deny {
                reason: UNPARSABLE_URL_REASON.to_owned(),
            },
            "(unparsable)".to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_never_carry_paths_or_credentials() {
        let check = |raw: &str, expect: &str| {
            assert_eq!(origin_of(&url::Url::parse(raw).unwrap()), expect, "{raw}");
        };
        check(
            "https://user:pw@example.com:8443/a/b?token=1#x",
            "https://example.com:8443",
        );
        check("http://127.0.0.1:80/x", "http://127.0.0.1");
        check("data:text/html,secret", "data:");
        check("about:blank", "about:");
        check("file:///etc/passwd", "file:");
    }

    #[test]
    fn closures_are_policies_and_bad_urls_are_denied() {
        let policy = |r: &RequestInfo<'_>| {
            if r.url.host_str() == Some("allowed.test") {
                Verdict::Allow
            } else {
                Verdict::Deny {
                    reason: "not on the allow-list".into(),
                }
            }
        };
        let (v, origin) = decide(&policy, "http://allowed.test/x", "Document", "GET", None);
        assert_eq!(v, Verdict::Allow);
        assert_eq!(origin, "http://allowed.test");
        let (v, _) = decide(&policy, "http://evil.test/x", "Script", "GET", None);
        assert!(matches!(v, Verdict::Deny { .. }));
        let (v, _) = decide(&AllowAll, "http://[bad", "Document", "GET", None);
        assert_eq!(
            v,
            Verdict::Deny {
                reason: UNPARSABLE_URL_REASON.into()
            }
        );
    }
}
