//! Memory of a live table over many publishes: resident set size after the first publish and
//! after every `N/10` more, while a reader thread keeps looking up (so old versions are held
//! and released as in real use). Linux only (reads /proc/self/status).
//!
//! `cargo run --release -p ipfib --example live_memory -- [PREFIXES] [PUBLISHES]`
//! (defaults: a generated 100,000-prefix IPv6 table, 10,000 publishes).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ipfib::{LiveFib, Table};
use ipnet::{IpNet, Ipv6Net};

fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:").map(str::to_string))
        })
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let prefixes: usize = args.next().map_or(Ok(100_000), |s| s.parse())?;
    let publishes: u64 = args.next().map_or(Ok(10_000), |s| s.parse())?;
    let v6 = ipfib_gen::fib_v6(prefixes, 1);
    let trace = ipfib_gen::trace(&v6, ipfib_gen::TraceKind::Matched, 100_000, 1);
    let live = Arc::new(LiveFib::new(
        &Table::from_families(Default::default(), v6),
        "planb",
    )?);
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (mut r, stop) = (live.reader(), stop.clone());
        std::thread::spawn(move || {
            let mut sum = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for &a in &trace {
                    sum += u64::from(r.lookup_v6(a).unwrap_or(0));
                }
            }
            sum
        })
    };
    let mut first = 0;
    let start = std::time::Instant::now();
    for i in 0..publishes {
        // A route that comes and goes, as in a flapping prefix: one publish each.
        let net = IpNet::V6(Ipv6Net::new(
            (0x3fff_0000u128 << 96 | u128::from((i / 2) % 64) << 64).into(),
            64,
        )?);
        if i % 2 == 0 {
            live.insert(net, i as u32)?;
        } else {
            live.remove(net)?;
        }
        live.flush()?;
        if i == 0 {
            first = rss();
            println!("after publish 1: RSS {first} bytes");
        } else if (i + 1) % (publishes / 10).max(1) == 0 {
            let now = rss();
            println!(
                "after publish {}: RSS {now} bytes ({:+.1} % vs the first), {:.2} ms per publish",
                i + 1,
                100.0 * (now as f64 - first as f64) / first as f64,
                start.elapsed().as_secs_f64() * 1e3 / (i + 1) as f64
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    reader.join().map_err(|_| "reader thread failed")?;
    println!("publishes counted by the table: {}", live.publishes());
    Ok(())
}
