//! Building a PlanB structure from a route table.
//!
//! 1. Interval partitioning ([`crate::interval`]) gives merged elementary intervals.
//! 2. The intervals are projected onto *coarse cells* (the top 32 bits for IPv4, 48 for IPv6);
//!    a cell with boundaries inside it is handed to the [`Fallback`] stage and answered by a
//!    cell reference.
//! 3. The coarse boundaries are split by their top 16 bits into chunks; each chunk with
//!    boundaries gets its own small B+-tree: leaves that hold their answers, inner levels
//!    sized to the data and laid out level by level, so a node's children are contiguous and
//!    one link per node finds them. All trees are walked with the same number of steps: a
//!    shallower tree is entered through a chain of all-padding inner nodes (rank 0, link to
//!    the next), so lanes in a batch never diverge. A chunk without boundaries is such a chain
//!    ending at a one-answer leaf, shared by every chunk with that answer.

use std::collections::{HashMap, HashSet};

use super::fallback::Fallback;
use super::layout::{chunk_of, fanout, Answer, Family, Key, DIRECT_BITS};
use crate::interval::Intervals;
use crate::route_table::{NextHop, RouteTable};

/// The answer of an interval.
fn answer(value: Option<NextHop>) -> Answer {
    value.map_or(Answer::NoRoute, Answer::Route)
}

/// Coarse boundaries (ascending, the first at 0) with their answers.
fn project<A: Family>(
    starts: &[A],
    values: &[Option<NextHop>],
    fallback: &mut Fallback<A>,
) -> (Vec<u64>, Vec<Answer>) {
    let cells_end: u128 = 1u128 << A::COARSE_BITS;
    let mut cstarts: Vec<u64> = Vec::with_capacity(starts.len());
    let mut answers: Vec<Answer> = Vec::with_capacity(starts.len());
    let mut push = |at: u64, a: Answer| {
        if answers.last() == Some(&a) {
            return;
        }
        cstarts.push(at);
        answers.push(a);
    };
    let mut i = 0;
    while i < starts.len() {
        let cell = starts[i].coarse();
        let mut j = i + 1;
        while j < starts.len() && starts[j].coarse() == cell {
            j += 1;
        }
        if j - i == 1 && starts[i].is_cell_aligned() {
            push(cell, answer(values[i]));
        } else {
            let first = A::from_coarse(cell);
            // starts[0] is 0, which is cell-aligned, so a cell not starting with a boundary has
            // a predecessor interval covering its first address.
            let head = if starts[i] == first {
                None
            } else {
                Some((first, values[i - 1]))
            };
            let f = fallback.push_cell(
                head.into_iter()
                    .chain((i..j).map(|k| (starts[k], values[k]))),
            );
            push(cell, Answer::Cell(f));
            let next = u128::from(cell) + 1;
            let next_starts_cell = j < starts.len() && u128::from(starts[j].coarse()) == next;
            if next < cells_end && !next_starts_cell {
                push(next as u64, answer(values[j - 1]));
            }
        }
        i = j;
    }
    (cstarts, answers)
}

/// Steps of a lookup through a tree of `n` keys: one leaf level of `LEAF_KEYS` keys per leaf,
/// then inner levels of fan-out `INNER_KEYS + 1` up to a single root. Zero keys need one step
/// too (a leaf with one answer).
fn depth_for<K: Key>(n: usize) -> usize {
    let mut nodes = n.div_ceil(K::LEAF_KEYS).max(1);
    let mut depth = 1;
    while nodes > 1 {
        nodes = nodes.div_ceil(fanout::<K>());
        depth += 1;
    }
    depth
}

/// One chunk's boundaries: stored keys (`boundary - 1`) and `keys.len() + 1` answers.
struct Chunk<K> {
    index: usize,
    keys: Vec<K>,
    answers: Vec<Answer>,
}

/// Splits coarse boundaries into the 2^16 chunks; returns the chunks with keys and, for every
/// chunk, the answer in effect at its first address.
fn chunks<A: Family>(cstarts: &[u64], canswers: &[Answer]) -> (Vec<Chunk<A::Key>>, Vec<Answer>) {
    let key_bits = A::COARSE_BITS - DIRECT_BITS;
    let mut with_keys = Vec::new();
    let mut heads = Vec::with_capacity(1 << DIRECT_BITS);
    let mut p = 0;
    let mut current = canswers[0];
    for chunk in 0..(1usize << DIRECT_BITS) {
        let base = (chunk as u64) << key_bits;
        if p < cstarts.len() && cstarts[p] == base {
            current = canswers[p];
            p += 1;
        }
        heads.push(current);
        let mut keys = Vec::new();
        let mut answers = vec![current];
        while p < cstarts.len() && chunk_of::<A>(cstarts[p]) == chunk {
            keys.push(A::Key::from_coarse(cstarts[p] - 1));
            answers.push(canswers[p]);
            current = canswers[p];
            p += 1;
        }
        if !keys.is_empty() {
            with_keys.push(Chunk {
                index: chunk,
                keys,
                answers,
            });
        }
    }
    (with_keys, heads)
}

