//! CP-Trie against the reference model: named edge cases (default route, host routes, nesting
//! across stride boundaries, the empty table), insertion order, every stride, both leaf
//! widths, both backends, and random tables (proptest).

use proptest::prelude::*;

use super::layout::LEAF_TAG;
use super::*;
use crate::addr::Address;
use crate::engine::reference::Reference;
use crate::engine::Backend;
use crate::prefix::Prefix;

/// Each route's first and last address and their neighbours, and both ends of the space.
fn edges<A: Address>(table: &RouteTable<A>) -> Vec<A> {
    let mut out = vec![A::ZERO, A::MAX];
    for (p, _) in table.iter() {
        out.extend([p.first(), p.last()]);
        out.extend(p.first().checked_pred());
        out.extend(p.last().checked_succ());
    }
    out
}

/// Builds `table` with `(bits, stride)` on both backends and compares single, batched and
/// raw batched answers on `probes` with the reference model.
fn check_with<A: Family>(table: &RouteTable<A>, probes: &[A], bits: u32, stride: u32) {
    let reference = Reference::new(table);
    let want: Vec<Option<NextHop>> = probes.iter().map(|&a| reference.lookup(a)).collect();
    for backend in [Backend::Scalar, Backend::detect()] {
        let t = CpTrie::build_with(table, &BuildOptions::with_backend(backend), bits, stride)
            .unwrap_or_else(|e| panic!("build s={bits} k={stride}: {e}"));
        t.validate().unwrap();
        let label = format!("{} s={bits} k={stride} {backend}", A::FAMILY);
        for (i, &a) in probes.iter().enumerate() {
            assert_eq!(t.lookup(a), want[i], "{label}: single {a:?}");
        }
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
        let mut raw = vec![7; many.len()];
        t.lookup_batch_raw(&many, &mut raw, 0xdead_beef).unwrap();
        assert_eq!(raw, want_raw, "{label}: raw batch");
    }
}

