//! `ipfib follow --bmp ADDR:PORT`: a BMP station (`ipfib_io::bmp`) feeding a live table that
//! answers lookups while routers stream their routes to it.
//!
//! Threads: the station (this thread) with its session readers (`ipfib_io::bmp::follow`),
//! the lookup socket ([`socket`]) with one thread per client, the saver, and `--readers`
//! lookup threads ([`readers`]). Progress and the final report are [`report`]'s.

mod readers;
mod report;
mod socket;

use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use anyhow::Context;
use ipfib::engine::EngineInfo;
use ipfib::{Fib, LiveFib, LiveOptions, Table};
use ipfib_io::bmp::{self, Families, ListenConfig, StationConfig, View};
use ipfib_io::replay::Peers;

pub use socket::Format;

const AFTER_HELP: &str = "\
Routers (GoBGP, FRR, Junos, IOS XR) connect to ADDR:PORT and stream their peers' routes (BMP,
RFC 7854). The table starts empty and follows them:

  * --rib pre (default): each peer's Adj-RIB-In before the router's import policy; post: after
    it; loc: the router's Loc-RIB. Only unicast routes.
  * A route's source is (peer address, router address, peer distinguisher); per prefix the
    table holds the route of the lowest source: the lowest peer address wins (IPv4 before
    IPv6), then the lowest router address. --peer IP keeps that peer's routes only. These are
    `ipfib replay --peer all`'s rules; next hops are numbered 1, 2, ... by first appearance.
  * ADD-PATH (as negotiated in the Peer Up OPENs): the path with the lowest path id is the
    peer's route.
  * Peer Down withdraws the peer's routes in one batch. When a router's session ends, its
    routes go at once, or with --hold D stay for D: a reconnect's End-of-RIB per peer and
    family sweeps the ones not announced again, the deadline the rest.
  * A session that sends something malformed (bad framing, an absurd length, a malformed
    UPDATE, a prefix with host bits, a family the engine cannot hold, a limit) is closed
    with an error naming the router, the byte offset, the message and the problem; nothing
    of that message is applied.

Output (stderr): the bound address (useful with port 0), a line per router, session end and
End-of-RIB, and every --interval: routers, peers, routes, updates and update visibility
p50/p99 (from the moment the BMP message finished arriving to the publish that made it
visible to lookups). SIGINT or SIGTERM ends the run (a second one at once) after a last
--save and the --json report: routers, peers, routes, updates, visibility (percentiles of the
whole run, within 0.1 %), peak RSS.

