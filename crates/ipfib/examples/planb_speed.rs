//! Quick PlanB throughput probe on a real table: `cargo run --release --example planb_speed -- FILE`.
//! Prints build time, bytes, and M lookups/s per backend for single and batched lookups on a
//! matched trace (random prefix, random address inside it). `ipfib bench` is the full tool.

use std::time::Instant;

use ipfib::engine::planb::layout::Family;
use ipfib::engine::planb::Backend;
use ipfib::{Lpm, PlanB, RouteTable};
use rand::{Rng, SeedableRng};

fn matched<A: Family>(table: &RouteTable<A>, n: usize, seed: u64) -> Vec<A> {
    let prefixes: Vec<_> = table.iter().map(|(p, _)| p).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let p = prefixes[rng.gen_range(0..prefixes.len())];
            let host = A::from_u128_left(rng.gen::<u128>()).and(A::mask(p.len()).not());
            p.first().or(host)
        })
        .collect()
}

fn run<A: Family>(table: &RouteTable<A>) {
    let t0 = Instant::now();
    let mut planb = PlanB::build(table);
    let build = t0.elapsed();
    let st = planb.stats();
    println!(
        "{} routes {} intervals {} depth {} nodes {} fallback cells {} bytes {} ({:.2} B/prefix) build {:.1} ms",
        A::FAMILY,
        table.len(),
        st.intervals,
        st.depth,
        st.nodes,
        st.fallback_cells,
        st.bytes,
        st.bytes as f64 / table.len() as f64,
        build.as_secs_f64() * 1e3
    );
    let n: usize = std::env::var("N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4 << 20);
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let trace = matched(table, n, 1);
    let mut out = vec![None; trace.len()];
    for backend in Backend::available() {
        planb.set_backend(backend).unwrap();
        let mut best_batch = 0f64;
        let mut best_single = 0f64;
        for _ in 0..runs {
            let t = Instant::now();
            planb.lookup_batch(&trace, &mut out).unwrap();
            best_batch = best_batch.max(trace.len() as f64 / t.elapsed().as_secs_f64() / 1e6);
            let t = Instant::now();
            let mut acc = 0u64;
            for &a in &trace {
                acc = acc.wrapping_add(u64::from(
                    planb.lookup(std::hint::black_box(a)).unwrap_or(7),
                ));
            }
            std::hint::black_box(acc);
            best_single = best_single.max(trace.len() as f64 / t.elapsed().as_secs_f64() / 1e6);
        }
        println!("  {backend:7} batch {best_batch:7.1} MLPS   single {best_single:7.1} MLPS");
    }
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/data/ipv6/ipv6-ris-dfz10-20241220.txt.gz".into());
    let fib = ipfib::io::load_fib(
        std::path::Path::new(&path),
        &ipfib::io::LoadOptions::default(),
    )
    .expect("load");
    if !fib.v6.is_empty() {
        run(&fib.v6);
    }
    if !fib.v4.is_empty() {
        run(&fib.v4);
    }
}
