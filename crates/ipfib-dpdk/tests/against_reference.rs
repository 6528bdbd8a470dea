//! Every DPDK comparator against `ipfib::engine::reference::Reference`: hand-written edge cases (default route,
//! /1 halves, /24 /32 /64 /128 boundaries, the top of the space, next hop 0 and u32::MAX)
//! and real tables from `../shared/data`.
#![cfg(feature = "dpdk")]

mod support;

use ipfib::engine::reference::Reference;
use ipfib::{Address, Lookup, Prefix, RouteTable};
use ipfib_dpdk::{DpdkError, DpdkFib, DpdkFib6, DpdkLpm, DpdkLpm6, NativeBulk};
use rand::{Rng, SeedableRng};

fn table<A: Address>(routes: &[(&str, u32)]) -> RouteTable<A>
where
    A::Net: std::str::FromStr,
    <A::Net as std::str::FromStr>::Err: std::fmt::Debug,
{
    routes
        .iter()
        .map(|&(s, nh)| (Prefix::from_net(s.parse().unwrap()).unwrap(), nh))
        .collect()
}

/// The addresses where answers change: each route's first and last address and their
/// neighbours, both ends of the space, and `extra` random addresses.
fn probes<A: Address>(table: &RouteTable<A>, extra: usize, seed: u64) -> Vec<A> {
    let mut out = vec![A::ZERO, A::MAX];
    for (p, _) in table.iter() {
        out.extend(
            [
                Some(p.first()),
                Some(p.last()),
                p.first().checked_pred(),
                p.last().checked_succ(),
            ]
            .into_iter()
            .flatten(),
        );
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    out.extend((0..extra).map(|_| A::from_u128_left(rng.gen())));
    out
}

/// Single and batch lookups of `engine` equal the reference's at every address.
fn assert_same<A: Address>(engine: &dyn Lookup<A>, table: &RouteTable<A>, addrs: &[A]) {
    let reference = Reference::new(table);
    let mut batch = vec![Some(u32::MAX - 7); addrs.len()];
    engine.lookup_batch(addrs, &mut batch).unwrap();
    for (&a, &b) in addrs.iter().zip(&batch) {
        let want = reference.lookup(a);
        assert_eq!(
            engine.lookup(a),
            want,
            "{} single lookup of {:?}",
            engine.name(),
            a.to_ip()
        );
        assert_eq!(b, want, "{} batch lookup of {:?}", engine.name(), a.to_ip());
    }
}

/// Every comparator of one family, built from one table.
type Engines<A> = Vec<Box<dyn Lookup<A>>>;

fn v6_engines(t: &RouteTable<u128>) -> Engines<u128> {
    vec![
        Box::new(DpdkFib6::build(t).unwrap()),
        Box::new(DpdkLpm6::build(t).unwrap()),
    ]
}

fn v4_engines(t: &RouteTable<u32>) -> Engines<u32> {
    vec![
        Box::new(DpdkFib::build(t).unwrap()),
        Box::new(DpdkLpm::build(t).unwrap()),
    ]
}

const V6_EDGES: &[(&str, u32)] = &[
    ("::/0", 0),
    ("8000::/1", 2),
    ("2001:d00::/24", 24),
    ("2001:d80::/25", 25),
    ("2001:db8::/32", 32),
    ("2001:db8::/33", 33),
    ("2001:db8:0:1::/64", 64),
    ("2001:db8:0:1::/65", 65),
    ("2001:db8::/63", 63),
    ("2001:db8:0:1::1/128", 128),
    ("2001:db8:0:1:ffff:ffff:ffff:ffff/128", 129),
    ("2001:db8:ffff::/48", 48),
    ("ffff::/16", 16),
    ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ff00/120", 120),
    ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", 1_000_000),
];

const V4_EDGES: &[(&str, u32)] = &[
    ("0.0.0.0/0", 0),
    ("0.0.0.0/1", 1),
    ("10.0.0.0/8", 8),
    ("10.1.0.0/16", 16),
    ("10.1.2.0/24", 24),
    ("10.1.2.0/25", 25),
    ("10.1.2.128/31", 31),
    ("10.1.2.129/32", 32),
    ("10.1.3.0/32", 33),
    ("255.255.255.0/24", 240),
    ("255.255.255.255/32", (1 << 24) - 1),
];

#[test]
fn ipv6_edges_with_a_default_route() {
    let t = table::<u128>(V6_EDGES);
    let addrs = probes(&t, 2000, 6);
    for e in v6_engines(&t) {
        assert_same(e.as_ref(), &t, &addrs);
    }
}

#[test]
fn ipv6_edges_without_a_default_route_miss() {
    let t = table::<u128>(&V6_EDGES[1..]);
    let addrs = probes(&t, 2000, 7);
    for e in v6_engines(&t) {
        assert_eq!(e.lookup(0), None, "{}", e.name());
        assert_same(e.as_ref(), &t, &addrs);
    }
}

#[test]
fn ipv4_edges_with_a_default_route() {
    let t = table::<u32>(V4_EDGES);
    let addrs = probes(&t, 2000, 4);
    for e in v4_engines(&t) {
        assert_same(e.as_ref(), &t, &addrs);
    }
}

#[test]
fn ipv4_edges_without_a_default_route_miss() {
    let t = table::<u32>(&V4_EDGES[1..]);
    let addrs = probes(&t, 2000, 5);
    for e in v4_engines(&t) {
        assert_eq!(e.lookup(u32::MAX - 256), None, "{}", e.name());
        assert_same(e.as_ref(), &t, &addrs);
    }
}

#[test]
fn a_default_route_alone_covers_everything() {
    let t = table::<u128>(&[("::/0", 9)]);
    for e in v6_engines(&t) {
        assert_same(e.as_ref(), &t, &probes(&t, 200, 1));
        assert_eq!(e.lookup(u128::MAX), Some(9), "{}", e.name());
    }
    let t = table::<u32>(&[("0.0.0.0/0", 9)]);
    for e in v4_engines(&t) {
        assert_same(e.as_ref(), &t, &probes(&t, 200, 1));
        assert_eq!(e.lookup(0), Some(9), "{}", e.name());
    }
}

#[test]
fn empty_tables_miss_everywhere() {
    let t = RouteTable::<u128>::new();
    for e in v6_engines(&t) {
        assert_same(e.as_ref(), &t, &probes(&t, 100, 2));
    }
    let t = RouteTable::<u32>::new();
    for e in v4_engines(&t) {
        assert_same(e.as_ref(), &t, &probes(&t, 100, 2));
    }
}

#[test]
fn fib_stores_the_widest_next_hops_exactly() {
    let t = table::<u128>(&[("2001:db8::/32", u32::MAX), ("2001:db8::/48", 0)]);
    let fib6 = DpdkFib6::build(&t).unwrap();
    assert_eq!(fib6.entry_bytes(), 8);
    assert_same(&fib6, &t, &probes(&t, 100, 3));
    let t = table::<u32>(&[("10.0.0.0/8", u32::MAX), ("10.0.0.0/30", (1 << 31) - 2)]);
    let fib = DpdkFib::build(&t).unwrap();
    assert_eq!(fib.entry_bytes(), 8);
    assert_same(&fib, &t, &probes(&t, 100, 3));
}

/// Each entry size DPDK offers, at the largest next hop it holds and one past it: the narrowest
/// entry is chosen and answers exactly (with routes longer than /24, so tbl8 entries too).
#[test]
fn fib_entries_are_the_narrowest_that_hold_the_next_hops() {
    for (max, bytes) in [
        (126, 1),
        (127, 2),
        (32_766, 2),
        (32_767, 4),
        ((1 << 31) - 2, 4),
    ] {
        let t = table::<u32>(&[
            ("10.0.0.0/8", max),
            ("10.1.2.0/25", 0),
            ("10.1.2.128/26", 5),
        ]);
        let fib = DpdkFib::build(&t).unwrap();
        assert_eq!(fib.entry_bytes(), bytes, "rte_fib, largest next hop {max}");
        assert_same(&fib, &t, &probes(&t, 100, 4));
    }
    for (max, bytes) in [(0, 2), (32_766, 2), (32_767, 4), ((1 << 31) - 2, 4)] {
        let t = table::<u128>(&[
            ("2001:db8::/32", max),
            ("2001:db8::/64", 0),
            ("2001:db8::1/128", 6),
        ]);
        let fib6 = DpdkFib6::build(&t).unwrap();
        assert_eq!(
            fib6.entry_bytes(),
            bytes,
            "rte_fib6, largest next hop {max}"
        );
        assert_same(&fib6, &t, &probes(&t, 100, 4));
    }
    // Small next hops, but more tbl8 groups (one per /24 block with a /25) than a 1-byte entry
    // can count: DPDK refuses such a structure, so the entry is 2 bytes.
    let long: Vec<String> = (0..200).map(|i| format!("10.0.{i}.0/25")).collect();
    let routes: Vec<(&str, u32)> = long.iter().map(|s| (s.as_str(), 3)).collect();
    let t = table::<u32>(&routes);
    let fib = DpdkFib::build(&t).unwrap();
    assert_eq!(fib.entry_bytes(), 2);
    assert_same(&fib, &t, &probes(&t, 100, 5));
}

#[test]
fn lpm_refuses_next_hops_wider_than_its_field() {
    let t = table::<u32>(&[("10.0.0.0/8", 1), ("10.0.0.0/16", 1 << 24)]);
    match DpdkLpm::build(&t) {
        Err(DpdkError::NextHopTooWide {
            prefix,
            next_hop,
            max,
            ..
        }) => {
            assert_eq!(
                (prefix.as_str(), next_hop, max),
                ("10.0.0.0/16", 1 << 24, (1 << 24) - 1)
            );
        }
        other => panic!("expected NextHopTooWide, got {other:?}"),
    }
    let t = table::<u128>(&[("::/0", 1 << 21)]);
    match DpdkLpm6::build(&t) {
        Err(DpdkError::NextHopTooWide {
            prefix,
            next_hop,
            max,
            ..
        }) => {
            assert_eq!(
                (prefix.as_str(), next_hop, max),
                ("::/0", 1 << 21, (1 << 21) - 1)
            );
        }
        other => panic!("expected NextHopTooWide, got {other:?}"),
    }
    // The largest representable next hops are accepted and answered exactly.
    let t = table::<u128>(&[("::/0", (1 << 21) - 1), ("2001:db8::/32", 0)]);
    assert_same(&DpdkLpm6::build(&t).unwrap(), &t, &probes(&t, 100, 8));
}

#[test]
fn batches_of_odd_lengths_and_mismatched_outputs() {
    let t = table::<u128>(V6_EDGES);
    let addrs = probes(&t, 0, 0);
    for e in v6_engines(&t) {
        for len in [0, 1, 63, 64, 65, 130] {
            let a: Vec<u128> = addrs.iter().copied().cycle().take(len).collect();
            assert_same(e.as_ref(), &t, &a);
        }
        let mut out = vec![None; 3];
        assert!(
            e.lookup_batch(&addrs[..4], &mut out).is_err(),
            "{}",
            e.name()
        );
        assert_eq!(
            out,
            vec![None; 3],
            "{} wrote despite the length error",
            e.name()
        );
    }
}

/// The native bulk lookup on keys converted once, in one call and in odd pieces, decodes to
/// the reference's answers; a length mismatch writes nothing.
fn assert_native_same<A: Address, E: NativeBulk<A>>(
    engine: &E,
    table: &RouteTable<A>,
    addrs: &[A],
) {
    let reference = Reference::new(table);
    let keys: Vec<E::Key> = addrs.iter().map(|&a| E::key(a)).collect();
    let mut whole = vec![E::Hop::default(); keys.len()];
    engine.lookup_bulk(&keys, &mut whole).unwrap();
    let mut pieces = vec![E::Hop::default(); keys.len()];
    for (k, h) in keys.chunks(37).zip(pieces.chunks_mut(37)) {
        engine.lookup_bulk(k, h).unwrap();
    }
    for ((&a, &w), &p) in addrs.iter().zip(&whole).zip(&pieces) {
        let want = reference.lookup(a);
        assert_eq!(
            engine.decode(w),
            want,
            "{} native {:?}",
            engine.name(),
            a.to_ip()
        );
        assert_eq!(
            engine.decode(p),
            want,
            "{} native {:?}",
            engine.name(),
            a.to_ip()
        );
    }
    let mut short = vec![E::Hop::default(); keys.len().saturating_sub(1)];
    assert!(keys.is_empty() || engine.lookup_bulk(&keys, &mut short).is_err());
    engine.lookup_bulk(&[], &mut []).unwrap();
}

#[test]
fn native_bulk_lookups_answer_like_the_reference_and_say_what_answers() {
    let t6 = table::<u128>(V6_EDGES);
    let a6 = probes(&t6, 2000, 11);
    let fib6 = DpdkFib6::build(&t6).unwrap();
    assert_native_same(&fib6, &t6, &a6);
    assert_native_same(&DpdkLpm6::build(&t6).unwrap(), &t6, &a6);
    let t4 = table::<u32>(V4_EDGES);
    let a4 = probes(&t4, 2000, 12);
    let fib = DpdkFib::build(&t4).unwrap();
    assert_native_same(&fib, &t4, &a4);
    assert_native_same(&DpdkLpm::build(&t4).unwrap(), &t4, &a4);
    // IPv6 keys are the 16 network-order bytes a packet carries.
    assert_eq!(
        <DpdkFib6 as NativeBulk<u128>>::key(0x2001_0db8 << 96),
        [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    for (info, avx512) in [
        (fib6.bulk_lookup(), fib6.uses_avx512()),
        (fib.bulk_lookup(), fib.uses_avx512()),
    ] {
        assert_eq!(info.requested, Some("avx512"));
        assert_eq!(info.selected == "avx512", avx512, "{info:?}");
        assert_eq!(info.next_hop_bytes, 4, "{info:?}");
    }
    assert_eq!(fib6.bulk_lookup().call, "rte_fib6_lookup_bulk");
}

#[test]
fn comparators_are_send_and_sync_and_answer_from_many_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<DpdkFib6>();
    assert_send_sync::<DpdkLpm6>();
    assert_send_sync::<DpdkFib>();
    assert_send_sync::<DpdkLpm>();

    let t = table::<u128>(V6_EDGES);
    let engines = ipfib_dpdk::comparators_v6(&t).unwrap();
    let names: Vec<&str> = engines.iter().map(|e| e.name()).collect();
    assert_eq!(names, ["dpdk-fib6", "dpdk-lpm6"]);
    std::thread::scope(|s| {
        for seed in 0..3 {
            let (engines, t) = (&engines, &t);
            s.spawn(move || {
                let addrs = probes(t, 3000, 100 + seed);
                for e in engines {
                    assert_same(e.as_ref(), t, &addrs);
                }
            });
        }
    });
    let t4 = table::<u32>(V4_EDGES);
    let names: Vec<&str> = ipfib_dpdk::comparators_v4(&t4)
        .unwrap()
        .iter()
        .map(|e| e.name())
        .collect();
    assert_eq!(names, ["dpdk-fib", "dpdk-lpm"]);
}

#[test]
fn memory_is_measured_from_the_dpdk_heap() {
    // Each structure has a 2^24-entry first-level table of at least 4 bytes per entry.
    let t = table::<u128>(V6_EDGES);
    for e in v6_engines(&t) {
        assert!(
            e.memory_bytes() >= 64 << 20,
            "{}: {}",
            e.name(),
            e.memory_bytes()
        );
    }
    let t = table::<u32>(V4_EDGES);
    for e in v4_engines(&t) {
        assert!(
            e.memory_bytes() >= 64 << 20,
            "{}: {}",
            e.name(),
            e.memory_bytes()
        );
    }
}

#[test]
fn the_eal_leaves_the_callers_cpu_affinity_alone() {
    fn affinity() -> Vec<usize> {
        // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity writes at most its size.
        unsafe {
            let mut set: libc_cpu_set::CpuSet = std::mem::zeroed();
            assert_eq!(
                libc_cpu_set::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set),
                0
            );
            (0..1024)
                .filter(|&c| set.bits[c / 64] >> (c % 64) & 1 == 1)
                .collect()
        }
    }
    let before = affinity();
    ipfib_dpdk::init_eal(ipfib_dpdk::eal::DEFAULT_MEM_MIB).unwrap();
    DpdkFib6::build(&table::<u128>(&[("::/0", 1)])).unwrap();
    assert_eq!(affinity(), before);
}

/// The one libc call the affinity test needs, declared here so the test needs no libc crate.
mod libc_cpu_set {
    #[repr(C)]
    pub struct CpuSet {
        pub bits: [u64; 16],
    }
    extern "C" {
        pub fn sched_getaffinity(pid: i32, size: usize, set: *mut CpuSet) -> i32;
    }
}

fn real_table_case<A: Address>(file: &str, build: fn(&RouteTable<A>) -> Engines<A>)
where
    <A::Ip as std::str::FromStr>::Err: std::fmt::Debug,
{
    let Some(dir) = support::shared_data() else {
        eprintln!("skipping: ../shared/data not found");
        return;
    };
    let t = support::load_gz::<A>(&dir.join(file));
    assert!(t.len() > 1000, "{file} loaded only {} routes", t.len());
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let mut addrs = support::matched_trace(&t, 100_000, || rng.gen());
    addrs.extend((0..20_000).map(|_| A::from_u128_left(rng.gen())));
    for e in build(&t) {
        assert_same(e.as_ref(), &t, &addrs);
    }
}

#[test]
fn real_ipv6_table_with_a_default_route_and_real_next_hops() {
    real_table_case::<u128>("ipv6/ipv6-routeviews6-20150922-bestpath.txt.gz", v6_engines);
}

#[test]
fn real_ipv6_dfz_table() {
    real_table_case::<u128>("ipv6/ipv6-ris-dfz10-20241220.txt.gz", v6_engines);
}

/// `rte_fib` on a 2015 full table, both comparators on a 2002 one: `rte_lpm_add` scans the
/// rules of the new route's length, so a build costs O(routes²) (the 2015 table's 577,703 routes
/// took 50.7 s in the test profile, 96 % of it in `rte_lpm_add` by `perf record -e cpu-clock`,
/// AMD EPYC Zen 3), and the 2002 table (112,988 routes) checks the same code.
#[test]
fn real_ipv4_full_table() {
    real_table_case::<u32>("ipv4/ipv4-bgpdump-et-20151023.txt.gz", |t| {
        vec![Box::new(DpdkFib::build(t).unwrap())]
    });
    real_table_case::<u32>("ipv4/ipv4-rrc00-20020722-bestpath.txt.gz", v4_engines);
}

/// The exact tbl8 counts of `ipfib_dpdk::sizing` are accepted by DPDK: had DPDK refused a
/// route for lack of tbl8 groups, the build would have retried with the larger bound, and
/// `tbl8_groups` would show it.
fn assert_sizing_is_exact(t6: &RouteTable<u128>, t4: &RouteTable<u32>) {
    use ipfib_dpdk::sizing;
    let routes6: Vec<Prefix<u128>> = sizing::routes_without_default(t6)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    let routes4: Vec<Prefix<u32>> = sizing::routes_without_default(t4)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    let fib6 = DpdkFib6::build(t6).unwrap();
    assert_eq!(
        u64::from(fib6.tbl8_groups()),
        sizing::fib6_reserved_tbl8_groups(t6).max(1)
    );
    let lpm6 = DpdkLpm6::build(t6).unwrap();
    assert_eq!(
        u64::from(lpm6.tbl8_groups()),
        sizing::ipv6_tbl8_groups(routes6).max(1)
    );
    let fib = DpdkFib::build(t4).unwrap();
    assert_eq!(
        u64::from(fib.tbl8_groups()),
        sizing::ipv4_tbl8_groups(t4.iter().map(|(p, _)| p)).max(1)
    );
    let lpm = DpdkLpm::build(t4).unwrap();
    assert_eq!(
        u64::from(lpm.tbl8_groups()),
        sizing::ipv4_tbl8_groups(routes4).max(1)
    );
}

#[test]
fn exact_tbl8_sizing_is_enough_for_dpdk() {
    assert_sizing_is_exact(&table(V6_EDGES), &table(V4_EDGES));
    let Some(dir) = support::shared_data() else {
        eprintln!("skipping: ../shared/data not found");
        return;
    };
    let t6 = support::load_gz::<u128>(&dir.join("ipv6/ipv6-routeviews6-20150922-bestpath.txt.gz"));
    let t4 = support::load_gz::<u32>(&dir.join("ipv4/ipv4-rrc00-20020722-bestpath.txt.gz"));
    assert_sizing_is_exact(&t6, &t4);
}
