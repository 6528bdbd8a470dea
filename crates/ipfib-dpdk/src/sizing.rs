//! How big each DPDK structure must be for a table, computed before DPDK is called.
//!
//! DPDK's LPM structures are created with fixed capacities (`max_rules`/`max_routes` and a
//! number of tbl8 groups) and refuse routes once full. Sizing them generously wastes a lot of
//! memory (each tbl8 group is 256 entries), and the EAL's memory (`-m`) is fixed when the EAL
//! starts, so the counts are computed from the table: exactly where DPDK's own accounting is
//! simple (one tbl8 group per /24 or per 8-bit level that holds longer routes), and by
//! replaying DPDK's reservation rule for `rte_fib6`, with a safe upper bound to retry with.
//!
//! This module is plain Rust, so it is built and tested without DPDK installed.

use std::collections::HashSet;

use ipfib::{Address, NextHop, Prefix, RouteTable};

/// Entries of the first-level table of every DPDK LPM structure (indexed by 24 bits).
pub const TBL24_ENTRIES: u64 = 1 << 24;
/// Entries of one tbl8 group (indexed by 8 bits).
pub const TBL8_ENTRIES: u64 = 256;
/// The largest next hop `rte_lpm` stores (a 24-bit field).
pub const LPM4_MAX_NEXT_HOP: u32 = (1 << 24) - 1;
/// The largest next hop `rte_lpm6` stores (a 21-bit field; wider values are truncated by DPDK
/// without an error, so they are refused here).
pub const LPM6_MAX_NEXT_HOP: u32 = (1 << 21) - 1;
/// The entry sizes `rte_fib` (DIR-24-8) offers, narrowest first (`RTE_FIB_DIR24_8_1B` .. `_8B`).
pub const FIB4_ENTRY_BYTES: [u8; 4] = [1, 2, 4, 8];
/// The entry sizes `rte_fib6` (TRIE) offers, narrowest first (`RTE_FIB6_TRIE_2B` .. `_8B`).
pub const FIB6_ENTRY_BYTES: [u8; 3] = [2, 4, 8];

/// The largest value an `rte_fib`/`rte_fib6` entry of `bytes` bytes (1, 2, 4 or 8) holds
/// (DPDK's `get_max_nh`): one bit of every entry marks an extended (tbl8) entry. DPDK refuses
/// to create a structure whose tbl8 group count exceeds it, and a route whose next hop does.
pub const fn fib_max_value(bytes: u8) -> u64 {
    (1u64 << (8 * bytes as u32 - 1)) - 1
}

/// The routes to hand to `rte_lpm`/`rte_lpm6`, which take depths 1..=BITS only.
///
/// A default route (`/0`, next hop `d`) becomes the two halves of the space, `/1` each with
/// next hop `d`, except a half the table already has as a route of its own (that route is more
/// specific than `/0` and must keep its own next hop). The result matches exactly the same
/// addresses with the same next hops as the table.
pub fn routes_without_default<A: Address>(table: &RouteTable<A>) -> Vec<(Prefix<A>, NextHop)> {
    let mut routes: Vec<(Prefix<A>, NextHop)> = table.iter().filter(|(p, _)| p.len() > 0).collect();
    if let Some(default) = Prefix::new(A::ZERO, 0).ok().and_then(|p| table.get(p)) {
        for half in [A::ZERO, A::mask(1)] {
            let half = Prefix::new(half, 1).expect("a /1 at 0 or at the top bit has no host bits");
            if table.get(half).is_none() {
                routes.push((half, default));
            }
        }
    }
    routes
}

/// The first route whose next hop is above `max`, if any.
pub fn first_next_hop_above<A: Address>(
    table: &RouteTable<A>,
    max: u32,
) -> Option<(Prefix<A>, NextHop)> {
    table.iter().find(|&(_, nh)| nh > max)
}

/// Bytes per `rte_fib`/`rte_fib6` entry: the narrowest of `sizes` whose entries hold every
/// stored value (`next_hop + 1`, see [`crate`]) and the number of `tbl8` groups, or `None` when
/// even the widest does not.
///
/// The narrowest entry is DPDK at its best: its first-level table is `2^24` entries whatever the
/// table, so halving the entry halves the memory almost every lookup reads (`rte_fib` with
/// 2-byte entries ran 1.6x its 4-byte speed on the et-2015 table, BENCHMARKS.md "Session 18").
pub fn fib_entry_bytes<A: Address>(table: &RouteTable<A>, tbl8: u64, sizes: &[u8]) -> Option<u8> {
    let max_stored = table
        .iter()
        .map(|(_, nh)| u64::from(nh) + 1)
        .max()
        .unwrap_or(0);
    let need = max_stored.max(tbl8);
    sizes.iter().copied().find(|&b| fib_max_value(b) >= need)
}

