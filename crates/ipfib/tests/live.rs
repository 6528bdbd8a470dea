//! `LiveFib` against the reference engine: a bounded stress test with concurrent writers and
//! readers, a property test over any sequence of updates, and the API's edge cases. Every
//! registered engine is run (engines enumerated from the registry, never listed), the stress
//! and property tests with every SIMD backend: the single-family engines (DXR is IPv4 only) on
//! their family, with the other one's updates refused. Each check of a final state goes
//! through the single and batch lookups of a reader handle and of a snapshot.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use ipfib::engine::{self, BuildOptions, EngineInfo};
use ipfib::{Backend, LiveError, LiveFib, LiveOptions, NextHop, Table, Update};
use ipfib::{Prefix, RouteTable};
use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use proptest::prelude::*;

fn net(s: &str) -> IpNet {
    s.parse().expect("test prefix")
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test address")
}

/// Whether `info` can hold routes of family `A` (single-family engines refuse the other).
fn holds<A: ipfib::Address>(info: &EngineInfo) -> bool {
    let one: RouteTable<A> = [(Prefix::new(A::ZERO, 0).expect("/0"), 1)]
        .into_iter()
        .collect();
    info.build(&one, &BuildOptions::default()).is_ok()
}

/// The registered engines that hold both families, which the dual-stack tests run.
fn dual_stack() -> impl Iterator<Item = &'static EngineInfo> {
    engine::engines()
        .iter()
        .filter(|e| holds::<u32>(e) && holds::<u128>(e))
}

/// Every address worth asking about a route set: each prefix's first and last address and
/// their neighbours, plus fixed probes.
fn probes(table: &Table) -> Vec<IpAddr> {
    let mut out = vec![
        ip("0.0.0.0"),
        ip("255.255.255.255"),
        ip("::"),
        ip("ffff::1"),
    ];
    for (p, _) in table.v4().iter() {
        let (a, b) = (p.first(), p.last());
        for x in [a, b, a.wrapping_sub(1), b.wrapping_add(1)] {
            out.push(IpAddr::V4(Ipv4Addr::from(x)));
        }
    }
    for (p, _) in table.v6().iter() {
        let (a, b) = (p.first(), p.last());
        for x in [a, b, a.wrapping_sub(1), b.wrapping_add(1)] {
            out.push(IpAddr::V6(Ipv6Addr::from(x)));
        }
    }
    out
}

/// The live table's current version answers exactly like the reference engine built from
/// `expected`, and holds exactly its routes.
fn assert_matches_reference(live: &LiveFib, expected: &Table) {
    assert_eq!(&live.table(), expected, "route set after flush");
    let reference = engine::by_name("reference").unwrap();
    let r4 = reference
        .build(expected.v4(), &BuildOptions::default())
        .unwrap();
    let r6 = reference
        .build(expected.v6(), &BuildOptions::default())
        .unwrap();
    let mut reader = live.reader();
    let probes = probes(expected);
    for &a in &probes {
        let want = match a {
            IpAddr::V4(v) => r4.lookup(u32::from(v)),
            IpAddr::V6(v) => r6.lookup(u128::from(v)),
        };
        assert_eq!(reader.lookup(a), want, "{} at {a}", live.engine_name());
        assert_eq!(
            live.lookup(a),
            want,
            "{} at {a} (no handle)",
            live.engine_name()
        );
    }
    // The batch paths of the handle and of a snapshot, per family, with a miss value no
    // test route uses.
    const MISS: NextHop = 0xDEAD_BEEF;
    let (mut v4, mut v6) = (Vec::new(), Vec::new());
    for a in &probes {
        match a {
            IpAddr::V4(v) => v4.push(u32::from(*v)),
            IpAddr::V6(v) => v6.push(u128::from(*v)),
        }
    }
    let want4: Vec<NextHop> = v4.iter().map(|&a| r4.lookup(a).unwrap_or(MISS)).collect();
    let want6: Vec<NextHop> = v6.iter().map(|&a| r6.lookup(a).unwrap_or(MISS)).collect();
    let name = live.engine_name();
    let mut out = vec![0; v4.len()];
    reader.lookup_v4_batch(&v4, &mut out, MISS).unwrap();
    assert_eq!(out, want4, "{name}: reader IPv4 batch");
    live.snapshot()
        .lookup_v4_batch(&v4, &mut out, MISS)
        .unwrap();
    assert_eq!(out, want4, "{name}: snapshot IPv4 batch");
    let mut out = vec![0; v6.len()];
    reader.lookup_v6_batch(&v6, &mut out, MISS).unwrap();
    assert_eq!(out, want6, "{name}: reader IPv6 batch");
    live.snapshot()
        .lookup_v6_batch(&v6, &mut out, MISS)
        .unwrap();
    assert_eq!(out, want6, "{name}: snapshot IPv6 batch");
    let bytes6: Vec<[u8; 16]> = v6.iter().map(|a| a.to_be_bytes()).collect();
    out.fill(0);
    reader
        .lookup_v6_bytes_batch(&bytes6, &mut out, MISS)
        .unwrap();
    assert_eq!(out, want6, "{name}: reader IPv6 bytes batch");
    let bytes4: Vec<[u8; 4]> = v4.iter().map(|a| a.to_be_bytes()).collect();
    let mut out = vec![0; v4.len()];
    reader
        .lookup_v4_bytes_batch(&bytes4, &mut out, MISS)
        .unwrap();
    assert_eq!(out, want4, "{name}: reader IPv4 bytes batch");
}

