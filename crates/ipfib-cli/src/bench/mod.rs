//! `ipfib bench`: every engine of ours, both lookup paths, and the peer crates, on one table and
//! one trace, in one process, with the answers checked to agree before anything is timed.
//!
//! The run: load or generate the table, make the trace, build every contender (timed), check
//! that they all answer the whole trace alike on every path and mode (a difference fails the
//! command, see [`verify`]), then time each engine × mode × path × thread count (see [`modes`]
//! for exactly what each mode does and which call each path makes).
//!
//! Timing: each engine is timed alone, all its passes together with its cache warm (one
//! untimed warm-up run, then `--runs` timed runs; their median is the round's figure), one
//! engine after the other; and that whole comparison is repeated `--rounds` times in the same
//! order (A B C, A B C, ...), so drift on a shared machine hits every engine alike. A row
//! reports the median of its rounds' medians and their spread (slowest and fastest round).
//! Comparators with a native batch (DPDK) get the sequence converted to their layout once per
//! mode, before any timing ([`native`]).
//!
//! The report: the table of rows ([`report`]), then one conclusion per mode, path and thread
//! count: the winner, its ratio to the runner-up and to the best peer, the CPU ([`summary`]).
//! While it runs: a bar on a terminal, a line per stage elsewhere ([`progress`](mod@progress)).

mod contenders;
pub(crate) mod cpu;
pub mod limits;
mod modes;
mod native;
#[cfg(feature = "peers")]
mod peers;
mod plot;
mod progress;
mod report;
pub(crate) mod source;
mod summary;
mod verify;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ipfib::{Address, Lookup, RouteTable};

use crate::bench::contenders::{Contender, Engine};
use crate::bench::limits::{
    count, MAX_CHUNK, MAX_PREFIXES, MAX_ROUNDS, MAX_RUNS, MAX_RUN_BUDGET_MS, MAX_THREADS, MAX_TRACE,
};
use crate::bench::modes::{Job, Mode, Path as LookupPath, Placement};
pub(crate) use crate::bench::progress::bar as progress;
use crate::bench::progress::{spinner, Stages};
use crate::bench::report::{Row, TableInfo, TraceInfo};
use crate::bench::source::{Source, TraceArg};
use crate::bench::verify::{check_agreement, AgreementError, Feed};
use crate::family::Family;
use crate::fib_args::{self, MrtArgs};

const AFTER_HELP: &str = "\
`ipfib bench --help` (not -h) also explains each column of the table and the summary lines.

With no arguments: a generated 250,000-prefix rrc00-like IPv6 table, a matched trace of
1,000,000 addresses, every engine and peer crate, throughput mode, 3 rounds of 5 runs.

