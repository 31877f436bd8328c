//! Smoke.
#![allow(clippy::unwrap_used)]
mod common;
use common::*;
use hands_cdp::{RequestInfo, Verdict};
use hands_core::browser::Browser;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn smoke_direct() {
    let a = Server::start().await;
    let b = Server::start().await;
    let mut cfg = config();
    let ao = a.origin();
    cfg.policy = Arc::new(move |r: &RequestInfo<'_>| {
        println!("POLICY {} {}", r.resource_type, r.url);
        if hands_cdp::policy::origin_of(r.url) == ao {
            Verdict::Allow
        } else {
            Verdict::Deny {
                reason: "no".into(),
            }
        }
    });
    let mut br = launch(cfg).await;
    let c = cancel();
    let r = br.navigate(&b.page_url("/direct"), None, &c).await;
    println!(
        "{r:?} B saw {:?} blocked {:?}",
        b.paths(),
        br.blocked_requests()
    );
}
