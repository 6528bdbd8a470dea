//! A model of the cache lines a lookup reads, for reporting lines per lookup on a trace
//! (this machine has no hardware counters; see `../shared/PERF-FACTS.md`: lines per lookup is
//! what bounds PlanB's throughput).
//!
//! Each line a lookup loads counts once, whether it hits a cache or not: the direct-table
//! entry, every node the walk searches (padding nodes included: they are loads too), and for
//! the rare fallback cell the cell's range, the lines its binary search probes and the answer.
//!
//! A trace is counted as a batch of raw next hops runs it: where the table has staged tables
//! and its backend takes the staged walk ([`super::staged::rule`]), each block of [`BLOCK`](super::staged::BLOCK) addresses that the batch
//! would stage reads the staged entry instead of the direct entry, its sub-table entry in a
//! split chunk, and the tree only when neither answered. Single lookups and `Option` batches
//! always walk.

use super::layout::{chunk_of, entry_line, Decoded, Family, Key, LEAF_ENTRY};
use super::search::scalar::Scalar;
use super::staged::{blocks, is_split, Staged, ANSWERED};
use super::PlanB;

/// The lines one lookup reads, by part of the structure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Touched {
    /// Whether the first line was the staged entry, not the direct-table entry.
    pub staged: bool,
    /// Sub-table entries read (0 or 1: a staged lookup in a split chunk).
    pub sub: usize,
    /// Tree nodes read, the leaf included (one line each; a leaf entered directly is one).
    pub tree: usize,
    /// Lines of the fallback stage (0 unless the leaf answered with a fallback cell).
    pub fallback: usize,
}

impl Touched {
    /// All lines: the direct-table or staged entry, the sub-table entry, the tree nodes and
    /// the fallback lines.
    pub fn total(&self) -> usize {
        1 + self.sub + self.tree + self.fallback
    }
}

impl<A: Family> PlanB<A> {
    /// The lines a lookup of `addr` reads (module docs), by walking the structure with the
    /// checked portable search.
    pub(crate) fn lines_touched(&self, addr: A) -> Touched {
        let coarse = addr.coarse();
        let chunk = chunk_of::<A>(coarse);
        let (segment, entry) = self.tree().chunk(chunk);
        // A lane entered at its leaf searches that line twice (as an inner node, then as the
        // leaf): one line.
        let searches = if entry & LEAF_ENTRY == 0 {
            self.tree().depth()
        } else {
            1
        };
        self.walk_lines(segment, entry_line(entry), searches, addr)
    }

    /// The lines of a walk of `addr` from `node` of `segment`, `searches` searches from its
    /// leaf: one per node, and the fallback stage's when the leaf answers with a cell.
    fn walk_lines(&self, segment: usize, node: u32, searches: usize, addr: A) -> Touched {
        let x = A::Key::from_coarse(addr.coarse());
        let mut touched = Touched::default();
        // The inner steps: one line each.
        let steps = searches.saturating_sub(1);
        let node = self.descend(segment, node, x, steps);
        touched.tree += steps;
        let narrow = self.tree().narrow();
        let segment = self.tree().segment(segment);
        let leaf = &segment.lines[node as usize];
        touched.tree += 1;
        let rank = A::Key::rank_leaf_in(Scalar, leaf, x, narrow);
        if let Decoded::Cell(cell) = A::Key::decode_in(leaf, rank, narrow) {
            touched.fallback = segment.fallback.lines_touched(cell);
        }
        touched
    }

    /// The lines a staged lookup of `addr` reads: its staged entry, its sub-table entry in a
    /// split chunk, and the walk from the node the entry names when neither answered.
    fn staged_lines_touched(&self, staged: &Staged, addr: A) -> Touched {
        let coarse = addr.coarse();
        let split = is_split(staged.entries[chunk_of::<A>(coarse)]);
        let entry = staged.entry(coarse);
        let walk = if entry & ANSWERED == 0 {
            let (node, searches) = Staged::start(entry, self.tree().depth());
            self.walk_lines(0, node, searches, addr)
        } else {
            Touched::default()
        };
        Touched {
            staged: true,
            sub: usize::from(split),
            ..walk
        }
    }