#[test]
fn updates_are_visible_after_flush_and_bad_ones_are_refused() {
    for info in dual_stack() {
        let mut t = Table::new();
        t.insert(net("10.0.0.0/8"), 1).unwrap();
        t.insert(net("2001:db8::/32"), 2).unwrap();
        let live = LiveFib::new(&t, info.name()).unwrap();
        let mut reader = live.reader();
        assert_eq!(reader.snapshot().version(), 0);

        let seq = live.insert(net("10.1.0.0/16"), 3).unwrap();
        assert_eq!(seq, 1);
        live.remove(net("2001:db8::/32")).unwrap();
        live.apply([
            Update::Insert(net("::/0"), 4),
            Update::Insert(net("10.1.0.0/16"), 5),
        ])
        .unwrap();
        live.flush().unwrap();
        assert_eq!(reader.lookup(ip("10.1.2.3")), Some(5), "later update wins");
        assert_eq!(reader.lookup(ip("10.2.0.0")), Some(1));
        assert_eq!(reader.lookup(ip("2001:db8::1")), Some(4));
        assert_eq!(
            live.lookup_prefix(ip("10.1.2.3")),
            Some((net("10.1.0.0/16"), 5))
        );

        // A batch with one bad update is refused whole, naming it.
        let before = live.submitted();
        let err = live
            .apply([
                Update::Insert(net("10.9.0.0/16"), 9),
                Update::Remove(net("10.0.0.1/8")),
            ])
            .unwrap_err();
        assert!(
            matches!(err, LiveError::InvalidPrefix { index: 1, .. }),
            "{err}"
        );
        assert_eq!(
            live.submitted(),
            before,
            "nothing of a refused batch is queued"
        );
        live.flush().unwrap();
        assert_eq!(reader.lookup(ip("10.9.0.1")), Some(1));

        // Replacing the whole set.
        let mut other = Table::new();
        other.insert(net("192.0.2.0/24"), 7).unwrap();
        live.replace_all(other.clone()).unwrap();
        live.flush().unwrap();
        assert_matches_reference(&live, &other);

        // Re-announcing the same route changes nothing and publishes nothing.
        let publishes = live.publishes();
        live.insert(net("192.0.2.0/24"), 7).unwrap();
        live.flush().unwrap();
        assert_eq!(live.publishes(), publishes);
    }
}

