//! `hands view`: a run directory in a local web page.

use std::process::ExitCode;

use crate::cli::ViewArgs;

pub async fn run(args: ViewArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("hands view {} is not built yet", args.run_dir.display())
}
