//! `ipfib gen fib` and `ipfib gen trace`: synthetic tables and lookup traces.
//!
//! Both are deterministic in `--seed`, so a benchmark quoted as "1 M routes, seed 1" can be
//! regenerated anywhere (see `ipfib_gen`).

use std::path::PathBuf;

use anyhow::Context;
use ipfib::{Address, RouteTable, Table};
use ipfib_gen::TraceKind;

use crate::bench::limits;
use crate::family::Family;
use crate::fib_args::FibArgs;
use crate::output::write_to;

/// Generators.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Generate a FIB in the text format: a real table's shape (IPv6: RIS DFZ 2024, the PlanB
    /// paper's rrc00-25 length mix; IPv4: a 2022 Tier-1 full table) scaled to any size.
    Fib(FibCmd),
    /// Generate a lookup trace for a FIB: one address per line.
    Trace(TraceCmd),
}

/// Arguments of `ipfib gen fib`.
#[derive(clap::Args)]
pub struct FibCmd {
    /// Address family: 6 or 4.
    #[arg(long)]
    family: Family,
    /// Exact number of distinct routes (at most 2^26).
    #[arg(long, value_parser = limits::count(limits::MAX_PREFIXES))]
    prefixes: usize,
    /// Seed: the same seed and size always give the same table.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output file (`-` for stdout); a name ending in `.gz` is gzip-compressed.
    #[arg(long, default_value = "-")]
    out: PathBuf,
}

/// Arguments of `ipfib gen trace`.
#[derive(clap::Args)]
pub struct TraceCmd {
    #[command(flatten)]
    fib: FibArgs,
    /// `matched`: a random route, then a random address in it (the PlanB paper's traces);
    /// `uniform`: uniform over the addresses the table covers; `space`: uniform over the whole
    /// address space (mostly misses for IPv6).
    #[arg(long)]
    kind: TraceKind,
    /// Number of addresses (at most 2^28).
    #[arg(long, value_parser = limits::count(limits::MAX_TRACE))]
    count: usize,
    /// Seed: the same table, kind, count and seed always give the same trace.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Family of a FIB holding both (6 or 4); default: the family with more routes.
    #[arg(long)]
    family: Option<Family>,
    /// Output file (`-` for stdout); a name ending in `.gz` is gzip-compressed.
    #[arg(long, default_value = "-")]
    out: PathBuf,
}

/// Runs the subcommand.
pub fn run(cmd: Command) -> anyhow::Result<()> {
    match cmd {
        Command::Fib(args) => run_fib(args),
        Command::Trace(args) => run_trace(args),
    }
}

fn run_fib(args: FibCmd) -> anyhow::Result<()> {
    limits::check_memory(
        &format!("a {}-prefix table", args.prefixes),
        args.prefixes as u64 * limits::BYTES_PER_GENERATED_ROUTE,
    )?;
    let table: Table = match args.family {
        Family::V6 => ipfib_gen::IPV6_DFZ
            .generate(args.prefixes, args.seed)?
            .into(),
        Family::V4 => ipfib_gen::IPV4_TIER1
            .generate(args.prefixes, args.seed)?
            .into(),
    };
    write_to(&args.out, |out| ipfib_io::text::write_fib(out, &table))
}

fn run_trace(args: TraceCmd) -> anyhow::Result<()> {
    // The addresses, held before they are written.
    limits::check_memory(
        &format!("a {}-address trace", args.count),
        args.count as u64 * 16,
    )?;
    let table = args.fib.load()?;
    let family = args
        .family
        .unwrap_or(if table.v4().len() > table.v6().len() {
            Family::V4
        } else {
            Family::V6
        });
    let path = args.fib.fib.display().to_string();
    match family {
        Family::V4 => trace_family(table.v4(), &args, &path),
        Family::V6 => trace_family(table.v6(), &args, &path),
    }
}

fn trace_family<A: Address>(
    table: &RouteTable<A>,
    args: &TraceCmd,
    path: &str,
) -> anyhow::Result<()> {
    let addrs = ipfib_gen::try_trace(table, args.kind, args.count, args.seed)
        .with_context(|| format!("{path}: cannot make a trace"))?;
    write_to(&args.out, |out| {
        for a in &addrs {
            writeln!(out, "{}", a.to_ip())?;
        }
        out.flush()
    })
}
