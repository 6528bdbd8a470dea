//! Patricia against the route table's own longest match (the obviously right model), through
//! inserts, replacements and removals, with the structure checked after every step.

use super::*;
use crate::addr::Address;
use proptest::prelude::*;

fn p4(s: &str) -> Prefix<u32> {
    Prefix::from_net(s.parse().unwrap()).unwrap()
}

fn p6(s: &str) -> Prefix<u128> {
    Prefix::from_net(s.parse().unwrap()).unwrap()
}

fn a4(s: &str) -> u32 {
    u32::from(s.parse::<std::net::Ipv4Addr>().unwrap())
}

/// Checks the trie against the model on `addrs` plus every route's first and last address and
/// their outside neighbours.
fn agrees<A: Bits>(trie: &Patricia<A>, model: &RouteTable<A>, addrs: &[A]) {
    trie.validate().unwrap();
    assert_eq!(trie.len(), model.len());
    let edges = model.iter().flat_map(|(p, _)| {
        [
            Some(p.first()),
            Some(p.last()),
            p.first().checked_pred(),
            p.last().checked_succ(),
        ]
    });
    for a in addrs.iter().copied().chain(edges.flatten()) {
        let want = model.longest_match(a).map(|(_, nh)| nh);
        assert_eq!(trie.lookup(a), want, "at {:?}", a.to_ip());
    }
}

#[test]
fn empty_trie_answers_nothing_and_removes_nothing() {
    let mut t = Patricia::<u32>::new();
    assert_eq!(t.lookup(0), None);
    assert_eq!(t.lookup(u32::MAX), None);
    assert_eq!(t.remove(p4("0.0.0.0/0")), None);
    assert!(t.is_empty());
    assert_eq!((t.nodes(), t.depth()), (0, 0));
    t.validate().unwrap();
}

#[test]
fn default_route_and_host_routes_at_both_ends() {
    let mut t = Patricia::<u32>::new();
    t.insert(p4("0.0.0.0/0"), 9);
    t.insert(p4("255.255.255.255/32"), 1);
    t.insert(p4("0.0.0.0/32"), 2);
    assert_eq!(t.lookup(u32::MAX), Some(1));
    assert_eq!(t.lookup(u32::MAX - 1), Some(9));
    assert_eq!(t.lookup(0), Some(2));
    assert_eq!(t.lookup(1), Some(9));
    t.validate().unwrap();

    let mut t6 = Patricia::<u128>::new();
    t6.insert(p6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128"), 3);
    t6.insert(p6("::/0"), 4);
    assert_eq!(t6.lookup(u128::MAX), Some(3));
    assert_eq!(t6.lookup(u128::MAX - 1), Some(4));
    t6.validate().unwrap();
}

#[test]
fn nested_prefixes_sharing_a_start_in_any_insert_order() {
    let routes = [("10.0.0.0/8", 1), ("10.0.0.0/16", 2), ("10.0.0.0/24", 3)];
    for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0], [2, 0, 1]] {
        let mut t = Patricia::<u32>::new();
        for i in order {
            t.insert(p4(routes[i].0), routes[i].1);
        }
        assert_eq!(t.lookup(a4("10.0.0.1")), Some(3));
        assert_eq!(t.lookup(a4("10.0.1.1")), Some(2));
        assert_eq!(t.lookup(a4("10.1.0.0")), Some(1));
        assert_eq!(t.lookup(a4("11.0.0.0")), None);
        assert_eq!(t.nodes(), 3, "no glue for a chain of nested routes");
        t.validate().unwrap();
    }
}

#[test]
fn duplicates_replace_and_report_the_old_next_hop() {
    let mut t = Patricia::<u32>::new();
    assert_eq!(t.insert(p4("192.0.2.0/24"), 1), None);
    assert_eq!(t.insert(p4("192.0.2.0/24"), 2), Some(1));
    assert_eq!(t.len(), 1);
    assert_eq!(t.lookup(a4("192.0.2.9")), Some(2));
}

