//! Times `dpdk-fib6` bulk lookups (through `Lpm::lookup_batch`) on a real IPv6 table with a
//! matched trace, after checking every answer against `ipfib::Reference`.
//!
//! `cargo run --release -p ipfib-dpdk --features dpdk --example fib6_bench -- [TABLE.txt.gz] [N]`
//! Pin it for a stable figure: `taskset -c 1 ...`.

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::PathBuf;
use std::time::Instant;

use ipfib::{Lpm, Reference};
use ipfib_dpdk::{DpdkFib6, DpdkLpm6};
use rand::{Rng, SeedableRng};

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
    let reference = Reference::build(&table);
    let expected: Vec<Option<u32>> = trace.iter().map(|&a| reference.lookup(a)).collect();

    let engines: Vec<Box<dyn Lpm<u128>>> = {
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
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let t = Instant::now();
            engine
                .lookup_batch(&trace, &mut out)
                .expect("equal lengths");
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{:>10}: {:7.1} M lookups/s (best of 5), all answers equal the reference",
            engine.name(),
            n as f64 / best / 1e6
        );
    }
}
