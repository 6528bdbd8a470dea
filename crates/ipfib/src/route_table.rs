//! The route table of one family (the RIB): the authoritative set of routes engines are built
//! from.
//!
//! Engines are read-optimised snapshots; the table is where routes are added, replaced and
//! removed. It keeps prefixes ordered by (address, length) so the interval sweep and the
//! engines' builders walk it in one pass without sorting, and it counts routes per prefix
//! length so a longest-match query probes only the lengths that have routes.

use std::collections::BTreeMap;

use crate::addr::Address;
use crate::error::PrefixError;
use crate::prefix::Prefix;

/// A next hop: any `u32` is a valid value. "No route" is `None`, never a reserved number.
pub type NextHop = u32;

/// The routes of one address family (`u32` = IPv4, `u128` = IPv6).
///
/// ```
/// use ipfib::{Prefix, RouteTable};
///
/// let p = |s: &str| Prefix::<u32>::from_net(s.parse().unwrap()).unwrap();
/// let mut t = RouteTable::new();
/// t.insert(p("10.0.0.0/8"), 1);
/// t.insert(p("10.1.0.0/16"), 2);
/// assert_eq!(t.longest_match(0x0a01_0203), Some((p("10.1.0.0/16"), 2)));
/// assert_eq!(t.longest_match(0x0a02_0000), Some((p("10.0.0.0/8"), 1)));
/// assert_eq!(t.longest_match(0x0b00_0000), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteTable<A: Address> {
    routes: BTreeMap<Prefix<A>, NextHop>,
    /// Routes per prefix length (`0..=BITS`).
    per_length: Vec<usize>,
}

impl<A: Address> Default for RouteTable<A> {
    fn default() -> Self {
        RouteTable {
            routes: BTreeMap::new(),
            per_length: vec![0; usize::from(A::BITS) + 1],
        }
    }
}

impl<A: Address> RouteTable<A> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Inserts a route, replacing the next hop of an existing route for the same prefix.
    /// Returns the replaced next hop.
    pub fn insert(&mut self, prefix: Prefix<A>, next_hop: NextHop) -> Option<NextHop> {
        let old = self.routes.insert(prefix, next_hop);
        if old.is_none() {
            self.per_length[usize::from(prefix.len())] += 1;
        }
        old
    }

    /// Inserts a route given as an `ipnet` prefix; host bits set is an error and leaves the
    /// table unchanged.
    pub fn insert_net(
        &mut self,
        net: A::Net,
        next_hop: NextHop,
    ) -> Result<Option<NextHop>, PrefixError> {
        let prefix = Prefix::from_net(net)?;
        Ok(self.insert(prefix, next_hop))
    }

    /// Removes a route, returning its next hop if it was present.
    pub fn remove(&mut self, prefix: Prefix<A>) -> Option<NextHop> {
        let old = self.routes.remove(&prefix);
        if old.is_some() {
            self.per_length[usize::from(prefix.len())] -= 1;
        }
        old
    }

    /// The next hop of exactly this prefix (no longest-prefix matching).
    pub fn get(&self, prefix: Prefix<A>) -> Option<NextHop> {
        self.routes.get(&prefix).copied()
    }

    /// Number of routes.
    pub fn len(&self) -> usize {
        self.routes.len()
    }

    /// True when the table holds no route.
    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    /// Routes in (address, length) order.
    pub fn iter(
        &self,
    ) -> impl ExactSizeIterator<Item = (Prefix<A>, NextHop)> + DoubleEndedIterator + '_ {
        self.routes.iter().map(|(p, nh)| (*p, *nh))
    }

    /// Number of routes of each prefix length, indexed by length (`0..=BITS`).
    pub fn length_histogram(&self) -> Vec<usize> {
        self.per_length.clone()
    }

    /// The longest route containing `addr`, with its next hop. Probes only the prefix lengths
    /// that have routes, longest first (at most 33 or 129 ordered-map lookups).
    pub fn longest_match(&self, addr: A) -> Option<(Prefix<A>, NextHop)> {
        self.longest_containing(Prefix::covering(addr, A::BITS))
    }

    /// The longest route that contains `prefix` (itself included): inside `prefix`, the answer
    /// wherever no longer route does. Probes the used prefix lengths from `prefix`'s own down
    /// and stops at the first route, where [`RouteTable::supernets`] visits every length.
    pub fn longest_containing(&self, prefix: Prefix<A>) -> Option<(Prefix<A>, NextHop)> {
        self.longest_containing_from(prefix, 0)
    }

    /// [`RouteTable::longest_containing`] among the routes of length `shortest` or more.
    pub(crate) fn longest_containing_from(
        &self,
        prefix: Prefix<A>,
        shortest: u8,
    ) -> Option<(Prefix<A>, NextHop)> {
        (shortest..=prefix.len())
            .rev()
            .filter(|&len| self.per_length[usize::from(len)] > 0)
            .find_map(|len| {
                let p = Prefix::covering(prefix.addr(), len);
                self.get(p).map(|nh| (p, nh))
            })
    }

    /// The routes that contain `prefix` (itself included), shortest first.
    pub fn supernets(&self, prefix: Prefix<A>) -> impl Iterator<Item = (Prefix<A>, NextHop)> + '_ {
        (0..=prefix.len())
            .filter(|&len| self.per_length[usize::from(len)] > 0)
            .filter_map(move |len| {
                let p = Prefix::covering(prefix.addr(), len);
                self.get(p).map(|nh| (p, nh))
            })
    }

    /// The routes contained in `prefix` (itself included), in (address, length) order.
    pub fn subnets(
        &self,
        prefix: Prefix<A>,
    ) -> impl DoubleEndedIterator<Item = (Prefix<A>, NextHop)> + '_ {
        // A route inside `prefix` starts inside it and is at least as long; a shorter route
        // starting inside it can only start at its first address, and sorts before `prefix`.
        let last = Prefix::covering(prefix.last(), A::BITS);
        self.routes.range(prefix..=last).map(|(p, nh)| (*p, *nh))
    }
}

