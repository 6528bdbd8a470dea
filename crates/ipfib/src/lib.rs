//! # ipfib — exact, fast longest-prefix match for IPv4 and IPv6
//!
//! Put routes in a [`Table`] (both families, `ipnet` prefixes), build a [`Fib`] from it with
//! an engine chosen by name, and look addresses up, one at a time or in batches:
//!
//! ```
//! use ipfib::{Fib, Table};
//!
//! let mut table = Table::new();
//! table.insert("2001:db8::/32".parse().unwrap(), 1).unwrap();
//! table.insert("2001:db8:1::/48".parse().unwrap(), 2).unwrap();
//! table.insert("192.0.2.0/24".parse().unwrap(), 3).unwrap();
//! let fib = Fib::build(&table, "planb").unwrap();
//! assert_eq!(fib.lookup("2001:db8:1::1".parse().unwrap()), Some(2));
//! assert_eq!(fib.lookup("2001:db8:2::1".parse().unwrap()), Some(1));
//! assert_eq!(fib.lookup("192.0.2.77".parse().unwrap()), Some(3));
//! assert_eq!(fib.lookup("2001:db9::".parse().unwrap()), None);
//! ```
//!
//! Under the dual-stack types: [`Address`] (a family as an integer, `u32` or `u128`),
//! [`Prefix`] and [`RouteTable`] (one family), [`Intervals`] (prefixes as elementary
//! intervals, PlanB's first step) and the [`engine`] traits and registry. The main engine,
//! PlanB, searches elementary intervals in pointer-free cache-line B+-trees with SIMD node
//! search chosen at run time; [`engine::reference`] is the trivially correct model every
//! engine is tested against.
//!
//! A [`Fib`] is immutable; [`LiveFib`] is the table that changes while it is read: lock-free
//! reader handles, writers from any thread, a background rebuilder that publishes new versions
//! (see the [`live`] module).
//!
//! The only I/O here is [`saved`] tables (a built [`Fib`] written to a file and mapped back
//! in place, which needs the engines' private arrays); reading route tables from files (text,
//! MRT) is `ipfib-io`, synthetic tables are `ipfib-gen`, and the `ipfib` command line sits on
//! top.

#![warn(missing_docs)]

pub mod addr;
pub(crate) mod cpu;
pub mod engine;
pub mod error;
mod fib;
pub mod interval;
pub mod live;
pub mod parse;
pub mod prefix;
pub mod route_table;
pub mod saved;
mod storage;
pub mod table;

pub use addr::Address;
pub use engine::{Backend, Build, BuildOptions, Lookup};
pub use error::{
    BuildError, InvalidStructure, LiveError, LookupError, OpenError, PrefixError, SaveError,
};
pub use fib::Fib;
pub use interval::Intervals;
pub use live::{LiveFib, LiveOptions, Reader, Snapshot, Update};
pub use prefix::Prefix;
pub use route_table::{NextHop, RouteTable};
pub use table::Table;

/// The README's library example, compiled and run as a doctest so it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeExample;
