//! Engines: read-only structures built from a [`RouteTable`] that answer longest-prefix-match
//! queries, behind two traits and a registry.
//!
//! * [`Build`] makes an engine from one family's routes ([`BuildOptions`] picks a SIMD
//!   [`Backend`] where the engine has several).
//! * [`Lookup`] answers: one address, a batch into `Option`s, or a batch into a plain `u32`
//!   array with a chosen "no route" value (the layout C, DPDK and NumPy callers use).
//! * The registry ([`engines`], [`by_name`]) names every engine, so the CLI, the benchmarks
//!   and the conformance tests enumerate engines instead of listing them: adding an engine is
//!   one module and one registry line.
//!
//! The family bound everywhere is [`Address`] (`u32` = IPv4, `u128` = IPv6). An engine that
//! supports one family only registers [`Absent`] for the other, which builds an empty table and
//! refuses routes with [`BuildError::UnsupportedFamily`].
//!
//! ```
//! use ipfib::engine::{self, BuildOptions, Lookup};
//! use ipfib::{Prefix, RouteTable};
//!
//! let mut routes = RouteTable::<u128>::new();
//! routes.insert(Prefix::new(0x2001_0db8 << 96, 32).unwrap(), 7);
//! let planb = engine::by_name("planb").unwrap();
//! let fib = planb.build::<u128>(&routes, &BuildOptions::default()).unwrap();
//! assert_eq!(fib.lookup(0x2001_0db8_0000_0000_0000_0000_0000_0001), Some(7));
//! let mut out = [0u32; 2];
//! fib.lookup_batch_raw(&[0x2001_0db8 << 96, 1], &mut out, u32::MAX).unwrap();
//! assert_eq!(out, [7, u32::MAX]);
//! ```

mod absent;
pub mod cptrie;
pub mod dxr;
mod line_model;
pub mod patricia;
pub mod planb;
pub mod poptrie;
pub mod reference;
mod registry;

use std::fmt;

pub use crate::cpu::Backend;
pub use absent::Absent;
pub use registry::{by_name, engines, Builder, EngineInfo};

use crate::addr::{Address, AddressInput};
use crate::error::{BuildError, InvalidStructure, LookupError};
use crate::prefix::Prefix;
use crate::route_table::{NextHop, RouteTable};

/// A longest-prefix-match structure for one address family: the lookup side of an engine.
///
/// Only [`Lookup::name`], [`Lookup::lookup`] and [`Lookup::memory_bytes`] are required; the
/// batch methods have loop defaults that fast engines replace with interleaved searches.
///
/// ```
/// use ipfib::engine::{by_name, BuildOptions, Lookup};
/// use ipfib::{Prefix, RouteTable};
///
/// let routes: RouteTable<u32> = [(Prefix::new(0x0a00_0000, 8).unwrap(), 4)].into_iter().collect();
/// let engine: Box<dyn Lookup<u32>> =
///     by_name("planb").unwrap().build(&routes, &BuildOptions::default()).unwrap();
/// assert_eq!(engine.lookup(0x0a00_0001), Some(4));
///
/// let addrs = [0x0a00_0001, 0x0b00_0001, 0x0aff_ffff];
/// let mut out = [None; 3];
/// engine.lookup_batch(&addrs, &mut out).unwrap();
/// assert_eq!(out, [Some(4), None, Some(4)]);
/// let mut too_short = [None; 2];
/// assert!(engine.lookup_batch(&addrs, &mut too_short).is_err(), "lengths must match");
/// assert!(engine.validate().is_ok());
/// ```
pub trait Lookup<A: Address>: Send + Sync + std::any::Any {
    /// The engine's registered name (`"planb"`, ...).
    fn name(&self) -> &'static str;

    /// The next hop of the longest prefix containing `addr`, or `None` when no prefix does.
    fn lookup(&self, addr: A) -> Option<NextHop>;

    /// Looks up every address of `addrs` into the same position of `out`; `out[i]` is `None`
    /// when no route matches `addrs[i]`. The slices must have equal lengths, otherwise nothing
    /// is written and an error is returned.
    fn lookup_batch(&self, addrs: &[A], out: &mut [Option<NextHop>]) -> Result<(), LookupError> {
        check_batch(addrs.len(), out.len())?;
        for (a, o) in addrs.iter().zip(out.iter_mut()) {
            *o = self.lookup(*a);
        }
        Ok(())
    }

    /// [`Lookup::lookup_batch`] into plain next hops: `out[i]` is the next hop, or `miss` when
    /// no route matches (so a route whose next hop equals `miss` cannot be told from no route:
    /// pick a `miss` the table does not use).
    fn lookup_batch_raw(
        &self,
        addrs: &[A],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        check_batch(addrs.len(), out.len())?;
        for (a, o) in addrs.iter().zip(out.iter_mut()) {
            *o = self.lookup(*a).unwrap_or(miss);
        }
        Ok(())
    }

