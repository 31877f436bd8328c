//! `hands relay`: the fleet's CDP relay (hands-fleet's [`hands_fleet::relay`]) in front of the
//! remote browsers of `remote_browser` tasks: a worker's frames reach its episode's browser only
//! while its claim is current.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use hands_fleet::Fleet;
use hands_fleet::relay::{Relay, RelayConfig};

/// `hands relay`.
#[derive(Debug, Args)]
pub struct RelayArgs {
    /// The fleet's PostgreSQL (where the episodes' epochs and leases are).
    #[arg(long, value_name = "URL")]
    pub ledger: String,
    /// Where to listen (`HOST:PORT`; port 0 picks one, printed on the first line of stderr).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:9333")]
    pub listen: String,
    /// A frame is passed only while more than this much of its claim's lease is left, in
    /// milliseconds: the time a frame may take to act in the browser.
    #[arg(long, value_name = "MS", default_value_t = 250,
        value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub margin_ms: u64,
}

/// Serves until killed.
pub async fn run(args: RelayArgs) -> anyhow::Result<ExitCode> {
    let fleet = Fleet::connect(&args.ledger).await?;
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let relay = Relay::new(
        listener,
        fleet,
        RelayConfig {
            margin: Duration::from_millis(args.margin_ms),
        },
    );
    eprintln!(
        "hands relay: listening on ws://{} (episodes at /episode/<id>/<epoch>)",
        relay.local_addr()?
    );
    relay.serve().await?;
    Ok(ExitCode::SUCCESS)
}
