//! The built-in URL policy: an allow-list of origins, compared by scheme, host and port after
//! WHATWG URL parsing — never by string prefix.
//!
//! Rules:
//! - A pattern is an origin: `https://example.com`, `http://127.0.0.1:8080`,
//!   `http://[::1]:3000`, of a scheme with hosts (`http`, `https`, `ws`, `wss`); no path, query,
//!   fragment or credentials. Hosts are compared as the parser serialises them: lowercase,
//!   IDNA to punycode, IPv4 in dotted decimal (so `http://2130706433` is `http://127.0.0.1`),
//!   IPv6 compressed. An explicit default port equals the implicit one (`:443` for https).
//! - `https://*.example.com` matches every subdomain (`a.example.com`, `a.b.example.com`) on
//!   the same scheme and port, but NOT the apex `example.com` (as in CSP): list the apex too if
//!   it is wanted. A wildcard must be the whole leftmost label and cover at least two labels
//!   (`*.com` is refused; public suffixes such as `*.co.uk` are not detected).
//! - A trailing dot makes a different host (`example.com.` is not `example.com`), as browsers
//!   treat it as a different origin: it is denied unless listed.
//! - A URL with credentials (`https://user:pw@…`, even `https://example.com@evil.test`) is
//!   denied whatever its host.
//! - Other schemes (`file:`, `data:`, `javascript:`, `blob:`, `chrome:` …) are denied. The one
//!   non-origin pattern is the literal `about:blank`, which allows `about:blank` exactly (a
//!   blank `new_tab` with a null URL never reaches the policy).
//!
//! Spec: openai-browser-desktop-drivers, "Restringir las URL": "Compara su protocolo, nombre de
//! host y puerto con los destinos permitidos para la tarea. No te bases en el prefijo de una
//! cadena".

use std::fmt;

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_core::browser::args::PageUrl;
use url::{Host, Url};

use super::consent::{CallbackError, ConfirmContext, UrlPolicy, UrlVerdict};

/// The schemes an origin pattern may use.
pub const ORIGIN_SCHEMES: [&str; 4] = ["http", "https", "ws", "wss"];

/// Why a pattern cannot be part of an allow-list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatternError {
    /// Not a URL.
    #[error(
        "`{pattern}` is not an origin ({why}); write it as e.g. https://example.com or https://*.example.com:8443"
    )]
    Unparsable {
        /// The pattern.
        pattern: String,
        /// The parser's explanation.
        why: String,
    },
    /// A URL with more than an origin.
    #[error("`{pattern}` must be an origin only: remove its {part}")]
    NotAnOrigin {
        /// The pattern.
        pattern: String,
        /// What to remove (path, query, fragment, credentials).
        part: &'static str,
    },
    /// A scheme without hosts, other than `about:blank`.
    #[error(
        "`{pattern}`: only http, https, ws and wss origins (and the literal about:blank) can be allowed, not `{scheme}:`"
    )]
    Scheme {
        /// The pattern.
        pattern: String,
        /// Its scheme.
        scheme: String,
    },
    /// A `*` anywhere but as the whole leftmost label of a domain of two labels or more.
    #[error(
        "`{pattern}`: a wildcard must be written `*.` before a domain of at least two labels, as in https://*.example.com"
    )]
    Wildcard {
        /// The pattern.
        pattern: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Origin {
        scheme: String,
        host: Host<String>,
        port: u16,
    },
    Subdomains {
        scheme: String,
        domain: String,
        port: u16,
    },
    AboutBlank,
}

/// One allowed origin, or all subdomains of one, or `about:blank`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginPattern {
    kind: Kind,
}

impl OriginPattern {
    /// Parses a pattern (see the module's rules).
    pub fn parse(pattern: &str) -> Result<OriginPattern, PatternError> {
        let text = pattern.trim();
        if text == "about:blank" {
            return Ok(OriginPattern {
                kind: Kind::AboutBlank,
            });
        }
        let (wildcard, to_parse) = match text.split_once("://*.") {
            Some((scheme, rest)) => (true, format!("{scheme}://{rest}")),
            None => (false, text.to_owned()),
        };
        let url = Url::parse(&to_parse).map_err(|e| PatternError::Unparsable {
            pattern: pattern.to_owned(),
            why: e.to_string(),
        })?;
        let scheme = url.scheme().to_owned();
        if !ORIGIN_SCHEMES.contains(&scheme.as_str()) {
            return Err(PatternError::Scheme {
                pattern: pattern.to_owned(),
                scheme,
            });
        }
        let not_origin = |part| PatternError::NotAnOrigin {
            pattern: pattern.to_owned(),
            part,
        };
        if !url.username().is_empty() || url.password().is_some() {
            return Err(not_origin("credentials"));
        }
        if url.path() != "/" {
            return Err(not_origin("path"));
        }
        if url.query().is_some() {
            return Err(not_origin("query"));
        }
        if url.fragment().is_some() {
            return Err(not_origin("fragment"));
        }
        let (Some(host), Some(port)) = (url.host(), url.port_or_known_default()) else {
            return Err(PatternError::Unparsable {
                pattern: pattern.to_owned(),
                why: "no host".into(),
            });
        };
        let wildcard_error = || PatternError::Wildcard {
            pattern: pattern.to_owned(),
        };
        let host = host.to_owned();
        if let Host::Domain(domain) = &host
            && domain.contains('*')
        {
            return Err(wildcard_error());
        }
        let kind = if wildcard {
            match host {
                Host::Domain(domain) if domain.trim_end_matches('.').contains('.') => {
                    Kind::Subdomains {
                        scheme,
                        domain,
                        port,
                    }
                }
                _ => return Err(wildcard_error()),
            }
        } else {
            Kind::Origin { scheme, host, port }
        };
        Ok(OriginPattern { kind })
    }

