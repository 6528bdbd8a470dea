//! The route table (the RIB): the authoritative set of routes that engines are built from.
//!
//! Engines are read-optimised snapshots; the table is where routes are added, replaced and
//! removed. It keeps prefixes ordered by (address, length) so the interval sweep and the
//! engines' builders can walk it in one pass without sorting.

use std::collections::BTreeMap;
use std::net::IpAddr;

use ipnet::IpNet;

use crate::addr::Address;
use crate::error::PrefixError;
use crate::prefix::Prefix;

/// A next hop: any `u32` is a valid value. "No route" is `None`, never a reserved number.
pub type NextHop = u32;

/// The routes of one address family.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouteTable<A: Address> {
    routes: BTreeMap<Prefix<A>, NextHop>,
}

impl<A: Address> RouteTable<A> {
    /// An empty table.
    pub fn new() -> Self {
        RouteTable {
            routes: BTreeMap::new(),
        }
    }

    /// Inserts a route, replacing the next hop of an existing route for the same prefix.
    /// Returns the replaced next hop.
    pub fn insert(&mut self, prefix: Prefix<A>, next_hop: NextHop) -> Option<NextHop> {
        self.routes.insert(prefix, next_hop)
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
        self.routes.remove(&prefix)
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
        let mut histogram = vec![0; usize::from(A::BITS) + 1];
        for p in self.routes.keys() {
            histogram[usize::from(p.len())] += 1;
        }
        histogram
    }
}

impl<A: Address> FromIterator<(Prefix<A>, NextHop)> for RouteTable<A> {
    /// Later routes for the same prefix replace earlier ones.
    fn from_iter<I: IntoIterator<Item = (Prefix<A>, NextHop)>>(iter: I) -> Self {
        RouteTable {
            routes: iter.into_iter().collect(),
        }
    }
}

impl<A: Address> Extend<(Prefix<A>, NextHop)> for RouteTable<A> {
    fn extend<I: IntoIterator<Item = (Prefix<A>, NextHop)>>(&mut self, iter: I) {
        self.routes.extend(iter);
    }
}

/// A forwarding table of both families, as loaded from one file: one table per family.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fib {
    /// IPv4 routes.
    pub v4: RouteTable<u32>,
    /// IPv6 routes.
    pub v6: RouteTable<u128>,
}

impl Fib {
    /// An empty FIB.
    pub fn new() -> Self {
        Fib::default()
    }

    /// Inserts a route of either family, replacing an existing one for the same prefix.
    pub fn insert(
        &mut self,
        net: IpNet,
        next_hop: NextHop,
    ) -> Result<Option<NextHop>, PrefixError> {
        match net {
            IpNet::V4(n) => self.v4.insert_net(n, next_hop),
            IpNet::V6(n) => self.v6.insert_net(n, next_hop),
        }
    }

    /// Total routes in both families.
    pub fn len(&self) -> usize {
        self.v4.len() + self.v6.len()
    }

    /// True when neither family has a route.
    pub fn is_empty(&self) -> bool {
        self.v4.is_empty() && self.v6.is_empty()
    }

    /// The next hop of exactly this prefix.
    pub fn get(&self, net: IpNet) -> Result<Option<NextHop>, PrefixError> {
        Ok(match net {
            IpNet::V4(n) => self.v4.get(Prefix::from_net(n)?),
            IpNet::V6(n) => self.v6.get(Prefix::from_net(n)?),
        })
    }

    /// Whether an address's family has any route (used to explain an empty answer).
    pub fn has_family_of(&self, addr: IpAddr) -> bool {
        match addr {
            IpAddr::V4(_) => !self.v4.is_empty(),
            IpAddr::V6(_) => !self.v6.is_empty(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(t.remove(p4("10.0.0.0/8")), Some(2));
        assert!(t.is_empty());
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
    fn host_bits_leave_the_table_unchanged() {
        let mut fib = Fib::new();
        assert!(fib.insert("10.0.0.1/8".parse().unwrap(), 1).is_err());
        assert!(fib.is_empty());
    }
}
