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
//!    ending at a one-answer leaf, shared by every chunk with that answer. In a table of depth
//!    2 a one-leaf tree needs no chain: its direct entry names the leaf
//!    ([`super::layout::LEAF_ENTRY`]).
//! 4. Leaves are narrow (16-bit hop slots, 14 keys instead of 9 for IPv4, 9 instead of 7 for
//!    IPv6) when every answer fits.

use std::collections::{HashMap, HashSet};

use super::fallback::Fallback;
use super::layout::{chunk_of, entry_line, fanout, Answer, Family, Key, DIRECT_BITS, LEAF_ENTRY};
use super::line::Segment;
use super::tree::Parts;
use crate::interval::Intervals;
use crate::prefix::Prefix;
use crate::route_table::{NextHop, RouteTable};

/// The answer of an interval.
fn answer(value: Option<NextHop>) -> Answer {
    value.map_or(Answer::NoRoute, Answer::Route)
}

/// Coarse boundaries (ascending, the first at 0) with their answers.
pub(super) fn project<A: Family>(
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

/// The /16 prefix chunk `chunk` of the direct table covers.
pub(super) fn chunk_prefix<A: Family>(chunk: usize) -> Prefix<A> {
    let base = (chunk as u64) << (A::COARSE_BITS - DIRECT_BITS);
    Prefix::covering(A::from_coarse(base), DIRECT_BITS as u8)
}

/// One chunk's boundaries (as keys) and answers (`keys.len() + 1`, the first in effect at the
/// chunk's first address), from the routes that overlap it: those containing the chunk and
/// those inside it. Fallback cells go to `fallback`. What a partial rebuild
/// ([`super::partial`]) rebuilds a changed chunk from.
pub(super) fn chunk_content<A: Family>(
    table: &RouteTable<A>,
    chunk: usize,
    fallback: &mut Fallback<A>,
) -> (Vec<A::Key>, Vec<Answer>) {
    let whole = chunk_prefix::<A>(chunk);
    let base = whole.first().coarse();
    // Inside the chunk, of the routes containing it only the longest shows.
    let overlapping: RouteTable<A> = table
        .longest_containing(whole)
        .into_iter()
        .chain(table.subnets(whole))
        .collect();
    let intervals = Intervals::from_table(&overlapping);
    let (cstarts, canswers) = project(intervals.starts(), intervals.values(), fallback);
    // `cstarts[0]` is 0 <= base, so the chunk's first address has a boundary at or before it.
    let mut p = cstarts.partition_point(|&c| c < base);
    if cstarts.get(p) == Some(&base) {
        p += 1;
    }
    let head = canswers[p - 1];
    let mut keys = Vec::new();
    let mut answers = vec![head];
    while p < cstarts.len() && chunk_of::<A>(cstarts[p]) == chunk {
        keys.push(A::Key::from_coarse(cstarts[p] - 1));
        answers.push(canswers[p]);
        p += 1;
    }
    (keys, answers)
}

/// Steps of a lookup through a tree of `n` keys: one leaf level of the format's keys per
/// leaf (narrow or not), then inner levels of fan-out `INNER_KEYS + 1` up to a single root.
/// Zero keys need one step too (a leaf with one answer).
pub(super) fn depth_for<K: Key>(n: usize, narrow: bool) -> usize {
    let mut nodes = n.div_ceil(K::leaf_keys(narrow)).max(1);
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
        // The boundaries inside this chunk; most chunks have none and allocate nothing (empty
        // key lists for them were 65,536 allocations per build).
        let end = p + cstarts[p..]
            .iter()
            .take_while(|&&s| chunk_of::<A>(s) == chunk)
            .count();
        if end == p {
            continue;
        }
        with_keys.push(Chunk {
            index: chunk,
            keys: cstarts[p..end]
                .iter()
                .map(|&s| A::Key::from_coarse(s - 1))
                .collect(),
            answers: std::iter::once(current)
                .chain(canswers[p..end].iter().copied())
                .collect(),
        });
        current = canswers[end - 1];
        p = end;
    }
    (with_keys, heads)
}

