//! The route list a [`super::Fib`] keeps beside its engines, so it can say *which* route
//! matched without slowing down the lookups that only want the next hop.
//!
//! Routes are sorted by (start, length) with, for each, the index of its parent (the longest
//! route strictly containing it). The longest match of an address is then found from its
//! predecessor route (the last one starting at or before it) by walking up the parent chain
//! to the first route that contains the address: every route containing the address is an
//! ancestor of that predecessor (or the predecessor itself), and containment only grows going
//! up. Cost: one binary search plus the nesting depth (a handful of steps on real tables).

use crate::addr::Address;
use crate::error::OpenError;
use crate::prefix::Prefix;
use crate::route_table::{NextHop, RouteTable};
use crate::saved::format::{Reader, SectionId, Writer};
use crate::saved::words;
use crate::storage::Array;
use std::sync::OnceLock;

/// Saved-table sections of a route list: addresses (as [`words`]), lengths, next hops. The
/// parent links are not saved: they follow from the sorted routes in one linear pass.
const ADDRS: u32 = 16;
const LENS: u32 = 17;
const HOPS: u32 = 18;

/// No parent.
const ROOT: u32 = u32::MAX;

/// One family's routes, sorted, with parent links.
#[derive(Clone, Debug, Default)]
pub(crate) struct Routes<A: Address> {
    prefixes: Vec<Prefix<A>>,
    hops: Vec<NextHop>,
    parents: Vec<u32>,
}

impl<A: Address> Routes<A> {
    pub(crate) fn new(table: &RouteTable<A>) -> Self {
        Self::from_sorted(table.len(), table.iter())
    }

    /// The list of `n` routes given in ascending (start, length) order without duplicates.
    fn from_sorted(n: usize, sorted: impl Iterator<Item = (Prefix<A>, NextHop)>) -> Self {
        let mut routes = Routes {
            prefixes: Vec::with_capacity(n),
            hops: Vec::with_capacity(n),
            parents: Vec::with_capacity(n),
        };
        // The chain of routes containing the current one, innermost last.
        let mut open: Vec<u32> = Vec::new();
        for (i, (prefix, hop)) in sorted.enumerate() {
            while let Some(&top) = open.last() {
                if routes.prefixes[top as usize].last() >= prefix.first() {
                    break;
                }
                open.pop();
            }
            routes.parents.push(open.last().copied().unwrap_or(ROOT));
            routes.prefixes.push(prefix);
            routes.hops.push(hop);
            open.push(i as u32);
        }
        routes
    }

    /// The longest route containing `addr`.
    pub(crate) fn longest_match(&self, addr: A) -> Option<(Prefix<A>, NextHop)> {
        let after = self.prefixes.partition_point(|p| p.first() <= addr);
        let mut i = after.checked_sub(1)? as u32;
        loop {
            let p = self.prefixes[i as usize];
            if p.contains(addr) {
                return Some((p, self.hops[i as usize]));
            }
            i = self.parents[i as usize];
            if i == ROOT {
                return None;
            }
        }
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.prefixes.capacity() * std::mem::size_of::<Prefix<A>>()
            + self.hops.capacity() * 4
            + self.parents.capacity() * 4
    }

    /// The routes back as a table.
    pub(crate) fn to_table(&self) -> RouteTable<A> {
        self.prefixes
            .iter()
            .copied()
            .zip(self.hops.iter().copied())
            .collect()
    }
}

/// A family's route list as a [`super::Fib`] holds it: made with the table, or, for a saved
/// table, checked at open and made on the first [`RouteList::get`]. Opening a saved table is
/// then a checking scan over the mapped arrays; making the list (a third of the open time of
/// the 228 K-route DFZ table when done eagerly) is paid only by programs that ask which route
/// matched.
#[derive(Debug)]
pub(crate) struct RouteList<A: Address> {
    made: OnceLock<Routes<A>>,
    saved: Option<SavedRoutes>,
}

/// A route list's arrays in a saved table, checked.
#[derive(Debug)]
struct SavedRoutes {
    addrs: Array<u32>,
    lens: Array<u8>,
    hops: Array<u32>,
}

impl<A: Address> RouteList<A> {
    pub(crate) fn new(table: &RouteTable<A>) -> Self {
        RouteList {
            made: OnceLock::from(Routes::new(table)),
            saved: None,
        }
    }

