//! `ipfib stats`: what a FIB looks like and what the chosen engine makes of it.
//!
//! Per family: routes, the prefix-length histogram (non-empty lengths only), the number of
//! merged elementary intervals, the engine's build time, size and size per prefix, and then
//! whatever the engine reports about its own shape ([`ipfib::Lookup::describe`]: PlanB its
//! depth, node search and node counts; the reference engine its probe count; ...). The
//! numbers explain a benchmark result: depth and bytes per prefix are what a lookup's cache
//! misses follow from. Engines that model their own structure also report the cache lines an
//! average lookup of a batch reads ([`ipfib::Lookup::lines_per_lookup`]) on generated matched
//! and uniform traces of [`TRACE_LEN`] addresses (seed 1), the figure that bounds throughput
//! on this machine (see `../shared/PERF-FACTS.md`), and how those lines split over the steps
//! of a lookup ([`ipfib::Lookup::lines_by_step`]).
//!
//! A family without routes is not built: the text report has no section for it (the first
//! line still counts its routes, 0), and the JSON keeps its object, in its place, with the
//! table's keys (`family`, `routes` 0, `prefix_lengths` empty, `intervals` 1) and
//! `"empty": true` but no engine figures (no build time, bytes or engine details), so that
//! `families[0]` is always IPv4 and `families[1]` IPv6.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use ipfib::engine::{Detail, DetailValue, EngineInfo};
use ipfib::{Address, BuildOptions, Intervals, RouteTable};
use serde_json::{json, Map, Value};

use crate::detail_label;
use crate::fib_args::FibArgs;

/// Addresses of the generated traces `lines_per_lookup` is averaged over.
const TRACE_LEN: usize = 100_000;

/// Arguments of `ipfib stats`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    fib: FibArgs,
    /// Engine to build and describe.
    #[arg(long, value_name = "ENGINE", default_value = "planb", value_parser = crate::engine_arg::Engines)]
    engine: &'static EngineInfo,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

/// What was measured for one family.
struct FamilyStats {
    family: &'static str,
    routes: usize,
    /// `(length, routes)` for every length that has routes, ascending.
    histogram: Vec<(u8, usize)>,
    intervals: usize,
    /// The engine built from the family's routes; `None` for a family without routes.
    engine: Option<EngineStats>,
}

/// What was measured of the engine built for one family.
struct EngineStats {
    build: Duration,
    bytes: usize,
    details: Vec<Detail>,
    /// For each trace kind the engine models: its name and the lines per step of a lookup
    /// ([`ipfib::Lookup::lines_by_step`]).
    steps: Vec<(&'static str, Vec<(String, f64)>)>,
}

impl FamilyStats {
    fn measure<A: Address>(table: &RouteTable<A>, engine: &EngineInfo) -> anyhow::Result<Self> {
        let lengths = table.length_histogram();
        let histogram: Vec<(u8, usize)> =
            (0..=A::BITS).zip(lengths).filter(|&(_, n)| n > 0).collect();
        let engine = if table.is_empty() {
            None
        } else {
            Some(EngineStats::measure(table, engine)?)
        };
        Ok(FamilyStats {
            family: A::FAMILY,
            routes: table.len(),
            histogram,
            intervals: Intervals::from_table(table).len(),
            engine,
        })
    }
}

impl EngineStats {
    /// Builds `engine` from a non-empty table and measures it.
    fn measure<A: Address>(table: &RouteTable<A>, engine: &EngineInfo) -> anyhow::Result<Self> {
        let start = Instant::now();
        let built = engine.build(table, &BuildOptions::default())?;
        let build = start.elapsed();
        let mut details: Vec<Detail> = built
            .describe()
            .into_iter()
            // "intervals" is a property of the table, shown for every engine above.
            .filter(|d| d.name != "intervals")
            .collect();
        let mut steps = Vec::new();
        for (kind, name) in [
            (ipfib_gen::TraceKind::Matched, "lines_per_lookup_matched"),
            (ipfib_gen::TraceKind::Uniform, "lines_per_lookup_uniform"),
        ] {
            let trace = ipfib_gen::trace(table, kind, TRACE_LEN, 1);
            if let Some(lines) = built.lines_per_lookup(&trace) {
                details.push(Detail::ratio(name, lines));
            }
            let by_step = built.lines_by_step(&trace);
            if !by_step.is_empty() {
                steps.push((kind.name(), by_step));
            }
        }
        Ok(EngineStats {
            build,
            bytes: built.memory_bytes(),
            details,
            steps,
        })
    }
}

impl FamilyStats {
    fn to_json(&self) -> Value {
        let histogram: Vec<Value> = self
            .histogram
            .iter()
            .map(|&(len, n)| json!({ "length": len, "routes": n }))
            .collect();
        let mut object = Map::new();
        object.insert("family".into(), json!(self.family));
        object.insert("routes".into(), json!(self.routes));
        object.insert("empty".into(), json!(self.engine.is_none()));
        object.insert("prefix_lengths".into(), json!(histogram));
        object.insert("intervals".into(), json!(self.intervals));
        if let Some(engine) = &self.engine {
            engine.add_json(&mut object, self.routes);
        }
        Value::Object(object)
    }