/// The inner nodes and leaves being built; a link names a node of the array the next step
/// reads (inner nodes, or leaves after the last inner step).
struct Lines<K: Key> {
    inner: Vec<K::Line>,
    leaves: Vec<K::Line>,
}

impl<K: Key> Lines<K> {
    /// Appends `pads` all-padding inner nodes, each linking to the next and the last to `to`;
    /// returns where the chain starts (`to` itself when `pads` is 0).
    fn pad_chain(&mut self, pads: usize, to: u32) -> u32 {
        if pads == 0 {
            return to;
        }
        let entry = self.inner.len() as u32;
        for k in 1..pads {
            self.inner.push(K::inner(&[], entry + k as u32));
        }
        self.inner.push(K::inner(&[], to));
        entry
    }

    /// Appends one chunk's tree: leaves holding `keys` and their `keys.len() + 1` answers,
    /// and the inner levels above them, root first. Returns the root (an inner node, or the
    /// only leaf).
    fn tree(&mut self, keys: &[K], answers: &[Answer]) -> u32 {
        let per = K::LEAF_KEYS;
        let first_leaf = self.leaves.len();
        let leaves = keys.len().div_ceil(per).max(1);
        for l in 0..leaves {
            let ks = &keys[(l * per).min(keys.len())..((l + 1) * per).min(keys.len())];
            self.leaves
                .push(K::leaf(ks, &answers[l * per..l * per + ks.len() + 1]));
        }
        // Bottom-up: an inner node holds the smallest key under each of its children but the
        // first, and hands its own first key to its parent.
        let mut firsts: Vec<K> = keys.chunks(per).map(|leaf| leaf[0]).collect();
        let mut inner_levels: Vec<Vec<Vec<K>>> = Vec::new();
        while firsts.len() > 1 {
            let groups: Vec<&[K]> = firsts.chunks(fanout::<K>()).collect();
            inner_levels.push(groups.iter().map(|g| g[1..].to_vec()).collect());
            firsts = groups.iter().map(|g| g[0]).collect();
        }
        if inner_levels.is_empty() {
            return first_leaf as u32;
        }
        // Root first; each inner level's nodes start right after the level above, so the
        // children of node `i` of a level start at the next level's start plus `i * fanout`.
        let root = self.inner.len() as u32;
        let last = inner_levels.len() - 1;
        for (depth, level) in inner_levels.iter().rev().enumerate() {
            let next_level = if depth == last {
                first_leaf
            } else {
                self.inner.len() + level.len()
            };
            for (i, separators) in level.iter().enumerate() {
                self.inner.push(K::inner(
                    separators,
                    (next_level + i * fanout::<K>()) as u32,
                ));
            }
        }
        root
    }
}

/// Builds the whole structure.
pub(super) fn build<A: Family>(table: &RouteTable<A>) -> super::Parts<A> {
    let intervals = Intervals::from_table(table);
    let mut fallback = Fallback::default();
    let (cstarts, canswers) = project(intervals.starts(), intervals.values(), &mut fallback);
    let (chunks, heads) = chunks::<A>(&cstarts, &canswers);

    let depth = chunks
        .iter()
        .map(|c| depth_for::<A::Key>(c.keys.len()))
        .max()
        .unwrap_or(1);
    let mut lines = Lines::<A::Key> {
        inner: Vec::new(),
        leaves: Vec::new(),
    };
    let mut direct = vec![0u32; 1 << DIRECT_BITS];
    let mut constant_entry: HashMap<Answer, u32> = HashMap::new();
    let mut next_with_keys = chunks.iter().peekable();
    for (chunk, &head) in heads.iter().enumerate() {
        direct[chunk] = match next_with_keys.next_if(|c| c.index == chunk) {
            Some(c) => {
                let own = depth_for::<A::Key>(c.keys.len());
                let pads = depth - own;
                // The tree's root is the inner node after the pads, or its only leaf.
                let root = if own > 1 {
                    lines.inner.len() + pads
                } else {
                    lines.leaves.len()
                } as u32;
                let entry = lines.pad_chain(pads, root);
                let built = lines.tree(&c.keys, &c.answers);
                debug_assert_eq!(built, root);
                entry
            }
            None => *constant_entry.entry(head).or_insert_with(|| {
                let entry = lines.pad_chain(depth - 1, lines.leaves.len() as u32);
                lines.leaves.push(A::Key::leaf(&[], &[head]));
                entry
            }),
        };
    }
    let results = distinct_answers(intervals.values());
    super::Parts {
        direct: direct.into_boxed_slice(),
        depth,
        inner: lines.inner.into_boxed_slice(),
        leaves: lines.leaves.into_boxed_slice(),
        fallback,
        intervals: intervals.len(),
        results,
    }
}

