//! What a feed of updates costs a reader on another core: one thread looks up a matched trace
//! in batches of 64 (what `ipfib follow`'s readers call), always in the newest version, while
//! another publishes versions of a PlanB table as a live table's rebuilder makes them (a
//! one-route partial rebuild, then compaction steps until none is left, each a version),
//! `RATE` updates a second, in feed phases of one second alternated with quiet ones. Each quiet
//! phase starts by settling the table into one segment, as the rebuilder does once the table
//! has been quiet for 50 ms (`LIVE_FEED_NO_SETTLE=1`: no settling, every phase walks the
//! segments the feed left):
//!
//! ```text
//! taskset -c 0,1 cargo run --release -p ipfib --example live_feed -- FILE [RATE] [CYCLES] [MODE]
//! ```
//!
//! `MODE` is `all` (default), `updates` (no compaction steps) or `spawn`: no versions, but
//! the feed phase runs the command in `LIVE_FEED_SPAWN` (as `taskset -c 0 gobgp --help`)
//! `RATE` times a second, one at a time, as `scripts/bmp-bench.sh` feeds GoBGP with its CLI:
//! what the feed's source costs a reader that is not fed.
//!
//! The table is FILE's IPv6 routes when it has any, else its IPv4 routes (a file of both
//! families measures IPv6 only).
//!
//! Prints the reader's rate in each phase and the median of the cycles' feed / quiet ratios
//! (taken cycle by cycle, which holds on a machine whose speed drifts), and versions published
//! in each feed phase.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ipfib::{Address, BuildOptions, Lookup, RouteTable};
use ipfib_gen::TraceKind;

type Engine<A> = Arc<dyn Lookup<A>>;

/// The newest version and its number (readers reload only when the number moves).
struct Current<A: Address> {
    engine: Mutex<Engine<A>>,
    version: AtomicU64,
}

