//! Paired in-process A/B of PlanB's lookups: an older commit's PlanB (`ipfib_old`) against
//! this tree's, on the same table and trace, in alternating rounds (A B A B ...), so the
//! machine's drift hits both alike. Run through `scripts/ab-planb.sh`.
//!
//! Usage: ab-planb FIB [ROUNDS] [TRACE_LEN] [TRACE], TRACE one of `matched` (default),
//! `uniform`, `space`.
//!
//! Both sides are built through their engine registry (`engine::by_name("planb")`, the path
//! `Fib` takes), so the old commit must have one: any commit from the library architecture on
//! (a172211 and later). The batched path is timed as `ipfib bench` times it: raw next hops,
//! 4,096 addresses per call.

use std::time::Instant;

use ipfib::{BuildOptions, RouteTable};
use ipfib_gen::TraceKind;

/// Addresses per batched call, as `ipfib bench` passes them by default.
const CHUNK: usize = 4096;

/// The answer for "no route" in the raw batches.
const MISS: u32 = u32::MAX;

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s[s.len() / 2]
}

/// Lookups per second of `f` over `n` addresses, timed after one untimed pass so each side
/// starts with its own structure in cache (the two structures evict each other otherwise, and
/// the side timed first in a round would pay for it).
fn rate(n: usize, mut f: impl FnMut()) -> f64 {
    f();
    let t = Instant::now();
    f();
    n as f64 / t.elapsed().as_secs_f64() / 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: ab-planb FIB [ROUNDS] [TRACE_LEN] [matched|uniform|space]";
    let path = args.get(1).expect(usage);
    let rounds: usize = args.get(2).map_or(11, |s| s.parse().expect(usage));
    let len: usize = args.get(3).map_or(2_000_000, |s| s.parse().expect(usage));
    let kind: TraceKind = args
        .get(4)
        .map_or(TraceKind::Matched, |s| s.parse().expect(usage));
    let table = ipfib_io::load_fib(path.as_ref(), &ipfib_io::LoadOptions::default()).unwrap();
    let v6 = !table.v6().is_empty();
    println!(
        "{path}: {} routes, IPv{}, {} trace of {len}, {rounds} rounds",
        table.len(),
        if v6 { 6 } else { 4 },
        kind.name()
    );
    if v6 {
        run::<u128>(table.v6(), kind, rounds, len);
    } else {
        run::<u32>(table.v4(), kind, rounds, len);
    }
}

fn run<A>(routes: &RouteTable<A>, kind: TraceKind, rounds: usize, len: usize)
where
    A: ipfib::Address + ipfib_old::Address,
{
    let old_routes: ipfib_old::RouteTable<A> = routes
        .iter()
        .map(|(p, nh)| (ipfib_old::Prefix::new(p.addr(), p.len()).unwrap(), nh))
        .collect();
    let trace = ipfib_gen::trace(routes, kind, len, 1);
    let old = ipfib_old::engine::by_name("planb")
        .unwrap()
        .build(&old_routes, &ipfib_old::BuildOptions::default())
        .unwrap();
    let new = ipfib::engine::by_name("planb")
        .unwrap()
        .build(routes, &BuildOptions::default())
        .unwrap();
    let (mut out_old, mut out_new) = (vec![0u32; trace.len()], vec![0u32; trace.len()]);
    let batch_old = |out: &mut [u32]| {
        for (a, o) in trace.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            old.lookup_batch_raw(a, o, MISS).unwrap();
        }
    };
    let batch_new = |out: &mut [u32]| {
        for (a, o) in trace.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            new.lookup_batch_raw(a, o, MISS).unwrap();
        }
    };
    // The same answers first, batched and single.
    batch_old(&mut out_old);
    batch_new(&mut out_new);
    assert!(out_old == out_new, "old and new PlanB disagree (batched)");
    let singles = trace.len() / 4;
    let single_new = |out: &mut [u32]| {
        for (o, &x) in out[..singles].iter_mut().zip(&trace) {
            *o = new.lookup(x).unwrap_or(MISS);
        }
    };
    let single_old = |out: &mut [u32]| {
        for (o, &x) in out[..singles].iter_mut().zip(&trace) {
            *o = old.lookup(x).unwrap_or(MISS);
        }
    };
    single_new(&mut out_new);
    assert!(out_old == out_new, "old and new PlanB disagree (single)");

    let mut rates = [vec![], vec![], vec![], vec![]];
    let mut ratio = vec![];
    for _ in 0..rounds {
        let a = rate(trace.len(), || batch_old(&mut out_old));
        let b = rate(trace.len(), || batch_new(&mut out_new));
        let c = rate(singles, || single_old(&mut out_old));
        let d = rate(singles, || single_new(&mut out_new));
        for (v, r) in rates.iter_mut().zip([a, b, c, d]) {
            v.push(r);
        }
        ratio.push(b / a);
    }
    let names = [
        "old batch (raw, 4,096 per call)",
        "new batch (raw, 4,096 per call)",
        "old single",
        "new single",
    ];
    for (name, v) in names.iter().zip(&rates) {
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
        println!(
            "{name:<34} median {:>7.1} M/s  (min {lo:.1}, max {hi:.1})",
            median(v)
        );
    }
    let (lo, hi) = ratio
        .iter()
        .fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
    println!(
        "new/old batch ratio per round: median {:.3} (min {lo:.3}, max {hi:.3}), {rounds} rounds",
        median(&ratio)
    );
}