#[test]
fn a_glue_node_is_not_a_route_and_can_become_one() {
    let mut t = Patricia::<u32>::new();
    t.insert(p4("10.0.0.0/16"), 1);
    t.insert(p4("10.128.0.0/16"), 2);
    assert_eq!(t.nodes(), 3, "two routes under glue 10.0.0.0/8");
    assert_eq!(t.lookup(a4("10.64.0.0")), None, "glue answers nothing");
    assert_eq!(t.remove(p4("10.0.0.0/8")), None, "glue is not a route");
    t.insert(p4("10.0.0.0/8"), 3);
    assert_eq!((t.len(), t.nodes()), (3, 3), "the glue became the route");
    assert_eq!(t.lookup(a4("10.64.0.0")), Some(3));
    t.validate().unwrap();
}

#[test]
fn removing_everything_unlinks_every_node_and_reuses_them() {
    let routes = [
        "10.0.0.0/8",
        "10.1.0.0/16",
        "10.2.0.0/16",
        "10.1.2.0/24",
        "0.0.0.0/0",
    ];
    let mut t = Patricia::<u32>::new();
    for (i, r) in routes.iter().enumerate() {
        t.insert(p4(r), i as u32);
    }
    let arena = t.trie.nodes.len();
    for r in routes {
        assert!(t.remove(p4(r)).is_some(), "{r}");
        t.validate().unwrap();
    }
    assert_eq!((t.len(), t.nodes(), t.trie.root), (0, 0, trie::NIL));
    for (i, r) in routes.iter().enumerate() {
        t.insert(p4(r), i as u32);
    }
    assert_eq!(t.trie.nodes.len(), arena, "removed nodes are reused");
}

#[test]
fn relayout_puts_the_root_first_and_keeps_every_answer() {
    let t: RouteTable<u32> = (0..500u32)
        .map(|i| {
            (
                Prefix::covering(i.wrapping_mul(0x9e37_79b9), 4 + (i % 29) as u8),
                i,
            )
        })
        .collect();
    let mut incremental = Patricia::<u32>::new();
    for (p, nh) in t.iter() {
        incremental.insert(p, nh);
    }
    let built = Patricia::build(&t, &BuildOptions::default()).unwrap();
    built.validate().unwrap();
    assert_eq!(built.trie.root, 0, "breadth-first: the root is node 0");
    assert_eq!(built.nodes(), incremental.nodes());
    for i in 0..20_000u32 {
        let a = i.wrapping_mul(0x2545_f491);
        assert_eq!(built.lookup(a), incremental.lookup(a));
    }
}

#[test]
fn lines_per_lookup_counts_the_nodes_on_the_path() {
    let t: RouteTable<u32> = [(p4("10.0.0.0/8"), 1), (p4("10.1.0.0/16"), 2)]
        .into_iter()
        .collect();
    let trie = Patricia::build(&t, &BuildOptions::default()).unwrap();
    assert_eq!(trie.lines_per_lookup(&[a4("10.1.0.1")]), Some(2.0));
    assert_eq!(trie.lines_per_lookup(&[a4("11.0.0.0")]), Some(1.0));
    assert_eq!(trie.lines_per_lookup(&[]), None);
}

#[test]
fn validate_catches_a_broken_link_and_a_wrong_side() {
    let t: RouteTable<u32> = [(p4("10.0.0.0/8"), 1), (p4("10.128.0.0/9"), 2)]
        .into_iter()
        .collect();
    let good = Patricia::build(&t, &BuildOptions::default()).unwrap();
    good.validate().unwrap();
    let mut bad = good.clone();
    let root = bad.trie.root as usize;
    bad.trie.nodes[root].child.swap(0, 1);
    assert!(bad.validate().is_err(), "a child on the wrong side");
    let mut bad = good.clone();
    bad.trie.nodes[root].child[0] = 77;
    assert!(bad.validate().is_err(), "a link past the arena");
}

