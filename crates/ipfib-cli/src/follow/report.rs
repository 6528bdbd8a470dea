//! What `ipfib follow` tells: a line per router and session end as they happen, a line per
//! End-of-RIB once every route before it is visible to lookups, a progress line per interval
//! (with that interval's update visibility and, with `--readers`, lookup rate), and the JSON
//! report at exit.

use crate::rss::rss;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use ipfib::LiveFib;
use ipfib_io::bmp::{Notice, Observed, Station};
use ipfib_io::replay::{visibility, Submission, Visibility};
use serde_json::{json, Value};

/// Progress intervals the JSON report lists (one a second is 12 days).
const KEEP: usize = 1 << 20;

/// Every update visibility of a run, in bounded memory: a histogram of nanoseconds to three
/// significant digits (a percentile is within 0.1 % of the exact one), so that a run of any
/// length keeps a few tens of KiB and its percentiles cover all of it. The maximum is exact.
struct Visibilities {
    ns: Histogram<u64>,
    max_us: f64,
}

impl Visibilities {
    fn new() -> Self {
        Visibilities {
            ns: Histogram::new(3).expect("3 significant digits are in range"),
            max_us: 0.0,
        }
    }

    fn record(&mut self, us: f64) {
        self.max_us = self.max_us.max(us);
        // An auto-resizing histogram takes every value (`record` fails only on a fixed range).
        let _ = self.ns.record((us * 1e3).round() as u64);
    }

    /// The `q` quantile in µs (0 before any value).
    fn percentile(&self, q: f64) -> f64 {
        if self.ns.is_empty() {
            0.0
        } else {
            self.ns.value_at_quantile(q) as f64 / 1e3
        }
    }
}

/// One progress interval, as the JSON report lists them.
#[derive(serde::Serialize)]
struct Interval {
    /// Seconds from the start to the interval's end.
    at_s: f64,
    updates: u64,
    visible_us_p99: f64,
    /// From receipt until the rebuilder took the change (station, coalescing delay, a build
    /// or compaction step in progress).
    waiting_us_p99: f64,
    /// From taken until the version with it was stored.
    building_us_p99: f64,
    /// The readers' lookups per second over the interval, in millions (with `--readers`).
    lookup_mlps: Option<f64>,
}

/// Progress bookkeeping.
pub struct Progress<'a> {
    interval: Duration,
    /// The readers' lookup count, with `--readers`.
    lookups: Option<&'a AtomicU64>,
    last_lookups: u64,
    intervals: Vec<Interval>,
    started: Instant,
    last: Instant,
    last_updates: u64,
    updates: u64,
    pending: Vec<Submission>,
    all: Visibilities,
    /// End-of-RIB lines waiting for the updates before them to be visible: the sequence
    /// number of the last of those updates, and the line without its time.
    end_of_ribs: Vec<(u64, String)>,
}

impl<'a> Progress<'a> {
    /// Progress lines every `interval`; `lookups` counts the readers' lookups.
    pub fn new(interval: Duration, started: Instant, lookups: Option<&'a AtomicU64>) -> Self {
        Progress {
            interval,
            lookups,
            last_lookups: 0,
            intervals: Vec::new(),
            started,
            last: started,
            last_updates: 0,
            updates: 0,
            pending: Vec::new(),
            all: Visibilities::new(),
            end_of_ribs: Vec::new(),
        }
    }

    /// Takes one observation of the station.
    pub fn observe(&mut self, o: &Observed<'_>, live: &LiveFib) {
        for n in o.notices {
            self.notice(n, live);
        }
        if let Some(s) = &o.submission {
            self.updates += s.len as u64;
            self.pending.push(*s);
        }
        self.end_of_ribs_visible(live);
        if self.last.elapsed() >= self.interval {
            let v = self.visibility(live);
            let secs = self.last.elapsed().as_secs_f64().max(1e-9);
            let lookup_mlps = self.lookups.map(|n| {
                let now = n.load(Ordering::Relaxed);
                let rate = (now - self.last_lookups) as f64 / secs / 1e6;
                self.last_lookups = now;
                rate
            });
            let p99 = |of: &[f64]| Visibility::percentile(of, 0.99);
            let interval = Interval {
                at_s: self.started.elapsed().as_secs_f64(),
                updates: self.updates - self.last_updates,
                visible_us_p99: p99(&v.total),
                waiting_us_p99: p99(&v.waiting),
                building_us_p99: p99(&v.building),
                lookup_mlps,
            };
            note!(
                "ipfib follow: {}  ({:.0} updates/s)  visible us p50 {:.0} p99 {:.0} \
                 (waiting {:.0}, building {:.0}){}",
                self.summary(o.station),
                interval.updates as f64 / secs,
                Visibility::percentile(&v.total, 0.50),
                interval.visible_us_p99,
                interval.waiting_us_p99,
                interval.building_us_p99,
                lookup_mlps.map_or(String::new(), |m| format!("  lookups {m:.2} M/s")),
            );
            if self.intervals.len() < KEEP {
                self.intervals.push(interval);
            }
            self.last = Instant::now();
            self.last_updates = self.updates;
        }
    }

    /// The visibility of the submissions whose publish has happened (each part sorted, µs);
    /// the others wait for the next call.
    fn visibility(&mut self, live: &LiveFib) -> Visibility {
        let publishes = live.take_publishes();
        let upto = publishes.last().map_or(0, |p| p.upto);
        let (done, wait): (Vec<Submission>, Vec<Submission>) =
            self.pending.drain(..).partition(|s| s.seq <= upto);
        self.pending = wait;
        let v = visibility(&done, &publishes);
        for &us in &v.total {
            self.all.record(us);
        }
        v
    }

