//! What a live table's lookups pay for being between compactions: PlanB batch lookups on a
//! table fresh from a full build (one segment) against the same routes after `PUBLISHES`
//! one-route partial rebuilds, each followed by compaction steps as a live table's rebuilder
//! runs them (several segments: the walk reads each lane's segment), and after settling (one
//! segment again):
//!
//! ```text
//! cargo run --release -p ipfib --example live_walk -- FILE [PUBLISHES] [ROUNDS]
//! ```
//!
//! Rounds alternate the three tables on the same 1 M-address matched trace, in batches of 64
//! (what `ipfib follow`'s readers call); prints M lookups/s per round and the medians.

use std::time::Instant;

use ipfib::{Address, BuildOptions, Lookup, RouteTable};
use ipfib_gen::TraceKind;

fn rate<A: Address>(engine: &dyn Lookup<A>, trace: &[A], out: &mut [Option<u32>]) -> f64 {
    let t = Instant::now();
    for (c, o) in trace.chunks(64).zip(out.chunks_mut(64)) {
        engine.lookup_batch(c, o).expect("equal lengths");
    }
    trace.len() as f64 / t.elapsed().as_secs_f64() / 1e6
}

fn segments<A: Address>(engine: &dyn Lookup<A>) -> String {
    engine
        .describe()
        .iter()
        .find(|d| d.name == "segments")
        .map_or("?".into(), |d| d.value.to_string())
}

fn run<A: Address>(mut table: RouteTable<A>, publishes: usize, rounds: usize) {
    // As a live table builds: room for partial rebuilds to append to.
    let mut options = BuildOptions::default();
    options.for_updates = true;
    let planb = ipfib::engine::by_name("planb").expect("registered");
    let fresh: Box<dyn Lookup<A>> = planb.build(&table, &options).expect("build");
    let routes: Vec<_> = table.iter().collect();
    let mut live: Box<dyn Lookup<A>> = planb.build(&table, &options).expect("build");
    let mut full = 0;
    for k in 0..publishes {
        let (p, nh) = routes[(k * 7919) % routes.len()];
        if k % 2 == 0 {
            table.remove(p);
        } else {
            table.insert(p, nh);
        }
        live = match live.rebuild(&table, &[p], &options) {
            Some(partial) => partial.expect("partial rebuild"),
            None => {
                full += 1;
                planb.build(&table, &options).expect("build")
            }
        };
        while let Some(step) = live.compact(&options, false, &|| false) {
            live = step.expect("compaction");
        }
    }
    let settled = match live.compact(&options, true, &|| false) {
        Some(s) => s.expect("settle"),
        None => planb.build(&table, &options).expect("build"),
    };
    println!(
        "{} routes; segments: fresh {}, live {} (after {publishes} publishes, {full} full), settled {}",
        table.len(),
        segments(&*fresh),
        segments(&*live),
        segments(&*settled)
    );
    let trace = ipfib_gen::trace(&table, TraceKind::Matched, 1 << 20, 1);
    let mut out = vec![None; trace.len()];
    let engines: [(&str, &dyn Lookup<A>); 3] =
        [("fresh", &*fresh), ("live", &*live), ("settled", &*settled)];
    let mut rates = vec![Vec::new(); engines.len()];
    for _ in 0..rounds {
        for (i, (_, e)) in engines.iter().enumerate() {
            rate(*e, &trace, &mut out);
            rates[i].push(rate(*e, &trace, &mut out));
        }
    }
    // Each round's live rate over the mean of the one-segment rates around it: a ratio taken
    // within one round is steadier than the medians' on a machine whose speed drifts.
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|k| 2.0 * rates[1][k] / (rates[0][k] + rates[2][k]))
        .collect();
    ratios.sort_by(f64::total_cmp);
    for (i, (name, _)) in engines.iter().enumerate() {
        let r = &mut rates[i];
        r.sort_by(f64::total_cmp);
        let strs: Vec<String> = r.iter().map(|x| format!("{x:.1}")).collect();
        println!(
            "{name:8} median {:6.1} M/s  [{}]",
            r[r.len() / 2],
            strs.join(" ")
        );
    }
    println!(
        "live / one segment: median {:.3} (min {:.3}, max {:.3})",
        ratios[rounds / 2],
        ratios[0],
        ratios[rounds - 1]
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: live_walk FILE [PUBLISHES] [ROUNDS]");
    let publishes = args.next().map_or(100, |s| s.parse().expect("PUBLISHES"));
    let rounds = args.next().map_or(7, |s| s.parse().expect("ROUNDS"));
    let fib = ipfib_io::load_fib(path.as_ref(), &ipfib_io::LoadOptions::default()).expect("load");
    if fib.v6().is_empty() {
        run(fib.v4().clone(), publishes, rounds);
    } else {
        run(fib.v6().clone(), publishes, rounds);
    }
}