/// Distinct answers of the intervals ("no route" included).
fn distinct_answers(values: &[Option<NextHop>]) -> usize {
    values.iter().collect::<HashSet<_>>().len()
}

#[cfg(test)]
mod tests {
    use super::super::layout::{Line32, CELL, NO_ROUTE};
    use super::*;

    #[test]
    fn depth_grows_with_fanout() {
        assert_eq!(depth_for::<u32>(0), 1);
        assert_eq!(depth_for::<u32>(7), 1);
        assert_eq!(depth_for::<u32>(8), 2);
        assert_eq!(depth_for::<u32>(7 * 16), 2);
        assert_eq!(depth_for::<u32>(7 * 16 + 1), 3);
        assert_eq!(depth_for::<u16>(9 * 31), 2);
        assert_eq!(depth_for::<u16>(9 * 31 + 1), 3);
    }

    /// Walks `steps` inner nodes and a leaf the way a lookup does, with plain counts.
    fn walk(lines: &Lines<u32>, mut node: u32, steps: usize, x: u32) -> Answer {
        let less = |keys: &[u32]| keys.iter().filter(|&&k| k < x).count() as u32;
        for _ in 0..steps {
            let n: &Line32 = &lines.inner[node as usize];
            node = n.0[15] + less(&n.0[..15]);
        }
        let leaf = &lines.leaves[node as usize];
        let r = less(&leaf.0[..7]);
        let flags = leaf.0[7] >> r;
        let hop = leaf.0[8 + r as usize];
        if flags & CELL != 0 {
            Answer::Cell(hop)
        } else if flags & NO_ROUTE != 0 {
            Answer::NoRoute
        } else {
            Answer::Route(hop)
        }
    }

    fn answers(n: usize) -> Vec<Answer> {
        (0..=n as u32)
            .map(|i| match i % 5 {
                3 => Answer::NoRoute,
                4 => Answer::Cell(i),
                _ => Answer::Route(i),
            })
            .collect()
    }

    #[test]
    fn trees_are_sized_to_the_data_and_linked() {
        // 300 keys: 43 leaves of up to 7, 3 inner nodes of up to 16 children, 1 root.
        let keys: Vec<u32> = (1..=300).map(|k| k * 10).collect();
        let want = answers(keys.len());
        let mut lines = Lines::<u32> {
            inner: vec![<u32 as Key>::inner(&[], 0)],
            leaves: vec![<u32 as Key>::leaf(&[], &[Answer::NoRoute])],
        };
        let root = lines.tree(&keys, &want);
        assert_eq!(root, 1);
        assert_eq!(lines.inner.len(), 1 + 1 + 3);
        assert_eq!(lines.leaves.len(), 1 + 43);
        assert_eq!(lines.inner[1].0[15], 2, "the root's children follow it");
        assert_eq!(
            lines.inner[3].0[15],
            1 + 16,
            "the second inner node's first leaf"
        );
        // Every query lands on the answer after the keys below it.
        for x in [0, 9, 10, 11, 150, 151, 2999, 3000, 3001, u32::MAX] {
            let below = keys.iter().filter(|&&k| k < x).count();
            assert_eq!(walk(&lines, root, 2, x), want[below], "x = {x}");
        }
    }

    #[test]
    fn pad_chains_lead_to_the_tree() {
        let mut lines = Lines::<u32> {
            inner: Vec::new(),
            leaves: Vec::new(),
        };
        let keys = [5u32, 6, 7];
        let want = answers(keys.len());
        let entry = lines.pad_chain(2, 0);
        assert_eq!(
            lines.tree(&keys, &want),
            0,
            "a one-leaf tree's root is its leaf"
        );
        for x in [0, 5, 6, 7, 8, u32::MAX] {
            let below = keys.iter().filter(|&&k| k < x).count();
            assert_eq!(walk(&lines, entry, 2, x), want[below]);
        }
        assert_eq!(lines.pad_chain(0, 9), 9, "no pads: the entry is the target");
    }
}
