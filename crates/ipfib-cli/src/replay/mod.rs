//! `ipfib replay`: a real BGP update stream applied to a live table while threads look up.
//!
//! The run: load the base table (`--fib`, or start empty) and the update stream (MRT BGP4MP /
//! BGP4MP_ET or the text format, see `ipfib_io::updates`); turn the stream into FIB changes
//! by the documented peer rules (`ipfib_io::replay::rules`); make a matched trace from the final route set;
//! then submit the changes to a `LiveFib` at the recorded pace × `--speed` (or as fast as
//! possible) while `--threads` reader threads look up. Afterwards: the static engine and the
//! idle live table on the same trace and threads, and the final check against the reference
//! engine ([`check`]); a difference fails the command.
//!
//! Visibility of an update is the time from its submission to the publish that contained it
//! (the moment the new version was stored: every lookup that starts later sees it).

mod check;
pub(crate) mod load;

use crate::rss::rss;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use ipfib::engine::EngineInfo;
use ipfib::{Fib, LiveFib, LiveOptions, Table};
use ipfib_gen::TraceKind;
use serde_json::json;

use ipfib_io::replay::{self as stream, Peers, Speed, Submission, Timed, Visibility};
use load::{Pinned, Static, Trace};

const AFTER_HELP: &str = "\
FIB semantics (deterministic): --peer IP takes that peer's records: an announcement inserts or
replaces the route, a withdrawal removes it. --peer all merges every peer: per prefix the FIB
holds the route of the lowest peer address currently announcing it; a base-table route ranks
after every peer and is never withdrawn by them. Next hops are the stream's BGP next-hop
addresses numbered 1, 2, ... by first appearance (0 when absent).

Timing: a stream whose timestamps are all whole seconds (BGP4MP, the text captures) does not
say when within a second a record came; its records are spread evenly over their second in
recorded order. BGP4MP_ET microsecond times are replayed as recorded.

Reported (and written to --json): updates, publishes, visible_us_p50/p99/max (submission to
the publish that made an update visible), lookup_mlps_static (the static engine on the final
table), lookup_mlps_live_idle (after the live table has gone quiet: its rebuilder has finished
compacting and settling, no new version for 100 ms), lookup_mlps_during, peak_rss_bytes, final_check (\"ok\" or the
number of addresses whose answer differs from the reference engine; a difference exits 1),
stream_records (records or lines read), stream_skipped_records (malformed MRT records skipped
with --skip-bad-records), stream_ignored (records and prefixes without a unicast route change,
by reason: KEEPALIVE messages, state changes, multicast prefixes, ...).

Malformed MRT records (a prefix over /32 or /128, a prefix or field running past its end, a
NEXT_HOP or MP_REACH_NLRI next hop of an impossible length, NLRI without a next hop) end the
replay with an error naming their byte offset; --skip-bad-records skips each one whole.

Examples:
    ipfib replay --fib ../shared/data/ipv4/ipv4-bart-tier1-2023.txt.gz \\
        --updates ../shared/data/updates/ris-rrc00-updates-20190101-0000-5min.txt.gz --speed 10
    ipfib replay --updates ../shared/data/mrt/updates/bgpdump-updates.et-header.2015.gz \\
        --speed max --json et.json";

/// Arguments of `ipfib replay`.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// Base table (any FIB file `ipfib lookup` reads; an MRT RIB gives each prefix its best
    /// path). Without it the replay starts from an empty table.
    #[arg(long, value_name = "FILE")]
    fib: Option<PathBuf>,

    /// The update stream: MRT BGP4MP / BGP4MP_ET, or text (`ts A|W prefix peer [next_hop]`),
    /// plain, gzip or bzip2.
    #[arg(long, value_name = "FILE")]
    updates: PathBuf,

    /// Whose routes: a peer IP address, or `all` (merged, lowest peer address wins).
    #[arg(long, value_name = "IP|all", default_value = "all")]
    peer: Peers,

    /// Replay speed: the recorded pace times X, or `max` (as fast as possible).
    #[arg(long, value_name = "X|max", default_value = "1", value_parser = parse_speed)]
    speed: Speed,

    /// Reader threads looking up during the replay (and for the static and idle figures).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: u16,

    /// Engine of the live table.
    #[arg(long, value_name = "ENGINE", default_value = "planb", value_parser = crate::engine_arg::Engines)]
    engine: &'static EngineInfo,

    /// Lookups per call: 1 = single lookups, more = batched (`lookup_batch_raw`).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=4096))]
    batch: u16,

    /// The live table's coalescing delay in microseconds.
    #[arg(long, value_name = "US", default_value_t = 100)]
    delay_us: u64,

    /// Addresses of the matched trace (from the final route set).
    #[arg(long, value_name = "N", default_value_t = 1_000_000, value_parser = crate::bench::limits::count(crate::bench::limits::MAX_TRACE))]
    count: usize,

    /// How long the static and the idle live lookups are timed, in milliseconds (each, in 5
    /// alternating rounds; each figure is the median round).
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    measure_ms: u64,

    /// Seed of the trace and of the final check's sample.
    #[arg(long, default_value_t = 1)]
    seed: u64,

    /// MRT: skip malformed records (whole: nothing of a skipped record is applied) instead of
    /// failing; counted on stderr and as stream_skipped_records in the JSON.
    #[arg(long)]
    skip_bad_records: bool,

    /// Write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

