//! Adapters that put the peer LPM crates behind [`ipfib::Lookup`], so the bench drives them with the
//! very same loops, inputs and agreement check as our own engines.
//!
//! Each adapter is built from the same [`RouteTable`]: the routes are inserted one by one through
//! the crate's public API, exactly as a user of that crate would load a FIB. Building them is
//! fallible only in theory (a prefix the peer's type rejects), and is then a typed error, never a
//! panic or a silently smaller table.

use std::net::{Ipv4Addr, Ipv6Addr};

use ip_network::{Ipv4Network, Ipv6Network};
use ip_network_table::IpNetworkTable;
use ip_network_table_deps_treebitmap::IpLookupTable;
use ipfib::{Address, BuildError, Lookup, NextHop, RouteTable};
use prefix_trie::PrefixMap;

/// `prefix-trie`'s `PrefixMap` (a TreeBitMap-style trie) keyed by `(address, length)`.
pub struct PrefixTrie<A: Address>
where
    (A, u8): prefix_trie::Prefix,
{
    map: PrefixMap<(A, u8), NextHop>,
}

impl<A: Address> PrefixTrie<A>
where
    (A, u8): prefix_trie::Prefix,
{
    /// Inserts every route of the table.
    pub fn build(table: &RouteTable<A>) -> Self {
        let mut map = PrefixMap::new();
        for (prefix, next_hop) in table.iter() {
            map.insert((prefix.addr(), prefix.len()), next_hop);
        }
        PrefixTrie { map }
    }
}

impl<A: Address> Lookup<A> for PrefixTrie<A>
where
    (A, u8): prefix_trie::Prefix,
    PrefixMap<(A, u8), NextHop>: Send + Sync,
{
    fn name(&self) -> &'static str {
        "prefix-trie"
    }

    #[inline]
    fn lookup(&self, addr: A) -> Option<NextHop> {
        self.map.get_lpm(&(addr, A::BITS)).map(|(_, nh)| *nh)
    }

    fn memory_bytes(&self) -> usize {
        self.map.mem_size()
    }
}

/// `ip_network_table`'s `IpNetworkTable` (a tree bitmap over `std::net` addresses).
pub struct IpNetTable<A: Address> {
    table: IpNetworkTable<NextHop>,
    /// Bytes of the same routes in the crate's backend (`IpLookupTable::mem_usage`), since
    /// `IpNetworkTable` does not report its size. Measured once at build time.
    bytes: usize,
    _family: std::marker::PhantomData<A>,
}

/// What differs between the families for [`IpNetTable`]: the `ip_network` prefix type and the
/// per-family lookup call.
pub trait IpNetFamily: Address {
    /// Inserts one route into the table and the size-probe backend table.
    fn insert(
        table: &mut IpNetworkTable<NextHop>,
        probe: &mut Probe,
        addr: Self,
        len: u8,
        next_hop: NextHop,
    ) -> Result<(), BuildError>;
    /// Longest match through the crate's per-family entry point.
    fn longest_match(table: &IpNetworkTable<NextHop>, addr: Self) -> Option<NextHop>;
}

/// The backend table the size of an [`IpNetTable`] is read from, one per family.
pub enum Probe {
    /// IPv4 backend.
    V4(IpLookupTable<Ipv4Addr, NextHop>),
    /// IPv6 backend.
    V6(IpLookupTable<Ipv6Addr, NextHop>),
}

impl Probe {
    fn bytes(&self) -> usize {
        let (nodes, results) = match self {
            Probe::V4(t) => t.mem_usage(),
            Probe::V6(t) => t.mem_usage(),
        };
        nodes + results
    }
}

fn rejected(prefix: impl std::fmt::Display, why: impl std::fmt::Display) -> BuildError {
    BuildError::Unsupported {
        engine: "ip_network_table",
        reason: format!("rejects {prefix}: {why}"),
    }
}

impl IpNetFamily for u32 {
    fn insert(
        table: &mut IpNetworkTable<NextHop>,
        probe: &mut Probe,
        addr: u32,
        len: u8,
        next_hop: NextHop,
    ) -> Result<(), BuildError> {
        let ip = Ipv4Addr::from(addr);
        let net = Ipv4Network::new(ip, len).map_err(|e| rejected(format!("{ip}/{len}"), e))?;
        table.insert(net, next_hop);
        if let Probe::V4(t) = probe {
            t.insert(ip, u32::from(len), next_hop);
        }
        Ok(())
    }

    #[inline]
    fn longest_match(table: &IpNetworkTable<NextHop>, addr: u32) -> Option<NextHop> {
        table
            .longest_match_ipv4(Ipv4Addr::from(addr))
            .map(|(_, nh)| *nh)
    }
}

