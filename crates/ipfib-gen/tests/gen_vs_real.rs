//! Generated tables against the real tables their profiles were measured on.
//!
//! Run with `cargo test -p ipfib --test gen_vs_real -- --nocapture` to print the comparison
//! quoted in `docs/generator-profile.md`. The real tables are read from the shared data
//! directory (skipped when it is absent) with a minimal reader of the text format, so this test
//! does not depend on the library's own reader.

use std::path::Path;
use std::time::Instant;

use ipfib::{Address, Intervals, Prefix, RouteTable};
use ipfib_gen::shape;

/// A real table's routes of family `A`, read with the project's own loader.
fn load<A: Address>(path: &Path) -> RouteTable<A> {
    let table = ipfib_io::load_fib(path, &ipfib_io::LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    table.family::<A>().clone()
}

/// Shares of each depth, in percent.
fn depth_shares<A: Address>(t: &RouteTable<A>) -> Vec<f64> {
    let h = shape::depth_histogram(t);
    let total: usize = h.iter().sum();
    h.iter().map(|&n| 100.0 * n as f64 / total as f64).collect()
}

/// Children per parent: (routes that cover another route, most children of one route), where
/// a route's children are the routes whose immediate covering route it is.
fn fertility<A: Address>(t: &RouteTable<A>) -> (usize, usize) {
    let routes: Vec<Prefix<A>> = t.iter().map(|(p, _)| p).collect();
    let mut children = vec![0usize; routes.len()];
    let mut open: Vec<usize> = Vec::new();
    for (i, p) in routes.iter().enumerate() {
        while open.last().is_some_and(|&j| routes[j].last() < p.first()) {
            open.pop();
        }
        if let Some(&j) = open.last() {
            children[j] += 1;
        }
        open.push(i);
    }
    let parents = children.iter().filter(|&&c| c > 0).count();
    (parents, children.iter().copied().max().unwrap_or(0))
}

/// Intervals with next hops as given and with every next hop set to 1 (the structure alone;
/// the bart tables carry no next hops).
fn intervals<A: Address>(t: &RouteTable<A>) -> (usize, usize) {
    let one: RouteTable<A> = t.iter().map(|(p, _)| (p, 1)).collect();
    (
        Intervals::from_table(t).len(),
        Intervals::from_table(&one).len(),
    )
}

fn distinct_hops<A: Address>(t: &RouteTable<A>) -> usize {
    let mut hops: Vec<u32> = t.iter().map(|(_, nh)| nh).collect();
    hops.sort_unstable();
    hops.dedup();
    hops.len()
}

struct Figures {
    lengths: Vec<usize>,
    depths: Vec<f64>,
    nested: f64,
    intervals: (usize, usize),
    fertility: (usize, usize),
    hops: usize,
}

fn figures<A: Address>(t: &RouteTable<A>) -> Figures {
    Figures {
        lengths: t.length_histogram(),
        depths: depth_shares(t),
        nested: shape::nested_share(t),
        intervals: intervals(t),
        fertility: fertility(t),
        hops: distinct_hops(t),
    }
}

fn report(name: &str, real: &Figures, synth: &Figures, routes: usize) {
    let pct = |n: usize| 100.0 * n as f64 / routes as f64;
    let mut top: Vec<usize> = (0..real.lengths.len()).collect();
    top.sort_by_key(|&l| std::cmp::Reverse(real.lengths[l]));
    println!("== {name}: {routes} routes, real vs generated (seed 1)");
    println!("length | real % | generated %");
    for &l in top.iter().take(8) {
        println!(
            "/{l} | {:.2} | {:.2}",
            pct(real.lengths[l]),
            pct(synth.lengths[l])
        );
    }
    println!("depth | real % | generated %");
    for d in 0..real.depths.len().max(synth.depths.len()) {
        let r = real.depths.get(d).copied().unwrap_or(0.0);
        let s = synth.depths.get(d).copied().unwrap_or(0.0);
        println!("{d} | {r:.2} | {s:.2}");
    }
    println!("nested share | {:.3} | {:.3}", real.nested, synth.nested);
    println!(
        "intervals (next hops as given) | {} | {}",
        real.intervals.0, synth.intervals.0
    );
    println!(
        "intervals (next hops all 1) | {} | {}",
        real.intervals.1, synth.intervals.1
    );
    println!(
        "routes with children | {} | {}",
        real.fertility.0, synth.fertility.0
    );
    println!(
        "most children of one route | {} | {}",
        real.fertility.1, synth.fertility.1
    );
    println!("distinct next hops | {} | {}", real.hops, synth.hops);
}

/// Shared checks: the exact histogram (scaled to the same size, so equal up to rounding of
/// each length's quota), and structure within bands around the real table's figures.
fn compare(real: &Figures, synth: &Figures, depth_band: f64, intervals: [(f64, f64); 2]) {
    for (l, (&r, &s)) in real.lengths.iter().zip(&synth.lengths).enumerate() {
        assert!(r.abs_diff(s) <= 1, "/{l}: real {r}, generated {s}");
    }
    assert!(
        (real.nested - synth.nested).abs() < 0.05,
        "nested share: real {:.3}, generated {:.3}",
        real.nested,
        synth.nested
    );
    for d in 0..3 {
        let (r, s) = (real.depths[d], synth.depths.get(d).copied().unwrap_or(0.0));
        assert!(
            (r - s).abs() < depth_band,
            "depth {d}: real {r:.2} %, generated {s:.2} %"
        );
    }
    for ((r, s), (low, high)) in [
        (real.intervals.0, synth.intervals.0),
        (real.intervals.1, synth.intervals.1),
    ]
    .into_iter()
    .zip(intervals)
    {
        let ratio = s as f64 / r as f64;
        assert!(
            (low..high).contains(&ratio),
            "intervals: real {r}, generated {s}"
        );
    }
}

#[test]
fn ipv6_resembles_ris_dfz10() {
    let Some(dir) = ipfib_testdata::shared_data() else {
        return;
    };
    let real: RouteTable<u128> = load(&dir.join("ipv6/ipv6-ris-dfz10-20241220.txt.gz"));
    let started = Instant::now();
    let synth = ipfib_gen::fib_v6(real.len(), 1);
    println!(
        "generated {} IPv6 routes in {:?}",
        synth.len(),
        started.elapsed()
    );
    let (r, s) = (figures(&real), figures(&synth));
    report("IPv6 ris-dfz10-20241220", &r, &s, real.len());
    compare(&r, &s, 5.0, [(0.75, 1.25), (0.7, 1.3)]);
}

#[test]
fn ipv4_resembles_bart_tier1() {
    let Some(dir) = ipfib_testdata::shared_data() else {
        return;
    };
    let real: RouteTable<u32> = load(&dir.join("ipv4/ipv4-bart-tier1-2023.txt.gz"));
    let started = Instant::now();
    let synth = ipfib_gen::fib_v4(real.len(), 1);
    println!(
        "generated {} IPv4 routes in {:?}",
        synth.len(),
        started.elapsed()
    );
    let (r, s) = (figures(&real), figures(&synth));
    report("IPv4 bart-tier1-2023", &r, &s, real.len());
    // bart has no next hops: only the structural interval count is comparable, and it is the
    // generator's known weakness for IPv4: real /8s are 96-100 % announced with many small
    // unannounced holes, while generated /8s fill up (their quota is the real volume, and the
    // random excess packs into the next free space), leaving about a fifth of the real number
    // of boundaries. The band documents that gap rather than hiding it.
    let mut r = r;
    r.intervals.0 = s.intervals.0;
    compare(&r, &s, 5.0, [(0.99, 1.01), (0.1, 0.4)]);
}

/// The PlanB paper's synth-1..4 sizes: generation time and the figures of each table. Slow in
/// a debug build, so opt-in: `cargo test --release -p ipfib --test gen_vs_real -- --ignored
/// --nocapture`.
#[test]
#[ignore]
fn synth_sizes() {
    println!("routes | build | top lengths | nested | depth>=2 | intervals");
    for n in [250_000, 500_000, 750_000, 1_000_000] {
        let started = Instant::now();
        let t = ipfib_gen::fib_v6(n, 1);
        let build = started.elapsed();
        assert_eq!(t.len(), n);
        let h = t.length_histogram();
        let pct = |l: usize| 100.0 * h[l] as f64 / n as f64;
        let depths = shape::depth_histogram(&t);
        let deep: usize = depths.iter().skip(2).sum();
        println!(
            "{n} | {build:.2?} | /48 {:.2} /32 {:.2} /44 {:.2} /40 {:.2} /36 {:.2} | {:.3} | {:.3} | {}",
            pct(48),
            pct(32),
            pct(44),
            pct(40),
            pct(36),
            shape::nested_share(&t),
            deep as f64 / n as f64,
            Intervals::from_table(&t).len()
        );
    }
}
