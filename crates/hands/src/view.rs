//! `hands view RUN_DIR` (a finished run in a local web page) and the live view of
//! `hands run --view`: the run directory's journal also wakes the page, and the runner's
//! approvals are asked on the page.
//!
//! Approvals on the page are the terminal approver's questions ([`TerminalApprover::on_page`]),
//! so every kind of effect the runner reviews is asked there the same way.

use std::process::ExitCode;

use hands_runner::journal::{Entry, Journal};
use hands_view::Live;

use crate::approve::TerminalApprover;

use crate::cli::ViewArgs;
use crate::rundir::RunDir;

/// `hands view RUN_DIR` (or `--ledger URL [--batch NAME]`): serves the page until Ctrl-C.
pub async fn run(args: ViewArgs) -> anyhow::Result<ExitCode> {
    let (view, what) = match (&args.run_dir, &args.ledger) {
        (Some(dir), _) => (
            hands_view::serve(dir, args.addr, None).await?,
            dir.display().to_string(),
        ),
        (None, Some(url)) => {
            let source = crate::view_batch::FleetSource::connect(url, args.batch.clone()).await?;
            let what = match &args.batch {
                Some(batch) => format!("batch {batch} on {}", source.name()),
                None => format!("every batch on {}", source.name()),
            };
            (
                hands_view::serve_batch(std::sync::Arc::new(source), args.addr).await?,
                what,
            )
        }
        (None, None) => anyhow::bail!("give a run directory, or --ledger URL"),
    };
    eprintln!(
        "hands view: {what} at {}\n(open it in a browser on this machine; Ctrl-C stops)",
        view.url()
    );
    tokio::signal::ctrl_c().await?;
    view.stop();
    Ok(ExitCode::SUCCESS)
}

/// How long a finished run waits for a watching page to show its end.
const LAST_LOOK: std::time::Duration = std::time::Duration::from_secs(5);

/// A live view of a running run.
pub struct LiveView {
    /// The approvals and the change counter; the page is served until the process ends.
    pub live: Live,
}

impl LiveView {
    /// Serves the run directory `dir` live on a loopback port and says where.
    pub async fn start(dir: &std::path::Path) -> anyhow::Result<LiveView> {
        let live = Live::default();
        let view = hands_view::serve(dir, "127.0.0.1:0".parse()?, Some(live.clone())).await?;
        eprintln!(
            "hands run: watch the run and approve its actions at {}",
            view.url()
        );
        Ok(LiveView { live })
    }

    /// The approver that asks every question on the page (computer actions, safety checks,
    /// bash, the editor, functions, browser confirmations).
    pub fn approver(&self) -> TerminalApprover {
        TerminalApprover::on_page(self.live.clone())
    }

    /// The run ended: gives a watching page up to [`LAST_LOOK`] to show how, before the
    /// process (and the page's server) ends.
    pub async fn finish(&self) {
        self.live.wheel().disable(hands_view::wheel::RUN_ENDED);
        self.live.bump();
        if !self.live.delivered(LAST_LOOK).await {
            eprintln!(
                "hands run: the page did not show the run's end in time; `hands view` shows it"
            );
        }
    }

    /// The run directory's journal, waking the page after each entry.
    pub fn journal(&self, rundir: RunDir) -> ViewJournal {
        ViewJournal {
            rundir,
            live: self.live.clone(),
        }
    }
}

/// Writes the run directory and tells the page.
pub struct ViewJournal {
    rundir: RunDir,
    live: Live,
}

impl Journal for ViewJournal {
    fn record(&mut self, entry: Entry<'_>) {
        self.rundir.record(entry);
        self.live.bump();
    }
}
