//! The bench's results: one [`Row`] per engine × path × mode × threads × table, printed as an
//! aligned table on the terminal and written as a JSON array.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::bench::modes::{Mode, Path as LookupPath, RunTime};
use crate::bench::native::NativeInfo;
use crate::bench::summary::{self, Summary};

/// What the table under test was.
#[derive(Clone, Debug, Serialize)]
pub struct TableInfo {
    /// The FIB file, or `generated` for a generated table.
    pub table: String,
    /// `IPv4` or `IPv6`.
    pub family: &'static str,
    /// Routes in the table.
    pub prefixes: usize,
}

/// What the trace was.
#[derive(Clone, Debug, Serialize)]
pub struct TraceInfo {
    /// The generator kind (`matched`, `uniform`) or the trace file.
    pub trace: String,
    /// Addresses in the trace.
    pub trace_len: usize,
    /// Seed of the generated table and trace.
    pub seed: u64,
}

/// One measured combination. Field names are the JSON's.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Engine name.
    pub engine: String,
    /// True for ipfib's own engines, false for the peer crates and comparators.
    pub ours: bool,
    /// `single` or `batch`.
    pub path: LookupPath,
    /// `throughput`, `latency` or `repeated`.
    pub mode: Mode,
    /// Threads looking up concurrently in the one shared engine.
    pub threads: usize,
    /// Million lookups per second, all threads together: the median of the rounds' medians
    /// (each round's median over its runs).
    pub mlps: f64,
    /// The slowest round's median.
    pub mlps_min: f64,
    /// The fastest round's median.
    pub mlps_max: f64,
    /// Each round's median, in round order.
    pub round_mlps: Vec<f64>,
    /// Median per-thread figures (M lookups/s of each thread), thread order.
    pub per_thread_mlps: Vec<f64>,
    /// Nanoseconds one thread spends per lookup (median over rounds of the median run); in
    /// latency mode the latency.
    pub ns_per_lookup: f64,
    /// Lookups each thread made per timed run (the trace, or a prefix of it for slow engines
    /// to keep the run inside the time budget).
    pub lookups_per_run: usize,
    /// Rounds: the whole comparison is repeated this many times, engines alternating.
    pub rounds: usize,
    /// Timed runs per round (after one untimed warm-up run).
    pub runs: usize,
    /// Addresses per call on the batch path.
    pub chunk: usize,
    /// What the timed loop calls: `lookup` on the single path (and in latency mode); on the
    /// batch path `lookup_batch_raw` (ours), `lookup_batch` (comparators without a native
    /// batch), or the comparator's own bulk lookup (`rte_fib6_lookup_bulk`, ...).
    pub call: &'static str,
    /// For a comparator with a native batch (DPDK): the lookup function requested and
    /// selected and the next-hop sizes; `null` otherwise.
    pub native: Option<NativeInfo>,
    /// Cache lines an average lookup of this mode's sequence reads, from the engine's own
    /// model of its structure (`Lookup::lines_per_lookup`); `null` for engines without one.
    pub lines_per_lookup: Option<f64>,
    /// Time to build the engine from the route table, in milliseconds.
    pub build_ms: f64,
    /// Bytes of the lookup structure, as the engine reports it.
    pub bytes: usize,
    /// `bytes / prefixes`.
    pub bytes_per_prefix: f64,
    /// FNV-1a of the engine's answers over the whole sequence, hex; equal for all engines of
    /// one table, trace and mode.
    pub checksum: String,
    /// Table descriptor.
    #[serde(flatten)]
    pub table: TableInfo,
    /// Trace descriptor.
    #[serde(flatten)]
    pub trace: TraceInfo,
    /// CPUs the process was allowed to run on (`taskset`), e.g. `0-1`.
    pub cpus: String,
    /// CPU each benchmark thread was pinned to (empty when unpinned).
    pub pinned: Vec<usize>,
    /// The CPUs the lookups were seen running on (at the end of each timed run).
    pub cpus_used: Vec<usize>,
    /// The conclusion of this row's group (same table, mode, path and threads): the same
    /// object in every row of the group ([`summary`]).
    pub summary: Option<Summary>,
}

/// Median, minimum and maximum of a non-empty list.
pub fn median_min_max(values: &[f64]) -> (f64, f64, f64) {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return (0.0, 0.0, 0.0);
    }
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

