//! Poptrie against the reference model: hand-written edge cases, insertion order, every
//! direct-table width, both leaf widths, both walks, and random tables (proptest).

use proptest::prelude::*;

use super::layout::{Leaves, LEAF_TAG};
use super::*;
use crate::addr::Address;
use crate::engine::reference::Reference;
use crate::engine::Backend;
use crate::prefix::Prefix;

/// The addresses where answers change: each route's first and last address and their
/// neighbours, plus both ends of the space.
fn edges<A: Address>(table: &RouteTable<A>) -> Vec<A> {
    let mut out = vec![A::ZERO, A::MAX];
    for (p, _) in table.iter() {
        out.extend([p.first(), p.last()]);
        out.extend(p.first().checked_pred());
        out.extend(p.last().checked_succ());
    }
    out
}

/// Builds `table` with `bits` (both walks) and compares single, batched and raw batched
/// answers on `probes` with the reference model.
fn check_with<A: Family>(table: &RouteTable<A>, probes: &[A], bits: u32) {
    let reference = Reference::new(table);
    let want: Vec<Option<NextHop>> = probes.iter().map(|&a| reference.lookup(a)).collect();
    for backend in [Backend::Scalar, Backend::detect()] {
        let t = Poptrie::build_with(table, &BuildOptions::with_backend(backend), bits)
            .unwrap_or_else(|e| panic!("build s={bits}: {e}"));
        t.validate().unwrap();
        let label = format!("{} s={bits} {backend}", A::FAMILY);
        for (i, &a) in probes.iter().enumerate() {
            assert_eq!(t.lookup(a), want[i], "{label}: single {a:?}");
        }
        // Repeat the probes so the batch has full groups, a short one and the pipeline.
        let many: Vec<A> = probes
            .iter()
            .cycle()
            .take(probes.len() * 3 + 5)
            .copied()
            .collect();
        let want_many: Vec<Option<NextHop>> =
            want.iter().cycle().take(many.len()).copied().collect();
        let mut out = vec![Some(0x5eed); many.len()];
        t.lookup_batch(&many, &mut out).unwrap();
        assert_eq!(out, want_many, "{label}: batch");
        let want_raw: Vec<NextHop> = want_many.iter().map(|w| w.unwrap_or(0xdead_beef)).collect();
        // Every batch walk, whichever the build picked.
        for walk in [BatchWalk::Groups, BatchWalk::Stream, BatchWalk::Adaptive] {
            let mut t = t.clone();
            t.batch_walk = walk;
            let mut raw = vec![7; many.len()];
            t.lookup_batch_raw(&many, &mut raw, 0xdead_beef).unwrap();
            assert_eq!(raw, want_raw, "{label}: raw batch, {walk:?}");
            let mut out = vec![Some(0x5eed); many.len()];
            t.lookup_batch(&many, &mut out).unwrap();
            assert_eq!(out, want_many, "{label}: batch, {walk:?}");
        }
    }
}

fn check<A: Family>(table: &RouteTable<A>) {
    let probes = edges(table);
    let bits = if A::BITS == 32 {
        DIRECT_BITS_V4
    } else {
        DIRECT_BITS_V6
    };
    check_with(table, &probes, bits);
}

fn p4(s: &str) -> Prefix<u32> {
    Prefix::from_net(s.parse().unwrap()).unwrap()
}

fn p6(s: &str) -> Prefix<u128> {
    Prefix::from_net(s.parse().unwrap()).unwrap()
}

fn table<A: Address>(routes: &[(Prefix<A>, NextHop)]) -> RouteTable<A> {
    routes.iter().copied().collect()
}

#[test]
fn a_lone_16_is_found() {
    // The reference C Poptrie answers "no route" here.
    let t4 = table(&[(p4("10.1.0.0/16"), 5)]);
    let fib = Poptrie::build(&t4, &BuildOptions::default()).unwrap();
    assert_eq!(fib.lookup(0x0a01_2345), Some(5));
    assert_eq!(fib.lookup(0x0a02_0000), None);
    check(&t4);
    let t6 = table(&[(p6("2001::/16"), 5)]);
    check(&t6);
    assert_eq!(
        Poptrie::build(&t6, &BuildOptions::default())
            .unwrap()
            .lookup(0x2001 << 112),
        Some(5)
    );
}

