//! The built tree: the direct table, the per-chunk segment table, the segments (lines and
//! fallback cells) and what is counted about them, owned in one place, with the one API that
//! reads them back (the walk, partial rebuilds, the validator, saved tables, the lines model,
//! the staged tables and the statistics) and the one that derives a new tree from this one
//! (partial rebuilds and compaction: chunks' trees replaced by ones in a new segment, emptied
//! segments dropped).
//!
//! The readers the lookup walks use (`direct`, `segment_of`, `segments`, `home`, `depth`,
//! `narrow`) are `#[inline(always)]` and return the fields' slices or copies, so a walk
//! compiles to the loads it made when it read the fields.

use std::sync::Arc;

use super::builder::SegmentBuilder;
use super::layout::{entry_line, Family, Key, DIRECT_BITS, LEAF_ENTRY};
use super::line::Segment;
use crate::storage::Array;

/// The lines of one family's table (`PlanB`'s tree), and the counts kept with them.
#[derive(Clone, Debug)]
pub(super) struct Tree<A: Family> {
    /// Entry node of each top-16-bit chunk's tree (an inner node, or its leaf when `depth`
    /// is 1), in segment `segment_of[chunk]`. Owned, or in place in a saved table's file.
    direct: Array<u32>,
    /// The segment of each chunk's tree. Read only when there are several segments (a live
    /// table between compactions); with one, the walk never loads it.
    segment_of: Box<[u16]>,
    /// The lines and fallback cells of the trees, shared with other versions of the table.
    segments: Vec<Arc<Segment<A>>>,
    /// Each segment's lines, held here too so a walk of several segments reaches a
    /// segment's lines in one load (through its `Arc`, two).
    lines: Box<[Array<<A::Key as Key>::Line>]>,
    /// Node searches per lookup, the leaf's included (uniform across chunks).
    depth: usize,
    /// Leaves in the narrow format (16-bit hop slots; `layout` docs), in every segment.
    narrow: bool,
    /// Merged elementary intervals and distinct answers, counted by a full build (a partial
    /// rebuild does not see the whole table, so it does not know them).
    intervals: Option<usize>,
    results: Option<usize>,
    /// Lines of each segment that some chunk still uses (a one-answer chain several chunks
    /// share counts as used until a full build or compaction): the rest are dead lines of
    /// replaced trees, which compaction reclaims.
    live: Vec<usize>,
    /// Chunks whose tree is in each segment, so a partial rebuild knows which segments it
    /// emptied without a pass over the 2^16 chunks.
    users: Vec<u32>,
}

/// The arrays a tree is made of, as the builder, a partial rebuild, a compaction step or a
/// saved table hands them over.
pub(super) struct Parts<A: Family> {
    direct: Array<u32>,
    segment_of: Box<[u16]>,
    segments: Vec<Arc<Segment<A>>>,
    depth: usize,
    narrow: bool,
    intervals: Option<usize>,
    results: Option<usize>,
    /// Used lines per segment (`Tree::live`); `None` when every line is (a full build).
    live: Option<Vec<usize>>,
    /// Chunks per segment (`Tree::users`); `None`: count them from `segment_of`.
    users: Option<Vec<u32>>,
}

impl<A: Family> Parts<A> {
    /// A full build's parts: every chunk's tree in `segment`, every line used.
    pub(super) fn full(
        direct: Array<u32>,
        segment: Segment<A>,
        depth: usize,
        narrow: bool,
        intervals: usize,
        results: usize,
    ) -> Self {
        Parts {
            direct,
            segment_of: Box::new([]),
            segments: vec![Arc::new(segment)],
            depth,
            narrow,
            intervals: Some(intervals),
            results: Some(results),
            live: None,
            users: None,
        }
    }

    /// A saved table's parts (unchecked: the caller validates the tree): nothing is known dead
    /// in a file, so every line counts as used until compaction finds out otherwise, and the
    /// chunks per segment are counted from `segment_of`.
    pub(super) fn saved(
        direct: Array<u32>,
        segment_of: Box<[u16]>,
        segments: Vec<Arc<Segment<A>>>,
        depth: usize,
        narrow: bool,
        intervals: Option<usize>,
        results: Option<usize>,
    ) -> Self {
        Parts {
            direct,
            segment_of,
            segments,
            depth,
            narrow,
            intervals,
            results,
            live: None,
            users: None,
        }
    }

    /// Lines of every segment.
    pub(super) fn lines(&self) -> usize {
        self.segments.iter().map(|s| s.lines.len()).sum()
    }

    /// Lines some chunk uses, of every segment (0 when not counted: a full build's parts).
    pub(super) fn live_lines(&self) -> usize {
        self.live.iter().flatten().sum()
    }
}

/// Chunks per segment of a per-chunk segment table (`n` segments; an empty table means every
/// chunk is in segment 0). Entries out of range are not counted (validation rejects them).
pub(super) fn count_users(segment_of: &[u16], n: usize) -> Vec<u32> {
    let mut users = vec![0u32; n];
    if segment_of.is_empty() {
        if let Some(u) = users.first_mut() {
            *u = 1 << DIRECT_BITS;
        }
    }
    for &s in segment_of {
        if let Some(u) = users.get_mut(usize::from(s)) {
            *u += 1;
        }
    }
    users
}

