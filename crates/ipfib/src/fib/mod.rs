//! [`Fib`]: a built forwarding table for both families, the object lookups go through.
//!
//! A `Fib` is built from a [`Table`] by engine name (see [`crate::engine::engines`]) and is
//! immutable; rebuild it (or use a live table) after the routes change. Lookups of each family
//! go to that family's engine: an IPv4 address never matches an IPv6 route and vice versa, and
//! an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is an IPv6 address (it matches IPv6 routes
//! such as `::ffff:0:0/96` only); convert it with [`std::net::Ipv6Addr::to_ipv4_mapped`] to
//! look it up among the IPv4 routes.

mod routes;

use std::fmt;
use std::net::IpAddr;

use ipnet::IpNet;

use crate::engine::{self, BuildOptions, EngineInfo, Lookup};
use crate::error::{BuildError, LookupError};
use crate::route_table::NextHop;
use crate::table::Table;
pub(crate) use routes::RouteList;

/// A forwarding table of both families, built by one engine.
///
/// ```
/// use ipfib::{Fib, Table};
/// use std::net::IpAddr;
///
/// let mut t = Table::new();
/// t.insert("10.0.0.0/8".parse().unwrap(), 1).unwrap();
/// t.insert("2001:db8::/32".parse().unwrap(), 2).unwrap();
/// let fib = Fib::build(&t, "planb").unwrap();
///
/// let addr: IpAddr = "10.1.2.3".parse().unwrap();
/// assert_eq!(fib.lookup(addr), Some(1));
/// assert_eq!(fib.lookup_prefix(addr), Some(("10.0.0.0/8".parse().unwrap(), 1)));
///
/// // Batches take integers (u32::from(Ipv4Addr), u128::from(Ipv6Addr)) and write plain
/// // next hops, with the caller's value for "no route".
/// let addrs = [0x0a00_0001, 0x0b00_0001];
/// let mut out = [0u32; 2];
/// fib.lookup_v4_batch(&addrs, &mut out, u32::MAX).unwrap();
/// assert_eq!(out, [1, u32::MAX]);
///
/// assert!(Fib::build(&t, "no-such-engine").is_err());
/// ```
pub struct Fib {
    pub(crate) engine: &'static EngineInfo,
    pub(crate) v4: Box<dyn Lookup<u32>>,
    pub(crate) v6: Box<dyn Lookup<u128>>,
    pub(crate) routes_v4: RouteList<u32>,
    pub(crate) routes_v6: RouteList<u128>,
    /// The arrays are a mapped saved table.
    pub(crate) mapped: bool,
}

impl Fib {
    /// Builds both families' engines by engine name (ASCII case ignored). An unknown name, or
    /// an engine that cannot hold the table, is a typed error.
    pub fn build(table: &Table, engine: &str) -> Result<Fib, BuildError> {
        Fib::build_with(table, engine, &BuildOptions::default())
    }

    /// [`Fib::build`] with options (a forced SIMD backend, say).
    pub fn build_with(
        table: &Table,
        engine: &str,
        options: &BuildOptions,
    ) -> Result<Fib, BuildError> {
        let info = engine::by_name(engine)?;
        Ok(Fib {
            engine: info,
            v4: info.build(table.v4(), options)?,
            v6: info.build(table.v6(), options)?,
            routes_v4: RouteList::new(table.v4()),
            routes_v6: RouteList::new(table.v6()),
            mapped: false,
        })
    }

    /// The next hop of the longest route containing `addr` (of its own family), or `None`.
    #[inline]
    pub fn lookup(&self, addr: IpAddr) -> Option<NextHop> {
        match addr {
            IpAddr::V4(a) => self.v4.lookup(u32::from(a)),
            IpAddr::V6(a) => self.v6.lookup(u128::from(a)),
        }
    }

    /// The route that matched: the longest prefix containing `addr`, with its next hop. It is
    /// answered from a route list kept beside the engines, so [`Fib::lookup`] pays nothing for
    /// it; it costs a binary search and a short walk up the nesting chain.
    pub fn lookup_prefix(&self, addr: IpAddr) -> Option<(IpNet, NextHop)> {
        match addr {
            IpAddr::V4(a) => self
                .routes_v4
                .get()
                .longest_match(u32::from(a))
                .map(|(p, nh)| (IpNet::V4(p.to_net()), nh)),
            IpAddr::V6(a) => self
                .routes_v6
                .get()
                .longest_match(u128::from(a))
                .map(|(p, nh)| (IpNet::V6(p.to_net()), nh)),
        }
    }

    /// Looks up IPv4 addresses (`u32::from(Ipv4Addr)`, host order) into plain next hops,
    /// `miss` where no route matches. The slices must have equal lengths, otherwise nothing is
    /// written and an error is returned.
    pub fn lookup_v4_batch(
        &self,
        addrs: &[u32],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        self.v4.lookup_batch_raw(addrs, out, miss)
    }

    /// Looks up IPv6 addresses (`u128::from(Ipv6Addr)`) into plain next hops, `miss` where no
    /// route matches; lengths as for [`Fib::lookup_v4_batch`].
    pub fn lookup_v6_batch(
        &self,
        addrs: &[u128],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        self.v6.lookup_batch_raw(addrs, out, miss)
    }

    /// [`Fib::lookup_v4_batch`] for addresses as 4 network-order bytes (as in a packet header).
    pub fn lookup_v4_bytes_batch(
        &self,
        addrs: &[[u8; 4]],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        self.v4.lookup_batch_bytes_raw(addrs, out, miss)
    }

    /// [`Fib::lookup_v6_batch`] for addresses as 16 network-order bytes (as in a packet header,
    /// and as DPDK's `rte_fib6` takes them), read in place: no conversion pass over the batch.
    pub fn lookup_v6_bytes_batch(
        &self,
        addrs: &[[u8; 16]],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        self.v6.lookup_batch_bytes_raw(addrs, out, miss)
    }

    /// The IPv4 engine, for per-family calls (batches into `Option`s, stats, validation).
    pub fn v4(&self) -> &dyn Lookup<u32> {
        self.v4.as_ref()
    }

    /// The IPv6 engine.
    pub fn v6(&self) -> &dyn Lookup<u128> {
        self.v6.as_ref()
    }

    /// Bytes of both engines' lookup structures (what lookups touch). The route list kept for
    /// [`Fib::lookup_prefix`] is not included; see [`Fib::route_list_bytes`].
    pub fn memory_bytes(&self) -> usize {
        self.v4.memory_bytes() + self.v6.memory_bytes()
    }

    /// Bytes of the route list kept for [`Fib::lookup_prefix`].
    pub fn route_list_bytes(&self) -> usize {
        self.routes_v4.get().bytes() + self.routes_v6.get().bytes()
    }

    /// The engine's registered name.
    pub fn engine_name(&self) -> &'static str {
        self.engine.name()
    }

    /// Number of routes it was built from, both families (cheap: no route list is made).
    pub fn route_count(&self) -> usize {
        self.routes_v4.len() + self.routes_v6.len()
    }

    /// The routes it was built from.
    pub fn table(&self) -> Table {
        Table::from_families(
            self.routes_v4.get().to_table(),
            self.routes_v6.get().to_table(),
        )
    }
}

impl fmt::Debug for Fib {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fib")
            .field("engine", &self.engine.name())
            .field("memory_bytes", &self.memory_bytes())
            .finish_non_exhaustive()
    }
}
