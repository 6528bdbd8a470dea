//! Table profiles: the measured shape of a real table that the generator scales to any size.
//!
//! A profile is a set of counts taken from one real table (see `profile_v6.rs` and
//! `profile_v4.rs` for the tables and how they were measured), not hand-picked shares: the
//! prefix-length histogram, how many routes of each length are top-level (not covered by another
//! route), the length of each nested route's immediate covering prefix, which blocks of the
//! address space hold the top-level routes, how often equal-length neighbours are announced as
//! adjacent runs, and how next hops repeat between a route and its covering prefix or neighbour.
//! Generating `n` routes scales every count by `n / routes` (largest-remainder rounding), so the
//! shares hold at every size while the absolute numbers grow.

use std::marker::PhantomData;

use ipfib::Address;

use super::{profile_v4, profile_v6};

/// A ratio `numerator / denominator` measured as two counts from a real table.
pub(crate) type Ratio = (u64, u64);

/// How next hops are assigned: origin-AS-like identifiers.
///
/// The shared tables' next hops are origin-AS ranks (1 = the AS with most routes), the only
/// per-route "next hop" that public data has for a whole DFZ, and what the real tables used for
/// comparison carry. A route draws a fresh identifier from a Zipf–Mandelbrot law over
/// `distinct × routes` ranks, or repeats its covering prefix's or adjacent neighbour's identifier
/// at the measured rates, which is what makes neighbouring intervals merge as in real tables.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NextHops {
    /// Distinct identifiers per route in the measured table.
    pub(crate) distinct: Ratio,
    /// Nested routes whose immediate covering prefix has the same identifier.
    pub(crate) inherit: Ratio,
    /// Adjacent equal-length nested siblings with the same identifier.
    pub(crate) nested_adjacent_same: Ratio,
    /// Adjacent equal-length top-level neighbours with the same identifier.
    pub(crate) top_adjacent_same: Ratio,
}

/// The measured shape of one real table, for address family `A`.
#[derive(Clone, Copy, Debug)]
pub struct Profile<A: Address> {
    /// Short name, for messages and documentation.
    pub name: &'static str,
    /// The table the counts were measured on.
    pub source: &'static str,
    pub(crate) lengths: &'static [(u8, u32, u32, u32)],
    pub(crate) parents: &'static [(u8, u8, u32)],
    pub(crate) block_bits: u8,
    pub(crate) blocks: &'static [(u32, u8, u32)],
    pub(crate) top_adjacent: Ratio,
    pub(crate) nested_adjacent: Ratio,
    pub(crate) next_hops: NextHops,
    pub(crate) family: PhantomData<A>,
}

/// IPv6 today, shaped like the PlanB paper's rrc00-25 table: measured on RIPE RIS 2024-12-20
/// (all collectors, prefixes seen by at least 10 peers, 228,726 routes), whose length mix is
/// within a point of rrc00-25's (/48 46.3 % vs 44.6 %, /32 11.2 % vs 11.0 %, /44 9.5 % vs 9.7 %,
/// /40 9.2 % vs 10.1 %, /36 3.7 % vs 3.9 %). Next-hop rates come from the same table (origin
/// ASes).
pub const IPV6_DFZ: Profile<u128> = Profile {
    name: "ipv6-dfz",
    source: "ipv6/ipv6-ris-dfz10-20241220.txt.gz",
    lengths: profile_v6::LENGTHS,
    parents: profile_v6::PARENTS,
    block_bits: profile_v6::BLOCK_BITS,
    blocks: profile_v6::BLOCKS,
    top_adjacent: profile_v6::TOP_ADJACENT,
    nested_adjacent: profile_v6::NESTED_ADJACENT,
    next_hops: NextHops {
        distinct: (34_149, 228_726),
        inherit: (101_854, 134_500),
        nested_adjacent_same: (78_656, 83_734),
        top_adjacent_same: (34_668, 42_400),
    },
    family: PhantomData,
};

/// IPv4 today: measured on the gaissmai/bart "Tier1 full table" (901,899 routes, about 2022;
/// /24 59.6 %, /22 12.0 %, /23 10.7 %). That table has no next hops, so the next-hop rates come
/// from the largest IPv4 table with origin ASes, RouteViews 2015-11-01 (606,138 routes).
pub const IPV4_TIER1: Profile<u32> = Profile {
    name: "ipv4-tier1",
    source: "ipv4/ipv4-bart-tier1-2023.txt.gz",
    lengths: profile_v4::LENGTHS,
    parents: profile_v4::PARENTS,
    block_bits: profile_v4::BLOCK_BITS,
    blocks: profile_v4::BLOCKS,
    top_adjacent: profile_v4::TOP_ADJACENT,
    nested_adjacent: profile_v4::NESTED_ADJACENT,
    next_hops: NextHops {
        distinct: (51_788, 606_138),
        inherit: (248_599, 328_869),
        nested_adjacent_same: (155_207, 166_861),
        top_adjacent_same: (108_543, 164_783),
    },
    family: PhantomData,
};

impl<A: Address> Profile<A> {
    /// Routes in the measured table.
    pub fn measured_routes(&self) -> u64 {
        self.lengths.iter().map(|&(_, n, _, _)| u64::from(n)).sum()
    }

    /// The target share of each prefix length, `(length, share)` in length order: what a
    /// generated table's histogram approaches (exactly, up to rounding of one route per length).
    pub fn length_shares(&self) -> Vec<(u8, f64)> {
        let total = self.measured_routes() as f64;
        self.lengths
            .iter()
            .map(|&(len, n, _, _)| (len, f64::from(n) / total))
            .collect()
    }

    /// The share of routes that have a covering route in the measured table.
    pub fn nested_share(&self) -> f64 {
        let top: u64 = self.lengths.iter().map(|&(_, _, t, _)| u64::from(t)).sum();
        1.0 - top as f64 / self.measured_routes() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded tables must be self-consistent: every nested route of a length has a parent
    /// entry, parents are shorter, and the block counts add up to the top-level routes.
    fn consistent<A: Address>(p: &Profile<A>) {
        for &(len, routes, top, fertile) in p.lengths {
            assert!(
                len <= A::BITS && top <= routes && fertile <= routes,
                "{len}"
            );
            let nested: u32 = p
                .parents
                .iter()
                .filter(|&&(c, _, _)| c == len)
                .map(|&(_, _, n)| n)
                .sum();
            assert_eq!(nested + top, routes, "/{len}");
        }
        assert!(p.parents.iter().all(|&(c, par, _)| par < c));
        for &(len, _, top, _) in p.lengths {
            let in_blocks: u32 = p
                .blocks
                .iter()
                .filter(|&&(_, l, _)| l == len)
                .map(|&(_, _, n)| n)
                .sum();
            assert_eq!(top, in_blocks, "/{len}");
        }
        assert!(p
            .blocks
            .iter()
            .all(|&(b, _, _)| u64::from(b) < 1 << p.block_bits));
        assert!(p.lengths.iter().all(|&(len, _, _, _)| len >= p.block_bits));
        // A length that parents some route has routes with children.
        for &(_, parent, _) in p.parents {
            assert!(
                p.lengths.iter().any(|&(l, _, _, f)| l == parent && f > 0),
                "/{parent}"
            );
        }
    }

    #[test]
    fn embedded_profiles_are_consistent() {
        consistent(&IPV6_DFZ);
        consistent(&IPV4_TIER1);
        assert_eq!(IPV6_DFZ.measured_routes(), 228_726);
        assert_eq!(IPV4_TIER1.measured_routes(), 901_899);
    }
}