Each engine is timed alone (a warm-up run, then its runs back to back), engine after engine,
and the whole comparison is repeated --rounds times in the same order: MLPS is the median of
the rounds' medians, `rounds min-max` their spread. The batch path calls ours through
lookup_batch_raw (as ipfib::Fib's batch lookups do), DPDK through its own bulk lookup on
addresses converted to its layout before timing (the `native` column: the lookup function DPDK
selected and its next-hop size), other comparators through lookup_batch.

Before timing, every engine answers the whole trace on every path and mode and is compared
with the reference engine: any difference is reported (engines, address, both answers) and
the command fails. The checksum column is FNV-1a-64 over (index, answer) pairs as
little-endian u64s, a miss counted as 2^32; it is equal for all engines of one run and mode.

For stable numbers pin the process to one otherwise idle core:
    taskset -c 1 ipfib bench ...
The report shows the CPUs the run was allowed and, with --threads N > 1, pins thread i to the
i-th allowed CPU.

Examples:
    ipfib bench --fib ../shared/data/ipv6/ipv6-ris-dfz10-20241220.txt.gz --trace matched \\
        --json out.json --plot out.svg
    ipfib bench --family 4 --gen-prefixes 900000 --mode throughput,latency,repeated
    ipfib bench --sizes 250000,500000,1000000 --plot scaling.svg
    ipfib bench --threads 1,2 --engines planb,prefix-trie";

/// `--help`'s text after the options: the columns, then [`AFTER_HELP`].
fn after_long_help() -> String {
    // Without AFTER_HELP's first paragraph, which points here.
    let rest = AFTER_HELP
        .split_once("\n\n")
        .map_or(AFTER_HELP, |(_, rest)| rest);
    format!("{}\n\n{rest}", report::COLUMNS)
}

/// Arguments of `ipfib bench`, boxed so the CLI's subcommand enum stays small.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP, after_long_help = after_long_help())]
pub struct Args {
    #[command(flatten)]
    options: Box<Options>,
}

/// The options of `ipfib bench`.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// The table under test: a FIB file, text or MRT RIB dump, plain, gzip or bzip2 (as for
    /// every command's --fib). Without it a table is generated (--gen-prefixes, --family).
    // Not `FibArgs` flattened as an `Option`: clap then ignores `--fib` when the group has
    // nested options (the MRT ones), so the file is read here with the same loader.
    #[arg(long, value_name = "FILE")]
    pub fib: Option<PathBuf>,

    /// How an MRT RIB dump becomes a table (ignored for text FIBs and generated tables).
    #[command(flatten)]
    pub mrt: MrtArgs,

    /// Address family: 6 or 4. Default: 6 for generated tables; for a FIB file, IPv6 when it has
    /// IPv6 routes, else IPv4.
    #[arg(long)]
    pub family: Option<Family>,

    /// Prefixes of the generated table (at most 2^26).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 250_000,
        value_parser = count(MAX_PREFIXES),
        conflicts_with = "fib"
    )]
    pub gen_prefixes: usize,

    /// Several generated table sizes in one run (comma-separated), for the scaling plot.
    #[arg(
        long,
        value_name = "N,N,..",
        value_delimiter = ',',
        value_parser = count(MAX_PREFIXES),
        conflicts_with_all = ["fib", "gen_prefixes"]
    )]
    pub sizes: Vec<usize>,

    /// The trace: `matched` (a random address inside a random prefix), `uniform` (random over
    /// the announced space), `space` (random over the whole address space), or a file with one
    /// address per line (gzip allowed; write `./matched` for a file of that name).
    #[arg(long, value_name = "KIND|FILE", default_value = "matched")]
    pub trace: TraceArg,

    /// Addresses of a generated trace, at most 2^28 (a trace file is used whole).
    #[arg(long, value_name = "N", default_value_t = 1_000_000, value_parser = count(MAX_TRACE))]
    pub count: usize,

    /// Seed of the generated table and trace.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Modes to measure (comma-separated). throughput: independent lookups over the trace.
    /// latency: lookup i uses `trace[i] XOR (answer[i-1] & 1)`, a data dependency the CPU cannot
    /// run ahead of (DXR's SEQ; single path only). repeated: the first count/8 addresses in
    /// windows of 8, each window looked up 8 times round-robin (DXR's REP).
    #[arg(long, value_delimiter = ',', default_value = "throughput")]
    pub mode: Vec<Mode>,

    /// Thread counts (comma-separated, each at most 1024); each thread looks up in the same
    /// shared engine.
    #[arg(
        long,
        value_name = "N,N,..",
        value_delimiter = ',',
        default_value = "1",
        value_parser = count(MAX_THREADS)
    )]
    pub threads: Vec<usize>,

    /// Timed runs per engine and round, after one untimed warm-up run (at most 1000).
    #[arg(long, value_name = "R", default_value_t = 5, value_parser = count(MAX_RUNS))]
    pub runs: usize,

    /// Rounds: the whole comparison is repeated this many times, engines in the same order each
    /// time (at most 100).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = count(MAX_ROUNDS))]
    pub rounds: usize,

    /// Addresses per call on the batch path (at most 2^24; DPDK's bulk lookups take at most 32
    /// per call, a receive burst).
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = count(MAX_CHUNK))]
    pub chunk: usize,

    /// Time budget of one timed run, in milliseconds (1 to 3,600,000): a slow engine is timed
    /// on the first part of the trace that fits (its answers are still checked on the whole
    /// trace).
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 300,
        value_parser = clap::value_parser!(u64).range(1..=MAX_RUN_BUDGET_MS)
    )]
    pub run_budget_ms: u64,

    // Help built at run time: the registry's engines and the comparators of this build.
    #[arg(long, value_name = "NAME,..", value_delimiter = ',', help = contenders::help())]
    pub engines: Vec<String>,

    /// Write the results as a JSON array to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Plot the results to FILE.svg or FILE.png (plus FILE-sizes / FILE-threads for scaling).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