#[test]
fn dropping_publishes_what_is_queued_and_readers_outlive_the_table() {
    let live = LiveFib::with_options(
        &Table::new(),
        "planb",
        LiveOptions::default().with_delay(Duration::from_secs(3600)),
    )
    .unwrap();
    let mut reader = live.reader();
    live.insert(net("10.0.0.0/8"), 1).unwrap();
    let start = Instant::now();
    drop(live);
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "drop skips the delay"
    );
    assert_eq!(
        reader.lookup(ip("10.0.0.1")),
        Some(1),
        "an accepted update is never lost"
    );
}

#[test]
fn an_endless_delay_publishes_on_flush() {
    let live = LiveFib::with_options(
        &Table::new(),
        "planb",
        LiveOptions::default().with_delay(Duration::MAX),
    )
    .unwrap();
    let seq = live.insert(net("10.0.0.0/8"), 1).unwrap();
    thread::sleep(Duration::from_millis(20));
    assert_eq!(live.lookup(ip("10.0.0.1")), None, "not due yet");
    assert_eq!(
        live.published(),
        seq - 1,
        "published counts visible updates only"
    );
    live.flush().unwrap();
    assert_eq!(live.lookup(ip("10.0.0.1")), Some(1));
    assert_eq!(live.published(), seq);
    live.insert(net("10.0.0.0/8"), 2).unwrap();
    live.flush().unwrap();
    assert_eq!(
        live.lookup(ip("10.0.0.1")),
        Some(2),
        "the rebuilder is still running"
    );
}

#[test]
fn flush_does_not_wait_for_the_coalescing_delay() {
    let live = LiveFib::with_options(
        &Table::new(),
        "reference",
        LiveOptions::default().with_delay(Duration::from_secs(3600)),
    )
    .unwrap();
    live.insert(net("10.0.0.0/8"), 1).unwrap();
    live.flush().unwrap();
    assert_eq!(live.lookup(ip("10.0.0.1")), Some(1));
}

#[test]
fn old_versions_are_freed_when_no_reader_holds_them() {
    let live = LiveFib::new(&Table::new(), "planb").unwrap();
    let mut reader = live.reader();
    let first = Arc::downgrade(reader.snapshot());
    live.insert(net("10.0.0.0/8"), 1).unwrap();
    live.flush().unwrap();
    assert!(
        first.upgrade().is_some(),
        "the reader still holds version 0"
    );
    reader.refresh();
    assert!(first.upgrade().is_none(), "freed once the reader moved on");
    // Version 1 has the route; compaction steps may have published more since.
    assert!(reader.snapshot().version() >= 1);
}

/// Prefixes of the stress test: pair `k` is 10.k.0.0/16 and 2001:db8:k::/48, both changed in
/// the same batch, so a reader that sees one of them at generation g and the other at another
/// generation saw a mix of versions.
fn pair(k: u16) -> (IpNet, IpNet, IpAddr, IpAddr) {
    let v4 = Ipv4Net::new(Ipv4Addr::new(10, k as u8, 0, 0), 16).unwrap();
    let v6 = Ipv6Net::new(Ipv6Addr::new(0x2001, 0xdb8, k, 0, 0, 0, 0, 0), 48).unwrap();
    let a4 = IpAddr::V4(Ipv4Addr::new(10, k as u8, 7, 7));
    let a6 = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, k, 0, 0, 0, 0, 7));
    (IpNet::V4(v4), IpNet::V6(v6), a4, a6)
}

/// The next hop of the covering routes (10/8 and 2001:db8::/32), seen when a pair is removed.
const COVER: NextHop = 0;
const PAIRS: u16 = 8;

/// Writers churn pairs of routes; readers check every answer against the generations that
/// were live while they looked. Generation g of a pair: odd = both routes present with next
/// hop g, even = both removed. `committed[k]` is a generation known visible before a lookup
/// starts (written after `wait_visible`), `submitted[k]` is raised before a generation is
/// submitted; an answer must come from a generation between the two read around the lookup.
#[test]
fn stress_readers_see_only_live_versions_and_the_end_equals_the_reference() {
    for info in engine::engines() {
        let v6 = holds::<u128>(info);
        if !holds::<u32>(info) {
            continue; // every registered engine holds IPv4; one that did not would be skipped
        }
        for backend in Backend::available() {
            let build = BuildOptions::with_backend(backend);
            stress(info.name(), v6, build, Duration::from_millis(250));
        }
    }
}