#[test]
fn insertion_order_does_not_matter() {
    let routes4 = [
        (p4("0.0.0.0/0"), 1),
        (p4("10.0.0.0/8"), 2),
        (p4("10.1.0.0/16"), 3),
        (p4("10.1.2.0/24"), 4),
        (p4("10.1.2.3/32"), 5),
        (p4("10.1.2.128/25"), 6),
        (p4("10.1.3.0/24"), 2),
    ];
    fn build_in<A: Family>(order: impl Iterator<Item = (Prefix<A>, NextHop)>) -> Poptrie<A> {
        let mut t = RouteTable::new();
        for (p, nh) in order {
            t.insert(p, nh);
        }
        Poptrie::build(&t, &BuildOptions::default()).unwrap()
    }
    let shortest_first = build_in(routes4.iter().copied());
    let longest_first = build_in(routes4.iter().rev().copied());
    let mut by_len = routes4;
    by_len.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    let strictly_longest_first = build_in(by_len.iter().copied());
    let t = table(&routes4);
    for a in edges(&t) {
        let want = shortest_first.lookup(a);
        assert_eq!(longest_first.lookup(a), want, "{a:#x}");
        assert_eq!(strictly_longest_first.lookup(a), want, "{a:#x}");
    }
    assert_eq!(shortest_first.nodes, strictly_longest_first.nodes);
    assert_eq!(shortest_first.direct, strictly_longest_first.direct);
    check(&t);

    let routes6 = [
        (p6("2001:db8::/32"), 1),
        (p6("2001:db8:1::/48"), 2),
        (p6("2001:db8:1:2::/64"), 3),
        (p6("2001:db8:1:2::1/128"), 4),
    ];
    let a = build_in(routes6.iter().copied());
    let b = build_in(routes6.iter().rev().copied());
    for x in edges(&table(&routes6)) {
        assert_eq!(a.lookup(x), b.lookup(x));
    }
    check(&table(&routes6));
}

