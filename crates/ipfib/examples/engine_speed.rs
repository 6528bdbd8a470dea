//! Quick in-process throughput probe of registered IPv4 engines on a real table, every
//! backend: `cargo run --release -p ipfib --example engine_speed -- FILE [ENGINE,..]`
//! (default engines: planb,dxr,d16r,d20r). Engines alternate within each run, so their ratios
//! share the machine's load. `N` (trace length), `RUNS` and `TRACE` (`matched` or `uniform`)
//! come from the environment. `ipfib bench` is the full tool (DPDK included).

use std::time::Instant;

use ipfib::engine::{by_name, BuildOptions};
use ipfib::Backend;
use ipfib_gen::TraceKind;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: engine_speed FILE [ENGINES]");
    let names = args.next().unwrap_or_else(|| "planb,dxr,d16r,d20r".into());
    let table = ipfib_io::load_fib(path.as_ref(), &ipfib_io::LoadOptions::default())
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let v4 = table.v4();
    let kind = match std::env::var("TRACE").as_deref() {
        Ok("uniform") => TraceKind::Uniform,
        _ => TraceKind::Matched,
    };
    let n = env_or("N", 2 << 20);
    let runs = env_or("RUNS", 7);
    let trace = ipfib_gen::trace(v4, kind, n, 1);
    let mut engines = Vec::new();
    for name in names.split(',') {
        for backend in Backend::available() {
            let t0 = Instant::now();
            let e = by_name(name)
                .and_then(|i| i.build(v4, &BuildOptions::with_backend(backend)))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let ms = t0.elapsed().as_secs_f64() * 1e3;
            println!(
                "{name}/{backend}: build {ms:.1} ms, {} bytes ({:.2} B/prefix)",
                e.memory_bytes(),
                e.memory_bytes() as f64 / v4.len() as f64
            );
            engines.push((format!("{name}/{backend}"), e, Vec::new(), Vec::new()));
        }
    }
    let mut out = vec![0u32; trace.len()];
    for _ in 0..runs {
        for (_, e, batch, single) in engines.iter_mut() {
            let t = Instant::now();
            e.lookup_batch_raw(&trace, &mut out, u32::MAX).unwrap();
            batch.push(trace.len() as f64 / t.elapsed().as_secs_f64() / 1e6);
            let t = Instant::now();
            let mut acc = 0u64;
            for &a in &trace {
                acc = acc.wrapping_add(u64::from(e.lookup(std::hint::black_box(a)).unwrap_or(7)));
            }
            std::hint::black_box(acc);
            single.push(trace.len() as f64 / t.elapsed().as_secs_f64() / 1e6);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    for (name, _, batch, single) in engines.iter_mut() {
        println!(
            "{name:18} batch {:7.1} MLPS   single {:7.1} MLPS  (medians of {runs})",
            median(batch),
            median(single)
        );
    }
}
