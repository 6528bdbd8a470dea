//! Lookup engines: read-only structures built from a [`RouteTable`] that answer
//! longest-prefix-match queries.
//!
//! Every engine implements [`Lpm`], so the CLI, the benchmarks and the tests treat them alike.
//! [`reference`] is the obviously-correct model every other engine is tested against.

pub mod planb;
pub mod reference;

use std::fmt;
use std::str::FromStr;

use crate::addr::Address;
use crate::error::LookupError;
use crate::table::{NextHop, RouteTable};

/// A longest-prefix-match structure for one address family.
pub trait Lpm<A: Address>: Send + Sync {
    /// The engine's name, as accepted by `--engine`.
    fn name(&self) -> &'static str;

    /// The next hop of the longest prefix containing `addr`, or `None` when no prefix does.
    fn lookup(&self, addr: A) -> Option<NextHop>;

    /// Looks up every address of `addrs` into the same position of `out`; fast engines
    /// interleave many independent searches here. `out[i]` is `None` when no route matches
    /// `addrs[i]`. The slices must have equal lengths, otherwise nothing is written and an error
    /// is returned.
    fn lookup_batch(&self, addrs: &[A], out: &mut [Option<NextHop>]) -> Result<(), LookupError> {
        check_batch(addrs.len(), out.len())?;
        for (a, o) in addrs.iter().zip(out.iter_mut()) {
            *o = self.lookup(*a);
        }
        Ok(())
    }

    /// Bytes of memory the lookup structure occupies (not counting the route table).
    fn memory_bytes(&self) -> usize;
}

/// The length check every batch lookup starts with.
pub fn check_batch(addrs: usize, out: usize) -> Result<(), LookupError> {
    if addrs == out {
        Ok(())
    } else {
        Err(LookupError::BatchLength { addrs, out })
    }
}

/// The engines this crate can build, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// PlanB: interval partitioning searched in a linearized SIMD B+-tree.
    PlanB,
    /// The reference model: one hash map per prefix length, probed longest first.
    Reference,
}

impl EngineKind {
    /// Every engine, in the order tools list them.
    pub const ALL: &'static [EngineKind] = &[EngineKind::PlanB, EngineKind::Reference];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::PlanB => "planb",
            EngineKind::Reference => "reference",
        }
    }

    /// Builds this engine for a table of IPv4 routes.
    pub fn build_v4(self, table: &RouteTable<u32>) -> Box<dyn Lpm<u32>> {
        match self {
            EngineKind::PlanB => Box::new(planb::PlanB::build(table)),
            EngineKind::Reference => Box::new(reference::Reference::build(table)),
        }
    }

    /// Builds this engine for a table of IPv6 routes.
    pub fn build_v6(self, table: &RouteTable<u128>) -> Box<dyn Lpm<u128>> {
        match self {
            EngineKind::PlanB => Box::new(planb::PlanB::build(table)),
            EngineKind::Reference => Box::new(reference::Reference::build(table)),
        }
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown engine name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown engine {0:?} (known: planb, reference)")]
pub struct UnknownEngine(pub String);

impl FromStr for EngineKind {
    type Err = UnknownEngine;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EngineKind::ALL
            .iter()
            .copied()
            .find(|k| k.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownEngine(s.to_string()))
    }
}
