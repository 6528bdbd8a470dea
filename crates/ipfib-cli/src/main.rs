//! `ipfib`: look up addresses, inspect tables, benchmark engines, convert and generate tables.

use clap::{Parser, Subcommand};

mod lookup;
mod stats;

/// Exact, fast longest-prefix match for IPv4 and IPv6 forwarding tables.
#[derive(Parser)]
#[command(name = "ipfib", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Look up addresses (arguments, else stdin one per line): one line per address, the next
    /// hop in decimal or `-` when no route matches.
    Lookup(lookup::Args),
    /// Describe a FIB: routes per family, prefix-length histogram, intervals, depth, bytes.
    Stats(stats::Args),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Lookup(args) => lookup::run(args),
        Command::Stats(args) => stats::run(args),
    }
}