fn mlps(lookups: usize, d: Duration) -> f64 {
    let secs = d.as_secs_f64();
    if secs > 0.0 {
        lookups as f64 / secs / 1e6
    } else {
        f64::INFINITY
    }
}

/// The speed figures of a row from its run times: aggregate M lookups/s (median, min, max),
/// each thread's median and the per-thread ns per lookup of the median run.
pub struct Speed {
    /// Median aggregate.
    pub mlps: f64,
    /// Slowest run's aggregate.
    pub min: f64,
    /// Fastest run's aggregate.
    pub max: f64,
    /// Median per thread.
    pub per_thread: Vec<f64>,
    /// Mean thread time per lookup, median over runs.
    pub ns_per_lookup: f64,
    /// Distinct CPUs seen at the ends of the runs.
    pub cpus_used: Vec<usize>,
}

/// Turns run times into speeds; `lookups` is what each thread did per run.
pub fn speed(runs: &[RunTime], lookups: usize) -> Speed {
    let threads = runs.first().map_or(1, |r| r.per_thread.len());
    let aggregate: Vec<f64> = runs
        .iter()
        .map(|r| mlps(lookups * r.per_thread.len(), r.wall))
        .collect();
    let (median, min, max) = median_min_max(&aggregate);
    let per_thread = (0..threads)
        .map(|t| {
            let v: Vec<f64> = runs
                .iter()
                .map(|r| mlps(lookups, r.per_thread[t]))
                .collect();
            median_min_max(&v).0
        })
        .collect();
    let ns: Vec<f64> = runs
        .iter()
        .map(|r| {
            let total: f64 = r.per_thread.iter().map(Duration::as_secs_f64).sum();
            total * 1e9 / (lookups.max(1) * r.per_thread.len().max(1)) as f64
        })
        .collect();
    let mut cpus_used: Vec<usize> = runs
        .iter()
        .flat_map(|r| r.cpus.iter().flatten().copied())
        .collect();
    cpus_used.sort_unstable();
    cpus_used.dedup();
    Speed {
        cpus_used,
        mlps: median,
        min,
        max,
        per_thread,
        ns_per_lookup: median_min_max(&ns).0,
    }
}

/// The figures of several rounds in one: the median of the round medians, the spread (slowest
/// and fastest round), each thread's median, the median ns per lookup and every CPU seen.
pub fn over_rounds(rounds: &[Speed]) -> Speed {
    let medians: Vec<f64> = rounds.iter().map(|s| s.mlps).collect();
    let (mlps, min, max) = median_min_max(&medians);
    let threads = rounds.first().map_or(0, |s| s.per_thread.len());
    let per_thread = (0..threads)
        .map(|t| {
            let v: Vec<f64> = rounds.iter().map(|s| s.per_thread[t]).collect();
            median_min_max(&v).0
        })
        .collect();
    let ns: Vec<f64> = rounds.iter().map(|s| s.ns_per_lookup).collect();
    let mut cpus_used: Vec<usize> = rounds.iter().flat_map(|s| s.cpus_used.clone()).collect();
    cpus_used.sort_unstable();
    cpus_used.dedup();
    Speed {
        mlps,
        min,
        max,
        per_thread,
        ns_per_lookup: median_min_max(&ns).0,
        cpus_used,
    }
}

fn human_bytes(b: usize) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if b as f64 >= MIB {
        format!("{:.1} MiB", b as f64 / MIB)
    } else {
        format!("{:.1} KiB", b as f64 / 1024.0)
    }
}

/// What each column of the terminal table means (in `ipfib bench --help`).
pub const COLUMNS: &str = "\
Columns of the table (the JSON has the same figures, field names in brackets):
  engine          ipfib's engines, then the peers; `*`: timed on a prefix of the trace
                  (--run-budget-ms), answers still checked on the whole trace
  path            single: one lookup call per address; batch: one call per --chunk addresses
  mode            throughput, latency or repeated (see --mode)
  thr             threads looking up in the one shared engine [threads]
  MLPS            million lookups per second, all threads together: the median of the
                  rounds' medians [mlps]
  rounds min-max  the slowest and the fastest round's median [mlps_min, mlps_max]
  per round       each round's median, in round order [round_mlps]
  ns/lookup       nanoseconds one thread spends per lookup; in latency mode the latency
                  [ns_per_lookup]
  vs planb        MLPS over planb's on the same path, mode and threads
  build ms        time to build the engine from the route table [build_ms]
  memory          bytes of the lookup structure, as the engine reports it [bytes]
  B/prefix        memory per route of the table [bytes_per_prefix]
  lines           cache lines an average lookup reads, by the engine's own model of its
                  structure; `-` for engines without one [lines_per_lookup]
  native          for DPDK: the lookup function it selected and its next-hop entry size
                  (`4K`: on 4 KiB pages, not huge pages); `-` for the others [native]
  checksum        FNV-1a-64 of the answers; equal for all engines of one mode [checksum]
  cpu             the CPU numbers (as taskset and /proc/cpuinfo count them) that the timed
                  lookups were seen running on at the end of each run: one number when the
                  thread stayed put, several when it migrated (pin with taskset) [cpus_used]