impl IpNetFamily for u128 {
    fn insert(
        table: &mut IpNetworkTable<NextHop>,
        probe: &mut Probe,
        addr: u128,
        len: u8,
        next_hop: NextHop,
    ) -> Result<(), BuildError> {
        let ip = Ipv6Addr::from(addr);
        let net = Ipv6Network::new(ip, len).map_err(|e| rejected(format!("{ip}/{len}"), e))?;
        table.insert(net, next_hop);
        if let Probe::V6(t) = probe {
            t.insert(ip, u32::from(len), next_hop);
        }
        Ok(())
    }

    #[inline]
    fn longest_match(table: &IpNetworkTable<NextHop>, addr: u128) -> Option<NextHop> {
        table
            .longest_match_ipv6(Ipv6Addr::from(addr))
            .map(|(_, nh)| *nh)
    }
}

impl<A: IpNetFamily> IpNetTable<A> {
    /// Inserts every route of the table; a prefix the crate rejects is an error for the whole
    /// build.
    pub fn build(routes: &RouteTable<A>) -> Result<Self, BuildError> {
        let mut table = IpNetworkTable::new();
        let mut probe = if A::BITS == 32 {
            Probe::V4(IpLookupTable::new())
        } else {
            Probe::V6(IpLookupTable::new())
        };
        for (prefix, next_hop) in routes.iter() {
            A::insert(
                &mut table,
                &mut probe,
                prefix.addr(),
                prefix.len(),
                next_hop,
            )?;
        }
        Ok(IpNetTable {
            table,
            bytes: probe.bytes(),
            _family: std::marker::PhantomData,
        })
    }
}

impl<A: IpNetFamily> Lookup<A> for IpNetTable<A> {
    fn name(&self) -> &'static str {
        "ip_network_table"
    }

    #[inline]
    fn lookup(&self, addr: A) -> Option<NextHop> {
        A::longest_match(&self.table, addr)
    }

    fn memory_bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipfib::engine::reference::Reference;

    fn table_v4(routes: &[(&str, NextHop)]) -> RouteTable<u32> {
        let mut t = RouteTable::new();
        for (net, nh) in routes {
            t.insert_net(net.parse().unwrap(), *nh).unwrap();
        }
        t
    }

    fn table_v6(routes: &[(&str, NextHop)]) -> RouteTable<u128> {
        let mut t = RouteTable::new();
        for (net, nh) in routes {
            t.insert_net(net.parse().unwrap(), *nh).unwrap();
        }
        t
    }

    /// Edge cases by hand: default route, nested prefixes, host routes at both ends of the
    /// space, and addresses just outside a prefix.
    #[test]
    fn peers_agree_with_the_reference_on_edges_v4() {
        let t = table_v4(&[
            ("0.0.0.0/0", 9),
            ("10.0.0.0/8", 1),
            ("10.1.0.0/16", 2),
            ("10.1.2.0/24", 3),
            ("255.255.255.255/32", 4),
            ("0.0.0.0/32", 5),
        ]);
        let reference = Reference::new(&t);
        let trie = PrefixTrie::build(&t);
        let ipnet = IpNetTable::build(&t).unwrap();
        let probes: [u32; 8] = [
            0,
            1,
            0x0a00_0000,
            0x0a01_0203,
            0x0a01_03ff,
            0x0b00_0000,
            u32::MAX,
            u32::MAX - 1,
        ];
        for a in probes {
            assert_eq!(trie.lookup(a), reference.lookup(a), "prefix-trie at {a:#x}");
            assert_eq!(
                ipnet.lookup(a),
                reference.lookup(a),
                "ip_network_table at {a:#x}"
            );
        }
        assert_eq!(trie.lookup(0x0a01_0203), Some(3));
        assert_eq!(ipnet.lookup(u32::MAX), Some(4));
        assert!(ipnet.memory_bytes() > 0 && trie.memory_bytes() > 0);
    }

    #[test]
    fn peers_miss_where_nothing_matches_v6() {
        let t = table_v6(&[("2001:db8::/32", 1), ("2001:db8:1::/48", 2), ("::1/128", 3)]);
        let trie = PrefixTrie::build(&t);
        let ipnet = IpNetTable::build(&t).unwrap();
        let addr = |s: &str| u128::from(s.parse::<Ipv6Addr>().unwrap());
        for e in [&trie as &dyn Lookup<u128>, &ipnet] {
            assert_eq!(e.lookup(addr("2001:db8:1::5")), Some(2), "{}", e.name());
            assert_eq!(e.lookup(addr("2001:db8:2::5")), Some(1), "{}", e.name());
            assert_eq!(e.lookup(addr("2001:db9::")), None, "{}", e.name());
            assert_eq!(e.lookup(addr("::1")), Some(3), "{}", e.name());
            assert_eq!(e.lookup(addr("::2")), None, "{}", e.name());
        }
    }
}
