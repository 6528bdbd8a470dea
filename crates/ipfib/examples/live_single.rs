//! Single lookups through a live table's reader handle against the static engine, on the same
//! table and trace, in alternating rounds (medians): what `lookup_mlps_live_idle /
//! lookup_mlps_static` of `ipfib replay` measures, without the replay around it. A second static
//! build of the same table is timed too, so placement and noise show up as its ratio. Each
//! timed pass follows an untimed one over the same engine (warm caches: the engines are
//! different memory, and the first pass after a switch would otherwise pay the misses).
//! With `CHANGES` > 0 that many route changes are applied to the live table first and it is
//! left to settle (2 s), so the live engine is a rebuilt and compacted one, as after a replay.
//!
//! `cargo run --release -p ipfib --example live_single -- FILE [ROUNDS] [TRACE_LEN] [CHANGES]`
//! (IPv4 and IPv6 text/gz tables; the family with more routes is used).

use std::hint::black_box;
use std::time::Instant;

use ipfib::{Address, Fib, LiveFib, Lookup, NextHop, Update};

/// Millions of lookups per second of `f` over `n` lookups.
fn rate(n: usize, f: impl FnOnce() -> u32) -> f64 {
    let t = Instant::now();
    black_box(f());
    n as f64 / t.elapsed().as_secs_f64() / 1e6
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// MLPS per round of each way of looking up (static, static again, reader, pinned), the four
/// alternated within each round.
fn rounds_of<A: Address>(
    trace: &[A],
    rounds: usize,
    engines: [&dyn Lookup<A>; 3],
    mut reader: impl FnMut(A) -> Option<NextHop>,
) -> Vec<Vec<f64>> {
    let n = trace.len();
    let [a, b, pinned] = engines;
    let over = |e: &dyn Lookup<A>| trace.iter().fold(0, |s, &x| s ^ e.lookup(x).unwrap_or(1));
    let mut results = vec![Vec::new(); 4];
    for _ in 0..rounds {
        black_box(over(a));
        results[0].push(rate(n, || over(a)));
        black_box(over(b));
        results[1].push(rate(n, || over(b)));
        black_box(over(pinned));
        results[2].push(rate(n, || {
            trace.iter().fold(0, |s, &x| s ^ reader(x).unwrap_or(1))
        }));
        black_box(over(pinned));
        results[3].push(rate(n, || over(pinned)));
    }
    results
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: live_single FILE [ROUNDS] [TRACE_LEN] [CHANGES]")?;
    let rounds: usize = args.next().map_or(Ok(9), |s| s.parse())?;
    let len: usize = args.next().map_or(Ok(1_000_000), |s| s.parse())?;
    let changes: usize = args.next().map_or(Ok(0), |s| s.parse())?;
    let table = ipfib_io::load_fib(path.as_ref(), &ipfib_io::LoadOptions::default())?;
    let live = LiveFib::new(&table, "planb")?;
    if changes > 0 {
        // Every 7919th route gets another next hop: spread over the table's chunks.
        let routes: Vec<_> = table.iter().collect();
        let updates = (0..changes).map(|i| {
            let (net, hop) = routes[i * 7919 % routes.len()];
            Update::Insert(net, hop.wrapping_add(1))
        });
        live.apply(updates)?;
        live.flush()?;
        std::thread::sleep(std::time::Duration::from_secs(2));
    }
    let table = live.table();
    let (a, b) = (Fib::build(&table, "planb")?, Fib::build(&table, "planb")?);
    let mut reader = live.reader();
    let pinned = live.snapshot();
    let matched = ipfib_gen::TraceKind::Matched;
    let mut results = if table.v6().len() >= table.v4().len() {
        let trace = ipfib_gen::trace(table.v6(), matched, len, 1);
        let engines = [a.v6(), b.v6(), pinned.v6()];
        rounds_of(&trace, rounds, engines, |x| reader.lookup_v6(x))
    } else {
        let trace = ipfib_gen::trace(table.v4(), matched, len, 1);
        let engines = [a.v4(), b.v4(), pinned.v4()];
        rounds_of(&trace, rounds, engines, |x| reader.lookup_v4(x))
    };
    println!(
        "{path}: {len} matched addresses, single lookups, median of {rounds} alternating rounds"
    );
    let base = median(&mut results[0].clone());
    let names = ["static", "static again", "live reader", "pinned snapshot"];
    for (name, r) in names.iter().zip(&mut results) {
        let lo = r.iter().copied().fold(f64::MAX, f64::min);
        let hi = r.iter().copied().fold(0.0, f64::max);
        let m = median(r);
        println!(
            "  {name:16} {m:7.2} M/s  ({lo:.2}-{hi:.2})  {:.1} % of static",
            100.0 * m / base
        );
    }
    Ok(())
}