impl<A: Family> Tree<A> {
    /// The tree of `p`, its uncounted counts counted. Panics if `p` has no segment.
    pub(super) fn from_parts(p: Parts<A>) -> Self {
        assert!(!p.segments.is_empty(), "a tree has a segment");
        let live = p
            .live
            .unwrap_or_else(|| p.segments.iter().map(|s| s.lines.len()).collect());
        let users = p
            .users
            .unwrap_or_else(|| count_users(&p.segment_of, p.segments.len()));
        Tree {
            direct: p.direct,
            segment_of: p.segment_of,
            lines: p.segments.iter().map(|s| s.lines.clone()).collect(),
            segments: p.segments,
            depth: p.depth,
            narrow: p.narrow,
            intervals: p.intervals,
            results: p.results,
            live,
            users,
        }
    }

    /// Node searches per lookup, the leaf's included.
    #[inline(always)]
    pub(super) fn depth(&self) -> usize {
        self.depth
    }

    /// Whether leaves are in the narrow format.
    #[inline(always)]
    pub(super) fn narrow(&self) -> bool {
        self.narrow
    }

    /// The direct table: each chunk's entry (its tree's entry line, maybe [`LEAF_ENTRY`]).
    #[inline(always)]
    pub(super) fn direct(&self) -> &[u32] {
        &self.direct
    }

    /// The direct entry of `chunk` (checked).
    #[inline(always)]
    pub(super) fn entry(&self, chunk: usize) -> u32 {
        self.direct[chunk]
    }

    /// The per-chunk segment table (empty with one segment).
    #[inline(always)]
    pub(super) fn segment_of(&self) -> &[u16] {
        &self.segment_of
    }

    /// The segment of `chunk`'s tree (0 when the segment table is empty).
    #[inline(always)]
    pub(super) fn segment_of_chunk(&self, chunk: usize) -> usize {
        self.segment_of.get(chunk).map_or(0, |&s| usize::from(s))
    }

    /// Every segment.
    #[inline(always)]
    pub(super) fn segments(&self) -> &[Arc<Segment<A>>] {
        &self.segments
    }

    /// Segment `seg` (checked).
    #[inline(always)]
    pub(super) fn segment(&self, seg: usize) -> &Segment<A> {
        &self.segments[seg]
    }

    /// The lines of segment `seg` (checked).
    #[inline(always)]
    pub(super) fn lines_of(&self, seg: usize) -> &[<A::Key as Key>::Line] {
        &self.segments[seg].lines
    }

    /// Segment 0's lines, where every tree of a one-segment table is.
    #[inline(always)]
    pub(super) fn home(&self) -> &Array<<A::Key as Key>::Line> {
        &self.lines[0]
    }

    /// Each segment's lines (the same arrays as the segments'), for the walk: one load
    /// from segment number to lines.
    #[inline(always)]
    pub(super) fn all_lines(&self) -> &[Array<<A::Key as Key>::Line>] {
        &self.lines
    }

    /// Merged elementary intervals of the table it was built from (`None` after a partial
    /// rebuild).
    pub(super) fn intervals(&self) -> Option<usize> {
        self.intervals
    }

    /// Distinct answers of the table it was built from (`None` after a partial rebuild).
    pub(super) fn results(&self) -> Option<usize> {
        self.results
    }

    /// Used lines per segment.
    pub(super) fn live(&self) -> &[usize] {
        &self.live
    }

    /// Chunks per segment.
    pub(super) fn users(&self) -> &[u32] {
        &self.users
    }

    /// Lines of every segment (inner nodes and leaves).
    pub(super) fn lines(&self) -> usize {
        self.segments.iter().map(|s| s.lines.len()).sum()
    }

    /// Fallback cells of every segment.
    pub(super) fn cells(&self) -> usize {
        self.segments.iter().map(|s| s.fallback.cells()).sum()
    }

