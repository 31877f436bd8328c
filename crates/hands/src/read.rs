//! `hands read URL [--attach WS_URL]`: the structured read of a page, as a model would get it from `read_page` (the compact form, or `BrowserReadV1` JSON with `--json`), in a browser it starts or in a running one.

use std::process::ExitCode;

use anyhow::Context as _;
use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::CancellationToken;
use hands_core::browser::Browser as _;
use hands_core::browser::args::{PageUrl, ReadFilter};
use hands_core::browser::driver::ReadResult;

use crate::cli::{FilterArg, ReadArgs};
use crate::stdout::Out;

pub async fn run(args: ReadArgs) -> anyhow::Result<ExitCode> {
    let url = PageUrl::parse("URL", &args.url).map_err(|e| anyhow::anyhow!("{e}"))?;
    let filter = match args.filter {
        FilterArg::All => ReadFilter::All,
        FilterArg::Interactive => ReadFilter::Interactive,
    };
    let mut browser = match &args.attach {
        Some(ws) => {
            if !(ws.starts_with("ws://") || ws.starts_with("wss://")) {
                anyhow::bail!(
                    "--attach takes a DevTools WebSocket URL (ws://host:port/devtools/browser/…), got {ws:?}"
                );
            }
            CdpBrowser::attach(ws, DriverConfig::default())
                .await
                .with_context(|| format!("attaching to {ws}"))?
        }
        None => CdpBrowser::launch(DriverConfig::default())
            .await
            .context("launching Chromium (run scripts/install-system-deps.sh first)")?,
    };
    let cancel = CancellationToken::new();
    browser
        .navigate(&url, None, &cancel)
        .await
        .map_err(|e| anyhow::anyhow!("opening {}: {e}", url.as_str()))?;
    let read = browser
        .read_page(filter, None, &cancel)
        .await
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", url.as_str()))?;
    let mut out = Out::lock();
    match read {
        None => eprintln!("hands read: the driver returned no content"),
        Some(ReadResult::Text(text)) => writeln!(out, "{text}")?,
        Some(ReadResult::Structured(read)) if args.json => {
            writeln!(out, "{}", serde_json::to_string_pretty(&read)?)?;
        }
        Some(ReadResult::Structured(read)) => writeln!(out, "{}", read.to_compact())?,
    }
    Ok(ExitCode::SUCCESS)
}
