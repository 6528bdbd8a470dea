//! Every engine against the reference model on random tables biased towards the hard cases,
//! and on large tables whose trees reach every depth the batched walk is compiled for.

use std::collections::BTreeMap;

use ipfib::engine::planb::PlanB;
use ipfib::engine::BuildOptions;
use ipfib::{Address, Build, NextHop, Prefix, RouteTable};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

use crate::support::{check_table, inside, probes, reference_answers, Plan, THOROUGH};

/// One raw route request `(shape, address bits, length pick, next-hop pick)`; `shape` picks how
/// the address is derived, so tables get nesting, shared starts, adjacency on both sides,
/// duplicates, the top of the space and the /32, /48, /64 boundaries.
pub type Raw = (u8, u128, u8, u32);

/// Lengths a third of the routes get: the family's edges and the layout's boundaries (the
/// 16-bit direct table, IPv4's /32, IPv6's /48 cells and /64), and beyond /64 for IPv6.
/// Clamped to the family's width.
const SPECIAL_LENGTHS: [u8; 21] = [
    0, 1, 8, 15, 16, 17, 24, 31, 32, 33, 47, 48, 49, 63, 64, 65, 80, 96, 112, 127, 128,
];

/// The length of a raw route.
fn length<A: Address>(len_pick: u8) -> u8 {
    if len_pick.is_multiple_of(3) {
        SPECIAL_LENGTHS[usize::from(len_pick / 3) % SPECIAL_LENGTHS.len()].min(A::BITS)
    } else {
        len_pick % (A::BITS + 1)
    }
}

/// The next hop of a raw route: mostly a few small values (neighbours with equal answers
/// merge), sometimes 0, `u32::MAX` or a value near it.
fn next_hop(pick: u32) -> NextHop {
    match pick % 16 {
        0 => 0,
        1 => u32::MAX,
        2 => u32::MAX - 1,
        3 => pick,
        k => k % 6,
    }
}

/// The table the raw routes make, inserted in order (a later duplicate replaces the earlier
/// route), checked against a last-insert-wins model of the same inserts.
pub fn make_table<A: Address>(raws: &[Raw]) -> RouteTable<A> {
    let mut table = RouteTable::new();
    let mut model: BTreeMap<Prefix<A>, NextHop> = BTreeMap::new();
    let mut made: Vec<Prefix<A>> = Vec::new();
    for &(shape, raw, len_pick, hop_pick) in raws {
        let len = length::<A>(len_pick);
        let random = A::from_u128_left(raw);
        let prefix = match (shape % 12, made.last()) {
            (0, _) => Prefix::covering(A::ZERO, len),
            (1, _) => Prefix::covering(A::MAX, len),
            // Shares the start of the last route.
            (2, Some(p)) => Prefix::covering(p.first(), len),
            // Starts right after the last route ends (wrapping to 0 at the top).
            (3, Some(p)) => Prefix::covering(p.last().checked_succ().unwrap_or(A::ZERO), len),
            // Nested inside the last route.
            (4, Some(p)) => Prefix::covering(inside(*p, raw), len.max(p.len())),
            // Ends right before the last route starts.
            (5, Some(p)) => Prefix::covering(p.first().checked_pred().unwrap_or(A::MAX), len),
            // One /32 region, so routes pile up in one chunk.
            (6, _) => Prefix::covering(A::from_u128_left(0x2001_0db8u128 << 96 | raw >> 32), len),
            // One /48 region (IPv6: one fallback cell; IPv4: one /16 chunk).
            (7, _) => Prefix::covering(
                A::from_u128_left(0x2001_0db8_0001u128 << 80 | raw >> 48),
                len,
            ),
            // A duplicate of an earlier route with a new next hop.
            (8, Some(_)) => made[raw as usize % made.len()],
            // Covers the last route's start.
            (9, Some(p)) => Prefix::covering(p.first(), len.min(p.len())),
            _ => Prefix::covering(random, len),
        };
        let hop = next_hop(hop_pick);
        made.push(prefix);
        table.insert(prefix, hop);
        model.insert(prefix, hop);
    }
    let got: Vec<(Prefix<A>, NextHop)> = table.iter().collect();
    let want: Vec<(Prefix<A>, NextHop)> = model.into_iter().collect();
    assert_eq!(
        got, want,
        "the table keeps the last insert of every prefix, in (address, length) order"
    );
    table
}

