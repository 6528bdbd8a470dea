//! `ipfib bench-ops`: what inserting, updating and deleting routes, looking up and freeing a
//! whole table cost, for `LiveFib` (every update published on its own, and updates coalesced
//! into batches), Patricia (changed in place) and, with feature `bpf`, the kernel's BPF LPM
//! trie driven as the kernel's selftest benchmark drives it, side by side in one run.
//!
//! The table is a FIB file, or by default the kernel benchmark's scenario: `--dense N` /32
//! keys 0..N (10,000). Each structure runs the whole sequence ([`structures`]) once per round,
//! structures alternating (A B C, A B C, ...); a row is the median of the rounds and their
//! spread. Answers are checked against the route table after the inserts, the updates and
//! the deletes; a difference fails the command.

mod report;
mod structures;

use std::path::PathBuf;
use std::time::Instant;

use ipfib::{Address, LookupError, NextHop, Prefix, Reader, RouteTable, Table};
use ipnet::IpNet;

use crate::bench::limits::{count, MAX_PREFIXES, MAX_ROUNDS, MAX_TRACE};
use crate::bench::source::Source;
use crate::family::Family;
use crate::fib_args::{self, MrtArgs};
use report::Row;
use structures::Measured;

const AFTER_HELP: &str = "\
Each structure starts empty and inserts every route, looks up the trace, gives every route
another next hop, deletes every route; then a full one is dropped (free). Answers are checked
against the route table after the inserts, the updates and the deletes.

