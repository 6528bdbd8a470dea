//! Paired in-process A/B of PlanB's batched lookup: an older commit's PlanB (`ipfib_old`)
//! against this tree's, on the same table and trace, in alternating rounds (A B A B ...), so
//! the machine's drift hits both alike. Run through `scripts/ab-planb.sh`.
//!
//! Usage: ab-planb FIB [ROUNDS] [TRACE_LEN]

use std::time::Instant;

use ipfib::{BuildOptions, Lookup, RouteTable};
use ipfib_old::Lpm as _;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Lookups per second of `f`, timed after one untimed pass so each variant starts with its
/// own structure in cache (the variants' structures evict each other otherwise, and the one
/// timed first in a round would pay for it).
fn rate(n: usize, mut f: impl FnMut()) -> f64 {
    f();
    let t = Instant::now();
    f();
    n as f64 / t.elapsed().as_secs_f64() / 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: ab-planb FIB [ROUNDS] [TRACE_LEN]");
    let rounds: usize = args.get(2).map_or(11, |s| s.parse().unwrap());
    let len: usize = args.get(3).map_or(2_000_000, |s| s.parse().unwrap());
    let table = ipfib_io::load_fib(path.as_ref(), &ipfib_io::LoadOptions::default()).unwrap();
    let v6 = !table.v6().is_empty();
    println!("{path}: {} routes, family IPv{}", table.len(), if v6 { 6 } else { 4 });
    if v6 {
        run::<u128>(table.v6(), rounds, len);
    } else {
        run::<u32>(table.v4(), rounds, len);
    }
}

fn run<A>(routes: &RouteTable<A>, rounds: usize, len: usize)
where
    A: ipfib::Address + ipfib_old::engine::planb::layout::Family,
{
    let old_routes: ipfib_old::RouteTable<A> = routes
        .iter()
        .map(|(p, nh)| (ipfib_old::Prefix::new(p.addr(), p.len()).unwrap(), nh))
        .collect();
    let trace = ipfib_gen::trace(routes, ipfib_gen::TraceKind::Matched, len, 1);
    let old = ipfib_old::PlanB::build(&old_routes);
    // Generic code reaches PlanB through the registry (as `Fib` does): a boxed engine.
    let new: Box<dyn Lookup<A>> = ipfib::engine::by_name("planb")
        .unwrap()
        .build(routes, &BuildOptions::default())
        .unwrap();
    let mut out_old = vec![None; len];
    let mut out_new = vec![None; len];
    let mut raw = vec![0u32; len];
    // Same answers first.
    old.lookup_batch(&trace, &mut out_old).unwrap();
    new.lookup_batch(&trace, &mut out_new).unwrap();
    assert_eq!(out_old, out_new, "old and new PlanB disagree");
    let (mut a, mut b, mut c, mut d, mut e, mut ratio) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for _ in 0..rounds {
        let ra = rate(len, || old.lookup_batch(&trace, &mut out_old).unwrap());
        let rb = rate(len, || new.lookup_batch(&trace, &mut out_new).unwrap());
        let rc = rate(len, || new.lookup_batch_raw(&trace, &mut raw, u32::MAX).unwrap());
        let rd = rate(len / 4, || {
            for (o, &x) in out_new[..len / 4].iter_mut().zip(&trace[..len / 4]) {
                *o = new.lookup(x);
            }
        });
        let re = rate(len / 4, || {
            for (o, &x) in out_old[..len / 4].iter_mut().zip(&trace[..len / 4]) {
                *o = old.lookup(x);
            }
        });
        e.push(re);
        a.push(ra);
        b.push(rb);
        c.push(rc);
        d.push(rd);
        ratio.push(rb / ra);
    }
    let show = |name: &str, v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(|x, y| x.total_cmp(y));
        println!(
            "{name:<40} median {:>7.1} M/s  (min {:.1}, max {:.1})",
            median(v.to_vec()),
            s[0],
            s[s.len() - 1]
        );
    };
    show("old lookup_batch (Option)", &a);
    show("new lookup_batch (Option), via dyn Lookup", &b);
    show("new lookup_batch_raw via dyn Lookup", &c);
    show("new single lookup, via dyn Lookup", &d);
    show("old single lookup", &e);
    let mut r = ratio.clone();
    r.sort_by(|x, y| x.total_cmp(y));
    println!(
        "new/old batch ratio per round: median {:.3} (min {:.3}, max {:.3}), {rounds} rounds",
        median(ratio),
        r[0],
        r[r.len() - 1]
    );
}