After the table, one line per mode, path and threads: the winner, its ratio to the runner-up,
to the best peer (a comparator that is not ipfib's: prefix-trie, ip_network_table, DPDK's) and,
when a peer wins, to ipfib's best, and the CPU's model name [summary].";

/// The line that says what a group of rows measured.
fn describe(r: &Row) -> String {
    format!(
        "{} table {} ({} prefixes) | trace {} ({} addresses, seed {}) | {} rounds of {} runs \
         after 1 warm-up per engine, batch chunk {} | CPUs allowed {}",
        r.table.family,
        r.table.table,
        r.table.prefixes,
        r.trace.trace,
        r.trace.trace_len,
        r.trace.seed,
        r.rounds,
        r.runs,
        r.chunk,
        r.cpus
    )
}

/// The terminal table: per table a line describing it, then one line per row, columns aligned,
/// grouped by mode and threads, with each engine's speed relative to `planb` on the same path,
/// mode and threads, then the table's summary lines (one per mode, path and threads, see
/// [`summary::line`]). The columns are explained in [`COLUMNS`]. MLPS is the median of the rounds' medians, `rounds min-max` their spread,
/// `per round` each round's median; `lines` the cache lines an average lookup reads by the
/// engine's own model (`-` without one); `native` the lookup function a native comparator
/// selected and its next-hop entry size.
pub fn render(rows: &[Row]) -> String {
    // (title, left-aligned)
    let columns = [
        ("engine", true),
        ("path", true),
        ("mode", true),
        ("thr", false),
        ("MLPS", false),
        ("rounds min-max", false),
        ("per round", false),
        ("ns/lookup", false),
        ("vs planb", false),
        ("build ms", false),
        ("memory", false),
        ("B/prefix", false),
        ("lines", false),
        ("native", true),
        ("checksum", true),
        ("cpu", true),
    ];
    let header: Vec<&str> = columns.iter().map(|c| c.0).collect();
    let mut lines: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    let mut sliced = false;
    for r in rows {
        let planb = rows.iter().find(|o| {
            o.engine == "planb"
                && o.path == r.path
                && o.mode == r.mode
                && o.threads == r.threads
                && o.table.prefixes == r.table.prefixes
                && o.table.table == r.table.table
        });
        let rel = planb.map_or_else(|| "-".to_string(), |p| format!("{:.2}x", r.mlps / p.mlps));
        let mut engine = r.engine.clone();
        if r.lookups_per_run < r.trace.trace_len {
            engine.push('*');
            sliced = true;
        }
        let cpus: Vec<String> = r.cpus_used.iter().map(|c| c.to_string()).collect();
        lines.push(vec![
            engine,
            r.path.name().into(),
            r.mode.name().into(),
            r.threads.to_string(),
            format!("{:.2}", r.mlps),
            format!("{:.2}-{:.2}", r.mlps_min, r.mlps_max),
            r.round_mlps
                .iter()
                .map(|m| format!("{m:.1}"))
                .collect::<Vec<_>>()
                .join(" "),
            format!("{:.1}", r.ns_per_lookup),
            rel,
            format!("{:.1}", r.build_ms),
            human_bytes(r.bytes),
            format!("{:.1}", r.bytes_per_prefix),
            r.lines_per_lookup
                .map_or_else(|| "-".into(), |l| format!("{l:.2}")),
            r.native
                .as_ref()
                .map_or_else(|| "-".into(), NativeInfo::short),
            r.checksum.clone(),
            cpus.join(","),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let format_line = |l: &[String]| {
        let cells: Vec<String> = l
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, w))| {
                if columns[c].1 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        cells.join("  ").trim_end().to_string()
    };
    let mut out = String::new();
    let mut last_table = None;
    let mut last_group = None;
    for (i, (r, l)) in rows.iter().zip(&lines[1..]).enumerate() {
        let table = (r.table.table.clone(), r.table.prefixes);
        if last_table.as_ref() != Some(&table) {
            if last_table.is_some() {
                summaries(&mut out, &rows[..i], &table);
                out.push('\n');
            }
            let _ = writeln!(out, "{}", describe(r));
            let _ = writeln!(out, "{}", format_line(&lines[0]));
            last_table = Some(table);
            last_group = None;
        }
        let group = (r.mode, r.threads);
        if last_group.is_some_and(|g| g != group) {
            out.push('\n');
        }
        last_group = Some(group);
        let _ = writeln!(out, "{}", format_line(l));
    }
    if let Some(table) = &last_table {
        summaries(&mut out, rows, table);
    }
    if sliced {
        let _ = writeln!(
            out,
            "* timed on the first lookups_per_run addresses to stay within --run-budget-ms \
             (answers checked on the whole trace)"
        );
    }
    out
}

/// Appends the summary lines of the rows of `table` (file, prefixes), after a blank line, one
/// per mode, path and threads in the order the rows have them.
fn summaries(out: &mut String, rows: &[Row], table: &(String, usize)) {
    let mut seen: Vec<&Summary> = Vec::new();
    for r in rows {
        if (&r.table.table, r.table.prefixes) != (&table.0, table.1) {
            continue;
        }
        if let Some(s) = &r.summary {
            if !seen
                .iter()
                .any(|o| (o.mode, o.path, o.threads) == (s.mode, s.path, s.threads))
            {
                seen.push(s);
            }
        }
    }
    if !seen.is_empty() {
        out.push('\n');
    }
    for s in seen {
        let _ = writeln!(out, "{}", summary::line(s));
    }
}

/// Writes the rows as a pretty JSON array.
pub fn write_json(path: &Path, rows: &[Row]) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(rows)?;
    std::fs::write(path, text + "\n")
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_unsorted() {
        assert_eq!(median_min_max(&[3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(median_min_max(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.0, 4.0));
        assert_eq!(median_min_max(&[7.0]), (7.0, 7.0, 7.0));
    }

    #[test]
    fn speeds_from_run_times() {
        let ms = Duration::from_millis;
        // 1 M lookups per thread; two threads; runs of 100 ms, 200 ms and 50 ms wall.
        let runs = vec![
            RunTime {
                wall: ms(100),
                per_thread: vec![ms(100), ms(50)],
                cpus: vec![Some(0), Some(1)],
            },
            RunTime {
                wall: ms(200),
                per_thread: vec![ms(200), ms(100)],
                cpus: vec![Some(1), None],
            },
            RunTime {
                wall: ms(50),
                per_thread: vec![ms(50), ms(25)],
                cpus: vec![Some(1), Some(0)],
            },
        ];
        let s = speed(&runs, 1_000_000);
        // Aggregates: 2 M / 0.1 s = 20, 10, 40 M lookups/s.
        assert!((s.mlps - 20.0).abs() < 1e-9);
        assert!((s.min - 10.0).abs() < 1e-9 && (s.max - 40.0).abs() < 1e-9);
        assert!((s.per_thread[0] - 10.0).abs() < 1e-9);
        assert!((s.per_thread[1] - 20.0).abs() < 1e-9);
        // Mean thread time per lookup: (100 + 50) ms / 2 M = 75 ns, (300/2M=150), 37.5 → 75.
        assert!((s.ns_per_lookup - 75.0).abs() < 1e-9, "{}", s.ns_per_lookup);
        assert_eq!(s.cpus_used, vec![0, 1]);
    }

    #[test]
    fn rounds_combine_into_the_median_of_medians_and_their_spread() {
        let round = |mlps: f64, cpu: usize| Speed {
            mlps,
            min: mlps - 1.0,
            max: mlps + 1.0,
            per_thread: vec![mlps / 2.0, mlps / 2.0],
            ns_per_lookup: 1e3 / mlps,
            cpus_used: vec![cpu],
        };
        let s = over_rounds(&[round(100.0, 1), round(80.0, 0), round(120.0, 1)]);
        assert_eq!((s.mlps, s.min, s.max), (100.0, 80.0, 120.0));
        assert_eq!(s.per_thread, vec![50.0, 50.0]);
        assert!((s.ns_per_lookup - 10.0).abs() < 1e-9);
        assert_eq!(s.cpus_used, vec![0, 1]);
    }
}
