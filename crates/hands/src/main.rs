//! `hands`: the command line of the hands harness — the offline drills (`drill`), replaying a
//! model's turn on a real desktop (`exec`), and the sample-turn demo (`demo`).

#![allow(
    clippy::print_stdout,
    reason = "a command-line tool prints its results on stdout"
)]

mod approve;
mod cli;
mod demo;
mod difftest;
mod drill;
mod environment;
mod exec;
mod fleet;
mod fleet_reconcile;
mod mcp;
mod policy;
mod read;
mod relay;
mod remote;
mod resume;
mod run;
mod rundir;
mod runs;
mod sandbox;
mod state;
mod stdout;
mod video;
mod view;
mod view_batch;
mod wheel;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    // `hands __jail-init`: this process is a jail's init (see hands_jail::init), started by
    // bubblewrap inside the jail; it never parses the command line or starts a runtime.
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new(sandbox::INIT_ARG)) {
        return ExitCode::from(hands_jail::init::main().clamp(0, 255) as u8);
    }
    // This process holds the API key in its environment. Not dumpable, its `/proc/<pid>/environ`
    // (and memory) is closed to other processes of the same user — the shell a model drives
    // included (root still reads it; run hands as an ordinary user). Children are exec'd, which
    // makes them dumpable again: they never receive a credential (`hands_core::process`).
    if let Err(e) =
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
    {
        tracing::debug!("cannot mark the process not dumpable: {e}");
    }
    let cli = cli::Cli::parse();
    init_tracing(cli.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hands: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // `hands mcp` stopped by a signal leaves the runtime's blocking read of stdin behind: it is
    // not waited for (the state is saved by then).
    let mcp = matches!(cli.command, cli::Command::Mcp(_));
    let result = runtime.block_on(async {
        match cli.command {
            cli::Command::Drill(args) => drill::run(args).await,
            cli::Command::Run(args) => run::run(args).await,
            cli::Command::Runs(args) => runs::run(args),
            cli::Command::Read(args) => read::run(args).await,
            cli::Command::Policy(args) => policy::run(args),
            cli::Command::Exec(args) => exec::run(args).await,
            cli::Command::Demo(args) => demo::run(args).await,
            cli::Command::Mcp(args) => mcp::run(args).await,
            cli::Command::View(args) => view::run(args).await,
            cli::Command::Batch(args) => fleet::batch(args).await,
            cli::Command::Worker(args) => fleet::worker(args).await,
            cli::Command::Relay(args) => relay::run(args).await,
            cli::Command::Difftest(args) => difftest::run(args).await,
            cli::Command::State(args) => state::run(args).map(|()| ExitCode::SUCCESS),
        }
    });
    if mcp {
        runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    }
    match result {
        Ok(code) => code,
        // `hands read URL | head`: the reader has what it wanted (see `stdout`).
        Err(e) if stdout::closed_early(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hands: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr; `RUST_LOG` overrides the level set by `-v`.
fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info,hands=info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}
