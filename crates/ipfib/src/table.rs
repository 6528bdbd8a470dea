//! [`Table`]: the routes of both families in one value, in `std::net` and `ipnet` terms.
//!
//! A router's, a firewall's or a log pipeline's forwarding table holds IPv4 and IPv6 routes
//! side by side; `Table` is that table, one [`RouteTable`] per family behind one API. An IPv4
//! address never matches an IPv6 route and vice versa: IPv4-mapped IPv6 addresses
//! (`::ffff:a.b.c.d`) are IPv6 addresses and match only IPv6 routes (such as `::ffff:0:0/96`),
//! as in the kernel's FIB. Convert with [`std::net::Ipv6Addr::to_ipv4_mapped`] first to look
//! one up among the IPv4 routes.

use std::any::Any;
use std::net::IpAddr;

use ipnet::IpNet;

use crate::addr::Address;
use crate::error::PrefixError;
use crate::prefix::Prefix;
use crate::route_table::{NextHop, RouteTable};

/// The routes of both families: the authoritative set that engines are built from.
///
/// ```
/// use ipfib::Table;
/// use ipnet::IpNet;
///
/// let net = |s: &str| s.parse::<IpNet>().unwrap();
/// let mut t = Table::new();
/// assert_eq!(t.insert(net("10.0.0.0/8"), 1).unwrap(), None);
/// assert_eq!(t.insert(net("10.1.0.0/16"), 2).unwrap(), None);
/// assert_eq!(t.insert(net("2001:db8::/32"), 3).unwrap(), None);
/// assert!(t.insert(net("10.0.0.1/8"), 4).is_err(), "host bits set");
///
/// let addr = "10.1.2.3".parse().unwrap();
/// assert_eq!(t.longest_match(addr), Some((net("10.1.0.0/16"), 2)));
/// let chain: Vec<_> = t.supernets(&net("10.1.0.0/16")).collect();
/// assert_eq!(chain, [(net("10.0.0.0/8"), 1), (net("10.1.0.0/16"), 2)]);
/// assert_eq!(t.remove(&net("10.1.0.0/16")), Some(2));
/// assert_eq!(t.len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    v4: RouteTable<u32>,
    v6: RouteTable<u128>,
}

/// The canonical prefix of an `IpNet` of family `A`, or `None` when it has host bits set (such
/// a value names no route: routes are stored canonical).
fn exact<A: Address>(net: A::Net) -> Option<Prefix<A>> {
    Prefix::from_net(net).ok()
}

impl Table {
    /// An empty table.
    pub fn new() -> Self {
        Table::default()
    }

    /// A table from one route table per family.
    pub fn from_families(v4: RouteTable<u32>, v6: RouteTable<u128>) -> Self {
        Table { v4, v6 }
    }

    /// The two per-family tables.
    pub fn into_families(self) -> (RouteTable<u32>, RouteTable<u128>) {
        (self.v4, self.v6)
    }

    /// The IPv4 routes.
    pub fn v4(&self) -> &RouteTable<u32> {
        &self.v4
    }

    /// The IPv6 routes.
    pub fn v6(&self) -> &RouteTable<u128> {
        &self.v6
    }

    /// The routes of family `A` (`u32` = IPv4, `u128` = IPv6), for code written once for both.
    pub fn family<A: Address>(&self) -> &RouteTable<A> {
        let both: [&dyn Any; 2] = [&self.v4, &self.v6];
        both.into_iter()
            .find_map(|t| t.downcast_ref::<RouteTable<A>>())
            .expect("Address is implemented for u32 and u128 only")
    }

    /// Inserts a route, replacing the next hop of an existing route for the same prefix, and
    /// returns the replaced next hop. A prefix with host bits set (`10.0.0.1/8`) is an error
    /// and leaves the table unchanged: masking silently would hide a typo.
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

    /// Removes the route for exactly this prefix, returning its next hop; `None` when there is
    /// none (a prefix with host bits set is never in the table).
    pub fn remove(&mut self, net: &IpNet) -> Option<NextHop> {
        match *net {
            IpNet::V4(n) => self.v4.remove(exact(n)?),
            IpNet::V6(n) => self.v6.remove(exact(n)?),
        }
    }

    /// The next hop of exactly this prefix (no longest-prefix matching).
    pub fn get(&self, net: &IpNet) -> Option<NextHop> {
        match *net {
            IpNet::V4(n) => self.v4.get(exact(n)?),
            IpNet::V6(n) => self.v6.get(exact(n)?),
        }
    }

    /// Total routes of both families.
    pub fn len(&self) -> usize {
        self.v4.len() + self.v6.len()
    }

    /// True when neither family has a route.
    pub fn is_empty(&self) -> bool {
        self.v4.is_empty() && self.v6.is_empty()
    }

