//! `ipfib save --fib IN [--engine E] OUT`: build a table once and write it in the saved format
//! ([`ipfib::saved`]), so every later `--fib OUT` (and the C library's `ipfib_fib_open`) maps
//! it and starts answering without parsing or building.

use std::path::PathBuf;

use crate::fib_args::FibArgs;
use ipfib::engine::EngineInfo;

/// Arguments of `ipfib save`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    fib: FibArgs,
    /// Engine to build (only engines with a saved format can be saved: planb).
    #[arg(long, value_name = "ENGINE", default_value = "planb", value_parser = crate::engine_arg::Engines)]
    engine: &'static EngineInfo,
    /// The saved table to write: written under a hidden temporary name beside it, then
    /// renamed over OUT, so a process that has the old file open keeps a consistent table; a
    /// symlink is written through (the file it points to is replaced); an interrupted run
    /// (Ctrl-C, SIGTERM) removes the temporary file. `-` writes standard output.
    #[arg(value_name = "OUT")]
    output: PathBuf,
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<()> {
    let fib = args.fib.open(args.engine.name())?;
    crate::output::write_to(&args.output, |mut out| {
        fib.write_to(&mut out).map_err(|e| match e {
            ipfib::SaveError::Io { source, .. } => source,
            other => std::io::Error::other(other),
        })
    })
}