#[test]
fn full_length_default_and_top_of_space() {
    check(&table(&[(p4("0.0.0.0/0"), 9)]));
    check(&table(&[(p4("255.255.255.255/32"), 1)]));
    check(&table(&[
        (p4("0.0.0.0/0"), 9),
        (p4("255.255.255.255/32"), 1),
        (p4("255.255.255.0/24"), 2),
        (p4("0.0.0.0/32"), 3),
        (p4("128.0.0.0/1"), 4),
    ]));
    check(&table(&[
        (p6("::/0"), 9),
        (p6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128"), 1),
        (p6("ffff::/16"), 2),
        (p6("::/128"), 3),
        (p6("2001:db8:0:1::/64"), 4),
        (p6("2001:db8::/63"), 5),
        (p6("2001:db8:0:1:8000::/65"), 6),
    ]));
}

#[test]
fn every_length_alone_and_nested() {
    // Every length, each alone and all nested on one address (nested routes sharing a start).
    for len in 0..=32u8 {
        let p = Prefix::covering(0xc0a8_8181u32, len);
        check_with(
            &table(&[(p, u32::from(len))]),
            &edges(&table(&[(p, 0)])),
            18,
        );
    }
    let nested4: RouteTable<u32> = (0..=32u8)
        .step_by(3)
        .map(|l| (Prefix::covering(0xc0a8_8181u32, l), u32::from(l) + 100))
        .collect();
    check(&nested4);
    let nested6: RouteTable<u128> = (0..=128u8)
        .step_by(5)
        .map(|l| {
            (
                Prefix::covering(0x2001_0db8_8181_u128 << 80 | 0x77, l),
                u32::from(l),
            )
        })
        .collect();
    check(&nested6);
    for len in [
        1u8, 5, 6, 7, 17, 18, 19, 23, 24, 25, 47, 48, 63, 64, 65, 126, 127, 128,
    ] {
        let p = Prefix::covering(u128::MAX - 12345, len);
        check(&table(&[(p, 3)]));
    }
}

#[test]
fn duplicates_keep_the_last_and_an_empty_table_answers_nothing() {
    let mut t = RouteTable::new();
    t.insert(p4("10.0.0.0/8"), 1);
    t.insert(p4("10.0.0.0/8"), 2);
    let fib = Poptrie::build(&t, &BuildOptions::default()).unwrap();
    assert_eq!(fib.lookup(0x0a00_0001), Some(2));
    let empty = Poptrie::<u128>::build(&RouteTable::new(), &BuildOptions::default()).unwrap();
    assert_eq!(empty.lookup(0), None);
    assert_eq!(empty.lookup(u128::MAX), None);
    assert_eq!(empty.node_count(), 0);
    let mut out = [Some(1); 40];
    empty.lookup_batch(&[5; 40], &mut out).unwrap();
    assert_eq!(out, [None; 40]);
    check(&RouteTable::<u32>::new());
}

#[test]
fn next_hop_zero_and_max_are_routes() {
    let t = table(&[(p4("10.0.0.0/8"), 0), (p4("11.0.0.0/8"), u32::MAX)]);
    let fib = Poptrie::build(&t, &BuildOptions::default()).unwrap();
    assert_eq!(fib.lookup(0x0a00_0000), Some(0));
    assert_eq!(fib.lookup(0x0b00_0000), Some(u32::MAX));
    assert_eq!(fib.lookup(0x0c00_0000), None);
    check(&t);
}

#[test]
fn every_direct_width() {
    let t4: RouteTable<u32> = [
        (p4("0.0.0.0/0"), 1),
        (p4("10.0.0.0/7"), 2),
        (p4("10.128.0.0/9"), 3),
        (p4("10.130.7.0/24"), 4),
        (p4("10.130.7.9/32"), 5),
        (p4("255.255.254.0/23"), 6),
        (p4("255.255.255.255/32"), 7),
    ]
    .into_iter()
    .collect();
    let t6: RouteTable<u128> = [
        (p6("2000::/3"), 1),
        (p6("2001:db8::/32"), 2),
        (p6("2001:db8:ff00::/40"), 3),
        (p6("2001:db8:ff00:1::/64"), 4),
        (p6("2001:db8:ff00:1::1/128"), 5),
        (p6("ffff:ffff::/32"), 6),
    ]
    .into_iter()
    .collect();
    for bits in 1..=20 {
        check_with(&t4, &edges(&t4), bits);
        check_with(&t6, &edges(&t6), bits);
    }
    for bits in [0, 25] {
        assert!(matches!(
            Poptrie::build_with(&t4, &BuildOptions::default(), bits),
            Err(BuildError::Unsupported { .. })
        ));
    }
}

#[test]
fn more_than_65535_next_hops_use_wide_leaves() {
    let t: RouteTable<u32> = (0..70_000u32)
        .map(|i| (Prefix::new(0x0a00_0000 | (i << 8), 24).unwrap(), i * 7 + 1))
        .chain([(p4("10.0.0.0/8"), 3)])
        .collect();
    let fib = Poptrie::build(&t, &BuildOptions::default()).unwrap();
    assert!(matches!(fib.leaves, Leaves::Wide(_)));
    let probes: Vec<u32> = edges(&t).into_iter().step_by(7).collect();
    check_with(&t, &probes, 18);
    let narrow = Poptrie::build(
        &table(&[(p4("10.0.0.0/8"), 70_000)]),
        &BuildOptions::default(),
    )
    .unwrap();
    assert!(matches!(narrow.leaves, Leaves::Narrow(_)));
}

#[test]
fn redundant_routes_make_no_nodes_and_runs_compress() {
    // A /24 with its /8's next hop changes no answer: no node under the direct entry.
    let t = table(&[(p4("10.0.0.0/8"), 1), (p4("10.1.2.0/24"), 1)]);
    let fib = Poptrie::build(&t, &BuildOptions::default()).unwrap();
    assert_eq!(fib.node_count(), 0);
    // One /26 inside a /8: one node with three leaf runs (before, the /26, after).
    let t = table(&[(p4("10.0.0.0/8"), 1), (p4("10.1.2.64/26"), 2)]);
    let fib = Poptrie::build(&t, &BuildOptions::default()).unwrap();
    assert_eq!(fib.levels(), &[1, 1]);
    assert_eq!(fib.nodes[1].leaves(), 3);
    assert_eq!(
        fib.nodes[0].leaves(),
        1,
        "the child slot splits one run of the /8"
    );
    check(&t);
}

#[test]
fn validate_rejects_broken_structures() {
    let t = table(&[(p4("10.0.0.0/8"), 1), (p4("10.1.2.64/26"), 2)]);
    let good = Poptrie::build(&t, &BuildOptions::default()).unwrap();
    good.validate().unwrap();

    let mut cycle = good.clone();
    cycle.nodes[1].vector = 1;
    cycle.nodes[1].child_base = 0; // child 1 = itself
    assert!(cycle.validate().is_err());

    let mut no_run = good.clone();
    no_run.nodes[1].leafvec = 0;
    assert!(no_run.validate().is_err());

    let mut dangling = good.clone();
    let root = dangling
        .direct
        .iter()
        .position(|&d| d & LEAF_TAG == 0)
        .unwrap();
    dangling.direct[root] = 99;
    assert!(dangling.validate().is_err());

    let mut bad_hop = good.clone();
    bad_hop.direct[0] = LEAF_TAG | 1000;
    assert!(bad_hop.validate().is_err());

    let mut deep = good;
    deep.nodes[1].leafvec = 1;
    deep.nodes[1].leaf_base = 1_000_000;
    assert!(deep.validate().is_err());
}

#[test]
fn lines_count_direct_nodes_leaf_and_next_hop() {
    let t = table(&[(p4("10.0.0.0/8"), 1), (p4("10.1.2.64/26"), 2)]);
    let fib = Poptrie::build(&t, &BuildOptions::default()).unwrap();
    assert_eq!(fib.lines_touched(0x0b00_0000), 2, "direct entry + next hop");
    let deep = fib.lines_touched(0x0a01_0241);
    assert!(
        (5..=7).contains(&deep),
        "direct, 2 nodes, leaf, hop: {deep}"
    );
    assert_eq!(fib.lines_per_lookup(&[]), None);
}

#[test]
fn describe_names_every_part() {
    let t = table(&[(p4("10.0.0.0/8"), 1), (p4("10.1.2.64/26"), 2)]);
    let fib = Poptrie::build(&t, &BuildOptions::default()).unwrap();
    let d = fib.describe();
    let names: Vec<&str> = d.iter().map(|x| x.name).collect();
    for n in [
        "levels",
        "nodes",
        "leaves",
        "direct_bytes",
        "node_bytes",
        "leaf_bytes",
    ] {
        assert!(names.contains(&n), "{names:?}");
    }
    let bytes: u64 = d
        .iter()
        .filter_map(|x| match x.value {
            crate::engine::DetailValue::Bytes(b) => Some(b),
            _ => None,
        })
        .sum();
    assert_eq!(bytes as usize, fib.memory_bytes());
}

/// A random route: address bits, a length biased to the stride and direct-table edges, and a
/// next hop from a small set (so neighbours often share one and runs compress).
fn routes(bits: u8) -> impl Strategy<Value = Vec<(u128, u8, u32)>> {
    let len = prop_oneof![
        0..=bits,
        prop::sample::select(vec![0u8, 1, 6, 12, 16, 17, 18, 19, 24, 30, 31, 32]),
        prop::sample::select(vec![47u8, 48, 49, 63, 64, 65, 120, 126, 127, 128]),
    ];
    prop::collection::vec((any::<u128>(), len, 0u32..6), 0..40)
}

fn random_table<A: Family>(raw: &[(u128, u8, u32)], share: u128) -> RouteTable<A> {
    raw.iter()
        .map(|&(a, len, nh)| {
            // Many routes share their top bits, so they nest and meet in one node.
            let a = if a & 1 == 0 {
                a & !(u128::MAX >> 20) | (share & (u128::MAX >> 20))
            } else {
                a
            };
            let len = len.min(A::BITS);
            (Prefix::covering(A::from_u128_left(a), len), nh)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_ipv4_tables_match_the_reference(raw in routes(32), share in any::<u128>(), bits in prop::sample::select(vec![1u32, 6, 16, 18, 20])) {
        let t = random_table::<u32>(&raw, share);
        check_with(&t, &edges(&t), bits);
    }

    #[test]
    fn random_ipv6_tables_match_the_reference(raw in routes(128), share in any::<u128>(), bits in prop::sample::select(vec![1u32, 12, 16, 18, 20])) {
        let t = random_table::<u128>(&raw, share);
        check_with(&t, &edges(&t), bits);
    }
}