/// The entry size a build with `tbl8` groups uses: [`fib_entry_bytes`], or 8 bytes where none
/// of `sizes` holds the table (8 bytes hold every `u32` next hop + 1 and every `u32` group
/// count, so a build always has a size).
pub fn fib_build_entry_bytes<A: Address>(table: &RouteTable<A>, tbl8: u32, sizes: &[u8]) -> u8 {
    fib_entry_bytes(table, u64::from(tbl8), sizes).unwrap_or(8)
}

/// The number of /24 blocks that contain a route longer than /24. `rte_lpm` and `rte_fib`
/// (DIR-24-8) each use exactly one tbl8 group per such block.
pub fn ipv4_tbl8_groups(routes: impl IntoIterator<Item = Prefix<u32>>) -> u64 {
    routes
        .into_iter()
        .filter(|p| p.len() > 24)
        .map(|p| p.addr() >> 8)
        .collect::<HashSet<u32>>()
        .len() as u64
}

/// The number of tbl8 groups `rte_lpm6` uses: one per 8-bit level below /24 that a route
/// reaches into, shared by all routes with the same leading bits. A route of length `d > 24`
/// needs the group at each level `k = 24, 32, …` with `k < d`, identified by its first `k`
/// bits.
pub fn ipv6_tbl8_groups(routes: impl IntoIterator<Item = Prefix<u128>>) -> u64 {
    let mut groups: HashSet<(u8, u128)> = HashSet::new();
    for p in routes {
        let mut k = 24u8;
        while k < p.len() {
            groups.insert((k, p.addr() >> (128 - u32::from(k))));
            k += 8;
        }
    }
    groups.len() as u64
}

fn ceil8(len: u8) -> u8 {
    len.div_ceil(8) * 8
}

/// The tbl8 groups `rte_fib6` (TRIE) reserves when the table's routes are added in table
/// order (address, then length).
///
/// `rte_fib6_add` refuses a route with `ENOSPC` unless its worst-case tbl8 need fits beside
/// what earlier routes reserved: a route of length `d > 24` with no already-added route
/// strictly inside its `floor8(d)` block reserves `(ceil8(d) - ceil8(max(parent, 24))) / 8`
/// groups, where `parent` is the length of the longest already-added route covering it. This
/// replays that rule. It is more than the groups finally in use, which is why `rte_fib6` is
/// large.
pub fn fib6_reserved_tbl8_groups(table: &RouteTable<u128>) -> u64 {
    let routes: Vec<Prefix<u128>> = table.iter().map(|(p, _)| p).collect();
    // Routes added so far that cover the current one, shortest first (a sweep in table order
    // keeps exactly the ancestors on this stack).
    let mut ancestors: Vec<Prefix<u128>> = Vec::new();
    let mut reserved = 0u64;
    for (i, &p) in routes.iter().enumerate() {
        while ancestors.last().is_some_and(|a| !a.contains(p.addr())) {
            ancestors.pop();
        }
        if p.len() > 24 {
            let floor = p.len() / 8 * 8;
            let block = Prefix::covering(p.addr(), floor);
            // Earlier routes with an address inside the block form a suffix of `routes[..i]`.
            let inside = routes[..i]
                .iter()
                .rev()
                .take_while(|q| block.contains(q.addr()))
                .any(|q| q.len() > floor);
            if !inside {
                let parent = ancestors.last().map_or(24, |a| a.len().max(24));
                reserved += u64::from((ceil8(p.len()) - ceil8(parent)) / 8);
            }
        }
        ancestors.push(p);
    }
    reserved
}

/// An upper bound on the tbl8 groups `rte_fib6` can reserve for the table in any order:
/// `(ceil8(d) - 24) / 8` for every route longer than /24.
pub fn fib6_tbl8_bound(table: &RouteTable<u128>) -> u64 {
    table
        .iter()
        .filter(|(p, _)| p.len() > 24)
        .map(|(p, _)| u64::from((ceil8(p.len()) - 24) / 8))
        .sum()
}