impl Options {
    /// What the arguments' ranges do not cover: the plot format, and the memory the run is
    /// estimated to need against the memory available.
    fn validate(&self) -> anyhow::Result<()> {
        if let Some(p) = &self.plot {
            plot::Format::of(p)?;
        }
        limits::check_memory("this bench run", self.memory_estimate())
    }

    /// Bytes the largest table generation, the trace and the answer arrays need, roughly: per
    /// address the trace, the repeated-mode sequence, two native copies and two answer arrays
    /// of the agreement check (at most 6 × 16 + 16 bytes); per thread its answer arrays.
    fn memory_estimate(&self) -> u64 {
        let prefixes = if self.fib.is_some() {
            0
        } else {
            self.sizes
                .iter()
                .copied()
                .max()
                .unwrap_or(self.gen_prefixes) as u64
        };
        let trace = match self.trace {
            TraceArg::Gen(_) => self.count as u64 * (6 * 16 + 16),
            TraceArg::File(_) => 0,
        };
        let threads = self.threads.iter().copied().max().unwrap_or(1) as u64;
        prefixes * limits::BYTES_PER_GENERATED_ROUTE + trace + threads * self.chunk as u64 * 16
    }

    /// The modes asked for, each once, in the order given.
    fn modes(&self) -> Vec<Mode> {
        first_occurrences(&self.mode)
    }

    /// The thread counts asked for, each once, in the order given.
    fn thread_counts(&self) -> Vec<usize> {
        first_occurrences(&self.threads)
    }
}