--readers N looks up the addresses of --reader-trace FILE (one per line, both families; e.g.
`ipfib gen trace --fib RIB --kind matched`) in N threads, round and round, and each progress
line adds their lookup rate: the rate while updates arrive against quiet intervals.
--reader-cpus 2,3 pins them (a data plane's lookup cores) and keeps the rest of follow off
those CPUs.

--socket PATH answers lookups on a Unix socket: one address per line in, one line out (the
next hop number, or `-` when no route matches, as `ipfib lookup` prints; with --socket-format
hop the BGP next-hop address).

Example:
    ipfib follow --bmp 127.0.0.1:11019 --socket /tmp/fib.sock --save fib.saved --json f.json
    echo 192.0.2.1 | socat - UNIX-CONNECT:/tmp/fib.sock";

/// Arguments of `ipfib follow`.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// Address to accept BMP sessions on (port 0 picks a free port, printed on stderr).
    #[arg(long, value_name = "ADDR:PORT")]
    bmp: SocketAddr,

    /// Which RIB: pre (pre-policy Adj-RIB-In), post (post-policy), loc (Loc-RIB).
    #[arg(long, value_name = "pre|post|loc", default_value = "pre")]
    rib: View,

    /// Whose routes: a peer IP address, or `all` (merged, lowest peer address wins).
    #[arg(long, value_name = "IP|all", default_value = "all")]
    peer: Peers,

    /// How long a router's routes stay after its session ends (e.g. 0, 3s, 500ms, 2m).
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = parse_duration)]
    hold: Duration,

    /// Engine of the live table.
    #[arg(long, value_name = "ENGINE", default_value = "planb", value_parser = crate::engine_arg::Engines)]
    engine: &'static EngineInfo,

    /// The live table's coalescing delay in microseconds.
    #[arg(long, value_name = "US", default_value_t = 100)]
    delay_us: u64,

    /// How often a progress line is printed.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    interval: Duration,

    /// Write the table in the saved format (planb) to FILE every --save-every and at exit,
    /// atomically (a temporary file renamed over FILE), for `ipfib lookup --fib FILE` and the
    /// C and Python readers; FILE.next-hops lists each next hop number's BGP address.
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,

    /// How often --save writes.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    save_every: Duration,

    /// Answer lookups on a Unix socket at PATH (created; removed at exit).
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,

    /// What the socket answers: the next hop number (`id`, as `ipfib lookup`) or the BGP
    /// next-hop address (`hop`).
    #[arg(long, value_name = "FORMAT", default_value = "id")]
    socket_format: Format,

    /// Write a JSON report to FILE at exit.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,

    /// Lookup threads reading the live table while it follows (see below); needs
    /// --reader-trace.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "reader_trace")]
    readers: usize,

    /// The addresses the --readers look up: a trace file, one address per line.
    #[arg(long, value_name = "FILE")]
    reader_trace: Option<PathBuf>,

    /// Pin the --readers to these CPUs (one each, in turn) and keep the rest of follow off
    /// them.
    #[arg(
        long,
        value_name = "CPU,..",
        value_delimiter = ',',
        requires = "readers"
    )]
    reader_cpus: Vec<usize>,

    /// BMP sessions at once; more are accepted and closed at once.
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_sessions: usize,

    /// Peers one router may report (more closes its session).
    #[arg(long, value_name = "N", default_value_t = 1024)]
    max_peers_per_router: usize,

    /// Routes one peer may hold (more closes the router's session).
    #[arg(long, value_name = "N", default_value_t = 4 << 20)]
    max_routes_per_peer: usize,

    /// Distinct next-hop addresses (more closes the session that brings them).
    #[arg(long, value_name = "N", default_value_t = 1 << 20)]
    max_next_hops: usize,
}

/// `0`, `3s`, `250ms`, `2m`, `1.5s`, `100us`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("expected a duration such as 3s or 250ms, got {s:?}"))?;
    let scale = match unit {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" => 1e-6,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("unknown unit {unit:?} in {s:?} (s, ms, us, m, h)")),
    };
    Duration::try_from_secs_f64(value * scale).map_err(|e| format!("{s:?}: {e}"))
}