    /// Bytes of the direct table.
    pub(super) fn direct_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.direct)
    }

    /// Bytes of the segment table.
    pub(super) fn segment_of_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.segment_of)
    }

    /// Bytes of every segment's lines.
    pub(super) fn line_bytes(&self) -> usize {
        self.segments
            .iter()
            .map(|s| std::mem::size_of_val(&*s.lines))
            .sum()
    }

    /// Bytes of every segment's fallback cells.
    pub(super) fn fallback_bytes(&self) -> usize {
        self.segments.iter().map(|s| s.fallback.bytes()).sum()
    }

    /// Where `chunk`'s lines are: its segment, entry line, first and last leaf. The lines
    /// `entry..=last` are the chunk's own, written in one piece by [`SegmentBuilder::chunk`]
    /// (or, for a chunk without boundaries, the one-answer chain it shares with others). A
    /// chunk entered at its leaf ([`LEAF_ENTRY`]) is that one line.
    pub(super) fn span(&self, chunk: usize) -> (usize, usize, usize, usize) {
        let seg = self.segment_of_chunk(chunk);
        let lines = &self.segments[seg].lines;
        let entry = entry_line(self.direct[chunk]) as usize;
        let (mut first, mut last) = (entry, entry);
        if self.direct[chunk] & LEAF_ENTRY != 0 {
            return (seg, entry, first, last);
        }
        for _ in 1..self.depth {
            first = A::Key::link(&lines[first]) as usize;
            let l = &lines[last];
            last = A::Key::link(l) as usize + A::Key::keys_in(l, A::Key::INNER_KEYS);
        }
        (seg, entry, first, last)
    }

    /// This tree with `chunks` (ascending) entered at `entries` of the new `segment`, every
    /// other chunk shared; segments no chunk uses any more are dropped.
    pub(super) fn with_chunks_in(
        &self,
        chunks: &[usize],
        entries: &[u32],
        segment: SegmentBuilder<A>,
    ) -> Parts<A> {
        // The moved chunks' old lines are dead now (a one-answer chain may still serve other
        // chunks: it stays counted), and their old segments have one user fewer each.
        let mut live = self.live.clone();
        let mut users = self.users.clone();
        for &chunk in chunks {
            let (seg, entry, first_leaf, last) = self.span(chunk);
            let leaf_keys = A::Key::leaf_keys(self.narrow);
            let one_answer = first_leaf == last
                && A::Key::keys_in(&self.segments[seg].lines[last], leaf_keys) == 0;
            if !one_answer {
                live[seg] = live[seg].saturating_sub(last - entry + 1);
            }
            users[seg] = users[seg].saturating_sub(1);
        }
        live.push(segment.lines.len());
        users.push(chunks.len() as u32);
        let mut direct = self.direct.to_vec();
        let mut segment_of = if self.segment_of.is_empty() {
            vec![0u16; 1 << DIRECT_BITS]
        } else {
            self.segment_of.to_vec()
        };
        let fresh = self.segments.len() as u16;
        for (&chunk, &entry) in chunks.iter().zip(entries) {
            direct[chunk] = entry;
            segment_of[chunk] = fresh;
        }
        let mut segments = self.segments.clone();
        segments.push(Arc::new(Segment {
            lines: segment.lines.into(),
            fallback: segment.fallback,
        }));

        // Drop the segments no chunk uses any more; when there are none (the common case) the
        // segment table is kept as it is, with no pass over its 2^16 entries.
        if users.iter().all(|&u| u > 0) {
            return Parts {
                direct: direct.into(),
                segment_of: segment_of.into(),
                segments,
                depth: self.depth,
                narrow: self.narrow,
                intervals: None,
                results: None,
                live: Some(live),
                users: Some(users),
            };
        }
        let mut renumber = vec![0u16; segments.len()];
        let mut kept = Vec::with_capacity(segments.len());
        let mut kept_live = Vec::with_capacity(segments.len());
        let mut kept_users = Vec::with_capacity(segments.len());
        for (i, s) in segments.into_iter().enumerate() {
            if users[i] > 0 {
                renumber[i] = kept.len() as u16;
                kept.push(s);
                kept_live.push(live[i]);
                kept_users.push(users[i]);
            }
        }
        let segment_of: Box<[u16]> = if kept.len() == 1 {
            Box::new([])
        } else {
            segment_of
                .iter()
                .map(|&s| renumber[usize::from(s)])
                .collect()
        };
        Parts {
            direct: direct.into(),
            segment_of,
            segments: kept,
            depth: self.depth,
            narrow: self.narrow,
            intervals: None,
            results: None,
            live: Some(kept_live),
            users: Some(kept_users),
        }
    }
}

/// Edits that break the tree, for the validator's tests (nothing else changes a built tree).
#[cfg(test)]
impl<A: Family> Tree<A> {
    pub(super) fn set_direct(&mut self, direct: Array<u32>) {
        self.direct = direct;
    }

    pub(super) fn set_home(&mut self, home: Array<<A::Key as Key>::Line>) {
        self.lines[0] = home;
    }

    pub(super) fn set_walk_lines(&mut self, seg: usize, lines: Array<<A::Key as Key>::Line>) {
        self.lines[seg] = lines;
    }

    pub(super) fn set_depth(&mut self, depth: usize) {
        self.depth = depth;
    }

    /// Replaces segment `seg` (`seg == segments().len()`: adds one), with its walk lines.
    pub(super) fn set_segment(&mut self, seg: usize, segment: Arc<Segment<A>>) {
        let mut lines = std::mem::take(&mut self.lines).into_vec();
        if seg == self.segments.len() {
            lines.push(segment.lines.clone());
            self.segments.push(segment);
        } else {
            lines[seg] = segment.lines.clone();
            self.segments[seg] = segment;
        }
        self.lines = lines.into();
    }

    pub(super) fn segment_of_mut(&mut self) -> &mut Box<[u16]> {
        &mut self.segment_of
    }

    pub(super) fn set_users(&mut self, users: Vec<u32>) {
        self.users = users;
    }
}