Structures: livefib-coalesced (LiveFib, updates applied in batches of --batch, each flushed),
livefib-per-update (each update flushed on its own; --per-update of each kind timed),
patricia (in place), bpf-lpm-trie (feature `bpf`: the kernel's BPF_MAP_TYPE_LPM_TRIE, every
operation by a BPF program through BPF_PROG_TEST_RUN, 10,000 per run as the kernel's
selftest; free is the kernel's bpf_map_free_deferred time). Where the kernel refuses BPF, its
rows are left out with the reason.

Examples:
    taskset -c 1 ipfib bench-ops                       # 10,000 dense /32 keys
    taskset -c 1 ipfib bench-ops --fib ../shared/data/ipv6/ipv6-ris-dfz10-20241220.txt.gz \\
        --json ops.json";

/// Arguments of `ipfib bench-ops`.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The table: a FIB file (text or MRT, plain, gzip or bzip2). Without it, --dense keys.
    #[arg(long, value_name = "FILE")]
    pub fib: Option<PathBuf>,

    /// How an MRT RIB dump becomes a table.
    #[command(flatten)]
    pub mrt: MrtArgs,

    /// Address family of a FIB file: 6 or 4 (default IPv6 when it has IPv6 routes).
    #[arg(long)]
    pub family: Option<Family>,

    /// The kernel benchmark's table: N IPv4 /32 keys 0..N, next hop = key.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = count(MAX_PREFIXES), conflicts_with = "fib")]
    pub dense: usize,

    /// Addresses looked up: a matched trace of N (random addresses inside random routes).
    #[arg(long, value_name = "N", default_value_t = 1_000_000, value_parser = count(MAX_TRACE))]
    pub lookups: usize,

    /// Updates per LiveFib batch (0: all of a phase in one batch).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub batch: usize,

    /// Updates of each kind timed for livefib-per-update (at most half the table).
    #[arg(long, value_name = "N", default_value_t = 200, value_parser = count(1 << 20))]
    pub per_update: usize,

    /// The engine LiveFib builds.
    #[arg(long, value_name = "ENGINE", default_value = "planb", value_parser = crate::engine_arg::Engines)]
    pub engine: &'static ipfib::engine::EngineInfo,

    /// Rounds; structures alternate within each.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = count(MAX_ROUNDS))]
    pub rounds: usize,

    /// Seed of the trace.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Write the rows as a JSON array to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// What every structure is run on.
pub struct Work<A: Address> {
    /// The routes, in the table's order.
    pub routes: Vec<(Prefix<A>, NextHop)>,
    /// The addresses looked up.
    pub trace: Vec<A>,
    /// The reference's answers for the trace.
    pub expected: Vec<Option<NextHop>>,
    /// The answers once every route's next hop is XORed with 1 (the update).
    pub updated: Vec<Option<NextHop>>,
    /// LiveFib's engine.
    pub engine: &'static str,
    /// LiveFib's batch size (0: all).
    pub batch: usize,
    /// LiveFib per-update count.
    pub per_update: usize,
}

impl<A: OpsFamily> Work<A> {
    /// The routes as a dual-stack table.
    pub fn table(&self) -> Table {
        let mut t = RouteTable::new();
        for &(p, nh) in &self.routes {
            t.insert(p, nh);
        }
        A::into_table(t)
    }
}

/// What the operations need of a family beyond [`Source`].
pub trait OpsFamily: Source + ipfib::engine::patricia::Bits {
    /// The prefix as an `IpNet` (what `LiveFib` takes).
    fn ipnet(p: Prefix<Self>) -> IpNet;
    /// A `Reader` batch lookup of this family.
    fn reader_batch(
        r: &mut Reader,
        addrs: &[Self],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError>;
    /// One family's routes as a dual-stack table.
    fn into_table(t: RouteTable<Self>) -> Table;
}

impl OpsFamily for u32 {
    fn ipnet(p: Prefix<u32>) -> IpNet {
        IpNet::V4(p.to_net())
    }
    fn reader_batch(
        r: &mut Reader,
        a: &[u32],
        o: &mut [NextHop],
        m: NextHop,
    ) -> Result<(), LookupError> {
        r.lookup_v4_batch(a, o, m)
    }
    fn into_table(t: RouteTable<u32>) -> Table {
        Table::from_families(t, RouteTable::new())
    }
}

impl OpsFamily for u128 {
    fn ipnet(p: Prefix<u128>) -> IpNet {
        IpNet::V6(p.to_net())
    }
    fn reader_batch(
        r: &mut Reader,
        a: &[u128],
        o: &mut [NextHop],
        m: NextHop,
    ) -> Result<(), LookupError> {
        r.lookup_v6_batch(a, o, m)
    }
    fn into_table(t: RouteTable<u128>) -> Table {
        Table::from_families(RouteTable::new(), t)
    }
}

/// The kernel benchmark's table: `n` /32 keys 0..n, next hop = key.
pub fn dense(n: usize) -> RouteTable<u32> {
    let mut t = RouteTable::new();
    for key in 0..n as u32 {
        t.insert(Prefix::covering(key, 32), key);
    }
    t
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<()> {
    let started = Instant::now();
    let (rows, name) = match &args.fib {
        Some(path) => {
            let (table, _) = fib_args::load_reporting(path, &args.mrt)?;
            let name = path.display().to_string();
            let v4 = matches!(args.family, Some(Family::V4))
                || (args.family.is_none() && table.v6().is_empty());
            if v4 {
                (measure(&args, u32::of_table(table), &name)?, name)
            } else {
                (measure(&args, u128::of_table(table), &name)?, name)
            }
        }
        None => {
            let name = format!("dense /32 keys 0..{}", args.dense);
            (measure(&args, dense(args.dense), &name)?, name)
        }
    };
    let mut first_error = None;
    if let Some(path) = &args.json {
        match report::write_json(path, &rows) {
            Ok(()) => note!("wrote {}", path.display()),
            Err(e) => first_error = Some(e),
        }
    }
    if let Err(e) = crate::write_stdout(&report::render(&name, &rows)) {
        first_error = first_error.or(Some(e));
    }
    note!("bench-ops done in {:.1} s", started.elapsed().as_secs_f64());
    first_error.map_or(Ok(()), Err)
}

/// A structure's name, its rounds' measurements, and why a part was not measured.
type Run = (&'static str, Vec<Vec<Measured>>, Option<String>);

/// Every structure on one table, `args.rounds` times, structures alternating.
pub fn measure<A: OpsFamily>(
    args: &Args,
    table: RouteTable<A>,
    name: &str,
) -> anyhow::Result<Vec<Row>> {
    anyhow::ensure!(!table.is_empty(), "{name} has no {} routes", A::FAMILY);
    let trace = crate::bench::source::trace(
        &table,
        &crate::bench::source::TraceArg::Gen(ipfib_gen::TraceKind::Matched),
        args.lookups,
        args.seed,
    )?;
    let expected: Vec<Option<NextHop>> = trace
        .iter()
        .map(|&a| table.longest_match(a).map(|(_, nh)| nh))
        .collect();
    let work = Work {
        routes: table.iter().collect(),
        updated: expected.iter().map(|a| a.map(|nh| nh ^ 1)).collect(),
        expected,
        trace,
        engine: args.engine.name(),
        batch: args.batch,
        per_update: args.per_update,
    };
    #[cfg(feature = "bpf")]
    let probe = ipfib_bpf::FreeProbe::attach();
    let mut runs: Vec<Run> = vec![
        ("livefib-coalesced", Vec::new(), None),
        ("livefib-per-update", Vec::new(), None),
        ("patricia", Vec::new(), None),
    ];
    #[cfg(feature = "bpf")]
    runs.push(("bpf-lpm-trie", Vec::new(), None));
    for round in 1..=args.rounds {
        for (who, rounds, skipped) in runs.iter_mut() {
            // Only the kernel's trie (feature `bpf`) leaves a part out.
            let _ = &skipped;
            note!("{name}: {who}, round {round}/{}", args.rounds);
            let measured = match *who {
                "livefib-coalesced" => structures::live_coalesced(&work)?,
                "livefib-per-update" => structures::live_per_update(&work)?,
                "patricia" => structures::patricia(&work)?,
                #[cfg(feature = "bpf")]
                _ => match structures::bpf(&work, &probe) {
                    Ok((m, why)) => {
                        *skipped = why;
                        m
                    }
                    // Where the kernel refuses BPF the row says why; a wrong answer or a
                    // failed operation is the command's error.
                    Err(e) => match e.downcast::<ipfib_bpf::BpfError>() {
                        Ok(e @ ipfib_bpf::BpfError::Kernel { .. }) => {
                            *skipped = Some(e.to_string());
                            Vec::new()
                        }
                        Ok(e) => return Err(e.into()),
                        Err(e) => return Err(e),
                    },
                },
                #[cfg(not(feature = "bpf"))]
                _ => Vec::new(),
            };
            rounds.push(measured);
        }
    }
    let mut rows = Vec::new();
    for (who, rounds, skipped) in runs {
        rows.extend(report::rows(
            name,
            A::FAMILY,
            work.routes.len(),
            who,
            &rounds,
            skipped,
        ));
    }
    Ok(rows)
}
