//! Poptrie's direct-table width, measured: for each width `s` in `BITS` (comma-separated;
//! default 12,14,16,18,20), build time, bytes, nodes per level, model lines per lookup, and
//! batched M lookups/s on matched and uniform traces, with PlanB timed in the same rounds
//! (engines alternate run by run, so their ratio survives the machine's drift). CP-Trie
//! configurations join the same rounds with `CPTRIE=s:k,...` (direct-table bits `s`, node
//! stride `k`), so CP-Trie's strides are chosen against Poptrie and PlanB in one run.
//!
//! `taskset -c 1 cargo run --release -p ipfib --example poptrie_speed -- FILE`
//! (`N` trace length, default 2^21; `ROUNDS`, default 7; `BITS`; `SINGLE=1` adds single
//! lookups; `TRACE=matched` or `uniform` runs one trace only, e.g. under callgrind).

use std::path::PathBuf;
use std::time::Instant;

use ipfib::engine::cptrie::CpTrie;
use ipfib::engine::poptrie::{Family, Poptrie};
use ipfib::{Address, BuildOptions, Lookup, RouteTable};
use ipfib_gen::TraceKind;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn mlps<A: Address>(e: &dyn Lookup<A>, trace: &[A], out: &mut [u32]) -> f64 {
    let t = Instant::now();
    for (a, o) in trace.chunks(4096).zip(out.chunks_mut(4096)) {
        e.lookup_batch_raw(a, o, u32::MAX).expect("equal lengths");
    }
    trace.len() as f64 / t.elapsed().as_secs_f64() / 1e6
}

fn single<A: Address>(e: &dyn Lookup<A>, trace: &[A]) -> f64 {
    let t = Instant::now();
    let mut acc = 0u64;
    for &a in trace {
        acc = acc.wrapping_add(u64::from(e.lookup(std::hint::black_box(a)).unwrap_or(7)));
    }
    std::hint::black_box(acc);
    trace.len() as f64 / t.elapsed().as_secs_f64() / 1e6
}

/// Prints one structure's build time, bytes and `describe` line.
fn report<A: Address>(name: &str, e: &dyn Lookup<A>, build_ms: f64, prefixes: usize) {
    let d: Vec<String> = e
        .describe()
        .iter()
        .map(|d| format!("{} {}", d.name, d.value))
        .collect();
    println!(
        "{name}: build {build_ms:.1} ms, {} bytes ({:.2} B/prefix)\n  {}",
        e.memory_bytes(),
        e.memory_bytes() as f64 / prefixes as f64,
        d.join(", ")
    );
}

fn run<A: Family + ipfib::engine::cptrie::Family>(table: &RouteTable<A>, default_bits: &str) {
    let bits: Vec<u32> = std::env::var("BITS")
        .unwrap_or_else(|_| default_bits.to_string())
        .split(',')
        .map(|b| b.parse().expect("BITS: comma-separated numbers"))
        .collect();
    let n = env_or("N", 1 << 21);
    let rounds = env_or("ROUNDS", 7);
    let options = BuildOptions::default();
    let mut engines: Vec<(String, Box<dyn Lookup<A>>)> = Vec::new();
    let t0 = Instant::now();
    let planb = ipfib::engine::by_name("planb")
        .and_then(|e| e.build::<A>(table, &options))
        .expect("planb");
    println!(
        "{} {} routes; planb build {:.1} ms, {} bytes ({:.2} B/prefix)",
        A::FAMILY,
        table.len(),
        t0.elapsed().as_secs_f64() * 1e3,
        planb.memory_bytes(),
        planb.memory_bytes() as f64 / table.len() as f64
    );
    engines.push(("planb".into(), planb));
    for &s in &bits {
        let t0 = Instant::now();
        let p = Poptrie::build_with(table, &options, s).expect("poptrie");
        let name = format!("poptrie s={s}");
        report(&name, &p, t0.elapsed().as_secs_f64() * 1e3, table.len());
        engines.push((name, Box::new(p)));
    }
    for config in std::env::var("CPTRIE").unwrap_or_default().split(',') {
        let Some((s, k)) = config.split_once(':') else {
            continue;
        };
        let (s, k): (u32, u32) = (
            s.parse().expect("CPTRIE: s:k pairs"),
            k.parse().expect("CPTRIE: s:k pairs"),
        );
        let t0 = Instant::now();
        let c = CpTrie::build_with(table, &options, s, k).expect("cptrie");
        let name = format!("cptrie {s}:{k}");
        report(&name, &c, t0.elapsed().as_secs_f64() * 1e3, table.len());
        engines.push((name, Box::new(c)));
    }
    let kinds = match std::env::var("TRACE").as_deref() {
        Ok("matched") => vec![TraceKind::Matched],
        Ok("uniform") => vec![TraceKind::Uniform],
        _ => vec![TraceKind::Matched, TraceKind::Uniform],
    };
    for kind in kinds {
        let trace = ipfib_gen::trace(table, kind, n, 1);
        let mut out = vec![0u32; trace.len()];
        let mut batch = vec![Vec::new(); engines.len()];
        let mut one = vec![Vec::new(); engines.len()];
        for (_, e) in &engines {
            mlps(e.as_ref(), &trace, &mut out); // warm-up
        }
        for _ in 0..rounds {
            for (i, (_, e)) in engines.iter().enumerate() {
                batch[i].push(mlps(e.as_ref(), &trace, &mut out));
                if env_or("SINGLE", 0) == 1 {
                    one[i].push(single(e.as_ref(), &trace));
                }
            }
        }
        let base = median(batch[0].clone());
        println!("{kind:?} trace, {n} addresses, median of {rounds} alternating rounds:");
        for (i, (name, e)) in engines.iter().enumerate() {
            let lines = e.lines_per_lookup(&trace[..trace.len().min(200_000)]);
            let m = median(batch[i].clone());
            print!(
                "  {name:15} batch {m:7.1} MLPS ({:.2}x planb)  lines/lookup {}",
                m / base,
                lines.map_or("-".into(), |l| format!("{l:.2}"))
            );
            if !one[i].is_empty() {
                print!("  single {:7.1}", median(one[i].clone()));
            }
            println!();
        }
    }
}

fn main() {
    let path = PathBuf::from(std::env::args().nth(1).expect("usage: poptrie_speed FILE"));
    let table = ipfib_io::load_fib(&path, &ipfib_io::LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if !table.v6().is_empty() {
        run(table.v6(), "12,14,16,18,20");
    }
    if !table.v4().is_empty() {
        run(table.v4(), "16,18,20");
    }
}