fn parse_speed(s: &str) -> Result<Speed, String> {
    if s.eq_ignore_ascii_case("max") {
        return Ok(Speed::Max);
    }
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(Speed::Times(x)),
        _ => Err(format!("expected `max` or a positive number, got {s:?}")),
    }
}

/// Runs the replay.
pub fn run(args: Args) -> anyhow::Result<()> {
    let base = match &args.fib {
        Some(path) => {
            let options = ipfib_io::LoadOptions {
                allow_empty: true,
                ..ipfib_io::LoadOptions::default()
            };
            let (table, report) = ipfib_io::load_fib_with_report(path, &options)?;
            for warning in report.warnings() {
                note!("ipfib: {}: {warning}", path.display());
            }
            table
        }
        None => Table::new(),
    };
    let (records, report) = ipfib_io::read_updates(&args.updates, args.skip_bad_records)?;
    if report.skipped > 0 {
        note!(
            "ipfib: {}: skipped {} bad records (the first: {})",
            args.updates.display(),
            report.skipped,
            report.first_skipped.as_deref().unwrap_or("?")
        );
    }
    let (changes, expected) = stream::plan(&records, &base, &args.peer);
    anyhow::ensure!(
        !changes.is_empty(),
        "{}: no route changes for --peer {} ({} records read)",
        args.updates.display(),
        args.peer,
        records.len()
    );
    let trace = make_trace(&expected, args.count, args.seed);
    note!(
        "ipfib: base {} routes, {} stream records -> {} FIB changes over {:.1} s, final {} routes",
        base.len(),
        records.len(),
        changes.len(),
        changes.last().map_or(0, |c| c.at_us) as f64 / 1e6,
        expected.len()
    );

    let options = LiveOptions::default()
        .with_delay(Duration::from_micros(args.delay_us))
        .with_publish_log(true);
    let live = LiveFib::with_options(&base, args.engine.name(), options)?;
    drop(base);
    let threads = usize::from(args.threads);
    let batch = usize::from(args.batch);

    // "During" covers the replay until its last update is visible.
    let ((submits, rss_first, flushed), mlps_during) =
        load::while_running(&trace, threads, batch, &|| live.reader(), || {
            let (submits, rss_first) = submit(&live, &changes, args.speed);
            (submits, rss_first, live.flush())
        });
    let submits = submits?;
    flushed?;
    let publishes = live.take_publishes();
    let rss_end = rss("VmRSS");
    let Visibility {
        total: visible,
        waiting,
        building,
    } = stream::visibility(&submits, &publishes);

    // "Idle" is the steady state of a table nobody writes to: wait until the rebuilder's
    // compaction and settling steps are done (no new version for a while).
    wait_quiet(&live);

    // Static and idle live alternate over ROUNDS rounds (this machine's speed drifts), each
    // figure the median of its rounds.
    let measure = Duration::from_millis(args.measure_ms) / ROUNDS as u32;
    let fib = Fib::build(&expected, args.engine.name())?;
    let (mut idle, mut stat, mut pinned) = (Vec::new(), Vec::new(), Vec::new());
    let snap = live.snapshot();
    for _ in 0..ROUNDS {
        let sleep = || std::thread::sleep(measure);
        idle.push(load::while_running(&trace, threads, batch, &|| live.reader(), sleep).1);
        stat.push(load::while_running(&trace, threads, batch, &|| Static(&fib), sleep).1);
        let pin = || Pinned(snap.clone());
        pinned.push(load::while_running(&trace, threads, batch, &pin, sleep).1);
    }
    drop((fib, snap));
    let (mlps_idle, mlps_static) = (median(&mut idle), median(&mut stat));
    let mlps_pinned = median(&mut pinned);
    let differ = check::differences(&live, &expected, args.seed)?;

    let pct = |q: f64| percentile(&visible, q);
    let result = json!({
        "updates": changes.len(),
        "publishes": live.publishes(),
        "visible_us_p50": pct(0.50),
        "visible_us_p99": pct(0.99),
        "visible_us_max": visible.last().copied().unwrap_or(0.0),
        "lookup_mlps_static": mlps_static,
        "lookup_mlps_live_idle": mlps_idle,
        "lookup_mlps_during": mlps_during,
        "peak_rss_bytes": rss("VmHWM"),
        "final_check": if differ == 0 { json!("ok") } else { json!(differ) },
        "stream_records": report.records,
        "stream_skipped_records": report.skipped,
        "stream_ignored": report.ignored_by_reason,
    });
    let text = format!(
        "engine {} threads {} batch {} speed {} peer {}\n\
         updates {}  publishes {}  (version {})\n\
         visible us: p50 {:.1}  p99 {:.1}  max {:.1}  (waiting for the rebuilder p50 {:.1} \
         p99 {:.1}, building p50 {:.1} p99 {:.1})\n\
         lookup MLPS: static {:.2}  live idle {:.2} ({:.1} %)  during {:.2}  \
         (live engines on one pinned version, no per-lookup check: {:.2})\n\
         RSS: after first publish {}  end {}  peak {} bytes\n\
         stream: {} records, {} bad records skipped, {} left out ({})\n\
         final check: {}\n",
        args.engine.name(),
        threads,
        batch,
        match args.speed {
            Speed::Max => "max".to_string(),
            Speed::Times(x) => format!("x{x}"),
        },
        args.peer,
        changes.len(),
        live.publishes(),
        live.snapshot().version(),
        pct(0.50),
        pct(0.99),
        visible.last().copied().unwrap_or(0.0),
        percentile(&waiting, 0.50),
        percentile(&waiting, 0.99),
        percentile(&building, 0.50),
        percentile(&building, 0.99),
        mlps_static,
        mlps_idle,
        100.0 * mlps_idle / mlps_static.max(1e-9),
        mlps_during,
        mlps_pinned,
        rss_first,
        rss_end,
        rss("VmHWM"),
        report.records,
        report.skipped,
        report.ignored,
        ignored_text(&report),
        if differ == 0 {
            "ok".to_string()
        } else {
            format!("{differ} addresses differ")
        },
    );
    crate::write_stdout(&text)?;
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&result)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    anyhow::ensure!(
        differ == 0,
        "final check failed: {differ} addresses answer differently from the reference engine"
    );
    // Equal answers can hide a route the stream should have removed (one that a longer or
    // equal route shadows everywhere): the route sets must be equal too.
    let routes = live.table();
    anyhow::ensure!(
        routes == expected,
        "final check failed: the live table holds {} routes, the stream's final set {} \
         (the answers agree)",
        routes.len(),
        expected.len()
    );
    Ok(())
}