    /// Prints the End-of-RIB lines whose routes are all visible, with the time they were
    /// seen so (within a [`ipfib_io::bmp::TICK`] when no message arrives).
    pub fn end_of_ribs_visible(&mut self, live: &LiveFib) {
        if self.end_of_ribs.is_empty() {
            return;
        }
        let published = live.published();
        let at = self.started.elapsed().as_secs_f64();
        self.end_of_ribs.retain(|(seq, line)| {
            if *seq > published {
                return true;
            }
            note!("{line}, {at:.2} s)");
            false
        });
    }

    fn notice(&mut self, n: &Notice, live: &LiveFib) {
        match n {
            Notice::RouterUp { router } => note!("ipfib follow: router {router} connected"),
            Notice::Closed {
                router,
                withdrawn,
                held,
                error,
            } => {
                let what = if *held > 0 {
                    format!("{held} routes held")
                } else {
                    format!("{withdrawn} FIB changes withdrawing its routes")
                };
                match error {
                    Some(e) => note!("ipfib follow: session closed: {e} ({what})"),
                    None => note!("ipfib follow: router {router}: session ended ({what})"),
                }
            }
            Notice::EndOfRib {
                router,
                peer,
                family,
                routes,
            } => self.end_of_ribs.push((
                live.submitted(),
                format!(
                    "ipfib follow: EoR {router}/{} {family} ({routes} routes",
                    peer.peer
                ),
            )),
            Notice::PeerWithoutPeerUp { router, peer } => note!(
                "ipfib follow: router {router}: routes for peer {} without a Peer Up; following it",
                peer.peer
            ),
            Notice::HeldExpired { router, withdrawn } => note!(
                "ipfib follow: router {router}: held routes expired ({withdrawn} FIB changes)"
            ),
            Notice::Refused { router } => {
                note!("ipfib follow: router {router} refused: --max-sessions sessions are open")
            }
            _ => {}
        }
    }

    /// `routers R peers P routes N updates U`.
    pub fn summary(&self, station: &Station) -> String {
        format!(
            "routers {} peers {} routes {} updates {}",
            station.live_routers(),
            station.peers().values().filter(|p| p.up).count(),
            station.rules().fib_len(),
            self.updates
        )
    }

    /// The report at exit.
    pub fn json(&mut self, station: &Station, live: &LiveFib) -> Value {
        let _ = self.visibility(live);
        let pct = |q| self.all.percentile(q);
        let routers: Vec<Value> = station
            .routers()
            .iter()
            .map(|(ip, r)| {
                json!({
                    "address": ip.to_string(),
                    "sys_name": r.sys_name,
                    "sessions": r.sessions,
                    "failures": r.failures,
                })
            })
            .collect();
        let peers: Vec<Value> = station
            .peers()
            .iter()
            .map(|(k, p)| {
                json!({
                    "router": k.router.map(|r| r.to_string()),
                    "peer": k.peer.map(|r| r.to_string()),
                    "distinguisher": k.distinguisher,
                    "up": p.up,
                    "routes": station.rules().routes_of(k),
                    "end_of_rib": p.end_of_rib.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
                    "changes": p.changes,
                    "stats": p.stats.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
                })
            })
            .collect();
        json!({
            "routers": routers,
            "peers": peers,
            "routes": station.rules().fib_len(),
            "routes_held_by_peers": station.rules().sources().map(|(_, n)| n).sum::<usize>(),
            "bmp_route_changes": station.changes(),
            "updates": self.updates,
            "publishes": live.publishes(),
            "visible_us_p50": pct(0.50),
            "visible_us_p99": pct(0.99),
            "visible_us_max": self.all.max_us,
            "ignored": station.ignored(),
            "next_hops": station.rules().next_hop_addresses().iter().map(|a| a.to_string()).collect::<Vec<_>>(),
            "lookups": self.lookups.map(|n| n.load(Ordering::Relaxed)),
            "intervals": self.intervals,
            "peak_rss_bytes": rss("VmHWM"),
            "rss_bytes": rss("VmRSS"),
            "seconds": self.started.elapsed().as_secs_f64(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Visibilities;

    #[test]
    fn percentiles_cover_the_whole_run_within_a_thousandth() {
        let mut v = Visibilities::new();
        assert_eq!(v.percentile(0.99), 0.0);
        // 1.5 M slow updates, then 0.5 M fast ones: a window of the last 1 M would put the
        // median at the boundary; the whole run's is the slow value.
        for _ in 0..1_500_000 {
            v.record(812.5);
        }
        for i in 0..500_000 {
            v.record(3.0 + f64::from(i % 7));
        }
        assert!(
            (v.percentile(0.50) - 812.5).abs() <= 812.5e-3,
            "{}",
            v.percentile(0.5)
        );
        assert!(v.percentile(0.20) <= 9.01, "{}", v.percentile(0.2));
        assert_eq!(v.max_us, 812.5);
        let mut w = Visibilities::new();
        for us in 1..=1000 {
            w.record(f64::from(us));
        }
        for (q, want) in [(0.5, 500.0), (0.99, 990.0), (1.0, 1000.0)] {
            let got = w.percentile(q);
            assert!((got - want).abs() <= want * 1e-3, "q {q}: {got} vs {want}");
        }
    }
}
