//! The engines this crate offers, by name: the one list the CLI, the benchmarks and the
//! conformance tests enumerate.

use std::any::Any;
use std::fmt;

use super::cptrie::CpTrie;
use super::dxr::{Best, Dxr, D16R, D20R};
use super::patricia::Patricia;
use super::planb::PlanB;
use super::poptrie::Poptrie;
use super::reference::Reference;
use super::Absent;
use super::{Build, BuildOptions, Lookup};
use crate::addr::Address;
use crate::error::BuildError;
use crate::prefix::Prefix;
use crate::route_table::RouteTable;

/// Every registered engine, in the order tools list them (the default first). Adding an
/// engine is its module and one line here.
static ENGINES: &[EngineInfo] = &[
    EngineInfo::new::<PlanB<u32>, PlanB<u128>>(
        "planb",
        "elementary intervals in pointer-free cache-line B+-trees with SIMD node search",
    ),
    EngineInfo::new::<Poptrie<u32>, Poptrie<u128>>(
        "poptrie",
        "64-ary popcount trie with leaf compression and a direct table (Asai & Ohara, SIGCOMM '15)",
    ),
    EngineInfo::new::<CpTrie<u32>, CpTrie<u128>>(
        "cptrie",
        "Poptrie with wide nodes: 64-bit bitmap chunks beside cumulative popcounts (Islam & Khan, HPSR '21)",
    ),
    // DXR is IPv4 only: its 16-bit range starts need the direct table to resolve all but 16
    // bits, which for IPv6 means a table over 112 bits (see the dxr module and BENCHMARKS.md).
    EngineInfo::new::<Dxr<Best>, Absent>(
        "dxr",
        "DXR (IPv4): direct table on the top 16 bits, SIMD search of compact per-chunk ranges",
    ),
    EngineInfo::new::<Dxr<D16R>, Absent>(
        "d16r",
        "DXR preset D16R (IPv4): 2^16-entry direct table, 16- or 8-bit range starts",
    ),
    EngineInfo::new::<Dxr<D20R>, Absent>(
        "d20r",
        "DXR preset D20R (IPv4): 2^20-entry direct table, 12- or 8-bit range starts",
    ),
    EngineInfo::new::<Patricia<u32>, Patricia<u128>>(
        "patricia",
        "path-compressed binary trie in a u32-linked node arena (the BPF LPM trie's structure)",
    ),
    EngineInfo::new::<Reference<u32>, Reference<u128>>(
        "reference",
        "one hash map per prefix length, probed longest first (the test model)",
    ),
];

/// Builds one family's engine from a route table, boxed so engines mix in one list.
pub type Builder<A> = fn(&RouteTable<A>, &BuildOptions) -> Result<Box<dyn Lookup<A>>, BuildError>;

/// A registered engine: its name, what it is, and how to build it for each family.
pub struct EngineInfo {
    name: &'static str,
    summary: &'static str,
    v4: Builder<u32>,
    v6: Builder<u128>,
}

fn boxed<A: Address, E: Build<A>>(
    table: &RouteTable<A>,
    options: &BuildOptions,
) -> Result<Box<dyn Lookup<A>>, BuildError> {
    Ok(Box::new(E::build(table, options)?))
}

impl EngineInfo {
    /// An entry for engine types `E4` (IPv4) and `E6` (IPv6); a single-family engine passes
    /// [`super::Absent`] for the other family.
    pub const fn new<E4: Build<u32>, E6: Build<u128>>(
        name: &'static str,
        summary: &'static str,
    ) -> Self {
        EngineInfo {
            name,
            summary,
            v4: boxed::<u32, E4>,
            v6: boxed::<u128, E6>,
        }
    }

    /// The name `--engine` and [`crate::Fib::build`] accept.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// One line on what the engine is.
    pub fn summary(&self) -> &'static str {
        self.summary
    }

    /// Whether the engine holds routes of family `A`: a single-family engine (DXR) refuses a
    /// one-route table of the other family with [`BuildError::UnsupportedFamily`]. Other
    /// build errors (an unavailable backend in `options`) are returned.
    pub fn supports<A: Address>(&self, options: &BuildOptions) -> Result<bool, BuildError> {
        let one: RouteTable<A> = [(Prefix::covering(A::ZERO, 0), 0)].into_iter().collect();
        match self.build(&one, options) {
            Ok(_) => Ok(true),
            Err(BuildError::UnsupportedFamily { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Builds the engine for family `A` from its routes.
    pub fn build<A: Address>(
        &self,
        table: &RouteTable<A>,
        options: &BuildOptions,
    ) -> Result<Box<dyn Lookup<A>>, BuildError> {
        let builders: [&dyn Any; 2] = [&self.v4, &self.v6];
        let build = builders
            .into_iter()
            .find_map(|b| b.downcast_ref::<Builder<A>>())
            .expect("Address is implemented for u32 and u128 only");
        build(table, options).map_err(|e| match e {
            BuildError::UnsupportedFamily { family, .. } => BuildError::UnsupportedFamily {
                engine: self.name,
                family,
            },
            other => other,
        })
    }
}

impl fmt::Debug for EngineInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EngineInfo")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Every registered engine, the default (`planb`) first.
pub fn engines() -> &'static [EngineInfo] {
    ENGINES
}

/// The engine registered under `name` (ASCII case ignored).
pub fn by_name(name: &str) -> Result<&'static EngineInfo, BuildError> {
    ENGINES
        .iter()
        .find(|e| e.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| BuildError::UnknownEngine {
            name: name.to_string(),
            known: ENGINES
                .iter()
                .map(|e| e.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_in_any_case() {
        for (i, e) in engines().iter().enumerate() {
            assert!(engines()[..i].iter().all(|o| o.name() != e.name()));
            assert_eq!(by_name(&e.name().to_uppercase()).unwrap().name(), e.name());
        }
        let err = by_name("nope").unwrap_err().to_string();
        assert!(err.contains("\"nope\"") && err.contains("planb"), "{err}");
    }
}