/// Whether narrow leaves hold `answers`: every answer fits a 16-bit slot.
pub(super) fn narrow_fits(answers: &[Answer]) -> bool {
    answers.iter().all(|a| a.fits_narrow())
}

/// One segment being built: the lines of its chunk trees (links are indices into `lines`) and
/// the fallback cells their leaves name.
pub(super) struct SegmentBuilder<A: Family> {
    pub lines: Vec<<A::Key as Key>::Line>,
    pub fallback: Fallback<A>,
    /// Leaves in the narrow format (the table's choice).
    narrow: bool,
    /// The inner lines (the rest are leaves), so the lines can be moved to another place in
    /// a segment ([`SegmentBuilder::relocated`]).
    inner: Vec<u32>,
}

impl<A: Family> SegmentBuilder<A> {
    pub fn new(narrow: bool) -> Self {
        SegmentBuilder {
            lines: Vec::new(),
            fallback: Fallback::default(),
            narrow,
            inner: Vec::new(),
        }
    }

    /// Appends a line: an inner node (its link an index into these lines) or a leaf.
    pub fn push(&mut self, line: <A::Key as Key>::Line, inner: bool) {
        if inner {
            self.inner.push(self.lines.len() as u32);
        }
        self.lines.push(line);
    }

    /// The lines as they read at line `base` of a segment whose cells this builder's follow
    /// (every inner link moved by `base`, every cell number by `cells`), and `entries`
    /// (direct entries of these lines) moved there ([`LEAF_ENTRY`] kept); `None` when a line
    /// would be past what a slot holds (`u32`), or a cell past what a narrow leaf's does.
    #[allow(clippy::type_complexity)]
    pub fn relocated(
        &self,
        base: usize,
        cells: usize,
        entries: &[u32],
    ) -> Option<(Vec<<A::Key as Key>::Line>, Vec<u32>)> {
        let base = u32::try_from(base).ok()?;
        base.checked_add(u32::try_from(self.lines.len()).ok()?)
            .filter(|&end| end < LEAF_ENTRY)?;
        let mut lines = self.lines.clone();
        for &i in &self.inner {
            let line = &mut lines[i as usize];
            let link = A::Key::link(line) + base;
            A::Key::set_link(line, link);
        }
        if self.fallback.cells() > 0 && cells > 0 {
            let cells = u32::try_from(cells).ok()?;
            let mut inner = self.inner.iter().peekable();
            for (i, line) in lines.iter_mut().enumerate() {
                if inner.next_if_eq(&&(i as u32)).is_some() {
                    continue;
                }
                A::Key::renumber_cells(line, self.narrow, |c| c.checked_add(cells))?;
            }
        }
        let entries = entries
            .iter()
            .map(|&e| (entry_line(e) + base) | (e & LEAF_ENTRY))
            .collect();
        Some((lines, entries))
    }

    /// Appends one chunk's tree, entered through padding so that a lookup makes `depth`
    /// searches, and returns its direct entry: its entry line, or in a table of depth 2 its
    /// only leaf marked [`LEAF_ENTRY`]. A chunk without boundaries (one answer) shares a
    /// one-answer leaf with every such chunk of this segment (`constants`).
    pub fn chunk(
        &mut self,
        depth: usize,
        keys: &[A::Key],
        answers: &[Answer],
        constants: &mut HashMap<Answer, u32>,
    ) -> u32 {
        let own = depth_for::<A::Key>(keys.len(), self.narrow);
        debug_assert!(own <= depth);
        if let ([], &[answer]) = (keys, answers) {
            if let Some(&entry) = constants.get(&answer) {
                return entry;
            }
        }
        let entry = if depth == 2 && own == 1 {
            self.tree(keys, answers).0 | LEAF_ENTRY
        } else {
            let chain = self.pad_chain(depth - own);
            self.tree(keys, answers);
            chain
        };
        if let ([], &[answer]) = (keys, answers) {
            constants.insert(answer, entry);
        }
        entry
    }

