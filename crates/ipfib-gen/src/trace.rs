//! Lookup traces: which addresses a benchmark looks up.

use std::fmt;
use std::str::FromStr;

use super::rng::{Rng, Stream};
use super::GenError;
use ipfib::Address;
use ipfib::Prefix;
use ipfib::RouteTable;

/// How trace addresses are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceKind {
    /// The PlanB paper's method (§5): pick a route uniformly at random, then an address
    /// uniformly inside its prefix. Every lookup hits, and each route is equally likely to be
    /// the one sampled, so long prefixes (most routes, little address space) dominate.
    Matched,
    /// Uniform over the announced space: every address covered by at least one route is
    /// equally likely (the union of the prefixes, each region weighted by its size). Every
    /// lookup hits; short prefixes dominate.
    Uniform,
    /// Uniform over the whole address space, routed or not: the "fully random traffic" of the
    /// paper. Mostly misses for IPv6 (only 2000::/3 is announced).
    Space,
}

impl TraceKind {
    /// Every kind, in documentation order.
    pub const ALL: [TraceKind; 3] = [TraceKind::Matched, TraceKind::Uniform, TraceKind::Space];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            TraceKind::Matched => "matched",
            TraceKind::Uniform => "uniform",
            TraceKind::Space => "space",
        }
    }

    /// Whether the kind draws from the table's routes (and so yields nothing for an empty
    /// table).
    pub fn needs_routes(self) -> bool {
        !matches!(self, TraceKind::Space)
    }
}

impl fmt::Display for TraceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceKind {
    type Err = GenError;

    fn from_str(s: &str) -> Result<Self, GenError> {
        TraceKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| GenError::UnknownTraceKind(s.to_string()))
    }
}

/// `count` addresses of kind `kind` for `table`, reproducible from `seed`.
///
/// An empty table has no routes to draw from: [`TraceKind::Matched`] and
/// [`TraceKind::Uniform`] then give an empty trace (see [`try_trace`] for an error instead).
/// [`TraceKind::Space`] does not depend on the routes.
pub fn trace<A: Address>(
    table: &RouteTable<A>,
    kind: TraceKind,
    count: usize,
    seed: u64,
) -> Vec<A> {
    try_trace(table, kind, count, seed).unwrap_or_default()
}

/// Like [`trace`], but a kind that needs routes on an empty table is
/// [`GenError::EmptyTable`].
pub fn try_trace<A: Address>(
    table: &RouteTable<A>,
    kind: TraceKind,
    count: usize,
    seed: u64,
) -> Result<Vec<A>, GenError> {
    if kind.needs_routes() && table.is_empty() {
        return Err(GenError::EmptyTable {
            family: A::FAMILY,
            kind,
        });
    }
    let mut rng = Rng::new(seed, Stream::Trace);
    Ok(match kind {
        TraceKind::Matched => matched(table, count, &mut rng),
        TraceKind::Uniform => uniform(table, count, &mut rng),
        TraceKind::Space => (0..count)
            .map(|_| random_in(whole::<A>(), &mut rng))
            .collect(),
    })
}

/// The `/0` of the family.
fn whole<A: Address>() -> Prefix<A> {
    Prefix::covering(A::ZERO, 0)
}

/// A uniform address inside `prefix`.
fn random_in<A: Address>(prefix: Prefix<A>, rng: &mut Rng) -> A {
    let host = A::from_u128_left(rng.next_u128()).and(A::mask(prefix.len()).not());
    prefix.addr().or(host)
}

fn matched<A: Address>(table: &RouteTable<A>, count: usize, rng: &mut Rng) -> Vec<A> {
    let prefixes: Vec<Prefix<A>> = table.iter().map(|(p, _)| p).collect();
    (0..count)
        .map(|_| random_in(prefixes[rng.below(prefixes.len() as u64) as usize], rng))
        .collect()
}

/// The top-level prefixes of a table (those no other route covers): the disjoint pieces whose
/// union is the announced space. The table iterates in (address, length) order, so a prefix is
/// covered exactly when it starts at or before the end of the last top-level one.
pub(crate) fn top_level<A: Address>(table: &RouteTable<A>) -> Vec<Prefix<A>> {
    let mut tops: Vec<Prefix<A>> = Vec::new();
    for (p, _) in table.iter() {
        let covered = matches!(tops.last(), Some(top) if p.first() <= top.last());
        if !covered {
            tops.push(p);
        }
    }
    tops
}

fn uniform<A: Address>(table: &RouteTable<A>, count: usize, rng: &mut Rng) -> Vec<A> {
    let tops = top_level(table);
    // Sizes in addresses, as running totals; they overflow u128 only when the pieces cover all
    // 2^128 IPv6 addresses, and then uniform over the announced space is uniform over all.
    let mut cumulative = Vec::with_capacity(tops.len());
    let mut total = 0u128;
    for p in &tops {
        let size = 1u128.checked_shl(u32::from(A::BITS - p.len()));
        match size.and_then(|s| total.checked_add(s)) {
            Some(t) => total = t,
            None => {
                return (0..count).map(|_| random_in(whole::<A>(), rng)).collect();
            }
        }
        cumulative.push(total);
    }
    (0..count)
        .map(|_| {
            let r = rng.below_u128(total);
            let i = cumulative.partition_point(|&c| c <= r);
            let base = if i == 0 { 0 } else { cumulative[i - 1] };
            add_offset(tops[i], r - base)
        })
        .collect()
}

/// The address `offset` positions into `prefix` (`offset` is below its size).
fn add_offset<A: Address>(prefix: Prefix<A>, offset: u128) -> A {
    let left = prefix.addr().to_u128_left() | (offset << (128 - u32::from(A::BITS)));
    A::from_u128_left(left)
}