/// The default widths and a spread of strides.
fn check<A: Family>(table: &RouteTable<A>) {
    let probes = edges(table);
    for (bits, stride) in [(1, 6), (16, 8), (12, 10), (18, 7), (20, 12), (16, 16)] {
        check_with(table, &probes, bits, stride);
    }
    let t = CpTrie::build(table, &BuildOptions::default()).unwrap();
    check_with(table, &probes, t.direct_bits(), t.stride());
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
fn default_route_and_host_routes_at_both_ends() {
    check(&table(&[(p4("0.0.0.0/0"), 9)]));
    check(&table(&[(p4("255.255.255.255/32"), 1)]));
    check(&table(&[
        (p4("0.0.0.0/0"), 9),
        (p4("255.255.255.255/32"), 1),
        (p4("255.255.255.0/24"), 2),
        (p4("0.0.0.0/32"), 3),
        (p4("10.1.2.3/32"), 4),
        (p4("128.0.0.0/1"), 5),
    ]));
    check(&table(&[
        (p6("::/0"), 9),
        (p6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128"), 1),
        (p6("ffff::/16"), 2),
        (p6("::/128"), 3),
        (p6("2001:db8::1/128"), 4),
        (p6("2001:db8:0:1::/64"), 5),
        (p6("2001:db8:0:1:8000::/65"), 6),
    ]));
}

#[test]
fn nested_prefixes_across_stride_boundaries() {
    // Every length nested on one address, so routes end on, just before and just after every
    // node boundary of every stride checked.
    let nested4: RouteTable<u32> = (0..=32u8)
        .map(|l| (Prefix::covering(0xc0a8_8181u32, l), u32::from(l) + 100))
        .collect();
    check(&nested4);
    let every_other4: RouteTable<u32> = (0..=32u8)
        .step_by(2)
        .map(|l| (Prefix::covering(0x8181_8181u32, l), u32::from(l % 3)))
        .collect();
    check(&every_other4);
    let nested6: RouteTable<u128> = (0..=128u8)
        .step_by(3)
        .map(|l| {
            (
                Prefix::covering(0x2001_0db8_8181_u128 << 80 | 0x77, l),
                u32::from(l),
            )
        })
        .collect();
    check(&nested6);
    for len in [
        1u8, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 63, 64, 65, 127, 128,
    ] {
        let p = Prefix::covering(u128::MAX - 12345, len);
        check(&table(&[(p, 3)]));
        let q = Prefix::covering(0x1234_5678u32, len.min(32));
        check(&table(&[(q, 3)]));
    }
}

#[test]
fn every_stride_and_direct_width() {
    let t4 = table(&[
        (p4("10.0.0.0/8"), 1),
        (p4("10.1.0.0/16"), 2),
        (p4("10.1.2.0/23"), 3),
        (p4("10.1.2.77/32"), 4),
        (p4("10.200.0.0/13"), 5),
    ]);
    let t6 = table(&[
        (p6("2001:db8::/32"), 1),
        (p6("2001:db8:1::/48"), 2),
        (p6("2001:db8:1:2::/64"), 3),
        (p6("2001:db8:1:2::1/128"), 4),
    ]);
    for stride in MIN_STRIDE..=MAX_STRIDE {
        for bits in [1, 8, 13, 16, 24] {
            check_with(&t4, &edges(&t4), bits, stride);
            check_with(&t6, &edges(&t6), bits, stride);
        }
    }
    assert!(CpTrie::build_with(&t4, &BuildOptions::default(), 16, 5).is_err());
    assert!(CpTrie::build_with(&t4, &BuildOptions::default(), 16, 17).is_err());
    assert!(CpTrie::build_with(&t4, &BuildOptions::default(), 0, 8).is_err());
    assert!(CpTrie::build_with(&t4, &BuildOptions::default(), 25, 8).is_err());
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
        (p4("10.1.3.0/26"), 7),
    ];
    fn build_in<A: Family>(order: &[(Prefix<A>, NextHop)]) -> CpTrie<A> {
        let mut t = RouteTable::new();
        for &(p, nh) in order {
            t.insert(p, nh);
        }
        CpTrie::build(&t, &BuildOptions::default()).unwrap()
    }
    let base = build_in(&routes4);
    // Shuffled orders (a fixed LCG, so the test is repeatable).
    let mut seed = 0x9e37_79b9_u64;
    for _ in 0..20 {
        let mut order = routes4;
        for i in (1..order.len()).rev() {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            order.swap(i, (seed >> 33) as usize % (i + 1));
        }
        let other = build_in(&order);
        assert_eq!(other.direct, base.direct);
        assert_eq!(other.chunks, base.chunks);
        assert_eq!(other.leaves.len(), base.leaves.len());
        for a in edges(&table(&routes4)) {
            assert_eq!(other.lookup(a), base.lookup(a), "{a:#x}");
        }
    }
    let routes6 = [
        (p6("2001:db8::/32"), 1),
        (p6("2001:db8:1::/48"), 2),
        (p6("2001:db8:1:2::/64"), 3),
        (p6("2001:db8:1:2::1/128"), 4),
    ];
    let mut rev = routes6;
    rev.reverse();
    let (a, b) = (build_in(&routes6), build_in(&rev));
    assert_eq!(a.chunks, b.chunks);
    assert_eq!(a.direct, b.direct);
}

#[test]
fn an_empty_table_answers_nothing_and_duplicates_keep_the_last() {
    let empty = CpTrie::<u128>::build(&RouteTable::new(), &BuildOptions::default()).unwrap();
    assert_eq!(empty.lookup(0), None);
    assert_eq!(empty.lookup(u128::MAX), None);
    assert_eq!(empty.node_count(), 0);
    assert_eq!(empty.direct_bits(), 1);
    let mut out = [Some(1); 40];
    empty.lookup_batch(&[5u128; 40], &mut out).unwrap();
    assert!(out.iter().all(Option::is_none));
    let empty4 = CpTrie::<u32>::build(&RouteTable::new(), &BuildOptions::default()).unwrap();
    assert_eq!(empty4.lookup(0x0a00_0000), None);
    let mut t = RouteTable::new();
    t.insert(p4("10.0.0.0/8"), 1);
    t.insert(p4("10.0.0.0/8"), 2);
    let fib = CpTrie::build(&t, &BuildOptions::default()).unwrap();
    assert_eq!(fib.lookup(0x0a00_0001), Some(2));
    assert!(CpTrie::build(&t, &BuildOptions::default())
        .unwrap()
        .lookup_batch(&[1u32; 3], &mut [None; 2])
        .is_err());
}

#[test]
fn more_than_65535_next_hops_use_wide_leaves() {
    let t: RouteTable<u32> = (0..70_000u32)
        .map(|i| (Prefix::new(0x0a00_0000 | (i << 4), 28).unwrap(), i))
        .collect();
    let fib = CpTrie::build(&t, &BuildOptions::default()).unwrap();
    assert!(matches!(fib.leaves, Leaves::Wide(_)));
    let probes: Vec<u32> = edges(&t).into_iter().step_by(7).collect();
    check_with(&t, &probes, 16, 8);
}

#[test]
fn validate_rejects_broken_structures() {
    let t = table(&[(p4("10.1.2.0/24"), 1), (p4("10.1.2.3/32"), 2)]);
    let good = CpTrie::build_with(&t, &BuildOptions::default(), 16, 8).unwrap();
    good.validate().unwrap();
    let mut bad = good.clone();
    let root = bad.direct.iter().position(|d| d & LEAF_TAG == 0).unwrap();
    bad.direct[root] = 99;
    assert!(bad.validate().is_err());
    let mut bad = good.clone();
    bad.chunks[1].child_base = 1000;
    assert!(bad.validate().is_err(), "non-cumulative counts");
    let mut bad = good.clone();
    bad.stride = 17;
    assert!(bad.validate().is_err());
}

#[test]
fn lines_count_direct_chunk_per_node_leaf_and_next_hop() {
    let t = table(&[(p4("10.0.0.0/8"), 1), (p4("10.1.2.64/26"), 2)]);
    let fib = CpTrie::build_with(&t, &BuildOptions::default(), 16, 8).unwrap();
    assert_eq!(fib.lines_touched(0x0b00_0000), 2, "direct entry + next hop");
    // 10.1/16 is a node (10.1.2.64/26 below it), 10.1.2/24 another: two chunks.
    let deep = fib.lines_touched(0x0a01_0241);
    assert!(
        (5..=7).contains(&deep),
        "direct, 2 chunks, leaf, hop: {deep}"
    );
    assert_eq!(fib.lines_per_lookup(&[]), None);
}

#[test]
fn describe_names_strides_levels_nodes_and_bytes() {
    let t = table(&[(p4("10.1.2.0/24"), 1), (p4("10.1.2.3/32"), 2)]);
    let fib = CpTrie::build_with(&t, &BuildOptions::default(), 16, 8).unwrap();
    let names: Vec<String> = fib.describe().iter().map(|d| d.name.to_string()).collect();
    for n in [
        "direct_bits",
        "stride",
        "levels",
        "nodes_per_level",
        "nodes",
        "direct_bytes",
        "node_bytes",
        "leaf_bytes",
        "next_hop_bytes",
    ] {
        assert!(names.iter().any(|x| x == n), "{n} in {names:?}");
    }
    assert_eq!(fib.levels(), &[1, 1]);
    assert_eq!(fib.node_count(), 2);
    assert_eq!(
        fib.memory_bytes(),
        (1 << 16) * 4 + 2 * 4 * 24 + fib.leaves.bytes() + 3 * 4
    );
}

/// Random routes with lengths biased to stride and direct-table edges.
fn routes(bits: u8) -> impl Strategy<Value = Vec<(u128, u8, u32)>> {
    let len = prop_oneof![
        0..=bits,
        prop::sample::select(vec![0u8, 1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32]),
        prop::sample::select(vec![47u8, 48, 49, 63, 64, 65, 120, 127, 128]),
    ];
    prop::collection::vec((any::<u128>(), len, 0u32..6), 0..40)
}

fn random_table<A: Family>(raw: &[(u128, u8, u32)], share: u128) -> RouteTable<A> {
    raw.iter()
        .map(|&(a, len, nh)| {
            let a = if a & 1 == 0 {
                a & !(u128::MAX >> 20) | (share & (u128::MAX >> 20))
            } else {
                a
            };
            (Prefix::covering(A::from_u128_left(a), len.min(A::BITS)), nh)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_ipv4_tables_match_the_reference(raw in routes(32), share in any::<u128>(), bits in prop::sample::select(vec![1u32, 8, 16, 18]), stride in 6u32..=16) {
        let t = random_table::<u32>(&raw, share);
        check_with(&t, &edges(&t), bits, stride);
    }

    #[test]
    fn random_ipv6_tables_match_the_reference(raw in routes(128), share in any::<u128>(), bits in prop::sample::select(vec![1u32, 12, 16, 20]), stride in 6u32..=16) {
        let t = random_table::<u128>(&raw, share);
        check_with(&t, &edges(&t), bits, stride);
    }
}