    /// Appends `pads` all-padding inner nodes, each linking to the line after it (the last
    /// to the tree appended next); returns where the chain starts (the next tree's root when
    /// `pads` is 0).
    pub fn pad_chain(&mut self, pads: usize) -> u32 {
        let entry = self.lines.len();
        for k in 1..=pads {
            self.push(A::Key::inner(&[], (entry + k) as u32), true);
        }
        entry as u32
    }

    /// Appends one chunk's tree: the inner levels root first, then the leaves holding `keys`
    /// and their `keys.len() + 1` answers. Returns the root (an inner node, or the only leaf)
    /// and the node searches of a lookup.
    pub fn tree(&mut self, keys: &[A::Key], answers: &[Answer]) -> (u32, usize) {
        let per = A::Key::leaf_keys(self.narrow);
        let leaves = keys.len().div_ceil(per).max(1);
        // Bottom-up: an inner node holds the smallest key under each of its children but the
        // first, and hands its own first key to its parent.
        let mut firsts: Vec<A::Key> = keys.chunks(per).map(|leaf| leaf[0]).collect();
        let mut inner_levels: Vec<Vec<Vec<A::Key>>> = Vec::new();
        while firsts.len() > 1 {
            let groups: Vec<&[A::Key]> = firsts.chunks(fanout::<A::Key>()).collect();
            inner_levels.push(groups.iter().map(|g| g[1..].to_vec()).collect());
            firsts = groups.iter().map(|g| g[0]).collect();
        }
        // Root first; each level's nodes start right after the level above, and the leaves
        // after the last inner level, so the children of node `i` of a level start at the
        // next level's start plus `i * fanout`.
        let root = self.lines.len();
        let inner: usize = inner_levels.iter().map(Vec::len).sum();
        let mut next_level = root;
        for level in inner_levels.iter().rev() {
            next_level += level.len();
            for (i, separators) in level.iter().enumerate() {
                let link = next_level + i * fanout::<A::Key>();
                self.push(A::Key::inner(separators, link as u32), true);
            }
        }
        debug_assert_eq!(self.lines.len(), root + inner);
        debug_assert_eq!(
            inner_levels.len() + 1,
            depth_for::<A::Key>(keys.len(), self.narrow)
        );
        for l in 0..leaves {
            let ks = &keys[(l * per).min(keys.len())..((l + 1) * per).min(keys.len())];
            let answers = &answers[l * per..l * per + ks.len() + 1];
            self.push(A::Key::leaf_in(ks, answers, self.narrow), false);
        }
        (root as u32, inner_levels.len() + 1)
    }
}

/// Builds the whole structure: one segment holding every chunk tree, with room for partial
/// rebuilds to append to when `room` ([`Segment::with_room`]).
pub(super) fn build<A: Family>(table: &RouteTable<A>, room: bool) -> Parts<A> {
    let intervals = Intervals::from_table(table);
    let mut fallback = Fallback::default();
    let (cstarts, canswers) = project(intervals.starts(), intervals.values(), &mut fallback);
    let narrow = narrow_fits(&canswers);
    let mut segment = SegmentBuilder::<A> {
        fallback,
        ..SegmentBuilder::new(narrow)
    };
    let (chunks, heads) = chunks::<A>(&cstarts, &canswers);

    // Every tree is walked in the same number of searches (the deepest tree's): a shallower
    // tree is entered through a chain of all-padding inner nodes, so the lanes of a batch never
    // diverge.
    let depth = chunks
        .iter()
        .map(|c| depth_for::<A::Key>(c.keys.len(), narrow))
        .max()
        .unwrap_or(1);
    let mut direct = vec![0u32; 1 << DIRECT_BITS];
    let mut constants = HashMap::new();
    // Chunks without boundaries come in long runs with one answer (most of the 2^16 in an
    // IPv6 table): the last one's entry is reused without hashing (65,536 hash lookups were
    // most of the build time of a small table, ~3 ms).
    let mut last_constant = None;
    let mut next_with_keys = chunks.iter().peekable();
    for (chunk, &head) in heads.iter().enumerate() {
        direct[chunk] = match next_with_keys.next_if(|c| c.index == chunk) {
            Some(c) => segment.chunk(depth, &c.keys, &c.answers, &mut constants),
            None => match last_constant {
                Some((answer, entry)) if answer == head => entry,
                _ => {
                    let entry = segment.chunk(depth, &[], &[head], &mut constants);
                    last_constant = Some((head, entry));
                    entry
                }
            },
        };
    }
    let results = distinct_answers(intervals.values());
    Parts::full(
        direct.into(),
        if room {
            Segment::with_room(segment.lines, segment.fallback)
        } else {
            Segment::new(segment.lines.into(), segment.fallback)
        },
        depth,
        narrow,
        intervals.len(),
        results,
    )
}