/// An upper bound on the tbl8 groups `rte_lpm6` can use: every level of every route apart.
pub fn lpm6_tbl8_bound(routes: &[(Prefix<u128>, NextHop)]) -> u64 {
    routes
        .iter()
        .filter(|(p, _)| p.len() > 24)
        .map(|(p, _)| u64::from((ceil8(p.len()) - 24) / 8))
        .sum()
}

/// Estimated DPDK heap bytes of each structure, used to check (and size) the EAL's memory
/// before creating it. Deliberately generous on the small parts (RIB nodes, rule hash) whose
/// exact size depends on DPDK internals; the big parts (tbl24, tbl8) are exact.
pub mod estimate {
    use super::{TBL24_ENTRIES, TBL8_ENTRIES};

    /// Per-route allowance for `rte_rib`/`rte_rib6` nodes: the RIB's mempool holds two nodes per
    /// route, each under 128 bytes with its mempool header.
    const RIB_BYTES_PER_ROUTE: u64 = 2 * 128;
    /// Per-rule allowance for `rte_lpm6`'s rule hash table (key, data, bucket share).
    const LPM6_RULE_BYTES: u64 = 128;

    /// `rte_fib6` TRIE.
    pub fn fib6(routes: u64, tbl8: u64, entry_bytes: u8) -> u64 {
        let e = u64::from(entry_bytes);
        TBL24_ENTRIES * e + tbl8 * (TBL8_ENTRIES * e + 4) + routes * RIB_BYTES_PER_ROUTE
    }

    /// `rte_fib` DIR-24-8.
    pub fn fib4(routes: u64, tbl8: u64, entry_bytes: u8) -> u64 {
        let e = u64::from(entry_bytes);
        TBL24_ENTRIES * e + tbl8 * (TBL8_ENTRIES * e + 1) + routes * RIB_BYTES_PER_ROUTE
    }

    /// `rte_lpm`: 4-byte entries, 8-byte rules.
    pub fn lpm4(rules: u64, tbl8: u64) -> u64 {
        TBL24_ENTRIES * 4 + tbl8 * (TBL8_ENTRIES * 4 + 8) + rules * 8
    }