    fn matches(&self, url: &Url) -> bool {
        let port = url.port_or_known_default();
        match &self.kind {
            Kind::AboutBlank => url.as_str() == "about:blank",
            Kind::Origin {
                scheme,
                host,
                port: want,
            } => {
                url.scheme() == scheme
                    && port == Some(*want)
                    && url.host().map(|h| h.to_owned()).as_ref() == Some(host)
            }
            Kind::Subdomains {
                scheme,
                domain,
                port: want,
            } => {
                url.scheme() == scheme
                    && port == Some(*want)
                    && matches!(url.host(), Some(Host::Domain(d))
                        if d.len() > domain.len() + 1
                            && d.ends_with(domain.as_str())
                            && d.as_bytes()[d.len() - domain.len() - 1] == b'.')
            }
        }
    }
}

impl fmt::Display for OriginPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let port = |scheme: &str, port: u16| {
            let default = match scheme {
                "http" | "ws" => 80,
                _ => 443,
            };
            if port == default {
                String::new()
            } else {
                format!(":{port}")
            }
        };
        match &self.kind {
            Kind::AboutBlank => f.write_str("about:blank"),
            Kind::Origin {
                scheme,
                host,
                port: p,
            } => write!(f, "{scheme}://{host}{}", port(scheme, *p)),
            Kind::Subdomains {
                scheme,
                domain,
                port: p,
            } => write!(f, "{scheme}://*.{domain}{}", port(scheme, *p)),
        }
    }
}

/// Why a URL was denied.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DenyReason {
    /// Not a valid absolute URL.
    Unparsable(String),
    /// It carries a user name or password.
    Credentials,
    /// A scheme the list does not allow.
    Scheme(String),
    /// Its origin is not in the list.
    NotListed {
        /// The URL's origin (never its path or query, which may hold secrets).
        origin: String,
    },
}

impl fmt::Display for DenyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DenyReason::Unparsable(why) => write!(f, "not a valid URL ({why})"),
            DenyReason::Credentials => {
                f.write_str("the URL carries credentials (a user name or password before the host)")
            }
            DenyReason::Scheme(scheme) => write!(f, "the scheme `{scheme}:` is not allowed"),
            DenyReason::NotListed { origin } => {
                write!(f, "the origin {origin} is not in the allow-list")
            }
        }
    }
}

/// The decision on one URL, with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlDecision {
    /// Allowed by this pattern.
    Allow {
        /// The pattern that matched, as written canonically.
        pattern: String,
    },
    /// Denied.
    Deny(DenyReason),
}

impl UrlDecision {
    /// Whether the URL is allowed.
    pub fn is_allowed(&self) -> bool {
        matches!(self, UrlDecision::Allow { .. })
    }
}

impl fmt::Display for UrlDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlDecision::Allow { pattern } => write!(f, "allowed by {pattern}"),
            UrlDecision::Deny(reason) => reason.fmt(f),
        }
    }
}

/// An allow-list of origins. Empty, it denies everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OriginAllowList {
    patterns: Vec<OriginPattern>,
}