/// Distinct answers of the intervals ("no route" included).
fn distinct_answers(values: &[Option<NextHop>]) -> usize {
    values.iter().collect::<HashSet<_>>().len()
}

#[cfg(test)]
mod tests {
    use super::super::layout::{CELL, NO_ROUTE};
    use super::super::line::Line32;
    use super::*;

    #[test]
    fn depth_grows_with_fanout() {
        assert_eq!(depth_for::<u32>(0, false), 1);
        assert_eq!(depth_for::<u32>(7, false), 1);
        assert_eq!(depth_for::<u32>(8, false), 2);
        assert_eq!(depth_for::<u32>(7 * 16, false), 2);
        assert_eq!(depth_for::<u32>(7 * 16 + 1, false), 3);
        assert_eq!(depth_for::<u16>(9 * 31, false), 2);
        assert_eq!(depth_for::<u16>(9 * 31 + 1, false), 3);
        assert_eq!(depth_for::<u16>(14, true), 1);
        assert_eq!(depth_for::<u16>(15, true), 2);
        assert_eq!(depth_for::<u16>(14 * 31, true), 2);
        assert_eq!(depth_for::<u16>(14 * 31 + 1, true), 3);
    }

    /// Walks `steps` inner nodes and a leaf the way a lookup does, with plain counts.
    fn walk(lines: &[Line32], mut node: u32, steps: usize, x: u32) -> Answer {
        let less = |keys: &[u32]| keys.iter().filter(|&&k| k < x).count() as u32;
        for _ in 0..steps {
            let n: &Line32 = &lines[node as usize];
            node = n.0[15] + less(&n.0[..15]);
        }
        let leaf = &lines[node as usize];
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
        // 300 keys: 43 leaves of up to 7, 3 inner nodes of up to 16 children, 1 root, after
        // one line already in the segment.
        let keys: Vec<u32> = (1..=300).map(|k| k * 10).collect();
        let want = answers(keys.len());
        let mut segment = SegmentBuilder::<u128>::new(false);
        segment
            .lines
            .push(<u32 as Key>::leaf::<false>(&[], &[Answer::NoRoute]));
        let (root, depth) = segment.tree(&keys, &want);
        assert_eq!((root, depth), (1, 3));
        assert_eq!(segment.lines.len(), 1 + 1 + 3 + 43);
        assert_eq!(segment.lines[1].0[15], 2, "the root's children follow it");
        assert_eq!(
            segment.lines[3].0[15],
            5 + 16,
            "the second inner node's first leaf, after the 4 inner nodes"
        );
        // Every query lands on the answer after the keys below it.
        for x in [0, 9, 10, 11, 150, 151, 2999, 3000, 3001, u32::MAX] {
            let below = keys.iter().filter(|&&k| k < x).count();
            assert_eq!(walk(&segment.lines, root, 2, x), want[below], "x = {x}");
        }
    }

    #[test]
    fn a_small_tree_is_one_leaf() {
        let mut segment = SegmentBuilder::<u128>::new(false);
        let keys = [5u32, 6, 7];
        let want = answers(keys.len());
        assert_eq!(segment.tree(&keys, &want), (0, 1));
        for x in [0, 5, 6, 7, 8, u32::MAX] {
            let below = keys.iter().filter(|&&k| k < x).count();
            assert_eq!(walk(&segment.lines, 0, 0, x), want[below]);
        }
    }
}