impl<A: Address> Current<A> {
    fn publish(&self, e: &Engine<A>) {
        *self.engine.lock().expect("not poisoned") = e.clone();
        self.version.fetch_add(1, Ordering::Release);
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: live_feed FILE [RATE] [CYCLES] [all|updates|spawn]";
    let path = args.next().expect(usage);
    let rate: u64 = args.next().map_or(100, |s| s.parse().expect("RATE"));
    let cycles: usize = args.next().map_or(10, |s| s.parse().expect("CYCLES"));
    let (compaction, spawn) = match args.next().as_deref() {
        None | Some("all") => (true, None),
        Some("updates") => (false, None),
        Some("spawn") => (
            false,
            Some(std::env::var("LIVE_FEED_SPAWN").expect("LIVE_FEED_SPAWN")),
        ),
        Some(_) => panic!("{usage}"),
    };
    let settle = std::env::var_os("LIVE_FEED_NO_SETTLE").is_none();
    let fib = ipfib_io::load_fib(path.as_ref(), &ipfib_io::LoadOptions::default()).expect("load");
    let feed = Feed {
        rate,
        cycles,
        compaction,
        spawn,
        settle,
    };
    if fib.v6().is_empty() {
        feed.run(fib.v4().clone());
    } else {
        feed.run(fib.v6().clone());
    }
}

/// What `main` read from its arguments.
struct Feed {
    rate: u64,
    cycles: usize,
    compaction: bool,
    spawn: Option<String>,
    settle: bool,
}

impl Feed {
    fn run<A: Address>(self, mut table: RouteTable<A>) {
        let Feed {
            rate,
            cycles,
            compaction,
            spawn,
            settle,
        } = self;
        // As a live table builds: room for partial rebuilds to append to.
        let mut options = BuildOptions::default();
        options.for_updates = true;
        let planb = ipfib::engine::by_name("planb").expect("registered");
        let first = planb.build(&table, &options).expect("build");
        let current = Arc::new(Current {
            engine: Mutex::new(Arc::from(first)),
            version: AtomicU64::new(0),
        });
        let trace = ipfib_gen::trace(&table, TraceKind::Matched, 1 << 20, 1);
        let done = Arc::new(AtomicBool::new(false));
        // Lookups and nanoseconds per phase, cycle by cycle: the reader adds, the writer reads
        // them at each phase's end.
        let counted = Arc::new(AtomicU64::new(0));

        let reader = {
            let (current, done, counted) = (current.clone(), done.clone(), counted.clone());
            std::thread::spawn(move || {
                let mut out = vec![None; 64];
                let mut seen = u64::MAX;
                let mut engine: Option<Engine<A>> = None;
                while !done.load(Ordering::Relaxed) {
                    for c in trace.chunks(64) {
                        let v = current.version.load(Ordering::Acquire);
                        if v != seen {
                            engine = Some(current.engine.lock().expect("not poisoned").clone());
                            seen = v;
                        }
                        let e = engine.as_ref().expect("loaded");
                        e.lookup_batch(c, &mut out[..c.len()])
                            .expect("equal lengths");
                        counted.fetch_add(c.len() as u64, Ordering::Relaxed);
                    }
                }
            })
        };

        let routes: Vec<_> = table.iter().collect();
        let mut live: Engine<A> = Arc::from(planb.build(&table, &options).expect("build"));
        let (mut k, mut published) = (0usize, 0u64);
        let mut ratios = Vec::new();
        let phase_rate = |start: Instant, from: u64| {
            counted.load(Ordering::Relaxed).saturating_sub(from) as f64
                / start.elapsed().as_secs_f64()
                / 1e6
        };
        std::thread::sleep(Duration::from_millis(500));
        for cycle in 0..cycles {
            // Quiet: the table settles into one segment, as the rebuilder settles it 50 ms after
            // the last publish.
            if settle {
                if let Some(settled) = live.compact(&options, true, &|| false) {
                    live = settled.expect("settling").into();
                    current.publish(&live);
                }
            }
            let (start, from) = (Instant::now(), counted.load(Ordering::Relaxed));
            std::thread::sleep(Duration::from_secs(1));
            let quiet = phase_rate(start, from);
            let (start, from) = (Instant::now(), counted.load(Ordering::Relaxed));
            let before = published;
            for n in 0..rate {
                let due = start + Duration::from_secs(1).mul_f64(n as f64 / rate as f64);
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
                if let Some(cmd) = &spawn {
                    let mut words = cmd.split_whitespace();
                    let status = std::process::Command::new(words.next().expect("a command"))
                        .args(words)
                        .stdout(std::process::Stdio::null())
                        .stderr(std::process::Stdio::null())
                        .status();
                    status.expect("the command runs");
                    continue;
                }
                let (p, nh) = routes[(k * 7919) % routes.len()];
                if k % 2 == 0 {
                    table.remove(p);
                } else {
                    table.insert(p, nh);
                }
                k += 1;
                live = match live.rebuild(&table, &[p], &options) {
                    Some(partial) => partial.expect("partial rebuild").into(),
                    None => planb.build(&table, &options).expect("build").into(),
                };
                current.publish(&live);
                published += 1;
                while let Some(step) = compaction
                    .then(|| live.compact(&options, false, &|| false))
                    .flatten()
                {
                    live = step.expect("compaction").into();
                    current.publish(&live);
                    published += 1;
                }
            }
            std::thread::sleep(
                (start + Duration::from_secs(1)).saturating_duration_since(Instant::now()),
            );
            let during = phase_rate(start, from);
            println!(
                "cycle {cycle}: quiet {quiet:6.1} M/s, feed {during:6.1} M/s ({:.1} %), \
                 {} versions",
                100.0 * during / quiet,
                published - before
            );
            ratios.push(during / quiet);
        }
        done.store(true, Ordering::Relaxed);
        reader.join().expect("reader");
        ratios.sort_by(f64::total_cmp);
        println!(
            "feed / quiet: median {:.1} % (min {:.1}, max {:.1}) over {cycles} cycles, \
             {} routes, {rate} updates/s, compaction {}",
            100.0 * ratios[cycles / 2],
            100.0 * ratios[0],
            100.0 * ratios[cycles - 1],
            table.len(),
            if compaction { "on" } else { "off" }
        );
    }
}