impl OriginAllowList {
    /// A list from patterns; the first bad pattern is refused.
    pub fn new<I, S>(patterns: I) -> Result<OriginAllowList, PatternError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let patterns = patterns
            .into_iter()
            .map(|p| OriginPattern::parse(p.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(OriginAllowList { patterns })
    }

    /// The patterns, in order.
    pub fn patterns(&self) -> &[OriginPattern] {
        &self.patterns
    }

    /// Decides on a parsed URL.
    pub fn check(&self, url: &Url) -> UrlDecision {
        if let Some(pattern) = self.patterns.iter().find(|p| p.matches(url)) {
            // about:blank is the only listed URL without a host; every other match is an origin
            // of a scheme with hosts, where credentials still deny.
            if !url.username().is_empty() || url.password().is_some() {
                return UrlDecision::Deny(DenyReason::Credentials);
            }
            return UrlDecision::Allow {
                pattern: pattern.to_string(),
            };
        }
        if !url.username().is_empty() || url.password().is_some() {
            return UrlDecision::Deny(DenyReason::Credentials);
        }
        if !ORIGIN_SCHEMES.contains(&url.scheme()) {
            return UrlDecision::Deny(DenyReason::Scheme(url.scheme().to_owned()));
        }
        UrlDecision::Deny(DenyReason::NotListed {
            origin: url.origin().ascii_serialization(),
        })
    }

    /// Decides on a URL as the model would send it to `navigate`: parsed like the toolset parses
    /// it (a bare host such as `example.com/docs` is read as `https://example.com/docs`), so the
    /// answer here is the answer the toolset gives.
    pub fn check_str(&self, text: &str) -> UrlDecision {
        match PageUrl::parse("url", text) {
            Ok(url) => self.check(url.url()),
            Err(e) => UrlDecision::Deny(DenyReason::Unparsable(e.to_string())),
        }
    }
}

#[async_trait]
impl UrlPolicy for OriginAllowList {
    async fn check(
        &self,
        _context: ConfirmContext,
        url: Url,
        _cancel: CancellationToken,
    ) -> Result<UrlVerdict, CallbackError> {
        Ok(match OriginAllowList::check(self, &url) {
            UrlDecision::Allow { .. } => UrlVerdict::Allow,
            UrlDecision::Deny(reason) => UrlVerdict::Deny {
                reason: reason.to_string(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(patterns: &[&str]) -> OriginAllowList {
        OriginAllowList::new(patterns).unwrap()
    }

    /// (allow-list, URL, allowed?)
    fn check(patterns: &[&str], cases: &[(&str, bool)]) {
        let allow = list(patterns);
        for (url, want) in cases {
            let decision = allow.check_str(url);
            assert_eq!(
                decision.is_allowed(),
                *want,
                "{patterns:?} {url}: {decision}"
            );
        }
    }

    #[test]
    fn exact_origins_compare_scheme_host_and_port() {
        check(
            &["https://example.com"],
            &[
                ("https://example.com", true),
                ("https://example.com/path?q=1#frag", true),
                ("https://example.com:443/", true),
                ("https://example.com:0443/", true),
                ("HTTPS://EXAMPLE.COM/", true),
                ("https:example.com", true),
                ("  https://example.com/  ", true),
                ("example.com/docs", true),
                ("https://ex%61mple.com/", true),
                // Backslash is a slash in special schemes: this opens example.com.
                ("https://example.com\\@evil.test", true),
                ("https://example.com:8443/", false),
                ("http://example.com/", false),
                ("wss://example.com/", false),
                ("https://example.com.evil.test/", false),
                ("https://example.com./", false),
                ("https://sub.example.com/", false),
                ("https://evil.test/https://example.com", false),
                ("https://evil.test/?https://example.com", false),
                ("https://evil.test#@example.com", false),
                ("https://example.co/", false),
                ("https://xexample.com/", false),
                ("https://example.com%2eevil.test/", false),
                ("https://example.com@evil.test/", false),
                ("https://user:pw@example.com/", false),
                ("https://user@example.com/", false),
                ("https://example.com%2F@evil.test/", false),
            ],
        );
    }

    #[test]
    fn wildcards_match_subdomains_only() {
        check(
            &["https://*.example.com"],
            &[
                ("https://a.example.com/", true),
                ("https://a.b.example.com/x", true),
                ("https://A.EXAMPLE.com", true),
                ("https://example.com/", false),
                ("https://evilexample.com/", false),
                ("https://a.example.com.evil.test/", false),
                ("https://a.example.com:444/", false),
                ("http://a.example.com/", false),
                ("https://a.example.com./", false),
                ("https://u:p@a.example.com/", false),
            ],
        );
        check(
            &["https://*.example.com:8443", "https://example.com"],
            &[
                ("https://a.example.com:8443/", true),
                ("https://a.example.com/", false),
                ("https://example.com/", true),
            ],
        );
    }

    #[test]
    fn international_hosts_compare_as_punycode() {
        check(
            &["https://bücher.example"],
            &[
                ("https://xn--bcher-kva.example/", true),
                ("https://BÜCHER.example/", true),
                ("https://bucher.example/", false),
            ],
        );
        check(
            &["https://*.xn--bcher-kva.example"],
            &[("https://www.bücher.example/", true)],
        );
        // A full-width dot is a dot after IDNA mapping.
        check(&["https://example.com"], &[("https://example。com/", true)]);
    }

    #[test]
    fn ip_literals_compare_as_addresses() {
        check(
            &["http://[::1]:8080", "http://127.0.0.1:3000"],
            &[
                ("http://[::1]:8080/x", true),
                ("http://[0:0:0:0:0:0:0:1]:8080/", true),
                ("http://[::1]:8081/", false),
                ("http://[::2]:8080/", false),
                ("http://[::ffff:127.0.0.1]:3000/", false),
                ("http://127.0.0.1:3000/", true),
                ("http://2130706433:3000/", true),
                ("http://0x7f.1:3000/", true),
                ("http://127.1:3000/", true),
                ("http://127.0.0.2:3000/", false),
                ("http://localhost:3000/", false),
                ("http://127.0.0.1/", false),
            ],
        );
    }

    #[test]
    fn other_schemes_are_denied_unless_about_blank_is_listed() {
        let denied = [
            "about:blank",
            "about:srcdoc",
            "file:///etc/passwd",
            "data:text/html,<script>alert(1)</script>",
            "javascript:alert(1)",
            "blob:https://example.com/uuid",
            "chrome://settings",
            "view-source:https://example.com/",
            "ftp://example.com/",
        ];
        for url in denied {
            assert!(
                !list(&["https://example.com"]).check_str(url).is_allowed(),
                "{url}"
            );
        }
        check(
            &["about:blank"],
            &[
                ("about:blank", true),
                ("about:blank#x", false),
                ("about:srcdoc", false),
                ("https://example.com/", false),
            ],
        );
        assert!(
            !OriginAllowList::default()
                .check_str("https://example.com")
                .is_allowed()
        );
    }

    #[test]
    fn reasons_say_why() {
        let allow = list(&["https://example.com"]);
        assert_eq!(
            allow.check_str("https://example.com/x").to_string(),
            "allowed by https://example.com"
        );
        assert_eq!(
            allow
                .check_str("https://example.com.evil.test/secret?token=1")
                .to_string(),
            "the origin https://example.com.evil.test is not in the allow-list"
        );
        assert_eq!(
            allow.check_str("https://a:b@example.com/"),
            UrlDecision::Deny(DenyReason::Credentials)
        );
        assert_eq!(
            allow.check_str("file:///etc/passwd"),
            UrlDecision::Deny(DenyReason::Scheme("file".into()))
        );
        assert!(matches!(
            allow.check_str("not a url"),
            UrlDecision::Deny(DenyReason::Unparsable(_))
        ));
    }

    #[test]
    fn bad_patterns_are_refused() {
        type Want = fn(&PatternError) -> bool;
        let cases: [(&str, Want); 13] = [
            ("example.com", |e| {
                matches!(e, PatternError::Unparsable { .. })
            }),
            ("https://example.com/path", |e| {
                matches!(e, PatternError::NotAnOrigin { part: "path", .. })
            }),
            ("https://example.com/?q", |e| {
                matches!(e, PatternError::NotAnOrigin { part: "query", .. })
            }),
            ("https://example.com/#f", |e| {
                matches!(
                    e,
                    PatternError::NotAnOrigin {
                        part: "fragment",
                        ..
                    }
                )
            }),
            ("https://u:p@example.com", |e| {
                matches!(
                    e,
                    PatternError::NotAnOrigin {
                        part: "credentials",
                        ..
                    }
                )
            }),
            ("file:///tmp", |e| matches!(e, PatternError::Scheme { .. })),
            ("data:text/plain,x", |e| {
                matches!(e, PatternError::Scheme { .. })
            }),
            ("https://*.com", |e| {
                matches!(e, PatternError::Wildcard { .. })
            }),
            ("https://a.*.example.com", |e| {
                matches!(e, PatternError::Wildcard { .. })
            }),
            ("https://*example.com", |e| {
                matches!(e, PatternError::Wildcard { .. })
            }),
            ("https://*", |e| matches!(e, PatternError::Wildcard { .. })),
            ("https://*.127.0.0.1", |e| {
                matches!(e, PatternError::Wildcard { .. })
            }),
            ("https://*.[::1]", |e| {
                matches!(
                    e,
                    PatternError::Wildcard { .. } | PatternError::Unparsable { .. }
                )
            }),
        ];
        for (pattern, want) in cases {
            let e = OriginPattern::parse(pattern).unwrap_err();
            assert!(want(&e), "{pattern}: {e:?}");
        }
        // Default ports are folded; patterns print canonically.
        assert_eq!(
            OriginPattern::parse("HTTPS://Example.COM:443")
                .unwrap()
                .to_string(),
            "https://example.com"
        );
        assert_eq!(
            OriginPattern::parse("https://*.example.com:8443/")
                .unwrap()
                .to_string(),
            "https://*.example.com:8443"
        );
    }
}
