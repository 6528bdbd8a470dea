//! The `--fib FILE` argument shared by every subcommand that reads a table.

use std::path::PathBuf;

use ipfib::Fib;

/// Where the forwarding table comes from.
#[derive(clap::Args, Debug, Clone)]
pub struct FibArgs {
    /// FIB file: text (`prefix/len next_hop` per line), optionally gzip-compressed.
    #[arg(long, value_name = "FILE")]
    pub fib: PathBuf,
}

impl FibArgs {
    /// Loads the table; any error names the file and line.
    pub fn load(&self) -> anyhow::Result<Fib> {
        Ok(ipfib::io::load_fib(&self.fib)?)
    }
}