    /// The list (made now if it is a saved table's and nobody asked before).
    pub(crate) fn get(&self) -> &Routes<A> {
        self.made.get_or_init(|| {
            let s = self.saved.as_ref().expect("a route list is made or saved");
            let routes = Self::prefixes(s).map(|p| p.expect("checked at open"));
            Routes::from_sorted(s.lens.len(), routes.zip(s.hops.iter().copied()))
        })
    }

    /// Number of routes (without making the list of a saved table).
    pub(crate) fn len(&self) -> usize {
        match (self.made.get(), &self.saved) {
            (Some(routes), _) => routes.prefixes.len(),
            (None, Some(s)) => s.lens.len(),
            (None, None) => 0,
        }
    }

    fn prefixes(s: &SavedRoutes) -> impl Iterator<Item = Option<Prefix<A>>> + '_ {
        words::to_addresses::<A>(&s.addrs)
            .zip(s.lens.iter())
            .map(|(addr, &len)| Prefix::canonical(addr, len))
    }

    fn id(tag: u32) -> SectionId {
        SectionId {
            tag,
            family: words::family::<A>(),
            index: 0,
        }
    }

    /// Adds the route list's sections to `w`.
    pub(crate) fn write_sections<'a>(&'a self, w: &mut Writer<'a>) {
        if let Some(s) = &self.saved {
            w.array(Self::id(ADDRS), &s.addrs);
            w.array(Self::id(LENS), &s.lens);
            w.array(Self::id(HOPS), &s.hops);
            return;
        }
        let routes = self.get();
        w.owned(
            Self::id(ADDRS),
            words::from_addresses(routes.prefixes.iter().map(|p| p.addr())),
        );
        w.owned(
            Self::id(LENS),
            routes.prefixes.iter().map(|p| p.len()).collect(),
        );
        w.owned(Self::id(HOPS), routes.hops.clone());
    }

    /// The route list from `r`, checked: every prefix canonical and the list strictly
    /// ascending (what the longest-match walk needs to be right).
    pub(crate) fn read_sections(r: &Reader) -> Result<Self, OpenError> {
        let s = SavedRoutes {
            addrs: r.array(Self::id(ADDRS))?,
            lens: r.array(Self::id(LENS))?,
            hops: r.array(Self::id(HOPS))?,
        };
        let n = s.lens.len();
        if s.hops.len() != n || s.addrs.len() != n * words::per_address::<A>() {
            return Err(OpenError::Format(format!(
                "{} routes: {n} lengths, {} next hops, {} address words",
                A::FAMILY,
                s.hops.len(),
                s.addrs.len()
            )));
        }
        let mut last: Option<Prefix<A>> = None;
        for (i, p) in Self::prefixes(&s).enumerate() {
            let p = p.ok_or_else(|| {
                OpenError::Format(format!(
                    "{} route {i} is not a prefix (length over {} or host bits set)",
                    A::FAMILY,
                    A::BITS
                ))
            })?;
            if last.is_some_and(|last| last >= p) {
                return Err(OpenError::Format(format!(
                    "{} route {i} ({p}) is out of order",
                    A::FAMILY
                )));
            }
            last = Some(p);
        }
        Ok(RouteList {
            made: OnceLock::new(),
            saved: Some(s),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Prefix<u32> {
        Prefix::from_net(s.parse().unwrap()).unwrap()
    }

    #[test]
    fn walks_up_past_siblings_that_end_before_the_address() {
        let table: RouteTable<u32> = [
            (p("10.0.0.0/8"), 1),
            (p("10.0.0.0/16"), 2),
            (p("10.0.1.0/24"), 3),
            (p("10.0.5.0/24"), 4),
            (p("10.0.0.0/32"), 5),
            (p("255.255.255.255/32"), 6),
        ]
        .into_iter()
        .collect();
        let r = Routes::new(&table);
        let at = |a: u32| r.longest_match(a).map(|(p, nh)| (p.to_string(), nh));
        assert_eq!(at(0x0a00_0000), Some(("10.0.0.0/32".into(), 5)));
        assert_eq!(at(0x0a00_0001), Some(("10.0.0.0/16".into(), 2)));
        assert_eq!(at(0x0a00_0601), Some(("10.0.0.0/16".into(), 2)));
        assert_eq!(at(0x0a00_0501), Some(("10.0.5.0/24".into(), 4)));
        assert_eq!(at(0x0a01_0000), Some(("10.0.0.0/8".into(), 1)));
        assert_eq!(at(0x0b00_0000), None);
        assert_eq!(at(0), None);
        assert_eq!(at(u32::MAX), Some(("255.255.255.255/32".into(), 6)));
        assert_eq!(r.to_table(), table);
    }
}
