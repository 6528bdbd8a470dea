//! Criterion micro-benchmarks of PlanB, per node-search backend: single lookups on a small,
//! cache-resident table (the walk and its node searches without memory stalls), and batched
//! lookups by batch length on a DFZ-sized IPv6 table. Run pinned:
//! `taskset -c 1 cargo bench -p ipfib --bench planb`.
//!
//! The node searches themselves (`engine::planb::search`) are private to the crate since the
//! engine API was introduced, so the former `node_search` group (raw rank of 1,024 lines per
//! backend) cannot be measured from here; `planb_single_small` is the closest measurement the
//! public API allows.
//!
//! Uses the real `ipv6-ris-dfz10-20241220` table when the shared data set is present, otherwise
//! a generated DFZ-shaped table of the same size (`ipfib-gen`; the group name then says so).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ipfib::engine::planb::PlanB;
use ipfib::{Backend, Build, BuildOptions, Lookup, RouteTable};
use ipfib_gen::TraceKind;

/// Routes of the real DFZ table, the size of the generated stand-in.
const DFZ_ROUTES: usize = 228_726;

/// The real DFZ table if present, else a generated one of the same size.
fn dfz() -> (String, RouteTable<u128>) {
    if let Some(path) = ipfib_testdata::shared_file("ipv6/ipv6-ris-dfz10-20241220.txt.gz") {
        match ipfib_io::load_fib(&path, &ipfib_io::LoadOptions::default()) {
            Ok(table) => return ("dfz10".into(), table.v6().clone()),
            Err(e) => eprintln!("{}: {e}; using a generated table", path.display()),
        }
    }
    ("gen228k".into(), ipfib_gen::fib_v6(DFZ_ROUTES, 2))
}

/// Single lookups on a 2,000-route table (a few hundred KiB, mostly in cache) per backend.
fn single_small(c: &mut Criterion) {
    let table = ipfib_gen::fib_v6(2_000, 1);
    let trace = ipfib_gen::trace(&table, TraceKind::Matched, 4096, 1);
    let mut planb = PlanB::build(&table, &BuildOptions::default()).expect("build");
    let mut g = c.benchmark_group("planb_single_small");
    g.throughput(Throughput::Elements(trace.len() as u64));
    for backend in Backend::available() {
        planb.set_backend(backend).expect("available");
        g.bench_function(backend.name(), |b| {
            b.iter(|| {
                trace
                    .iter()
                    .map(|&a| planb.lookup(black_box(a)).unwrap_or(0))
                    .fold(0u32, u32::wrapping_add)
            })
        });
    }
    g.finish();
}

/// Batched lookups of a 65,536-address matched trace, cut into batches of each length.
fn batch_lengths(c: &mut Criterion) {
    let (name, table) = dfz();
    let trace = ipfib_gen::trace(&table, TraceKind::Matched, 1 << 16, 3);
    let mut planb = PlanB::build(&table, &BuildOptions::default()).expect("build");
    let mut out = vec![None; trace.len()];
    for backend in Backend::available() {
        planb.set_backend(backend).expect("available");
        let mut g = c.benchmark_group(format!("planb_batch_{name}_{backend}"));
        for len in [1usize, 8, 32, 64, 256, 4096, 65536] {
            g.throughput(Throughput::Elements(trace.len() as u64));
            g.bench_function(BenchmarkId::from_parameter(len), |b| {
                b.iter(|| {
                    for (a, o) in trace.chunks(len).zip(out.chunks_mut(len)) {
                        planb.lookup_batch(black_box(a), o).expect("equal lengths");
                    }
                })
            });
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(2));
    targets = single_small, batch_lengths
}
criterion_main!(benches);