/// Runs the station until SIGINT or SIGTERM.
pub fn run(args: Args) -> anyhow::Result<()> {
    if !args.reader_cpus.is_empty() {
        readers::keep_off(&args.reader_cpus)?;
    }
    let families = Families::of_engine(args.engine.name())?;
    let options = LiveOptions::default()
        .with_delay(Duration::from_micros(args.delay_us))
        .with_publish_log(true);
    let live = LiveFib::with_options(&Table::new(), args.engine.name(), options)?;
    let listener = TcpListener::bind(args.bmp)
        .with_context(|| format!("cannot listen for BMP on {}", args.bmp))?;
    let bound = listener.local_addr()?;
    let stop = crate::cleanup::stop_on_signal();
    let hops: Arc<RwLock<Vec<IpAddr>>> = Arc::default();
    let socket = match &args.socket {
        Some(path) => Some(socket::bind(path)?),
        None => None,
    };
    let config = ListenConfig {
        station: StationConfig {
            peer: match args.peer {
                Peers::All => None,
                Peers::One(ip) => Some(ip),
            },
            hold: args.hold,
            max_peers_per_router: args.max_peers_per_router,
            max_routes_per_peer: args.max_routes_per_peer,
            max_next_hops: args.max_next_hops,
        },
        view: args.rib,
        families,
        max_sessions: args.max_sessions.max(1),
        channel: 1024,
    };
    let trace = match &args.reader_trace {
        Some(path) if args.readers > 0 => Some(readers::trace(path)?),
        _ => None,
    };
    let lookups = AtomicU64::new(0);
    let started = Instant::now();
    let mut progress =
        report::Progress::new(args.interval, started, trace.as_ref().map(|_| &lookups));
    let result = std::thread::scope(|s| {
        let reader_threads = match &trace {
            Some(trace) => readers::start(
                s,
                args.readers,
                &args.reader_cpus,
                trace,
                &live,
                stop,
                &lookups,
            ),
            None => Vec::new(),
        };
        if let Some(listener) = socket {
            let (live, hops, format) = (&live, &hops, args.socket_format);
            s.spawn(move || socket::serve(listener, live, hops, format, stop));
            note!(
                "ipfib follow: lookups on {}",
                args.socket.as_ref().expect("bound").display()
            );
        }
        let saver = args.save.as_ref().map(|path| {
            let (live, hops, every) = (&live, &hops, args.save_every);
            s.spawn(move || saver(path, live, hops, every, stop))
        });
        note!(
            "ipfib follow: engine {}, {} RIB; listening for BMP on {bound}",
            args.engine.name(),
            match args.rib {
                View::PrePolicy => "pre-policy",
                View::PostPolicy => "post-policy",
                View::LocRib => "Loc-RIB",
            }
        );
        let station = bmp::follow(listener, config, &live, stop, |o| {
            {
                let known = o.station.rules().next_hop_addresses();
                let have = hops.read().expect("no panics while held").len();
                if known.len() > have {
                    hops.write()
                        .expect("no panics while held")
                        .extend_from_slice(&known[have..]);
                }
            }
            progress.observe(&o, &live);
        });
        stop.store(true, Ordering::SeqCst);
        for r in reader_threads {
            r.join().expect("the readers do not panic");
        }
        let saved = saver.map(|h| h.join().expect("the saver does not panic"));
        (station, saved)
    });
    if let Some(path) = &args.socket {
        let _ = std::fs::remove_file(path);
    }
    let (station, saved) = result;
    let station = station?;
    if let Some(saved) = saved {
        saved?;
    }
    let _ = live.flush();
    progress.end_of_ribs_visible(&live);
    note!("ipfib follow: stopped; {}", progress.summary(&station));
    if let Some(path) = &args.json {
        let json = progress.json(&station, &live);
        std::fs::write(path, serde_json::to_string_pretty(&json)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Saves the table every `every` while running, and once more at the end.
fn saver(
    path: &std::path::Path,
    live: &LiveFib,
    hops: &RwLock<Vec<IpAddr>>,
    every: Duration,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    let mut last = Instant::now();
    let mut version = u64::MAX;
    loop {
        let stopping = stop.load(Ordering::Relaxed);
        if stopping || last.elapsed() >= every {
            last = Instant::now();
            if stopping {
                let _ = live.flush();
            }
            let now = live.snapshot().version();
            if now != version {
                version = now;
                if let Err(e) = save(path, live, hops) {
                    // A failed save is reported and retried; the last one's error ends the run.
                    if stopping {
                        return Err(e);
                    }
                    note!(
                        "ipfib follow: --save: {}",
                        ipfib::error::one_line(e.as_ref())
                    );
                    version = u64::MAX;
                }
            }
        }
        if stopping {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20).min(every));
    }
}

/// Writes `FILE.next-hops` (each next hop number and its BGP address, one per line), then
/// the table; both atomically. The list holds every number of the table (numbers are only
/// ever added; the list is read after the table, and again until it covers the table).
fn save(path: &std::path::Path, live: &LiveFib, hops: &RwLock<Vec<IpAddr>>) -> anyhow::Result<()> {
    let table = live.table();
    let highest = table.iter().map(|(_, nh)| nh).max().unwrap_or(0) as usize;
    let start = Instant::now();
    let list: String = loop {
        let hops = hops.read().expect("no panics while held");
        if hops.len() >= highest || start.elapsed() > Duration::from_secs(1) {
            break hops
                .iter()
                .enumerate()
                .map(|(i, a)| format!("{} {a}\n", i + 1))
                .collect();
        }
        drop(hops);
        std::thread::sleep(Duration::from_millis(1));
    };
    let mut side = path.as_os_str().to_owned();
    side.push(".next-hops");
    crate::output::write_to(std::path::Path::new(&side), |out| {
        out.write_all(list.as_bytes())
    })?;
    let fib = Fib::build(&table, "planb")?;
    crate::output::write_to(path, |mut out| {
        fib.write_to(&mut out).map_err(|e| match e {
            ipfib::SaveError::Io { source, .. } => source,
            other => std::io::Error::other(other),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_units_and_refuse_garbage() {
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration("3s").unwrap(), Duration::from_secs(3));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("3 weeks").is_err());
        assert!(parse_duration("s").is_err());
    }
}
