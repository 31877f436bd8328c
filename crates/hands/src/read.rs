//! `hands read URL`: the structured read of a page, as a model would get it from `read_page`.

use std::process::ExitCode;

use anyhow::Context as _;
use hands_cdp::{CdpBrowser, DriverConfig};
use hands_core::CancellationToken;
use hands_core::browser::Browser as _;
use hands_core::browser::args::{PageUrl, ReadFilter};
use hands_core::browser::driver::ReadResult;

use crate::cli::{FilterArg, ReadArgs};

pub async fn run(args: ReadArgs) -> anyhow::Result<ExitCode> {
    let url = PageUrl::parse("URL", &args.url).map_err(|e| anyhow::anyhow!("{e}"))?;
    let filter = match args.filter {
        FilterArg::All => ReadFilter::All,
        FilterArg::Interactive => ReadFilter::Interactive,
    };
    let mut browser = CdpBrowser::launch(DriverConfig::default())
        .await
        .context("launching Chromium (run scripts/install-system-deps.sh first)")?;
    let cancel = CancellationToken::new();
    browser
        .navigate(&url, None, &cancel)
        .await
        .map_err(|e| anyhow::anyhow!("opening {}: {e}", url.as_str()))?;
    let read = browser
        .read_page(filter, None, &cancel)
        .await
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", url.as_str()))?;
    match read {
        None => eprintln!("hands read: the driver returned no content"),
        Some(ReadResult::Text(text)) => println!("{text}"),
        Some(ReadResult::Structured(read)) if args.json => {
            println!("{}", serde_json::to_string_pretty(&read)?);
        }
        Some(ReadResult::Structured(read)) => {
            println!("{}\n", read.text());
            for e in read.elements() {
                let mut line = format!("[{}] {} {:?}", e.reference(), e.role(), e.label());
                if let Some(v) = e.value() {
                    line.push_str(&format!(" = {v:?}"));
                }
                if let Some(c) = e.checked() {
                    line.push_str(if c { " (checked)" } else { " (unchecked)" });
                }
                if let Some(options) = e.options() {
                    let labels: Vec<&str> = options.iter().map(|o| o.label()).collect();
                    line.push_str(&format!(" options: {}", labels.join(" | ")));
                }
                println!("{line}");
            }
            if !read.omitted().is_empty() {
                let codes: Vec<&str> = read.omitted().iter().map(|o| o.code()).collect();
                println!("\nomitted: {}", codes.join(", "));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
