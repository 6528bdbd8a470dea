//! # ipfib-gen — deterministic synthetic forwarding tables and lookup traces
//!
//! Real tables are few and fixed in size; scaling studies (the PlanB paper's synth-1..4 with
//! 250 K to 1 M IPv6 routes) need tables of any size that still look like today's Internet,
//! because both the engines' cost (interval count, depth) and their speed (cache behaviour of
//! the lookups) depend on the table's structure, not only its size. The generators here scale a
//! [`Profile`] measured on a real table — length histogram, nesting of more-specifics under
//! allocations, runs of adjacent announcements, next-hop repetition — to the requested size,
//! and draw every random number from a seeded ChaCha8 stream with integer-only derivations, so a
//! `(size, seed)` pair names the same table on every platform and version.
//!
//! ```
//! use ipfib_gen::TraceKind;
//!
//! let table = ipfib_gen::fib_v6(10_000, 1);
//! assert_eq!(table.len(), 10_000);
//! let addrs = ipfib_gen::trace(&table, TraceKind::Matched, 1_000, 1);
//! assert!(addrs.iter().all(|&a| table.iter().any(|(p, _)| p.contains(a))));
//! ```

#![warn(missing_docs)]

mod fastset;
mod fib;
mod hops;
pub mod packets;
mod profile;
mod profile_v4;
mod profile_v6;
mod rng;
pub mod shape;
mod trace;

pub use profile::{Profile, IPV4_TIER1, IPV6_DFZ};
pub use trace::{trace, try_trace, TraceKind};

use ipfib::Address;
use ipfib::RouteTable;

/// Why a generator request cannot be met.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GenError {
    /// More routes than the family has distinct prefixes.
    #[error("{family} has only {max} distinct prefixes, {requested} requested")]
    TooManyPrefixes {
        /// Address family.
        family: &'static str,
        /// Routes requested.
        requested: u128,
        /// Distinct prefixes of the family (`2^(bits + 1) - 1`).
        max: u128,
    },
    /// A trace kind that samples routes was asked for on a table without routes.
    #[error("the {family} table has no routes to draw a {kind} trace from")]
    EmptyTable {
        /// Address family.
        family: &'static str,
        /// The trace kind requested.
        kind: TraceKind,
    },
    /// A trace kind name that is not one of `matched`, `uniform`, `space`.
    #[error("unknown trace kind {0:?} (expected matched, uniform or space)")]
    UnknownTraceKind(String),
}

impl<A: Address> Profile<A> {
    /// Generates a table of exactly `prefixes` distinct routes with this profile's shape,
    /// reproducible from `seed`.
    pub fn generate(&self, prefixes: usize, seed: u64) -> Result<RouteTable<A>, GenError> {
        let max = max_prefixes::<A>();
        let requested = prefixes as u128;
        if requested > max {
            return Err(GenError::TooManyPrefixes {
                family: A::FAMILY,
                requested,
                max,
            });
        }
        Ok(fib::generate(self, prefixes as u64, seed))
    }
}

/// Distinct prefixes of family `A`: `2^(bits + 1) - 1` (saturating at `u128::MAX` for IPv6,
/// far beyond any table that fits in memory).
pub fn max_prefixes<A: Address>() -> u128 {
    1u128
        .checked_shl(u32::from(A::BITS) + 1)
        .map_or(u128::MAX, |n| n - 1)
}

/// An IPv6 table of exactly `prefixes` routes shaped like today's DFZ (the PlanB paper's
/// rrc00-25 mix: /48 ≈ 46 %, /32 ≈ 11 %, /40, /44 ≈ 9–10 %, /36 ≈ 4 %, more-specifics nested
/// under allocations inside 2000::/3). See [`IPV6_DFZ`].
pub fn fib_v6(prefixes: usize, seed: u64) -> RouteTable<u128> {
    // Every usize count is below the 2^129 - 1 IPv6 prefixes, so this cannot fail.
    IPV6_DFZ.generate(prefixes, seed).unwrap_or_default()
}

/// An IPv4 table of exactly `prefixes` routes shaped like today's full BGP table (/24 ≈ 60 %,
/// nested under /8–/16 allocations). See [`IPV4_TIER1`].
///
/// IPv4 has 2^33 - 1 distinct prefixes; a larger request (more than memory could hold anyway)
/// yields an empty table, which [`Profile::generate`] reports as
/// [`GenError::TooManyPrefixes`].
pub fn fib_v4(prefixes: usize, seed: u64) -> RouteTable<u32> {
    IPV4_TIER1.generate(prefixes, seed).unwrap_or_default()
}
