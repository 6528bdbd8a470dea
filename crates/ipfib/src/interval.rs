//! Interval partitioning (PlanB §3.1): prefixes in 2D (start, length) become elementary
//! intervals on the 1D address line, each carrying its longest-prefix-match result.
//!
//! Longest-prefix match over a set of prefixes is then a predecessor search: find the last
//! interval whose start is `<= addr`. Neighbouring intervals with the same result are merged, so
//! the number of intervals is at most `2 * routes + 1` and usually far fewer.
//!
//! The sweep handles the cases the public PlanB code gets wrong: a prefix ending at the top of
//! the space has no successor address (no overflow to 0), a shorter prefix may start exactly
//! where a longer one ends, and nested prefixes may share a start.

use crate::addr::Address;
use crate::route_table::{NextHop, RouteTable};

/// The elementary intervals of a route table: `starts[i]..starts[i + 1]` (the last one up to
/// the top of the space) has result `values[i]`. `starts[0]` is always zero and no two
/// neighbours have the same value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intervals<A: Address> {
    starts: Vec<A>,
    values: Vec<Option<NextHop>>,
}

impl<A: Address> Intervals<A> {
    /// Partitions a route table into merged elementary intervals in one ordered sweep.
    pub fn from_table(table: &RouteTable<A>) -> Self {
        let mut out = Intervals {
            starts: vec![A::ZERO],
            values: vec![None],
        };
        // The chain of prefixes containing the sweep position: (last address, next hop).
        let mut open: Vec<(A, NextHop)> = Vec::with_capacity(usize::from(A::BITS) + 1);
        for (prefix, next_hop) in table.iter() {
            let start = prefix.first();
            while let Some(&(last, _)) = open.last() {
                if last >= start {
                    break;
                }
                open.pop();
                // `last < start`, so `last + 1` exists.
                let after = last.checked_succ().unwrap_or(A::MAX);
                out.set(after, open.last().map(|&(_, nh)| nh));
            }
            open.push((prefix.last(), next_hop));
            out.set(start, Some(next_hop));
        }
        while let Some((last, _)) = open.pop() {
            if let Some(after) = last.checked_succ() {
                out.set(after, open.last().map(|&(_, nh)| nh));
            }
        }
        out.merge_equal_neighbours();
        out
    }

    /// Records that the result changes to `value` at `at`; events arrive in address order, a
    /// later event at the same address supersedes an earlier one.
    fn set(&mut self, at: A, value: Option<NextHop>) {
        if *self.starts.last().expect("never empty") == at {
            *self.values.last_mut().expect("never empty") = value;
        } else {
            self.starts.push(at);
            self.values.push(value);
        }
    }

    fn merge_equal_neighbours(&mut self) {
        let mut w = 0;
        for r in 1..self.starts.len() {
            if self.values[r] != self.values[w] {
                w += 1;
                self.starts[w] = self.starts[r];
                self.values[w] = self.values[r];
            }
        }
        self.starts.truncate(w + 1);
        self.values.truncate(w + 1);
    }

    /// Number of intervals (at least 1).
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Never true: the first interval always exists. Present for API symmetry.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Interval starts, ascending, the first one zero.
    pub fn starts(&self) -> &[A] {
        &self.starts
    }

    /// Interval results, parallel to [`Intervals::starts`].
    pub fn values(&self) -> &[Option<NextHop>] {
        &self.values
    }

    /// The result for an address by binary search (the plain predecessor search the engines
    /// accelerate).
    pub fn lookup(&self, addr: A) -> Option<NextHop> {
        let i = self.starts.partition_point(|&s| s <= addr);
        self.values[i - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefix::Prefix;

    fn table6(routes: &[(&str, u32)]) -> RouteTable<u128> {
        routes
            .iter()
            .map(|(s, nh)| (Prefix::from_net(s.parse().unwrap()).unwrap(), *nh))
            .collect()
    }

    #[test]
    fn empty_table_is_one_interval_without_route() {
        let iv = Intervals::from_table(&RouteTable::<u32>::new());
        assert_eq!(iv.starts(), &[0]);
        assert_eq!(iv.values(), &[None]);
    }

    #[test]
    fn shorter_prefix_starting_where_a_longer_one_ends() {
        // planb-lpm gives the whole /47 the /48's next hop.
        let iv = Intervals::from_table(&table6(&[("2001:db8:1::/48", 1), ("2001:db8:2::/47", 2)]));
        let a = |s: &str| u128::from(s.parse::<std::net::Ipv6Addr>().unwrap());
        assert_eq!(iv.lookup(a("2001:db8:1::5")), Some(1));
        assert_eq!(iv.lookup(a("2001:db8:2::")), Some(2));
        assert_eq!(iv.lookup(a("2001:db8:3:ffff::")), Some(2));
        assert_eq!(iv.lookup(a("2001:db8:4::")), None);
    }

    #[test]
    fn prefix_at_the_top_does_not_wrap() {
        let iv = Intervals::from_table(&table6(&[("ffff::/16", 7), ("::/0", 1)]));
        assert_eq!(iv.lookup(u128::MAX), Some(7));
        assert_eq!(iv.lookup(0), Some(1));
        assert_eq!(iv.len(), 2);
    }

    #[test]
    fn neighbours_with_equal_results_merge() {
        let iv = Intervals::from_table(&table6(&[("2001:db8::/33", 4), ("2001:db8:8000::/33", 4)]));
        assert_eq!(iv.len(), 3);
    }

    #[test]
    fn nested_prefixes_sharing_start_and_end() {
        let t: RouteTable<u32> = [
            (Prefix::new(0, 0).unwrap(), 9),
            (Prefix::new(0xffff_ff00, 24).unwrap(), 1),
            (Prefix::new(0xffff_ffff, 32).unwrap(), 2),
        ]
        .into_iter()
        .collect();
        let iv = Intervals::from_table(&t);
        assert_eq!(iv.lookup(u32::MAX), Some(2));
        assert_eq!(iv.lookup(u32::MAX - 1), Some(1));
        assert_eq!(iv.lookup(0xffff_feff), Some(9));
    }
}
