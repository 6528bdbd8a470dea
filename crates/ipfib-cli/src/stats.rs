//! `ipfib stats`: what a FIB looks like and what the chosen engine makes of it.
//!
//! Per family: routes, the prefix-length histogram (non-empty lengths only), the number of
//! merged elementary intervals, and for the engine its build time, size and size per prefix.
//! PlanB adds its depth (dependent steps of a lookup), the SIMD node search chosen at run time,
//! tree nodes, IPv6 second-stage cells and distinct answers; the reference engine the number of
//! prefix lengths a lookup may probe. The numbers explain a benchmark result: depth and bytes
//! per prefix are what a lookup's cache misses follow from.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use ipfib::engine::planb::layout::Family;
use ipfib::{EngineKind, Intervals, Lpm, PlanB, Reference, RouteTable};
use serde_json::{json, Value};

use crate::fib_args::FibArgs;

/// Arguments of `ipfib stats`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    fib: FibArgs,
    /// Engine to build and describe (planb or reference).
    #[arg(long, value_name = "ENGINE", default_value = "planb")]
    engine: EngineKind,
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
    engine: EngineStats,
}

/// What was measured for the engine of one family.
struct EngineStats {
    build: Duration,
    bytes: usize,
    /// PlanB only: tree levels a lookup walks.
    depth: Option<usize>,
    /// PlanB only: the node-search backend.
    backend: Option<&'static str>,
    /// PlanB only: cache-line tree nodes.
    nodes: Option<usize>,
    /// PlanB only: IPv6 /48 cells resolved by the second stage.
    fallback_cells: Option<usize>,
    /// PlanB only: distinct answers (including "no route").
    results: Option<usize>,
    /// Reference only: prefix lengths a lookup probes at worst.
    max_probes: Option<usize>,
}

impl FamilyStats {
    fn measure<A: Family>(table: &RouteTable<A>, kind: EngineKind) -> Self {
        let lengths = table.length_histogram();
        let histogram: Vec<(u8, usize)> =
            (0..=A::BITS).zip(lengths).filter(|&(_, n)| n > 0).collect();
        let (intervals, engine) = match kind {
            EngineKind::PlanB => {
                let start = Instant::now();
                let planb = PlanB::build(table);
                let build = start.elapsed();
                let s = planb.stats();
                let engine = EngineStats {
                    build,
                    bytes: s.bytes,
                    depth: Some(s.depth),
                    backend: Some(s.backend),
                    nodes: Some(s.nodes),
                    fallback_cells: Some(s.fallback_cells),
                    results: Some(s.results),
                    max_probes: None,
                };
                (s.intervals, engine)
            }
            EngineKind::Reference => {
                let start = Instant::now();
                let reference = Reference::build(table);
                let build = start.elapsed();
                let engine = EngineStats {
                    build,
                    bytes: reference.memory_bytes(),
                    depth: None,
                    backend: None,
                    nodes: None,
                    fallback_cells: None,
                    results: None,
                    max_probes: Some(histogram.len()),
                };
                (Intervals::from_table(table).len(), engine)
            }
        };
        FamilyStats {
            family: A::FAMILY,
            routes: table.len(),
            histogram,
            intervals,
            engine,
        }
    }

    /// Bytes of the engine per route, undefined for an empty table.
    fn bytes_per_prefix(&self) -> Option<f64> {
        (self.routes > 0).then(|| self.engine.bytes as f64 / self.routes as f64)
    }

    fn to_json(&self) -> Value {
        let histogram: Vec<Value> = self
            .histogram
            .iter()
            .map(|&(len, n)| json!({ "length": len, "routes": n }))
            .collect();
        let e = &self.engine;
        json!({
            "family": self.family,
            "routes": self.routes,
            "prefix_lengths": histogram,
            "intervals": self.intervals,
            "build_ms": e.build.as_secs_f64() * 1e3,
            "bytes": e.bytes,
            "bytes_per_prefix": self.bytes_per_prefix(),
            "depth": e.depth,
            "backend": e.backend,
            "nodes": e.nodes,
            "fallback_cells": e.fallback_cells,
            "results": e.results,
            "max_probes": e.max_probes,
        })
    }

    fn to_text(&self, out: &mut String) {
        let e = &self.engine;
        let row = |out: &mut String, label: &str, value: &str| {
            let _ = writeln!(out, "  {label:<18}{value}");
        };
        let _ = writeln!(out, "{}", self.family);
        row(out, "routes", &self.routes.to_string());
        row(out, "intervals", &self.intervals.to_string());
        if let Some(depth) = e.depth {
            row(out, "tree depth", &depth.to_string());
        }
        if let Some(probes) = e.max_probes {
            row(out, "max probes", &probes.to_string());
        }
        if let Some(backend) = e.backend {
            row(out, "node search", backend);
        }
        if let Some(nodes) = e.nodes {
            row(out, "tree nodes", &nodes.to_string());
        }
        if let Some(cells) = e.fallback_cells.filter(|&c| c > 0) {
            row(out, "fallback cells", &cells.to_string());
        }
        if let Some(results) = e.results {
            row(out, "distinct results", &results.to_string());
        }
        let mib = e.bytes as f64 / (1024.0 * 1024.0);
        row(out, "bytes", &format!("{} ({mib:.2} MiB)", e.bytes));
        let per_prefix = self
            .bytes_per_prefix()
            .map_or_else(|| "-".to_string(), |b| format!("{b:.2}"));
        row(out, "bytes per prefix", &per_prefix);
        let ms = e.build.as_secs_f64() * 1e3;
        row(out, "build time", &format!("{ms:.1} ms"));
        if self.histogram.is_empty() {
            row(out, "prefix lengths", "(no routes)");
            return;
        }
        row(out, "prefix lengths", "length    routes   share");
        for &(len, n) in &self.histogram {
            let share = 100.0 * n as f64 / self.routes as f64;
            let _ = writeln!(
                out,
                "  {:<18}{:>6} {n:>9} {share:>6.2}%",
                "",
                format!("/{len}")
            );
        }
    }
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<()> {
    let start = Instant::now();
    let fib = args.fib.load()?;
    let load = start.elapsed();
    let families = [
        FamilyStats::measure(&fib.v4, args.engine),
        FamilyStats::measure(&fib.v6, args.engine),
    ];
    let report = if args.json {
        let value = json!({
            "fib": args.fib.fib.display().to_string(),
            "routes": fib.len(),
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
            fib.len(),
            fib.v4.len(),
            fib.v6.len(),
            load.as_secs_f64() * 1e3,
            args.engine
        );
        for f in &families {
            out.push('\n');
            f.to_text(&mut out);
        }
        out
    };
    use std::io::Write;
    std::io::stdout().lock().write_all(report.as_bytes())?;
    Ok(())
}
