//! Times `load_fib` on one file: `cargo run --release -p ipfib-io --example load_time -- FILE [RUNS]`.
//!
//! Prints the wall and CPU time of each run and the fastest, so a change to the readers can be
//! checked against the previous numbers (see docs/fuzzing.md for the ones recorded).

use std::path::PathBuf;
use std::time::Instant;

fn cpu_seconds() -> f64 {
    // utime + stime of this process from /proc (Linux); 0 elsewhere.
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Fields 14 and 15 of stat(5), counted from the state field (3) here.
    (ticks(11) + ticks(12)) / 100.0
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().expect("usage: load_time FILE [RUNS]"));
    let runs: usize = args
        .next()
        .map_or(5, |r| r.parse().expect("RUNS is a number"));
    let options = ipfib_io::LoadOptions::default();
    let mut best = f64::INFINITY;
    let mut best_cpu = f64::INFINITY;
    for run in 0..runs {
        let (cpu0, t0) = (cpu_seconds(), Instant::now());
        let table = ipfib_io::load_fib(&path, &options).unwrap_or_else(|e| panic!("{e}"));
        let wall = t0.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu0;
        println!(
            "run {run}: {} routes, wall {wall:.3} s, cpu {cpu:.2} s",
            table.len()
        );
        best = best.min(wall);
        best_cpu = best_cpu.min(cpu);
    }
    println!("fastest of {runs}: wall {best:.3} s, cpu {best_cpu:.2} s");
}