impl<A: Address> FromIterator<(Prefix<A>, NextHop)> for RouteTable<A> {
    /// Later routes for the same prefix replace earlier ones.
    fn from_iter<I: IntoIterator<Item = (Prefix<A>, NextHop)>>(iter: I) -> Self {
        // The map's own bulk build (sort, keep the last of equal keys) is about twice as fast
        // as inserting one by one on a 900 K-route table.
        let routes: BTreeMap<Prefix<A>, NextHop> = iter.into_iter().collect();
        let mut per_length = vec![0; usize::from(A::BITS) + 1];
        for p in routes.keys() {
            per_length[usize::from(p.len())] += 1;
        }
        RouteTable { routes, per_length }
    }
}

impl<A: Address> Extend<(Prefix<A>, NextHop)> for RouteTable<A> {
    /// Later routes for the same prefix replace earlier ones.
    fn extend<I: IntoIterator<Item = (Prefix<A>, NextHop)>>(&mut self, iter: I) {
        for (p, nh) in iter {
            self.insert(p, nh);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p4(s: &str) -> Prefix<u32> {
        Prefix::from_net(s.parse().unwrap()).unwrap()
    }

    #[test]
    fn insert_replaces_and_remove_removes() {
        let mut t = RouteTable::new();
        assert_eq!(t.insert(p4("10.0.0.0/8"), 1), None);
        assert_eq!(t.insert(p4("10.0.0.0/8"), 2), Some(1));
        assert_eq!(t.get(p4("10.0.0.0/8")), Some(2));
        assert_eq!(t.len(), 1);
        assert_eq!(t.length_histogram()[8], 1);
        assert_eq!(t.remove(p4("10.0.0.0/8")), Some(2));
        assert_eq!(t.remove(p4("10.0.0.0/8")), None);
        assert!(t.is_empty());
        assert_eq!(t.length_histogram()[8], 0);
        assert_eq!(t, RouteTable::new(), "counts return to an empty table's");
    }

    #[test]
    fn iteration_is_by_address_then_length() {
        let t: RouteTable<u32> = [
            (p4("10.0.0.0/16"), 3),
            (p4("10.0.0.0/8"), 1),
            (p4("9.0.0.0/8"), 2),
        ]
        .into_iter()
        .collect();
        let order: Vec<String> = t.iter().map(|(p, _)| p.to_string()).collect();
        assert_eq!(order, ["9.0.0.0/8", "10.0.0.0/8", "10.0.0.0/16"]);
    }

    #[test]
    fn subnets_skip_a_shorter_route_sharing_the_start() {
        let t: RouteTable<u32> = [
            (p4("10.0.0.0/7"), 1),
            (p4("10.0.0.0/8"), 2),
            (p4("10.0.0.0/9"), 3),
            (p4("10.255.255.255/32"), 4),
            (p4("11.0.0.0/8"), 5),
        ]
        .into_iter()
        .collect();
        let sub: Vec<String> = t
            .subnets(p4("10.0.0.0/8"))
            .map(|(p, _)| p.to_string())
            .collect();
        assert_eq!(sub, ["10.0.0.0/8", "10.0.0.0/9", "10.255.255.255/32"]);
        let sup: Vec<String> = t
            .supernets(p4("10.0.0.0/9"))
            .map(|(p, _)| p.to_string())
            .collect();
        assert_eq!(sup, ["10.0.0.0/7", "10.0.0.0/8", "10.0.0.0/9"]);
    }

    #[test]
    fn subnets_at_the_top_of_the_space() {
        let t: RouteTable<u32> = [(p4("255.255.255.255/32"), 1), (p4("0.0.0.0/0"), 2)]
            .into_iter()
            .collect();
        assert_eq!(t.subnets(p4("0.0.0.0/0")).count(), 2);
        assert_eq!(t.subnets(p4("255.255.255.0/24")).count(), 1);
    }

    /// Prefixes of every length over few distinct addresses (two bits set per byte below
    /// four /8 starts), so that routes nest and share starts.
    fn nested() -> impl Strategy<Value = Prefix<u32>> {
        (0u32..4, any::<u32>(), 0u8..=32)
            .prop_map(|(top, low, len)| Prefix::covering((top << 24) | (low & 0x00c0_c0c0), len))
    }

    proptest! {
        #[test]
        fn longest_containing_is_the_longest_route_over_the_prefix(
            routes in prop::collection::vec((nested(), 0u32..4), 0..40),
            queries in prop::collection::vec(nested(), 1..20),
        ) {
            let t: RouteTable<u32> = routes.iter().copied().collect();
            for &q in &queries {
                for shortest in [0, 8, 16, 24, 32] {
                    // The model: every route, kept when it contains `q` and is long enough.
                    let want = t
                        .iter()
                        .filter(|&(p, _)| {
                            p.len() >= shortest
                                && p.len() <= q.len()
                                && Prefix::covering(q.addr(), p.len()) == p
                        })
                        .max_by_key(|&(p, _)| p.len());
                    prop_assert_eq!(t.longest_containing_from(q, shortest), want, "{} from /{}", q, shortest);
                }
                prop_assert_eq!(t.longest_containing(q), t.supernets(q).last(), "{}", q);
            }
        }
    }
}