#[test]
fn rebuild_applies_changes_like_a_full_build() {
    let mut table: RouteTable<u32> = (0..3000u32)
        .map(|i| {
            (
                Prefix::covering(i.wrapping_mul(0x9e37_79b9), 8 + (i % 25) as u8),
                i,
            )
        })
        .collect();
    let old = Patricia::build(&table, &BuildOptions::default()).unwrap();
    let mut changed: Vec<Prefix<u32>> = table.iter().step_by(7).map(|(p, _)| p).collect();
    for &p in &changed {
        table.remove(p);
    }
    for i in 0..200u32 {
        let p = Prefix::covering(i << 20, 12 + (i % 13) as u8);
        table.insert(p, 7_000 + i);
        changed.push(p);
    }
    changed.sort();
    changed.dedup();
    let new = old
        .rebuild(&table, &changed, &BuildOptions::default())
        .expect("small change set")
        .unwrap();
    new.validate().unwrap();
    let full = Patricia::build(&table, &BuildOptions::default()).unwrap();
    for i in 0..50_000u32 {
        let a = i.wrapping_mul(0x0101_0101 ^ i << 7);
        assert_eq!(new.lookup(a), full.lookup(a), "{}", a.to_ip());
    }
    let all: Vec<Prefix<u32>> = table.iter().map(|(p, _)| p).collect();
    assert!(
        old.rebuild(&table, &all, &BuildOptions::default())
            .is_none(),
        "a change of the whole table is a full build"
    );
}

/// A route from raw bits: lengths biased to the ends and the chunk edges, addresses biased to
/// a few shared starts so routes nest and share starts.
fn route<A: Bits>(raw: u128, len_pick: u8, start_pick: u8) -> Prefix<A> {
    const LENS: [u8; 8] = [0, 1, 8, 16, 24, 31, 32, 128];
    let len = if len_pick < 64 {
        LENS[usize::from(len_pick % 8)].min(A::BITS)
    } else {
        len_pick % (A::BITS + 1)
    };
    let addr = match start_pick % 4 {
        0 => A::ZERO,
        1 => A::MAX,
        2 => A::from_u128_left(0x0a00_0000u128 << 96 | raw >> 40),
        _ => A::from_u128_left(raw),
    };
    Prefix::covering(addr, len)
}

fn ops_agree<A: Bits>(ops: &[(bool, u128, u8, u8, u32)], probes: &[u128]) {
    let mut trie = Patricia::<A>::new();
    let mut model = RouteTable::<A>::new();
    for &(insert, raw, len_pick, start_pick, nh) in ops {
        let p = route::<A>(raw, len_pick, start_pick);
        // Removes mostly target routes that exist: the model's routes, picked by `raw`.
        if insert {
            assert_eq!(trie.insert(p, nh), model.insert(p, nh));
        } else {
            let victim = model
                .iter()
                .nth(raw as usize % model.len().max(1))
                .map_or(p, |(q, _)| q);
            assert_eq!(trie.remove(victim), model.remove(victim));
        }
        trie.validate().unwrap();
    }
    let addrs: Vec<A> = probes.iter().map(|&r| A::from_u128_left(r)).collect();
    agrees(&trie, &model, &addrs);
    let built = Patricia::build(&model, &BuildOptions::default()).unwrap();
    agrees(&built, &model, &addrs);
    assert_eq!(
        built.nodes(),
        trie.nodes(),
        "the same routes make the same trie"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn insert_and_remove_sequences_agree_with_the_model_ipv4(
        ops in prop::collection::vec(any::<(bool, u128, u8, u8, u32)>(), 0..120),
        probes in prop::collection::vec(any::<u128>(), 0..32),
    ) {
        ops_agree::<u32>(&ops, &probes);
    }

    #[test]
    fn insert_and_remove_sequences_agree_with_the_model_ipv6(
        ops in prop::collection::vec(any::<(bool, u128, u8, u8, u32)>(), 0..120),
        probes in prop::collection::vec(any::<u128>(), 0..32),
    ) {
        ops_agree::<u128>(&ops, &probes);
    }
}
