//! # ipfib — exact, fast longest-prefix match for IPv4 and IPv6
//!
//! Build a [`RouteTable`] (the authoritative set of routes), then build an engine from it and
//! query it. The PlanB engine turns prefixes into elementary intervals ([`interval`]) and
//! searches them in a pointer-free, cache-line-sized B+-tree with SIMD node search chosen at
//! run time; [`engine::reference`] is the trivially correct model it is tested against.
//!
//! ```
//! use ipfib::{Lpm, PlanB, Prefix, RouteTable};
//!
//! let mut table = RouteTable::<u128>::new();
//! table.insert_net("2001:db8::/32".parse().unwrap(), 1).unwrap();
//! table.insert_net("2001:db8:1::/48".parse().unwrap(), 2).unwrap();
//! let fib = PlanB::build(&table);
//! let addr = |s: &str| u128::from(s.parse::<std::net::Ipv6Addr>().unwrap());
//! assert_eq!(fib.lookup(addr("2001:db8:1::1")), Some(2));
//! assert_eq!(fib.lookup(addr("2001:db8:2::1")), Some(1));
//! assert_eq!(fib.lookup(addr("2001:db9::")), None);
//! ```

#![warn(missing_docs)]

pub mod addr;
pub mod engine;
pub mod error;
pub mod gen;
pub mod interval;
pub mod io;
pub mod prefix;
pub mod table;

pub use addr::Address;
pub use engine::planb::PlanB;
pub use engine::reference::Reference;
pub use engine::{EngineKind, Lpm};
pub use error::{LoadError, LookupError, PrefixError};
pub use interval::Intervals;
pub use prefix::Prefix;
pub use table::{Fib, NextHop, RouteTable};
