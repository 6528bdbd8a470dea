//! Single lookups through a live table's reader handle against the static engine, on the same
//! table and trace, in alternating rounds (medians): what `lookup_mlps_live_idle /
//! lookup_mlps_static` of `ipfib replay` measures, without the replay around it. A second static
//! build of the same table is timed too, so placement and noise show up as its ratio.
//!
//! `cargo run --release -p ipfib --example live_single -- FILE [ROUNDS] [TRACE_LEN]`
//! (IPv4 and IPv6 text/gz tables; the family with more routes is used).

use std::hint::black_box;
use std::time::Instant;

use ipfib::{Fib, LiveFib};

fn rate(n: usize, f: impl FnOnce() -> u32) -> f64 {
    let t = Instant::now();
    black_box(f());
    n as f64 / t.elapsed().as_secs_f64() / 1e6
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: live_single FILE [ROUNDS] [TRACE_LEN]")?;
    let rounds: usize = args.next().map_or(Ok(9), |s| s.parse())?;
    let len: usize = args.next().map_or(Ok(1_000_000), |s| s.parse())?;
    let table = ipfib_io::load_fib(path.as_ref(), &ipfib_io::LoadOptions::default())?;
    let six = table.v6().len() >= table.v4().len();
    let a = Fib::build(&table, "planb")?;
    let b = Fib::build(&table, "planb")?;
    let live = LiveFib::new(&table, "planb")?;
    let mut reader = live.reader();
    let pinned = live.snapshot();
    let (t4, t6) = if six {
        (
            Vec::new(),
            ipfib_gen::trace(table.v6(), ipfib_gen::TraceKind::Matched, len, 1),
        )
    } else {
        (
            ipfib_gen::trace(table.v4(), ipfib_gen::TraceKind::Matched, len, 1),
            Vec::new(),
        )
    };
    let n = len;
    let names = ["static", "static again", "live reader", "pinned snapshot"];
    let mut results: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for _ in 0..rounds {
        for (k, r) in results.iter_mut().enumerate() {
            let mlps = if six {
                match k {
                    0 => rate(n, || {
                        t6.iter().fold(0, |s, &x| s ^ a.v6().lookup(x).unwrap_or(1))
                    }),
                    1 => rate(n, || {
                        t6.iter().fold(0, |s, &x| s ^ b.v6().lookup(x).unwrap_or(1))
                    }),
                    2 => rate(n, || {
                        t6.iter()
                            .fold(0, |s, &x| s ^ reader.lookup_v6(x).unwrap_or(1))
                    }),
                    _ => rate(n, || {
                        t6.iter()
                            .fold(0, |s, &x| s ^ pinned.lookup_v6(x).unwrap_or(1))
                    }),
                }
            } else {
                match k {
                    0 => rate(n, || {
                        t4.iter().fold(0, |s, &x| s ^ a.v4().lookup(x).unwrap_or(1))
                    }),
                    1 => rate(n, || {
                        t4.iter().fold(0, |s, &x| s ^ b.v4().lookup(x).unwrap_or(1))
                    }),
                    2 => rate(n, || {
                        t4.iter()
                            .fold(0, |s, &x| s ^ reader.lookup_v4(x).unwrap_or(1))
                    }),
                    _ => rate(n, || {
                        t4.iter()
                            .fold(0, |s, &x| s ^ pinned.lookup_v4(x).unwrap_or(1))
                    }),
                }
            };
            r.push(mlps);
        }
    }
    println!(
        "{path}: {n} matched addresses, single lookups, median of {rounds} alternating rounds"
    );
    let base = median(&mut results[0].clone());
    for (name, r) in names.iter().zip(&mut results) {
        let (lo, hi) = (
            r.iter().copied().fold(f64::MAX, f64::min),
            r.iter().copied().fold(0.0, f64::max),
        );
        let m = median(r);
        println!(
            "  {name:16} {m:7.2} M/s  ({lo:.2}-{hi:.2})  {:.1} % of static",
            100.0 * m / base
        );
    }
    Ok(())
}