/// One stress run on `engine_name` built with `build`; `v6`: the engine holds IPv6 too, and
/// each pair has its IPv6 route (else pairs are IPv4 routes alone).
fn stress(engine_name: &str, v6: bool, build: BuildOptions, run_for: Duration) {
    let mut base = Table::new();
    base.insert(net("10.0.0.0/8"), COVER).unwrap();
    if v6 {
        base.insert(net("2001:db8::/32"), COVER).unwrap();
    }
    // Background routes so builds are not trivially small.
    for i in 0..2000u32 {
        let p = Ipv4Net::new(Ipv4Addr::from(0x2000_0000 + (i << 8)), 24).unwrap();
        base.insert(IpNet::V4(p), i).unwrap();
    }
    let live = Arc::new(
        LiveFib::with_options(
            &base,
            engine_name,
            LiveOptions::default()
                .with_delay(Duration::from_micros(50))
                .with_build(build),
        )
        .unwrap(),
    );
    let committed: Arc<Vec<AtomicU64>> = Arc::new((0..PAIRS).map(|_| AtomicU64::new(0)).collect());
    let submitted: Arc<Vec<AtomicU64>> = Arc::new((0..PAIRS).map(|_| AtomicU64::new(0)).collect());
    let stop = Arc::new(AtomicBool::new(false));
    let writers = 2u16;
    let readers = 2;
    let barrier = Arc::new(Barrier::new(usize::from(writers) + readers + 1));
    let mut handles = Vec::new();
    for w in 0..writers {
        let (live, committed, submitted, stop, barrier) = (
            live.clone(),
            committed.clone(),
            submitted.clone(),
            stop.clone(),
            barrier.clone(),
        );
        handles.push(thread::spawn(move || {
            barrier.wait();
            let mut step = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // Writer w owns the pairs k with k % writers == w.
                let k = w + writers * ((step as u16) % (PAIRS / writers));
                let (n4, n6, _, _) = pair(k);
                let g = submitted[k as usize].load(Ordering::SeqCst) + 1;
                submitted[k as usize].store(g, Ordering::SeqCst);
                let mut batch = if g % 2 == 1 {
                    vec![
                        Update::Insert(n4, g as NextHop),
                        Update::Insert(n6, g as NextHop),
                    ]
                } else {
                    vec![Update::Remove(n4), Update::Remove(n6)]
                };
                batch.truncate(if v6 { 2 } else { 1 });
                let seq = live.apply(batch).unwrap();
                if step.is_multiple_of(4) {
                    live.wait_visible(seq).unwrap();
                    committed[k as usize].store(g, Ordering::SeqCst);
                }
                step += 1;
            }
        }));
    }
    let checks = Arc::new(AtomicU64::new(0));
    for r in 0..readers {
        let (mut reader, committed, submitted, stop, barrier, checks) = (
            live.reader(),
            committed.clone(),
            submitted.clone(),
            stop.clone(),
            barrier.clone(),
            checks.clone(),
        );
        handles.push(thread::spawn(move || {
            barrier.wait();
            let mut i = r as u16;
            while !stop.load(Ordering::Relaxed) {
                let k = i % PAIRS;
                i = i.wrapping_add(1);
                let (_, _, a4, a6) = pair(k);
                let low = committed[k as usize].load(Ordering::SeqCst);
                let snap = reader.snapshot().clone();
                let (h4, h6) = (snap.lookup(a4), snap.lookup(a6));
                let high = submitted[k as usize].load(Ordering::SeqCst);
                if v6 {
                    assert_eq!(h4, h6, "pair {k}: one version has both routes or neither");
                }
                live_answer(k, h4, low, high);
                // And single lookups through the handle (which may have moved to a newer
                // version than the snapshot: the window closes after them).
                let singles = [reader.lookup(a4), reader.lookup(a6)];
                let high = submitted[k as usize].load(Ordering::SeqCst);
                live_answer(k, singles[0], low, high);
                if v6 {
                    live_answer(k, singles[1], low, high);
                }
                checks.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    barrier.wait();
    // At least `run_for`, and on a machine too busy to publish a few versions in that time
    // (other tests, other jobs) a little longer: the checks below need some publishes.
    thread::sleep(run_for);
    let patience = std::time::Instant::now();
    while live.publishes() <= 10 && patience.elapsed() < Duration::from_secs(10) {
        thread::sleep(Duration::from_millis(10));
    }
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("no thread failed a check");
    }
    assert!(checks.load(Ordering::Relaxed) > 100, "readers ran");
    live.flush().unwrap();
    let mut expected = base.clone();
    for k in 0..PAIRS {
        let g = submitted[k as usize].load(Ordering::SeqCst);
        let (n4, n6, _, _) = pair(k);
        if g % 2 == 1 {
            expected.insert(n4, g as NextHop).unwrap();
            if v6 {
                expected.insert(n6, g as NextHop).unwrap();
            }
        }
    }
    assert!(live.publishes() > 10, "{engine_name}: the test published");
    assert_matches_reference(&live, &expected);
}

/// `answer`, the next hop a lookup of pair `k` gave, comes from a generation of the pair that
/// was live during the lookup: from `low` (visible before it started) to `high` (submitted
/// by the time it ended). Odd generations are the routes with the generation as next hop;
/// even ones (and 0, never inserted) leave the covering route's answer.
fn live_answer(k: u16, answer: Option<NextHop>, low: u64, high: u64) {
    let h = answer.expect("the covering routes are never removed");
    let ok = if h == COVER {
        (low..=high).any(|g| g % 2 == 0)
    } else {
        let g = u64::from(h);
        g % 2 == 1 && (low..=high).contains(&g)
    };
    assert!(
        ok,
        "pair {k}: answer {h} is from no generation live during the lookup ({low}..={high})"
    );
}

/// An update drawn from a small universe of nested prefixes, so inserts, removes and
/// replacements hit the same routes often.
fn arb_update() -> impl Strategy<Value = Update> {
    let v4 = (
        0u32..16,
        prop_oneof![Just(8u8), Just(16), Just(24), Just(32)],
    )
        .prop_map(|(i, len)| {
            let addr = 0x0a00_0000u32 | (i << 20) | (i << 9);
            IpNet::V4(Ipv4Net::new(Ipv4Addr::from(addr), len).unwrap().trunc())
        });
    let v6 = (
        0u128..16,
        prop_oneof![Just(0u8), Just(32), Just(48), Just(128)],
    )
        .prop_map(|(i, len)| {
            let addr = (0x2001_0db8u128 << 96) | (i << 84) | i;
            IpNet::V6(Ipv6Net::new(Ipv6Addr::from(addr), len).unwrap().trunc())
        });
    let net = prop_oneof![v4, v6];
    prop_oneof![
        (net.clone(), 0u32..4).prop_map(|(n, nh)| Update::Insert(n, nh)),
        net.prop_map(Update::Remove),
    ]
}

#[derive(Clone, Debug)]
enum Step {
    One(Update),
    Batch(Vec<Update>),
    Flush,
}

fn arb_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => arb_update().prop_map(Step::One),
        2 => prop::collection::vec(arb_update(), 0..8).prop_map(Step::Batch),
        1 => Just(Step::Flush),
    ]
}

fn apply_model(model: &mut BTreeMap<IpNet, NextHop>, u: &Update) {
    match *u {
        Update::Insert(n, nh) => {
            model.insert(n, nh);
        }
        Update::Remove(n) => {
            model.remove(&n);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any sequence of inserts, removes and batches, with flushes anywhere, then a flush:
    /// the live table holds exactly the model's routes and answers like the reference, on
    /// every registered engine (a single-family one gets its family's updates), with the
    /// backend each case picks.
    #[test]
    fn any_update_sequence_then_flush_equals_the_reference(
        steps in prop::collection::vec(arb_step(), 0..40),
        delay_us in prop_oneof![Just(0u64), Just(50), Just(2000)],
        backend in 0usize..3,
    ) {
        let available = Backend::available();
        let backend = available[backend % available.len()];
        for info in engine::engines() {
            // A single-family engine gets its family's updates only (the other family's
            // are refused, as its own test checks).
            let (v4, v6) = (holds::<u32>(info), holds::<u128>(info));
            let mine = |u: &Update| match u {
                Update::Insert(n, _) | Update::Remove(n) => match n {
                    IpNet::V4(_) => v4,
                    IpNet::V6(_) => v6,
                },
            };
            let live = LiveFib::with_options(
                &Table::new(),
                info.name(),
                LiveOptions::default()
                    .with_delay(Duration::from_micros(delay_us))
                    .with_build(BuildOptions::with_backend(backend)),
            )
            .unwrap();
            let mut model = BTreeMap::new();
            for step in &steps {
                match step {
                    Step::One(u) if mine(u) => {
                        match u {
                            Update::Insert(n, nh) => live.insert(*n, *nh).unwrap(),
                            Update::Remove(n) => live.remove(*n).unwrap(),
                        };
                        apply_model(&mut model, u);
                    }
                    Step::One(_) => {}
                    Step::Batch(b) => {
                        let b: Vec<Update> = b.iter().filter(|u| mine(u)).cloned().collect();
                        live.apply(b.clone()).unwrap();
                        b.iter().for_each(|u| apply_model(&mut model, u));
                    }
                    Step::Flush => live.flush().unwrap(),
                }
            }
            live.flush().unwrap();
            let mut expected = Table::new();
            for (n, nh) in &model {
                expected.insert(*n, *nh).unwrap();
            }
            assert_matches_reference(&live, &expected);
        }
    }
}

/// A single-family engine in a live table: its family's updates are applied and answered
/// like the reference; the other family's are refused when submitted, naming the engine.
#[test]
fn a_single_family_engine_applies_its_family_and_refuses_the_other() {
    let single = engine::engines()
        .iter()
        .filter(|e| holds::<u32>(e) != holds::<u128>(e));
    for info in single {
        let v4 = holds::<u32>(info);
        let (mine, other) = if v4 {
            (
                ["10.0.0.0/8", "10.1.0.0/16", "10.1.2.0/24"],
                "2001:db8::/32",
            )
        } else {
            (
                ["2001:db8::/32", "2001:db8:1::/48", "2001:db8:1:2::/64"],
                "10.0.0.0/8",
            )
        };
        let mut t = Table::new();
        t.insert(net(mine[0]), 1).unwrap();
        let live = LiveFib::new(&t, info.name()).unwrap();
        live.insert(net(mine[1]), 2).unwrap();
        live.insert(net(mine[2]), 3).unwrap();
        live.remove(net(mine[1])).unwrap();
        let err = live.insert(net(other), 4).unwrap_err();
        assert!(
            matches!(err, LiveError::UnsupportedFamily { engine, .. } if engine == info.name()),
            "{err}"
        );
        live.flush().unwrap();
        t.insert(net(mine[2]), 3).unwrap();
        assert_matches_reference(&live, &t);
        live.replace_all(Table::new()).unwrap();
        live.flush().unwrap();
        assert_matches_reference(&live, &Table::new());
    }
}

/// Two writers submitting without pause, faster than builds publish: the queue never holds
/// more than its bound (plus one batch), every update is still published, and the final
/// table is exactly what the writers wrote. Without backpressure the queue grew to millions
/// of updates (past 2 GiB) in this test's shape.
#[test]
fn writers_faster_than_the_builds_wait_for_room_in_the_queue() {
    const LIMIT: usize = 2_000;
    const PER_WRITER: u32 = 60_000;
    let live = LiveFib::with_options(
        &Table::new(),
        "planb",
        LiveOptions::default().with_max_queued(LIMIT),
    )
    .unwrap();
    let stop = AtomicBool::new(false);
    let most = AtomicU64::new(0);
    thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                most.fetch_max(live.queued() as u64, Ordering::Relaxed);
                thread::yield_now();
            }
        });
        let writers: Vec<_> = (0..2u32)
            .map(|w| {
                let live = &live;
                s.spawn(move || {
                    for i in 0..PER_WRITER {
                        // Writer w owns 10.w.0.0/16; each /32 is written, some twice.
                        let a = Ipv4Addr::from(0x0a00_0000 | w << 16 | (i % 50_000));
                        live.insert(IpNet::V4(Ipv4Net::new(a, 32).unwrap()), i)
                            .unwrap();
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
    });
    live.flush().unwrap();
    let most = most.load(Ordering::Relaxed) as usize;
    assert!(
        most <= LIMIT,
        "the queue held {most} updates, the bound is {LIMIT}"
    );
    assert_eq!(live.queued(), 0);
    assert_eq!(live.submitted(), u64::from(2 * PER_WRITER));
    let table = live.table();
    assert_eq!(table.len(), 100_000);
    let mut reader = live.reader();
    for w in 0..2u32 {
        for i in [0u32, 9_999, 10_000, 49_999] {
            let a = IpAddr::V4(Ipv4Addr::from(0x0a00_0000 | w << 16 | i));
            // The last write of /32 i was at i + 50,000 when that is below PER_WRITER.
            let last = if i + 50_000 < PER_WRITER {
                i + 50_000
            } else {
                i
            };
            assert_eq!(reader.lookup(a), Some(last), "{a}");
        }
    }
}

/// `try_apply` refuses a batch the queue has no room for, whole and at once; after a flush it
/// fits. A batch larger than the bound is taken when the queue is empty.
#[test]
fn try_apply_refuses_when_the_queue_is_full() {
    let live = LiveFib::with_options(
        &Table::new(),
        "planb",
        LiveOptions::default()
            .with_delay(Duration::MAX)
            .with_max_queued(3),
    )
    .unwrap();
    let ins = |s: &str, nh| Update::Insert(net(s), nh);
    live.try_apply([ins("10.0.0.0/8", 1), ins("11.0.0.0/8", 2)])
        .unwrap();
    let err = live
        .try_apply([ins("12.0.0.0/8", 3), ins("13.0.0.0/8", 4)])
        .unwrap_err();
    assert!(
        matches!(
            err,
            LiveError::QueueFull {
                queued: 2,
                batch: 2,
                limit: 3
            }
        ),
        "{err}"
    );
    assert_eq!(live.queued(), 2, "nothing of the refused batch was queued");
    live.flush().unwrap();
    live.try_apply([ins("12.0.0.0/8", 3), ins("13.0.0.0/8", 4)])
        .unwrap();
    live.flush().unwrap();
    let big: Vec<_> = (0..10u8)
        .map(|i| ins(&format!("20.{i}.0.0/16"), u32::from(i)))
        .collect();
    live.try_apply(big).unwrap();
    live.flush().unwrap();
    assert_eq!(live.table().len(), 14);
    assert_eq!(live.lookup(ip("12.1.2.3")), Some(3));
}

/// Waiting for a sequence number nobody has been given is an error at once, not a hang.
#[test]
fn waiting_for_an_unissued_sequence_number_is_an_error() {
    let live = LiveFib::new(&Table::new(), "planb").unwrap();
    let seq = live.insert(net("10.0.0.0/8"), 1).unwrap();
    live.wait_visible(seq).unwrap();
    let err = live.wait_visible(seq + 1).unwrap_err();
    assert!(
        matches!(err, LiveError::NotIssued { seq: s, submitted } if s == seq + 1 && submitted == seq),
        "{err}"
    );
}
