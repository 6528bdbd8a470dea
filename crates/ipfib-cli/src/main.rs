//! `ipfib`: look up addresses, inspect tables, benchmark engines, convert and generate tables.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod addresses;
mod bench;
mod convert;
mod engine_arg;
mod family;
mod fib_args;
mod gen;
mod lookup;
mod output;
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
    /// Compare every engine (and peer libraries) on one table and trace.
    Bench(bench::Args),
    /// Convert a FIB (text or MRT) to the text format.
    Convert(convert::Args),
    /// Generate synthetic tables and lookup traces.
    #[command(subcommand)]
    Gen(gen::Command),
}

/// Errors print once, as `ipfib: cause: detail` (no debug dump, no backtrace), exit status 1.
fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Lookup(args) => lookup::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Convert(args) => convert::run(args),
        Command::Gen(cmd) => gen::run(cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ipfib: {e:#}");
            ExitCode::FAILURE
        }
    }
}
