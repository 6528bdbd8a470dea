//! The rows of `ipfib bench-ops`: per structure and operation the median of the rounds and
//! their spread, as a terminal table and as JSON.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::structures::{Measured, Op};

/// One structure × operation.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The table.
    pub table: String,
    /// Its family.
    pub family: &'static str,
    /// Its routes.
    pub prefixes: usize,
    /// The structure.
    pub structure: &'static str,
    /// The operation (`None` with `skipped` when the structure could not run).
    pub op: Option<Op>,
    /// Operations timed per round.
    pub count: usize,
    /// Median time per operation over the rounds, ns (a whole table for `free`).
    pub ns_per_op: f64,
    /// Fastest and slowest round, ns per operation.
    pub ns_min: f64,
    /// Slowest round.
    pub ns_max: f64,
    /// Median operations per second, millions.
    pub mops: f64,
    /// Rounds measured.
    pub rounds: usize,
    /// Why the row (or a part of it) was not measured.
    pub skipped: Option<String>,
}

/// The rows of one structure from its rounds.
pub fn rows(
    table: &str,
    family: &'static str,
    prefixes: usize,
    structure: &'static str,
    rounds: &[Vec<Measured>],
    skipped: Option<String>,
) -> Vec<Row> {
    let mut out = Vec::new();
    for op in [Op::Insert, Op::Lookup, Op::Update, Op::Delete, Op::Free] {
        let per: Vec<(usize, f64)> = rounds
            .iter()
            .filter_map(|r| r.iter().find(|m| m.op == op))
            .map(|m| (m.count, m.time.as_secs_f64() * 1e9 / m.count.max(1) as f64))
            .collect();
        if per.is_empty() {
            continue;
        }
        let mut ns: Vec<f64> = per.iter().map(|p| p.1).collect();
        ns.sort_by(f64::total_cmp);
        let median = if ns.len() % 2 == 1 {
            ns[ns.len() / 2]
        } else {
            (ns[ns.len() / 2 - 1] + ns[ns.len() / 2]) / 2.0
        };
        out.push(Row {
            table: table.into(),
            family,
            prefixes,
            structure,
            op: Some(op),
            count: per[0].0,
            ns_per_op: median,
            ns_min: ns[0],
            ns_max: ns[ns.len() - 1],
            mops: 1e3 / median,
            rounds: per.len(),
            skipped: None,
        });
    }
    if let Some(why) = skipped {
        out.push(Row {
            table: table.into(),
            family,
            prefixes,
            structure,
            op: None,
            count: 0,
            ns_per_op: 0.0,
            ns_min: 0.0,
            ns_max: 0.0,
            mops: 0.0,
            rounds: 0,
            skipped: Some(why),
        });
    }
    out
}

fn rate(per_second: f64) -> String {
    match per_second {
        r if r >= 1e6 => format!("{:.2} M/s", r / 1e6),
        r if r >= 1e3 => format!("{:.2} K/s", r / 1e3),
        r => format!("{r:.1} /s"),
    }
}

fn time(ns: f64) -> String {
    match ns {
        n if n >= 1e6 => format!("{:.2} ms", n / 1e6),
        n if n >= 1e3 => format!("{:.2} µs", n / 1e3),
        n => format!("{n:.1} ns"),
    }
}

/// The terminal table.
pub fn render(name: &str, rows: &[Row]) -> String {
    let mut s = String::new();
    if let Some(r) = rows.first() {
        let _ = writeln!(s, "{name}: {} {} routes", r.prefixes, r.family);
    }
    let _ = writeln!(
        s,
        "{:<20} {:<7} {:>9} {:>12} {:>10} {:>23}",
        "structure", "op", "count", "per op", "ops", "rounds min-max"
    );
    for r in rows {
        match (r.op, &r.skipped) {
            (Some(op), _) => {
                let rate = if op == Op::Free {
                    "-".to_string()
                } else {
                    rate(r.mops * 1e6)
                };
                let _ = writeln!(
                    s,
                    "{:<20} {:<7} {:>9} {:>12} {:>10} {:>23}",
                    r.structure,
                    op.name(),
                    r.count,
                    time(r.ns_per_op),
                    rate,
                    format!("{}-{}", time(r.ns_min), time(r.ns_max))
                );
            }
            (None, Some(why)) => {
                let _ = writeln!(s, "{:<20} skipped: {why}", r.structure);
            }
            (None, None) => {}
        }
    }
    s
}

/// Writes the rows as a JSON array.
pub fn write_json(path: &Path, rows: &[Row]) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(rows)?;
    std::fs::write(path, text + "\n")
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))
}