/// Probes plus an address inside every route, and the same two models agreeing: the reference
/// and `RouteTable::longest_match`.
fn check_random<A: Address>(raws: &[Raw], random: &[u128]) {
    let table = make_table::<A>(raws);
    let mut addrs = probes(&table, random);
    addrs.extend(
        table
            .iter()
            .zip(random.iter().cycle())
            .map(|((p, _), &r)| inside(p, r)),
    );
    let want = reference_answers(&table, &addrs);
    for (a, w) in addrs.iter().zip(&want) {
        assert_eq!(
            table.longest_match(*a).map(|(_, nh)| nh),
            *w,
            "the two models disagree on {}",
            a.to_ip()
        );
    }
    check_table(&table, &addrs, &RANDOM_TABLES);
}

/// Every path and batch length; the registered reference engine (the model itself) on every
/// fourth address only, which keeps the case count up.
const RANDOM_TABLES: Plan = Plan {
    model_step: 4,
    ..THOROUGH
};

fn raws() -> impl Strategy<Value = Vec<Raw>> {
    prop::collection::vec(any::<Raw>(), 0..160)
}

fn randoms() -> impl Strategy<Value = Vec<u128>> {
    prop::collection::vec(any::<u128>(), 0..64)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn no_engine_disagrees_with_the_reference_on_hard_ipv6_tables(raws in raws(), random in randoms()) {
        check_random::<u128>(&raws, &random);
    }

    #[test]
    fn no_engine_disagrees_with_the_reference_on_hard_ipv4_tables(raws in raws(), random in randoms()) {
        check_random::<u32>(&raws, &random);
    }
}

/// The raw routes of the two failures the old proptest file kept, run through the same table
/// maker (see also `edge_cases::old_proptest_regressions_*`).
#[test]
fn old_proptest_regression_seeds_still_pass() {
    for raws in [[(0u8, 0u128, 83u8, 0u32)], [(1, 0, 17, 0)]] {
        check_random::<u128>(&raws, &[]);
        check_random::<u32>(&raws, &[]);
    }
}

/// Batched lookups of big tables, where most answers are checked in full groups.
const LARGE: Plan = Plan {
    single_step: 3,
    misses: &[u32::MAX],
    batch_lengths: &[1, 31, 32, 33, 1000],
    window: 20_000,
    model_step: 16,
};

/// Tables large enough for trees of several levels in one chunk, and many chunks (the old
/// `deep_chunks_match_reference`).
#[test]
fn deep_chunks_and_many_chunks_match_the_reference() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut t6 = RouteTable::<u128>::new();
    let mut t4 = RouteTable::<u32>::new();
    for i in 0..60_000u32 {
        // Dense /17../48s in one /16 (a deep tree), /9../32s in one /8, and some anywhere.
        let a6 = (0x2a00u128 << 112) | (u128::from(rng.gen::<u32>()) << 80);
        t6.insert(Prefix::covering(a6, rng.gen_range(17..=48)), i);
        let a4 = (10u32 << 24) | (rng.gen::<u32>() >> 8);
        t4.insert(Prefix::covering(a4, rng.gen_range(9..=32)), i);
        if i % 10 == 0 {
            t6.insert(Prefix::covering(rng.gen(), rng.gen_range(0..=128)), i);
            t4.insert(Prefix::covering(rng.gen(), rng.gen_range(0..=32)), i);
        }
    }
    let random: Vec<u128> = (0..20_000).map(|_| rng.gen()).collect();
    let mut p6: Vec<u128> = t6
        .iter()
        .step_by(3)
        .map(|(p, _)| inside(p, rng.gen()))
        .collect();
    p6.extend(
        t6.iter()
            .step_by(5)
            .flat_map(|(p, _)| [p.first(), p.last(), p.last().wrapping_add(1)]),
    );
    p6.extend(random.iter().copied());
    p6.extend((0..20_000).map(|_| (0x2a00u128 << 112) | (rng.gen::<u128>() >> 16)));
    check_table(&t6, &p6, &LARGE);
    let mut p4: Vec<u32> = t4
        .iter()
        .step_by(3)
        .map(|(p, _)| inside(p, rng.gen()))
        .collect();
    p4.extend(
        t4.iter()
            .step_by(5)
            .flat_map(|(p, _)| [p.first(), p.last(), p.last().wrapping_add(1)]),
    );
    p4.extend(random.iter().map(|&r| (r >> 96) as u32));
    p4.extend((0..20_000).map(|_| (10u32 << 24) | (rng.gen::<u32>() >> 8)));
    check_table(&t4, &p4, &LARGE);
}

