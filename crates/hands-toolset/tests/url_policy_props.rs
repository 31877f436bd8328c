//! A property test of the origin allow-list against the WHATWG parser: for URLs built from
//! adversarial pieces (look-alike hosts, userinfo, ports, case, percent-encoding, trailing dots,
//! IP forms), the list allows a URL exactly when the `url` crate's parse of it has no
//! credentials and its (scheme, host, port) is an allowed origin, or a strict subdomain of a
//! wildcard's host on the wildcard's scheme and port.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use hands_toolset::browser::url_policy::{OriginAllowList, UrlDecision};
use proptest::prelude::*;
use url::Url;

const PATTERNS: [&str; 4] = [
    "https://example.com",
    "http://127.0.0.1:8080",
    "https://*.shop.test",
    "https://api.example.org:8443",
];

/// The oracle: the spec's rule over the WHATWG parse.
fn oracle(url: &Url) -> bool {
    if !url.username().is_empty() || url.password().is_some() {
        return false;
    }
    let Some(host) = url.host_str() else {
        return false;
    };
    let port = url.port_or_known_default();
    let exact = [
        ("https", "example.com", Some(443)),
        ("http", "127.0.0.1", Some(8080)),
        ("https", "api.example.org", Some(8443)),
    ];
    if exact
        .iter()
        .any(|(s, h, p)| url.scheme() == *s && host == *h && port == *p)
    {
        return true;
    }
    url.scheme() == "https"
        && port == Some(443)
        && host.ends_with(".shop.test")
        && host.len() > ".shop.test".len()
}

fn piece() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "example.com",
        "EXAMPLE.com",
        "example.com.",
        "example.com.evil.test",
        "evil-example.com",
        "example.com%2eevil.test",
        "sub.example.com",
        "127.0.0.1",
        "0x7f.0.0.1",
        "2130706433",
        "[::1]",
        "shop.test",
        "a.shop.test",
        "A.B.SHOP.TEST",
        "shop.test.evil",
        "xn--exmple-cua.com",
        "exämple.com",
        "api.example.org",
        "api.example.org.evil",
    ])
    .prop_map(str::to_owned)
}

fn url_text() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["https", "http", "HTTPS", "ws", "ftp", "file"]),
        prop::sample::select(vec!["", "user@", "user:pw@", "example.com@", ":@"]),
        piece(),
        prop::sample::select(vec!["", ":443", ":80", ":8080", ":8443", ":0443", ":65535"]),
        prop::sample::select(vec!["", "/", "/path?q=1", "/a/../b", "#frag", "/%2e%2e/x"]),
    )
        .prop_map(|(scheme, userinfo, host, port, rest)| {
            format!("{scheme}://{userinfo}{host}{port}{rest}")
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_allow_list_agrees_with_the_whatwg_parse(text in url_text()) {
        let list = OriginAllowList::new(PATTERNS).unwrap();
        let decision = list.check_str(&text);
        match Url::parse(&text) {
            Ok(url) => prop_assert_eq!(
                matches!(decision, UrlDecision::Allow { .. }),
                oracle(&url),
                "{} parsed as {} gave {}", text, url, decision
            ),
            // What the parser refuses can never be allowed.
            Err(_) => prop_assert!(!matches!(decision, UrlDecision::Allow { .. }), "{text}"),
        }
    }
}
