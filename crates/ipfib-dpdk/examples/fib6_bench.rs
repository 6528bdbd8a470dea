//! Times `dpdk-fib6` bulk lookups (through `Lpm::lookup_batch`) on a real IPv6 table with a
//! matched trace, after checking every answer against `ipfib::engine::reference::Reference`.
//!
//! `cargo run --release -p ipfib-dpdk --features dpdk --example fib6_bench -- [TABLE.txt.gz] [N]`
//! Pin it for a stable figure: `taskset -c 1 ...`.

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::PathBuf;
use std::time::Instant;

use ipfib::engine::reference::Reference;
use ipfib::Lookup;
use ipfib_dpdk::{DpdkFib6, DpdkLpm6};
use rand::{Rng, SeedableRng};

/// CPU time of this thread: on a shared machine, the time the lookups actually ran.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_THREAD_CPUTIME_ID always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().map(PathBuf::from).unwrap_or_else(|| {
        support::shared_data()
            .expect("no table given and ../shared/data not found")
            .join("ipv6/ipv6-ris-dfz10-20241220.txt.gz")
    });
    let n: usize = args
        .next()
        .map_or(4_000_000, |s| s.parse().expect("N is a count"));

    let table = support::load_gz::<u128>(&path);
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let trace = support::matched_trace(&table, n, || rng.gen());
    let reference = Reference::new(&table);
    let expected: Vec<Option<u32>> = trace.iter().map(|&a| reference.lookup(a)).collect();

    let engines: Vec<Box<dyn Lookup<u128>>> = {
        let t = Instant::now();
        let fib6 = DpdkFib6::build(&table).expect("dpdk-fib6 builds");
        eprintln!(
            "dpdk-fib6: built in {:.2?}, avx512={}, {} tbl8 groups, {} B entries, {:.1} MiB",
            t.elapsed(),
            fib6.uses_avx512(),
            fib6.tbl8_groups(),
            fib6.entry_bytes(),
            fib6.memory_bytes() as f64 / (1 << 20) as f64
        );
        let t = Instant::now();
        let lpm6 = DpdkLpm6::build(&table).expect("dpdk-lpm6 builds");
        eprintln!(
            "dpdk-lpm6: built in {:.2?}, {} tbl8 groups, {:.1} MiB",
            t.elapsed(),
            lpm6.tbl8_groups(),
            lpm6.memory_bytes() as f64 / (1 << 20) as f64
        );
        vec![Box::new(fib6), Box::new(lpm6)]
    };

    let eal = ipfib_dpdk::init_eal(ipfib_dpdk::eal::DEFAULT_MEM_MIB).expect("EAL runs");
    eprintln!(
        "EAL: -m {} MiB, SIMD {} bits: {}",
        eal.mem_mib,
        eal.max_simd_bitwidth,
        eal.args.join(" ")
    );
    println!(
        "{}: {} routes, {} lookups (matched trace)",
        path.display(),
        table.len(),
        n
    );
    let mut out = vec![None; n];
    for engine in &engines {
        engine
            .lookup_batch(&trace, &mut out)
            .expect("equal lengths");
        let wrong = out.iter().zip(&expected).filter(|(a, b)| a != b).count();
        assert_eq!(
            wrong,
            0,
            "{}: {wrong} answers differ from the reference",
            engine.name()
        );
        let (mut wall, mut cpu) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..5 {
            let (t, c) = (Instant::now(), thread_cpu_seconds());
            engine
                .lookup_batch(&trace, &mut out)
                .expect("equal lengths");
            cpu = cpu.min(thread_cpu_seconds() - c);
            wall = wall.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{:>10}: {:6.1} M lookups/s wall, {:6.1} M/s of thread CPU time (best of 5); all answers equal the reference",
            engine.name(),
            n as f64 / wall / 1e6,
            n as f64 / cpu / 1e6
        );
    }
}
