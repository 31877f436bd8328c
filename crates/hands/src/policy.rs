//! `hands policy`: say, one line per URL, whether the origin allow-list allows it and why; and
//! the allow-list as Chromium's request-level policy, so the browser enforces at every request
//! what the toolset enforces at `navigate`.

use std::process::ExitCode;

use hands_cdp::{RequestInfo, RequestPolicy, Verdict};
use hands_toolset::browser::url_policy::{OriginAllowList, UrlDecision};

use crate::cli::PolicyArgs;

/// `hands policy --allow ORIGIN … -- URL …`.
pub fn run(args: PolicyArgs) -> anyhow::Result<ExitCode> {
    let list = OriginAllowList::new(&args.allow).map_err(|e| anyhow::anyhow!("--allow: {e}"))?;
    for url in &args.urls {
        match list.check_str(url) {
            UrlDecision::Allow { .. } => println!("allow {url}"),
            UrlDecision::Deny(reason) => println!("deny {url}: {reason}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The allow-list at the request stage. Requests that never leave the browser (`data:`,
/// `blob:`, `about:`) are allowed: they reach no origin.
#[derive(Debug, Clone)]
pub struct RequestAllowList(pub OriginAllowList);

impl RequestPolicy for RequestAllowList {
    fn check(&self, request: &RequestInfo<'_>) -> Verdict {
        if matches!(request.url.scheme(), "data" | "blob" | "about") {
            return Verdict::Allow;
        }
        match self.0.check(request.url) {
            UrlDecision::Allow { .. } => Verdict::Allow,
            UrlDecision::Deny(reason) => Verdict::Deny {
                reason: reason.to_string(),
            },
        }
    }
}

/// The policy of every program of an episode (its jail's proxy): the allowed origins, or
/// nothing at all when none is given (a desktop run with no `--allow-origin` reaches nothing).
pub fn episode_policy(allow_origin: &[String]) -> anyhow::Result<hands_cdp::policy::SharedPolicy> {
    if allow_origin.is_empty() {
        return Ok(std::sync::Arc::new(|_: &RequestInfo<'_>| Verdict::Deny {
            reason: "this episode may reach no origin (give --allow-origin to open one)".into(),
        }));
    }
    let allow =
        OriginAllowList::new(allow_origin).map_err(|e| anyhow::anyhow!("--allow-origin: {e}"))?;
    Ok(std::sync::Arc::new(RequestAllowList(allow)))
}