    /// The lines each lookup of `addrs` reads in a batch of raw next hops (module docs).
    fn batch_lines_touched<'a>(&'a self, addrs: &'a [A]) -> impl Iterator<Item = Touched> + 'a {
        let rule = super::staged::rule(self.backend());
        let staged = self.staged.as_ref().zip(rule);
        let cut: Vec<_> = match staged {
            Some(_) => blocks(addrs.len()).collect(),
            None => Vec::new(),
        };
        let tail = &addrs[cut.last().map_or(0, |b| b.end)..];
        cut.into_iter()
            .map(|b| &addrs[b])
            .flat_map(move |block| {
                let staged = staged
                    .filter(|(s, rule)| s.stages(*rule, block, |a| a.coarse()))
                    .map(|(s, _)| s);
                block.iter().map(move |&a| match staged {
                    Some(s) => self.staged_lines_touched(s, a),
                    None => self.lines_touched(a),
                })
            })
            .chain(tail.iter().map(|&a| self.lines_touched(a)))
    }

    /// Average lines per lookup of `addrs` at each step of a batch: `direct` and `staged`
    /// (the share of lookups whose first line is the direct-table entry or the staged entry:
    /// they sum to 1), `sub-table` (staged lookups in split chunks), then `node i` for the
    /// `i`-th tree node from the chunk's entry, `i` up to the table's depth (the share of
    /// lookups whose walk is that long: a lane entered at its leaf reads one node, a lane the
    /// staged tables answer none), then `fallback` (the /48 cells' stage). The sum is
    /// [`Lookup::lines_per_lookup`](crate::engine::Lookup::lines_per_lookup). Empty for an
    /// empty slice.
    pub(crate) fn lines_per_step(&self, addrs: &[A]) -> Vec<(String, f64)> {
        if addrs.is_empty() {
            return Vec::new();
        }
        // A walk reads at most `depth` nodes; a step no lookup reaches is reported as 0.
        let mut tree = vec![0usize; self.tree().depth()];
        let (mut staged, mut sub, mut fallback) = (0, 0, 0);
        for t in self.batch_lines_touched(addrs) {
            for level in &mut tree[..t.tree] {
                *level += 1;
            }
            staged += usize::from(t.staged);
            sub += t.sub;
            fallback += t.fallback;
        }
        let n = addrs.len() as f64;
        let share = |c: usize| c as f64 / n;
        let first = [
            ("direct".to_string(), share(addrs.len() - staged)),
            ("staged".to_string(), share(staged)),
            ("sub-table".to_string(), share(sub)),
        ];
        first
            .into_iter()
            .chain(
                tree.iter()
                    .enumerate()
                    .map(|(i, &c)| (format!("node {}", i + 1), share(c))),
            )
            .chain(std::iter::once(("fallback".to_string(), share(fallback))))
            .collect()
    }

    /// Average of [`Touched::total`] over `addrs` in a batch (`None` when empty).
    pub(crate) fn average_lines(&self, addrs: &[A]) -> Option<f64> {
        if addrs.is_empty() {
            return None;
        }
        let sum: usize = self.batch_lines_touched(addrs).map(|t| t.total()).sum();
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
        let depth = p.tree().depth();
        assert!(depth >= 3);
        let plain: u128 = (0x2001_0db8 << 96) | (77 << 80);
        assert_eq!(p.lines_touched(plain).total(), 1 + depth);
        assert_eq!(
            p.lines_touched(0x3000 << 112).total(),
            1 + depth,
            "padding too"
        );
        let cell = p.lines_touched((0x2a00_0db8 << 96) | (7 << 64));
        assert_eq!(cell.tree, depth);
        assert!(cell.fallback >= 3, "range, probes and answer");

        let addrs = [plain, 0x3000 << 112, (0x2a00_0db8 << 96) | (7 << 64)];
        let avg = p.lines_per_lookup(&addrs).unwrap();
        let steps = p.lines_by_step(&addrs);
        assert_eq!(steps.len(), 3 + depth + 1);
        assert_eq!(steps[0], ("direct".to_string(), 1.0), "too few to stage");
        assert_eq!(steps[1], ("staged".to_string(), 0.0));
        assert_eq!(steps[2], ("sub-table".to_string(), 0.0));
        assert_eq!(steps[3].0, "node 1");
        assert_eq!(steps[depth + 3].0, "fallback");
        // Each address reads every node of the walk; one of the three also its cell's lines.
        for (_, lines) in &steps[3..depth + 3] {
            assert_eq!(*lines, 1.0);
        }
        assert_eq!(steps[depth + 3].1, cell.fallback as f64 / 3.0);
        assert!((steps.iter().map(|s| s.1).sum::<f64>() - avg).abs() < 1e-12);
        assert!(p.lines_by_step(&[]).is_empty());
        assert_eq!(p.lines_per_lookup(&[]), None);
    }
}
