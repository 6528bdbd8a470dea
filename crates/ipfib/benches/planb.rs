//! Criterion micro-benchmarks: the inner-node search of each backend (1,024 sorted lines of 15
//! `u32` keys and 1,024 of 30 `u16` keys, one random query each), and PlanB batched lookups by batch length and
//! backend. Run pinned: `taskset -c 1 cargo bench -p ipfib --bench planb`.
//! Uses the real `ipv6-ris-dfz10-20241220` table when `../shared/data` is present, otherwise a
//! random table of the same size (the result then says so in its name).

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ipfib::engine::planb::layout::{Line16, Line32};
#[cfg(target_arch = "x86_64")]
use ipfib::engine::planb::search::{avx2::Avx2, avx512::Avx512};
use ipfib::engine::planb::search::{scalar::Scalar, Search};
use ipfib::engine::planb::Backend;
use ipfib::{Lpm, PlanB, Prefix, RouteTable};
use rand::{Rng, SeedableRng};

/// An inner node's line: 15 sorted keys and a random link.
fn sorted_node32(rng: &mut impl Rng) -> Line32 {
    let mut k: [u32; 16] = rng.gen();
    k[..15].sort_unstable();
    Line32(k)
}

/// An inner node's line: 30 sorted keys and a random link.
fn sorted_node16(rng: &mut impl Rng) -> Line16 {
    let mut k: [u16; 32] = rng.gen();
    k[..30].sort_unstable();
    Line16(k)
}

/// The ranks of every (node, query) pair, summed. Inlined into each backend's
/// `#[target_feature]` wrapper below, as the engine's walks are, so the intrinsics inline.
#[inline(always)]
fn ranks<S: Search>(s: S, n32: &[Line32], q32: &[u32], n16: &[Line16], q16: &[u16]) -> (u32, u32) {
    let a = n32
        .iter()
        .zip(q32)
        .map(|(n, &x)| s.rank32::<15>(black_box(n), x))
        .sum();
    let b = n16
        .iter()
        .zip(q16)
        .map(|(n, &x)| s.rank16::<30>(black_box(n), x))
        .sum();
    (a, b)
}

type Runner = fn(&[Line32], &[u32], &[Line16], &[u16]) -> (u32, u32);

fn run_scalar(n32: &[Line32], q32: &[u32], n16: &[Line16], q16: &[u16]) -> (u32, u32) {
    ranks(Scalar, n32, q32, n16, q16)
}

#[cfg(target_arch = "x86_64")]
fn run_avx2(n32: &[Line32], q32: &[u32], n16: &[Line16], q16: &[u16]) -> (u32, u32) {
    #[target_feature(enable = "avx2,popcnt")]
    fn inner(t: Avx2, n32: &[Line32], q32: &[u32], n16: &[Line16], q16: &[u16]) -> (u32, u32) {
        ranks(t, n32, q32, n16, q16)
    }
    let t = Avx2::new().expect("checked by the caller");
    // SAFETY: the token proves AVX2 and POPCNT.
    unsafe { inner(t, n32, q32, n16, q16) }
}

#[cfg(target_arch = "x86_64")]
fn run_avx512(n32: &[Line32], q32: &[u32], n16: &[Line16], q16: &[u16]) -> (u32, u32) {
    #[target_feature(enable = "avx512f,avx512bw,popcnt")]
    fn inner(t: Avx512, n32: &[Line32], q32: &[u32], n16: &[Line16], q16: &[u16]) -> (u32, u32) {
        ranks(t, n32, q32, n16, q16)
    }
    let t = Avx512::new().expect("checked by the caller");
    // SAFETY: the token proves AVX-512F, AVX-512BW and POPCNT.
    unsafe { inner(t, n32, q32, n16, q16) }
}

fn bench_rank(c: &mut Criterion, name: &str, run: Runner) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let n32: Vec<Line32> = (0..1024).map(|_| sorted_node32(&mut rng)).collect();
    let n16: Vec<Line16> = (0..1024).map(|_| sorted_node16(&mut rng)).collect();
    let q32: Vec<u32> = (0..1024).map(|_| rng.gen()).collect();
    let q16: Vec<u16> = (0..1024).map(|_| rng.gen()).collect();
    let mut g = c.benchmark_group("node_search");
    g.throughput(Throughput::Elements(2048));
    g.bench_function(name, |b| b.iter(|| run(&n32, &q32, &n16, &q16)));
    g.finish();
}

fn node_search(c: &mut Criterion) {
    bench_rank(c, "scalar", run_scalar);
    #[cfg(target_arch = "x86_64")]
    {
        if Avx2::new().is_some() {
            bench_rank(c, "avx2", run_avx2);
        }
        if Avx512::new().is_some() {
            bench_rank(c, "avx512", run_avx512);
        }
    }
}

/// The real DFZ table if present, else a random one of the same size.
fn table() -> (String, RouteTable<u128>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/ipv6/ipv6-ris-dfz10-20241220.txt.gz");
    if let Ok(fib) = ipfib::io::load_fib(&path, &ipfib::io::LoadOptions::default()) {
        return ("dfz10".into(), fib.v6);
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(2);
    let t = (0..228_726u32)
        .map(|i| {
            let a = (0x2000u128 << 112) | (rng.gen::<u128>() >> 3);
            (Prefix::covering(a, rng.gen_range(24..=48)), i % 1000)
        })
        .collect();
    ("random228k".into(), t)
}

fn batch_lengths(c: &mut Criterion) {
    let (name, table) = table();
    let prefixes: Vec<_> = table.iter().map(|(p, _)| p).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let trace: Vec<u128> = (0..1 << 16)
        .map(|_| {
            let p = prefixes[rng.gen_range(0..prefixes.len())];
            p.first() | (rng.gen::<u128>() & !u128::mask_of(p.len()))
        })
        .collect();
    let mut planb = PlanB::build(&table);
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

/// `mask(len)` for u128 without importing the trait into every closure.
trait MaskOf {
    fn mask_of(len: u8) -> Self;
}
impl MaskOf for u128 {
    fn mask_of(len: u8) -> u128 {
        <u128 as ipfib::Address>::mask(len)
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(2));
    targets = node_search, batch_lengths
}
criterion_main!(benches);
