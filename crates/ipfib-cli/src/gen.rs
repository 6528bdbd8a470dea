//! `ipfib gen fib` and `ipfib gen trace`: synthetic tables and lookup traces.
//!
//! Both are deterministic in `--seed`, so a benchmark quoted as "1 M routes, seed 1" can be
//! regenerated anywhere (see `ipfib::gen`).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use flate2::write::GzEncoder;
use flate2::Compression;
use ipfib::gen::{self, TraceKind};
use ipfib::{Address, Fib, RouteTable};

use crate::fib_args::FibArgs;

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
    #[arg(long, value_parser = parse_family)]
    family: u8,
    /// Exact number of distinct routes.
    #[arg(long)]
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
    /// Number of addresses.
    #[arg(long)]
    count: usize,
    /// Seed: the same table, kind, count and seed always give the same trace.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Family of a FIB holding both (6 or 4); default: the family with more routes.
    #[arg(long, value_parser = parse_family)]
    family: Option<u8>,
    /// Output file (`-` for stdout); a name ending in `.gz` is gzip-compressed.
    #[arg(long, default_value = "-")]
    out: PathBuf,
}

fn parse_family(s: &str) -> Result<u8, String> {
    match s.trim() {
        "4" | "v4" | "ipv4" => Ok(4),
        "6" | "v6" | "ipv6" => Ok(6),
        other => Err(format!("unknown family {other:?}: expected 4 or 6")),
    }
}

/// Runs the subcommand.
pub fn run(cmd: Command) -> anyhow::Result<()> {
    match cmd {
        Command::Fib(args) => run_fib(args),
        Command::Trace(args) => run_trace(args),
    }
}

fn run_fib(args: FibCmd) -> anyhow::Result<()> {
    let mut fib = Fib::new();
    if args.family == 6 {
        fib.v6 = gen::IPV6_DFZ.generate(args.prefixes, args.seed)?;
    } else {
        fib.v4 = gen::IPV4_TIER1.generate(args.prefixes, args.seed)?;
    }
    write_to(&args.out, |out| ipfib::io::text::write_fib(out, &fib))
}

fn run_trace(args: TraceCmd) -> anyhow::Result<()> {
    let fib = args.fib.load()?;
    let family = args
        .family
        .unwrap_or(if fib.v4.len() > fib.v6.len() { 4 } else { 6 });
    let path = args.fib.fib.display().to_string();
    match family {
        4 => trace_family(&fib.v4, &args, &path),
        _ => trace_family(&fib.v6, &args, &path),
    }
}

fn trace_family<A: Address>(
    table: &RouteTable<A>,
    args: &TraceCmd,
    path: &str,
) -> anyhow::Result<()> {
    let addrs = gen::try_trace(table, args.kind, args.count, args.seed)
        .with_context(|| format!("{path}: cannot make a trace"))?;
    write_to(&args.out, |out| {
        for a in &addrs {
            writeln!(out, "{}", a.to_ip())?;
        }
        out.flush()
    })
}

/// Writes through `write` to stdout (`-`) or a file, gzip-compressed when the name ends in
/// `.gz`; errors name the file.
fn write_to(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> anyhow::Result<()> {
    if path.as_os_str() == "-" {
        let stdout = io::stdout();
        let mut out = BufWriter::new(stdout.lock());
        return write(&mut out).context("writing to stdout");
    }
    let name = path.display();
    let file = File::create(path).with_context(|| format!("{name}: cannot create"))?;
    let mut out = BufWriter::new(file);
    let result = if path.extension().is_some_and(|e| e == "gz") {
        let mut gz = GzEncoder::new(&mut out, Compression::default());
        write(&mut gz).and_then(|()| gz.finish().map(drop))
    } else {
        write(&mut out)
    };
    result
        .and_then(|()| out.flush())
        .with_context(|| format!("{name}: write failed"))
}