    /// `rte_lpm6`: 4-byte entries, tbl8 headers and free list, rules in a hash table.
    pub fn lpm6(rules: u64, tbl8: u64) -> u64 {
        TBL24_ENTRIES * 4 + tbl8 * (TBL8_ENTRIES * 4 + 16) + rules * LPM6_RULE_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p6(s: &str) -> Prefix<u128> {
        Prefix::from_net(s.parse().unwrap()).unwrap()
    }
    fn p4(s: &str) -> Prefix<u32> {
        Prefix::from_net(s.parse().unwrap()).unwrap()
    }
    fn t6(routes: &[(&str, u32)]) -> RouteTable<u128> {
        routes.iter().map(|&(s, nh)| (p6(s), nh)).collect()
    }

    #[test]
    fn default_route_becomes_the_missing_halves() {
        let t: RouteTable<u32> = [(p4("0.0.0.0/0"), 7), (p4("128.0.0.0/1"), 9)]
            .into_iter()
            .collect();
        let mut r = routes_without_default(&t);
        r.sort();
        assert_eq!(r, vec![(p4("0.0.0.0/1"), 7), (p4("128.0.0.0/1"), 9)]);

        let t = t6(&[("::/0", 3), ("2001:db8::/32", 4)]);
        let mut r = routes_without_default(&t);
        r.sort();
        assert_eq!(
            r,
            vec![
                (p6("::/1"), 3),
                (p6("2001:db8::/32"), 4),
                (p6("8000::/1"), 3)
            ]
        );
    }

    #[test]
    fn no_default_route_means_no_halves() {
        let t = t6(&[("2001:db8::/32", 4)]);
        assert_eq!(routes_without_default(&t), vec![(p6("2001:db8::/32"), 4)]);
    }

    #[test]
    fn entry_limits_are_dpdks() {
        assert_eq!(fib_max_value(1), 127);
        assert_eq!(fib_max_value(2), 32_767);
        assert_eq!(fib_max_value(4), (1 << 31) - 1);
        assert_eq!(fib_max_value(8), (1 << 63) - 1);
    }

    #[test]
    fn fib_entries_are_the_narrowest_that_hold_next_hop_plus_one() {
        let bytes = |nh: u32| fib_entry_bytes(&t6(&[("::/0", nh)]), 1, &FIB4_ENTRY_BYTES);
        assert_eq!(bytes(0), Some(1));
        assert_eq!(bytes(126), Some(1));
        assert_eq!(bytes(127), Some(2));
        assert_eq!(bytes(32_766), Some(2));
        assert_eq!(bytes(32_767), Some(4));
        assert_eq!(bytes((1 << 31) - 2), Some(4));
        assert_eq!(bytes((1 << 31) - 1), Some(8));
        assert_eq!(bytes(u32::MAX), Some(8));
        // rte_fib6 has no 1-byte entries.
        let t = t6(&[("::/0", 5)]);
        assert_eq!(fib_entry_bytes(&t, 1, &FIB6_ENTRY_BYTES), Some(2));
    }

    #[test]
    fn fib_entries_are_wide_enough_to_count_the_tbl8_groups() {
        let t = t6(&[("::/0", 1)]);
        assert_eq!(fib_entry_bytes(&t, 127, &FIB4_ENTRY_BYTES), Some(1));
        assert_eq!(fib_entry_bytes(&t, 128, &FIB4_ENTRY_BYTES), Some(2));
        assert_eq!(fib_entry_bytes(&t, 32_768, &FIB4_ENTRY_BYTES), Some(4));
        assert_eq!(fib_entry_bytes(&t, 1 << 31, &FIB6_ENTRY_BYTES), Some(8));
        assert_eq!(fib_entry_bytes(&t, 1 << 63, &FIB6_ENTRY_BYTES), None);
        // An empty table stores nothing: the narrowest entry.
        let empty = RouteTable::<u32>::new();
        assert_eq!(fib_entry_bytes(&empty, 1, &FIB6_ENTRY_BYTES), Some(2));
    }

    #[test]
    fn wide_next_hops_are_found() {
        let t = t6(&[("2001:db8::/32", 5), ("2001:db9::/32", 1 << 21)]);
        assert_eq!(
            first_next_hop_above(&t, LPM6_MAX_NEXT_HOP),
            Some((p6("2001:db9::/32"), 1 << 21))
        );
        assert_eq!(first_next_hop_above(&t, 1 << 21), None);
    }

    #[test]
    fn ipv4_groups_count_distinct_slash24_blocks_of_long_routes() {
        let routes = [
            p4("10.0.0.0/24"),   // not longer than /24: no group
            p4("10.0.0.0/25"),   // block 10.0.0
            p4("10.0.0.128/32"), // same block
            p4("10.0.1.7/32"),   // block 10.0.1
            p4("255.255.255.255/32"),
        ];
        assert_eq!(ipv4_tbl8_groups(routes), 3);
    }

    #[test]
    fn ipv6_groups_count_each_level_once() {
        // /48: levels 24, 32, 40. The /40 shares levels 24 and 32, the /128 shares 24..40 and
        // adds 48..120 (10 levels).
        let routes = [
            p6("2001:db8:1::/48"),
            p6("2001:db8::/40"),
            p6("2001:db8:1::1/128"),
            p6("2001:d00::/24"), // length 24: no group
        ];
        assert_eq!(ipv6_tbl8_groups(routes), 3 + 10);
        assert_eq!(ipv6_tbl8_groups([p6("2001:d80::/25")]), 1);
    }

    #[test]
    fn fib6_reservation_replays_parent_and_sibling_rules() {
        // In table order: 2001:db8::/32 has no parent: (32 - 24) / 8 = 1. 2001:db8::/44 has
        // the /32 as parent and nothing inside its /40 block yet: (48 - 32) / 8 = 2.
        // 2001:db8:1::/48 lies inside the /44, its parent: (48 - 48) / 8 = 0.
        // 2001:db8:100::/48 lies outside the /44, so its parent is the /32: 2.
        let t = t6(&[
            ("2001:db8::/32", 1),
            ("2001:db8:1::/48", 2),
            ("2001:db8:100::/48", 3),
            ("2001:db8::/44", 4),
        ]);
        // 1 + 2 + 0 + 2:
        assert_eq!(fib6_reserved_tbl8_groups(&t), 5);
        assert_eq!(fib6_tbl8_bound(&t), 1 + 3 + 3 + 3);
    }

    #[test]
    fn fib6_reservation_without_long_routes_is_zero() {
        let t = t6(&[("::/0", 1), ("2000::/3", 2), ("2001:d00::/24", 3)]);
        assert_eq!(fib6_reserved_tbl8_groups(&t), 0);
        assert_eq!(fib6_tbl8_bound(&t), 0);
    }
}
