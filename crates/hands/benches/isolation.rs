//! What a jail costs (issue 17 item 9): time to a ready desktop and to a ready browser, on the
//! host and in an episode's jail, side by side in one run.
//!
//! - desktop ready: Xvfb started, hands' X connection up, a first XTEST pointer move and a first
//!   capture done; jailed, also the jail (bubblewrap, seccomp, its init) and the policy proxy's
//!   listener placed in the jail's network namespace and served;
//! - browser ready: Chromium launched to a first tab that answers over CDP (the pipe), the
//!   policy proxy on the browser's own loopback; jailed, also the browser's jail.
//!
//! Run with `cargo bench -p hands --bench isolation` (`HANDS_BENCH_QUICK=1` for 3 rounds). The
//! jail's init is the `hands` binary itself (`hands __jail-init`). Nothing is asserted: the
//! table is the output.

#![allow(clippy::print_stdout, reason = "a benchmark binary prints its table")]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use hands_cdp::proxy::PolicyProxy;
use hands_cdp::{CdpBrowser, DriverConfig, RequestInfo, Verdict};
use hands_core::Desktop as _;
use hands_core::geometry::{ScreenPoint, Size};
use hands_jail::{HostLauncher, InitProgram, Jail, JailConfig, JailKind, Launcher};
use hands_x11::{X11Desktop, XvfbConfig};

fn init() -> InitProgram {
    InitProgram::WithArgs(
        PathBuf::from(env!("CARGO_BIN_EXE_hands")),
        vec!["__jail-init".to_owned()],
    )
}

fn jail(kind: JailKind) -> anyhow::Result<Jail> {
    let mut config = JailConfig::new(kind);
    config.init = init();
    Jail::start(&config).map_err(|e| anyhow::anyhow!("{e}"))
}

fn deny_all() -> hands_cdp::policy::SharedPolicy {
    Arc::new(|_: &RequestInfo<'_>| Verdict::Deny {
        reason: "benchmark".into(),
    })
}

/// One desktop start to ready, on `launcher` (a fresh jail when `jailed`).
async fn desktop_ready(jailed: bool) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let size = Size::new(1280, 800).context("size")?;
    let (launcher, _proxy, env): (Arc<dyn Launcher>, Option<PolicyProxy>, _) = if jailed {
        let jail = jail(JailKind::Desktop)?;
        let listener = jail.listen_tcp(hands_jail::PROXY_PORT)?;
        let proxy = PolicyProxy::serve_listener(listener, deny_all())?;
        (Arc::new(jail), Some(proxy), Some(Jail::base_env()))
    } else {
        (Arc::new(HostLauncher), None, None)
    };
    let mut config = XvfbConfig::new(size).with_launcher(launcher);
    if let Some(env) = env {
        config.env = env;
    }
    let mut desktop = X11Desktop::spawn(&config)?;
    let point = ScreenPoint { x: 10, y: 10 };
    desktop.move_pointer(point).await?;
    desktop.capture().await?;
    Ok(started.elapsed())
}

/// One browser launch to a ready tab.
async fn browser_ready(jailed: bool) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let mut config = DriverConfig {
        policy: deny_all(),
        ..DriverConfig::default()
    };
    if jailed {
        config.launch.launcher = Arc::new(jail(JailKind::Browser)?);
    }
    let browser = CdpBrowser::launch(config).await?;
    let elapsed = started.elapsed();
    drop(browser);
    Ok(elapsed)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn stats(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let median = samples[samples.len() / 2];
    let p90 = samples[(samples.len() * 9 / 10).min(samples.len() - 1)];
    (ms(median), ms(p90))
}

fn main() -> anyhow::Result<()> {
    let rounds = if std::env::var_os("HANDS_BENCH_QUICK").is_some() {
        3
    } else {
        15
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut rows = Vec::new();
    for (name, jailed) in [("desktop, host", false), ("desktop, jailed", true)] {
        let mut samples = Vec::new();
        // Interleaving would mix warm-up effects; one warm-up round each instead.
        runtime.block_on(desktop_ready(jailed))?;
        for _ in 0..rounds {
            samples.push(runtime.block_on(desktop_ready(jailed))?);
        }
        rows.push((name, stats(samples)));
    }
    for (name, jailed) in [("browser, host", false), ("browser, jailed", true)] {
        let mut samples = Vec::new();
        runtime.block_on(browser_ready(jailed))?;
        for _ in 0..rounds {
            samples.push(runtime.block_on(browser_ready(jailed))?);
        }
        rows.push((name, stats(samples)));
    }
    println!("time to ready, {rounds} rounds each (median / p90, ms)");
    println!("| start | median | p90 | added by the jail (median) |");
    println!("|---|---:|---:|---:|");
    for pair in rows.chunks(2) {
        let (host_name, (host_median, host_p90)) = pair[0];
        let (jail_name, (jail_median, jail_p90)) = pair[1];
        println!("| {host_name} | {host_median:.1} | {host_p90:.1} | |");
        println!(
            "| {jail_name} | {jail_median:.1} | {jail_p90:.1} | {:+.1} |",
            jail_median - host_median
        );
    }
    Ok(())
}