    /// The family's section of the text report (a family with routes).
    fn to_text(&self, out: &mut String) {
        let _ = writeln!(out, "{}", self.family);
        row(out, "routes", &self.routes.to_string());
        row(out, "intervals", &self.intervals.to_string());
        if let Some(engine) = &self.engine {
            engine.add_text(out, self.routes);
        }
        if self.histogram.is_empty() {
            row(out, "prefix lengths", "(no routes)");
            return;
        }
        row(out, "prefix lengths", "length    routes   share");
        for &(len, n) in &self.histogram {
            let share = 100.0 * n as f64 / self.routes as f64;
            let _ = writeln!(
                out,
                "  {:<LABEL_WIDTH$}{:>6} {n:>9} {share:>6.2}%",
                "",
                format!("/{len}")
            );
        }
    }
}

/// Characters of the label column of the text report (the longest label and a space).
const LABEL_WIDTH: usize = 28;

/// One `label value` line of the text report.
fn row(out: &mut String, label: &str, value: &str) {
    let _ = writeln!(out, "  {label:<LABEL_WIDTH$}{value}");
}

impl EngineStats {
    /// Bytes of the engine per route of a table of `routes` (at least one).
    fn bytes_per_prefix(&self, routes: usize) -> f64 {
        self.bytes as f64 / routes.max(1) as f64
    }

    fn add_json(&self, object: &mut Map<String, Value>, routes: usize) {
        object.insert("build_ms".into(), json!(self.build.as_secs_f64() * 1e3));
        object.insert("bytes".into(), json!(self.bytes));
        object.insert(
            "bytes_per_prefix".into(),
            json!(self.bytes_per_prefix(routes)),
        );
        for d in &self.details {
            let value = match &d.value {
                DetailValue::Count(n) | DetailValue::Bytes(n) => json!(n),
                DetailValue::Text(s) => json!(s),
                DetailValue::Ratio(x) => json!(x),
                other => json!(other.to_string()),
            };
            object.insert(d.name.into(), value);
        }
        for (kind, by_step) in &self.steps {
            let steps: Vec<Value> = by_step
                .iter()
                .map(|(step, lines)| json!({ "step": step, "lines": lines }))
                .collect();
            object.insert(format!("lines_by_step_{kind}"), json!(steps));
        }
    }

    fn add_text(&self, out: &mut String, routes: usize) {
        for d in &self.details {
            row(out, &detail_label::of(d.name), &d.value.to_string());
        }
        for (kind, by_step) in &self.steps {
            let steps: Vec<String> = by_step
                .iter()
                .map(|(step, lines)| format!("{step} {lines:.3}"))
                .collect();
            row(out, &format!("lines by step {kind}"), &steps.join(", "));
        }
        let mib = self.bytes as f64 / (1024.0 * 1024.0);
        row(out, "bytes", &format!("{} ({mib:.2} MiB)", self.bytes));
        let per_prefix = format!("{:.2}", self.bytes_per_prefix(routes));
        row(out, "bytes per prefix", &per_prefix);
        let ms = self.build.as_secs_f64() * 1e3;
        row(out, "build time", &format!("{ms:.1} ms"));
    }
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<()> {
    let start = Instant::now();
    let table = args.fib.load()?;
    let load = start.elapsed();
    let families = [
        FamilyStats::measure(table.v4(), args.engine)?,
        FamilyStats::measure(table.v6(), args.engine)?,
    ];
    let report = if args.json {
        let value = json!({
            "fib": args.fib.fib.display().to_string(),
            "routes": table.len(),
            "load_ms": load.as_secs_f64() * 1e3,
            "engine": args.engine.name(),
            "families": families.iter().map(FamilyStats::to_json).collect::<Vec<_>>(),
        });
        format!("{}\n", serde_json::to_string_pretty(&value)?)
    } else {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}: {} routes ({} IPv4, {} IPv6), loaded in {:.1} ms; engine {}",
            args.fib.fib.display(),
            table.len(),
            table.v4().len(),
            table.v6().len(),
            load.as_secs_f64() * 1e3,
            args.engine.name()
        );
        // Only the families the table has (the first line counts both).
        for f in families.iter().filter(|f| f.routes > 0) {
            out.push('\n');
            f.to_text(&mut out);
        }
        out
    };
    crate::write_stdout(&report)
}
