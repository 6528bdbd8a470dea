//! Quick PlanB throughput probe on a real table:
//! `cargo run --release -p ipfib --example planb_speed -- FILE` (default: the shared
//! `ipv6-ris-dfz10-20241220` table). Prints build time, PlanB's shape and bytes, and M lookups/s
//! per node-search backend for single and batched lookups on a matched trace (random route,
//! random address inside it). `N` (trace length) and `RUNS` (best of) are read from the
//! environment. `ipfib bench` is the full tool.

use std::path::PathBuf;
use std::time::Instant;

use ipfib::engine::planb::PlanB;
use ipfib::{Address, Backend, Build, BuildOptions, Lookup, RouteTable};
use ipfib_gen::TraceKind;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The probe for one family's table. A macro rather than a generic function: `PlanB`'s family
/// bound is private to the crate, so only the concrete `PlanB<u32>` and `PlanB<u128>` can be
/// named here (and lookups stay direct calls, not calls through `dyn Lookup`).
macro_rules! run {
    ($table:expr, $family:ty) => {{
        let table: &RouteTable<$family> = $table;
        let t0 = Instant::now();
        let mut planb = PlanB::<$family>::build(table, &BuildOptions::default()).expect("build");
        let build = t0.elapsed();
        let bytes = planb.memory_bytes();
        println!(
            "{} routes {} bytes {} ({:.2} B/prefix) build {:.1} ms",
            <$family as Address>::FAMILY,
            table.len(),
            bytes,
            bytes as f64 / table.len() as f64,
            build.as_secs_f64() * 1e3
        );
        let shape: Vec<String> = planb
            .describe()
            .iter()
            .map(|d| format!("{} {}", d.name.replace('_', " "), d.value))
            .collect();
        println!("  {}", shape.join(", "));

        let n = env_or("N", 4 << 20);
        let runs = env_or("RUNS", 5);
        let trace = ipfib_gen::trace(table, TraceKind::Matched, n, 1);
        let mut out = vec![None; trace.len()];
        for backend in Backend::available() {
            planb.set_backend(backend).expect("available backend");
            let mut best_batch = 0f64;
            let mut best_single = 0f64;
            for _ in 0..runs {
                let t = Instant::now();
                planb.lookup_batch(&trace, &mut out).expect("equal lengths");
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
    }};
}

fn main() {
    let path = match std::env::args().nth(1) {
        Some(p) => PathBuf::from(p),
        None => match ipfib_testdata::shared_file("ipv6/ipv6-ris-dfz10-20241220.txt.gz") {
            Some(p) => p,
            None => {
                eprintln!("usage: planb_speed FILE");
                std::process::exit(2);
            }
        },
    };
    let table = ipfib_io::load_fib(&path, &ipfib_io::LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if !table.v6().is_empty() {
        run!(table.v6(), u128);
    }
    if !table.v4().is_empty() {
        run!(table.v4(), u32);
    }
}
