//! A model of the cache lines a lookup reads, for reporting lines per lookup on a trace
//! (this machine has no hardware counters; see `../shared/PERF-FACTS.md`: lines per lookup is
//! what bounds PlanB's throughput).
//!
//! Each line a lookup loads counts once, whether it hits a cache or not: the direct-table
//! entry, every node the walk searches (padding nodes included: they are loads too), and for
//! the rare fallback cell the cell's range, the lines its binary search probes and the answer.

use super::layout::{chunk_of, entry_line, Decoded, Family, Key, LEAF_ENTRY};
use super::search::scalar::Scalar;
use super::PlanB;

/// The lines one lookup reads, by part of the structure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Touched {
    /// Tree nodes read, the leaf included (one line each; a leaf entered directly is one).
    pub tree: usize,
    /// Lines of the fallback stage (0 unless the leaf answered with a fallback cell).
    pub fallback: usize,
}

impl Touched {
    /// All lines: the direct-table entry, the tree nodes and the fallback lines.
    pub fn total(&self) -> usize {
        1 + self.tree + self.fallback
    }
}

impl<A: Family> PlanB<A> {
    /// The lines a lookup of `addr` reads (module docs), by walking the structure with the
    /// checked portable search.
    pub(crate) fn lines_touched(&self, addr: A) -> Touched {
        let coarse = addr.coarse();
        let x = A::Key::from_coarse(coarse);
        let chunk = chunk_of::<A>(coarse);
        let segment = &self.segments[self.segment_of.get(chunk).map_or(0, |&s| s as usize)];
        let entry = self.direct[chunk];
        let mut node = entry_line(entry);
        let mut touched = Touched::default();
        if entry & LEAF_ENTRY == 0 {
            for _ in 1..self.depth {
                let n = &segment.lines[node as usize];
                node = A::Key::link(n) + A::Key::rank_inner(Scalar, n, x);
                touched.tree += 1;
            }
        }
        // A lane entered at its leaf searches that line twice (as an inner node, then as the
        // leaf): one line.
        let leaf = &segment.lines[node as usize];
        touched.tree += 1;
        let rank = A::Key::rank_leaf_in(Scalar, leaf, x, self.narrow);
        if let Decoded::Cell(cell) = A::Key::decode_in(leaf, rank, self.narrow) {
            touched.fallback = segment.fallback.lines_touched(cell);
        }
        touched
    }

    /// Average lines per lookup of `addrs` at each step of the walk: `direct` (always 1), then
    /// `node i` for the `i`-th tree node from the chunk's entry, `i` up to the table's depth
    /// (the share of lookups whose walk is that long: a lane entered at its leaf reads one
    /// node), then `fallback` (the /48 cells' stage). The sum is
    /// [`Lookup::lines_per_lookup`](crate::engine::Lookup::lines_per_lookup). Empty for an
    /// empty slice.
    pub(crate) fn lines_per_step(&self, addrs: &[A]) -> Vec<(String, f64)> {
        if addrs.is_empty() {
            return Vec::new();
        }
        // A walk reads at most `depth` nodes; a step no lookup reaches is reported as 0.
        let mut tree = vec![0usize; self.depth];
        let mut fallback = 0;
        for &a in addrs {
            let t = self.lines_touched(a);
            for level in &mut tree[..t.tree] {
                *level += 1;
            }
            fallback += t.fallback;
        }
        let n = addrs.len() as f64;
        std::iter::once(("direct".to_string(), 1.0))
            .chain(
                tree.iter()
                    .enumerate()
                    .map(|(i, &c)| (format!("node {}", i + 1), c as f64 / n)),
            )
            .chain(std::iter::once((
                "fallback".to_string(),
                fallback as f64 / n,
            )))
            .collect()
    }

    /// Average of [`Touched::total`] over `addrs` (`None` when empty).
    pub(crate) fn average_lines(&self, addrs: &[A]) -> Option<f64> {
        if addrs.is_empty() {
            return None;
        }
        let sum: usize = addrs.iter().map(|&a| self.lines_touched(a).total()).sum();
        Some(sum as f64 / addrs.len() as f64)
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{Build, BuildOptions, Lookup};
    use crate::prefix::Prefix;
    use crate::route_table::RouteTable;

    use super::*;

    #[test]
    fn every_lookup_reads_the_direct_entry_and_one_line_per_level() {
        let mut t = RouteTable::<u128>::new();
        t.insert(Prefix::new(0, 0).unwrap(), 1);
        for i in 0..400u128 {
            t.insert(
                Prefix::new((0x2001_0db8 << 96) | ((2 * i + 1) << 80), 48).unwrap(),
                2 + i as u32,
            );
        }
        t.insert(Prefix::new((0x2a00_0db8 << 96) | (7 << 64), 64).unwrap(), 4);
        let p = PlanB::build(&t, &BuildOptions::default()).unwrap();
        assert!(p.depth >= 3);
        let plain: u128 = (0x2001_0db8 << 96) | (77 << 80);
        assert_eq!(p.lines_touched(plain).total(), 1 + p.depth);
        assert_eq!(
            p.lines_touched(0x3000 << 112).total(),
            1 + p.depth,
            "padding too"
        );
        let cell = p.lines_touched((0x2a00_0db8 << 96) | (7 << 64));
        assert_eq!(cell.tree, p.depth);
        assert!(cell.fallback >= 3, "range, probes and answer");

        let addrs = [plain, 0x3000 << 112, (0x2a00_0db8 << 96) | (7 << 64)];
        let avg = p.lines_per_lookup(&addrs).unwrap();
        let steps = p.lines_by_step(&addrs);
        assert_eq!(steps.len(), 1 + p.depth + 1);
        assert_eq!(steps[0], ("direct".to_string(), 1.0));
        assert_eq!(steps[1].0, "node 1");
        assert_eq!(steps[p.depth + 1].0, "fallback");
        // Each address reads every node of the walk; one of the three also its cell's lines.
        for (_, lines) in &steps[1..=p.depth] {
            assert_eq!(*lines, 1.0);
        }
        assert_eq!(steps[p.depth + 1].1, cell.fallback as f64 / 3.0);
        assert!((steps.iter().map(|s| s.1).sum::<f64>() - avg).abs() < 1e-12);
        assert!(p.lines_by_step(&[]).is_empty());
        assert_eq!(p.lines_per_lookup(&[]), None);
    }
}
