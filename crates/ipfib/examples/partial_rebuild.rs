//! Cost of publishing a change through an engine's partial rebuild (`Lookup::rebuild`), with
//! compaction steps (`Lookup::compact`) run to the end after each publish, as a live table's
//! rebuilder does while idle:
//!
//! ```text
//! cargo run --release -p ipfib --example partial_rebuild -- FILE [BATCH] [PUBLISHES]
//! ```
//!
//! Each publish removes (even publishes) or re-inserts (odd) `BATCH` existing routes spread over
//! the table. Prints the publish time percentiles, how many publishes fell back to a full build,
//! compaction steps, and memory after the first publish and at the end.

use std::time::Instant;

use ipfib::{Address, BuildOptions, Lookup, RouteTable};

fn run<A: Address>(mut table: RouteTable<A>, batch: usize, publishes: usize) {
    // As a live table builds: room for partial rebuilds to append to.
    let mut options = BuildOptions::default();
    options.for_updates = true;
    let planb = ipfib::engine::by_name("planb").expect("registered");
    let t0 = Instant::now();
    let mut engine: Box<dyn Lookup<A>> = planb.build(&table, &options).expect("build");
    println!(
        "full build {:?}, {} bytes",
        t0.elapsed(),
        engine.memory_bytes()
    );
    let routes: Vec<_> = table.iter().collect();
    let (mut times, mut full, mut steps, mut first) = (Vec::new(), 0, 0, 0);
    let mut step_max_us = 0.0f64;
    for k in 0..publishes {
        let mut changed = Vec::with_capacity(batch);
        for j in 0..batch {
            let (p, nh) = routes[((k * batch + j) * 7919) % routes.len()];
            if k % 2 == 0 {
                table.remove(p);
            } else {
                table.insert(p, nh);
            }
            changed.push(p);
        }
        changed.sort_unstable();
        changed.dedup();
        let t0 = Instant::now();
        engine = match engine.rebuild(&table, &changed, &options) {
            Some(partial) => partial.expect("partial rebuild"),
            None => {
                full += 1;
                planb.build(&table, &options).expect("build")
            }
        };
        times.push(t0.elapsed().as_secs_f64() * 1e6);
        loop {
            let t0 = Instant::now();
            let Some(compacted) = engine.compact(&options, false, &|| false) else {
                break;
            };
            engine = compacted.expect("compaction");
            step_max_us = step_max_us.max(t0.elapsed().as_secs_f64() * 1e6);
            steps += 1;
        }
        if k == 0 {
            first = engine.memory_bytes();
        }
    }
    // Settling, as a live table does after 50 ms without updates: every tree into one segment.
    let t0 = Instant::now();
    let settled = engine.compact(&options, true, &|| false);
    let settle_ms = t0.elapsed().as_secs_f64() * 1e3;
    if let Some(settled) = settled {
        engine = settled.expect("settle");
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    println!(
        "{publishes} publishes of {batch} changes: us p50 {:.0} p90 {:.0} p99 {:.0} max {:.0}; \
         full builds {full}; compaction steps {steps} (longest {step_max_us:.0} us); bytes after the first {first}, at the end {} \
         ({:+.1} %); settling {settle_ms:.2} ms",
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0),
        engine.memory_bytes(),
        (engine.memory_bytes() as f64 / first as f64 - 1.0) * 100.0
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: partial_rebuild FILE [BATCH] [PUBLISHES]");
    let batch = args.next().map_or(1, |s| s.parse().expect("BATCH"));
    let publishes = args.next().map_or(400, |s| s.parse().expect("PUBLISHES"));
    let fib = ipfib_io::load_fib(path.as_ref(), &ipfib_io::LoadOptions::default()).expect("load");
    if fib.v6().is_empty() {
        run(fib.v4().clone(), batch, publishes);
    } else {
        run(fib.v6().clone(), batch, publishes);
    }
}
