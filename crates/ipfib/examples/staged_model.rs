//! How much of a trace could the staged tables answer? A model for choosing PlanB's
//! sub-tables (`engine::planb::staged`), not a lookup: for each address of an IPv6 trace it
//! asks whether one answer covers its whole block of `/16 + b` bits (no interval boundary
//! inside), the block a sub-table of width `b` would answer from one entry.
//!
//! `cargo run --release -p ipfib --example staged_model -- FILE [TRACE] [BUDGET]` prints the
//! share of the trace (`uniform` by default, or `matched` / `space`) answered at each block
//! width, by sub-tables of one width in every chunk, and by the widths a greedy choice gives
//! within `BUDGET` bytes (default 64 KiB), choosing by this trace's addresses (the engine
//! chooses by routed address space, which the uniform trace samples).

use std::collections::BTreeMap;

use ipfib::Intervals;
use ipfib_gen::TraceKind;

/// Widths (bits below the /16) a sub-table may have: every other one of the engine's 2 to
/// 14, to keep the model quick.
const WIDTHS: [u32; 7] = [2, 4, 6, 8, 10, 12, 14];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: staged_model FILE [TRACE] [BUDGET]")?;
    let kind = match args.next().as_deref() {
        None | Some("uniform") => TraceKind::Uniform,
        Some("matched") => TraceKind::Matched,
        Some("space") => TraceKind::Space,
        Some(other) => return Err(format!("unknown trace {other}").into()),
    };
    let budget: usize = args.next().map_or(Ok(64 << 10), |b| b.parse())?;
    let table = ipfib_io::load_fib(path.as_ref(), &ipfib_io::LoadOptions::default())?;
    let table = table.v6();
    let intervals = Intervals::from_table(table);
    let starts = intervals.starts();
    let trace = ipfib_gen::trace(table, kind, 200_000, 1);
    // Whether one answer covers the /`bits` block holding `a`: no interval starts inside it.
    let single = |a: u128, bits: u32| {
        let first = a & !(u128::MAX >> bits);
        let last = a | (u128::MAX >> bits);
        let next = starts.partition_point(|&s| s <= first);
        starts.get(next).is_none_or(|&s| s > last)
    };
    let share = |n: usize| 100.0 * n as f64 / trace.len() as f64;
    println!("{} prefixes, {} addresses", table.len(), trace.len());
    for bits in [16, 20, 24, 28, 32, 40, 48] {
        let n = trace.iter().filter(|&&a| single(a, bits)).count();
        println!("/{bits} blocks with one answer: {:.1} %", share(n));
    }
    // Addresses in chunks one answer does not cover, by chunk.
    let mut walked: BTreeMap<u16, Vec<u128>> = BTreeMap::new();
    for &a in trace.iter().filter(|&&a| !single(a, 16)) {
        walked.entry((a >> 112) as u16).or_default().push(a);
    }
    let direct = trace.len() - walked.values().map(Vec::len).sum::<usize>();
    // Per chunk and width: its addresses a sub-table of that width answers.
    let answered: BTreeMap<u16, Vec<usize>> = walked
        .iter()
        .map(|(&c, v)| {
            let per_width = WIDTHS.map(|b| v.iter().filter(|&&a| single(a, 16 + b)).count());
            (c, per_width.to_vec())
        })
        .collect();
    for (w, b) in WIDTHS.iter().enumerate() {
        let n: usize = answered.values().map(|v| v[w]).sum();
        let kib = answered.len() * (4 << b) / 1024;
        println!(
            "width {b} in all {} chunks: {:.1} % ({kib} KiB)",
            answered.len(),
            share(direct + n)
        );
    }
    // Greedy, as the engine: the widening with the most answered addresses per byte.
    let mut width: BTreeMap<u16, usize> = BTreeMap::new();
    let mut used = 0;
    loop {
        let mut best: Option<(f64, u16, usize, usize)> = None;
        for (&c, v) in &answered {
            let now = width.get(&c).copied();
            let (have, bytes) = now.map_or((0, 0), |w| (v[w], 4 << WIDTHS[w]));
            for w in now.map_or(0, |w| w + 1)..WIDTHS.len() {
                let added = (4 << WIDTHS[w]) - bytes;
                if v[w] > have && used + added <= budget {
                    let gain = (v[w] - have) as f64 / added as f64;
                    if best.is_none_or(|b| gain > b.0) {
                        best = Some((gain, c, w, added));
                    }
                }
            }
        }
        let Some((_, c, w, added)) = best else { break };
        width.insert(c, w);
        used += added;
    }
    let n: usize = width.iter().map(|(c, &w)| answered[c][w]).sum();
    println!(
        "greedy within {} KiB: {:.1} % answered, {} KiB in {} sub-tables",
        budget >> 10,
        share(direct + n),
        used >> 10,
        width.len()
    );
    Ok(())
}