    /// [`Lookup::lookup_batch_raw`] for addresses as network-order bytes (packet headers, C
    /// callers, DPDK's layout). The default converts in small chunks and calls
    /// `lookup_batch_raw`; an engine whose walk reads each address once (PlanB) converts
    /// where it reads, so the bytes cost no pass of their own.
    fn lookup_batch_bytes_raw(
        &self,
        addrs: &[A::Bytes],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        check_batch(addrs.len(), out.len())?;
        const CHUNK: usize = 256;
        let mut wide = [A::ZERO; CHUNK];
        for (a, o) in addrs.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            let wide = &mut wide[..a.len()];
            for (w, b) in wide.iter_mut().zip(a) {
                *w = b.address();
            }
            self.lookup_batch_raw(wide, o, miss)?;
        }
        Ok(())
    }

    /// Bytes of memory the lookup structure occupies (not counting the route table).
    fn memory_bytes(&self) -> usize;

    /// The engine's shape for `ipfib stats`: levels, node counts, bytes by part, ...
    fn describe(&self) -> Vec<Detail> {
        Vec::new()
    }

    /// The average number of distinct 64-byte cache lines one lookup of `addrs` reads, from
    /// the engine's model of its own structure (every line a lookup loads counts once, hit or
    /// miss: caches are not modelled), so `ipfib stats` and the benchmarks can report the
    /// trace-weighted cost of a lookup on machines without hardware counters. `addrs` is
    /// counted as one batch of raw next hops ([`Lookup::lookup_batch_raw`]), where an engine
    /// may read fewer lines than single lookups do (PlanB's staged IPv6 batch); a slice of one
    /// address gives the single lookup's lines. `None` (the default) when the engine has no
    /// such model or `addrs` is empty.
    fn lines_per_lookup(&self, addrs: &[A]) -> Option<f64> {
        let _ = addrs;
        None
    }

    /// [`Lookup::lines_per_lookup`] split by the steps of a lookup, in walk order: each step's
    /// name and the average lines it reads over `addrs` (a step some lookups skip counts their
    /// share), summing to `lines_per_lookup`. So a structural change shows at which step it
    /// saves lines. Empty (the default) when the engine has no such model or `addrs` is empty.
    fn lines_by_step(&self, addrs: &[A]) -> Vec<(String, f64)> {
        let _ = addrs;
        Vec::new()
    }

    /// Checks every structural invariant the engine's lookups rely on (for engines with
    /// unchecked accesses, everything that keeps them in bounds). A structure from the
    /// engine's own builder always passes; data read from outside is validated before use.
    fn validate(&self) -> Result<(), InvalidStructure> {
        Ok(())
    }

    /// Builds the engine for `table` (the complete new route set) after the prefixes in `changed`
    /// were inserted, removed or given new values, reusing whatever parts of `self` they do not
    /// touch. `None` = this engine cannot rebuild in part; the caller builds from scratch.
    ///
    /// [`crate::LiveFib`]'s rebuilder calls this on the engine of the last published version,
    /// with `changed` sorted and free of duplicates, so an engine whose structure is
    /// partitioned (PlanB's chunks) can make publication cost independent of the table size.
    fn rebuild(
        &self,
        table: &RouteTable<A>,
        changed: &[Prefix<A>],
        options: &BuildOptions,
    ) -> Option<Result<Box<dyn Lookup<A>>, BuildError>> {
        let _ = (table, changed, options);
        None
    }

    /// A more compact equivalent of this engine: after partial rebuilds an engine may hold
    /// space its replaced parts used, or be split in ways that cost lookups. With `settled`
    /// false the step must be bounded (it runs between updates); with `settled` true the table
    /// has been quiet for a while and the step may take work proportional to the table (back
    /// to the layout a full build gives). [`crate::LiveFib`]'s rebuilder calls it while no
    /// update waits, again and again until it returns `None`. A step that takes long polls
    /// `interrupted` now and then and gives up (returns `None`) once it says true, so that an
    /// update arriving meanwhile does not wait for the step. `None`: nothing to do (the
    /// default), or interrupted.
    fn compact(
        &self,
        options: &BuildOptions,
        settled: bool,
        interrupted: &dyn Fn() -> bool,
    ) -> Option<Result<Box<dyn Lookup<A>>, BuildError>> {
        let _ = (options, settled, interrupted);
        None
    }
}