/// What the stream reader left out, by reason: `reason N, reason M` (or `none`).
fn ignored_text(report: &ipfib_io::UpdateReport) -> String {
    if report.ignored_by_reason.is_empty() {
        return "none".into();
    }
    let parts: Vec<String> = report
        .ignored_by_reason
        .iter()
        .map(|(why, n)| format!("{why} {n}"))
        .collect();
    parts.join(", ")
}

/// Alternating rounds of the static and idle live measurements.
const ROUNDS: usize = 5;

/// Waits until the live table publishes no new version for [`QUIET`] (compaction and
/// settling finished), at most [`QUIET_MAX`].
fn wait_quiet(live: &LiveFib) {
    let start = Instant::now();
    let mut version = live.snapshot().version();
    while start.elapsed() < QUIET_MAX {
        std::thread::sleep(QUIET);
        let now = live.snapshot().version();
        if now == version {
            return;
        }
        version = now;
    }
}

/// How long without a new version counts as quiet: twice the rebuilder's settling delay.
const QUIET: Duration = Duration::from_millis(100);
/// The longest wait for quiet.
const QUIET_MAX: Duration = Duration::from_secs(5);

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// A matched trace over the final route set, split between the families by route count.
fn make_trace(table: &Table, count: usize, seed: u64) -> Trace {
    let total = table.len().max(1);
    let n4 = count * table.v4().len() / total;
    let n6 = count - n4;
    Trace {
        v4: ipfib_gen::trace(table.v4(), TraceKind::Matched, n4, seed),
        v6: ipfib_gen::trace(table.v6(), TraceKind::Matched, n6, seed),
    }
}

/// Submits the changes at the recorded pace (or at once) with a progress bar. Returns the
/// submissions and the resident set size once the first publish has happened.
fn submit(
    live: &LiveFib,
    changes: &[Timed],
    speed: Speed,
) -> (anyhow::Result<Vec<Submission>>, u64) {
    let bar = crate::bench::progress(changes.len() as u64);
    let mut rss_first = 0;
    let submitted = stream::submit(live, changes, speed, |done| {
        bar.set_position(done as u64);
        if rss_first == 0 && live.publishes() > 0 {
            rss_first = rss("VmRSS");
        }
    });
    bar.finish_and_clear();
    (submitted.map_err(anyhow::Error::from), rss_first)
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    Visibility::percentile(sorted, q)
}