fn first_occurrences<T: Copy + PartialEq>(items: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(items.len());
    for &x in items {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<()> {
    let args = *args.options;
    args.validate()?;
    let started = Instant::now();
    let fib = match &args.fib {
        Some(path) => {
            let bar = spinner(format!("loading {}", path.display()));
            let loaded = fib_args::load_reporting(path, &args.mrt);
            bar.finish_and_clear();
            Some(loaded?.0)
        }
        None => None,
    };
    let family = match (args.family, &fib) {
        (Some(f), _) => f,
        (None, Some(table)) if table.v6().is_empty() => Family::V4,
        _ => Family::V6,
    };
    let mut rows = match family {
        Family::V4 => run_family::<u32>(&args, fib.map(u32::of_table))?,
        Family::V6 => run_family::<u128>(&args, fib.map(u128::of_table))?,
    };
    summary::attach(&mut rows, &cpu::model_name());
    // The result files first, each independently of the others and of the console: a full
    // disk or a closed stdout must not lose them. The first error is the command's.
    let mut first_error = None;
    if let Some(path) = &args.json {
        match report::write_json(path, &rows) {
            Ok(()) => note!("wrote {}", path.display()),
            Err(e) => first_error = first_error.or(Some(e)),
        }
    }
    if let Some(path) = &args.plot {
        match plot::plot(path, &rows) {
            Ok(written) => written.iter().for_each(|p| note!("wrote {}", p.display())),
            Err(e) => first_error = first_error.or(Some(e)),
        }
    }
    if let Err(e) = crate::write_stdout(&report::render(&rows)) {
        first_error = first_error.or(Some(e));
    }
    note!("bench done in {:.1} s", started.elapsed().as_secs_f64());
    first_error.map_or(Ok(()), Err)
}

/// Everything for one family: one table per size (or the loaded one), each benchmarked fully.
fn run_family<A: Source>(
    args: &Options,
    loaded: Option<RouteTable<A>>,
) -> anyhow::Result<Vec<Row>> {
    let sizes = if args.sizes.is_empty() {
        vec![args.gen_prefixes]
    } else {
        args.sizes.clone()
    };
    let file_trace = match &args.trace {
        TraceArg::File(path) => Some(crate::addresses::read_family::<A>(path)?),
        TraceArg::Gen(_) => None,
    };
    let allowed = cpu::allowed();
    note!(
        "CPUs allowed: {} (main thread on CPU {}); pin with `taskset -c N`",
        cpu::format_list(&allowed),
        cpu::current().map_or("?".into(), |c| c.to_string())
    );
    let mut rows = Vec::new();
    match (loaded, &args.fib) {
        (Some(table), Some(path)) => {
            anyhow::ensure!(
                !table.is_empty(),
                "{} has no {} routes",
                path.display(),
                A::FAMILY
            );
            let info = TableInfo {
                table: path.display().to_string(),
                family: A::FAMILY,
                prefixes: table.len(),
            };
            rows.extend(bench_table(args, &table, info, file_trace.as_deref())?);
        }
        _ => {
            for &n in &sizes {
                let started = Instant::now();
                let what = format!("a {n}-prefix {} table (seed {})", A::FAMILY, args.seed);
                let bar = spinner(format!("generating {what}"));
                let table = A::generate(n, args.seed);
                bar.finish_and_clear();
                note!(
                    "generated {what} in {:.1} s",
                    started.elapsed().as_secs_f64()
                );
                let info = TableInfo {
                    table: "generated".into(),
                    family: A::FAMILY,
                    prefixes: table.len(),
                };
                rows.extend(bench_table(args, &table, info, file_trace.as_deref())?);
            }
        }
    }
    Ok(rows)
}

/// What is known of a built contender besides the engine itself.
struct Built {
    ours: bool,
    build_ms: f64,
}

/// Lines per lookup of `seq` fed as `feed` says, from the engine's model: the average over
/// the batches the engine is handed (a batch may read fewer lines than single lookups: PlanB
/// stages IPv6 batches), or over one-address slices for single lookups and chains.
fn lines_as_fed<A: Address>(lookup: &dyn Lookup<A>, seq: &[A], feed: Feed) -> Option<f64> {
    let part = match feed {
        Feed::Batch(chunk) => chunk.max(1),
        Feed::Single | Feed::Chain => 1,
    };
    let mut sum = 0.0;
    for batch in seq.chunks(part) {
        sum += lookup.lines_per_lookup(batch)? * batch.len() as f64;
    }
    (!seq.is_empty()).then(|| sum / seq.len() as f64)
}

fn feed_of(mode: Mode, path: LookupPath, chunk: usize) -> Feed {
    match (mode, path) {
        (Mode::Latency, _) => Feed::Chain,
        (_, LookupPath::Single) => Feed::Single,
        (_, LookupPath::Batch) => Feed::Batch(chunk),
    }
}

/// Benchmarks every contender on one table.
fn bench_table<A: Source>(
    args: &Options,
    table: &RouteTable<A>,
    info: TableInfo,
    file_trace: Option<&[A]>,
) -> anyhow::Result<Vec<Row>> {
    let generated;
    let trace: &[A] = match file_trace {
        Some(t) => t,
        None => {
            generated = source::trace(table, &args.trace, args.count, args.seed)?;
            &generated
        }
    };
    let trace_info = TraceInfo {
        trace: args.trace.to_string(),
        trace_len: trace.len(),
        seed: args.seed,
    };
    let contenders: Vec<Contender<A>> = contenders::select(contenders::all::<A>(), &args.engines)?;
    let modes = args.modes();
    let thread_counts = args.thread_counts();
    let measurements: usize = modes.iter().map(|m| m.paths().len()).sum::<usize>()
        * thread_counts.len()
        * contenders.len()
        * args.rounds;
    let mut bar = Stages::new((contenders.len() + modes.len() + measurements) as u64);

    let mut built = Vec::with_capacity(contenders.len());
    let mut engines: Vec<Engine<A>> = Vec::with_capacity(contenders.len());
    for c in &contenders {
        bar.start(format!("building {}", c.name));
        if let Some(setup) = c.setup {
            setup();
        }
        let start = Instant::now();
        match (c.build)(table) {
            Ok(engine) => engines.push(engine),
            // A comparator that cannot represent this table (DPDK's next-hop width, say) is
            // left out with a note; one of ours failing is an error.
            Err(e) if !c.ours => {
                let why = ipfib::error::one_line(e.as_ref());
                bar.suspend(|| note!("note: {} left out: {why}", c.name));
                bar.finish_one();
                continue;
            }
            Err(e) => return Err(e.context(format!("building {}", c.name))),
        }
        built.push(Built {
            ours: c.ours,
            build_ms: start.elapsed().as_secs_f64() * 1e3,
        });
        bar.finish_one();
    }

    // The sequence each mode looks up, and every engine's checksum for each mode and path.
    let repeated = modes
        .contains(&Mode::Repeated)
        .then(|| modes::repeated(trace));
    let mut checksums = Vec::new();
    for &mode in &modes {
        bar.start(format!("checking that all engines agree ({})", mode.name()));
        let seq = sequence(mode, trace, repeated.as_deref());
        let feeds: Vec<Feed> = mode
            .paths()
            .iter()
            .map(|&p| feed_of(mode, p, args.chunk))
            .collect();
        match check_agreement(&engines, seq, &feeds) {
            Ok(sums) => {
                for (feed, i) in feeds.iter().zip(0..) {
                    for s in &sums {
                        checksums.push((s.name.clone(), mode, *feed, s.sums[i]));
                    }
                }
            }
            Err(AgreementError::Disagree(d)) => {
                bar.clear();
                note!("\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
                note!("!!! {d}");
                note!("!!! table: {}, trace: {}", info.table, trace_info.trace);
                note!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n");
                anyhow::bail!("{d}; no benchmark numbers are reported for disagreeing engines");
            }
            Err(e) => {
                bar.clear();
                return Err(e.into());
            }
        }
        bar.finish_one();
    }

    let allowed = cpu::format_list(&cpu::allowed());
    let budget = Duration::from_millis(args.run_budget_ms);
    let mut rows = Vec::new();
    for &mode in &modes {
        let seq = sequence(mode, trace, repeated.as_deref());
        // Lookups per run for each engine, estimated once per mode on the single path.
        let per_run: Vec<usize> = engines
            .iter()
            .map(|e| lookups_per_run(e, seq, mode, budget))
            .collect();
        // The native comparators' copies of the sequence in their own layout, made before any
        // timing and kept for every round.
        let prepared: Vec<_> = engines
            .iter()
            .zip(&per_run)
            .map(|(e, &n)| match e {
                Engine::Native(native) if mode.paths().contains(&LookupPath::Batch) => {
                    Some(native.prepare(&seq[..n]))
                }
                _ => None,
            })
            .collect();
        // Every (path, threads, engine) of this mode, each timed once per round; rounds
        // outermost so that the engines alternate.
        let mut cells = Vec::new();
        for &path in mode.paths() {
            for &threads in &thread_counts {
                for e in 0..engines.len() {
                    cells.push((path, threads, e, Vec::with_capacity(args.rounds)));
                }
            }
        }
        for round in 1..=args.rounds {
            for (path, threads, e, speeds) in &mut cells {
                let (path, threads, n) = (*path, *threads, per_run[*e]);
                let engine = &engines[*e];
                bar.start(format!(
                    "timing {} {} {} x{threads}, round {round}/{}",
                    engine.lookup().name(),
                    path.name(),
                    mode.name(),
                    args.rounds
                ));
                let job = Job {
                    engine,
                    addrs: &seq[..n],
                    native: prepared[*e].as_deref(),
                    mode,
                    path,
                    chunk: args.chunk,
                };
                let placement = Placement::for_threads(threads);
                let times = modes::time_runs(job, threads, args.runs, &placement)?;
                speeds.push(report::speed(&times, n));
                bar.finish_one();
            }
        }
        // Lines per lookup depend on the engine, the sequence and how it is fed: once per
        // engine and feed.
        let mut lines: Vec<(usize, Feed, Option<f64>)> = Vec::new();
        for (path, threads, e, speeds) in cells {
            let (engine, b, n) = (&engines[e], &built[e], per_run[e]);
            let name = engine.lookup().name();
            let speed = report::over_rounds(&speeds);
            let feed = feed_of(mode, path, args.chunk);
            let lines_per_lookup = match lines.iter().find(|l| l.0 == e && l.1 == feed) {
                Some(l) => l.2,
                None => {
                    let l = lines_as_fed(engines[e].lookup(), seq, feed);
                    lines.push((e, feed, l));
                    l
                }
            };
            let sum = checksums
                .iter()
                .find(|(s, m, f, _)| s == name && *m == mode && *f == feed)
                .map_or(0, |c| c.3);
            let bytes = engine.lookup().memory_bytes();
            rows.push(Row {
                engine: name.to_string(),
                ours: b.ours,
                path,
                mode,
                threads,
                mlps: speed.mlps,
                mlps_min: speed.min,
                mlps_max: speed.max,
                round_mlps: speeds.iter().map(|s| s.mlps).collect(),
                per_thread_mlps: speed.per_thread,
                ns_per_lookup: speed.ns_per_lookup,
                lookups_per_run: n,
                rounds: args.rounds,
                runs: args.runs,
                chunk: args.chunk,
                call: match path {
                    LookupPath::Single => "lookup",
                    LookupPath::Batch => engine.batch_call(),
                },
                native: engine.native_info(),
                lines_per_lookup,
                build_ms: b.build_ms,
                bytes,
                bytes_per_prefix: bytes as f64 / info.prefixes.max(1) as f64,
                checksum: format!("{sum:016x}"),
                table: info.clone(),
                trace: trace_info.clone(),
                cpus: allowed.clone(),
                pinned: Placement::for_threads(threads).cpus,
                cpus_used: speed.cpus_used,
                summary: None,
            });
        }
    }
    bar.clear();
    Ok(rows)
}

/// The address sequence a mode looks up.
fn sequence<'a, A>(mode: Mode, trace: &'a [A], repeated: Option<&'a [A]>) -> &'a [A] {
    match (mode, repeated) {
        (Mode::Repeated, Some(r)) => r,
        _ => trace,
    }
}

/// How many lookups one timed run makes: the whole sequence, unless the engine is so slow that
/// this would exceed the time budget; then the largest prefix that fits, but never fewer than
/// 65,536 (or the whole sequence when shorter). Estimated from the fastest of three timings
/// of the first 16,384 lookups.
fn lookups_per_run<A: modes::FlipLow>(
    engine: &Engine<A>,
    seq: &[A],
    mode: Mode,
    budget: Duration,
) -> usize {
    let probe = &seq[..seq.len().min(16_384)];
    if probe.is_empty() {
        return seq.len();
    }
    let job = Job {
        engine,
        addrs: probe,
        native: None,
        mode,
        path: LookupPath::Single,
        chunk: 1,
    };
    // A warm-up and the fastest of three, so one preempted probe does not shorten the runs.
    let Ok(times) = modes::time_runs(job, 1, 3, &Placement::default()) else {
        return seq.len();
    };
    let fastest = times.iter().map(|t| t.wall).min().unwrap_or_default();
    let per_lookup = fastest.as_secs_f64() / probe.len() as f64;
    let fits = if per_lookup > 0.0 {
        (budget.as_secs_f64() / per_lookup) as usize
    } else {
        seq.len()
    };
    fits.max(65_536).min(seq.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn parse(args: &[&str]) -> Result<Options, clap::Error> {
        let argv = std::iter::once("bench").chain(args.iter().copied());
        Cli::try_parse_from(argv).map(|c| *c.args.options)
    }

    #[test]
    fn no_arguments_is_the_main_job() {
        let o = parse(&[]).unwrap();
        assert!(o.fib.is_none());
        assert_eq!(o.family, None);
        assert_eq!(
            (o.gen_prefixes, o.count, o.runs, o.rounds, o.chunk),
            (250_000, 1_000_000, 5, 3, 4096)
        );
        assert_eq!(o.trace, TraceArg::Gen(ipfib_gen::TraceKind::Matched));
        assert_eq!(
            (o.modes(), o.thread_counts()),
            (vec![Mode::Throughput], vec![1])
        );
        assert!(o.sizes.is_empty() && o.engines.is_empty());
        assert!(o.json.is_none() && o.plot.is_none());
        o.validate().unwrap();
    }

    #[test]
    fn lists_families_and_files_parse() {
        let o = parse(&[
            "--fib",
            "t.txt",
            "--family",
            "ipv4",
            "--mode",
            "latency,throughput,latency",
            "--threads",
            "2,1,2",
            "--engines",
            "planb,prefix-trie",
            "--trace",
            "trace.txt",
        ])
        .unwrap();
        assert_eq!(o.fib.as_deref(), Some(std::path::Path::new("t.txt")));
        assert_eq!(o.family, Some(Family::V4));
        assert_eq!(o.modes(), vec![Mode::Latency, Mode::Throughput]);
        assert_eq!(o.thread_counts(), vec![2, 1]);
        assert_eq!(o.engines, ["planb", "prefix-trie"]);
        assert_eq!(o.trace, TraceArg::File("trace.txt".into()));
        let o = parse(&["--sizes", "10,20,30", "--family", "6"]).unwrap();
        assert_eq!((o.sizes, o.family), (vec![10, 20, 30], Some(Family::V6)));
    }

    #[test]
    fn contradictions_and_nonsense_are_refused() {
        assert!(parse(&["--family", "5"]).is_err());
        assert!(parse(&["--mode", "fast"]).is_err());
        assert!(parse(&["--fib", "x", "--gen-prefixes", "5"]).is_err());
        assert!(parse(&["--sizes", "5", "--gen-prefixes", "5"]).is_err());
        assert!(parse(&["--runs", "-1"]).is_err());
        // Numbers out of range are usage errors when the arguments are parsed.
        for bad in [
            &["--runs", "0"][..],
            &["--runs", "1001"],
            &["--rounds", "0"],
            &["--rounds", "101"],
            &["--threads", "0"],
            &["--threads", "1,1025"],
            &["--chunk", "0"],
            &["--chunk", "16777217"],
            &["--count", "0"],
            &["--count", "268435457"],
            &["--count", "18446744073709551615"],
            &["--gen-prefixes", "0"],
            &["--gen-prefixes", "67108865"],
            &["--sizes", "0,5"],
            &["--sizes", "5,99999999999"],
            &["--run-budget-ms", "0"],
            &["--run-budget-ms", "3600001"],
        ] {
            let err = parse(bad)
                .err()
                .unwrap_or_else(|| panic!("{bad:?} accepted"));
            assert_eq!(
                err.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{bad:?}"
            );
        }
        let o = parse(&[
            "--count",
            "268435456",
            "--chunk",
            "16777216",
            "--rounds",
            "100",
        ])
        .unwrap();
        assert_eq!((o.count, o.chunk, o.rounds), (1 << 28, 1 << 24, 100));
        let o = parse(&["--plot", "x.jpg"]).unwrap();
        assert!(o.validate().is_err());
    }
}