/// The batched walk is compiled once per tree depth; a table for each depth, with `n` routes
/// at every other position of one chunk (IPv6 /48s, IPv4 /32s), so each route adds two keys
/// to the chunk's tree. PlanB's own depth is asserted so the sizes keep covering every depth
/// (the other engines are checked on the same tables).
#[test]
fn batched_walk_is_exact_at_every_tree_depth() {
    let mut depths6 = Vec::new();
    for n in [3usize, 50, 800, 12_000, 200_000, 240_000] {
        let t: RouteTable<u128> = (0..n)
            .map(|i| {
                (
                    Prefix::new((0x2a00u128 << 112) | ((2 * i as u128 + 1) << 80), 48).unwrap(),
                    i as u32,
                )
            })
            .collect();
        depths6.push(
            PlanB::build(&t, &BuildOptions::default())
                .expect("builds")
                .depth(),
        );
        check_table(&t, &depth_probes(&t, n as u64), &LARGE);
    }
    let mut depths4 = Vec::new();
    for n in [4usize, 100, 3_000, 30_000] {
        let t: RouteTable<u32> = (0..n)
            .map(|i| {
                (
                    Prefix::new(0x0a00_0000 | (2 * i as u32 + 1), 32).unwrap(),
                    i as u32,
                )
            })
            .collect();
        depths4.push(
            PlanB::build(&t, &BuildOptions::default())
                .expect("builds")
                .depth(),
        );
        check_table(&t, &depth_probes(&t, n as u64), &LARGE);
    }
    // `depth()` counts the direct-table step too: 2 = a single leaf per chunk.
    assert_eq!(
        depths6,
        [2, 3, 4, 5, 6, 7],
        "IPv6 tables should cover every batched depth"
    );
    assert_eq!(
        depths4,
        [2, 3, 4, 5],
        "IPv4 tables should cover every depth a /16 chunk can have"
    );
}

/// Route boundaries (of every 7th route) and random addresses of the chunk and of the space.
fn depth_probes<A: Address>(t: &RouteTable<A>, seed: u64) -> Vec<A> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let first = t.iter().next().map(|(p, _)| p).expect("routes");
    let chunk = Prefix::covering(first.first(), 16);
    let mut out: Vec<A> = t
        .iter()
        .step_by(7)
        .flat_map(|(p, _)| {
            [
                p.first(),
                p.last(),
                p.first().checked_pred().unwrap_or(A::ZERO),
                p.last().checked_succ().unwrap_or(A::MAX),
            ]
        })
        .collect();
    out.extend((0..30_000).map(|_| inside(chunk, rng.gen())));
    out.extend((0..5_000).map(|_| A::from_u128_left(rng.gen())));
    out
}

/// Tables shaped like today's Internet (`ipfib-gen`'s DFZ and tier-1 profiles), so realistic
/// nesting and length mixes are covered even where the shared real tables are absent: matched,
/// uniform and whole-space traces, and the route boundaries.
#[test]
fn generated_internet_shaped_tables_match_the_reference() {
    use ipfib_gen::TraceKind;
    fn family<A: Address>(table: &RouteTable<A>) {
        let mut addrs: Vec<A> = probes(table, &[]).into_iter().step_by(3).collect();
        for (kind, seed) in [
            (TraceKind::Matched, 11),
            (TraceKind::Uniform, 12),
            (TraceKind::Space, 13),
        ] {
            addrs.extend(ipfib_gen::trace(table, kind, 20_000, seed));
        }
        check_table(table, &addrs, &LARGE);
    }
    family(&ipfib_gen::fib_v6(40_000, 1));
    family(&ipfib_gen::fib_v4(40_000, 2));
}
