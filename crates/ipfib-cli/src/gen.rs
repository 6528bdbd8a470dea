//! `ipfib gen fib`, `ipfib gen trace` and `ipfib gen pcap`: synthetic tables, lookup traces,
//! and packets whose destinations are a trace.
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
    /// Generate packets for a forwarding pipeline (a pcap file): Ethernet, IPv4 or IPv6, UDP,
    /// one frame per address of a trace of each family, the families mixed by a share.
    Pcap(PcapCmd),
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

/// Arguments of `ipfib gen pcap`.
#[derive(clap::Args)]
pub struct PcapCmd {
    #[command(flatten)]
    fib: FibArgs,
    /// How each family's destinations are drawn (as `ipfib gen trace --kind`).
    #[arg(long)]
    kind: TraceKind,
    /// Number of packets (at most 2^28).
    #[arg(long, value_parser = limits::count(limits::MAX_TRACE))]
    count: usize,
    /// Share of IPv6 packets, 0 to 1, spread evenly among the IPv4 ones; default: the share
    /// of IPv6 routes in the table.
    #[arg(long, value_parser = share)]
    v6_share: Option<f64>,
    /// Bytes per frame without the FCS (62 to 1514); the UDP payload is zero-filled to it.
    #[arg(long, default_value_t = ipfib_gen::packets::DEFAULT_FRAME_LEN)]
    frame_len: usize,
    /// Seed: the same table, kind, count, share and seed always give the same packets.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output file (a pcap file; `-` for stdout).
    #[arg(long)]
    out: PathBuf,
}

/// A share between 0 and 1.
fn share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("{s:?} is not a share between 0 and 1")),
    }
}

/// Runs the subcommand.
pub fn run(cmd: Command) -> anyhow::Result<()> {
    match cmd {
        Command::Fib(args) => run_fib(args),
        Command::Trace(args) => run_trace(args),
        Command::Pcap(args) => run_pcap(args),
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

fn run_pcap(args: PcapCmd) -> anyhow::Result<()> {
    use ipfib_gen::packets;
    // The addresses and the frame order, held before they are written.
    limits::check_memory(
        &format!("a {}-packet file", args.count),
        args.count as u64 * 48,
    )?;
    let options = packets::FrameOptions::with_frame_len(args.frame_len)?;
    let table = args.fib.load()?;
    let path = args.fib.fib.display().to_string();
    let v6_share = args.v6_share.unwrap_or_else(|| match table.len() {
        0 => 0.0,
        n => table.v6().len() as f64 / n as f64,
    });
    let n6 = packets::ipv6_count(args.count, v6_share);
    // Each family's trace from its own seed, so the IPv4 packets of a mix are the same
    // whatever the share.
    let v4 = destinations(table.v4(), &args, args.count - n6, args.seed, &path)?;
    let v6 = destinations(table.v6(), &args, n6, args.seed.wrapping_add(1), &path)?;
    let order = packets::interleave(&v4, &v6);
    write_to(&args.out, |out| {
        packets::frames(&order, &options, out).map_err(std::io::Error::other)
    })
}

/// `count` destinations of one family for `ipfib gen pcap` (none needs no routes).
fn destinations<A: Address>(
    table: &RouteTable<A>,
    args: &PcapCmd,
    count: usize,
    seed: u64,
    path: &str,
) -> anyhow::Result<Vec<A>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    ipfib_gen::try_trace(table, args.kind, count, seed)
        .with_context(|| format!("{path}: cannot make the {} destinations", A::FAMILY))
}