/// The build side of an engine: how it is made from one family's routes.
///
/// An engine is a type that implements [`Build`] and [`Lookup`] for the families it supports.
/// Here is a complete (if slow) one, written outside the crate:
///
/// ```
/// use ipfib::engine::{Build, BuildOptions, Lookup};
/// use ipfib::{Address, BuildError, NextHop, Prefix, RouteTable};
///
/// /// Every route in a list, scanned for the longest match.
/// struct Scan<A: Address>(Vec<(Prefix<A>, NextHop)>);
///
/// impl<A: Address> Lookup<A> for Scan<A> {
///     fn name(&self) -> &'static str {
///         "scan"
///     }
///     fn lookup(&self, addr: A) -> Option<NextHop> {
///         let hits = self.0.iter().filter(|(p, _)| p.contains(addr));
///         hits.max_by_key(|(p, _)| p.len()).map(|&(_, nh)| nh)
///     }
///     fn memory_bytes(&self) -> usize {
///         self.0.len() * std::mem::size_of::<(Prefix<A>, NextHop)>()
///     }
/// }
///
/// impl<A: Address> Build<A> for Scan<A> {
///     fn build(table: &RouteTable<A>, _: &BuildOptions) -> Result<Self, BuildError> {
///         Ok(Scan(table.iter().collect()))
///     }
/// }
///
/// let routes: RouteTable<u128> = [
///     (Prefix::new(0, 0).unwrap(), 1),
///     (Prefix::new(0x2001_0db8 << 96, 32).unwrap(), 2),
/// ]
/// .into_iter()
/// .collect();
/// let scan = Scan::build(&routes, &BuildOptions::default()).unwrap();
/// assert_eq!(scan.lookup(0x2001_0db8 << 96 | 5), Some(2));
/// assert_eq!(scan.lookup(7), Some(1));
/// // The batch methods come for free.
/// let mut out = [0; 2];
/// scan.lookup_batch_raw(&[7, 0x2001_0db8 << 96], &mut out, u32::MAX).unwrap();
/// assert_eq!(out, [1, 2]);
/// ```
///
/// In this crate, an engine is registered with one line in the registry (`registry.rs`),
/// after which `Fib::build`, the CLI, the benchmarks and the conformance tests all use it.
pub trait Build<A: Address>: Lookup<A> + Sized + 'static {
    /// Builds the engine. An engine that cannot represent the table (a family it does not
    /// support, more next hops than its encoding holds) returns a typed error, never a
    /// structure that answers wrongly.
    fn build(table: &RouteTable<A>, options: &BuildOptions) -> Result<Self, BuildError>;
}

/// How to build an engine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BuildOptions {
    /// The SIMD backend, for engines that have several; `None` picks the fastest this CPU
    /// runs. Asking for one the CPU lacks is [`BuildError::BackendUnavailable`].
    pub backend: Option<Backend>,
    /// The engine will take partial rebuilds ([`Lookup::rebuild`], as a
    /// [`LiveFib`](crate::LiveFib)'s engines do; it sets this): engines that can make room for
    /// them up front do. PlanB reserves as many lines again after its own (address space until
    /// partial rebuilds write them), so that rebuilt chunks join the others' lines and the
    /// batched walk stays the one-segment walk. Default false.
    pub for_updates: bool,
}

impl BuildOptions {
    /// Options that force a SIMD backend.
    pub fn with_backend(backend: Backend) -> Self {
        BuildOptions {
            backend: Some(backend),
            ..BuildOptions::default()
        }
    }

    /// The backend to use: the one asked for, if this CPU runs it, else the fastest.
    pub fn resolve_backend(&self) -> Result<Backend, BuildError> {
        match self.backend {
            None => Ok(Backend::detect()),
            Some(b) if b.is_available() => Ok(b),
            Some(b) => Err(BuildError::BackendUnavailable { backend: b.name() }),
        }
    }
}

/// One figure of an engine's shape, as [`Lookup::describe`] reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Detail {
    /// A `snake_case` name, used as the JSON key and (with spaces) as the label.
    pub name: &'static str,
    /// The figure.
    pub value: DetailValue,
}

impl Detail {
    /// A count.
    pub fn count(name: &'static str, n: usize) -> Self {
        Detail {
            name,
            value: DetailValue::Count(n as u64),
        }
    }

    /// A byte size.
    pub fn bytes(name: &'static str, n: usize) -> Self {
        Detail {
            name,
            value: DetailValue::Bytes(n as u64),
        }
    }

    /// A word or short phrase.
    pub fn text(name: &'static str, s: impl Into<String>) -> Self {
        Detail {
            name,
            value: DetailValue::Text(s.into()),
        }
    }

    /// A measured ratio or average.
    pub fn ratio(name: &'static str, x: f64) -> Self {
        Detail {
            name,
            value: DetailValue::Ratio(x),
        }
    }
}

/// The value of a [`Detail`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DetailValue {
    /// A count of things.
    Count(u64),
    /// A size in bytes.
    Bytes(u64),
    /// A word or short phrase.
    Text(String),
    /// A ratio or average.
    Ratio(f64),
}

impl fmt::Display for DetailValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DetailValue::Count(n) => write!(f, "{n}"),
            DetailValue::Bytes(n) => write!(f, "{n} ({:.2} MiB)", *n as f64 / 1048576.0),
            DetailValue::Text(s) => f.write_str(s),
            DetailValue::Ratio(x) => write!(f, "{x:.3}"),
        }
    }
}

/// The length check every batch lookup starts with.
pub fn check_batch(addrs: usize, out: usize) -> Result<(), LookupError> {
    if addrs == out {
        Ok(())
    } else {
        Err(LookupError::BatchLength { addrs, out })
    }
}