    /// Every route: IPv4 before IPv6, each family in address order (a covering prefix before
    /// the prefixes that share its start).
    pub fn iter(&self) -> impl Iterator<Item = (IpNet, NextHop)> + '_ {
        as_ipnets(self.v4.iter(), self.v6.iter())
    }

    /// The longest route containing `addr` and its next hop, from the family of `addr` only.
    pub fn longest_match(&self, addr: IpAddr) -> Option<(IpNet, NextHop)> {
        match addr {
            IpAddr::V4(a) => self
                .v4
                .longest_match(u32::from(a))
                .map(|(p, nh)| (IpNet::V4(p.to_net()), nh)),
            IpAddr::V6(a) => self
                .v6
                .longest_match(u128::from(a))
                .map(|(p, nh)| (IpNet::V6(p.to_net()), nh)),
        }
    }

    /// The routes that contain `net` (`net` itself included when it is a route), shortest
    /// first. Host bits of `net` are ignored (`10.0.0.1/8` asks about `10.0.0.0/8`), as
    /// `ipnet`'s own containment does.
    pub fn supernets(&self, net: &IpNet) -> impl Iterator<Item = (IpNet, NextHop)> + '_ {
        let (v4, v6) = split(net);
        as_ipnets(
            v4.into_iter().flat_map(|p| self.v4.supernets(p)),
            v6.into_iter().flat_map(|p| self.v6.supernets(p)),
        )
    }

    /// The routes contained in `net` (`net` itself included when it is a route), in address
    /// order. Host bits of `net` are ignored, as for [`Table::supernets`].
    pub fn subnets(&self, net: &IpNet) -> impl Iterator<Item = (IpNet, NextHop)> + '_ {
        let (v4, v6) = split(net);
        as_ipnets(
            v4.into_iter().flat_map(|p| self.v4.subnets(p)),
            v6.into_iter().flat_map(|p| self.v6.subnets(p)),
        )
    }
}

/// Per-family routes as `ipnet` routes, IPv4 first.
fn as_ipnets<'a>(
    v4: impl Iterator<Item = (Prefix<u32>, NextHop)> + 'a,
    v6: impl Iterator<Item = (Prefix<u128>, NextHop)> + 'a,
) -> impl Iterator<Item = (IpNet, NextHop)> + 'a {
    let v4 = v4.map(|(p, nh)| (IpNet::V4(p.to_net()), nh));
    let v6 = v6.map(|(p, nh)| (IpNet::V6(p.to_net()), nh));
    v4.chain(v6)
}

/// `net` with its host bits cleared, as the prefix of its family.
fn split(net: &IpNet) -> (Option<Prefix<u32>>, Option<Prefix<u128>>) {
    match net.trunc() {
        IpNet::V4(n) => (Prefix::from_net(n).ok(), None),
        IpNet::V6(n) => (None, Prefix::from_net(n).ok()),
    }
}

impl FromIterator<(IpNet, NextHop)> for Table {
    /// Later routes for the same prefix replace earlier ones. A prefix with host bits set is
    /// taken as its network (`FromIterator` cannot fail); use [`Table::insert`] to reject it.
    fn from_iter<I: IntoIterator<Item = (IpNet, NextHop)>>(iter: I) -> Self {
        let mut t = Table::new();
        t.extend(iter);
        t
    }
}

impl Extend<(IpNet, NextHop)> for Table {
    /// Later routes for the same prefix replace earlier ones; host bits are cleared, as for
    /// `FromIterator`.
    fn extend<I: IntoIterator<Item = (IpNet, NextHop)>>(&mut self, iter: I) {
        for (net, nh) in iter {
            // The network of an `IpNet` never has host bits, so this insert cannot fail.
            let _ = self.insert(net.trunc(), nh);
        }
    }
}

impl From<RouteTable<u32>> for Table {
    fn from(v4: RouteTable<u32>) -> Self {
        Table::from_families(v4, RouteTable::new())
    }
}

impl From<RouteTable<u128>> for Table {
    fn from(v6: RouteTable<u128>) -> Self {
        Table::from_families(RouteTable::new(), v6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(s: &str) -> IpNet {
        s.parse().unwrap()
    }

    #[test]
    fn host_bits_leave_the_table_unchanged() {
        let mut t = Table::new();
        assert!(t.insert(net("10.0.0.1/8"), 1).is_err());
        assert!(t.is_empty());
        t.insert(net("10.0.0.0/8"), 1).unwrap();
        assert_eq!(
            t.get(&net("10.0.0.1/8")),
            None,
            "not the route's exact prefix"
        );
        assert_eq!(t.remove(&net("10.0.0.1/8")), None);
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn families_never_match_each_other() {
        let t: Table = [(net("0.0.0.0/0"), 4), (net("::ffff:0:0/96"), 6)]
            .into_iter()
            .collect();
        let mapped: IpAddr = "::ffff:10.1.2.3".parse().unwrap();
        assert_eq!(t.longest_match(mapped), Some((net("::ffff:0:0/96"), 6)));
        let t: Table = [(net("0.0.0.0/0"), 4)].into_iter().collect();
        assert_eq!(t.longest_match(mapped), None);
        assert_eq!(
            t.longest_match("10.1.2.3".parse().unwrap()).map(|r| r.1),
            Some(4)
        );
    }

    #[test]
    fn iteration_puts_ipv4_first() {
        let t: Table = [
            (net("2001:db8::/32"), 3),
            (net("10.0.0.0/8"), 1),
            (net("::/0"), 2),
        ]
        .into_iter()
        .collect();
        let order: Vec<String> = t.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(order, ["10.0.0.0/8", "::/0", "2001:db8::/32"]);
        assert_eq!(t.family::<u128>().len(), 2);
        assert_eq!(t.family::<u32>().len(), 1);
    }
}
